package lint

import (
	"fmt"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/internal/parallel"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
)

// Severity orders findings; the zero value is invalid on purpose.
type Severity int

const (
	_ Severity = iota
	Info
	Warning
	Error
)

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return "invalid"
}

// ParseSeverity reads error, warning or info.
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(s) {
	case "error":
		return Error, nil
	case "warning":
		return Warning, nil
	case "info":
		return Info, nil
	}
	return 0, fmt.Errorf("unknown severity %q (want error, warning or info)", s)
}

// Doc documents a check; docs/checks/ is generated from it and from the
// check's example (ExampleOf).
type Doc struct {
	// What the check reports, why it matters, how to fix it.
	What string
	Why  string
	Fix  string
	// Differences are where eksdoctor deliberately answers otherwise than
	// the tool it models, and why ("" when none).
	Differences string
}

// Check is one rule.
type Check struct {
	ID       string
	Title    string
	Family   string // F1..F5, or "all" / "input"
	Severity Severity
	// Live marks checks that only have something to say about a running cluster.
	Live bool
	Doc  Doc
	Run  func(*Pass)
	// Requires lists the shared facts the check reads (resultOf).
	Requires []*Fact
	// Supersedes lists the checks whose findings this check's findings replace
	// when they explain the same cause (see arbitrate).
	Supersedes []*Check
}

// Finding is one problem found.
type Finding struct {
	// Cluster names the cluster the finding is about when a run analyses several
	// (a Terraform root, an eksctl or snapshot file); empty otherwise.
	Cluster  string
	Check    string
	Severity Severity
	Object   cluster.ObjectRef
	Origin   cluster.Origin
	Summary  string
	Detail   string
	Fix      *Fix
	// Suppressed says what silenced the finding; nil for a finding that is
	// reported.
	Suppressed *Suppressed

	// causes name the root causes the finding explains, for arbitrate.
	causes []string
}

// Suppressed is what silenced a finding.
type Suppressed struct {
	// By is "annotation" (eksdoctor.io/ignore on the object), "comment" (an
	// ignore comment in the file) or "baseline" (the finding is in the
	// baseline given).
	By string
	// Origin is the comment, or the annotated object.
	Origin cluster.Origin
	Reason string
}

// Fix is a change the user can paste.
type Fix struct {
	Summary string
	Edits   []Edit
}

// Edit formats (see cluster.Edit).
const (
	FormatYAML   = cluster.FormatYAML
	FormatHCL    = cluster.FormatHCL
	FormatValues = cluster.FormatValues
	FormatShell  = cluster.FormatShell
)

// Edit is one change of a fix, written by the source package of its format.
type Edit = cluster.Edit

// Pass is what a check's Run receives.
type Pass struct {
	Model *cluster.Model
	Sim   *sim.Simulator

	check    *Check
	findings []Finding
	facts    *factStore
}

// Report records a finding for the running check; the check's ID and default
// severity are filled in when the finding leaves them empty.
func (p *Pass) Report(f Finding) {
	f.Check = p.check.ID
	if f.Severity == 0 {
		f.Severity = p.check.Severity
	}
	p.findings = append(p.findings, f)
}

// each runs fn for 0..n-1 side by side, each with a pass of its own, and
// records their findings in the order of i: a check over thousands of
// workloads words their findings in parallel and reports them as a loop would.
func (p *Pass) each(n int, fn func(q *Pass, i int)) {
	found := make([][]Finding, n)
	parallel.Each(n, func(i int) {
		q := &Pass{Model: p.Model, Sim: p.Sim, check: p.check, facts: p.facts}
		fn(q, i)
		found[i] = q.findings
	})
	for _, fs := range found {
		p.findings = append(p.findings, fs...)
	}
}

// beforeApply is " before apply" for inputs, "" for a running cluster: what
// cannot be verified there is not waiting for an apply.
func (p *Pass) beforeApply() string {
	if p.Model.Live != nil {
		return ""
	}
	return " before apply"
}

// Run runs checks over a model and returns their findings, sorted, without
// the suppressed ones.
func Run(m *cluster.Model, s *sim.Simulator, checks []*Check) []Finding {
	active, _ := RunAll(m, s, checks)
	return active
}

