package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/teardown"
)

func toolCommand(tool string) string {
	switch tool {
	case "terraform":
		return "terraform destroy"
	case "eksctl":
		return "eksctl delete cluster"
	}
	return "kubectl and helm"
}

// TeardownText writes a teardown plan, the edits that make terraform destroy
// follow it, and its hazards as text; paint adds terminal bold to the
// headings.
func TeardownText(w io.Writer, plan *teardown.Plan, edits []lint.TeardownEdit, findings []lint.Finding, paint bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", Bold(paint, "Teardown order ("+toolCommand(plan.Tool)+")"))
	if len(plan.Steps) == 0 {
		b.WriteString("\nNothing in the inputs to tear down.\n")
	}
	for i, st := range plan.Steps {
		fmt.Fprintf(&b, "\n%d. %s\n", i+1, st.Stage.Title())
		for _, it := range st.Items {
			line := "   - " + it.Name
			if objs := objectNames(it); objs != "" && objs != it.Name {
				line += " (" + objs + ")"
			}
			switch {
			case it.Manager == cluster.ManagerCommand:
				line += ", applied by a local-exec command (no destroy-time command deletes it)"
			case it.Manager != "" && it.Manager != plan.Tool && it.Manager != "terraform":
				line += ", managed by " + it.Manager
			}
			if org := it.Origin.String(); org != "" {
				line += "  " + org
			}
			b.WriteString(Line(line) + "\n")
			for _, l := range it.Live {
				b.WriteString("       still present: " + Line(l) + "\n")
			}
		}
		for _, bl := range plan.Blockers[st.Stage] {
			fmt.Fprintf(&b, "   blocked now: %s\n", Line(bl))
		}
		if st.Wait != "" {
			fmt.Fprintf(&b, "   wait until %s\n", Line(st.Wait))
		}
		for _, c := range st.Commands {
			fmt.Fprintf(&b, "   $ %s\n", Line(c))
		}
	}
	if len(findings) > 0 {
		fmt.Fprintf(&b, "\n%s\n", Bold(paint, "Hazards"))
		for _, f := range findings {
			fmt.Fprintf(&b, "  %s %s  %s\n    %s\n", f.Severity, f.Check, Line(f.Origin.String()), Line(f.Summary))
		}
	}
	if len(edits) > 0 {
		fmt.Fprintf(&b, "\n%s\n", Bold(paint, "Edits that make terraform destroy follow this order"))
		for _, e := range edits {
			org := cluster.Origin{File: e.File, Line: e.Line}
			fmt.Fprintf(&b, "  %s  %s\n", Line(org.String()), Line(e.Address))
			for _, l := range strings.Split(strings.TrimRight(Block(e.Text), "\n"), "\n") {
				b.WriteString("    " + l + "\n")
			}
		}
	}
	if plan.Tool == "terraform" {
		b.WriteString("\nThen run terraform destroy")
		if len(edits) > 0 {
			b.WriteString(" once the edits are applied")
		}
		b.WriteString(".\n")
	}
	for _, n := range plan.Notes {
		fmt.Fprintf(&b, "\nNote: %s.\n", Line(n))
	}
	_, err := io.WriteString(w, Guard(b.String()))
	return err
}

func objectNames(it teardown.Item) string {
	var out []string
	for _, o := range it.Objects {
		out = append(out, o.String())
	}
	return strings.Join(out, ", ")
}

// ---- JSON ----

// teardownSchemaVersion versions the JSON plan like the check
const teardownSchemaVersion = 1

// TeardownPlan is the JSON document of a teardown plan.
type TeardownPlan struct {
	Version int `json:"version"`
	// Cluster names the cluster when the inputs hold several.
	Cluster  string           `json:"cluster,omitempty"`
	Tool     string           `json:"tool"`
	Steps    []TeardownStep   `json:"steps"`
	Hazards  []TeardownHazard `json:"hazards"`
	Edits    []TeardownEdit   `json:"edits"`
	Notes    []string         `json:"notes"`
	Summary  map[string]int   `json:"summary"`
	Commands []string         `json:"commands"`
}

