package cli

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/source"
	"github.com/eksdoctor/eksdoctor/source/live"
)

// liveOptions are the flags of every command that reads a running cluster. They
// are named and behave as kubectl's, so that `kubectl eksdoctor cluster --context
// prod -n apps` means what a kubectl user expects (kubectl hands a plugin its
// arguments unchanged).
type liveOptions struct {
	kubeconfig     string
	context        string
	namespace      string
	requestTimeout string
}

func (o *liveOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: KUBECONFIG, then ~/.kube/config, then the in-cluster service account)")
	fs.StringVar(&o.context, "context", "", "kubeconfig context to read (default: the current context)")
	fs.StringVarP(&o.namespace, "namespace", "n", "", "read workloads, pods and events of this namespace only (default: every namespace)")
	fs.StringVar(&o.requestTimeout, "request-timeout", "", "deadline of each request to the API server, e.g. 30s, 1m, or a number of seconds (default 30s)")
}

// given reports whether any flag that points at a cluster was set.
func (o *liveOptions) given() bool {
	return o.kubeconfig != "" || o.context != "" || o.namespace != ""
}

// parseRequestTimeout reads kubectl's --request-timeout forms: a duration ("30s",
// "1m") or a whole number of seconds. Zero means the default.
func parseRequestTimeout(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, usagef("--request-timeout %q: want a duration such as 30s or 2m, or a number of seconds", s)
	}
	return d, nil
}

// read reads the cluster as the live source stores it (objects, not yet
// interpreted): what `snapshot` writes and what Build turns into a model.
func (o *liveOptions) read(ctx context.Context, env *Env) (*cluster.Model, error) {
	timeout, err := parseRequestTimeout(o.requestTimeout)
	if err != nil {
		return nil, err
	}
	opts := live.Options{
		Kubeconfig:    o.kubeconfig,
		Context:       o.context,
		Namespace:     o.namespace,
		Timeout:       timeout,
		Clock:         env.Now,
		WrapTransport: env.WrapTransport,
	}
	// The running count is for people watching a terminal; redirected output
	// (CI logs, files) stays clean.
	if env.IsTerminal(env.Stderr) {
		opts.Progress = env.Stderr
	}
	m, err := live.Load(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("read the cluster: %w", err)
	}
	return m, nil
}

// load reads the cluster and builds the model the checks and simulations read.
func (o *liveOptions) load(ctx context.Context, env *Env) (*cluster.Model, error) {
	m, err := o.read(ctx, env)
	if err != nil {
		return nil, err
	}
	return source.Build(m), nil
}

// liveMode decides whether explain and teardown read the running cluster rather
// than files. The rule, stated in their help:
//
//   - --live reads the cluster, and then no PATH (or --chart) may be given;
//   - without PATH or --chart, a cluster flag (--context, --kubeconfig, -n) reads
//     the cluster, as it does for kubectl;
//   - without PATH or --chart, running as the kubectl plugin reads the cluster;
//   - otherwise files are read (PATH, default the working directory).
func liveMode(prog string, liveFlag bool, lo *liveOptions, paths, charts []string) (bool, error) {
	files := len(paths) > 0 || len(charts) > 0
	switch {
	case liveFlag && files:
		return false, usagef("--live reads the running cluster; drop the PATH arguments and --chart, or drop --live")
	case liveFlag:
		return true, nil
	case files:
		if lo.given() {
			return false, usagef("--context, --kubeconfig and --namespace select a running cluster, which is read without PATH arguments; drop either")
		}
		return false, nil
	}
	return lo.given() || isPlugin(prog), nil
}

// loadClusters reads the running cluster, or the files at paths (default the working
// directory), as liveMode decided.
func loadClusters(ctx context.Context, env *Env, useLive bool, lo *liveOptions, paths []string, o *checkOptions) ([]*source.Cluster, error) {
	if useLive {
		m, err := lo.load(ctx, env)
		if err != nil {
			return nil, err
		}
		return []*source.Cluster{{Name: m.Live.Context, Model: m}}, nil
	}
	if len(paths) == 0 && len(o.charts) == 0 {
		paths = []string{"."}
	}
	cs, err := source.Load(paths, o.sourceOptions())
	if err != nil {
		return nil, loadError(err)
	}
	return cs, nil
}

// liveHelp is the rule of liveMode for the commands' help.
const liveHelp = `Live mode: --live reads the running cluster (kubeconfig current context, or --context)
instead of files; it is also chosen when no PATH is given and --context, --kubeconfig or
-n/--namespace is, and when the command runs as 'kubectl eksdoctor' without PATH.`

// isPlugin reports whether the program runs as a kubectl plugin.
func isPlugin(prog string) bool { return strings.HasPrefix(progName(prog), "kubectl ") }

// ---- teardown of a running cluster ----

