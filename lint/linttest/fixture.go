package linttest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/source"
	"github.com/eksdoctor/eksdoctor/source/live"
)

// A Fixture is a txtar archive: the files of a configuration and, in its
// comment, prose and directives, one per line. Every family of checks, the
// check examples the docs show and the live fixtures use this one grammar:
//
//	want CHECK SEVERITY OBJECT  a finding; the findings of the checks under test
//	                            are exactly the wanted ones
//	silent CHECK                CHECK reports nothing
//	fix CHECK                   CHECK's fixes, applied to the files, remove its
//	                            findings and cause no new one
//	twin CHECK SEVERITY OBJECT  a finding the fixed twin still has; files named
//	                            fixed/PATH replace PATH in the twin, whose
//	                            findings of the checks under test are exactly
//	                            these
//	example FILE                the file the check's documentation shows, with
//	                            fixed/FILE as its corrected form
//	mentions TEXT               a wanted finding's summary or detail has TEXT
//	has CHECK TEXT              a finding of CHECK mentions TEXT (summary,
//	                            detail or fix)
//	lacks CHECK TEXT            no finding of CHECK mentions TEXT
//	at FILE:LINE                a wanted finding points at FILE:LINE
//	fixtext TEXT                an edit of a wanted finding's fix has TEXT
//	format FORMAT               every edit of the wanted findings' fixes is in
//	                            FORMAT (hcl, values, yaml, shell)
//	strict                      no error beyond the wanted findings, in the
//	                            configuration and in its fixed twin
//
// A fixture whose comment says `live` (or sets context, now, namespace or
// skipped) is a running cluster: its cluster.yaml holds the objects as the
// API server returns them, read through a snapshot exactly as `eksdoctor
// check snapshot.json` reads one; an optional read.yaml holds the snapshot's
// context, now, namespace and skipped fields, which the comment can also set:
//
//	context NAME               the kubeconfig context (default "test")
//	now TIME                   when the cluster was read (RFC 3339)
//	namespace NS               the read was restricted to a namespace
//	skipped RESOURCE: WHY      a resource that could not be read
//
// Directives that name a check name a registered one; every other line is
// prose.
type Fixture struct {
	Name    string
	Comment string
	// Broken is the configuration; Twin is it with the fixed/ files in place,
	// nil when the fixture has none.
	Broken, Twin *txtar.Archive
	Wants        []string
	TwinWants    []string
	Fixes        []string
	Silent       []string
	Example      string
	Strict       bool
	Live         bool
	snapshot     map[string]any
	checks       []check
}

var atLine = regexp.MustCompile(`^\S+:\d+$`)

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

// check is a directive that asserts something of the findings.
type check struct{ directive, id, text string }

// ReadFixtures reads every fixture of a directory, in name order.
func ReadFixtures(t testing.TB, dir string) []*Fixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in %s (%v)", dir, err)
	}
	sort.Strings(paths)
	var out []*Fixture
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fx, err := ParseFixture(strings.TrimSuffix(filepath.Base(p), ".txtar"), data)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out = append(out, fx)
	}
	return out
}

// ParseFixture reads a fixture.
func ParseFixture(name string, data []byte) (*Fixture, error) {
	a := txtar.Parse(data)
	fx := &Fixture{Name: name, Comment: string(a.Comment), Broken: &txtar.Archive{},
		snapshot: map[string]any{"kind": live.SnapshotKind, "version": live.SnapshotVersion, "context": "test", "server": "https://test", "skipped": []any{}}}
	for _, line := range strings.Split(string(a.Comment), "\n") {
		word, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		fields := strings.Fields(rest)
		// Directives name registered checks, so prose that happens to start
		// with a directive's word stays prose.
		_, named := lint.Lookup(firstField(rest))
		switch {
		case (word == "want" || word == "twin") && named && len(fields) >= 3:
			line := fields[0] + " " + fields[1] + " " + strings.Join(fields[2:], " ")
			if word == "want" {
				fx.Wants = append(fx.Wants, line)
			} else {
				fx.TwinWants = append(fx.TwinWants, line)
			}
		case word == "fix" && named && len(fields) == 1:
			fx.Fixes = append(fx.Fixes, fields[0])
		case word == "silent" && named && len(fields) == 1:
			fx.Silent = append(fx.Silent, fields[0])
		case (word == "has" || word == "lacks") && named && len(fields) >= 2:
			id, text, _ := strings.Cut(rest, " ")
			fx.checks = append(fx.checks, check{directive: word, id: id, text: text})
		case word == "example" && len(fields) == 1:
			fx.Example = fields[0]
		case word == "strict" && rest == "":
			fx.Strict = true
		case word == "live" && rest == "":
			fx.Live = true
		case (word == "context" || word == "now" || word == "namespace") && len(fields) == 1:
			fx.Live = true
			fx.snapshot[word] = rest
		case word == "skipped" && strings.Contains(rest, ": "):
			fx.Live = true
			res, why, _ := strings.Cut(rest, ": ")
			fx.snapshot["skipped"] = append(fx.snapshot["skipped"].([]any), map[string]any{"resource": res, "reason": why})
		case word == "at" && atLine.MatchString(rest),
			word == "format" && slices.Contains([]string{lint.FormatYAML, lint.FormatHCL, lint.FormatValues, lint.FormatShell}, rest),
			(word == "mentions" || word == "fixtext") && rest != "":
			fx.checks = append(fx.checks, check{directive: word, text: rest})
		}
	}
	fixed := map[string][]byte{}
	for _, f := range a.Files {
		if name, ok := strings.CutPrefix(f.Name, "fixed/"); ok {
			fixed[name] = f.Data
			continue
		}
		fx.Broken.Files = append(fx.Broken.Files, f)
	}
	if fx.Example != "" && !slices.ContainsFunc(fx.Broken.Files, func(f txtar.File) bool { return f.Name == fx.Example }) {
		return nil, fmt.Errorf("example %s is not a file of the fixture", fx.Example)
	}
	if len(fixed) > 0 {
		fx.Twin = &txtar.Archive{}
		for _, f := range fx.Broken.Files {
			if data, ok := fixed[f.Name]; ok {
				f.Data = data
				delete(fixed, f.Name)
			}
			fx.Twin.Files = append(fx.Twin.Files, f)
		}
		var extra []string
		for name := range fixed {
			extra = append(extra, name)
		}
		sort.Strings(extra)
		for _, name := range extra {
			fx.Twin.Files = append(fx.Twin.Files, txtar.File{Name: name, Data: fixed[name]})
		}
	}
	if fx.Live && fx.Twin == nil && len(fx.Fixes) > 0 {
		return nil, fmt.Errorf("a live fixture's fixes are commands: fix cannot apply them")
	}
	return fx, nil
}

