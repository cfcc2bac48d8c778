package recall

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/eksdoctor/eksdoctor/internal/cli"
	"github.com/eksdoctor/eksdoctor/lint"
)

// A case is a txtar archive: the files of the configuration, and in its comment
// prose and these lines:
//
//	link URL                   where the user reported it (one or more)
//	family F1 … F8             the failure family
//	source WORD…               what the configuration is written with
//	                           (terraform, eksctl, helm, gitops, manifests, snapshot)
//	karpenter VERSION          the Karpenter API the case uses (v1alpha5,
//	                           v1beta1, v1, auto, none)
//	symptom TEXT               what the user saw
//	want CHECK SEVERITY OBJECT a finding eksdoctor must give, at SEVERITY
//	                           (warning or error) or above; OBJECT as findings
//	                           name it (Kind/namespace/name), or file:PATH for a
//	                           finding about a file
//	also CHECK OBJECT          another true error or warning the configuration
//	                           has (allowed, not required)
//	args ARG…                  more arguments for eksdoctor check
//
// A case is found when every want is reported; an error or warning that is
// neither wanted nor allowed is false.
type recallCase struct {
	name, link, family, source, karpenter, symptom string
	wants, also                                    []expect
	args                                           []string
	archive                                        *txtar.Archive
}

type expect struct {
	check  string
	sev    lint.Severity
	object string
}

var (
	update   = flag.Bool("update-recall", false, "rewrite the recall line of the README")
	minFound = 0.95
)

func readCases(t *testing.T) []recallCase {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "recall", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no cases in testdata/recall (%v)", err)
	}
	sort.Strings(paths)
	var out []recallCase
	for _, p := range paths {
		a, err := txtar.ParseFile(p)
		if err != nil {
			t.Fatal(err)
		}
		c := recallCase{name: strings.TrimSuffix(filepath.Base(p), ".txtar"), archive: a}
		for n, line := range strings.Split(string(a.Comment), "\n") {
			word, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
			rest = strings.TrimSpace(rest)
			f := strings.Fields(rest)
			switch word {
			case "link":
				c.link = rest
			case "family":
				c.family = rest
			case "source":
				c.source = rest
			case "karpenter":
				c.karpenter = rest
			case "symptom":
				c.symptom = rest
			case "args":
				c.args = f
			case "want":
				if len(f) != 3 {
					t.Fatalf("%s:%d: want CHECK SEVERITY OBJECT", p, n+1)
				}
				sev, err := lint.ParseSeverity(f[1])
				if err != nil || sev < lint.Warning {
					t.Fatalf("%s:%d: severity %q: want warning or error", p, n+1, f[1])
				}
				if _, ok := lint.Lookup(f[0]); !ok {
					t.Fatalf("%s:%d: no check %q", p, n+1, f[0])
				}
				c.wants = append(c.wants, expect{f[0], sev, f[2]})
			case "also":
				if len(f) != 2 {
					t.Fatalf("%s:%d: also CHECK OBJECT", p, n+1)
				}
				c.also = append(c.also, expect{check: f[0], object: f[1]})
			}
		}
		if c.link == "" || c.family == "" || c.symptom == "" || len(c.wants) == 0 {
			t.Fatalf("%s: a case names its link, family, symptom and at least one wanted finding", p)
		}
		out = append(out, c)
	}
	return out
}

type finding struct {
	Check    string `json:"check"`
	Severity string `json:"severity"`
	Object   struct {
		Kind, Namespace, Name string
	} `json:"object"`
	Origin struct {
		File string `json:"file"`
	} `json:"origin"`
	Summary string `json:"summary"`
}

func (f finding) object() string {
	if f.Object.Kind == "" {
		return "file:" + filepath.ToSlash(f.Origin.File)
	}
	if f.Object.Namespace == "" {
		return f.Object.Kind + "/" + f.Object.Name
	}
	return f.Object.Kind + "/" + f.Object.Namespace + "/" + f.Object.Name
}

