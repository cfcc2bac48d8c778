// Package shared finds the third-party configurations the tests read where they
// are kept, beside the repository: shared/corpus (reference configurations) and
// shared/realworld (configurations from public repositories), each with a
// SOURCES.md naming origins and licenses. The repository keeps no copy of them.
package shared

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns shared/<name>: from EKSDOCTOR_SHARED (the directory that holds
// corpus/ and realworld/), else the first shared/<name> found walking up from the
// working directory. A test that needs it fails when it is not there: a missing
// corpus must not pass as an empty one.
func Dir(t testing.TB, name string) string {
	t.Helper()
	d, ok := Find(name)
	if !ok {
		t.Fatalf("shared/%s not found beside the repository: set EKSDOCTOR_SHARED to the directory that holds it", name)
	}
	return d
}

// Find is Dir without a test: ok is false when shared/<name> is not there.
func Find(name string) (string, bool) {
	if root := os.Getenv("EKSDOCTOR_SHARED"); root != "" {
		d := filepath.Join(root, name)
		return d, isDir(d)
	}
	if name == "corpus" {
		if d := os.Getenv("EKSDOCTOR_CORPUS"); d != "" {
			return d, isDir(d)
		}
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if d := filepath.Join(dir, "shared", name); isDir(d) {
			return d, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
