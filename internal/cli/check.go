package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sort"

	"github.com/spf13/cobra"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/fixapply"
	"github.com/eksdoctor/eksdoctor/internal/outputfs"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/report"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/source"
	"github.com/eksdoctor/eksdoctor/source/live"
	"github.com/eksdoctor/eksdoctor/teardown"
)

type checkOptions struct {
	report  reportOptions
	charts  []string
	values  []string
	release string
	ns      string
	tfvars  []string
	budget  budgetFlags
}

func (o *checkOptions) sourceOptions() source.Options {
	return source.Options{Charts: o.charts, Values: o.values, Release: o.release, Namespace: o.ns, TFVars: o.tfvars, Budget: live.Budget(o.budget)}
}

func newCheckCmd(env *Env) *cobra.Command {
	o := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check [PATH...]",
		Short: "Analyse manifests, eksctl configs, Terraform, plan JSON, charts and snapshots",
		Long: `check reads every path (files or directories; default: the working directory) and reports
what will go wrong once it is applied: workloads that fit no capacity, components that need
Karpenter capacity before Karpenter runs, invalid Karpenter objects, and more (see
'eksdoctor checks').`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && len(o.charts) == 0 {
				args = []string{"."}
			}
			set, err := o.report.resolve(env)
			if err != nil {
				return err
			}
			set.anchor(args)
			roomFor(env, args)
			opts := o.sourceOptions()
			opts.Assign = set.assign
			cs, err := source.Load(args, opts)
			if err != nil {
				return loadError(err)
			}
			return analyse(env, set, cs)
		},
	}
	o.report.paths = true
	o.report.addFlags(cmd)
	addSourceFlags(cmd, o)
	return cmd
}

// newReportCmd is check with the HTML report by default: `eksdoctor report
// snapshot.json > report.html`.
func newReportCmd(env *Env) *cobra.Command {
	cmd := newCheckCmd(env)
	cmd.Use = "report [PATH...]"
	cmd.Short = "Write the HTML report of files or a snapshot (check -o html)"
	cmd.Long = `report analyses what 'eksdoctor check' analyses (a snapshot written by 'eksdoctor snapshot',
Terraform, manifests, charts) and writes the HTML report: the summary, the capacity map, the
teardown order drawn with its hazards, and every finding. -o chooses another format.`
	cmd.Example = "  eksdoctor report snapshot.json > report.html\n  eksdoctor report ./infra > report.html"
	f := cmd.Flags().Lookup("output")
	f.DefValue = "html"
	_ = f.Value.Set("html")
	return cmd
}

func addSourceFlags(cmd *cobra.Command, o *checkOptions) {
	fs := cmd.Flags()
	fs.StringSliceVar(&o.charts, "chart", nil, "render a local Helm chart directory or .tgz (repeatable)")
	fs.StringSliceVarP(&o.values, "values", "f", nil, "values file for --chart (repeatable)")
	fs.StringVar(&o.release, "release", "", "release name for --chart (default: the chart name)")
	fs.StringVar(&o.ns, "chart-namespace", "", "namespace for --chart (default: default)")
	fs.StringSliceVar(&o.tfvars, "var-file", nil, "extra Terraform variable file (repeatable)")
	o.budget.addFlags(fs)
}

func loadError(err error) error {
	return usageError{err}
}

// analyse runs the checks on every cluster (the live checks too on a snapshot's)
// and writes one report; it returns an exitError carrying the exit code. When the
// inputs hold several clusters, each finding names its cluster.
func analyse(env *Env, set *settings, cs []*source.Cluster) error {
	return finish(env, runChecks(set, cs), cs)
}

// finish writes the report of a run of the checks and returns the exit code
// it earns.
func finish(env *Env, r checkRun, cs []*source.Cluster) error {
	set, findings := r.set, r.findings
	if err := write(env, r, cs); err != nil {
		return err
	}
	if blind := readNothing(cs); blind != "" {
		// A run that saw nothing must not pass as a clean bill of health.
		fmt.Fprintf(env.Stderr, "%s: nothing could be analysed: %s\n", progName(env.prog), blind)
		return exitError{ExitUsage}
	}
	if code := set.exitCode(findings); code != ExitOK {
		return exitError{code}
	}
	return nil
}

