package terraform

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// TestIgnoreComments: a comment covers the block or attribute on the next line
// that holds something (comments in between are skipped), nested ones too;
// heredoc text that looks like a comment is not one.
func TestIgnoreComments(t *testing.T) {
	t.Parallel()
	src := `# eksdoctor:ignore=teardown-order,teardown-orphans the controller outlives it
# another comment
resource "kubectl_manifest" "pool" {
  yaml_body = <<-YAML
    # eksdoctor:ignore=karpenter-schema not a comment: heredoc text
    kind: NodePool
  YAML
}

module "eks" {
  source = "x"
  // eksdoctor:ignore=helm-values-unknown
  addons = {
    coredns = {}
  }
  /* eksdoctor:ignore=* */ name = "a"
}

locals {
  x = 1 # eksdoctor:ignore=pod-unschedulable on the line itself
}
# eksdoctor:ignore=invalid-input at the end
`
	f, diags := hclsyntax.ParseConfig([]byte(src), "main.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got := ignoreComments([]byte(src), "main.tf", f.Body.(*hclsyntax.Body))
	at := func(line int) cluster.Origin { return cluster.Origin{File: "main.tf", Line: line} }
	want := []cluster.Suppression{
		{Origin: at(1), File: "main.tf", From: 3, To: 8, Checks: []string{"teardown-order", "teardown-orphans"}, Reason: "the controller outlives it"},
		{Origin: at(12), File: "main.tf", From: 13, To: 15, Checks: []string{"helm-values-unknown"}},
		{Origin: at(16), File: "main.tf", From: 16, To: 16, Checks: []string{"*"}},
		// A comment at the end of a line covers that line's attribute.
		{Origin: at(20), File: "main.tf", From: 20, To: 20, Checks: []string{"pod-unschedulable"}, Reason: "on the line itself"},
		{Origin: at(22), File: "main.tf", Checks: []string{"invalid-input"}, Reason: "at the end"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("suppressions (-want +got):\n%s", diff)
	}
	s := got[0]
	for _, c := range []struct {
		check string
		line  int
		want  bool
	}{
		{"teardown-order", 3, true}, {"teardown-orphans", 8, true}, {"teardown-order", 9, false},
		{"teardown-order", 2, false}, {"pod-unschedulable", 5, false},
	} {
		if got := s.Covers(c.check, at(c.line)); got != c.want {
			t.Errorf("Covers(%s, line %d) = %v, want %v", c.check, c.line, got, c.want)
		}
	}
	if s.Covers("teardown-order", cluster.Origin{File: "other.tf", Line: 4}) {
		t.Error("covers another file")
	}
}
