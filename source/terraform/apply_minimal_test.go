package terraform

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/eksdoctor/eksdoctor/cluster"
)

const nodePool = `# Karpenter's pools
resource "kubectl_manifest" "pool" {
  yaml_body = <<-YAML
    apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata:
      name: default # the only pool
    spec:
      template:
        spec:
          requirements:
            - key: karpenter.sh/capacity-type
              operator: In
              values: ["spot", "on-demand"]
          kubelet:
            maxPods: 110
      limits:
        cpu: 1000
  YAML
  depends_on   = [helm_release.karpenter]   # not aligned by fmt
}
`

// TestApplyHCLMinimal: HCL edits keep every byte they do not change; only
// the text they add is formatted.
func TestApplyHCLMinimal(t *testing.T) {
	tests := []struct {
		name string
		in   string
		edit cluster.Edit
		want string
	}{
		{
			name: "a new argument leaves the file's own layout alone",
			in:   nodePool,
			edit: cluster.Edit{Line: 2, Text: "wait = true\n"},
			want: strings.Replace(nodePool, "# not aligned by fmt\n}", "# not aligned by fmt\n  wait         = true\n}", 1),
		},
		{
			name: "a yaml_body rewritten whole changes only the lines whose YAML changes",
			in:   nodePool,
			edit: cluster.Edit{Line: 2, Text: "yaml_body = <<-YAML\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  limits:\n    cpu: 1000\n  template:\n    metadata:\n      labels:\n        workload: web\n    spec:\n      requirements:\n        - key: karpenter.sh/capacity-type\n          operator: In\n          values:\n            - spot\n            - on-demand\nYAML\n"},
			want: strings.Replace(nodePool, "          kubelet:\n            maxPods: 110\n", "        metadata:\n          labels:\n            workload: web\n", 1),
		},
		{
			name: "a lone comma after a heredoc in the edit starts the next element's line",
			in:   "resource \"helm_release\" \"x\" {\n  values = []\n}\n",
			edit: cluster.Edit{Line: 1, Text: "values = [\n<<-EOT\na: 1\nEOT\n,\nyamlencode({ b = 2 }),\n]\n"},
			want: "resource \"helm_release\" \"x\" {\n  values = [\n    <<-EOT\n    a: 1\n    EOT\n    , yamlencode({ b = 2 }),\n  ]\n}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.edit.Format = cluster.FormatHCL
			got, err := SpliceHCL([]byte(tt.in), tt.edit)
			if err != nil {
				t.Fatalf("SpliceHCL: %v", err)
			}
			if diff := cmp.Diff(string(got), tt.want); diff != "" {
				t.Errorf("SpliceHCL mismatch (-got +want):\n%s\ngot:\n%s", diff, got)
			}
			mustParse(t, got)
		})
	}
}

// TestApplyHelmValuesHeredoc: a values document added after a heredoc is a
// <<-EOT heredoc indented as the list's elements (<<- strips it), with no
// line that is a lone comma.
func TestApplyHelmValuesHeredoc(t *testing.T) {
	in := "resource \"helm_release\" \"x\" {\n  # user values\n  values = [\n    <<-EOT\n    replicas: 2 # two zones\n    EOT\n  ]\n}\n"
	got, err := ApplyHelmValues([]byte(in), cluster.Edit{Line: 1, Format: cluster.FormatValues, Text: "tolerations:\n- key: a\n  operator: Exists\n"})
	if err != nil {
		t.Fatal(err)
	}
	want := "resource \"helm_release\" \"x\" {\n  # user values\n  values = [\n    <<-EOT\n    replicas: 2 # two zones\n    EOT\n    , <<-EOT\n    tolerations:\n    - key: a\n      operator: Exists\n    EOT\n  ]\n}\n"
	if diff := cmp.Diff(string(got), want); diff != "" {
		t.Errorf("mismatch (-got +want):\n%s", diff)
	}
	for _, l := range strings.Split(string(got), "\n") {
		if strings.TrimSpace(l) == "," {
			t.Errorf("a lone comma line:\n%s", got)
		}
	}
	f := mustParse(t, got)
	v, diags := f.Body.(*hclsyntax.Body).Blocks[0].Body.Attributes["values"].Expr.Value(nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if s := v.Index(cty.NumberIntVal(1)).AsString(); s != "tolerations:\n- key: a\n  operator: Exists\n" {
		t.Errorf("the heredoc says %q: <<- must strip exactly the indentation added", s)
	}
}

func mustParse(t *testing.T, src []byte) *hcl.File {
	t.Helper()
	f, diags := hclsyntax.ParseConfig(src, "result.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("the result does not parse: %v\n%s", diags, src)
	}
	return f
}