// htmlClusters is what the HTML report shows of each cluster: every
// workload's placement (a running cluster's in the steady phase only: its
// nodes are the capacity of every phase) and, when withTeardown is set, its teardown plan.
// sims are the clusters' simulators, which the checks already asked.
func htmlClusters(cs []*source.Cluster, sims []*sim.Simulator, withTeardown bool) []report.HTMLCluster {
	out := make([]report.HTMLCluster, len(cs))
	for i, c := range cs {
		m, s := c.Model, sims[i]
		phases := cluster.Phases
		if m.Live != nil {
			phases = []cluster.Phase{cluster.Steady}
		}
		hc := report.HTMLCluster{Name: c.Name, Inputs: inputsOf(m)}
		collapse := collapsesNodes(s, m.Workloads, phases)
		for _, w := range m.Workloads {
			d := report.Explanation{Object: w.Ref().String(), Origin: report.OriginOf(w.Object.Origin)}
			for _, ph := range phases {
				d.Phases = append(d.Phases, report.MapPhase(s.Place(w, ph), collapse))
			}
			hc.Workloads = append(hc.Workloads, d)
		}
		if withTeardown {
			hc.Teardown = teardown.Now(s)
		}
		out[i] = hc
	}
	return out
}

// collapsesNodes reports whether the capacity map shows the nodes the
// workloads' placements name as one column: whether they name more than the
// map shows one by one (it stops counting there).
func collapsesNodes(s *sim.Simulator, ws []*cluster.Workload, phases []cluster.Phase) bool {
	nodes := map[string]bool{}
	for _, w := range ws {
		for _, ph := range phases {
			for _, v := range s.Place(w, ph).Verdicts {
				if v.Source.Kind == cluster.KindNode {
					nodes[v.Source.Name] = true
				}
			}
			if report.CollapsesNodes(len(nodes)) {
				return true
			}
		}
	}
	return false
}

