package lint_test

import (
	"path/filepath"
	"testing"

	"github.com/eksdoctor/eksdoctor/lint/linttest"
)

// The device plugin fixtures: the extended resources a node group offers exist
// only where the device plugin eksctl installs for it runs. Each fixture where
// the plugin cannot run fires; where it runs (untainted group, tolerated taint,
// a plugin of the inputs that tolerates the taint, a family eksctl installs no
// plugin for, a pod that asks for no device) nothing is reported.
func TestDevicePluginFixtures(t *testing.T) {
	ids := []string{"pod-unschedulable"}
	fixtures := linttest.ReadFixtures(t, filepath.Join("testdata", "deviceplugins"))
	if len(fixtures) < 9 {
		t.Fatalf("%d device plugin fixtures, want every one of the directory", len(fixtures))
	}
	for _, fx := range fixtures {
		t.Run(fx.Name, func(t *testing.T) {
			fx.Check(t, ids)
		})
	}
}