// liveTeardown completes the plan sim.Teardown makes from a running cluster: the
// controller is uninstalled the way it was installed (helm uninstall for a Helm
// release), the nodes the controller runs on come after it, and every step says
// what blocks it now. It returns the blockers by stage.
func liveTeardown(m *cluster.Model, plan *sim.Plan) map[sim.Stage][]string {
	ctrl := lint.KarpenterControllerStatus(m)
	name := orPlaceholder(lint.ClusterName(m), "<cluster-name>")
	blockers := map[sim.Stage][]string{}

	for i := range plan.Steps {
		st := &plan.Steps[i]
		for j := range st.Items {
			if st.Items[j].Manager == "cluster" {
				// Read from the cluster: kubectl deletes it.
				st.Items[j].Manager = "kubectl"
			}
		}
		if st.Stage == sim.StageController {
			st.Items, st.Commands = controllerItems(ctrl)
		}
	}
	if host := hostItems(m, ctrl, name); len(host.Items) > 0 {
		plan.Steps = insertStep(plan.Steps, host)
	}

	// What blocks each step now.
	stuck, remaining := nodeClaimState(m, ctrl)
	if !ctrl.Ready {
		state := "not ready"
		switch {
		case !ctrl.Known:
			state = "not visible"
		case len(ctrl.Deployments) == 0:
			state = "absent"
		}
		msg := fmt.Sprintf("the Karpenter controller is %s (%s): it must run to drain the nodes, terminate the instances and remove the finalizers, so bring it back before this step", state, ctrl.Short)
		blockers[sim.StageNodePools] = append(blockers[sim.StageNodePools], msg)
		blockers[sim.StageNodeClasses] = append(blockers[sim.StageNodeClasses], msg)
	}
	blockers[sim.StageNodePools] = append(blockers[sim.StageNodePools], stuck...)
	if len(remaining) > 0 {
		blockers[sim.StageNodeClasses] = append(blockers[sim.StageNodeClasses], fmt.Sprintf("%d NodeClaim(s) still exist (%s): EC2NodeClasses are finalized only once no NodeClaim uses them", len(remaining), strings.Join(remaining, ", ")))
		blockers[sim.StageController] = append(blockers[sim.StageController], fmt.Sprintf("%d NodeClaim(s) still exist: uninstalling the controller now leaves their finalizers (and instances) behind", len(remaining)))
	}
	if n := len(m.NodeClasses); n > 0 {
		var names []string
		for _, nc := range m.NodeClasses {
			names = append(names, nc.Name)
		}
		sort.Strings(names)
		blockers[sim.StageController] = append(blockers[sim.StageController], fmt.Sprintf("%d EC2NodeClass(es) still exist (%s): their finalizer needs the controller", n, strings.Join(names, ", ")))
	}
	if len(ctrl.Deployments) > 0 {
		blockers[sim.StageHostCompute] = append(blockers[sim.StageHostCompute], "the Karpenter controller runs here until it is uninstalled")
	}
	var karpenterNodes []string
	for _, n := range m.Nodes {
		if n.Labels["karpenter.sh/nodepool"] != "" {
			karpenterNodes = append(karpenterNodes, n.Name)
		}
	}
	sort.Strings(karpenterNodes)
	if len(karpenterNodes) > 0 {
		blockers[sim.StageHostCompute] = append(blockers[sim.StageHostCompute], fmt.Sprintf("Karpenter nodes still exist (%s): the NodePools' deletion removes them", strings.Join(karpenterNodes, ", ")))
	}
	plan.Notes = append(plan.Notes,
		"eksdoctor only prints these commands; it changes nothing in the cluster",
		"if Terraform or eksctl manages the node groups and the cluster, let it remove them (terraform destroy, eksctl delete cluster) once the NodePools, EC2NodeClasses and the controller are gone, rather than the commands of the last step")
	return blockers
}

func orPlaceholder(s, p string) string {
	if s == "" {
		return p
	}
	return s
}

// controllerItems describes how to uninstall each controller Deployment: the
// Helm release that installed it, else the Deployment itself.
func controllerItems(ctrl lint.ControllerStatus) ([]sim.Item, []string) {
	var items []sim.Item
	var cmds []string
	for _, w := range ctrl.Deployments {
		o := w.Object
		it := sim.Item{Name: o.Ref().String(), Objects: []cluster.ObjectRef{o.Ref()}, Origin: o.Origin, Manager: "kubectl"}
		if rel, ns := o.Annotations["meta.helm.sh/release-name"], o.Annotations["meta.helm.sh/release-namespace"]; rel != "" {
			ns = orPlaceholder(ns, o.Namespace)
			it.Name, it.Manager = fmt.Sprintf("helm release %s (namespace %s)", rel, ns), "helm"
			cmds = append(cmds, fmt.Sprintf("helm uninstall %s --namespace %s --wait", rel, ns))
		} else {
			cmds = append(cmds, fmt.Sprintf("kubectl delete deployment %s -n %s --wait  # and the rest of what installed it (service account, webhooks, RBAC)", o.Name, o.Namespace))
		}
		items = append(items, it)
	}
	return items, cmds
}

