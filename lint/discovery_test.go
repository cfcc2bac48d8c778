package lint_test

import (
	"path/filepath"
	"testing"

	"github.com/eksdoctor/eksdoctor/lint/linttest"
)

// TestDiscoveryFixtures: node classes whose selectors find no subnet or
// security group (see testdata/discovery/README.md).
func TestDiscoveryFixtures(t *testing.T) {
	linttest.RunFixtures(t, filepath.Join("testdata", "discovery"), []string{"nodeclass-discovery-empty"})
}
