// Package linttest runs checks over txtar fixtures for tests: a fixture bundles the
// files of a configuration (manifests, Terraform, values) and the test asserts the
// findings, and that each proposed fix, applied to the files, makes its finding
// disappear without causing a new one.
package linttest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/fixapply"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/source"
	"github.com/eksdoctor/eksdoctor/source/manifest"
)

// Extract writes a txtar archive's files into a new temporary directory.
func Extract(t testing.TB, archive string) string {
	t.Helper()
	a, err := txtar.ParseFile(archive)
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	return ExtractArchive(t, a)
}

// ExtractArchive writes an archive's files into a new temporary directory.
func ExtractArchive(t testing.TB, a *txtar.Archive) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range a.Files {
		p := filepath.Join(dir, f.Name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Load reads a directory the way `eksdoctor check DIR` does. File names in the
// model are relative to dir.
func Load(t testing.TB, dir string) *cluster.Model {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	cs, err := source.Load([]string{"."}, source.Options{})
	if err != nil {
		t.Fatalf("load %s: %v", dir, err)
	}
	if len(cs) != 1 {
		var names []string
		for _, c := range cs {
			names = append(names, c.Name)
		}
		t.Fatalf("load %s: %d clusters (%s), want the one a fixture describes", dir, len(cs), strings.Join(names, ", "))
	}
	return cs[0].Model
}

// Decode reads the Kubernetes objects of a manifest's text, as the loader
// does for file; a test fails when any cannot be read.
func Decode(t testing.TB, file, text string) []*cluster.Object {
	t.Helper()
	objs, probs := manifest.Decode(file, []byte(text))
	if len(probs) > 0 {
		t.Fatalf("decode %s: %v", file, probs)
	}
	return objs
}

// Build completes a model a test builds by hand the way the loader completes
// what it reads (source.Build): releases and add-ons become objects, objects
// workloads and capacity.
func Build(parts ...*cluster.Model) *cluster.Model { return source.Build(parts...) }

// Run loads a directory and runs the checks with the given IDs (all when none).
func Run(t testing.TB, dir string, ids ...string) []lint.Finding {
	t.Helper()
	m := Load(t, dir)
	return lint.Run(m, sim.New(m), checks(t, ids))
}

func checks(t testing.TB, ids []string) []*lint.Check {
	if len(ids) == 0 {
		return lint.Checks()
	}
	var out []*lint.Check
	for _, id := range ids {
		c, ok := lint.Lookup(id)
		if !ok {
			t.Fatalf("no check %q", id)
		}
		out = append(out, c)
	}
	return out
}

// Only returns the findings of one check.
func Only(fs []lint.Finding, id string) []lint.Finding {
	var out []lint.Finding
	for _, f := range fs {
		if f.Check == id {
			out = append(out, f)
		}
	}
	return out
}

// AtLeast returns the findings at or above a severity.
func AtLeast(fs []lint.Finding, sev lint.Severity) []lint.Finding {
	var out []lint.Finding
	for _, f := range fs {
		if f.Severity >= sev {
			out = append(out, f)
		}
	}
	return out
}

// Describe renders findings for failure messages.
func Describe(fs []lint.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("\n  " + f.Severity.String() + " " + f.Check + " " + f.Origin.String() + " " + f.Summary)
	}
	if b.Len() == 0 {
		return " (none)"
	}
	return b.String()
}

// key identifies a finding across runs (lines move when fixes are applied).
func key(f lint.Finding) string { return f.Check + "|" + f.Object.String() }

// ApplyFixes applies every fix of the findings of check id to the files in dir,
// re-runs all checks, and fails the test when a finding of that check on a fixed
// object remains, or when any finding appears that was not there before.
func ApplyFixes(t testing.TB, dir, id string, before []lint.Finding) []lint.Finding {
	t.Helper()
	var edits []lint.Edit
	fixed := map[string]bool{}
	for _, f := range Only(before, id) {
		if f.Fix == nil {
			continue
		}
		edits = append(edits, f.Fix.Edits...)
		fixed[key(f)] = true
	}
	if len(edits) == 0 {
		t.Fatalf("no %s finding carries a fix:%s", id, Describe(before))
	}
	if err := fixapply.Apply(dir, edits); err != nil {
		t.Fatalf("apply fixes: %v", err)
	}
	after := Run(t, dir)
	was := map[string]bool{}
	for _, f := range before {
		was[key(f)+"|"+f.Summary] = true
		was[key(f)] = true
	}
	for _, f := range after {
		if fixed[key(f)] && f.Check == id {
			t.Errorf("after the fix, %s still reports %s: %s", id, f.Object, f.Summary)
		}
		if !was[key(f)] {
			t.Errorf("the fix caused a new finding: %s %s %s", f.Check, f.Object, f.Summary)
		}
	}
	return after
}
