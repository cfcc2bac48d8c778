//go:build linux

package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// The cluster with controllers takes what the machine already has as the
// test binaries do: the cached directories when they hold everything
// (nothing is built: no Go on the PATH), and KUBEBUILDER_ASSETS for any of
// its programs found there.
func TestControllerAssetsGiven(t *testing.T) {
	k8s := fakeBinaries(t, "kube-apiserver", "etcd", "kube-scheduler", "kube-controller-manager")
	ctrl := fakeBinaries(t, "karpenter-kwok", "kwok")
	for _, sub := range []string{"crds", "stages"} {
		if err := os.MkdirAll(filepath.Join(ctrl, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ctrl, sub, "a.yaml"), []byte("{}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ctrl, "ready"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", "/usr/bin:/bin")
	t.Setenv("EKSDOCTOR_TESTBIN", k8s)
	t.Setenv("EKSDOCTOR_CONTROLLERS", ctrl)
	t.Setenv("KUBEBUILDER_ASSETS", "")
	a, err := ControllerAssetsFor(os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	want := ControllerAssets{
		ControllerManager: filepath.Join(k8s, "kube-controller-manager"),
		Scheduler:         filepath.Join(k8s, "kube-scheduler"),
		Karpenter:         filepath.Join(ctrl, "karpenter-kwok"),
		NodeAgent:         filepath.Join(ctrl, "kwok"),
	}
	if a.ControllerManager != want.ControllerManager || a.Scheduler != want.Scheduler || a.Karpenter != want.Karpenter || a.NodeAgent != want.NodeAgent {
		t.Errorf("from the caches: %+v, want %+v", a, want)
	}
	if len(a.CRDs) != 1 || len(a.Stages) != 1 {
		t.Errorf("CRDs %v, stages %v: want the one file of each", a.CRDs, a.Stages)
	}

	assets := fakeBinaries(t, "kube-apiserver", "etcd", "kube-controller-manager", "kwok")
	t.Setenv("KUBEBUILDER_ASSETS", assets)
	a, err = ControllerAssetsFor(os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if a.ControllerManager != filepath.Join(assets, "kube-controller-manager") || a.NodeAgent != filepath.Join(assets, "kwok") || a.Karpenter != want.Karpenter {
		t.Errorf("with KUBEBUILDER_ASSETS: %+v", a)
	}
}