// RunAll runs checks over a model and returns their findings, sorted: those
// to report, and those an ignore annotation or comment silenced.
func RunAll(m *cluster.Model, s *sim.Simulator, checks []*Check) (active, suppressed []Finding) {
	objects := map[cluster.ObjectRef]*cluster.Object{}
	for _, o := range m.Objects {
		if _, ok := objects[o.Ref()]; !ok {
			objects[o.Ref()] = o
		}
	}
	lookup := func(ref cluster.ObjectRef) *cluster.Object { return objects[ref] }
	if _, err := factOrder(checks); err != nil {
		// A programming error, as reading an undeclared fact is: computing
		// such facts would wait on each other forever.
		panic(err.Error())
	}
	facts := newFactStore(m, s)
	// Most checks ask where workloads run; answer for all of them at once, in
	// parallel, before the checks run one after the other.
	// A running cluster's workloads are judged by their pods, which are
	// placed by scheduling class when needed: only configured ones are placed
	// ahead.
	ahead := m.Workloads
	if m.Live != nil {
		ahead = nil
		for _, w := range m.Workloads {
			if w.Object.Manager != "cluster" {
				ahead = append(ahead, w)
			}
		}
	}
	s.Prepare(ahead, cluster.Steady)
	// Checks are pure and independent: run them side by side, then put their
	// findings in one deterministic order.
	results := make([][]Finding, len(checks))
	parallel.Each(len(checks), func(i int) {
		p := &Pass{Model: m, Sim: s, check: checks[i], facts: facts}
		checks[i].Run(p)
		results[i] = p.findings
	})
	for _, r := range results {
		for _, f := range r {
			f.Suppressed = suppressedBy(lookup(f.Object), m.Suppressions, f)
			if f.Suppressed != nil {
				suppressed = append(suppressed, f)
			} else {
				active = append(active, f)
			}
		}
	}
	active = arbitrate(active, checks)
	conditional(m, active)
	conditional(m, suppressed)
	Sort(active)
	Sort(suppressed)
	return dedupe(active), dedupe(suppressed)
}

// suppressedBy is what silences a finding, if anything: the ignore
// annotation of its object, else an ignore comment over its origin.
func suppressedBy(o *cluster.Object, ss []cluster.Suppression, f Finding) *Suppressed {
	if o != nil && o.Ignores(f.Check) {
		return &Suppressed{By: "annotation", Origin: o.Origin, Reason: cluster.IgnoreAnnotation + ": " + o.Annotations[cluster.IgnoreAnnotation]}
	}
	for _, s := range ss {
		if s.Covers(f.Check, f.Origin) {
			return &Suppressed{By: "comment", Origin: s.Origin, Reason: s.Reason}
		}
	}
	return nil
}

// conditional downgrades to info what is found about something that exists only
// if a count or for_each not known before apply says so: it may never be created.
func conditional(m *cluster.Model, fs []Finding) {
	cond := map[cluster.ObjectRef]string{}
	for _, o := range m.Objects {
		if o.Conditional != "" {
			cond[o.Ref()] = o.Conditional
		}
	}
	for _, fp := range m.FargateProfiles {
		if fp.Conditional != "" {
			cond[cluster.ObjectRef{Kind: "FargateProfile", Name: fp.Name}] = fp.Conditional
		}
	}
	for _, r := range m.HelmReleases {
		if r.Conditional != "" {
			cond[cluster.ObjectRef{Kind: "HelmRelease", Namespace: r.Namespace, Name: r.Name}] = r.Conditional
		}
	}
	for _, a := range m.Addons {
		if a.Conditional != "" {
			cond[cluster.ObjectRef{Kind: "Addon", Name: a.Name}] = a.Conditional
		}
	}
	// What is rendered from values not known before apply may differ in
	// whatever a check about its content looks at.
	partial := map[cluster.ObjectRef]string{}
	for _, o := range m.Objects {
		if o.Unknown != "" {
			partial[o.Ref()] = o.Unknown
		}
	}
	if len(cond) == 0 && len(partial) == 0 {
		return
	}
	for i := range fs {
		if fs[i].Severity == Info {
			continue
		}
		if c, ok := cond[fs[i].Object]; ok {
			fs[i].Severity = Info
			fs[i].Detail = strings.TrimSpace(fs[i].Detail + fmt.Sprintf("\n%s exists only if %s, which is not known before apply; this could not be verified.", fs[i].Object, c))
			continue
		}
		if u, ok := partial[fs[i].Object]; ok && contentCheck(fs[i].Check) {
			fs[i].Severity = Info
			fs[i].Detail = strings.TrimSpace(fs[i].Detail + fmt.Sprintf("\n%s is rendered from %s, which is not known before apply; this could not be verified.", fs[i].Object, u))
		}
	}
}

// contentCheck reports whether a check judges an object by its content (its pod
// template, its spec) rather than by how it is created and deleted.
func contentCheck(id string) bool {
	c, ok := Lookup(id)
	if !ok {
		return false
	}
	switch c.Family {
	case "F1", "F2", "F3":
		return true
	}
	return id == karpenterSchema.ID
}

// Sort orders findings by file, line, check, object and summary.
func Sort(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Cluster != b.Cluster {
			return a.Cluster < b.Cluster
		}
		if a.Origin.File != b.Origin.File {
			return a.Origin.File < b.Origin.File
		}
		if a.Origin.Line != b.Origin.Line {
			return a.Origin.Line < b.Origin.Line
		}
		if a.Check != b.Check {
			return a.Check < b.Check
		}
		if a.Object != b.Object {
			return a.Object.Less(b.Object)
		}
		return a.Summary < b.Summary
	})
}

func dedupe(fs []Finding) []Finding {
	out := fs[:0]
	for i, f := range fs {
		if i > 0 {
			p := fs[i-1]
			if p.Check == f.Check && p.Object == f.Object && p.Origin == f.Origin && p.Summary == f.Summary {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// Count tallies findings by severity.
func Count(fs []Finding) map[Severity]int {
	c := map[Severity]int{}
	for _, f := range fs {
		c[f.Severity]++
	}
	return c
}
