package lint_test

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/lint/linttest"
)

// familyFixture is one txtar fixture of a check family: the configuration, the
// findings it must produce (`want CHECK SEVERITY OBJECT` lines in the comment) and
// the checks whose fixes are applied and verified (`fix CHECK`).
type familyFixture struct {
	name  string
	arch  *txtar.Archive
	wants []string
	fixes []string
}

func readFixtures(t *testing.T, dir string) []familyFixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in %s (%v)", dir, err)
	}
	sort.Strings(paths)
	var out []familyFixture
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatalf("read %s: %v", p, err)
		}
		f := familyFixture{name: strings.TrimSuffix(filepath.Base(p), ".txtar"), arch: a}
		for _, line := range strings.Split(string(a.Comment), "\n") {
			fields := strings.Fields(line)
			switch {
			case len(fields) == 4 && fields[0] == "want":
				f.wants = append(f.wants, strings.Join(fields[1:], " "))
			case len(fields) == 2 && fields[0] == "fix":
				f.fixes = append(f.fixes, fields[1])
			}
		}
		out = append(out, f)
	}
	return out
}

// describe renders findings of the given checks as "check severity object".
func describe(fs []lint.Finding, ids []string) []string {
	var out []string
	for _, f := range fs {
		for _, id := range ids {
			if f.Check == id {
				out = append(out, f.Check+" "+f.Severity.String()+" "+f.Object.String())
			}
		}
	}
	sort.Strings(out)
	return out
}

// runFamilyFixtures checks every fixture of a directory: the findings of the
// family's checks are exactly the wanted ones, and each listed fix, applied to
// the files, leaves no finding of its check and causes no new one.
func runFamilyFixtures(t *testing.T, dir string, ids []string) {
	for _, fx := range readFixtures(t, dir) {
		t.Run(fx.name, func(t *testing.T) {
			root := linttest.ExtractArchive(t, fx.arch)
			got := linttest.Run(t, root)
			want := append([]string(nil), fx.wants...)
			sort.Strings(want)
			if diff := cmp.Diff(want, describe(got, ids)); diff != "" {
				t.Fatalf("findings (-want +got):\n%s\nall findings:%s", diff, linttest.Describe(got))
			}
			for _, id := range fx.fixes {
				after := linttest.ApplyFixes(t, root, id, got)
				if left := describe(after, []string{id}); len(left) > 0 {
					t.Errorf("after the fixes, %s still reports %v", id, left)
				}
			}
		})
	}
}

func TestDisruptionFixtures(t *testing.T) {
	runFamilyFixtures(t, filepath.Join("testdata", "disruption"), []string{"disruption-toleration-missing"})
}

// Configurations built with aws-ia/eks-blueprints-addons: what the module
// installs is judged like what is written out.
func TestBlueprintsAddonsFixtures(t *testing.T) {
	runFamilyFixtures(t, filepath.Join("testdata", "blueprints"), []string{"bootstrap-deadlock", "pod-unschedulable", "helm-values-unknown", "karpenter-schema", "node-role-unauthorized", "teardown-order", "teardown-orphans", "disruption-toleration-missing", "fargate-unsupported", "fargate-profile-mismatch"})
}

// Karpenter objects as the API server prepares them before validating.
func TestSchemaFixtures(t *testing.T) {
	runFamilyFixtures(t, filepath.Join("testdata", "schema"), []string{"karpenter-schema", "invalid-input"})
}
