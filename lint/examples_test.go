package lint_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/lint/linttest"
)

// TestExamples runs every check's documented example as a fixture: the
// example fires its check, the check's fixes (when it proposes some) remove
// it, and the fixed form the docs show is clean of it.
func TestExamples(t *testing.T) {
	for _, c := range lint.Checks() {
		t.Run(c.ID, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("examples", c.ID+".txtar"))
			if err != nil {
				t.Fatalf("%s has no example: %v", c.ID, err)
			}
			fx, err := linttest.ParseFixture(c.ID, data)
			if err != nil {
				t.Fatal(err)
			}
			if fx.Example == "" || fx.Twin == nil {
				t.Fatalf("the example names no file (example FILE) or has no fixed twin (fixed/FILE)")
			}
			if _, ok := fx.File(fx.Example, true); !ok {
				t.Fatalf("the example has no fixed/%s", fx.Example)
			}
			if !slices.ContainsFunc(fx.Wants, func(w string) bool { return strings.HasPrefix(w, c.ID+" ") }) {
				t.Fatalf("the example wants no %s finding", c.ID)
			}
			ex, ok := lint.ExampleOf(c.ID)
			if !ok || ex.File != fx.Example {
				t.Fatalf("the embedded example of %s differs from its fixture", c.ID)
			}
			fx.Check(t, []string{c.ID})
		})
	}
	entries, err := os.ReadDir("examples")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := lint.Lookup(strings.TrimSuffix(e.Name(), ".txtar")); !ok {
			t.Errorf("examples/%s is the example of no check", e.Name())
		}
	}
}
