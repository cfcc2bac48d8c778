package fixplan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
)

const mainTF = `resource "kubectl_manifest" "pool" {
  yaml_body = <<-YAML
    apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata:
      name: default
    spec:
      template:
        spec:
          kubelet:
            maxPods: 110
          nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      limits:
        cpu: 100
  YAML
  depends_on = [helm_release.karpenter]
}
`

func finding(check string, edits ...cluster.Edit) lint.Finding {
	return lint.Finding{Check: check, Severity: lint.Error, Object: cluster.ObjectRef{Kind: "NodePool", Name: "default"},
		Fix: &lint.Fix{Summary: check + " fix", Edits: edits}}
}

// TestComposesRewritesOfOneObject: two fixes that each rewrite the whole
// yaml_body from the file's document (one removes kubelet, one adds a label)
// become one document with both changes; a later fix that sets another
// attribute the first already set is left out, with why; commands are
// collected, not applied; a fix that does not apply is left out.
func TestComposesRewritesOfOneObject(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(mainTF), 0o644); err != nil {
		t.Fatal(err)
	}
	noKubelet := finding("karpenter-schema", cluster.Edit{File: "main.tf", Line: 1, Format: cluster.FormatHCL, Text: `yaml_body = <<-YAML
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
  limits:
    cpu: 100
YAML
`})
	label := finding("pod-unschedulable", cluster.Edit{File: "main.tf", Line: 1, Format: cluster.FormatHCL, Text: `yaml_body = <<-YAML
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    metadata:
      labels:
        workload: web
    spec:
      kubelet:
        maxPods: 110
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
  limits:
    cpu: 100
YAML
`})
	order := finding("teardown-order", cluster.Edit{File: "main.tf", Line: 1, Format: cluster.FormatHCL, Text: "depends_on = [helm_release.karpenter, module.eks]\n"})
	clash := finding("teardown-orphans", cluster.Edit{File: "main.tf", Line: 1, Format: cluster.FormatHCL, Text: "depends_on = [module.vpc]\n"})
	command := finding("finalizer-stuck", cluster.Edit{Format: cluster.FormatShell, Text: "kubectl delete nodepool default"})
	broken := finding("fargate-unsupported", cluster.Edit{File: "main.tf", Line: 99, Format: cluster.FormatHCL, Text: "wait = true\n"})

	plan, err := Make(dir, []lint.Finding{noKubelet, label, order, clash, command, broken})
	if err != nil {
		t.Fatal(err)
	}
	var applied []string
	for _, f := range plan.Applied {
		applied = append(applied, f.Check)
	}
	if got := strings.Join(applied, " "); got != "karpenter-schema pod-unschedulable teardown-order" {
		t.Errorf("applied %q", got)
	}
	if len(plan.Skipped) != 2 || plan.Skipped[0].Finding.Check != "teardown-orphans" || !strings.Contains(plan.Skipped[0].Why, "another fix already sets depends_on of the block at main.tf:1") ||
		plan.Skipped[1].Finding.Check != "fargate-unsupported" || !strings.Contains(plan.Skipped[1].Why, "it does not apply") {
		t.Errorf("skipped %+v", plan.Skipped)
	}
	if len(plan.Commands) != 1 || plan.Commands[0].Text != "kubectl delete nodepool default" {
		t.Errorf("commands %+v", plan.Commands)
	}
	if len(plan.Files) != 1 || plan.Files[0].Path != "main.tf" || string(plan.Files[0].Before) != mainTF {
		t.Fatalf("files %+v", plan.Files)
	}
	after := string(plan.Files[0].After)
	for _, want := range []string{"workload: web", "depends_on = [helm_release.karpenter, module.eks]", "cpu: 100"} {
		if !strings.Contains(after, want) {
			t.Errorf("the composed file lacks %q:\n%s", want, after)
		}
	}
	for _, gone := range []string{"kubelet", "maxPods"} {
		if strings.Contains(after, gone) {
			t.Errorf("the composed file still has %q (one fix undid the other):\n%s", gone, after)
		}
	}
	if strings.Count(after, "yaml_body") != 1 {
		t.Errorf("yaml_body set more than once:\n%s", after)
	}
	// Nothing was written.
	if data, _ := os.ReadFile(filepath.Join(dir, "main.tf")); string(data) != mainTF {
		t.Error("Make wrote the file")
	}
}

func TestHeredoc(t *testing.T) {
	t.Parallel()
	src := "x = <<-YAML\n    a: 1\n      b: ${var.x}\n  YAML\n"
	got, err := yamlBodyInFile([]byte("resource \"r\" \"n\" {\n  yaml_body = <<-YAML\n    a: 1\n    b:\n      c: ${var.x}\n  YAML\n}\n"), 1)
	if err != nil || got != "a: 1\nb:\n  c: ${var.x}\n" {
		t.Errorf("yamlBodyInFile = %q, %v", got, err)
	}
	if _, err := yamlBodyOfEdit(src); err == nil {
		t.Error("an edit that does not set yaml_body was read as one")
	}
}
