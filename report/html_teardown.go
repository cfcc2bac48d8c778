package report

import (
	"fmt"
	"html/template"
	"strings"

	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/teardown"
)

// The teardown order drawn as SVG: a box per step (top to bottom) listing its
// items, an arrow from each step to the next, items with a hazard in red and
// linked to their finding, and a dashed red arrow from an item to the one
// Terraform may destroy before it.

// htmlTeardown is the drawing of a cluster's teardown plan.
type htmlTeardown struct {
	ID            int
	Tool          string
	Width, Height int
	Steps         []svgStep
	Edges         []svgEdge
	// Notes are what the plan could not work out or leaves to the user,
	// as the text output prints them after the steps.
	Notes []string
}

// svgStep is a step's box, its lines, and the arrow to the next step (nil
// for the last).
type svgStep struct {
	Order               int
	X, Y, Width, Height int
	Title               svgText
	Lines               []svgText
	Arrow               *svgLine
}

// svgText is a line of text: linked to a file when Href is set, to a finding
// when Anchor is.
type svgText struct {
	X, Y   int
	Fill   string
	Text   string
	Href   template.URL
	Anchor string
}

type svgLine struct{ X1, Y1, X2, Y2 int }

// svgEdge is a hazard: Path is the curve's SVG path data, numbers only.
type svgEdge struct{ Path, Title string }

// The drawing's geometry, in pixels.
const (
	svgWidth = 760 // of a step's box
	svgLineH = 18
	svgPad   = 10
	svgGap   = 34 // between boxes
	svgLeft  = 40
)

// teardownDrawing lays out the plan of cluster number id; findings are the
// cluster's, cname how they name it.
func teardownDrawing(id int, plan *teardown.Plan, findings []lint.Finding, cname string, anchor map[string]string) *htmlTeardown {
	steps, edges := teardownGraph(plan, findings)
	d := &htmlTeardown{ID: id, Tool: Line(toolCommand(plan.Tool)), Width: svgWidth + 120}
	itemY := map[string]int{} // item ID → the baseline of its first line
	y := 10
	for i, st := range steps {
		lines := 1
		for _, it := range st.items {
			lines += len(strings.Split(it.label, "\n"))
		}
		box := svgStep{Order: i + 1, X: svgLeft, Y: y, Width: svgWidth, Height: lines*svgLineH + 2*svgPad}
		ty := box.Y + svgPad + 13
		box.Title = svgText{X: svgLeft + svgPad, Y: ty, Text: Line(st.title)}
		for _, it := range st.items {
			itemY[it.id] = ty + svgLineH
			box.Lines = append(box.Lines, itemLines(it, ty, cname, anchor)...)
			ty += svgLineH * len(strings.Split(it.label, "\n"))
		}
		if i > 0 {
			prev := &d.Steps[i-1]
			prev.Arrow = &svgLine{X1: svgLeft + svgWidth/2, Y1: prev.Y + prev.Height, X2: svgLeft + svgWidth/2, Y2: box.Y - 2}
		}
		d.Steps = append(d.Steps, box)
		y += box.Height + svgGap
	}
	d.Height = y
	for _, n := range plan.Notes {
		d.Notes = append(d.Notes, Line(n)+".")
	}
	for k, e := range edges {
		from, to := itemY[e[1]], itemY[e[0]]
		x := svgLeft + svgWidth + 20 + 14*k
		d.Edges = append(d.Edges, svgEdge{
			Path:  fmt.Sprintf("M%d,%d C%d,%d %d,%d %d,%d", svgLeft+svgWidth, from-5, x+40, from-5, x+40, to-5, svgLeft+svgWidth, to-5),
			Title: Line(e[2]),
		})
	}
	return d
}

// itemLines are the lines of an item whose first line is below ty: its
// label (the file and line linked to the file), and its hazards linked to
// their finding.
func itemLines(it graphItem, ty int, cname string, anchor map[string]string) []svgText {
	color, mark := "#1d1d1f", ""
	if len(it.hazard) > 0 {
		color, mark = "#b00020", "⚠ "
	}
	first := ty + svgLineH
	var out []svgText
	labels := strings.Split(it.label, "\n")
	for k, l := range labels {
		ty += svgLineH
		t := svgText{X: svgLeft + svgPad + 14, Y: ty, Fill: color, Text: Line(l)}
		if k == 0 {
			t.Text = mark + t.Text
		}
		if k == len(labels)-1 && l == it.origin.String() && it.origin.InFile() {
			// The file and line, linked to the file (relative to where
			// eksdoctor ran, as the report names it).
			t.Href = fileURL(it.origin.File)
		}
		out = append(out, t)
	}
	if len(it.hazard) > 0 {
		if a, ok := anchor[cname+"\x00"+it.hazardOf]; ok {
			out = append(out, svgText{X: svgLeft + svgWidth - 200, Y: first, Text: Line(strings.Join(it.hazard, ", ")), Anchor: a})
		}
	}
	return out
}

// fileURL is the link to an input file. It is marked a URL, so that
// html/template keeps a file: URL rather than refuse its scheme: fileHref
// chose the scheme (file:// for an absolute path, none otherwise, "./"
// before a name that would read as one), and the template still
// percent-encodes and escapes the rest as for any URL.
func fileURL(file string) template.URL { return template.URL(fileHref(file)) }

// fileHref is a link to an input file: a relative URL reference for a
// relative path, a file URL for an absolute one.
func fileHref(file string) string {
	u := artifactURI(file)
	if strings.HasPrefix(file, "/") {
		return "file://" + u
	}
	if first, _, _ := strings.Cut(u, "/"); strings.Contains(first, ":") {
		// "javascript:x" is a file name here, never a scheme.
		return "./" + u
	}
	return u
}
