package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/textmatch"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/report"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/source"
)

func newExplainCmd(env *Env) *cobra.Command {
	o := &checkOptions{}
	lo := &liveOptions{}
	var output string
	var liveFlag bool
	var exclude []string
	cmd := &cobra.Command{
		Use:   "explain WORKLOAD [PATH...]",
		Short: "Show where a workload's pods can run, source by source, in both phases",
		Long: `explain answers "why is this Pending?" for one workload: every node group, Fargate profile
and NodePool (and, live, node), in the bootstrap phase (before Karpenter runs) and the
steady phase, with fits / refuses and why.

WORKLOAD is NAME, NAMESPACE/NAME, KIND/NAME or KIND/NAMESPACE/NAME (kind is
case-insensitive: deployment, ds, sts, job, cronjob, pod).

In a running cluster it judges the real nodes (Fargate nodes included) and the NodePools as
they are now, and for the workload's Pending pods quotes the scheduler's FailedScheduling
message beside eksdoctor's explanation. WORKLOAD may then also name a pod.

` + liveHelp,
		Example: `  eksdoctor explain shop/checkout ./infra
  eksdoctor explain deployment/apps/web --live --context prod
  kubectl eksdoctor explain web -n apps`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			paths := args[1:]
			if output != "text" && output != "json" && output != "mermaid" {
				return usagef("unknown output format %q (valid: text, json, mermaid)", output)
			}
			useLive, err := liveMode(env.prog, liveFlag, lo, paths, o.charts)
			if err != nil {
				return err
			}
			cfg, err := loadConfig(env, "")
			if err != nil {
				return err
			}
			assign, err := cfg.assignments()
			if err != nil {
				return err
			}
			for _, p := range exclude {
				if !source.ValidExclude(p) {
					return usagef("--exclude %q is not a valid pattern", p)
				}
			}
			set := &settings{exclude: append(append([]string(nil), cfg.Exclude...), exclude...)}
			set.wd, _ = env.Getwd()
			set.anchor(paths)
			cs, err := loadClusters(cmd.Context(), env, useLive, lo, paths, o, assign)
			if err != nil {
				return err
			}
			return explain(env, cs, args[0], output, set.excluded)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text, json, mermaid")
	completeValues(cmd, "output", []string{"text", "json", "mermaid"})
	cmd.Flags().BoolVar(&liveFlag, "live", false, "read the running cluster instead of files")
	cmd.Flags().StringArrayVar(&exclude, "exclude", nil, "leave out the workloads of paths matching PATTERN, as the configuration's exclude (repeatable)")
	addSourceFlags(cmd, o)
	lo.budget = &o.budget
	lo.addFlags(cmd.Flags())
	return cmd
}

var kindAliases = map[string]string{
	"deploy": "Deployment", "deployment": "Deployment", "deployments": "Deployment",
	"ds": "DaemonSet", "daemonset": "DaemonSet", "daemonsets": "DaemonSet",
	"sts": "StatefulSet", "statefulset": "StatefulSet", "statefulsets": "StatefulSet",
	"rs": "ReplicaSet", "replicaset": "ReplicaSet", "replicasets": "ReplicaSet",
	"job": "Job", "jobs": "Job", "cj": "CronJob", "cronjob": "CronJob", "cronjobs": "CronJob",
	"po": "Pod", "pod": "Pod", "pods": "Pod",
}

// workloadArg is a parsed WORKLOAD argument.
type workloadArg struct{ kind, ns, name string }

func parseWorkloadArg(arg string) (workloadArg, error) {
	parts := strings.Split(arg, "/")
	var a workloadArg
	switch len(parts) {
	case 1:
		a.name = parts[0]
	case 2:
		if k, ok := kindAliases[strings.ToLower(parts[0])]; ok {
			a.kind, a.name = k, parts[1]
		} else {
			a.ns, a.name = parts[0], parts[1]
		}
	case 3:
		k, ok := kindAliases[strings.ToLower(parts[0])]
		if !ok {
			return a, usagef("unknown workload kind %q", parts[0])
		}
		a.kind, a.ns, a.name = k, parts[1], parts[2]
	default:
		return a, usagef("WORKLOAD must be NAME, NAMESPACE/NAME, KIND/NAME or KIND/NAMESPACE/NAME, not %q", arg)
	}
	return a, nil
}

// findWorkloads resolves a WORKLOAD argument.
func findWorkloads(m *cluster.Model, arg string) ([]*cluster.Workload, error) {
	a, err := parseWorkloadArg(arg)
	if err != nil {
		return nil, err
	}
	var out []*cluster.Workload
	for _, w := range m.Workloads {
		if w.Object.Name != a.name || (a.kind != "" && w.Object.Kind != a.kind) || (a.ns != "" && w.Template.Namespace != a.ns) {
			continue
		}
		out = append(out, w)
	}
	return out, nil
}

// findPods resolves a WORKLOAD argument that names live pods.
func findPods(m *cluster.Model, arg string) []*cluster.Pod {
	a, err := parseWorkloadArg(arg)
	if err != nil || (a.kind != "" && a.kind != "Pod") {
		return nil
	}
	var out []*cluster.Pod
	for _, p := range m.Pods {
		if p.Object.Name == a.name && (a.ns == "" || p.Object.Namespace == a.ns) {
			out = append(out, p)
		}
	}
	return out
}

func noWorkload(m *cluster.Model, arg string, excluded []*cluster.Workload) error {
	var names []string
	for _, w := range m.Workloads {
		names = append(names, w.Ref().String())
	}
	sort.Strings(names)
	where := "in the inputs"
	if m.Live != nil {
		where = "in the cluster"
		if m.Live.Namespace != "" {
			where = fmt.Sprintf("in namespace %s of the cluster", m.Live.Namespace)
		}
	}
	if len(excluded) > 0 {
		w := excluded[0]
		return usagef("workload %s is declared in %s, which exclude drops (the configuration's exclude or --exclude)", report.Line(w.Ref().String()), report.Line(w.Object.Origin.File))
	}
	if near := nearWorkloads(m, arg); len(near) > 0 {
		return usagef("no workload %q %s; did you mean %s?", arg, where, strings.Join(near, " or "))
	}
	if len(names) > 20 {
		names = append(names[:20], "...")
	}
	return usagef("no workload %q %s (workloads: %s)", arg, where, strings.Join(names, ", "))
}

// nearWorkloads are the workloads (at most three, nearest first) whose name is
// a few edits from the one asked for, written as WORKLOAD arguments that name
// them alone (NAMESPACE/NAME, or KIND/NAMESPACE/NAME when a kind was given).
func nearWorkloads(m *cluster.Model, arg string) []string {
	a, err := parseWorkloadArg(arg)
	if err != nil {
		return nil
	}
	type near struct {
		name string
		d    int
	}
	var all []near
	seen := map[string]bool{}
	for _, w := range m.Workloads {
		if a.kind != "" && w.Object.Kind != a.kind {
			continue
		}
		if textmatch.Nearest(a.name, []string{w.Object.Name}) == "" && (a.ns == "" || textmatch.Nearest(a.ns+"/"+a.name, []string{w.Template.Namespace + "/" + w.Object.Name}) == "") {
			continue
		}
		name := w.Template.Namespace + "/" + w.Object.Name
		if a.kind != "" {
			name = strings.ToLower(w.Object.Kind) + "/" + name
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		d := textmatch.Distance(a.name, w.Object.Name)
		if a.ns != "" {
			d += textmatch.Distance(a.ns, w.Template.Namespace)
		}
		all = append(all, near{name, d})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].d != all[j].d {
			return all[i].d < all[j].d
		}
		return all[i].name < all[j].name
	})
	var out []string
	for i, n := range all {
		if i == 3 {
			break
		}
		out = append(out, report.Line(n.name))
	}
	return out
}

