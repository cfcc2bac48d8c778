package lint_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/lint/linttest"
)

// twin is a fixture pair: the broken configuration must report check (with a
// summary containing want); its fixed twin must not, and must report no error of
// any check.
type twin struct {
	name  string
	check string
	want  string
	// fix is set when the finding carries a fix that the test applies.
	fix bool
}

func runTwins(t *testing.T, family string, twins []twin) {
	for _, tc := range twins {
		t.Run(tc.name, func(t *testing.T) {
			broken := linttest.Extract(t, filepath.Join("testdata", family, tc.name+"-broken.txtar"))
			all := linttest.Run(t, broken)
			got := linttest.Only(all, tc.check)
			if len(got) == 0 {
				t.Fatalf("%s did not fire on the broken configuration; findings:%s", tc.check, linttest.Describe(all))
			}
			if !strings.Contains(got[0].Summary+"\n"+got[0].Detail, tc.want) {
				t.Errorf("finding = %q\n%s\nwant it to mention %q", got[0].Summary, got[0].Detail, tc.want)
			}
			if got[0].Origin.File == "" || got[0].Origin.Line == 0 {
				t.Errorf("finding has no file and line: %+v", got[0].Origin)
			}
			fixed := linttest.Extract(t, filepath.Join("testdata", family, tc.name+"-fixed.txtar"))
			after := linttest.Run(t, fixed)
			if fs := linttest.Only(after, tc.check); len(fs) > 0 {
				t.Errorf("the fixed twin still reports:%s", linttest.Describe(fs))
			}
			if fs := linttest.AtLeast(after, lint.Error); len(fs) > 0 {
				t.Errorf("the fixed twin reports errors:%s", linttest.Describe(fs))
			}
			if tc.fix {
				linttest.ApplyFixes(t, broken, tc.check, all)
			}
		})
	}
}

func TestSchedulingTwins(t *testing.T) {
	runTwins(t, "scheduling", []twin{
		{name: "selector", check: "pod-unschedulable", want: `label "workload" does not have known values`, fix: true},
		{name: "taint", check: "pod-unschedulable", want: "untolerated taint {dedicated: batch}", fix: true},
		{name: "bootstrap", check: "bootstrap-deadlock", want: "fits only Karpenter capacity", fix: true},
	})
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