// File returns a file of the broken configuration, or of the fixed twin.
func (fx *Fixture) File(name string, fixed bool) ([]byte, bool) {
	a := fx.Broken
	if fixed {
		a = fx.Twin
	}
	if a == nil {
		return nil, false
	}
	for _, f := range a.Files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

// Findings loads the fixture's configuration (or its twin) and runs every
// check; dir is where its files were written ("" for a live fixture).
func (fx *Fixture) Findings(t testing.TB, twin bool) ([]lint.Finding, string) {
	t.Helper()
	a := fx.Broken
	if twin {
		a = fx.Twin
	}
	if fx.Live {
		m := fx.liveModel(t, a)
		return lint.Run(m, sim.New(m), lint.Checks()), ""
	}
	dir := ExtractArchive(t, a)
	return Run(t, dir), dir
}

// LiveModel is the model of a live fixture's cluster.
func (fx *Fixture) LiveModel(t testing.TB) *cluster.Model {
	t.Helper()
	return fx.liveModel(t, fx.Broken)
}

// liveModel reads the objects of cluster.yaml as a snapshot.
func (fx *Fixture) liveModel(t testing.TB, a *txtar.Archive) *cluster.Model {
	t.Helper()
	doc := map[string]any{}
	for k, v := range fx.snapshot {
		doc[k] = v
	}
	var objects []any
	for _, f := range a.Files {
		if f.Name == "read.yaml" {
			// What the read saw, as the snapshot records it: context, now,
			// namespace, skipped.
			var read map[string]any
			if err := yaml.Unmarshal(f.Data, &read); err != nil {
				t.Fatalf("%s: read.yaml: %v", fx.Name, err)
			}
			for k, v := range read {
				doc[k] = v
			}
			continue
		}
		if f.Name != "cluster.yaml" {
			t.Fatalf("%s: a live fixture holds cluster.yaml and read.yaml only, not %s", fx.Name, f.Name)
		}
		for i, d := range strings.Split("\n"+string(f.Data), "\n---\n") {
			if strings.TrimSpace(d) == "" {
				continue
			}
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(d), &obj); err != nil {
				t.Fatalf("%s: document %d: %v", fx.Name, i, err)
			}
			if obj != nil {
				objects = append(objects, obj)
			}
		}
	}
	doc["objects"] = objects
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	m, err := live.ReadSnapshot("snapshot.json", data)
	if err != nil {
		t.Fatal(err)
	}
	return source.Build(m)
}

// Line renders a finding as the directives name it: "check severity object".
func Line(f lint.Finding) string {
	return f.Check + " " + f.Severity.String() + " " + f.Object.String()
}

// Lines renders the findings of the given checks (all when ids is nil), sorted.
func Lines(fs []lint.Finding, ids []string) []string {
	out := []string{}
	for _, f := range fs {
		if ids == nil || slices.Contains(ids, f.Check) {
			out = append(out, Line(f))
		}
	}
	sort.Strings(out)
	return out
}

// Mentions is the text of a finding the mention directives search: summary,
// detail, and the fix's summary and edits.
func Mentions(f lint.Finding) string {
	s := f.Summary + "\n" + f.Detail
	if f.Fix != nil {
		s += "\n" + f.Fix.Summary
		for _, e := range f.Fix.Edits {
			s += "\n" + e.Text
		}
	}
	return s
}

