package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
)

// Reports for pipelines: GitHub workflow annotations, JUnit XML, Markdown for
// pull-request comments and job summaries.

// GitHub writes one workflow command per finding (::error, ::warning,
// ::notice), which GitHub Actions shows as an annotation on the file and line,
// then a line that counts them. Everything from the input is encoded as the
// runner decodes it (%, CR and LF in the message; also : and , in properties),
// so no text of the input can end the command or start another one.
func GitHub(w io.Writer, findings []lint.Finding, opts Options) error {
	var b strings.Builder
	for _, f := range findings {
		level := map[lint.Severity]string{lint.Error: "error", lint.Warning: "warning"}[f.Severity]
		if level == "" {
			level = "notice"
		}
		var props []string
		if f.Origin.InFile() {
			props = append(props, "file="+ghProperty(artifactPath(f.Origin.File)))
			if f.Origin.Line > 0 {
				props = append(props, fmt.Sprintf("line=%d", f.Origin.Line))
			}
		}
		title := f.Check
		if f.Object != (cluster.ObjectRef{}) {
			title += " " + f.Object.String()
		}
		props = append(props, "title="+ghProperty(title))
		msg := findingText(f)
		if f.Cluster != "" {
			msg = "cluster " + f.Cluster + ": " + msg
		}
		fmt.Fprintf(&b, "::%s %s::%s\n", level, strings.Join(props, ","), ghData(msg))
	}
	for _, n := range opts.Narrowed {
		fmt.Fprintf(&b, "::notice title=%s::%s\n", ghProperty("eksdoctor narrowed"), ghData(n))
	}
	fmt.Fprintf(&b, "eksdoctor: %s%s\n",
		countsOf(findings), ghData(suppressedCounts(opts)))
	_, err := io.WriteString(w, b.String())
	return err
}

// findingText is a finding in a few lines: its summary, its explanation and
// what its fix does.
func findingText(f lint.Finding) string {
	text := f.Summary
	if f.Detail != "" {
		text += "\n" + f.Detail
	}
	if f.Fix != nil {
		text += "\nfix: " + f.Fix.Summary
	}
	return text
}

// ghData encodes a command's message as the Actions runner decodes it; other
// control characters are escaped as the text report escapes them.
func ghData(s string) string {
	s = Block(s)
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// ghProperty encodes a command's property value.
func ghProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(Line(s))
}

