package lint_test

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/eksdoctor/eksdoctor/internal/shared"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/lint/linttest"
)

// TestReferenceManifestsAreClean: configurations known to work report no error or
// warning from any check. Each NodePool manifest of Karpenter's own examples is
// checked on its own (they are alternatives, not one cluster), together with the
// workload examples and each eksctl getting-started config.
func TestReferenceManifestsAreClean(t *testing.T) {
	corpus := shared.Dir(t, "corpus")
	examples, err := filepath.Glob(filepath.Join(corpus, "karpenter-provider-aws", "examples", "v1", "*.yaml"))
	if err != nil || len(examples) < 20 {
		t.Fatalf("examples: %v (%d)", err, len(examples))
	}
	sort.Strings(examples)
	// Known real defects in the references, asserted rather than hidden:
	// windows-custom-userdata.yaml writes nodeClassRef.group with a version,
	// which the CRD's pattern rejects.
	known := map[string]string{"windows-custom-userdata.yaml": "karpenter-schema"}
	for _, ex := range examples {
		t.Run(filepath.Base(ex), func(t *testing.T) {
			dir := t.TempDir()
			copyFile(t, ex, filepath.Join(dir, "nodepool.yaml"))
			fs := linttest.AtLeast(linttest.Run(t, dir), lint.Warning)
			if id, ok := known[filepath.Base(ex)]; ok {
				if len(fs) != 1 || fs[0].Check != id {
					t.Errorf("want exactly the known %s finding, got:%s", id, linttest.Describe(fs))
				}
				return
			}
			if len(fs) > 0 {
				t.Errorf("a working reference reports:%s", linttest.Describe(fs))
			}
		})
	}
	for _, cfg := range []string{"step02-create-cluster.eksctl.yaml", "step02-create-cluster-fargate.eksctl.yaml"} {
		t.Run(cfg, func(t *testing.T) {
			dir := t.TempDir()
			copyFile(t, filepath.Join(corpus, "karpenter-provider-aws", "extracted-eksctl", cfg), filepath.Join(dir, "cluster.yaml"))
			copyFile(t, filepath.Join(corpus, "karpenter-provider-aws", "examples", "v1", "general-purpose.yaml"), filepath.Join(dir, "nodepool.yaml"))
			// The one hazard of the guide's layout, asserted: eksctl delete
			// cluster never deletes a NodePool applied with kubectl, so nodes
			// still running then outlive the cluster (karpenter-provider-aws#6870).
			fs := linttest.AtLeast(linttest.Run(t, dir), lint.Warning)
			if len(fs) != 1 || fs[0].Check != "teardown-orphans" || fs[0].Object.String() != "NodePool/general-purpose" {
				t.Errorf("want exactly teardown-orphans on NodePool/general-purpose, got:%s", linttest.Describe(fs))
			}
		})
	}
}

// TestV1beta1ExamplesAreCleanUnderV1beta1: Karpenter v0.37's own examples validate
// against its CRDs.
func TestV1beta1ExamplesAreCleanUnderV1beta1(t *testing.T) {
	corpus := shared.Dir(t, "corpus")
	examples, err := filepath.Glob(filepath.Join(corpus, "karpenter-provider-aws", "@v0.37.7", "examples", "v1beta1", "*.yaml"))
	if err != nil || len(examples) < 15 {
		t.Fatalf("examples: %v (%d)", err, len(examples))
	}
	for _, ex := range examples {
		dir := t.TempDir()
		copyFile(t, ex, filepath.Join(dir, "nodepool.yaml"))
		if fs := linttest.Only(linttest.Run(t, dir, "karpenter-schema"), "karpenter-schema"); len(fs) > 0 {
			t.Errorf("%s:%s", filepath.Base(ex), linttest.Describe(fs))
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