// Check runs the fixture with the checks under test (ids; every check when
// nil) and asserts every directive. It returns the findings of the broken
// configuration.
func (fx *Fixture) Check(t *testing.T, ids []string) []lint.Finding {
	t.Helper()
	got, dir := fx.Findings(t, false)
	want := append([]string{}, fx.Wants...)
	sort.Strings(want)
	if g := Lines(got, ids); !slices.Equal(g, want) {
		t.Fatalf("findings:\n  got  %q\n  want %q\nall findings:%s", g, want, Describe(got))
	}
	wanted := make([]lint.Finding, 0, len(got))
	for _, f := range got {
		if slices.Contains(fx.Wants, Line(f)) {
			wanted = append(wanted, f)
		}
	}
	if fx.Strict {
		for _, f := range AtLeast(got, lint.Error) {
			if !slices.Contains(fx.Wants, Line(f)) {
				t.Errorf("an error the fixture does not want: %s %s %s", f.Check, f.Object, f.Summary)
			}
		}
	}
	for _, id := range fx.Silent {
		if fs := Only(got, id); len(fs) > 0 {
			t.Errorf("%s must be silent here:%s", id, Describe(fs))
		}
	}
	for _, c := range fx.checks {
		fx.assert(t, c, got, wanted)
	}
	if fx.Live {
		// A running cluster is not before apply and has no bootstrap phase to
		// wait for: its findings speak of what is there.
		for _, f := range got {
			for _, static := range []string{"before apply", "bootstrap phase"} {
				if strings.Contains(Mentions(f), static) {
					t.Errorf("a %s finding about a running cluster says %q:\n%s", f.Check, static, Mentions(f))
				}
			}
		}
	}
	// Each check's fixes apply to the files as the fixes before left them,
	// with the lines those files now have.
	current := got
	for _, id := range fx.Fixes {
		if len(Only(current, id)) == 0 && len(Only(got, id)) > 0 {
			continue // an earlier check's fixes fixed these too
		}
		after := ApplyFixes(t, dir, id, current)
		if left := Lines(after, []string{id}); len(left) > 0 {
			t.Errorf("after the fixes, %s still reports %v", id, left)
		}
		current = after
	}
	if fx.Twin != nil {
		twin, _ := fx.Findings(t, true)
		tw := append([]string{}, fx.TwinWants...)
		sort.Strings(tw)
		if g := Lines(twin, ids); !slices.Equal(g, tw) {
			t.Errorf("findings of the fixed twin:\n  got  %q\n  want %q\nall findings:%s", g, tw, Describe(twin))
		}
		if fx.Strict {
			for _, f := range AtLeast(twin, lint.Error) {
				if !slices.Contains(fx.TwinWants, Line(f)) {
					t.Errorf("the fixed twin reports an error: %s %s %s", f.Check, f.Object, f.Summary)
				}
			}
		}
	}
	return got
}

func (fx *Fixture) assert(t *testing.T, c check, all, wanted []lint.Finding) {
	t.Helper()
	some := func(fs []lint.Finding, ok func(lint.Finding) bool) bool { return slices.ContainsFunc(fs, ok) }
	switch c.directive {
	case "mentions":
		if !some(wanted, func(f lint.Finding) bool { return strings.Contains(f.Summary+"\n"+f.Detail, c.text) }) {
			t.Errorf("no wanted finding mentions %q:%s", c.text, Describe(wanted))
		}
	case "has":
		if !some(all, func(f lint.Finding) bool { return f.Check == c.id && strings.Contains(Mentions(f), c.text) }) {
			t.Errorf("no %s finding mentions %q:%s", c.id, c.text, Describe(all))
		}
	case "lacks":
		for _, f := range all {
			if f.Check == c.id && strings.Contains(Mentions(f), c.text) {
				t.Errorf("a %s finding mentions %q:\n%s", c.id, c.text, Mentions(f))
			}
		}
	case "at":
		if !some(wanted, func(f lint.Finding) bool { return f.Origin.String() == c.text }) {
			t.Errorf("no wanted finding at %s:%s", c.text, Describe(wanted))
		}
	case "fixtext":
		if !some(wanted, func(f lint.Finding) bool {
			return f.Fix != nil && strings.Contains(Mentions(lint.Finding{Fix: f.Fix}), c.text)
		}) {
			t.Errorf("no fix of a wanted finding contains %q:%s", c.text, Describe(wanted))
		}
	case "format":
		for _, f := range wanted {
			if f.Fix == nil {
				continue
			}
			for _, e := range f.Fix.Edits {
				if e.Format != c.text {
					t.Errorf("%s fix edit %s:%d is %s, want %s", f.Check, e.File, e.Line, e.Format, c.text)
				}
			}
		}
	}
}

// RunFixtures checks every fixture of a directory as a subtest.
func RunFixtures(t *testing.T, dir string, ids []string) {
	t.Helper()
	for _, fx := range ReadFixtures(t, dir) {
		t.Run(fx.Name, func(t *testing.T) { fx.Check(t, ids) })
	}
}
