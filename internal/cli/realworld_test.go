package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/internal/shared"
	"github.com/eksdoctor/eksdoctor/source"
)

// The real-world corpus (shared/realworld: configurations copied from public
// repositories, SOURCES.md names each) is eksdoctor's precision yardstick. For
// every configuration, testdata/realworld/<folder>.expect records what eksdoctor
// reads there and the triage of every error and warning it reports:
//
//	read <cluster>: <workloads> workloads, <node groups> node groups, ...
//	TP <severity> <check> <object> <file>:<line> -- <why it is right>
//	FP <severity> <check> <object> <file>:<line> -- <why it is wrong>
//
// The test fails on any difference, in either direction. -update-realworld
// rewrites the files: read lines and the keys of new findings (marked ??, which
// fail until triaged); the triage of findings still reported is kept.
var updateRealWorld = flag.Bool("update-realworld", false, "rewrite testdata/realworld/*.expect from what eksdoctor reports")

const realWorldExpect = "../../testdata/realworld"

// realWorldReport is what eksdoctor says about one configuration.
type realWorldReport struct {
	reads    []string
	findings []string // "<severity> <check> <object> <file>:<line>", sorted
	invalid  []string // invalid-input findings, any severity
}

func runRealWorld(t *testing.T, dir string) realWorldReport {
	t.Helper()
	var rep realWorldReport
	cs, err := source.Load([]string{dir}, source.Options{})
	if err != nil {
		t.Fatalf("load %s: %v", dir, err)
	}
	for _, c := range cs {
		m := c.Model
		name, err := filepath.Rel(dir, c.Name)
		if err != nil || strings.HasPrefix(name, "..") {
			name = c.Name
		}
		rep.reads = append(rep.reads, fmt.Sprintf("read %s: %d workloads, %d node groups, %d Fargate profiles, %d NodePools, %d Helm releases, %d add-ons",
			filepath.ToSlash(name), len(m.Workloads), len(m.NodeGroups), len(m.FargateProfiles), len(m.NodePools), len(m.HelmReleases), len(m.Addons)))
	}
	sort.Strings(rep.reads)
	stdout, stderr, code := runCLI(t, "check", dir, "-o", "json", "--fail-on", "never")
	if code != 0 {
		t.Fatalf("eksdoctor check %s: exit %d\n%s", dir, code, stderr)
	}
	var out struct {
		Findings []struct {
			Check    string `json:"check"`
			Severity string `json:"severity"`
			Object   struct{ Kind, Namespace, Name string }
			Origin   struct {
				File string `json:"file"`
				Line int    `json:"line"`
			} `json:"origin"`
			Summary string `json:"summary"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("eksdoctor check %s -o json: %v", dir, err)
	}
	for _, f := range out.Findings {
		file, err := filepath.Rel(dir, f.Origin.File)
		if err != nil {
			file = f.Origin.File
		}
		object := strings.Join(nonEmpty(f.Object.Kind, f.Object.Namespace, f.Object.Name), "/")
		if object == "" {
			object = "-"
		}
		key := fmt.Sprintf("%s %s %s %s:%d", f.Severity, f.Check, object, filepath.ToSlash(file), f.Origin.Line)
		if f.Check == "invalid-input" {
			rep.invalid = append(rep.invalid, key+": "+f.Summary)
		}
		if f.Severity == "error" || f.Severity == "warning" {
			rep.findings = append(rep.findings, key)
		}
	}
	sort.Strings(rep.findings)
	return rep
}

func nonEmpty(parts ...string) []string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// realWorldTriage is an expectation file.
type realWorldTriage struct {
	reads   []string
	verdict map[string]string // finding key → "TP" or "FP"
	reason  map[string]string
}

var triageLine = regexp.MustCompile(`^(TP|FP|\?\?) (\S+ \S+ \S+ \S+) -- (.*)$`)

func readTriage(t *testing.T, path string) (realWorldTriage, bool) {
	t.Helper()
	tr := realWorldTriage{verdict: map[string]string{}, reason: map[string]string{}}
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return tr, false
	}
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(data), "\n") {
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "read "):
			tr.reads = append(tr.reads, line)
		default:
			m := triageLine.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("%s:%d: not a triage line: %q", path, i+1, line)
			}
			tr.verdict[m[2]], tr.reason[m[2]] = m[1], strings.TrimSpace(m[3])
		}
	}
	sort.Strings(tr.reads)
	return tr, true
}

func writeTriage(t *testing.T, path, folder string, rep realWorldReport, old realWorldTriage) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "# %s (shared/realworld, see its SOURCES.md)\n", folder)
	b.WriteString("# What eksdoctor reads there, and every error and warning it reports: true (TP) or false (FP), and why.\n")
	for _, r := range rep.reads {
		b.WriteString(r + "\n")
	}
	for _, k := range rep.findings {
		v, why := old.verdict[k], old.reason[k]
		if v == "" {
			v, why = "??", "not triaged"
		}
		fmt.Fprintf(&b, "%s %s -- %s\n", v, k, why)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// realWorldTotals are the numbers the README's table shows.
type realWorldTotals struct{ configs, reported, tp, fp int }

func TestRealWorld(t *testing.T) {
	t.Parallel()
	root := shared.Dir(t, "realworld")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var folders []string
	for _, e := range entries {
		if e.IsDir() {
			folders = append(folders, e.Name())
		}
	}
	if len(folders) < 40 {
		t.Fatalf("found %d configurations in %s, want the whole corpus (40)", len(folders), root)
	}
	var tot realWorldTotals
	expected := map[string]bool{}
	for _, folder := range folders {
		expected[folder+".expect"] = true
		// Not in parallel: each adds to the totals checked after the loop.
		t.Run(folder, func(t *testing.T) {
			rep := runRealWorld(t, filepath.Join(root, folder))
			path := filepath.Join(realWorldExpect, folder+".expect")
			tr, ok := readTriage(t, path)
			if *updateRealWorld {
				writeTriage(t, path, folder, rep, tr)
				tr, ok = readTriage(t, path)
			}
			if !ok {
				t.Fatalf("no triage in %s (run with -update-realworld, then triage every line)", path)
			}
			// Files that Terraform, kubectl or Helm accept are never invalid input.
			for _, f := range rep.invalid {
				if tr.verdict[strings.SplitN(f, ": ", 2)[0]] != "TP" {
					t.Errorf("invalid-input not triaged as true: %s", f)
				}
			}
			if diff := cmp.Diff(tr.reads, rep.reads); diff != "" {
				t.Errorf("what eksdoctor reads changed (-%s +now):\n%s", path, diff)
			}
			var triaged []string
			for k, v := range tr.verdict {
				triaged = append(triaged, k)
				switch {
				case v == "??":
					t.Errorf("%s: not triaged: %s", path, k)
				case tr.reason[k] == "":
					t.Errorf("%s: %s has no reason", path, k)
				}
			}
			sort.Strings(triaged)
			if diff := cmp.Diff(triaged, rep.findings); diff != "" {
				t.Errorf("errors and warnings differ from the triage (-%s +reported):\n%s", path, diff)
			}
			tot.configs++
			tot.reported += len(rep.findings)
			for _, k := range rep.findings {
				switch tr.verdict[k] {
				case "TP":
					tot.tp++
				case "FP":
					tot.fp++
				}
			}
		})
	}
	// No expectation is left for a configuration that is gone.
	files, _ := filepath.Glob(filepath.Join(realWorldExpect, "*.expect"))
	for _, f := range files {
		if !expected[filepath.Base(f)] {
			t.Errorf("%s has no configuration in %s", f, root)
		}
	}
	if t.Failed() {
		return
	}
	// The README shows these numbers.
	row := fmt.Sprintf("| %d | %d | %d | %d |", tot.configs, tot.reported, tot.tp, tot.fp)
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), row) {
		t.Errorf("README.md lacks the real-world table row %q", row)
	}
	t.Logf("real-world corpus: %s", row)
}
