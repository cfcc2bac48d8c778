package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/teardown"
)

// Graphs for people who paste them into docs and pull requests: the teardown
// order as Graphviz dot or Mermaid (a box per step holding what it tears down,
// an arrow from each step to the next, and in red the hazards: an item and the
// items Terraform may destroy before it), and one workload's placement as
// Mermaid.

// graphItem is an item of the teardown plan as a node.
type graphItem struct {
	id, label string
	hazard    []string // the checks of the findings at the item
	hazardOf  string   // the object of the first of them
	origin    cluster.Origin
}

type graphStep struct {
	id, title string
	items     []graphItem
}

// teardownGraph lays out a plan: steps, their items, and the hazard edges
// (from, to node IDs, label).
func teardownGraph(plan *teardown.Plan, findings []lint.Finding) ([]graphStep, [][3]string) {
	ids := map[string]string{} // item key → node ID
	key := func(it teardown.Item) string { return it.Name + "\x00" + it.Origin.String() }
	var steps []graphStep
	for i, st := range plan.Steps {
		gs := graphStep{id: fmt.Sprintf("s%d", i+1), title: fmt.Sprintf("%d. %s", i+1, st.Stage.Title())}
		for j, it := range st.Items {
			gi := graphItem{id: fmt.Sprintf("s%di%d", i+1, j+1), label: it.Name, origin: it.Origin}
			if objs := objectNames(it); objs != "" && objs != it.Name {
				gi.label += "\n" + objs
			}
			if o := it.Origin.String(); o != "" {
				gi.label += "\n" + o
			}
			for _, f := range findings {
				if f.Origin.File != "" && f.Origin == it.Origin {
					if gi.hazard == nil {
						gi.hazardOf = f.Object.String()
					}
					gi.hazard = append(gi.hazard, f.Check)
				}
			}
			ids[key(it)] = gi.id
			gs.items = append(gs.items, gi)
		}
		steps = append(steps, gs)
	}
	var edges [][3]string
	for _, h := range plan.Hazards {
		from, ok := ids[key(h.Subject)]
		if !ok {
			continue
		}
		for _, t := range h.Targets {
			if to, ok := ids[key(t)]; ok {
				edges = append(edges, [3]string{from, to, "may be destroyed first"})
			}
		}
	}
	return steps, edges
}

