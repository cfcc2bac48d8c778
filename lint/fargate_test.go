package lint_test

import (
	"path/filepath"
	"testing"

	"github.com/eksdoctor/eksdoctor/lint/linttest"
)

func TestFargateFixtures(t *testing.T) {
	linttest.RunFixtures(t, filepath.Join("testdata", "fargate"), nodeIdentityChecks)
}
