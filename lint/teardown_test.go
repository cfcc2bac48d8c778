package lint_test

import (
	"path/filepath"
	"testing"

	"github.com/eksdoctor/eksdoctor/lint/linttest"
)

func TestTeardownFixtures(t *testing.T) {
	linttest.RunFixtures(t, filepath.Join("testdata", "teardown"), []string{"teardown-order", "teardown-orphans", "karpenter-schema"})
}
