package lint_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/eksdoctor/eksdoctor/internal/fixapply"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/lint/linttest"
)

// TestBundledExample: examples/broken shows every failure family, examples/fixed
// is clean, and applying every fix eksdoctor proposes for the broken one leaves no
// error.
func TestBundledExample(t *testing.T) {
	broken := copyDir(t, filepath.Join("..", "examples", "broken"))
	fs := linttest.Run(t, broken)
	fired := map[string]bool{}
	for _, f := range fs {
		fired[f.Check] = true
	}
	for _, id := range []string{
		"bootstrap-deadlock", "pod-unschedulable", // F1
		"fargate-profile-mismatch", "fargate-unsupported", // F2
		"disruption-toleration-missing",      // F3
		"controller-role-as-node-role",       // F4
		"teardown-order", "teardown-orphans", // F5
		"karpenter-schema", "helm-values-unknown",
	} {
		if !fired[id] {
			t.Errorf("examples/broken does not show %s:%s", id, linttest.Describe(fs))
		}
	}
	fixed := copyDir(t, filepath.Join("..", "examples", "fixed"))
	if got := linttest.AtLeast(linttest.Run(t, fixed), lint.Info); len(got) > 0 {
		t.Errorf("examples/fixed reports:%s", linttest.Describe(got))
	}

	// Apply the fixes the way a user does: one finding's fix, then run again
	// (two fixes may rewrite the same manifest, each from the file as it was).
	for round := 0; round < 20; round++ {
		var next *lint.Finding
		for _, f := range linttest.Run(t, broken) {
			if f.Fix != nil && f.Severity >= lint.Warning {
				next = &f
				break
			}
		}
		if next == nil {
			break
		}
		if err := fixapply.Apply(broken, next.Fix.Edits); err != nil {
			t.Fatalf("apply the fix of %s %s: %v", next.Check, next.Object, err)
		}
	}
	after := linttest.Run(t, broken)
	if got := linttest.AtLeast(after, lint.Error); len(got) > 0 {
		t.Errorf("after every fix is applied, errors remain:%s", linttest.Describe(got))
	}
	t.Logf("left after the fixes:%s", linttest.Describe(linttest.AtLeast(after, lint.Warning)))
}

func copyDir(t *testing.T, from string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
	return dir
}
