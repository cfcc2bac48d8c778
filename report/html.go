package report

import (
	"fmt"
	"html"
	"io"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/teardown"
)

// A report to look at: one self-contained HTML file (styles and a small
// script inline, nothing fetched at view time) with the summary, for every
// cluster the capacity map (workloads × capacity sources, a cell per phase),
// the teardown order drawn as SVG with its hazards, and every finding with its
// explanation and fix, linked from the map and the graph.

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
	var b strings.Builder
	h := html.EscapeString
	b.WriteString(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>eksdoctor report</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:0 auto;max-width:1400px;padding:0 1.5rem 3rem;color:#1d1d1f}
h1{margin:1.2rem 0 .2rem}h2{margin-top:2.2rem;border-bottom:1px solid #ccc}h3{margin-top:1.6rem}
table{border-collapse:collapse;margin:.5rem 0}th,td{border:1px solid #d0d0d0;padding:.25rem .45rem;text-align:left;vertical-align:top}
thead th{background:#f2f2f2;position:sticky;top:0}
.map{font-size:13px}.map th[scope=row]{white-space:nowrap}
.fits{background:#e3f4e3}.refuses{background:#fbe3e3}.unknown{background:#f1f1f1}
td details summary{cursor:pointer}
.sev-error{color:#b00020;font-weight:600}.sev-warning{color:#8a5a00;font-weight:600}.sev-info{color:#1f4e99;font-weight:600}
article.finding{border-left:4px solid #ccc;padding:.2rem .8rem;margin:.8rem 0}article.finding.error{border-color:#b00020}article.finding.warning{border-color:#c98a00}article.finding.info{border-color:#1f4e99}
pre{background:#f6f6f6;padding:.5rem;overflow:auto;white-space:pre-wrap}
.controls{display:flex;gap:1.2rem;align-items:center;margin:.4rem 0}
.muted{color:#666}
svg text{font:12px system-ui,Helvetica,Arial,sans-serif}
</style>
</head>
<body>
`)
	fmt.Fprintf(&b, "<header><h1>eksdoctor report</h1>\n<p id=\"counts\">%s%s</p></header>\n",
		countsOf(findings), h(suppressedCounts(Options{Suppressed: opts.Suppressed, ShowSuppressed: true})))

	// Summary: findings by check and severity, the clusters.
	b.WriteString("<section id=\"summary\"><h2>Summary</h2>\n")
	type row struct {
		check string
		sev   lint.Severity
		n     int
	}
	index := map[string]*row{}
	var rows []*row
	for _, f := range findings {
		k := f.Check + "\x00" + f.Severity.String()
		r, ok := index[k]
		if !ok {
			r = &row{check: f.Check, sev: f.Severity}
			index[k] = r
			rows = append(rows, r)
		}
		r.n++
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].sev != rows[j].sev {
			return rows[i].sev > rows[j].sev
		}
		return rows[i].check < rows[j].check
	})
	if len(rows) > 0 {
		b.WriteString("<table><caption class=\"muted\">Findings by check</caption><thead><tr><th scope=\"col\">Check</th><th scope=\"col\">Severity</th><th scope=\"col\">Findings</th></tr></thead><tbody>\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "<tr><td><a href=\"%s\">%s</a></td><td class=\"sev-%s\">%s</td><td>%d</td></tr>\n", h(CheckDocURL(r.check)), h(r.check), r.sev, r.sev, r.n)
		}
		b.WriteString("</tbody></table>\n")
	}
	b.WriteString("<p>Clusters: ")
	for i, cl := range clusters {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "<a href=\"#cluster-%d\">%s</a> (%d workloads)", i+1, h(Line(clusterTitle(cl.Name))), len(cl.Workloads))
	}
	b.WriteString("</p>\n")
	for _, cl := range clusters {
		if len(cl.Inputs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "<details><summary>Inputs read for %s: %d</summary><ul>", h(Line(clusterTitle(cl.Name))), len(cl.Inputs))
		for _, in := range cl.Inputs {
			fmt.Fprintf(&b, "<li>%s</li>", h(Line(in)))
		}
		b.WriteString("</ul></details>\n")
	}
	b.WriteString("</section>\n")

	// Findings get an anchor each; the map and the graph link to them.
	anchor := map[string]string{}
	for i, f := range findings {
		key := f.Cluster + "\x00" + f.Object.String()
		if _, ok := anchor[key]; !ok {
			anchor[key] = fmt.Sprintf("f-%d", i+1)
		}
	}

	for ci, cl := range clusters {
		fmt.Fprintf(&b, "<section class=\"cluster\" id=\"cluster-%d\"><h2>%s</h2>\n", ci+1, h(Line(clusterTitle(cl.Name))))
		name := cl.Name
		if len(clusters) == 1 {
			name = ""
		}
		writeCapacityMap(&b, ci+1, cl, name, anchor)
		if cl.Teardown != nil && len(cl.Teardown.Steps) > 0 {
			var mine []lint.Finding
			for _, f := range findings {
				if f.Cluster == name {
					mine = append(mine, f)
				}
			}
			fmt.Fprintf(&b, "<h3 id=\"teardown-%d\">Teardown order (%s)</h3>\n", ci+1, h(toolCommand(cl.Teardown.Tool)))
			writeTeardownSVG(&b, ci+1, cl.Teardown, mine, name, anchor)
		}
		b.WriteString("<h3>Findings</h3>\n")
		n := 0
		for i, f := range findings {
			if f.Cluster != name {
				continue
			}
			n++
			writeFindingHTML(&b, fmt.Sprintf("f-%d", i+1), f)
		}
		if n == 0 {
			b.WriteString("<p>No findings.</p>\n")
		}
		b.WriteString("</section>\n")
	}
	if len(opts.Suppressed) > 0 {
		b.WriteString("<section id=\"suppressed\"><h2>Suppressed</h2><ul>\n")
		for _, f := range opts.Suppressed {
			fmt.Fprintf(&b, "<li><span class=\"sev-%s\">%s</span> %s %s — %s</li>\n", f.Severity, f.Severity, h(f.Check), h(Line(objectOrFile(f))), h(Line(suppressedBy(f.Suppressed))))
		}
		b.WriteString("</ul></section>\n")
	}
	b.WriteString(`<script>
(function () {
  function apply(table) {
    var id = table.getAttribute("data-map");
    var ns = document.getElementById("ns-" + id).value;
    var only = document.getElementById("refused-" + id).checked;
    var shown = 0;
    table.querySelectorAll("tbody tr").forEach(function (tr) {
      var nss = (tr.getAttribute("data-ns") || "").split(" ");
      var ok = (ns === "" || nss.indexOf(ns) >= 0) && (!only || tr.getAttribute("data-refused") === "1");
      tr.hidden = !ok;
      if (ok) { shown++; }
    });
    document.getElementById("shown-" + id).textContent = shown;
  }
  // A view can be linked: #ns=shop&refused=1 sets the filters.
  var want = {};
  location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
    var i = kv.indexOf("=");
    if (i > 0) { want[decodeURIComponent(kv.slice(0, i))] = decodeURIComponent(kv.slice(i + 1)); }
  });
  document.querySelectorAll("table[data-map]").forEach(function (table) {
    var id = table.getAttribute("data-map");
    var sel = document.getElementById("ns-" + id);
    if (want.ns !== undefined && Array.prototype.some.call(sel.options, function (o) { return o.value === want.ns; })) { sel.value = want.ns; }
    if (want.refused === "1") { document.getElementById("refused-" + id).checked = true; }
    ["ns-", "refused-"].forEach(function (p) {
      document.getElementById(p + id).addEventListener("change", function () { apply(table); });
    });
    apply(table);
  });
  document.body.setAttribute("data-ready", "1");
})();
</script>
</body>
</html>
`)
	_, err := io.WriteString(w, b.String())
	return err
}

func clusterTitle(name string) string {
	if name == "" {
		return "Cluster"
	}
	return "Cluster " + name
}

// mapRow is a row of the capacity map: workloads of one kind whose answers
// are the same in one phase (a scheduling class, as far as the map shows).
type mapRow struct {
	kind      string
	phase     string
	result    string
	objects   []string
	nss       map[string]bool
	cells     map[string]ExplainSource
	signature string
}

// writeCapacityMap writes the workloads × capacity sources table, workloads
// of one kind with the same answers in a phase collapsed into one row.
func writeCapacityMap(b *strings.Builder, id int, cl HTMLCluster, cname string, anchor map[string]string) {
	h := html.EscapeString
	fmt.Fprintf(b, "<h3 id=\"map-%d\">Capacity map</h3>\n", id)
	if len(cl.Workloads) == 0 {
		b.WriteString("<p>No workloads.</p>\n")
		return
	}
	var columns []string
	seen := map[string]bool{}
	var rows []*mapRow
	byKey := map[string]*mapRow{}
	nss := map[string]bool{}
	nodes := map[string]bool{}
	for _, w := range cl.Workloads {
		for _, ph := range w.Phases {
			for _, s := range ph.Sources {
				if s.Kind == "node" {
					nodes[s.Name] = true
				}
			}
		}
	}
	// A running cluster's nodes are one column when there are many: fits when
	// a node takes the pods (how many do), else the reason most nodes give.
	collapse := len(nodes) > maxNodeColumns
	for _, w := range cl.Workloads {
		ref := parseRef(w.Object)
		nss[ref.Namespace] = true
		for _, ph := range w.Phases {
			if collapse {
				ph.Sources = collapseNodes(ph.Sources)
			}
			cells := map[string]ExplainSource{}
			var sig strings.Builder
			sig.WriteString(ref.Kind + "\x00" + ph.Phase + "\x00" + ph.Result)
			for _, s := range ph.Sources {
				col := s.Kind + " " + s.Name
				if !seen[col] {
					seen[col] = true
					columns = append(columns, col)
				}
				cells[col] = s
				fmt.Fprintf(&sig, "\x00%s=%s:%s", col, s.Result, strings.Join(s.Reasons, ";"))
			}
			key := sig.String()
			r, ok := byKey[key]
			if !ok {
				r = &mapRow{kind: ref.Kind, phase: ph.Phase, result: ph.Result, cells: cells, nss: map[string]bool{}, signature: key}
				byKey[key] = r
				rows = append(rows, r)
			}
			r.objects = append(r.objects, w.Object)
			r.nss[ref.Namespace] = true
		}
	}
	// Only many alike make a collapsed row; a few are shown each on its own.
	var expanded []*mapRow
	for _, r := range rows {
		if len(r.objects) >= GroupAt {
			expanded = append(expanded, r)
			continue
		}
		for _, o := range r.objects {
			one := *r
			one.objects = []string{o}
			one.nss = map[string]bool{parseRef(o).Namespace: true}
			expanded = append(expanded, &one)
		}
	}
	rows = expanded
	// Each workload's phases side by side, in the order workloads came.
	order := map[string]int{}
	for i, w := range cl.Workloads {
		order[w.Object] = i
	}
	sort.SliceStable(rows, func(i, j int) bool { return order[rows[i].objects[0]] < order[rows[j].objects[0]] })
	var names []string
	for n := range nss {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(b, "<div class=\"controls\"><label>Namespace <select id=\"ns-%d\"><option value=\"\">all</option>", id)
	for _, n := range names {
		label := n
		if n == "" {
			label = "(cluster-scoped)"
		}
		// The value is the escaped name, as the rows' data-ns: nothing the
		// page holds carries a character a reader does not see.
		fmt.Fprintf(b, "<option value=\"%s\">%s</option>", h(Line(n)), h(Line(label)))
	}
	fmt.Fprintf(b, "</select></label><label><input type=\"checkbox\" id=\"refused-%d\"> only what no capacity takes</label><span class=\"muted\"><span id=\"shown-%d\">%d</span> of %d rows shown</span></div>\n", id, id, len(rows), len(rows))
	fmt.Fprintf(b, "<table class=\"map\" data-map=\"%d\"><caption class=\"muted\">Where each workload's pods can run, phase by phase: ✓ fits, ✗ refuses (open a cell for the reason), ? unknown. Five or more workloads of one kind with the same answers share a row.</caption>\n<thead><tr><th scope=\"col\">Workload</th><th scope=\"col\">Phase</th><th scope=\"col\">Result</th>", id)
	for _, c := range columns {
		fmt.Fprintf(b, "<th scope=\"col\">%s</th>", h(Line(c)))
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for _, r := range rows {
		var rowNS []string
		for n := range r.nss {
			rowNS = append(rowNS, Line(n))
		}
		sort.Strings(rowNS)
		refused := "0"
		if r.result == "refuses" {
			refused = "1"
		}
		fmt.Fprintf(b, "<tr data-ns=\"%s\" data-refused=\"%s\" data-phase=\"%s\"><th scope=\"row\">", h(strings.Join(rowNS, " ")), refused, h(r.phase))
		if len(r.objects) == 1 {
			writeObjectLink(b, r.objects[0], cname, anchor)
		} else {
			fmt.Fprintf(b, "<details><summary>%d × %s</summary>", len(r.objects), h(r.kind))
			for i, o := range r.objects {
				if i == 200 {
					fmt.Fprintf(b, "<br>… and %d more", len(r.objects)-200)
					break
				}
				b.WriteString("<br>")
				writeObjectLink(b, o, cname, anchor)
			}
			b.WriteString("</details>")
		}
		fmt.Fprintf(b, "</th><td>%s</td><td class=\"%s\">%s</td>", h(r.phase), resultClass(r.result), resultText(r.result))
		for _, c := range columns {
			s, ok := r.cells[c]
			if !ok {
				b.WriteString("<td class=\"muted\">—</td>")
				continue
			}
			if len(s.Reasons) == 0 {
				fmt.Fprintf(b, "<td class=\"%s\">%s</td>", resultClass(s.Result), resultText(s.Result))
				continue
			}
			fmt.Fprintf(b, "<td class=\"%s\" title=\"%s\"><details><summary>%s</summary>%s</details></td>", resultClass(s.Result), h(Line(strings.Join(s.Reasons, "; "))), resultText(s.Result), h(Line(strings.Join(s.Reasons, "; "))))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody></table>\n")
}

// maxNodeColumns is how many nodes the map shows as columns of their own.
const maxNodeColumns = 12

// collapseNodes makes one "nodes" source of a placement's node verdicts.
func collapseNodes(sources []ExplainSource) []ExplainSource {
	var out []ExplainSource
	total, fit := 0, 0
	reasons := map[string]int{}
	for _, s := range sources {
		if s.Kind != "node" {
			out = append(out, s)
			continue
		}
		total++
		switch {
		case s.Result == "fits":
			fit++
		case len(s.Reasons) > 0:
			reasons[s.Reasons[0]]++
		}
	}
	if total == 0 {
		return out
	}
	n := ExplainSource{Kind: "nodes", Name: fmt.Sprintf("(%d)", total)}
	if fit > 0 {
		n.Result = "fits"
		n.Reasons = []string{fmt.Sprintf("%d of %d nodes take the pods", fit, total)}
	} else {
		n.Result = "refuses"
		best, bestN := "", 0
		for r, c := range reasons {
			if c > bestN || c == bestN && r < best {
				best, bestN = r, c
			}
		}
		n.Reasons = []string{fmt.Sprintf("0/%d nodes take the pods; %d: %s", total, bestN, best)}
	}
	return append([]ExplainSource{n}, out...)
}

func writeObjectLink(b *strings.Builder, object, cname string, anchor map[string]string) {
	h := html.EscapeString
	if a, ok := anchor[cname+"\x00"+object]; ok {
		fmt.Fprintf(b, "<a href=\"#%s\">%s</a>", a, h(Line(object)))
		return
	}
	b.WriteString(h(Line(object)))
}

func resultClass(r string) string {
	switch r {
	case "fits", "refuses":
		return r
	}
	return "unknown"
}

// resultText says a result with a symbol and a word, never by colour alone.
func resultText(r string) string {
	switch r {
	case "fits":
		return "✓ fits"
	case "refuses":
		return "✗ refuses"
	}
	return "? " + html.EscapeString(r)
}

// parseRef reads "Kind/namespace/name" or "Kind/name".
func parseRef(s string) cluster.ObjectRef {
	parts := strings.SplitN(s, "/", 3)
	switch len(parts) {
	case 3:
		return cluster.ObjectRef{Kind: parts[0], Namespace: parts[1], Name: parts[2]}
	case 2:
		return cluster.ObjectRef{Kind: parts[0], Name: parts[1]}
	}
	return cluster.ObjectRef{Name: s}
}

// writeTeardownSVG draws the teardown order: a box per step (top to bottom)
// listing its items, an arrow from each step to the next, items with a
// hazard in red and linked to their finding, and a dashed red arrow from an
// item to the one Terraform may destroy before it.
func writeTeardownSVG(b *strings.Builder, id int, plan *teardown.Plan, findings []lint.Finding, cname string, anchor map[string]string) {
	h := html.EscapeString
	steps, edges := teardownGraph(plan, findings)
	const width, lineH, pad, gap, left = 760, 18, 10, 34, 40
	type box struct{ y, height int }
	boxes := make([]box, len(steps))
	itemY := map[string]int{}
	y := 10
	for i, st := range steps {
		lines := 1
		for _, it := range st.items {
			lines += len(strings.Split(it.label, "\n"))
		}
		boxes[i] = box{y, lines*lineH + 2*pad}
		y += boxes[i].height + gap
	}
	height := y
	fmt.Fprintf(b, "<svg id=\"teardown-svg-%d\" role=\"img\" aria-labelledby=\"teardown-title-%d\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\">\n<title id=\"teardown-title-%d\">Teardown order: %d steps, top to bottom</title>\n", id, id, width+120, height, width+120, height, id, len(steps))
	b.WriteString("<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" fill=\"#555\"/></marker><marker id=\"arrow-red\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0L10,5L0,10z\" fill=\"#b00020\"/></marker></defs>\n")
	for i, st := range steps {
		bx := boxes[i]
		fmt.Fprintf(b, "<g class=\"step\" data-order=\"%d\"><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"6\" fill=\"#fafafa\" stroke=\"#888\"/>\n", i+1, left, bx.y, width, bx.height)
		ty := bx.y + pad + 13
		fmt.Fprintf(b, "<text class=\"step-title\" x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>\n", left+pad, ty, h(Line(st.title)))
		for _, it := range st.items {
			color := "#1d1d1f"
			mark := ""
			if len(it.hazard) > 0 {
				color = "#b00020"
				mark = "⚠ "
			}
			itemY[it.id] = ty + lineH
			lines := strings.Split(it.label, "\n")
			for k, l := range lines {
				ty += lineH
				text := h(Line(l))
				if k == 0 {
					text = mark + text
				}
				if k == len(lines)-1 && l == it.origin.String() && it.origin.InFile() {
					// The file and line, linked to the file (relative to
					// where eksdoctor ran, as the report names it).
					fmt.Fprintf(b, "<a class=\"origin\" href=\"%s\"><text x=\"%d\" y=\"%d\" fill=\"#1f4e99\" text-decoration=\"underline\">%s</text></a>\n", h(fileHref(it.origin.File)), left+pad+14, ty, text)
					continue
				}
				fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s</text>\n", left+pad+14, ty, color, text)
			}
			if len(it.hazard) > 0 {
				if a, ok := anchor[cname+"\x00"+it.hazardOf]; ok {
					fmt.Fprintf(b, "<a href=\"#%s\"><text x=\"%d\" y=\"%d\" fill=\"#b00020\" text-decoration=\"underline\">%s</text></a>\n", a, left+width-200, itemY[it.id], h(strings.Join(it.hazard, ", ")))
				}
			}
		}
		b.WriteString("</g>\n")
		if i+1 < len(steps) {
			fmt.Fprintf(b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#555\" stroke-width=\"1.5\" marker-end=\"url(#arrow)\"/>\n", left+width/2, bx.y+bx.height, left+width/2, boxes[i+1].y-2)
		}
	}
	for k, e := range edges {
		from, to := itemY[e[1]], itemY[e[0]]
		x := left + width + 20 + 14*k
		fmt.Fprintf(b, "<path class=\"hazard-edge\" d=\"M%d,%d C%d,%d %d,%d %d,%d\" fill=\"none\" stroke=\"#b00020\" stroke-width=\"1.5\" stroke-dasharray=\"5,4\" marker-end=\"url(#arrow-red)\"><title>%s</title></path>\n",
			left+width, from-5, x+40, from-5, x+40, to-5, left+width, to-5, h(e[2]))
	}
	b.WriteString("</svg>\n")
	b.WriteString("<p class=\"muted\">Each step waits for the one above it. Items outlined in red have a hazard (⚠, linked to the finding); a dashed red arrow points from an item to the one <code>terraform destroy</code> may remove before it.</p>\n")
}

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

func writeFindingHTML(b *strings.Builder, id string, f lint.Finding) {
	h := html.EscapeString
	fmt.Fprintf(b, "<article class=\"finding %s\" id=\"%s\"><h4><span class=\"sev-%s\">%s</span> <a href=\"%s\">%s</a> %s</h4>\n", f.Severity, id, f.Severity, f.Severity, h(CheckDocURL(f.Check)), h(f.Check), h(Line(objectOrFile(f))))
	if o := f.Origin.String(); o != "" {
		fmt.Fprintf(b, "<p class=\"muted\">%s</p>\n", h(Line(o)))
	}
	fmt.Fprintf(b, "<p>%s</p>\n", h(Line(f.Summary)))
	if f.Detail != "" {
		fmt.Fprintf(b, "<pre>%s</pre>\n", h(Block(f.Detail)))
	}
	if f.Fix != nil {
		fmt.Fprintf(b, "<p><b>Fix:</b> %s</p>\n", h(Line(f.Fix.Summary)))
		for _, e := range f.Fix.Edits {
			loc := e.File
			if e.Line > 0 {
				loc = fmt.Sprintf("%s:%d", loc, e.Line)
			}
			fmt.Fprintf(b, "<p class=\"muted\">%s (%s)</p><pre>%s</pre>\n", h(Line(loc)), h(e.Format), h(Block(e.Text)))
		}
	}
	b.WriteString("</article>\n")
}
