package terraform

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// writeDir writes files (name -> content) into a new directory and returns it.
func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// evalIn evaluates local.result of a configuration made of main.tf (src) and extra
// files, returning its model form and the loader for inspection.
func evalIn(t *testing.T, src string, extra map[string]string) (any, *loader) {
	t.Helper()
	files := map[string]string{"main.tf": src, "providers.tf": "provider \"aws\" {}\n"}
	for k, v := range extra {
		files[k] = v
	}
	dir := writeDir(t, files)
	l := newLoader(dir, Options{})
	cfg, err := l.readModule(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := l.newModInst(cfg, "", "", ".", 0)
	l.rootVariables(m)
	v, ok := m.local("result")
	if !ok {
		t.Fatalf("no local.result; problems: %v", l.problems)
	}
	return toGo(v, "local.result"), l
}

func TestEvalFunctions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		expr string
		want any
	}{
		// Strings.
		{name: "format", expr: `format("%s-%03d", "node", 7)`, want: "node-007"},
		{name: "join", expr: `join(",", ["a", "b"])`, want: "a,b"},
		{name: "split", expr: `split("/", "a/b/c")`, want: []any{"a", "b", "c"}},
		{name: "replace plain", expr: `replace("ex_karpenter", "_", "-")`, want: "ex-karpenter"},
		{name: "replace regexp", expr: `replace("a1b22c", "/[0-9]+/", "#")`, want: "a#b#c"},
		{name: "lower upper", expr: `"${lower("AbC")}${upper("d")}"`, want: "abcD"},
		{name: "trimspace", expr: `trimspace("  x \n")`, want: "x"},
		{name: "substr", expr: `substr("karpenter", 0, 4)`, want: "karp"},
		{name: "startswith", expr: `startswith("karpenter.sh/controller", "karpenter.sh/")`, want: true},
		{name: "endswith", expr: `endswith("m5.large", ".xlarge")`, want: false},
		{name: "strcontains", expr: `strcontains("eks-fargate-pods", "fargate")`, want: true},
		{name: "trimprefix", expr: `trimprefix("v1.0.0", "v")`, want: "1.0.0"},
		{name: "title", expr: `title("node pool")`, want: "Node Pool"},
		{name: "indent", expr: `indent(2, "a\nb")`, want: "a\n  b"},
		{name: "basename", expr: `basename("/x/y/karpenter")`, want: "karpenter"},
		{name: "base64 round trip", expr: `base64decode(base64encode("hello"))`, want: "hello"},
		{name: "base64encode", expr: `base64encode("hi")`, want: "aGk="},
		{name: "sha256", expr: `sha256("a")`, want: "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"},
		// Collections.
		{name: "merge", expr: `merge({a = 1, b = 2}, {b = 3}, null)`, want: map[string]any{"a": int64(1), "b": int64(3)}},
		{name: "concat", expr: `concat(["a"], ["b", "c"])`, want: []any{"a", "b", "c"}},
		{name: "lookup found", expr: `lookup({a = "x"}, "a", "d")`, want: "x"},
		{name: "lookup default", expr: `lookup({a = "x"}, "b", "d")`, want: "d"},
		{name: "element wraps", expr: `element(["a", "b"], 3)`, want: "b"},
		{name: "slice", expr: `slice(["a", "b", "c", "d"], 1, 3)`, want: []any{"b", "c"}},
		{name: "keys", expr: `keys({b = 1, a = 2})`, want: []any{"a", "b"}},
		{name: "values", expr: `values({b = 1, a = 2})`, want: []any{int64(2), int64(1)}},
		{name: "flatten", expr: `flatten([["a"], [["b"]], "c"])`, want: []any{"a", "b", "c"}},
		{name: "distinct", expr: `distinct(["a", "b", "a"])`, want: []any{"a", "b"}},
		{name: "contains", expr: `contains(["a", "b"], "b")`, want: true},
		{name: "zipmap", expr: `zipmap(["a", "b"], [1, 2])`, want: map[string]any{"a": int64(1), "b": int64(2)}},
		{name: "compact", expr: `compact(["a", "", "b"])`, want: []any{"a", "b"}},
		{name: "length list", expr: `length([1, 2, 3])`, want: int64(3)},
		{name: "length string", expr: `length("héllo")`, want: int64(5)},
		{name: "length map", expr: `length({a = 1})`, want: int64(1)},
		{name: "one", expr: `one(["x"])`, want: "x"},
		{name: "reverse", expr: `reverse([1, 2])`, want: []any{int64(2), int64(1)}},
		{name: "sort", expr: `sort(["b", "a"])`, want: []any{"a", "b"}},
		{name: "setunion", expr: `setunion(["a"], ["b", "a"])`, want: []any{"a", "b"}},
		{name: "range", expr: `range(3)`, want: []any{int64(0), int64(1), int64(2)}},
		{name: "coalesce", expr: `coalesce("", null, "x")`, want: "x"},
		{name: "coalescelist", expr: `coalescelist([], ["a"])`, want: []any{"a"}},
		{name: "index", expr: `index(["a", "b"], "b")`, want: int64(1)},
		{name: "alltrue anytrue", expr: `[alltrue([true, true]), anytrue([false, false])]`, want: []any{true, false}},
		// Conversions.
		{name: "tomap", expr: `tomap({a = "x"})`, want: map[string]any{"a": "x"}},
		{name: "tolist", expr: `tolist(["a", "b"])`, want: []any{"a", "b"}},
		{name: "toset", expr: `toset(["b", "a", "b"])`, want: []any{"a", "b"}},
		{name: "tostring", expr: `tostring(12)`, want: "12"},
		{name: "tonumber", expr: `tonumber("12")`, want: int64(12)},
		{name: "tobool", expr: `tobool("true")`, want: true},
		// Numbers.
		{name: "min max", expr: `[min(3, 1, 2), max(3, 1, 2)]`, want: []any{int64(1), int64(3)}},
		{name: "abs ceil floor", expr: `[abs(-2), ceil(1.2), floor(1.8)]`, want: []any{int64(2), int64(2), int64(1)}},
		{name: "parseint", expr: `parseint("ff", 16)`, want: int64(255)},
		{name: "sum", expr: `sum([1, 2, 3])`, want: int64(6)},
		{name: "arithmetic", expr: `1 + 2 * 3 - 4 / 2`, want: int64(5)},
		// Encodings.
		{name: "jsonencode", expr: `jsonencode({b = [1, "x"], a = true})`, want: `{"a":true,"b":[1,"x"]}`},
		{name: "jsondecode", expr: `jsondecode("{\"a\": [1, 2]}")`, want: map[string]any{"a": []any{int64(1), int64(2)}}},
		{name: "yamlencode", expr: `yamlencode({settings = {clusterName = "x"}})`, want: "\"settings\":\n  \"clusterName\": \"x\"\n"},
		{name: "yamldecode", expr: `yamldecode("a:\n  - b: 1\n")`, want: map[string]any{"a": []any{map[string]any{"b": int64(1)}}}},
		// Control.
		{name: "try first error", expr: `try(local.missing_map.nope, "fallback")`, want: "fallback"},
		{name: "try first works", expr: `try({a = 1}.a, 2)`, want: int64(1)},
		{name: "can", expr: `[can(local.missing_map.nope), can({a = 1}.a)]`, want: []any{false, true}},
		{name: "conditional", expr: `length("ab") > 1 ? "long" : "short"`, want: "long"},
		{name: "logical", expr: `true && !false || false`, want: true},
		{name: "for list", expr: `[for s in ["a", "b"] : upper(s)]`, want: []any{"A", "B"}},
		{name: "for list with index", expr: `[for i, s in ["a", "b"] : "${i}${s}"]`, want: []any{"0a", "1b"}},
		{name: "for map filter", expr: `{for k, v in {a = 1, b = 2} : k => v * 10 if v > 1}`, want: map[string]any{"b": int64(20)}},
		{name: "for grouping", expr: `{for s in ["ax", "ay", "bz"] : substr(s, 0, 1) => s...}`, want: map[string]any{"a": []any{"ax", "ay"}, "b": []any{"bz"}}},
		{name: "splat", expr: `[{n = "a"}, {n = "b"}][*].n`, want: []any{"a", "b"}},
		{name: "index expression", expr: `{a = ["x", "y"]}["a"][1]`, want: "y"},
		{name: "template directive", expr: `"%{for s in ["a", "b"]}${s};%{endfor}%{if true}!%{endif}"`, want: "a;b;!"},
		{name: "escape", expr: `"$${not.a.reference}"`, want: "${not.a.reference}"},
		{name: "workspace", expr: `terraform.workspace`, want: "default"},
		{name: "path.module", expr: `path.module`, want: "."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := "locals {\n  missing_map = {}\n  result = " + tt.expr + "\n}\n"
			got, l := evalIn(t, src, nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s: got %#v, want %#v (-want +got):\n%s\nnotes: %v", tt.expr, got, tt.want, diff, l.notes)
			}
		})
	}
}