// hostItems is the compute the controller runs on: the node groups and Fargate
// profiles of the nodes its pods are on.
func hostItems(m *cluster.Model, ctrl lint.ControllerStatus, clusterName string) sim.Step {
	step := sim.Step{Stage: sim.StageHostCompute, Wait: "the node groups and Fargate profiles are deleted"}
	owners := map[cluster.ObjectRef]bool{}
	for _, w := range ctrl.Deployments {
		owners[w.Ref()] = true
	}
	nodes := map[string]*cluster.Node{}
	for _, n := range m.Nodes {
		nodes[n.Name] = n
	}
	seen := map[string]bool{}
	var names []string
	items := map[string]sim.Item{}
	cmds := map[string][]string{}
	for _, p := range m.Pods {
		if !owners[p.Owner] || p.Spec.NodeName == "" {
			continue
		}
		n := nodes[p.Spec.NodeName]
		if n == nil {
			continue
		}
		var key string
		var it sim.Item
		var c []string
		switch {
		case n.Labels["alpha.eksctl.io/nodegroup-name"] != "":
			g := n.Labels["alpha.eksctl.io/nodegroup-name"]
			key, it = "ng:"+g, sim.Item{Name: fmt.Sprintf("node group %q", g), Manager: "eksctl"}
			c = []string{fmt.Sprintf("eksctl delete nodegroup --cluster %s --name %s --wait", clusterName, g)}
		case n.Labels["eks.amazonaws.com/nodegroup"] != "":
			g := n.Labels["eks.amazonaws.com/nodegroup"]
			key, it = "ng:"+g, sim.Item{Name: fmt.Sprintf("node group %q", g), Manager: "aws"}
			c = []string{
				fmt.Sprintf("aws eks delete-nodegroup --cluster-name %s --nodegroup-name %s", clusterName, g),
				fmt.Sprintf("aws eks wait nodegroup-deleted --cluster-name %s --nodegroup-name %s", clusterName, g),
			}
		case n.Labels["eks.amazonaws.com/fargate-profile"] != "":
			f := n.Labels["eks.amazonaws.com/fargate-profile"]
			key, it = "fp:"+f, sim.Item{Name: fmt.Sprintf("Fargate profile %q", f), Manager: "aws"}
			c = []string{
				fmt.Sprintf("aws eks delete-fargate-profile --cluster-name %s --fargate-profile-name %s", clusterName, f),
				fmt.Sprintf("aws eks wait fargate-profile-deleted --cluster-name %s --fargate-profile-name %s", clusterName, f),
			}
		default:
			key, it = "node:"+n.Name, sim.Item{Name: fmt.Sprintf("node %s (self-managed: remove it with its Auto Scaling group)", n.Name), Manager: "aws"}
		}
		it.Live = append(it.Live, "node "+n.Name+" runs "+p.Object.Name)
		if old, ok := items[key]; ok {
			old.Live = append(old.Live, it.Live...)
			items[key] = old
			continue
		}
		if !seen[key] {
			seen[key] = true
			names = append(names, key)
		}
		items[key], cmds[key] = it, c
	}
	sort.Strings(names)
	for _, k := range names {
		it := items[k]
		sort.Strings(it.Live)
		step.Items = append(step.Items, it)
		step.Commands = append(step.Commands, cmds[k]...)
	}
	return step
}

// insertStep puts a step in stage order, replacing a step of the same stage.
func insertStep(steps []sim.Step, s sim.Step) []sim.Step {
	for i := range steps {
		if steps[i].Stage == s.Stage {
			steps[i] = s
			return steps
		}
		if steps[i].Stage > s.Stage {
			return append(steps[:i], append([]sim.Step{s}, steps[i:]...)...)
		}
	}
	return append(steps, s)
}

// nodeClaimState lists the NodeClaims that are stuck (being deleted and held by
// a Karpenter finalizer while no controller is ready) and every NodeClaim that
// still exists.
func nodeClaimState(m *cluster.Model, ctrl lint.ControllerStatus) (stuck, remaining []string) {
	for _, nc := range m.NodeClaims {
		remaining = append(remaining, nc.Name)
		if !nc.Deleting || ctrl.Ready {
			continue
		}
		var fins []string
		for _, f := range nc.Finalizers {
			if strings.HasPrefix(f, "karpenter.sh/") || strings.HasPrefix(f, "karpenter.k8s.aws/") {
				fins = append(fins, f)
			}
		}
		if len(fins) == 0 {
			continue
		}
		s := fmt.Sprintf("NodeClaim %s is stuck being deleted (finalizer %s)", nc.Name, strings.Join(fins, ", "))
		if id := lint.InstanceID(nc.ProviderID); id != "" {
			s += ", instance " + id + " still runs"
		}
		stuck = append(stuck, s+" (see finalizer-stuck)")
	}
	sort.Strings(stuck)
	sort.Strings(remaining)
	return stuck, remaining
}
