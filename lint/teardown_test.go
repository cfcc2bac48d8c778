package lint_test

import (
	"path/filepath"
	"testing"
)

func TestTeardownFixtures(t *testing.T) {
	runFamilyFixtures(t, filepath.Join("testdata", "teardown"), []string{"teardown-order", "teardown-orphans", "karpenter-schema"})
}
