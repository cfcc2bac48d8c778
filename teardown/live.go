package teardown

import (
	"fmt"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
)

// Now plans the teardown as New does and, for a running cluster, completes the
// plan from what the cluster holds now: the controller is uninstalled the way
// it was installed (helm uninstall for a Helm release), the nodes the
// controller runs on come after it, and every step says what blocks it now
// (Plan.Blockers).
func Now(s *sim.Simulator) *Plan {
	plan := New(s)
	if m := s.Model(); m.Live != nil {
		plan.Blockers = liveTeardown(m, plan)
	}
	return plan
}

// liveTeardown completes the plan of a running cluster and returns what blocks
// each stage now.
func liveTeardown(m *cluster.Model, plan *Plan) map[Stage][]string {
	ctrl := sim.KarpenterController(m)
	name := orPlaceholder(m.ClusterName(), "<cluster-name>")
	blockers := map[Stage][]string{}

	for i := range plan.Steps {
		st := &plan.Steps[i]
		for j := range st.Items {
			if st.Items[j].Manager == "cluster" {
				// Read from the cluster: kubectl deletes it.
				st.Items[j].Manager = "kubectl"
			}
		}
		if st.Stage == StageController {
			st.Items, st.Commands = controllerItems(ctrl)
		}
	}
	if host := hostItems(m, ctrl, name); len(host.Items) > 0 {
		plan.Steps = insertStep(plan.Steps, host)
	}
	if orphans := orphanClaims(m, plan); len(orphans.Items) > 0 {
		plan.Steps = insertStep(plan.Steps, orphans)
	}

	// What blocks each step now.
	stuck, remaining := nodeClaimState(m, ctrl)
	if !ctrl.Ready() {
		state := "not ready"
		switch {
		case !ctrl.Known():
			state = "not visible"
		case len(ctrl.Deployments) == 0:
			state = "absent"
		}
		msg := fmt.Sprintf("the Karpenter controller is %s (%s): it must run to drain the nodes, terminate the instances and remove the finalizers, so bring it back before this step", state, ctrl.Short)
		blockers[StageNodePools] = append(blockers[StageNodePools], msg)
		blockers[StageNodeClasses] = append(blockers[StageNodeClasses], msg)
	}
	blockers[StageNodePools] = append(blockers[StageNodePools], stuck...)
	if len(remaining) > 0 {
		blockers[StageNodeClasses] = append(blockers[StageNodeClasses], fmt.Sprintf("%d NodeClaim(s) still exist (%s): EC2NodeClasses are finalized only once no NodeClaim uses them", len(remaining), strings.Join(remaining, ", ")))
		blockers[StageController] = append(blockers[StageController], fmt.Sprintf("%d NodeClaim(s) still exist: uninstalling the controller now leaves their finalizers (and instances) behind", len(remaining)))
	}
	var names []string
	for _, nc := range m.NodeClasses {
		if !nc.Inline {
			names = append(names, nc.Name)
		}
	}
	if n := len(names); n > 0 {
		sort.Strings(names)
		blockers[StageController] = append(blockers[StageController], fmt.Sprintf("%d EC2NodeClass(es) still exist (%s): their finalizer needs the controller", n, strings.Join(names, ", ")))
	}
	if len(ctrl.Deployments) > 0 {
		blockers[StageHostCompute] = append(blockers[StageHostCompute], "the Karpenter controller runs here until it is uninstalled")
	}
	var karpenterNodes []string
	for _, n := range m.Nodes {
		if n.Labels["karpenter.sh/nodepool"] != "" {
			karpenterNodes = append(karpenterNodes, n.Name)
		}
	}
	sort.Strings(karpenterNodes)
	if len(karpenterNodes) > 0 {
		blockers[StageHostCompute] = append(blockers[StageHostCompute], fmt.Sprintf("Karpenter nodes still exist (%s): the NodePools' deletion removes them", strings.Join(karpenterNodes, ", ")))
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

// orphanClaims is the NodePools' step of a cluster whose NodePools are gone
// while NodeClaims remain (deleted with their NodePool, or left by it): the
// first thing a teardown must see to is that they finish. Empty when a
// NodePools' step exists or no NodeClaim remains.
func orphanClaims(m *cluster.Model, plan *Plan) Step {
	step := Step{Stage: StageNodePools, Wait: "no NodeClaim remains (kubectl get nodeclaims): each one's node is drained and its instance terminated"}
	for _, st := range plan.Steps {
		if st.Stage == StageNodePools {
			return Step{}
		}
	}
	pools := map[string]bool{}
	for _, np := range m.NodePools {
		pools[np.Name] = true
	}
	claims := append([]*cluster.NodeClaim(nil), m.NodeClaims...)
	sort.Slice(claims, func(i, j int) bool { return claims[i].Name < claims[j].Name })
	for _, nc := range claims {
		it := Item{Name: "NodeClaim " + nc.Name, Manager: "kubectl", Origin: nc.Object.Origin}
		if nc.Object != nil {
			it.Objects = []cluster.ObjectRef{nc.Object.Ref()}
		}
		switch {
		case nc.NodePool == "":
		case !pools[nc.NodePool]:
			it.Live = append(it.Live, fmt.Sprintf("its NodePool %s is gone", nc.NodePool))
		default:
			it.Live = append(it.Live, "NodePool "+nc.NodePool)
		}
		if nc.Deleting {
			it.Live = append(it.Live, "being deleted, held by "+strings.Join(nc.Finalizers, ", "))
		} else {
			step.Commands = append(step.Commands, "kubectl delete nodeclaim.karpenter.sh "+nc.Name+" --wait")
		}
		if nc.NodeName != "" {
			it.Live = append(it.Live, "node "+nc.NodeName)
		}
		step.Items = append(step.Items, it)
	}
	return step
}

// controllerItems describes how to uninstall each controller Deployment: the
// Helm release that installed it, else the Deployment itself.
func controllerItems(ctrl sim.Controller) ([]Item, []string) {
	var items []Item
	var cmds []string
	for _, w := range ctrl.Deployments {
		o := w.Object
		it := Item{Name: o.Ref().String(), Objects: []cluster.ObjectRef{o.Ref()}, Origin: o.Origin, Manager: "kubectl"}
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
func hostItems(m *cluster.Model, ctrl sim.Controller, clusterName string) Step {
	step := Step{Stage: StageHostCompute, Wait: "the node groups and Fargate profiles are deleted"}
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
	items := map[string]Item{}
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
		var it Item
		var c []string
		switch {
		case n.Labels["alpha.eksctl.io/nodegroup-name"] != "":
			g := n.Labels["alpha.eksctl.io/nodegroup-name"]
			key, it = "ng:"+g, Item{Name: fmt.Sprintf("node group %q", g), Manager: "eksctl"}
			c = []string{fmt.Sprintf("eksctl delete nodegroup --cluster %s --name %s --wait", clusterName, g)}
		case n.Labels["eks.amazonaws.com/nodegroup"] != "":
			g := n.Labels["eks.amazonaws.com/nodegroup"]
			key, it = "ng:"+g, Item{Name: fmt.Sprintf("node group %q", g), Manager: "aws"}
			c = []string{
				fmt.Sprintf("aws eks delete-nodegroup --cluster-name %s --nodegroup-name %s", clusterName, g),
				fmt.Sprintf("aws eks wait nodegroup-deleted --cluster-name %s --nodegroup-name %s", clusterName, g),
			}
		case n.Labels["eks.amazonaws.com/fargate-profile"] != "":
			f := n.Labels["eks.amazonaws.com/fargate-profile"]
			key, it = "fp:"+f, Item{Name: fmt.Sprintf("Fargate profile %q", f), Manager: "aws"}
			c = []string{
				fmt.Sprintf("aws eks delete-fargate-profile --cluster-name %s --fargate-profile-name %s", clusterName, f),
				fmt.Sprintf("aws eks wait fargate-profile-deleted --cluster-name %s --fargate-profile-name %s", clusterName, f),
			}
		default:
			key, it = "node:"+n.Name, Item{Name: fmt.Sprintf("node %s (self-managed: remove it with its Auto Scaling group)", n.Name), Manager: "aws"}
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
func insertStep(steps []Step, s Step) []Step {
	for i := range steps {
		if steps[i].Stage == s.Stage {
			steps[i] = s
			return steps
		}
		if steps[i].Stage > s.Stage {
			return append(steps[:i], append([]Step{s}, steps[i:]...)...)
		}
	}
	return append(steps, s)
}

// nodeClaimState lists the NodeClaims that are stuck (being deleted and held by
// a Karpenter finalizer while no controller is ready) and every NodeClaim that
// still exists.
func nodeClaimState(m *cluster.Model, ctrl sim.Controller) (stuck, remaining []string) {
	for _, nc := range m.NodeClaims {
		remaining = append(remaining, nc.Name)
		if !nc.Deleting || ctrl.Ready() {
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
		if id := cluster.InstanceID(nc.ProviderID); id != "" {
			s += ", instance " + id + " still runs"
		}
		stuck = append(stuck, s+" (see finalizer-stuck)")
	}
	sort.Strings(stuck)
	sort.Strings(remaining)
	return stuck, remaining
}
