package hostile

import (
	"encoding/json"
	"fmt"
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
	t.Parallel()
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
			t.Parallel()
			dir, err := Prepare(c)
			defer Cleanup(dir)
			if err != nil {
				t.Fatal(err)
			}
			before := Listing(dir)
			for _, format := range c.Outputs() {
				r, err := Run(bin, dir, append(append([]string(nil), c.Args...), "-o", format), c.Unprivileged, hangGuard)
				if err != nil {
					t.Fatalf("%s: %v", format, err)
				}
				t.Logf("%s: exit %d, %s, %d MiB", format, r.ExitCode, r.Wall.Round(time.Millisecond), r.MaxRSS>>20)
				if r.Signaled || strings.Contains(r.Stderr, "panic:") || strings.Contains(r.Stderr, "fatal error") ||
					c.Exit == 0 && r.ExitCode > 1 || c.Exit != 0 && r.ExitCode != c.Exit {
					t.Fatalf("%s: exit %d (signaled %v), want %s; stderr:\n%s", format, r.ExitCode, r.Signaled, wantExit(c.Exit), clip(r.Stderr))
				}
				if r, ok := invisibleIn(r.Stdout + r.Stderr); ok {
					t.Errorf("%s: the output holds the invisible character %U", format, r)
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
					checkText(t, r.Stderr)
					for _, w := range c.Want {
						if !strings.Contains(r.Stdout+r.Stderr, w) {
							t.Errorf("text output does not say %q:\n%s%s", w, clip(r.Stdout), clip(r.Stderr))
						}
					}
				case "json", "sarif":
					if r.ExitCode < 2 && !json.Valid([]byte(r.Stdout)) {
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

func wantExit(code int) string {
	if code == 0 {
		return "0 or 1"
	}
	return fmt.Sprint(code)
}

// invisibleIn finds a character a reader does not see: format characters
// (bidirectional controls, zero-width ones), separators, fillers.
func invisibleIn(s string) (rune, bool) {
	for _, r := range s {
		if unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029 || r == 0x115f || r == 0x1160 || r == 0x3164 || r == 0xffa0 {
			return r, true
		}
	}
	return 0, false
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

// TestPrintedCommands runs every command eksdoctor prints for the
// printed-commands case (the teardown plan's, and the fixes that are commands)
// as a user would: each parses as shell, and run with the tools replaced by
// functions that print their arguments, each runs what it says and nothing
// else — no name is substituted, no file created.
func TestPrintedCommands(t *testing.T) {
	t.Parallel()
	var c Case
	for _, k := range Cases() {
		if k.Name == "printed-commands" {
			c = k
		}
	}
	dir, err := Prepare(c)
	defer Cleanup(dir)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	r, err := Run(bin, dir, []string{"teardown", "repo", "-o", "json"}, false, hangGuard)
	if err != nil || r.ExitCode > 1 {
		t.Fatalf("teardown: exit %d, %v\n%s", r.ExitCode, err, r.Stderr)
	}
	type plan struct {
		Commands []string `json:"commands"`
	}
	// One plan, or a list of them when the inputs hold several clusters.
	var plans []plan
	if err := json.Unmarshal([]byte(r.Stdout), &plans); err != nil {
		var one plan
		if err := json.Unmarshal([]byte(r.Stdout), &one); err != nil {
			t.Fatalf("teardown -o json: %v\n%s", err, clip(r.Stdout))
		}
		plans = []plan{one}
	}
	for _, p := range plans {
		cmds = append(cmds, p.Commands...)
	}
	r, err = Run(bin, dir, []string{"check", "repo", "-o", "json"}, false, hangGuard)
	if err != nil || r.ExitCode > 1 {
		t.Fatalf("check: exit %d, %v\n%s", r.ExitCode, err, r.Stderr)
	}
	var report struct {
		Findings []struct {
			Fix *struct {
				Edits []struct{ Format, Text string }
			}
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &report); err != nil {
		t.Fatal(err)
	}
	for _, f := range report.Findings {
		if f.Fix == nil {
			continue
		}
		for _, e := range f.Fix.Edits {
			if e.Format == "shell" {
				cmds = append(cmds, strings.Split(strings.TrimSpace(e.Text), "\n")...)
			}
		}
	}
	named := 0
	for _, cmd := range cmds {
		if strings.Contains(cmd, Substituted) {
			named++
		}
	}
	if named < 4 {
		t.Fatalf("only %d of the %d printed commands name the hostile objects:\n%s", named, len(cmds), strings.Join(cmds, "\n"))
	}
	stubs := ""
	for _, tool := range []string{"kubectl", "helm", "eksctl", "aws", "terraform"} {
		stubs += tool + `() { printf '<%s>' "$@"; echo; }; `
	}
	run := t.TempDir()
	for _, cmd := range cmds {
		if out, err := exec.Command("sh", "-n", "-c", cmd).CombinedOutput(); err != nil {
			t.Errorf("not a shell command: %s\n%s", cmd, out)
			continue
		}
		sh := exec.Command("sh", "-c", stubs+cmd)
		sh.Dir = run
		out, err := sh.CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", cmd, err, out)
		}
		// Each argument that names a hostile object reaches the tool whole.
		if strings.Contains(cmd, Substituted) && !strings.Contains(string(out), "$(touch "+Substituted+")`touch "+Substituted+"`;touch "+Substituted) {
			t.Errorf("%s: the tool did not receive the name as written:\n%s", cmd, out)
		}
	}
	for _, d := range []string{run, dir, filepath.Join(dir, "repo")} {
		if _, err := os.Stat(filepath.Join(d, Substituted)); err == nil {
			t.Errorf("running the printed commands ran what a name holds (%s created)", filepath.Join(d, Substituted))
		}
	}
	t.Logf("%d commands, %d naming the hostile objects", len(cmds), named)
}