// TeardownStep is one step of the plan.
type TeardownStep struct {
	Order    int            `json:"order"`
	Stage    string         `json:"stage"`
	Title    string         `json:"title"`
	Items    []TeardownItem `json:"items"`
	Wait     string         `json:"wait,omitempty"`
	Commands []string       `json:"commands,omitempty"`
	// Blockers say what keeps the step from completing now (running clusters).
	Blockers []string `json:"blockers,omitempty"`
}

// TeardownItem is one thing a step tears down.
type TeardownItem struct {
	Name    string       `json:"name"`
	Address string       `json:"address,omitempty"`
	Objects []string     `json:"objects,omitempty"`
	Manager string       `json:"manager,omitempty"`
	Origin  TeardownFile `json:"origin"`
	Live    []string     `json:"live,omitempty"`
}

// TeardownFile is a place in the inputs.
type TeardownFile struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

// TeardownHazard is a finding about the teardown.
type TeardownHazard struct {
	Check    string       `json:"check"`
	Severity string       `json:"severity"`
	Object   TeardownRef  `json:"object"`
	Origin   TeardownFile `json:"origin"`
	Summary  string       `json:"summary"`
	Detail   string       `json:"detail"`
	Fix      *TeardownFix `json:"fix,omitempty"`
}

// TeardownRef is the object a hazard is about.
type TeardownRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// TeardownFix is the change that removes a hazard.
type TeardownFix struct {
	Summary string         `json:"summary"`
	Edits   []TeardownEdit `json:"edits"`
}

// TeardownEdit is one edit of a fix.
type TeardownEdit struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Format  string `json:"format"`
	Address string `json:"address,omitempty"`
	Text    string `json:"text"`
}

// TeardownJSON writes a teardown plan, the edits that make terraform destroy
// follow it, and its hazards as JSON; cluster names the cluster when the
// inputs hold several.
func TeardownJSON(w io.Writer, plan *teardown.Plan, edits []lint.TeardownEdit, findings []lint.Finding, name string) error {
	out := TeardownPlan{
		Version: teardownSchemaVersion, Tool: plan.Tool, Cluster: name,
		Steps: []TeardownStep{}, Hazards: []TeardownHazard{}, Edits: []TeardownEdit{}, Notes: []string{}, Commands: []string{},
	}
	for i, st := range plan.Steps {
		js := TeardownStep{Order: i + 1, Stage: st.Stage.String(), Title: st.Stage.Title(), Wait: st.Wait, Commands: st.Commands, Items: []TeardownItem{}, Blockers: plan.Blockers[st.Stage]}
		for _, it := range st.Items {
			ji := TeardownItem{Name: it.Name, Address: it.Address, Manager: it.Manager, Origin: TeardownFile{File: it.Origin.File, Line: it.Origin.Line}, Live: it.Live}
			for _, o := range it.Objects {
				ji.Objects = append(ji.Objects, o.String())
			}
			js.Items = append(js.Items, ji)
		}
		out.Steps = append(out.Steps, js)
		out.Commands = append(out.Commands, st.Commands...)
	}
	if plan.Tool == "terraform" {
		out.Commands = append(out.Commands, "terraform destroy")
	}
	for _, f := range findings {
		h := TeardownHazard{
			Check: f.Check, Severity: f.Severity.String(),
			Object:  TeardownRef{Kind: f.Object.Kind, Namespace: f.Object.Namespace, Name: f.Object.Name},
			Origin:  TeardownFile{File: f.Origin.File, Line: f.Origin.Line},
			Summary: f.Summary, Detail: f.Detail,
		}
		if f.Fix != nil {
			h.Fix = &TeardownFix{Summary: f.Fix.Summary, Edits: []TeardownEdit{}}
			for _, e := range f.Fix.Edits {
				h.Fix.Edits = append(h.Fix.Edits, TeardownEdit{File: e.File, Line: e.Line, Format: e.Format, Text: e.Text})
			}
		}
		out.Hazards = append(out.Hazards, h)
	}
	for _, e := range edits {
		out.Edits = append(out.Edits, TeardownEdit{File: e.File, Line: e.Line, Format: e.Format, Address: e.Address, Text: e.Text})
	}
	out.Notes = append(out.Notes, plan.Notes...)
	c := lint.Count(findings)
	out.Summary = map[string]int{"error": c[lint.Error], "warning": c[lint.Warning], "info": c[lint.Info]}
	return EncodeJSON(w, out)
}
