package lint_test

import (
	"path/filepath"
	"testing"

	"github.com/eksdoctor/eksdoctor/lint/linttest"
)

func TestLifecycleFixtures(t *testing.T) {
	linttest.RunFixtures(t, filepath.Join("testdata", "lifecycle"), []string{"recreate-on-change"})
}
