package lint_test

import (
	"path/filepath"
	"testing"
)

func TestFargateFixtures(t *testing.T) {
	runTwinFixtures(t, filepath.Join("testdata", "fargate"))
}
