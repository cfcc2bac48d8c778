package lint_test

import (
	"path/filepath"
	"testing"

	"github.com/eksdoctor/eksdoctor/lint/linttest"
)

// The volume topology fixtures: persistent volumes in a zone the capacity
// does not reach, StorageClasses that bind too early or only where nothing
// runs, in files and in a running cluster; and the shapes where nothing is
// wrong, or where eksdoctor cannot see the claim.
func TestVolumeFixtures(t *testing.T) {
	ids := []string{"volume-zone-conflict", "pod-unschedulable", "storage-provisioner-missing"}
	fixtures := linttest.ReadFixtures(t, filepath.Join("testdata", "volumes"))
	if len(fixtures) < 15 {
		t.Fatalf("%d volume fixtures, want every one of the directory", len(fixtures))
	}
	for _, fx := range fixtures {
		t.Run(fx.Name, func(t *testing.T) { fx.Check(t, ids) })
	}
}
