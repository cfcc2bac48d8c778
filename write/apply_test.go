package write

import (
	"strings"
	"testing"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// Apply applies an edit through its format's writer; a format nothing
// applies (a command) is an error, never a silent no-op.
func TestApply(t *testing.T) {
	doc := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n")
	got, err := Apply(doc, cluster.Edit{File: "cm.yaml", Line: 1, Format: cluster.FormatYAML, Text: "data:\n  k: w\n"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "k: w") || strings.Contains(string(got), "k: v") {
		t.Errorf("YAML edit not applied:\n%s", got)
	}
	hcl := []byte("resource \"helm_release\" \"x\" {\n  name = \"x\"\n}\n")
	got, err = Apply(hcl, cluster.Edit{File: "main.tf", Line: 1, Format: cluster.FormatHCL, Text: "version = \"1.0.1\"\n"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `version = "1.0.1"`) {
		t.Errorf("HCL edit not applied:\n%s", got)
	}
	if _, err := Apply(doc, cluster.Edit{Format: cluster.FormatShell, Text: "kubectl get pods"}); err == nil || !strings.Contains(err.Error(), `no applier for format "shell"`) {
		t.Errorf("shell edit: err = %v, want no applier", err)
	}
}
