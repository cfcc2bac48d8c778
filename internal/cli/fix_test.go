package cli

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFixWritesOnlyUnderThePathsGiven(t *testing.T) {
	for _, c := range []struct {
		file  string
		roots []string
		want  bool
	}{
		{"infra/main.tf", []string{"infra"}, true},
		{"infra/main.tf", []string{"infra/main.tf"}, true},
		{"infra2/main.tf", []string{"infra"}, false},
		{"/etc/passwd", []string{"."}, false},
		{"values/prod.yaml", []string{"infra", "values/prod.yaml"}, true},
		{"../outside.tf", []string{"."}, false},
	} {
		if got := under(c.file, c.roots); got != c.want {
			t.Errorf("under(%q, %q) = %v, want %v", c.file, c.roots, got, c.want)
		}
	}
}

var update = flag.Bool("update", false, "rewrite testdata/fix-broken.diff and examples/fixed from what fix does")

// TestFixDiffGolden: `eksdoctor fix --diff examples/broken` shows only what
// each fix changes — no line of the files outside the edited objects and
// blocks, comments and quoting kept — as testdata/fix-broken.diff records
// (go test ./internal/cli -run TestFixDiffGolden -update rewrites it).
func TestFixDiffGolden(t *testing.T) {
	golden, err := filepath.Abs(filepath.Join("testdata", "fix-broken.diff"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join("..", ".."))
	stdout, stderr, code := runCLI(t, "fix", "--diff", "examples/broken")
	if code != 0 {
		t.Fatalf("fix --diff exits %d: %s", code, stderr)
	}
	if *update {
		if err := os.WriteFile(golden, []byte(stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), stdout); diff != "" {
		t.Errorf("fix --diff examples/broken differs from %s (-want +got; -update rewrites it):\n%s", golden, diff)
	}
	// What the old whole-document rewrite lost: comments beside the edited
	// keys, quoting, key order.
	for _, kept := range []string{
		"    # CoreDNS keeps its default tolerations",
		`  schedule: "0 2 * * *"`,
		"    apiVersion: karpenter.sh/v1",
	} {
		if strings.Contains(stdout, "\n-"+kept) {
			t.Errorf("the diff removes %q", kept)
		}
	}
}

// TestExamplesFixedIsBrokenFixed: examples/fixed is exactly what `eksdoctor
// fix` makes of a copy of examples/broken (-update rewrites it).
func TestExamplesFixedIsBrokenFixed(t *testing.T) {
	root := filepath.Join("..", "..", "examples")
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(root, "broken"))); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(t, "fix", dir)
	if code != 0 {
		t.Fatalf("fix exits %d: %s\n%s", code, stderr, stdout)
	}
	if !strings.Contains(stdout, "\n0 errors, 0 warnings, 0 info\n") {
		t.Errorf("fix leaves findings in examples/broken:\n%s", stdout)
	}
	names, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no files in %s: %v", dir, err)
	}
	for _, p := range names {
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fixed := filepath.Join(root, "fixed", filepath.Base(p))
		if *update {
			if err := os.WriteFile(fixed, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(fixed)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s is not examples/broken fixed (-want +got; -update rewrites it):\n%s", fixed, diff)
		}
	}
	if fixed, _ := filepath.Glob(filepath.Join(root, "fixed", "*")); len(fixed) != len(names) {
		t.Errorf("examples/fixed has %d files, examples/broken %d", len(fixed), len(names))
	}
}
