package lint_test

import (
	"path/filepath"
	"sort"
	"testing"

	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/lint/linttest"
)

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

func TestDisruptionFixtures(t *testing.T) {
	linttest.RunFixtures(t, filepath.Join("testdata", "disruption"), []string{"disruption-toleration-missing"})
}

// Configurations built with aws-ia/eks-blueprints-addons: what the module
// installs is judged like what is written out.
func TestBlueprintsAddonsFixtures(t *testing.T) {
	linttest.RunFixtures(t, filepath.Join("testdata", "blueprints"), []string{"bootstrap-deadlock", "pod-unschedulable", "helm-values-unknown", "karpenter-schema", "node-role-unauthorized", "teardown-order", "teardown-orphans", "disruption-toleration-missing", "fargate-unsupported", "fargate-profile-mismatch"})
}

// Karpenter objects as the API server prepares them before validating.
func TestSchemaFixtures(t *testing.T) {
	linttest.RunFixtures(t, filepath.Join("testdata", "schema"), []string{"karpenter-schema", "invalid-input"})
}
