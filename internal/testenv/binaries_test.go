package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeBinaries makes a directory holding executables with the test binaries'
// names.
func fakeBinaries(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The test command uses the binaries the machine already has: the directory
// EKSDOCTOR_TESTBIN names is used as it is when it holds them (no Go on the
// PATH: nothing is built; the controller manager is not needed but by the
// cluster with controllers), and KUBEBUILDER_ASSETS wins for kube-apiserver,
// etcd and, when it holds one, kube-scheduler.
func TestTheBinariesGivenAreUsed(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := fakeBinaries(t, "kube-apiserver", "etcd", "kube-scheduler")
	cmd := exec.Command("bash", filepath.Join(root, "hack", "testbin.sh"))
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "EKSDOCTOR_TESTBIN=" + dir}
	out, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != dir {
		t.Errorf("testbin.sh with EKSDOCTOR_TESTBIN: %v, printed %q; want %s", err, out, dir)
	}

	assets := fakeBinaries(t, "kube-apiserver", "etcd")
	t.Setenv("KUBEBUILDER_ASSETS", assets)
	t.Setenv("EKSDOCTOR_TESTBIN", dir)
	if got, err := AssetsDir(os.Stderr); err != nil || got != assets {
		t.Errorf("AssetsDir = %q, %v; want KUBEBUILDER_ASSETS %s", got, err, assets)
	}
	// envtest's downloads hold no kube-scheduler: it comes from the cache.
	if got, err := SchedulerPath(os.Stderr); err != nil || got != filepath.Join(dir, "kube-scheduler") {
		t.Errorf("SchedulerPath = %q, %v; want the one in EKSDOCTOR_TESTBIN", got, err)
	}
	withScheduler := fakeBinaries(t, "kube-apiserver", "etcd", "kube-scheduler")
	t.Setenv("KUBEBUILDER_ASSETS", withScheduler)
	if got, err := SchedulerPath(os.Stderr); err != nil || got != filepath.Join(withScheduler, "kube-scheduler") {
		t.Errorf("SchedulerPath = %q, %v; want the one in KUBEBUILDER_ASSETS", got, err)
	}
	t.Setenv("KUBEBUILDER_ASSETS", fakeBinaries(t, "etcd"))
	if _, err := AssetsDir(os.Stderr); err == nil || !strings.Contains(err.Error(), "kube-apiserver") {
		t.Errorf("KUBEBUILDER_ASSETS without kube-apiserver: %v, want an error naming it", err)
	}
}
