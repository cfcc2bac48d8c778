package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
)

// Options tune a report.
type Options struct {
	// Color enables ANSI colors (the CLI sets it on a terminal without NO_COLOR).
	Color bool
	// Suppressed are the findings an ignore annotation or comment silenced,
	// or that the baseline holds: counted in the summary, listed only with
	// ShowSuppressed.
	Suppressed     []lint.Finding
	ShowSuppressed bool
	// FailOn is the lowest severity that fails the run (JUnit marks those
	// findings failed); zero fails every finding.
	FailOn lint.Severity
	// Changes gives a finding's fix as changes of file lines (SARIF fixes);
	// nil, or nil for a finding, when it cannot be worked out.
	Changes func(lint.Finding) []TextChange
	// Root is the directory paths are relative to (SARIF's %SRCROOT%): an
	// absolute path under it is written relative to it.
	Root string
	// Group, when positive, writes findings of one cause about at least that
	// many objects as one entry (text, Markdown).
	Group int
	// Narrowed says, a line each, how the configuration and the command line
	// narrow what is reported ("checks disabled: ..."): the text report, the
	// Markdown summary and the GitHub log say it.
	Narrowed []string
}

// TextChange replaces lines StartLine..EndLine of File (1-based, included)
// with Text (whole lines, each ending in a line feed); EndLine = StartLine-1
// inserts before StartLine.
type TextChange struct {
	File               string
	StartLine, EndLine int
	Text               string
}

// TextOptions tune the text report.
type TextOptions = Options

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiBlue   = "\x1b[34m"
	ansiGreen  = "\x1b[32m"
)

type painter bool

func (p painter) paint(code, s string) string {
	if !p {
		return s
	}
	return code + s + ansiReset
}

func severityColor(s lint.Severity) string {
	switch s {
	case lint.Error:
		return ansiRed
	case lint.Warning:
		return ansiYellow
	}
	return ansiBlue
}

// Text writes findings grouped by object, in the order of their first finding;
// with Options.Group, findings of one cause about many objects come first, as
// one entry each.
func Text(w io.Writer, findings []lint.Finding, opts TextOptions) error {
	p := painter(opts.Color)
	var b strings.Builder
	groups, rest := Groups(findings, opts.Group)
	for i, g := range groups {
		if i > 0 {
			b.WriteString("\n")
		}
		f := g.Findings[0]
		if f.Cluster != "" {
			fmt.Fprintf(&b, "%s\n\n", p.paint(ansiBold, "== cluster "+Line(f.Cluster)+" =="))
		}
		kind := f.Object.Kind
		if kind == "" {
			kind = "file"
		}
		fmt.Fprintf(&b, "%s  %s\n", p.paint(ansiBold, fmt.Sprintf("%d × %s", len(g.Findings), Line(kind))), p.paint(ansiDim, "one cause: "+Line(g.Header())))
		writeFinding(&b, p, f, cluster.Origin{})
		fmt.Fprintf(&b, "          %s\n", Line(fmt.Sprintf("the same for %d objects: %s", len(g.Findings), examples(g, 5))))
	}
	if len(groups) > 0 && len(rest) > 0 {
		b.WriteString("\n")
	}
	type group struct {
		cluster  string
		ref      cluster.ObjectRef
		origin   cluster.Origin
		findings []lint.Finding
	}
	var objects []*group
	index := map[string]*group{}
	for _, f := range rest {
		key := f.Cluster + "\x00" + f.Object.String()
		if f.Object == (cluster.ObjectRef{}) {
			key = f.Cluster + "\x00file:" + f.Origin.File
		}
		g, ok := index[key]
		if !ok {
			g = &group{cluster: f.Cluster, ref: f.Object, origin: f.Origin}
			index[key] = g
			objects = append(objects, g)
		}
		g.findings = append(g.findings, f)
	}
	for _, g := range objects {
		// Within an object, the most severe first.
		sort.SliceStable(g.findings, func(i, j int) bool { return g.findings[i].Severity > g.findings[j].Severity })
	}
	for i, g := range objects {
		if i > 0 {
			b.WriteString("\n")
		}
		if g.cluster != "" && (i == 0 || objects[i-1].cluster != g.cluster) {
			// Several clusters: each one's findings under its name.
			fmt.Fprintf(&b, "%s\n\n", p.paint(ansiBold, "== cluster "+Line(g.cluster)+" =="))
		}
		title := Line(g.ref.String())
		if g.ref == (cluster.ObjectRef{}) {
			title = Line(g.origin.File)
		}
		loc := Line(g.origin.String())
		fmt.Fprintf(&b, "%s  %s\n", p.paint(ansiBold, title), p.paint(ansiDim, loc))
		for _, f := range g.findings {
			writeFinding(&b, p, f, g.origin)
		}
	}
	if opts.ShowSuppressed && len(opts.Suppressed) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s\n", p.paint(ansiBold, "Suppressed:"))
		for _, f := range opts.Suppressed {
			fmt.Fprintf(&b, "  %-7s %s  %s  %s\n", f.Severity, f.Check, Line(objectOrFile(f)), p.paint(ansiDim, Line(f.Origin.String())))
			fmt.Fprintf(&b, "          %s\n", Line(suppressedBy(f.Suppressed)))
		}
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	writeNarrowed(&b, opts)
	fmt.Fprintf(&b, "%s%s\n",
		countsOf(findings), suppressedCounts(opts))
	_, err := io.WriteString(w, Guard(b.String()))
	return err
}