func explain(env *Env, cs []*source.Cluster, arg, output string, drop func(file string) bool) error {
	var docs []report.Explanation
	var excluded []*cluster.Workload
	live := false
	for _, c := range cs {
		d, ex, err := explainDocs(c.Model, arg, drop)
		excluded = append(excluded, ex...)
		if err != nil {
			return err
		}
		for i := range d {
			if len(cs) > 1 {
				d[i].Cluster = c.Name
			}
		}
		docs = append(docs, d...)
		live = live || c.Model.Live != nil
	}
	if len(docs) == 0 {
		all := &cluster.Model{}
		for _, c := range cs {
			all.Workloads = append(all.Workloads, c.Model.Workloads...)
			if all.Live == nil {
				all.Live = c.Model.Live
			}
		}
		return noWorkload(all, arg, excluded)
	}
	return writeExplain(env, docs, live, output)
}

// explainDocs explains every workload (or live pod) of one cluster that arg
// names, but those of files drop drops (returned apart).
func explainDocs(m *cluster.Model, arg string, drop func(file string) bool) ([]report.Explanation, []*cluster.Workload, error) {
	if np := findNodePool(m, arg, true); np != nil {
		return []report.Explanation{nodePoolDoc(m, sim.New(m), np)}, nil, nil
	}
	found, err := findWorkloads(m, arg)
	if err != nil {
		return nil, nil, err
	}
	var ws, excluded []*cluster.Workload
	for _, w := range found {
		if drop(w.Object.Origin.File) {
			excluded = append(excluded, w)
			continue
		}
		ws = append(ws, w)
	}
	var pods []*cluster.Pod
	if len(ws) == 0 && m.Live != nil {
		pods = findPods(m, arg)
	}
	if len(ws) == 0 && len(pods) == 0 {
		if np := findNodePool(m, arg, false); np != nil && len(excluded) == 0 {
			return []report.Explanation{nodePoolDoc(m, sim.New(m), np)}, nil, nil
		}
		return nil, excluded, nil
	}
	s := sim.New(m)
	blocks := lint.DisruptionBlocks(s)
	// A running cluster is judged as it is: its nodes are the capacity of every
	// phase, so only the steady phase says something.
	phases := cluster.Phases
	if m.Live != nil {
		phases = []cluster.Phase{cluster.Steady}
	}
	var docs []report.Explanation
	for _, w := range ws {
		d := report.Explanation{Object: w.Ref().String(), Origin: report.OriginOf(w.Object.Origin), Component: w.Component, Bootstrap: w.Bootstrap}
		for _, ph := range phases {
			d.Phases = append(d.Phases, report.Phase(s.Place(w, ph)))
		}
		if m.Live != nil && w.Object.Manager == "cluster" {
			d.Pods = report.Pods(s, podsOf(m, w.Ref()))
		}
		for _, bl := range blocks {
			if bl.Protects(w.Ref()) {
				d.Disruption = append(d.Disruption, explainBlock(bl, ""))
			}
		}
		docs = append(docs, d)
	}
	for _, p := range pods {
		d := report.Explanation{Object: p.Object.Ref().String(), Origin: report.OriginOf(p.Object.Origin)}
		if p.Workload != nil {
			d.Component, d.Bootstrap = p.Workload.Component, p.Workload.Bootstrap
		}
		d.Phases = []report.ExplainPhase{report.Phase(s.PlacePod(p))}
		d.Pods = report.Pods(s, []*cluster.Pod{p})
		// The pod's own placement is the phase above.
		d.Pods.Placement = nil
		docs = append(docs, d)
	}
	return docs, excluded, nil
}