// inputsOf are the files a model was read from, sorted (a running cluster's
// context for its objects).
func inputsOf(m *cluster.Model) []string {
	seen := map[string]bool{}
	for _, o := range m.Objects {
		if o.Origin.File != "" {
			seen[o.Origin.File] = true
		}
	}
	for _, f := range m.Inputs {
		seen[f] = true
	}
	out := make([]string, 0, len(seen))
	for f := range seen {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// checkRun is what the checks found in a run: the settings of the checks that
// ran, the findings to report, the suppressed ones (the baseline's too), and
// each cluster's simulator.
type checkRun struct {
	set                  *settings
	findings, suppressed []lint.Finding
	sims                 []*sim.Simulator
}

// runChecks runs the checks on every cluster (the live checks too on a
// running cluster or a snapshot's: a snapshot reports what 'eksdoctor
// cluster' reported).
func runChecks(set *settings, cs []*source.Cluster) checkRun {
	r := checkRun{set: set}
	for _, c := range cs {
		checks := set.checks
		if c.Model.Live != nil {
			r.set = set.forLive() // the report lists the checks that ran
			checks = r.set.checks
		}
		s := sim.New(c.Model)
		r.sims = append(r.sims, s)
		fs, ss := lint.RunAll(c.Model, s, checks)
		if len(cs) > 1 {
			for i := range fs {
				fs[i].Cluster = c.Name
			}
			for i := range ss {
				ss[i].Cluster = c.Name
			}
		}
		r.findings = append(r.findings, fs...)
		r.suppressed = append(r.suppressed, ss...)
	}
	lint.Sort(r.findings)
	lint.Sort(r.suppressed)
	r.findings, r.suppressed = set.againstBaseline(set.apply(r.findings), set.apply(r.suppressed))
	return r
}

// shown is the run as the reports show it: the findings (and suppressed
// ones) at or above --min-severity, the report saying how many it leaves out.
func (r checkRun) shown() checkRun {
	if r.set.minSeverity == 0 {
		return r
	}
	shown := r.set.shown(r.findings)
	set := *r.set
	if hidden := len(r.findings) - len(shown); hidden > 0 {
		set.narrowed = append(slices.Clip(set.narrowed), fmt.Sprintf("--min-severity %s leaves out %d finding(s) below it (--fail-on counts them)", r.set.minSeverity, hidden))
	}
	r.set, r.findings, r.suppressed = &set, shown, r.set.shown(r.suppressed)
	return r
}

// readNothing says why, when every cluster is a running cluster (or its
// snapshot) of which not one resource could be read; "" otherwise.
func readNothing(cs []*source.Cluster) string {
	if len(cs) == 0 {
		return ""
	}
	for _, c := range cs {
		m := c.Model
		if m.Live == nil || len(m.Live.Skipped) == 0 || len(m.Objects) > 0 || len(m.Nodes) > 0 || len(m.Pods) > 0 {
			return ""
		}
	}
	return fmt.Sprintf("no resource of the cluster could be read (%d refused or not served: see the live-resource-skipped findings)", len(cs[0].Model.Live.Skipped))
}

func write(env *Env, r checkRun, cs []*source.Cluster) error {
	r = r.shown()
	if err := writeFormat(env, env.Stdout, r.set.output, r, cs); err != nil {
		return err
	}
	for _, w := range r.set.writes {
		err := outputfs.WriteWith(w.file, 0o644, func(f io.Writer) error {
			return writeFormat(env, f, w.format, r, cs)
		})
		if outputfs.IsRefused(err) {
			return usagef("--write: %v", err)
		}
		if err != nil {
			return fmt.Errorf("--write: %w", err)
		}
	}
	return nil
}

// writeFormat writes the report in one format.
func writeFormat(env *Env, w io.Writer, format string, r checkRun, cs []*source.Cluster) error {
	set, findings, opts := r.set, r.findings, r.set.options(r.suppressed)
	var err error
	switch format {
	case "html":
		err = report.HTML(w, htmlClusters(cs, r.sims, true), findings, opts)
	case "json":
		err = report.JSON(w, findings, opts)
	case "sarif":
		opts.Changes = fixChanges()
		if wd, err := env.Getwd(); err == nil {
			opts.Root = wd
		}
		err = report.SARIF(w, findings, set.checks, identity(env).Version, opts)
	case "junit":
		err = report.JUnit(w, findings, set.checks, opts)
	case "github":
		err = report.GitHub(w, findings, opts)
	case "markdown":
		err = report.Markdown(w, findings, opts)
	case "compact":
		// Colored as the text report is: on a terminal, without NO_COLOR.
		opts.Color = color(env, w)
		err = report.Compact(w, findings, opts)
	default:
		opts.Color = color(env, w)
		if set.summary {
			err = report.Summary(w, findings, opts)
		} else {
			err = report.Text(w, findings, opts)
		}
	}
	if err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// fixChanges works out what each finding's fix does to the lines of its files
// (for SARIF fixes); nil for a fix that cannot be applied as it stands. Each
// fix reads and edits its files again, so a budget bounds the bytes all of
// them may go through: an input with thousands of fixes in one file gets its
// first fixes as SARIF fixes, and the rest (and those in files over 1 MiB) as
// text only.
func fixChanges() func(lint.Finding) []report.TextChange {
	left := int64(fixChangesBudget)
	return func(f lint.Finding) []report.TextChange {
		if f.Fix == nil || left <= 0 {
			return nil
		}
		for _, e := range f.Fix.Edits {
			if e.Format == lint.FormatShell {
				continue
			}
			st, err := os.Stat(e.File)
			if err != nil || st.Size() > fixChangesFileLimit {
				return nil
			}
			left -= st.Size()
		}
		if left < 0 {
			return nil
		}
		cs, err := fixapply.Changes("", f.Fix.Edits)
		if err != nil {
			return nil
		}
		out := make([]report.TextChange, len(cs))
		for i, c := range cs {
			out[i] = report.TextChange{File: c.File, StartLine: c.Start, EndLine: c.End, Text: c.Text}
		}
		return out
	}
}

// fixChangesBudget is how many bytes of files the SARIF fixes of one run may
// read and edit, fixChangesFileLimit the largest file one may edit (editing
// parses the whole file).
const (
	fixChangesBudget    = 16 << 20
	fixChangesFileLimit = 1 << 20
)

// color is on for a terminal unless NO_COLOR is set (https://no-color.org).
func color(env *Env, w io.Writer) bool {
	if _, set := lookupEnv(env, "NO_COLOR"); set {
		return false
	}
	if env.Getenv("TERM") == "dumb" {
		return false
	}
	return env.IsTerminal(w)
}

func lookupEnv(env *Env, key string) (string, bool) {
	v := env.Getenv(key)
	return v, v != ""
}