// writeNarrowed says how the run was narrowed, before the counts.
func writeNarrowed(b *strings.Builder, opts Options) {
	for _, n := range opts.Narrowed {
		fmt.Fprintf(b, "narrowed: %s\n", Line(n))
	}
}

// writeFinding writes one finding under its object (whose origin is given, so
// that only another one is repeated).
func writeFinding(b *strings.Builder, p painter, f lint.Finding, under cluster.Origin) {
	sev := fmt.Sprintf("%-7s", f.Severity)
	fmt.Fprintf(b, "  %s %s  %s\n", p.paint(severityColor(f.Severity), sev), p.paint(ansiBold, f.Check), Line(f.Summary))
	if f.Origin.String() != under.String() && f.Origin.File != "" {
		fmt.Fprintf(b, "          %s\n", p.paint(ansiDim, "at "+Line(f.Origin.String())))
	}
	for _, l := range splitLines(Block(f.Detail)) {
		if strings.TrimSpace(l) != "" && strings.Contains(f.Summary, strings.TrimSpace(l)) {
			// Already said in the summary line.
			continue
		}
		fmt.Fprintf(b, "          %s\n", l)
	}
	if f.Fix != nil {
		fmt.Fprintf(b, "          %s %s\n", p.paint(ansiGreen, "fix:"), Line(f.Fix.Summary))
		for _, e := range f.Fix.Edits {
			where := Line(e.File)
			if e.Line > 0 {
				where = fmt.Sprintf("%s:%d", where, e.Line)
			}
			fmt.Fprintf(b, "            %s\n", p.paint(ansiDim, fmt.Sprintf("%s (%s)", where, e.Format)))
			for _, l := range splitLines(Block(e.Text)) {
				fmt.Fprintf(b, "              %s\n", l)
			}
		}
	}
}

// suppressedCounts is what the summary line says of suppressed findings:
// "; 2 suppressed, 3 in the baseline (--show-suppressed lists them)".
func suppressedCounts(opts Options) string {
	n := lint.Suppressions(opts.Suppressed)
	var parts []string
	if c := n["annotation"] + n["comment"]; c > 0 {
		parts = append(parts, fmt.Sprintf("%d suppressed", c))
	}
	if c := n["baseline"]; c > 0 {
		parts = append(parts, fmt.Sprintf("%d in the baseline", c))
	}
	if len(parts) == 0 {
		return ""
	}
	s := "; " + strings.Join(parts, ", ")
	if !opts.ShowSuppressed {
		s += " (--show-suppressed lists them)"
	}
	return s
}

// suppressedBy says what silenced a finding.
func suppressedBy(s *lint.Suppressed) string {
	var out string
	switch s.By {
	case "annotation":
		out = "suppressed by the annotation " + s.Reason
		if s.Origin.File != "" {
			out += " at " + s.Origin.String()
		}
		return out
	case "baseline":
		return "in the baseline " + s.Origin.File
	}
	out = "suppressed by the comment at " + s.Origin.String()
	if s.Reason != "" {
		out += ": " + s.Reason
	}
	return out
}

func objectOrFile(f lint.Finding) string {
	if f.Object == (cluster.ObjectRef{}) {
		return f.Origin.File
	}
	return f.Object.String()
}

func splitLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// countsOf counts findings by severity: "7 errors, 5 warnings, 0 info", as
// every report words it.
func countsOf(findings []lint.Finding) string {
	c := lint.Count(findings)
	return plural(c[lint.Error], "error") + ", " + plural(c[lint.Warning], "warning") + ", " + plural(c[lint.Info], "info")
}

func plural(n int, word string) string {
	if n == 1 || word == "info" {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