func writeExplain(env *Env, docs []report.Explanation, live bool, output string) error {
	if output == "mermaid" {
		return report.ExplainMermaid(env.Stdout, docs)
	}
	if output == "json" {
		if err := report.ExplainJSON(env.Stdout, docs); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		return nil
	}
	return report.ExplainText(env.Stdout, docs, live, color(env, env.Stdout))
}

// podsOf returns a live workload's pods, by name.
func podsOf(m *cluster.Model, owner cluster.ObjectRef) []*cluster.Pod {
	var out []*cluster.Pod
	for _, p := range m.Pods {
		if p.Owner == owner {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Object.Name < out[j].Object.Name })
	return out
}

// findNodePool resolves an explain argument that names a NodePool:
// NODEPOOL/NAME (nodepool, nodepools, np), or, when explicit is false, a bare
// NAME no workload has.
func findNodePool(m *cluster.Model, arg string, explicit bool) *cluster.NodePool {
	name := arg
	if kind, rest, ok := strings.Cut(arg, "/"); ok {
		switch strings.ToLower(kind) {
		case "nodepool", "nodepools", "np":
			name = rest
		default:
			return nil
		}
	} else if explicit {
		return nil
	}
	for _, np := range m.NodePools {
		if np.Name == name {
			return np
		}
	}
	return nil
}

// nodePoolDoc explains which of a NodePool's nodes Karpenter can never
// disrupt, and why.
func nodePoolDoc(m *cluster.Model, s *sim.Simulator, np *cluster.NodePool) report.Explanation {
	ref := cluster.ObjectRef{Kind: "NodePool", Name: np.Name}
	d := report.Explanation{Object: ref.String(), Phases: []report.ExplainPhase{}}
	if np.Object != nil {
		d.Object = np.Object.Ref().String()
		d.Origin = report.OriginOf(np.Object.Origin)
	}
	for _, bl := range lint.DisruptionBlocks(s) {
		if bl.Pins(np.Name) {
			d.Disruption = append(d.Disruption, explainBlock(bl, np.Name))
		}
	}
	d.Undisrupted = len(d.Disruption) == 0
	return d
}

// explainBlock renders a disruption block; pool, when set, is the NodePool
// explained, whose drain alone is said.
func explainBlock(b lint.DisruptionBlock, pool string) report.ExplainBlock {
	eb := report.ExplainBlock{Cause: b.Cause.String(), Object: b.Ref().String(), Reason: b.Why, Karpenter: b.Karpenter, Blocks: b.Blocks, NodePools: b.NodePools, Nodes: b.Nodes}
	if o := b.Object.At(b.Path); !o.IsZero() {
		j := report.OriginOf(o)
		eb.Origin = &j
	}
	pools := b.NodePools
	if pool != "" {
		pools = []string{pool}
	}
	for _, p := range pools {
		switch w := b.DrainWaits(p); {
		case w == "forever":
			eb.Drain = "forever (no terminationGracePeriod of NodePool " + p + " ends it)"
		case w != "" && eb.Drain == "":
			eb.Drain = "up to " + w + " (NodePool " + p + "'s terminationGracePeriod)"
		}
		if strings.HasPrefix(eb.Drain, "forever") {
			break
		}
	}
	return eb
}