// TeardownDot writes the teardown plan as a Graphviz digraph; name names the
// cluster when the inputs hold several.
func TeardownDot(w io.Writer, plan *teardown.Plan, findings []lint.Finding, name string) error {
	steps, edges := teardownGraph(plan, findings)
	var b strings.Builder
	title := teardownTitle(plan, name)
	fmt.Fprintf(&b, "digraph teardown {\n  label=%s;\n  labelloc=t;\n  compound=true;\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\"];\n  edge [fontname=\"Helvetica\"];\n", dotString(title))
	for _, st := range steps {
		fmt.Fprintf(&b, "  subgraph cluster_%s {\n    label=%s;\n", st.id, dotString(st.title))
		if len(st.items) == 0 {
			fmt.Fprintf(&b, "    %s [label=%s, shape=plaintext];\n", st.id+"i0", dotString("(nothing declared)"))
		}
		for _, it := range st.items {
			attrs := "label=" + dotString(it.label)
			if len(it.hazard) > 0 {
				attrs += ", color=red, penwidth=2, tooltip=" + dotString("hazards: "+strings.Join(it.hazard, ", "))
			}
			fmt.Fprintf(&b, "    %s [%s];\n", it.id, attrs)
		}
		b.WriteString("  }\n")
	}
	for i := 0; i+1 < len(steps); i++ {
		a, c := firstNode(steps[i]), firstNode(steps[i+1])
		fmt.Fprintf(&b, "  %s -> %s [ltail=cluster_%s, lhead=cluster_%s, label=\"then\"];\n", a, c, steps[i].id, steps[i+1].id)
	}
	for _, e := range edges {
		fmt.Fprintf(&b, "  %s -> %s [color=red, style=dashed, fontcolor=red, label=%s];\n", e[1], e[0], dotString(e[2]))
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// teardownTitle is a teardown graph's title; name names the cluster when the
// inputs hold several.
func teardownTitle(plan *teardown.Plan, name string) string {
	title := "teardown order (" + toolCommand(plan.Tool) + ")"
	if name != "" {
		title = name + ": " + title
	}
	return title
}

func firstNode(st graphStep) string {
	if len(st.items) == 0 {
		return st.id + "i0"
	}
	return st.items[0].id
}

// dotString quotes text for dot: control characters escaped as the text
// report escapes them, quotes and backslashes escaped, line breaks as \n.
func dotString(s string) string {
	s = Block(s)
	s = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
	return `"` + s + `"`
}

// TeardownMermaid writes the teardown plan as a Mermaid flowchart.
func TeardownMermaid(w io.Writer, plan *teardown.Plan, findings []lint.Finding, name string) error {
	steps, edges := teardownGraph(plan, findings)
	var b strings.Builder
	title := teardownTitle(plan, name)
	fmt.Fprintf(&b, "%%%% %s\nflowchart TD\n", mermaidComment(title))
	var hazards []string
	for _, st := range steps {
		fmt.Fprintf(&b, "  subgraph %s[%s]\n", st.id, mermaidString(st.title))
		if len(st.items) == 0 {
			fmt.Fprintf(&b, "    %s[%s]\n", st.id+"i0", mermaidString("(nothing declared)"))
		}
		for _, it := range st.items {
			fmt.Fprintf(&b, "    %s[%s]\n", it.id, mermaidString(it.label))
			if len(it.hazard) > 0 {
				hazards = append(hazards, it.id)
			}
		}
		b.WriteString("  end\n")
	}
	for i := 0; i+1 < len(steps); i++ {
		fmt.Fprintf(&b, "  %s -->|then| %s\n", steps[i].id, steps[i+1].id)
	}
	for _, e := range edges {
		fmt.Fprintf(&b, "  %s -.->|%s| %s\n", e[1], mermaidLabel(e[2]), e[0])
	}
	if len(hazards) > 0 {
		b.WriteString("  classDef hazard stroke:#d00,stroke-width:3px\n")
		fmt.Fprintf(&b, "  class %s hazard\n", strings.Join(hazards, ","))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mermaidString quotes a node label: quotes and angle brackets as Mermaid
// entities, line breaks as <br/>, control characters escaped.
func mermaidString(s string) string {
	s = Block(s)
	s = strings.NewReplacer(`"`, "#quot;", "<", "#lt;", ">", "#gt;", "\n", "<br/>").Replace(s)
	return `"` + s + `"`
}

// mermaidLabel is text on an edge (between pipes), quoted so that brackets
// and braces in it are text.
func mermaidLabel(s string) string {
	return `"` + strings.NewReplacer("|", "#124;", `"`, "#quot;", "<", "#lt;", ">", "#gt;").Replace(Line(s)) + `"`
}

// mermaidComment is text after %%, on one line.
func mermaidComment(s string) string { return Line(s) }

// ExplainMermaid writes where one workload's pods can run as a Mermaid
// flowchart: the workload, then per phase each capacity source, the edge
// labelled with its answer and, when it refuses, the first reason.
func ExplainMermaid(w io.Writer, docs []Explanation) error {
	var b strings.Builder
	for di, d := range docs {
		if di > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%%%% eksdoctor explain %s\nflowchart LR\n", mermaidComment(d.Object))
		wid := fmt.Sprintf("w%d", di+1)
		fmt.Fprintf(&b, "  %s[%s]\n", wid, mermaidString(d.Object))
		var fits, refuses []string
		for pi, ph := range d.Phases {
			pid := fmt.Sprintf("%sp%d", wid, pi+1)
			fmt.Fprintf(&b, "  subgraph %s[%s]\n", pid, mermaidString(ph.Phase+" phase: "+ph.Result))
			for si, s := range ph.Sources {
				sid := fmt.Sprintf("%ss%d", pid, si+1)
				fmt.Fprintf(&b, "    %s[%s]\n", sid, mermaidString(s.Kind+" "+s.Name))
				switch s.Result {
				case "fits":
					fits = append(fits, sid)
				case "refuses":
					refuses = append(refuses, sid)
				}
			}
			b.WriteString("  end\n")
			for si, s := range ph.Sources {
				sid := fmt.Sprintf("%ss%d", pid, si+1)
				label := s.Result
				if len(s.Reasons) > 0 {
					label += ": " + truncate(s.Reasons[0], 80)
				}
				arrow := "-->"
				if s.Result != "fits" {
					arrow = "-.->"
				}
				fmt.Fprintf(&b, "  %s %s|%s| %s\n", wid, arrow, mermaidLabel(label), sid)
			}
		}
		if len(fits) > 0 {
			fmt.Fprintf(&b, "  classDef fits stroke:#080,stroke-width:2px\n  class %s fits\n", strings.Join(fits, ","))
		}
		if len(refuses) > 0 {
			fmt.Fprintf(&b, "  classDef refuses stroke:#d00,stroke-dasharray:4\n  class %s refuses\n", strings.Join(refuses, ","))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
