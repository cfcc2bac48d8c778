package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadOwnFiles: whatever a configuration or a baseline holds — from a pull
// request — reading it ends in settings or in a usage error that names the
// file, never a panic; a file over its budget is refused unread.
func FuzzReadOwnFiles(f *testing.F) {
	for _, s := range []string{
		"", "failOn: warning\n", "disable: [pod-unschedulable]\nexclude: ['legacy/**']\n",
		"severity: {pod-unschedulable: info}\n", "clusters: [{cluster: infra, include: ['apps/**']}]\n",
		"clusters: [{cluster: manifests, capacity: complete}]\n", "clusters:\n  - cluster: infra\n    include: ['gitops/**']\n    capacity: complete\n",
		"clusters: [{cluster: infra, capacity: full}]\n", "clusters: [{cluster: infra, capacity: [complete]}]\n", "clusters: [{cluster: infra, capacity: ~}]\n",
		"clusters: [{capacity: complete}]\n",
		"failOn: [a, b]\nfailon: x\n", "a: &a [*a]\n", "{\"version\": 1, \"findings\": []}",
		"{\"version\": 1, \"findings\": [{\"check\": \"x\", \"fingerprint\": \"f\"}]}", "\x00\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		cfg := filepath.Join(dir, ConfigFile)
		base := filepath.Join(dir, "base.json")
		for _, p := range []string{cfg, base} {
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		env := &Env{Getenv: func(string) string { return "" }, Getwd: func() (string, error) { return dir, nil }}
		o := &reportOptions{output: "text", formats: outputs, config: cfg, baseline: base}
		_, err := o.resolve(env)
		var ue usageError
		if err != nil && !errors.As(err, &ue) {
			t.Fatalf("not a usage error: %T %v", err, err)
		}
		if err != nil && !strings.Contains(err.Error(), ConfigFile) && !strings.Contains(err.Error(), "base") && !strings.Contains(err.Error(), "check") && !strings.Contains(err.Error(), "configuration") {
			t.Fatalf("the error names neither file: %v", err)
		}
	})
}

// The budgets and the confinement of the files eksdoctor reads for itself.
func TestReadOwnFileRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := t.TempDir()
	write := func(p string, size int) {
		if err := os.WriteFile(p, []byte(strings.Repeat("#", size)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(outside, "secret.yaml"), 10)
	write(filepath.Join(dir, "big.yaml"), maxConfig+1)
	if err := os.Symlink(filepath.Join(outside, "secret.yaml"), filepath.Join(dir, "out.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.yaml")); err != nil {
		t.Fatal(err)
	}
	env := &Env{Getenv: func(string) string { return "" }, Getwd: func() (string, error) { return dir, nil }}
	for name, want := range map[string]string{
		"big.yaml":  "larger than 1 MiB",
		"out.yaml":  "leads outside",
		"zero.yaml": "leads outside",
	} {
		_, err := readOwnFile(env, filepath.Join(dir, name), maxConfig)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want an error naming it and saying %q", name, err, want)
		}
	}
}
