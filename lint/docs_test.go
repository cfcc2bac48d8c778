package lint_test

import (
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/eksdoctor/eksdoctor/lint"
)

var update = flag.Bool("update", false, "regenerate docs/checks from the registry")

// TestDocs keeps docs/checks/ equal to what the registry generates: a check added,
// renamed or re-documented without regenerating the docs fails here.
func TestDocs(t *testing.T) {
	dir := filepath.Join("..", "docs", "checks")
	want := map[string]string{"README.md": lint.Index(lint.Checks())}
	for _, c := range lint.Checks() {
		want[c.ID+".md"] = lint.Markdown(c)
	}
	if *update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range want {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%v (run go test ./lint -run TestDocs -update)", err)
	}
	var stray []string
	for _, e := range entries {
		if _, ok := want[e.Name()]; !ok {
			stray = append(stray, e.Name())
		}
	}
	sort.Strings(stray)
	for _, s := range stray {
		t.Errorf("docs/checks/%s documents no check (run go test ./lint -run TestDocs -update)", s)
	}
	for name, text := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("docs/checks/%s is missing (run go test ./lint -run TestDocs -update)", name)
			continue
		}
		if string(got) != text {
			t.Errorf("docs/checks/%s is stale (run go test ./lint -run TestDocs -update)", name)
		}
	}
}

// TestEveryCheckIsDocumented: the docs are the product; an empty section is a bug.
func TestEveryCheckIsDocumented(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range lint.Checks() {
		if seen[c.ID] {
			t.Errorf("duplicate check ID %s", c.ID)
		}
		seen[c.ID] = true
		if c.Title == "" || c.Doc.What == "" || c.Doc.Why == "" || c.Doc.Fix == "" || c.Family == "" || c.Severity == 0 || c.Run == nil {
			t.Errorf("%s is not fully documented: %+v", c.ID, c.Doc)
		}
		if ex, ok := lint.ExampleOf(c.ID); !ok || ex.After == "" {
			t.Errorf("%s has no example with a fixed form (lint/examples/%s.txtar)", c.ID, c.ID)
		}
	}
}
