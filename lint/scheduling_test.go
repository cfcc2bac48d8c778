package lint_test

import (
	"path/filepath"
	"testing"

	"github.com/eksdoctor/eksdoctor/lint/linttest"
)

// The scheduling fixtures: each fires, names the cause, carries a fix that
// works, and has a fixed twin with no error. Every fixture of the directory
// runs (invalid-broken.txtar has a test of its own).
func TestSchedulingFixtures(t *testing.T) {
	ids := []string{"pod-unschedulable", "bootstrap-deadlock", "karpenter-schema", "fargate-profile-mismatch"}
	fixtures := linttest.ReadFixtures(t, filepath.Join("testdata", "scheduling"))
	if len(fixtures) < 13 {
		t.Fatalf("%d scheduling fixtures, want every one of the directory", len(fixtures))
	}
	for _, fx := range fixtures {
		if fx.Name == "invalid-broken" {
			continue
		}
		t.Run(fx.Name, func(t *testing.T) {
			got := fx.Check(t, ids)
			for _, f := range got {
				if f.Origin.File == "" || f.Origin.Line == 0 {
					t.Errorf("finding has no file and line: %s %+v", f.Check, f.Origin)
				}
			}
		})
	}
}

func TestInvalidInputDoesNotHideOtherFiles(t *testing.T) {
	dir := linttest.Extract(t, filepath.Join("testdata", "scheduling", "invalid-broken.txtar"))
	fs := linttest.Run(t, dir)
	bad := linttest.Only(fs, "invalid-input")
	if len(bad) != 1 || bad[0].Origin.File != "broken.yaml" || bad[0].Origin.Line != 5 {
		t.Errorf("invalid-input findings:%s\nwant one at broken.yaml:5", linttest.Describe(bad))
	}
	if len(linttest.Only(fs, "pod-unschedulable")) != 1 {
		t.Errorf("the other file was not analysed:%s", linttest.Describe(fs))
	}
}
