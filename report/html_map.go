package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
)

// The capacity map: workloads × capacity sources, a row per workload and
// phase, workloads of one kind with the same answers in a phase collapsed into
// one row.

// htmlMap is a cluster's capacity map.
type htmlMap struct {
	ID         int
	Namespaces []htmlOption
	Columns    []string
	Rows       []htmlMapRow
}

// htmlOption is an option of the namespace filter.
type htmlOption struct{ Value, Label string }

// htmlMapRow is a row of the map as shown: one object, or Count objects of
// one kind (the first maxRowObjects of them listed, More not).
type htmlMapRow struct {
	NS      string // the namespaces, space-separated, for the filter
	Refused string // "1" when no capacity takes the pods
	Phase   string
	Count   int
	Kind    string
	Objects []htmlObject
	More    int
	Result  htmlResult
	Cells   []htmlCell
}

// htmlObject is a workload, linked to its first finding when it has one.
type htmlObject struct{ Text, Anchor string }

// htmlResult says a result with a symbol and a word, and its colour.
type htmlResult struct{ Class, Text string }

// htmlCell is a capacity source's answer: Missing when the workload was not
// weighed against it, Explained when the answer gives reasons.
type htmlCell struct {
	Missing bool
	htmlResult
	Explained bool
	Reasons   string
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

// maxNodeColumns is how many nodes the map shows as columns of their own.
const maxNodeColumns = 12

// maxRowObjects is how many workloads a collapsed row lists.
const maxRowObjects = 200

// capacityMap lays out the map of cluster number id; cname is how findings
// name the cluster, for the links to them.
func capacityMap(id int, workloads []Explanation, cname string, anchor map[string]string) *htmlMap {
	columns, rows, nss := mapRows(workloads)
	rows = expandSmallRows(rows)
	// Each workload's phases side by side, in the order workloads came.
	order := map[string]int{}
	for i, w := range workloads {
		order[w.Object] = i
	}
	sort.SliceStable(rows, func(i, j int) bool { return order[rows[i].objects[0]] < order[rows[j].objects[0]] })
	m := &htmlMap{ID: id, Namespaces: namespaceOptions(nss)}
	for _, c := range columns {
		m.Columns = append(m.Columns, Line(c))
	}
	for _, r := range rows {
		m.Rows = append(m.Rows, mapRowOf(r, columns, cname, anchor))
	}
	return m
}

// mapRows groups the workloads' phases by their answers; it returns the
// columns (capacity sources, in the order met), the rows and the namespaces.
// A running cluster's nodes are one column when there are many: fits when a
// node takes the pods (how many do), else the reason most nodes give.
func mapRows(workloads []Explanation) (columns []string, rows []*mapRow, nss map[string]bool) {
	nodes := map[string]bool{}
	for _, w := range workloads {
		for _, ph := range w.Phases {
			for _, s := range ph.Sources {
				if s.Kind == "node" {
					nodes[s.Name] = true
				}
			}
		}
	}
	collapse := len(nodes) > maxNodeColumns
	seen := map[string]bool{}
	byKey := map[string]*mapRow{}
	nss = map[string]bool{}
	for _, w := range workloads {
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
				sig.WriteString("\x00" + col + "=" + s.Result + ":")
				for i, r := range s.Reasons {
					if i > 0 {
						sig.WriteString(";")
					}
					sig.WriteString(r)
				}
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
	return columns, rows, nss
}

// expandSmallRows keeps a row collapsed only when many are alike; a few are
// shown each on its own.
func expandSmallRows(rows []*mapRow) []*mapRow {
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
	return expanded
}

// namespaceOptions are the filter's choices, sorted. The value is the name
// made visible, as the rows' data-ns: nothing the page holds carries a
// character a reader does not see.
func namespaceOptions(nss map[string]bool) []htmlOption {
	var names []string
	for n := range nss {
		names = append(names, n)
	}
	sort.Strings(names)
	var opts []htmlOption
	for _, n := range names {
		label := n
		if n == "" {
			label = "(cluster-scoped)"
		}
		opts = append(opts, htmlOption{Value: Line(n), Label: Line(label)})
	}
	return opts
}

func mapRowOf(r *mapRow, columns []string, cname string, anchor map[string]string) htmlMapRow {
	var rowNS []string
	for n := range r.nss {
		rowNS = append(rowNS, Line(n))
	}
	sort.Strings(rowNS)
	row := htmlMapRow{NS: strings.Join(rowNS, " "), Refused: "0", Phase: Line(r.phase), Result: resultOf(r.result)}
	if r.result == "refuses" {
		row.Refused = "1"
	}
	objects := r.objects
	if len(objects) > 1 {
		row.Count, row.Kind = len(objects), Line(r.kind)
		if len(objects) > maxRowObjects {
			row.More = len(objects) - maxRowObjects
			objects = objects[:maxRowObjects]
		}
	}
	for _, o := range objects {
		row.Objects = append(row.Objects, htmlObject{Text: Line(o), Anchor: anchor[cname+"\x00"+o]})
	}
	for _, c := range columns {
		s, ok := r.cells[c]
		if !ok {
			row.Cells = append(row.Cells, htmlCell{Missing: true})
			continue
		}
		row.Cells = append(row.Cells, htmlCell{htmlResult: resultOf(s.Result), Explained: len(s.Reasons) > 0, Reasons: Line(strings.Join(s.Reasons, "; "))})
	}
	return row
}

// collapseNodes makes one "nodes" source of a placement's node verdicts.
func collapseNodes(sources []ExplainSource) []ExplainSource {
	var out []ExplainSource
	var nodes nodeCount
	for _, s := range sources {
		if s.Kind != "node" {
			out = append(out, s)
			continue
		}
		nodes.total++
		switch {
		case s.Result == "fits":
			nodes.fit++
		case len(s.Reasons) > 0:
			nodes.reason(s.Reasons[0])
		}
	}
	if nodes.total == 0 {
		return out
	}
	return append([]ExplainSource{nodes.source()}, out...)
}

// nodeCount is what the map's one "nodes" source says of many nodes: how
// many take the pods, else the reason most give.
type nodeCount struct {
	total, fit int
	reasons    map[string]int
}

func (n *nodeCount) reason(r string) {
	if n.reasons == nil {
		n.reasons = map[string]int{}
	}
	n.reasons[r]++
}

// add counts a node's verdict as collapseNodes counts its rendered source.
func (n *nodeCount) add(v sim.Verdict) {
	n.total++
	switch {
	case v.Result == sim.Fits:
		n.fit++
	case len(v.Reasons) > 0:
		n.reason(v.Reasons[0].Text())
	}
}

func (n *nodeCount) source() ExplainSource {
	s := ExplainSource{Kind: "nodes", Name: fmt.Sprintf("(%d)", n.total)}
	if n.fit > 0 {
		s.Result = "fits"
		s.Reasons = []string{fmt.Sprintf("%d of %d nodes take the pods", n.fit, n.total)}
		return s
	}
	s.Result = "refuses"
	best, bestN := "", 0
	for r, c := range n.reasons {
		if c > bestN || c == bestN && r < best {
			best, bestN = r, c
		}
	}
	s.Reasons = []string{fmt.Sprintf("0/%d nodes take the pods; %d: %s", n.total, bestN, best)}
	return s
}

// resultOf says a result with a symbol and a word, never by colour alone.
func resultOf(r string) htmlResult {
	switch r {
	case "fits":
		return htmlResult{Class: "fits", Text: "✓ fits"}
	case "refuses":
		return htmlResult{Class: "refuses", Text: "✗ refuses"}
	}
	return htmlResult{Class: "unknown", Text: "? " + Line(r)}
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
