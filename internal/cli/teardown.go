package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/report"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/source"
)

func init() { extraCommands = append(extraCommands, newTeardownCmd) }

// teardownChecks are the checks whose findings are the plan's hazards.
var teardownChecks = []string{"teardown-order", "teardown-orphans"}

func newTeardownCmd(env *Env) *cobra.Command {
	o := &checkOptions{}
	lo := &liveOptions{}
	var liveFlag bool
	cmd := &cobra.Command{
		Use:   "teardown [PATH...]",
		Short: "Print the order in which to tear the configuration down, with its hazards",
		Long: `teardown answers "in what order must I tear this down?" so that the Karpenter controller is
still running while it finalizes what it created: NodePools (waiting until no NodeClaim
remains), EC2NodeClasses, the Karpenter release, its IAM role, queue and EventBridge rules, the
node group or Fargate profile it runs on, the cluster, the network. It names your own Terraform
addresses or manifest objects, lists the hazards (teardown-order, teardown-orphans) and the
depends_on and wait edits that make 'terraform destroy' follow the order; for manifests and
eksctl it prints the kubectl, helm and eksctl commands in order.

For a running cluster it plans from what the cluster holds now: the NodePools with their
NodeClaims (and the finalizers they carry), the EC2NodeClasses, the Karpenter release, the
node groups and Fargate profiles the controller runs on; it says what blocks each step now (a
NodeClaim stuck on its finalizer, the controller not ready) and prints the kubectl, helm and aws
commands to run. eksdoctor only prints them: it never changes the cluster.

The exit code is 1 when a hazard is at or above --fail-on (default error).

` + liveHelp,
		Example: `  eksdoctor teardown ./infra
  eksdoctor teardown --live --context prod
  kubectl eksdoctor teardown -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.report.output == "sarif" {
				return usagef("unknown output format %q (valid: text, json)", o.report.output)
			}
			useLive, err := liveMode(env.prog, liveFlag, lo, args, o.charts)
			if err != nil {
				return err
			}
			set, err := o.report.resolve(env, useLive)
			if err != nil {
				return err
			}
			cs, err := loadClusters(cmd.Context(), env, useLive, lo, args, o)
			if err != nil {
				return err
			}
			return teardownAll(env, set, cs)
		},
	}
	o.report.addFlags(cmd.Flags())
	cmd.Flags().Lookup("output").Usage = "output format: text or json"
	cmd.Flags().BoolVar(&liveFlag, "live", false, "plan the teardown of the running cluster instead of files")
	addSourceFlags(cmd, o)
	lo.addFlags(cmd.Flags())
	return cmd
}

// liveTeardownChecks are the hazards of a running cluster's teardown: objects
// already held by a finalizer no controller will remove.
var liveTeardownChecks = []string{"finalizer-stuck"}

// teardownAll plans the teardown of every cluster of the inputs: one plan when there
// is one cluster; when there are several, each cluster's plan under its name (in
// JSON, a list of plans, each naming its cluster), leaving out clusters with
// nothing to tear down.
func teardownAll(env *Env, set *settings, cs []*source.Cluster) error {
	if len(cs) == 1 {
		return teardown(env, set, cs[0].Model, "")
	}
	var out bytes.Buffer
	sub := *env
	sub.Stdout = &out
	code := ExitOK
	var docs []json.RawMessage
	for _, c := range cs {
		out.Reset()
		err := teardown(&sub, set, c.Model, c.Name)
		var ee exitError
		switch {
		case errors.As(err, &ee):
			code = max(code, ee.code)
		case errors.Is(err, errNothingToTearDown):
			continue
		case err != nil:
			return err
		}
		if set.output == "json" {
			docs = append(docs, json.RawMessage(bytes.TrimSpace(out.Bytes())))
			continue
		}
		if len(docs) > 0 || out.Len() > 0 {
			fmt.Fprintf(env.Stdout, "%s\n\n%s", bold(color(env, env.Stdout), "Cluster "+report.Line(c.Name)), out.String())
			docs = append(docs, nil)
		}
	}
	if set.output == "json" {
		if docs == nil {
			docs = []json.RawMessage{}
		}
		b, err := json.MarshalIndent(docs, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "%s\n", b)
	}
	if code != ExitOK {
		return exitError{code}
	}
	return nil
}

// errNothingToTearDown is a cluster of several whose plan is empty.
var errNothingToTearDown = errors.New("nothing to tear down")

// teardown plans the teardown of a model and writes it. The model may come from
// files or from a running cluster: the plan reads NodeClaims and Nodes when the
// model has them. name is the cluster's name when the inputs hold several; an
// empty plan is then not written.
func teardown(env *Env, set *settings, m *cluster.Model, name string) error {
	s := sim.New(m)
	plan := s.Teardown()
	ids := teardownChecks
	var blockers map[sim.Stage][]string
	if m.Live != nil {
		blockers = liveTeardown(m, plan)
		ids = append(append([]string(nil), ids...), liveTeardownChecks...)
	}
	var checks []*lint.Check
	for _, c := range set.checks {
		for _, id := range ids {
			if c.ID == id {
				checks = append(checks, c)
			}
		}
	}
	findings := set.apply(lint.Run(m, s, checks))
	if name != "" && len(plan.Steps) == 0 && len(findings) == 0 {
		return errNothingToTearDown
	}
	var err error
	if set.output == "json" {
		err = writeTeardownJSON(env.Stdout, plan, findings, blockers, name)
	} else {
		err = writeTeardownText(env.Stdout, plan, findings, color(env, env.Stdout), blockers)
	}
	if err != nil {
		return fmt.Errorf("write teardown plan: %w", err)
	}
	if code := set.exitCode(findings); code != ExitOK {
		return exitError{code}
	}
	return nil
}

// ---- text ----

func toolCommand(tool string) string {
	switch tool {
	case "terraform":
		return "terraform destroy"
	case "eksctl":
		return "eksctl delete cluster"
	}
	return "kubectl and helm"
}

func writeTeardownText(w io.Writer, plan *sim.Plan, findings []lint.Finding, paint bool, blockers map[sim.Stage][]string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", bold(paint, "Teardown order ("+toolCommand(plan.Tool)+")"))
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
			if it.Manager != "" && it.Manager != plan.Tool && it.Manager != "terraform" {
				line += ", managed by " + it.Manager
			}
			if org := it.Origin.String(); org != "" {
				line += "  " + org
			}
			b.WriteString(report.Line(line) + "\n")
			for _, l := range it.Live {
				b.WriteString("       still present: " + report.Line(l) + "\n")
			}
		}
		for _, bl := range blockers[st.Stage] {
			fmt.Fprintf(&b, "   blocked now: %s\n", report.Line(bl))
		}
		if st.Wait != "" {
			fmt.Fprintf(&b, "   wait until %s\n", report.Line(st.Wait))
		}
		for _, c := range st.Commands {
			fmt.Fprintf(&b, "   $ %s\n", report.Line(c))
		}
	}
	if len(findings) > 0 {
		fmt.Fprintf(&b, "\n%s\n", bold(paint, "Hazards"))
		for _, f := range findings {
			fmt.Fprintf(&b, "  %s %s  %s\n    %s\n", f.Severity, f.Check, report.Line(f.Origin.String()), report.Line(f.Summary))
		}
	}
	if len(plan.Edits) > 0 {
		fmt.Fprintf(&b, "\n%s\n", bold(paint, "Edits that make terraform destroy follow this order"))
		for _, e := range plan.Edits {
			fmt.Fprintf(&b, "  %s  %s\n", report.Line(e.Origin.String()), report.Line(e.Address))
			for _, l := range strings.Split(strings.TrimRight(report.Block(e.HCL()), "\n"), "\n") {
				b.WriteString("    " + l + "\n")
			}
		}
	}
	if plan.Tool == "terraform" {
		b.WriteString("\nThen run terraform destroy")
		if len(plan.Edits) > 0 {
			b.WriteString(" once the edits are applied")
		}
		b.WriteString(".\n")
	}
	for _, n := range plan.Notes {
		fmt.Fprintf(&b, "\nNote: %s.\n", report.Line(n))
	}
	_, err := io.WriteString(w, report.Guard(b.String()))
	return err
}

func objectNames(it sim.Item) string {
	var out []string
	for _, o := range it.Objects {
		out = append(out, o.String())
	}
	return strings.Join(out, ", ")
}

// ---- JSON ----

// teardownSchemaVersion versions the JSON plan like the check report.
const teardownSchemaVersion = 1

type teardownJSON struct {
	Version int `json:"version"`
	// Cluster names the cluster when the inputs hold several.
	Cluster  string           `json:"cluster,omitempty"`
	Tool     string           `json:"tool"`
	Steps    []teardownStep   `json:"steps"`
	Hazards  []teardownHazard `json:"hazards"`
	Edits    []teardownEdit   `json:"edits"`
	Notes    []string         `json:"notes"`
	Summary  map[string]int   `json:"summary"`
	Commands []string         `json:"commands"`
}

type teardownStep struct {
	Order    int            `json:"order"`
	Stage    string         `json:"stage"`
	Title    string         `json:"title"`
	Items    []teardownItem `json:"items"`
	Wait     string         `json:"wait,omitempty"`
	Commands []string       `json:"commands,omitempty"`
	// Blockers say what keeps the step from completing now (running clusters).
	Blockers []string `json:"blockers,omitempty"`
}

type teardownItem struct {
	Name    string       `json:"name"`
	Address string       `json:"address,omitempty"`
	Objects []string     `json:"objects,omitempty"`
	Manager string       `json:"manager,omitempty"`
	Origin  teardownFile `json:"origin"`
	Live    []string     `json:"live,omitempty"`
}

type teardownFile struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

type teardownHazard struct {
	Check    string       `json:"check"`
	Severity string       `json:"severity"`
	Object   teardownRef  `json:"object"`
	Origin   teardownFile `json:"origin"`
	Summary  string       `json:"summary"`
	Detail   string       `json:"detail"`
	Fix      *teardownFix `json:"fix,omitempty"`
}

type teardownRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

type teardownFix struct {
	Summary string         `json:"summary"`
	Edits   []teardownEdit `json:"edits"`
}

type teardownEdit struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Format  string `json:"format"`
	Address string `json:"address,omitempty"`
	Text    string `json:"text"`
}

func writeTeardownJSON(w io.Writer, plan *sim.Plan, findings []lint.Finding, blockers map[sim.Stage][]string, name string) error {
	out := teardownJSON{
		Version: teardownSchemaVersion, Tool: plan.Tool, Cluster: name,
		Steps: []teardownStep{}, Hazards: []teardownHazard{}, Edits: []teardownEdit{}, Notes: []string{}, Commands: []string{},
	}
	for i, st := range plan.Steps {
		js := teardownStep{Order: i + 1, Stage: st.Stage.String(), Title: st.Stage.Title(), Wait: st.Wait, Commands: st.Commands, Items: []teardownItem{}, Blockers: blockers[st.Stage]}
		for _, it := range st.Items {
			ji := teardownItem{Name: it.Name, Address: it.Address, Manager: it.Manager, Origin: teardownFile{File: it.Origin.File, Line: it.Origin.Line}, Live: it.Live}
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
		h := teardownHazard{
			Check: f.Check, Severity: f.Severity.String(),
			Object:  teardownRef{Kind: f.Object.Kind, Namespace: f.Object.Namespace, Name: f.Object.Name},
			Origin:  teardownFile{File: f.Origin.File, Line: f.Origin.Line},
			Summary: f.Summary, Detail: f.Detail,
		}
		if f.Fix != nil {
			h.Fix = &teardownFix{Summary: f.Fix.Summary, Edits: []teardownEdit{}}
			for _, e := range f.Fix.Edits {
				h.Fix.Edits = append(h.Fix.Edits, teardownEdit{File: e.File, Line: e.Line, Format: e.Format, Text: e.Text})
			}
		}
		out.Hazards = append(out.Hazards, h)
	}
	for _, e := range plan.Edits {
		out.Edits = append(out.Edits, teardownEdit{File: e.Origin.File, Line: e.Origin.Line, Format: lint.FormatHCL, Address: e.Address, Text: e.HCL()})
	}
	out.Notes = append(out.Notes, plan.Notes...)
	c := lint.Count(findings)
	out.Summary = map[string]int{"error": c[lint.Error], "warning": c[lint.Warning], "info": c[lint.Info]}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}