// artifactPath is a finding's file as a repository path: slashes, no "./".
func artifactPath(file string) string {
	return strings.TrimPrefix(strings.ReplaceAll(file, `\`, "/"), "./")
}

// JUnit writes JUnit XML, as CI systems read test results: a test suite per
// check that ran, a test case per finding — failed when the finding is at or
// above FailOn (every finding when FailOn is zero), passed with the finding
// as its output below it — and one passed test case for a check without
// findings. Suppressed findings are skipped test cases.
func JUnit(w io.Writer, findings []lint.Finding, checks []*lint.Check, opts Options) error {
	type failure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
	type skipped struct {
		Message string `xml:"message,attr"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		File      string   `xml:"file,attr,omitempty"`
		Line      int      `xml:"line,attr,omitempty"`
		Failure   *failure `xml:"failure,omitempty"`
		Skipped   *skipped `xml:"skipped,omitempty"`
		SystemOut string   `xml:"system-out,omitempty"`
	}
	type testsuite struct {
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Skipped  int        `xml:"skipped,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	type testsuites struct {
		XMLName  xml.Name    `xml:"testsuites"`
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Suites   []testsuite `xml:"testsuite"`
	}
	fails := func(f lint.Finding) bool { return opts.FailOn == 0 || f.Severity >= opts.FailOn }
	byCheck := map[string][]lint.Finding{}
	for _, f := range findings {
		byCheck[f.Check] = append(byCheck[f.Check], f)
	}
	for _, f := range opts.Suppressed {
		byCheck[f.Check] = append(byCheck[f.Check], f)
	}
	ids := make([]string, 0, len(checks))
	seen := map[string]bool{}
	for _, c := range checks {
		ids, seen[c.ID] = append(ids, c.ID), true
	}
	for id := range byCheck {
		if !seen[id] {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	out := testsuites{Name: "eksdoctor"}
	for _, id := range ids {
		s := testsuite{Name: id}
		for _, f := range byCheck[id] {
			tc := testcase{Name: xmlText(junitName(f)), Classname: "eksdoctor." + id}
			if f.Origin.InFile() {
				tc.File, tc.Line = xmlText(artifactPath(f.Origin.File)), f.Origin.Line
			}
			text := findingText(f)
			switch {
			case f.Suppressed != nil:
				tc.Skipped = &skipped{Message: xmlText(suppressedBy(f.Suppressed))}
				s.Skipped++
			case fails(f):
				tc.Failure = &failure{Message: xmlText(f.Summary), Type: f.Severity.String(), Text: xmlText(text)}
				s.Failures++
			default:
				tc.SystemOut = xmlText(f.Severity.String() + ": " + text)
			}
			s.Cases = append(s.Cases, tc)
		}
		if len(s.Cases) == 0 {
			s.Cases = append(s.Cases, testcase{Name: "no findings", Classname: "eksdoctor." + id})
		}
		s.Tests = len(s.Cases)
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Skipped += s.Skipped
		out.Suites = append(out.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func junitName(f lint.Finding) string {
	name := f.Object.String()
	if f.Object == (cluster.ObjectRef{}) {
		name = f.Origin.File
	}
	if f.Cluster != "" {
		name = f.Cluster + ": " + name
	}
	if o := f.Origin.String(); o != "" && f.Object != (cluster.ObjectRef{}) {
		name += " (" + o + ")"
	}
	return name
}

// xmlText keeps only what XML 1.0 can hold: control characters other than
// tab and line feed are written escaped, as the text report writes them.
func xmlText(s string) string { return Block(s) }

// Markdown writes a report for a pull-request comment or a job summary: the
// counts, a table of findings by check, then each finding under its object
// with its explanation and fix folded. Text from the input is escaped so it
// cannot add markup, links or HTML.
func Markdown(w io.Writer, findings []lint.Finding, opts Options) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## eksdoctor: %s%s\n\n",
		countsOf(findings), mdText(suppressedCounts(opts)))
	for _, n := range opts.Narrowed {
		fmt.Fprintf(&b, "> **Narrowed:** %s\n\n", mdText(n))
	}
	if len(findings) == 0 {
		b.WriteString("No findings.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	type row struct {
		check string
		sev   lint.Severity
		n     int
	}
	var rows []*row
	index := map[string]*row{}
	for _, f := range findings {
		r, ok := index[f.Check]
		if !ok {
			r = &row{check: f.Check, sev: f.Severity}
			index[f.Check] = r
			rows = append(rows, r)
		}
		r.n++
		r.sev = max(r.sev, f.Severity)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].sev != rows[j].sev {
			return rows[i].sev > rows[j].sev
		}
		return rows[i].check < rows[j].check
	})
	b.WriteString("| check | severity | findings |\n|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| [`%s`](%s) | %s | %d |\n", r.check, CheckDocURL(r.check), r.sev, r.n)
	}
	b.WriteString("\n")
	groups, rest := Groups(findings, opts.Group)
	for _, g := range groups {
		f := g.Findings[0]
		kind := f.Object.Kind
		if kind == "" {
			kind = "file"
		}
		fmt.Fprintf(&b, "<details><summary><b>%s</b> <code>%s</code> %d × %s: %s</summary>\n\n", f.Severity, f.Check, len(g.Findings), mdText(kind), mdText(g.Header()))
		fmt.Fprintf(&b, "The same for %d objects: %s\n\n", len(g.Findings), mdText(examples(g, 20)))
		mdFinding(&b, f)
		b.WriteString("</details>\n\n")
	}
	sorted := append([]lint.Finding(nil), rest...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Severity > sorted[j].Severity })
	for _, f := range sorted {
		where := ""
		if o := f.Origin.String(); o != "" {
			where = " — `" + mdCode(artifactPath(o)) + "`"
		}
		what := mdText(f.Object.String())
		if f.Object == (cluster.ObjectRef{}) {
			what = mdText(f.Origin.File)
		}
		if f.Cluster != "" {
			what = mdText(f.Cluster) + ": " + what
		}
		fmt.Fprintf(&b, "<details><summary><b>%s</b> <code>%s</code> %s%s</summary>\n\n", f.Severity, f.Check, what, where)
		mdFinding(&b, f)
		b.WriteString("</details>\n\n")
	}
	_, err := io.WriteString(w, Guard(b.String()))
	return err
}

// mdFinding writes a finding's summary, explanation and fix.
func mdFinding(b *strings.Builder, f lint.Finding) {
	fmt.Fprintf(b, "%s\n\n", mdText(f.Summary))
	if f.Detail != "" {
		fmt.Fprintf(b, "```text\n%s\n```\n\n", mdFence(f.Detail))
	}
	if f.Fix != nil {
		fmt.Fprintf(b, "**Fix:** %s\n\n", mdText(f.Fix.Summary))
		for _, e := range f.Fix.Edits {
			loc := artifactPath(e.File)
			if e.Line > 0 {
				loc = fmt.Sprintf("%s:%d", loc, e.Line)
			}
			fmt.Fprintf(b, "`%s` (%s)\n\n```%s\n%s\n```\n\n", mdCode(loc), e.Format, fenceLang(e.Format), mdFence(e.Text))
		}
	}
}

// mdText escapes text for Markdown (and the HTML GitHub allows in it): no
// markup, link, mention or tag survives (a link needs its brackets, an image
// too).
func mdText(s string) string {
	s = Line(s)
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\\', '`', '*', '_', '[', ']', '#', '|', '@', '~':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdCode is text inside a code span: backticks cannot end it.
func mdCode(s string) string { return strings.ReplaceAll(Line(s), "`", "'") }

// mdFence is text inside a fenced block: no line can close the fence.
func mdFence(s string) string {
	lines := strings.Split(strings.TrimRight(Block(s), "\n"), "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") || strings.HasPrefix(strings.TrimSpace(l), "~~~") {
			lines[i] = " " + l
		}
	}
	return strings.Join(lines, "\n")
}

func fenceLang(format string) string {
	switch format {
	case lint.FormatHCL:
		return "hcl"
	case lint.FormatShell:
		return "sh"
	}
	return "yaml"
}

// DocBase is where the checks' documentation is published: each check's page
// is DocBase + ID + ".md".
const DocBase = "https://github.com/eksdoctor/eksdoctor/blob/main/docs/checks/"

// CheckDocURL is the documentation page of a check.
func CheckDocURL(id string) string { return DocBase + id + ".md" }
