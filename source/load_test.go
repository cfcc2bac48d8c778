package source

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A document that does not parse next to a template placeholder is a template
// (filled in by sed, envsubst, Helm or Terraform before it is applied): what
// eksdoctor cannot read yet, not a broken manifest. One that does not parse with
// no placeholder near is invalid input.
func TestTemplatesAreNotBrokenManifests(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"nodepool.yaml": "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  template:\n    spec:\n      requirements: {{ .Values.requirements }}\n      - bad\n",
		// Far from the placeholder on line 1, the error is the file's own.
		"broken.yaml": "# ${NAME}\n" + strings.Repeat("# filler\n", 20) + "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, c := range cs {
		for _, p := range c.Model.Problems {
			got[filepath.Base(p.Origin.File)] = p.Unresolved
			if p.Unresolved && !strings.Contains(p.Message, "this document is a template (it holds {{ .Values.requirements }})") {
				t.Errorf("template message: %s", p.Message)
			}
		}
	}
	if unresolved, ok := got["nodepool.yaml"]; !ok || !unresolved {
		t.Errorf("nodepool.yaml: problem %v (unresolved %v), want an unresolved one", ok, unresolved)
	}
	if unresolved, ok := got["broken.yaml"]; !ok || unresolved {
		t.Errorf("broken.yaml: problem %v (unresolved %v), want invalid input", ok, unresolved)
	}
}
