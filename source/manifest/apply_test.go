package manifest

import (
	"strings"
	"testing"

	"github.com/eksdoctor/eksdoctor/cluster"
)

func TestApplyYAML(t *testing.T) {
	t.Parallel()
	in := "# first\napiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n---\n# kept as written\napiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n"
	out, err := ApplyYAML([]byte(in), cluster.Edit{Line: 6, Format: cluster.FormatYAML, Text: "spec:\n  replicas: 3\n"})
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	if !strings.Contains(got, "replicas: 3") || strings.Contains(got, "replicas: 1") {
		t.Errorf("the Deployment was not patched:\n%s", got)
	}
	for _, kept := range []string{"# first\napiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n", "---\n# kept as written\napiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n"} {
		if !strings.Contains(got, kept) {
			t.Errorf("a document the edit does not touch changed; want %q in:\n%s", kept, got)
		}
	}
	if _, err := ApplyYAML([]byte(in), cluster.Edit{Line: 3, Text: "spec: {}\n"}); err == nil || !strings.Contains(err.Error(), "no object starts at line 3") {
		t.Errorf("an edit at a line where no object starts: err = %v", err)
	}
	if _, err := ApplyYAML([]byte(in), cluster.Edit{Line: 6, Text: "[not a map"}); err == nil {
		t.Error("a patch that is not YAML was applied")
	}
}
