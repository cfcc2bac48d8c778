package lint_test

import (
	"path/filepath"
	"testing"

	"github.com/eksdoctor/eksdoctor/lint/linttest"
)

func TestDisruptionBlockedFixtures(t *testing.T) {
	linttest.RunFixtures(t, filepath.Join("testdata", "disruption-blocked"), []string{"disruption-blocked"})
}
