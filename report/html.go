package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"sort"

	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/teardown"
)

// A report to look at: one self-contained HTML file (styles and a small
// script inline, nothing fetched at view time) with the summary, for every
// cluster the capacity map (workloads × capacity sources, a cell per phase),
// the teardown order drawn as SVG with its hazards, and every finding with its
// explanation and fix, linked from the map and the graph.
//
// The page is html.tmpl, run by html/template: this file and html_map.go,
// html_teardown.go build what the page shows as plain values, every string
// from the input made visible by Line or Block, and the template escapes each
// value for where it lands (text, attribute, URL).

//go:embed html.tmpl
var htmlSource string

var htmlPageTemplate = template.Must(template.New("html.tmpl").Parse(htmlSource))

// HTMLCluster is what the report shows of one cluster.
type HTMLCluster struct {
	Name string
	// Workloads are the workloads' placements, one Explanation each.
	Workloads []Explanation
	// Teardown is the cluster's teardown plan; nil to leave it out.
	Teardown *teardown.Plan
	// Inputs are the files the cluster was read from.
	Inputs []string
}

// HTML writes the report. findings are those of every cluster (each naming
// its cluster when there are several).
func HTML(w io.Writer, clusters []HTMLCluster, findings []lint.Finding, opts Options) error {
	var b bytes.Buffer
	if err := htmlPageTemplate.ExecuteTemplate(&b, "page", htmlPageOf(clusters, findings, opts)); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// htmlPage is what the page shows.
type htmlPage struct {
	// Counts is the summary line: findings by severity, and suppressed ones.
	Counts     string
	Checks     []htmlCheckRow
	Clusters   []htmlCluster
	Suppressed []htmlSuppressed
}

// htmlCheckRow is a row of the summary: the findings of one check at one
// severity.
type htmlCheckRow struct {
	Check    string
	DocURL   string
	Severity lint.Severity
	N        int
}

// htmlCluster is a cluster's section: its capacity map (nil without
// workloads), its teardown graph (nil without a plan), its findings.
type htmlCluster struct {
	ID        int
	Title     string
	Workloads int
	Inputs    []string
	Map       *htmlMap
	Teardown  *htmlTeardown
	Findings  []htmlFinding
}

type htmlFinding struct {
	ID       string
	Severity lint.Severity
	Check    string
	DocURL   string
	Object   string
	Origin   string
	Summary  string
	Detail   string
	Fix      *htmlFix
}

type htmlFix struct {
	Summary string
	Edits   []htmlEdit
}

type htmlEdit struct {
	Place  string // file:line
	Format string
	Text   string
}

type htmlSuppressed struct {
	Severity lint.Severity
	Check    string
	Object   string
	By       string
}

func htmlPageOf(clusters []HTMLCluster, findings []lint.Finding, opts Options) htmlPage {
	page := htmlPage{
		Counts: countsOf(findings) + suppressedCounts(Options{Suppressed: opts.Suppressed, ShowSuppressed: true}),
		Checks: checkRows(findings),
	}
	// Findings get an anchor each; the map and the graph link to them.
	anchor := map[string]string{}
	for i, f := range findings {
		key := f.Cluster + "\x00" + f.Object.String()
		if _, ok := anchor[key]; !ok {
			anchor[key] = findingID(i)
		}
	}
	for ci, cl := range clusters {
		// With one cluster, findings do not name it.
		name := cl.Name
		if len(clusters) == 1 {
			name = ""
		}
		page.Clusters = append(page.Clusters, clusterSection(ci+1, cl, name, findings, anchor))
	}
	for _, f := range opts.Suppressed {
		page.Suppressed = append(page.Suppressed, htmlSuppressed{
			Severity: f.Severity,
			Check:    Line(f.Check),
			Object:   Line(objectOrFile(f)),
			By:       Line(suppressedBy(f.Suppressed)),
		})
	}
	return page
}

// findingID is the anchor of the i-th finding (from 0).
func findingID(i int) string { return fmt.Sprintf("f-%d", i+1) }

// checkRows counts findings by check and severity: the most severe first,
// then by check.
func checkRows(findings []lint.Finding) []htmlCheckRow {
	index := map[string]int{}
	var rows []htmlCheckRow
	for _, f := range findings {
		k := f.Check + "\x00" + f.Severity.String()
		i, ok := index[k]
		if !ok {
			i = len(rows)
			index[k] = i
			rows = append(rows, htmlCheckRow{Check: Line(f.Check), DocURL: CheckDocURL(f.Check), Severity: f.Severity})
		}
		rows[i].N++
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Severity != rows[j].Severity {
			return rows[i].Severity > rows[j].Severity
		}
		return rows[i].Check < rows[j].Check
	})
	return rows
}

// clusterSection is the section of cluster number id; name is how its
// findings name it.
func clusterSection(id int, cl HTMLCluster, name string, findings []lint.Finding, anchor map[string]string) htmlCluster {
	sec := htmlCluster{ID: id, Title: Line(clusterTitle(cl.Name)), Workloads: len(cl.Workloads)}
	for _, in := range cl.Inputs {
		sec.Inputs = append(sec.Inputs, Line(in))
	}
	if len(cl.Workloads) > 0 {
		sec.Map = capacityMap(id, cl.Workloads, name, anchor)
	}
	var mine []lint.Finding
	for i, f := range findings {
		if f.Cluster == name {
			mine = append(mine, f)
			sec.Findings = append(sec.Findings, findingOf(findingID(i), f))
		}
	}
	if cl.Teardown != nil && (len(cl.Teardown.Steps) > 0 || len(cl.Teardown.Notes) > 0) {
		sec.Teardown = teardownDrawing(id, cl.Teardown, mine, name, anchor)
	}
	return sec
}

func clusterTitle(name string) string {
	if name == "" {
		return "Cluster"
	}
	return "Cluster " + name
}

func findingOf(id string, f lint.Finding) htmlFinding {
	hf := htmlFinding{
		ID:       id,
		Severity: f.Severity,
		Check:    Line(f.Check),
		DocURL:   CheckDocURL(f.Check),
		Object:   Line(objectOrFile(f)),
		Origin:   Line(f.Origin.String()),
		Summary:  Line(f.Summary),
		Detail:   Block(f.Detail),
	}
	if f.Fix != nil {
		hf.Fix = &htmlFix{Summary: Line(f.Fix.Summary)}
		for _, e := range f.Fix.Edits {
			place := e.File
			if e.Line > 0 {
				place = fmt.Sprintf("%s:%d", place, e.Line)
			}
			hf.Fix.Edits = append(hf.Fix.Edits, htmlEdit{Place: Line(place), Format: Line(e.Format), Text: Block(e.Text)})
		}
	}
	return hf
}
