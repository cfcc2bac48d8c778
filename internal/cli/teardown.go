package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/report"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/source"
	"github.com/eksdoctor/eksdoctor/teardown"
)

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
			useLive, err := liveMode(env.prog, liveFlag, lo, args, o.charts)
			if err != nil {
				return err
			}
			set, err := o.report.resolve(env)
			if err != nil {
				return err
			}
			set.anchor(args)
			cs, err := loadClusters(cmd.Context(), env, useLive, lo, args, o, set.assign)
			if err != nil {
				return err
			}
			return teardownAll(env, set, cs)
		},
	}
	o.report.formats = []string{"text", "json", "dot", "mermaid", "html"}
	o.report.paths = true
	o.report.addFlags(cmd)
	cmd.Flags().BoolVar(&liveFlag, "live", false, "plan the teardown of the running cluster instead of files")
	addSourceFlags(cmd, o)
	lo.budget = &o.budget
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
	if set.output == "html" {
		return teardownHTML(env, set, cs)
	}
	if len(cs) == 1 {
		return writeTeardown(env, set, cs[0].Model, "")
	}
	var out bytes.Buffer
	sub := *env
	sub.Stdout = &out
	code := ExitOK
	var docs []json.RawMessage
	for _, c := range cs {
		out.Reset()
		err := writeTeardown(&sub, set, c.Model, c.Name)
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
			// A copy: out is written again for the next cluster.
			docs = append(docs, json.RawMessage(bytes.Clone(bytes.TrimSpace(out.Bytes()))))
			continue
		}
		if set.output == "dot" || set.output == "mermaid" {
			// One graph per cluster, each naming its cluster.
			if len(docs) > 0 {
				fmt.Fprintln(env.Stdout)
			}
			fmt.Fprint(env.Stdout, out.String())
			docs = append(docs, nil)
			continue
		}
		if len(docs) > 0 || out.Len() > 0 {
			fmt.Fprintf(env.Stdout, "%s\n\n%s", report.Bold(color(env, env.Stdout), "Cluster "+report.Line(c.Name)), out.String())
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

// teardownFindings are the hazards of a teardown (a running cluster's, or a
// snapshot's, too: finalizer-stuck), with the settings of the checks that ran.
func teardownFindings(set *settings, m *cluster.Model, s *sim.Simulator) (*settings, []lint.Finding) {
	ids := teardownChecks
	if m.Live != nil {
		ids = append(append([]string(nil), ids...), liveTeardownChecks...)
		set = set.forLive()
	}
	var checks []*lint.Check
	for _, c := range set.checks {
		for _, id := range ids {
			if c.ID == id {
				checks = append(checks, c)
			}
		}
	}
	return set, set.apply(lint.Run(m, s, checks))
}

// teardownHTML writes the HTML report of the teardown: every cluster's plan
// drawn with its hazards, and the capacity map beside it.
func teardownHTML(env *Env, set *settings, cs []*source.Cluster) error {
	var all []lint.Finding
	var sims []*sim.Simulator
	code := ExitOK
	for _, c := range cs {
		s := sim.New(c.Model)
		sims = append(sims, s)
		used, fs := teardownFindings(set, c.Model, s)
		if len(cs) > 1 {
			for i := range fs {
				fs[i].Cluster = c.Name
			}
		}
		code = max(code, used.exitCode(fs))
		all = append(all, set.shown(fs)...)
	}
	lint.Sort(all)
	if err := report.HTML(env.Stdout, htmlClusters(cs, sims, true), all, report.Options{}); err != nil {
		return fmt.Errorf("write teardown plan: %w", err)
	}
	if code != ExitOK {
		return exitError{code}
	}
	return nil
}

// errNothingToTearDown is a cluster of several whose plan is empty.
var errNothingToTearDown = errors.New("nothing to tear down")

// writeTeardown plans the teardown of a model and writes it. The model may come from
// files or from a running cluster: the plan reads NodeClaims and Nodes when the
// model has them. name is the cluster's name when the inputs hold several; an
// empty plan is then not written.
func writeTeardown(env *Env, set *settings, m *cluster.Model, name string) error {
	s := sim.New(m)
	plan := teardown.Now(s)
	set, findings := teardownFindings(set, m, s)
	if name != "" && len(plan.Steps) == 0 && len(findings) == 0 {
		return errNothingToTearDown
	}
	// --min-severity narrows the hazards shown; the exit code counts them all.
	shown := set.shown(findings)
	var err error
	switch set.output {
	case "json":
		err = report.TeardownJSON(env.Stdout, plan, lint.TeardownEdits(m, plan), shown, name)
	case "dot":
		err = report.TeardownDot(env.Stdout, plan, shown, name)
	case "mermaid":
		err = report.TeardownMermaid(env.Stdout, plan, shown, name)
	default:
		err = report.TeardownText(env.Stdout, plan, lint.TeardownEdits(m, plan), shown, color(env, env.Stdout))
	}
	if err != nil {
		return fmt.Errorf("write teardown plan: %w", err)
	}
	if code := set.exitCode(findings); code != ExitOK {
		return exitError{code}
	}
	return nil
}
