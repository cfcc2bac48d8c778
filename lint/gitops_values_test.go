package lint_test

import (
	"path/filepath"
	"testing"

	"github.com/eksdoctor/eksdoctor/lint/linttest"
)

// The Helm releases Argo CD and Flux objects declare are judged like any
// other: their values keys against the chart version.
func TestGitOpsHelmValuesFixtures(t *testing.T) {
	linttest.RunFixtures(t, filepath.Join("testdata", "helmvalues"), []string{"helm-values-unknown"})
}