func (e expect) matches(f finding) bool {
	if f.Check != e.check || f.object() != e.object {
		return false
	}
	sev, _ := lint.ParseSeverity(f.Severity)
	return sev >= e.sev
}

// check runs eksdoctor check on a case's files, as a user would in their
// directory.
func check(t *testing.T, c recallCase) []finding {
	t.Helper()
	dir := t.TempDir()
	for _, f := range c.archive.Files {
		p := filepath.Join(dir, f.Name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	var out, errOut bytes.Buffer
	args := append([]string{"check", ".", "-o", "json", "--fail-on", "never"}, c.args...)
	env := cli.Env{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }, Getwd: func() (string, error) { return dir, nil }}
	if code := cli.Run(context.Background(), "eksdoctor", args, env); code != 0 {
		t.Fatalf("eksdoctor check: exit %d\n%s", code, errOut.String())
	}
	var r struct{ Findings []finding }
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	return r.Findings
}

// TestRecall runs every case: each wanted finding must be reported, and no
// error or warning that is neither wanted nor allowed; recall over the corpus
// must reach minFound.
func TestRecall(t *testing.T) {
	cases := readCases(t)
	type tally struct{ found, total int }
	by := map[string]*tally{}
	count := func(key string, found bool) {
		if by[key] == nil {
			by[key] = &tally{}
		}
		by[key].total++
		if found {
			by[key].found++
		}
	}
	var missed, falses []string
	for _, c := range cases {
		var found bool
		t.Run(c.name, func(t *testing.T) {
			fs := check(t, c)
			found = true
			for _, w := range c.wants {
				ok := false
				for _, f := range fs {
					ok = ok || w.matches(f)
				}
				if !ok {
					found = false
					t.Logf("missed: %s %s %s (%s)\n  reported: %s", w.check, w.sev, w.object, c.link, describe(fs))
				}
			}
			for _, f := range fs {
				sev, _ := lint.ParseSeverity(f.Severity)
				if sev < lint.Warning {
					continue
				}
				allowed := false
				for _, e := range append(append([]expect(nil), c.wants...), c.also...) {
					allowed = allowed || e.check == f.Check && e.object == f.object()
				}
				if !allowed {
					falses = append(falses, fmt.Sprintf("%s: %s %s %s: %s", c.name, f.Severity, f.Check, f.object(), f.Summary))
					t.Errorf("an error or warning the case does not hold: %s %s %s: %s", f.Severity, f.Check, f.object(), f.Summary)
				}
			}
		})
		if !found {
			missed = append(missed, c.name)
		}
		count("all", found)
		count(c.family, found)
		for _, s := range strings.Fields(c.source) {
			count("source "+s, found)
		}
		count("karpenter "+c.karpenter, found)
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-22s %3d of %3d\n", k, by[k].found, by[k].total)
	}
	t.Logf("recall on testdata/recall:\n%s  missed: %s", b.String(), strings.Join(missed, ", "))
	all := by["all"]
	line := fmt.Sprintf("Recall on the team's corpus (`testdata/recall`, %d reported failures): **%d of %d found (%.0f%%)**, %d false errors or warnings.", all.total, all.found, all.total, 100*float64(all.found)/float64(all.total), len(falses))
	readme := filepath.Join("..", "..", "README.md")
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`Recall on the team's corpus \(.*`)
	if *update {
		data = re.ReplaceAll(data, []byte(line))
		if err := os.WriteFile(readme, data, 0o644); err != nil {
			t.Fatal(err)
		}
	} else if !bytes.Contains(data, []byte(line)) {
		t.Errorf("README does not say %q (go test ./internal/recall -update-recall)", line)
	}
	if float64(all.found) < minFound*float64(all.total) {
		t.Errorf("recall %d of %d, under %.0f%%; missed: %s", all.found, all.total, 100*minFound, strings.Join(missed, ", "))
	}
}

func describe(fs []finding) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, fmt.Sprintf("%s %s %s", f.Severity, f.Check, f.object()))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, "; ")
}
