package lint_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/eksdoctor/eksdoctor/lint/linttest"
)

// The scheduling fixtures: each fires, names the cause, carries a fix that
// works, and has a fixed twin with no error.
func TestSchedulingFixtures(t *testing.T) {
	for _, name := range []string{"selector", "taint", "bootstrap", "partial-inputs", "partial-inputs-taint"} {
		data, err := os.ReadFile(filepath.Join("testdata", "scheduling", name+".txtar"))
		if err != nil {
			t.Fatal(err)
		}
		fx, err := linttest.ParseFixture(name, data)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			got := fx.Check(t, []string{"pod-unschedulable", "bootstrap-deadlock"})
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
