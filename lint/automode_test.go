package lint_test

import (
	"path/filepath"
	"testing"

	"github.com/eksdoctor/eksdoctor/lint/linttest"
)

// TestAutoModeFixtures: the five families in EKS Auto Mode form (see
// testdata/automode/README.md).
func TestAutoModeFixtures(t *testing.T) {
	linttest.RunFixtures(t, filepath.Join("testdata", "automode"), []string{
		"auto-mode-config", "storage-provisioner-missing", "pod-unschedulable", "node-role-unauthorized",
		"bootstrap-deadlock", "disruption-toleration-missing", "disruption-daemonset-evicted", "teardown-orphans", "teardown-order",
	})
}
