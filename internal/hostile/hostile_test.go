package hostile

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

// Budgets every hostile case is held to: no crash, nothing from outside the scanned
// paths or marked sensitive in any output, and at most this much memory above a
// normal run. Time is measured by `eksdoctor-bench hostile` and printed here; the
// guard only stops a run that would never end.
const (
	memoryAbove = 300 << 20
	hangGuard   = 2 * time.Minute
)

var bin string

func TestMain(m *testing.M) {
	Launch()
	dir, err := os.MkdirTemp("", "eksdoctor-bin-")
	if err != nil {
		panic(err)
	}
	os.Chmod(dir, 0o755)
	bin = filepath.Join(dir, "eksdoctor")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/eksdoctor")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		panic("build eksdoctor: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestHostileInputs(t *testing.T) {
	examples, err := filepath.Abs("../../examples/broken")
	if err != nil {
		t.Fatal(err)
	}
	normal, err := Run(bin, t.TempDir(), []string{"check", examples, "-o", "json"}, false, hangGuard)
	if err != nil || normal.ExitCode != 1 {
		t.Fatalf("normal run: exit %d, %v\n%s", normal.ExitCode, err, normal.Stderr)
	}
	t.Logf("normal run (examples/broken): %s, %d MiB", normal.Wall.Round(time.Millisecond), normal.MaxRSS>>20)

	for _, c := range Cases() {
		t.Run(c.Name, func(t *testing.T) {
			dir, err := Prepare(c)
			defer Cleanup(dir)
			if err != nil {
				t.Fatal(err)
			}
			before := Listing(dir)
			for _, format := range []string{"text", "json", "sarif"} {
				r, err := Run(bin, dir, append(append([]string(nil), c.Args...), "-o", format), c.Unprivileged, hangGuard)
				if err != nil {
					t.Fatalf("%s: %v", format, err)
				}
				t.Logf("%s: exit %d, %s, %d MiB", format, r.ExitCode, r.Wall.Round(time.Millisecond), r.MaxRSS>>20)
				if r.Signaled || r.ExitCode > 1 || strings.Contains(r.Stderr, "panic:") || strings.Contains(r.Stderr, "fatal error") {
					t.Fatalf("%s: exit %d (signaled %v); stderr:\n%s", format, r.ExitCode, r.Signaled, clip(r.Stderr))
				}
				if r.MaxRSS > normal.MaxRSS+memoryAbove {
					t.Errorf("%s: peak memory %d MiB, more than %d MiB above the normal run's %d MiB", format, r.MaxRSS>>20, memoryAbove>>20, normal.MaxRSS>>20)
				}
				for _, out := range []string{r.Stdout, r.Stderr} {
					if strings.Contains(strings.ToLower(out), strings.ToLower(Canary)) {
						t.Errorf("%s: the output holds what lies outside the scanned paths or is sensitive:\n%s", format, around(out, Canary))
					}
				}
				switch format {
				case "text":
					checkText(t, r.Stdout)
					for _, w := range c.Want {
						if !strings.Contains(r.Stdout, w) {
							t.Errorf("text output does not say %q:\n%s", w, clip(r.Stdout))
						}
					}
				default:
					if !json.Valid([]byte(r.Stdout)) {
						t.Errorf("%s output is not valid JSON:\n%s", format, clip(r.Stdout))
					}
				}
			}
			if after := Listing(dir); after != before {
				t.Errorf("the run changed the files it read:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// checkText fails on a control character other than a line break or a tab, and
// on a line a CI runner would read as a workflow command.
func checkText(t *testing.T, out string) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		for _, r := range line {
			if r == utf8.RuneError || (r < 0x20 && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
				t.Errorf("line %d holds the control character %U: %q", i+1, r, line)
				break
			}
		}
		if strings.HasPrefix(strings.TrimLeftFunc(line, unicode.IsSpace), "::") {
			t.Errorf("line %d reads as a workflow command: %q", i+1, line)
		}
	}
}

func around(s, sub string) string {
	i := strings.Index(strings.ToLower(s), strings.ToLower(sub))
	if i < 0 {
		return ""
	}
	return s[max(0, i-300):min(len(s), i+len(sub)+300)]
}

func clip(s string) string {
	if len(s) > 4000 {
		return s[:4000] + "..."
	}
	return s
}
