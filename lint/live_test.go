package lint_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/lint/linttest"
	"github.com/eksdoctor/eksdoctor/sim"
)

func TestLiveFixtures(t *testing.T) {
	linttest.RunFixtures(t, filepath.Join("testdata", "live"), nil)
}

func describeAll(fs []lint.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("\n  " + f.Severity.String() + " " + f.Check + " " + f.Object.String() + ": " + f.Summary)
	}
	if b.Len() == 0 {
		return " (none)"
	}
	return b.String()
}

// With fargate-profile-mismatch disabled, the Pending pods it would explain are
// judged by the scheduling checks: no Pending pod goes unreported.
func TestLiveFargateDeferral(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "live", "fargate-only.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	fx, err := linttest.ParseFixture("fargate-only", data)
	if err != nil {
		t.Fatal(err)
	}
	model := fx.LiveModel(t)
	var checks []*lint.Check
	for _, c := range lint.Checks() {
		if c.ID != "fargate-profile-mismatch" {
			checks = append(checks, c)
		}
	}
	fs := lint.Run(model, sim.New(model), checks)
	var got []string
	for _, f := range fs {
		got = append(got, f.Check+" "+f.Severity.String()+" "+f.Object.String())
	}
	want := []string{"bootstrap-deadlock error Deployment/karpenter/karpenter"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings without fargate-profile-mismatch (-want +got):\n%s\n%s", diff, describeAll(fs))
	}
}