// Values that exist only after apply stay unknown and read as the expression that
// produces them, also inside larger strings and structures; nothing is guessed.
func TestEvalUnknowns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		expr string
		want any
	}{
		{name: "module output", expr: `module.karpenter.node_iam_role_name`, want: "${module.karpenter.node_iam_role_name}"},
		{name: "data source", expr: `data.aws_availability_zones.available.names`, want: "${data.aws_availability_zones.available.names}"},
		{name: "resource attribute", expr: `aws_iam_role.node.arn`, want: "${aws_iam_role.node.arn}"},
		{name: "indexed module output", expr: `module.eks.eks_managed_node_groups["karpenter"].iam_role_arn`, want: `${module.eks.eks_managed_node_groups["karpenter"].iam_role_arn}`},
		{name: "interpolated", expr: `"Karpenter-${module.eks.cluster_name}-node"`, want: "Karpenter-${module.eks.cluster_name}-node"},
		{name: "function of unknown", expr: `split("/", module.x.arn)[1]`, want: `${split("/", module.x.arn)[1]}`},
		{name: "interpolated function of unknown", expr: `"role: ${split("/", module.x.arn)[1]}"`, want: `role: ${split("/", module.x.arn)[1]}`},
		{name: "conditional on unknown", expr: `module.x.enabled ? "a" : "b"`, want: `${module.x.enabled ? "a" : "b"}`},
		{name: "comparison with placeholder", expr: `"${module.x.name}-a" == "b-a" ? 1 : 2`, want: `${"${module.x.name}-a" == "b-a" ? 1 : 2}`},
		{name: "unknown inside object", expr: `{role = module.k.iam_role_arn, ns = "kube-system"}`, want: map[string]any{"role": "${module.k.iam_role_arn}", "ns": "kube-system"}},
		{name: "merge keeps unknown leaves", expr: `merge({a = module.k.a}, {b = "x"})`, want: map[string]any{"a": "${module.k.a}", "b": "x"}},
		{name: "concat keeps unknown leaves", expr: `concat([module.k.a], ["x"])`, want: []any{"${module.k.a}", "x"}},
		{name: "lookup unknown default", expr: `lookup({}, "a", module.k.a)`, want: `${lookup({}, "a", module.k.a)}`},
		{name: "jsonencode with unknown leaf", expr: `jsonencode({role = module.k.arn})`, want: `{"role":"${module.k.arn}"}`},
		{name: "yamlencode with unknown leaf", expr: `yamlencode({role = module.k.arn})`, want: "\"role\": \"${module.k.arn}\"\n"},
		{name: "jsondecode of encoded unknown", expr: `jsondecode(jsonencode({role = module.k.arn})).role`, want: "${module.k.arn}"},
		{name: "try of unknown", expr: `try(module.k.maybe, "default")`, want: "${module.k.maybe}"},
		{name: "coalesce with unknown first", expr: `coalesce(module.k.a, "x")`, want: `${coalesce(module.k.a, "x")}`},
		{name: "for over unknown", expr: `[for z in data.aws_availability_zones.a.names : z]`, want: "${[for z in data.aws_availability_zones.a.names : z]}"},
		{name: "length of unknown", expr: `length(module.k.list)`, want: "${length(module.k.list)}"},
		{name: "local through unknown", expr: `local.azs`, want: "${slice(data.aws_availability_zones.available.names, 0, 3)}"},
		{name: "key built on unknown", expr: `{for i in [1] : "k-${module.k.a}" => i}`, want: `${{for i in [1] : "k-${module.k.a}" => i}}`},
		{name: "unset variable", expr: `var.no_default`, want: "${var.no_default}"},
		{name: "known and unknown and", expr: `false && module.k.flag`, want: false},
		{name: "function never known", expr: `timestamp()`, want: `${timestamp()}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := "variable \"no_default\" {}\n" + opaqueModules + "locals {\n  azs = slice(data.aws_availability_zones.available.names, 0, 3)\n  result = " + tt.expr + "\n}\n"
			got, l := evalIn(t, src, nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s: got %#v, want %#v (-want +got):\n%s", tt.expr, got, tt.want, diff)
			}
			if len(l.problems) > 0 {
				t.Errorf("%s: got problems %v, want none", tt.expr, l.problems)
			}
		})
	}
}

// opaqueModules declares the modules the unknown tests refer to: remote ones, whose
// outputs are unknown.
const opaqueModules = `
module "karpenter" { source = "terraform-aws-modules/eks/aws//modules/karpenter" }
module "eks" { source = "terraform-aws-modules/eks/aws" }
module "x" { source = "example.com/x/aws" }
module "k" { source = "example.com/k/aws" }
`

func TestEvalHeredocs(t *testing.T) {
	t.Parallel()
	src := `locals {
  name = "ex"
  result = [<<-EOT
    settings:
      clusterName: ${local.name}
    EOT
  , <<EOT
  kept: ${local.name}
EOT
  ]
}
`
	got, _ := evalIn(t, src, nil)
	want := []any{"settings:\n  clusterName: ex\n", "  kept: ex\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("heredocs: got %q, want %q (-want +got):\n%s", got, want, diff)
	}
}

func TestEvalFiles(t *testing.T) {
	t.Parallel()
	extra := map[string]string{
		"values.yaml":         "replicas: 2\n",
		"templates/np.tpl":    "%{ for z in zones ~}\n- ${z}\n%{ endfor ~}\nrole: ${role}\n",
		"manifests/a.yaml":    "kind: A\n",
		"manifests/b.yaml":    "kind: B\n",
		"manifests/sub/c.yml": "kind: C\n",
	}
	tests := []struct {
		name string
		expr string
		want any
	}{
		{name: "file", expr: `file("${path.module}/values.yaml")`, want: "replicas: 2\n"},
		{name: "fileexists", expr: `[fileexists("values.yaml"), fileexists("nope.yaml")]`, want: []any{true, false}},
		{name: "templatefile", expr: `templatefile("${path.module}/templates/np.tpl", {zones = ["a", "b"], role = "r"})`, want: "- a\n- b\nrole: r\n"},
		{name: "templatefile with unknown", expr: `templatefile("templates/np.tpl", {zones = ["a"], role = module.karpenter.node_iam_role_name})`, want: "- a\nrole: ${module.karpenter.node_iam_role_name}\n"},
		{name: "fileset", expr: `fileset(path.module, "manifests/*.yaml")`, want: []any{"manifests/a.yaml", "manifests/b.yaml"}},
		{name: "fileset doublestar", expr: `fileset("manifests", "**/*.y*ml")`, want: []any{"a.yaml", "b.yaml", "sub/c.yml"}},
		{name: "path.cwd", expr: `basename(path.cwd) != ""`, want: true},
		// As in Terraform, a directory that is not there has no files.
		{name: "fileset of a missing directory", expr: `length(fileset("${path.module}/nothere", "*.yaml"))`, want: int64(0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, l := evalIn(t, opaqueModules+"locals {\n  result = "+tt.expr+"\n}\n", extra)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s: got %#v, want %#v (-want +got):\n%s\nnotes %v", tt.expr, got, tt.want, diff, l.notes)
			}
			if len(l.problems) > 0 {
				t.Errorf("%s: problems %v, want none", tt.expr, l.problems)
			}
		})
	}
}

func TestEvalVariablesAndTFVars(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"main.tf": `
variable "name" {
  default = "from-default"
}
variable "groups" {
  type = map(object({
    min_size = optional(number, 1)
    labels   = optional(map(string), {})
  }))
  default = {}
}
variable "auto" {}
variable "explicit" { default = "d" }
locals {
  result = {
    name     = var.name
    groups   = var.groups
    auto     = var.auto
    explicit = var.explicit
  }
}
`,
		"terraform.tfvars":  "name = \"from-tfvars\"\ngroups = { a = { labels = { role = 1 } } }\nexplicit = \"tfvars\"\n",
		"z.auto.tfvars":     "auto = \"from-auto\"\n",
		"extra/prod.tfvars": "explicit = \"from-var-file\"\n",
	}
	dir := writeDir(t, files)
	l := newLoader(dir, Options{VarFiles: []string{filepath.Join(dir, "extra/prod.tfvars")}})
	cfg, err := l.readModule(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := l.newModInst(cfg, "", "", ".", 0)
	l.rootVariables(m)
	v, _ := m.local("result")
	got := toGo(v, "")
	want := map[string]any{
		"name":     "from-tfvars",
		"groups":   map[string]any{"a": map[string]any{"min_size": int64(1), "labels": map[string]any{"role": "1"}}},
		"auto":     "from-auto",
		"explicit": "from-var-file",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("variables: got %v, want %v (-want +got):\n%s", got, want, diff)
	}
}

// Evaluation never hangs or fails: locals that refer to each other become unknown and
// a problem; huge collections are refused; a runaway configuration stops at the step
// budget.
func TestEvalBounded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		src         string
		want        any
		wantProblem string
	}{
		{
			name:        "cycle",
			src:         "locals {\n  a = local.b\n  b = \"x-${local.result}\"\n  result = local.a\n}\n",
			want:        "x-${local.result}",
			wantProblem: "refers to itself",
		},
		{
			name:        "self cycle",
			src:         "locals {\n  result = [local.result]\n}\n",
			want:        []any{"${local.result}"},
			wantProblem: "local.result refers to itself",
		},
		{
			name:        "long chain",
			src:         "locals {\n" + chain(400) + "  result = local.v0\n}\n",
			want:        "${local.v" + "199}",
			wantProblem: "more than 200 levels deep",
		},
		{
			name: "huge range",
			src:  "locals {\n  result = range(100000000)\n}\n",
			want: "${range(100000000)}",
			// Said, as what could not be evaluated.
			wantProblem: "local.result could not be evaluated (range: too many elements); it is treated as unknown",
		},
		{
			name:        "step budget",
			src:         "locals {\n  n = range(1000)\n  result = length(flatten([for a in local.n : [for b in local.n : a + b]]))\n}\n",
			want:        "${length(flatten([for a in local.n : [for b in local.n : a + b]]))}",
			wantProblem: "evaluation steps",
		},
		{
			name:        "huge format width",
			src:         "locals {\n  result = format(\"%099999999d\", 1)\n}\n",
			want:        "${format(\"%099999999d\", 1)}",
			wantProblem: "local.result could not be evaluated (format: format width too large)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, l := evalIn(t, tt.src, nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("got %#v, want %#v (-want +got):\n%s", got, tt.want, diff)
			}
			var msgs []string
			for _, p := range l.problems {
				msgs = append(msgs, p.Message)
			}
			joined := strings.Join(msgs, "; ")
			if tt.wantProblem == "" && len(msgs) > 0 {
				t.Errorf("got problems %q, want none", joined)
			}
			if tt.wantProblem != "" && !strings.Contains(joined, tt.wantProblem) {
				t.Errorf("got problems %q, want one containing %q", joined, tt.wantProblem)
			}
		})
	}
}

// chain writes n locals each referring to the next.
func chain(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  v%d = local.v%d\n", i, i+1)
	}
	fmt.Fprintf(&b, "  v%d = \"end\"\n", n)
	return b.String()
}

func TestDeeplyNestedFile(t *testing.T) {
	t.Parallel()
	deep := "locals {\n  x = " + strings.Repeat("[", 600) + strings.Repeat("]", 600) + "\n}\nresource \"aws_eks_cluster\" \"c\" {\n  name = \"a\"\n}\n"
	dir := writeDir(t, map[string]string{"deep.tf": deep, "ok.tf": "resource \"aws_eks_cluster\" \"d\" {\n  name = \"ok\"\n}\n"})
	m, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Problems) != 1 || m.Problems[0].Origin.Line != 2 || !strings.Contains(m.Problems[0].Message, "nested deeper") {
		t.Errorf("problems: got %+v, want one at deep.tf:2", m.Problems)
	}
	if m.Cluster.Name != "ok" {
		t.Errorf("cluster: got %q, want the one of the file that was read", m.Cluster.Name)
	}
}

func TestPlaceholdersAndAddresses(t *testing.T) {
	t.Parallel()
	got := placeholder(unknownOf("module.k.x"), "fallback")
	if got != cluster.Unknown("module.k.x") {
		t.Errorf("placeholder: got %q, want %q", got, cluster.Unknown("module.k.x"))
	}
	if got := ConfigAddress(`module.a["x"].module.b[0].helm_release.c["k.v"]`); got != "module.a.module.b.helm_release.c" {
		t.Errorf("ConfigAddress: got %q, want %q", got, "module.a.module.b.helm_release.c")
	}
}

// The Kubernetes provider's manifest functions decode as Terraform does; any
// other provider function is unknown, and said.
func TestEvalProviderFunctions(t *testing.T) {
	t.Parallel()
	multi := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\n# only a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"
	tests := []struct {
		name, expr string
		want       any
		unresolved string
	}{
		{name: "manifest_decode", expr: `provider::kubernetes::manifest_decode("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: x\n").metadata.name`, want: "x"},
		{name: "manifest_decode_multi", expr: `[for o in provider::kubernetes::manifest_decode_multi(file("multi.yaml")) : o.metadata.name]`, want: []any{"a", "b"}},
		{name: "manifest_encode", expr: `provider::kubernetes::manifest_encode({kind = "Namespace"})`, want: "\"kind\": \"Namespace\"\n"},
		{name: "other provider", expr: `provider::aws::arn_parse("arn:aws:iam::1:role/x").account_id`, want: `${provider::aws::arn_parse("arn:aws:iam::1:role/x").account_id}`,
			unresolved: `eksdoctor does not evaluate the provider function provider::aws::arn_parse; its result is treated as unknown`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, l := evalIn(t, "locals {\n  result = "+tt.expr+"\n}\n", map[string]string{"multi.yaml": multi})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("got %#v (-want +got):\n%s\nproblems %v", got, diff, l.problems)
			}
			var msgs []string
			for _, p := range l.problems {
				msgs = append(msgs, p.Message)
			}
			if want := strings.Join(nonEmptyStrings(tt.unresolved), "; "); strings.Join(msgs, "; ") != want {
				t.Errorf("problems %q, want %q", msgs, want)
			}
		})
	}
}

func nonEmptyStrings(s ...string) []string {
	var out []string
	for _, x := range s {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

// kubectl_path_documents splits as the kubectl provider does: at every line that
// starts with "---" ("----" included).
func TestKubectlDocumentsSeparators(t *testing.T) {
	t.Parallel()
	got, l := evalIn(t, `
data "kubectl_path_documents" "d" {
  pattern = "${path.module}/m/*.yaml"
}
locals {
  result = length(data.kubectl_path_documents.d.documents)
}
`, map[string]string{"m/a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n----\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: two}\n--- # three\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: three}\n"})
	if got != int64(3) || len(l.problems) > 0 {
		t.Errorf("documents: %v, problems %v; want 3 and none", got, l.problems)
	}
}

// Terraform still reads the legacy bare list and map types.
func TestLegacyBareTypes(t *testing.T) {
	t.Parallel()
	got, l := evalIn(t, `
variable "families" {
  type    = list
  default = ["m5", "c5"]
}
variable "tags" {
  type    = map
  default = { team = "a" }
}
locals {
  result = [length(var.families), var.tags.team]
}
`, nil)
	if diff := cmp.Diff([]any{int64(2), "a"}, got); diff != "" || len(l.problems) > 0 {
		t.Errorf("got %v (-want +got):\n%s\nproblems %v", got, diff, l.problems)
	}
}

// yamldecode of text that holds values not known before apply says so, rather
// than blaming the YAML.
func TestYamldecodeOfUnknownText(t *testing.T) {
	t.Parallel()
	got, l := evalIn(t, `
data "aws_availability_zones" "azs" {}
locals {
  result = yamldecode("zone: ${data.aws_availability_zones.azs.names[0]}: x\n")
}
`, nil)
	var msgs []string
	for _, p := range l.problems {
		msgs = append(msgs, p.Message)
	}
	if want := []string{"local.result could not be evaluated (yamldecode of text that holds values not known before apply); it is treated as unknown"}; !cmp.Equal(msgs, want) || !cluster.IsUnknown(fmt.Sprint(got)) {
		t.Errorf("got %v, problems %q, want unknown and %q", got, msgs, want)
	}
}
