package lint

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/write"
)

// nodeclaim-not-initialized: NodeClaims whose node registered but never became usable (never Ready, startup taints never removed, resources never registered), with the pods waiting for it.

var nodeClaimNotInitialized = &Check{
	ID:       "nodeclaim-not-initialized",
	Title:    "NodeClaim's node registered but never became usable",
	Family:   "F4",
	Severity: Error,
	Live:     true,
	Doc: Doc{
		What: "A NodeClaim has been `Registered=True` for more than five minutes (by the cluster's clock when it was read) without becoming `Initialized=True`: its node joined the cluster, but Karpenter is still waiting for it to become usable, for the reason its `Initialized` condition gives: the node is not Ready (`NodeNotReady`: the kubelet never posted Ready, the CNI never came up), a startup taint of the NodePool is still on the node (`StartupTaintsExist`: the agent meant to remove it does not run there, or does not remove that taint), a known ephemeral taint stays (`KnownEphemeralTaintsExist`), or a resource the pods asked for was never registered (`ResourceNotRegistered`: its device plugin does not run). For a startup taint, the finding names the DaemonSets that tolerate it and would run on the node, or says that none does, so nothing that could remove it can run there. It lists the pods Karpenter nominated to the NodeClaim (its `Nominated` events) that are still Pending.",
		Why:  "Karpenter sets no deadline on initialization: it counts the node as capacity on its way and launches nothing else for the pods it nominated to it, while kube-scheduler refuses the node (`node(s) had untolerated taint {...}`, or not ready). The pods stay Pending, the node is billed and runs nothing, and Karpenter's only word is the NodeClaim's condition.",
		Fix:  "For a startup taint: run the agent that removes it on the NodePool's nodes (a DaemonSet that tolerates the taint and selects the nodes), or take the taint out of the NodePool's `startupTaints` when nothing is meant to remove it; the patch in the finding does that to the live NodePool, which the configuration that manages it must then say too. For a node that is not Ready: read its conditions (`kubectl describe node`) and the instance's console output; the CNI and the kubelet's access to the API server are the usual causes. For a resource never registered: install the device plugin that advertises it on those nodes.",
	},
	Run: runNodeClaimNotInitialized,
	// Pods waiting for such a node are Pending for that reason, which this
	// check names more directly than pod-unschedulable's "no node has come".
	Supersedes: []*Check{podUnschedulable},
}

// initializationGrace: a registered node becomes Ready and loses its startup
// taints within a minute or two.
const initializationGrace = 5 * time.Minute

type uninitialized struct {
	claim *cluster.NodeClaim
	node  *cluster.Node
	age   time.Duration
	cond  *cluster.Condition // Initialized
}

func runNodeClaimNotInitialized(p *Pass) {
	m := p.Model
	if m.Live == nil {
		return
	}
	now, haveNow := m.NowTime()
	nodes := map[string]*cluster.Node{}
	for _, n := range m.Nodes {
		nodes[n.Name] = n
	}
	byPool := map[string][]uninitialized{}
	for _, nc := range m.NodeClaims {
		reg := conditionOf(nc.Conditions, "Registered")
		if nc.Deleting || reg == nil || reg.Status != "True" {
			continue
		}
		// Karpenter sets Initialized (Unknown) from the NodeClaim's
		// creation on; without it there is nothing to say.
		ini := conditionOf(nc.Conditions, "Initialized")
		if ini == nil || ini.Status == "True" {
			continue
		}
		age, ok := ageAt(now, haveNow, reg.LastTransitionTime)
		if !ok || age < initializationGrace {
			continue
		}
		byPool[nc.NodePool] = append(byPool[nc.NodePool], uninitialized{claim: nc, node: nodes[nc.NodeName], age: age, cond: ini})
	}
	pools := make([]string, 0, len(byPool))
	for name := range byPool {
		pools = append(pools, name)
	}
	sort.Strings(pools)
	for _, name := range pools {
		claims := byPool[name]
		sort.Slice(claims, func(i, j int) bool { return claims[i].claim.Name < claims[j].claim.Name })
		reportUninitialized(p, name, claims)
	}
}

func reportUninitialized(p *Pass, poolName string, claims []uninitialized) {
	m := p.Model
	np := liveNodePool(m, poolName)
	var b strings.Builder
	var oldest time.Duration
	var causes []string
	var stuck []corev1.Taint // startup taints nothing can remove
	for _, u := range claims {
		if u.age > oldest {
			oldest = u.age
		}
		node := u.claim.NodeName
		if u.node != nil {
			node = u.node.Name
		}
		fmt.Fprintf(&b, "NodeClaim %s (node %s, registered %s ago): Initialized %s.\n", u.claim.Name, orText(node, "(none)"), ageText(u.age), conditionText(u.cond))
		if u.node != nil {
			fmt.Fprintf(&b, "  node %s: %s; taints %s.\n", u.node.Name, nodeReadiness(u.node), taintList(u.node.Taints))
		}
		cause, lines, unremovable := initializationCause(m, np, u)
		for _, l := range lines {
			b.WriteString("  " + l + "\n")
		}
		if cause != "" && !slices.Contains(causes, cause) {
			causes = append(causes, cause)
		}
		for _, t := range unremovable {
			if !hasTaint(stuck, t) {
				stuck = append(stuck, t)
			}
		}
	}
	var claimNames, nodeNames []string
	for _, u := range claims {
		claimNames = append(claimNames, u.claim.Name)
		if u.node != nil {
			nodeNames = append(nodeNames, u.node.Name)
		}
	}
	waiting := nominatedPending(m, claimNames)
	if len(waiting) > 0 {
		fmt.Fprintf(&b, "Pending pods Karpenter nominated to them: %s. Karpenter launches nothing else for them while it waits for this node, and kube-scheduler refuses the node until it is initialized.\n", podList(waiting))
	}
	if stranded := strandedOn(m, nodeNames); len(stranded) > 0 {
		fmt.Fprintf(&b, "Pods kube-scheduler bound to the node before it was tainted, which never started: %s.\n", podList(stranded))
		waiting = append(waiting, stranded...)
	}
	subject := fmt.Sprintf("NodeClaim %s", claims[0].claim.Name)
	if len(claims) > 1 {
		subject = fmt.Sprintf("%d NodeClaims", len(claims))
	}
	summary := fmt.Sprintf("%s of NodePool %s registered a node that has not become usable for %s: %s", subject, poolName, ageText(oldest), strings.Join(causes, "; "))
	if len(waiting) > 0 {
		summary += fmt.Sprintf("; %d Pending pod(s) wait for it", len(waiting))
	}
	obj := cluster.ObjectRef{Kind: "NodePool", Name: poolName}
	origin := claims[0].claim.Object.Origin
	var fix *Fix
	if np != nil && np.Object != nil {
		obj, origin = np.Object.Ref(), np.Object.Origin
		if len(stuck) > 0 {
			fix = dropStartupTaints(np, stuck)
		}
	}
	p.Report(Finding{Object: obj, Origin: origin, Summary: summary, Detail: b.String(), Fix: fix, causes: podCauses(waiting)})
}

// initializationCause explains one NodeClaim's Initialized condition from the
// node: the gist, the evidence, and the startup taints nothing on the node can
// remove.
func initializationCause(m *cluster.Model, np *cluster.NodePool, u uninitialized) (string, []string, []corev1.Taint) {
	reason := ""
	if u.cond != nil {
		reason = u.cond.Reason
	}
	switch {
	case u.node == nil:
		return "its node is not in the cluster any more", nil, nil
	case reason == "NodeNotReady" || !u.node.Ready:
		why := "the node never became Ready"
		if c := nodeCondition(u.node, "Ready"); c != nil && c.Reason != "" {
			why += " (" + c.String() + ")"
		}
		return why, nil, nil
	case reason == "StartupTaintsExist" && np != nil:
		var lines []string
		var unremovable []corev1.Taint
		var gist []string
		for _, t := range np.StartupTaints {
			if !hasTaint(u.node.Taints, t) {
				continue
			}
			agents, others := startupTaintRemovers(m, t, u.node)
			switch {
			case len(agents) > 0:
				lines = append(lines, fmt.Sprintf("Startup taint %s is still on the node; %s run there and tolerate it by name or belong to its domain: the agent meant to remove it is among them and has not.", sim.TaintText(t), strings.Join(agents, ", ")))
				gist = append(gist, fmt.Sprintf("startup taint %s is still on the node (%s has not removed it)", sim.TaintText(t), strings.Join(agents, ", ")))
			case len(others) > 0:
				lines = append(lines, fmt.Sprintf("Startup taint %s is still on the node; no DaemonSet names it in its tolerations, and %s run there tolerating every taint: unless one of them removes it, nothing does.", sim.TaintText(t), strings.Join(others, ", ")))
				gist = append(gist, fmt.Sprintf("startup taint %s is still on the node, and no DaemonSet that runs there names it (only %s, which tolerate every taint)", sim.TaintText(t), strings.Join(others, ", ")))
			default:
				unremovable = append(unremovable, t)
				lines = append(lines, fmt.Sprintf("Startup taint %s is still on the node, and no DaemonSet of the cluster tolerates it and runs on the node: nothing that could remove it runs there.", sim.TaintText(t)))
				gist = append(gist, fmt.Sprintf("startup taint %s is never removed (no DaemonSet that tolerates it runs on the node)", sim.TaintText(t)))
			}
		}
		if len(gist) == 0 {
			return "Karpenter waits for its startup taints to be removed", lines, nil
		}
		return strings.Join(gist, "; "), lines, unremovable
	case u.cond != nil && u.cond.Message != "":
		return u.cond.Message, nil, nil
	}
	return "Karpenter has not initialized it", nil, nil
}

// startupTaintRemovers names the DaemonSets that tolerate a startup taint and
// place a pod on the node, the only workloads that could run there to remove
// it: agents name the taint's key in a toleration or carry the second label
// of its domain in their name (cilium for node.cilium.io); others tolerate it
// only by tolerating every taint.
func startupTaintRemovers(m *cluster.Model, t corev1.Taint, n *cluster.Node) (agents, others []string) {
	domain, _, _ := strings.Cut(t.Key, "/")
	labels := strings.Split(domain, ".")
	owner := ""
	if len(labels) >= 2 {
		owner = labels[len(labels)-2]
	}
	for _, w := range m.Workloads {
		if !w.IsDaemonSet() || w.Object.Manager != "cluster" {
			continue
		}
		tols := sim.PodTolerations(w)
		if !sim.Tolerates(tols, t) || !wouldRunOn(w, n) {
			continue
		}
		name := "DaemonSet " + w.Object.Namespace + "/" + w.Object.Name
		byKey := slices.ContainsFunc(w.Template.Spec.Tolerations, func(tol corev1.Toleration) bool { return tol.Key == t.Key })
		if byKey || (owner != "" && strings.Contains(w.Object.Name, owner)) {
			agents = append(agents, name)
		} else {
			others = append(others, name)
		}
	}
	sort.Strings(agents)
	sort.Strings(others)
	return agents, others
}

// dropStartupTaints is the patch that takes startup taints out of a NodePool.
func dropStartupTaints(np *cluster.NodePool, drop []corev1.Taint) *Fix {
	keep := []any{}
	for _, t := range np.StartupTaints {
		if hasTaint(drop, t) {
			continue
		}
		m := map[string]any{"key": t.Key, "effect": string(t.Effect)}
		if t.Value != "" {
			m["value"] = t.Value
		}
		keep = append(keep, m)
	}
	var names []string
	for _, t := range drop {
		names = append(names, sim.TaintText(t))
	}
	patch := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"startupTaints": keep}}}}
	return &Fix{
		Summary: fmt.Sprintf("take %s out of NodePool %s's startupTaints if nothing is meant to remove it (or run the agent that removes it on these nodes); then say the same where the NodePool is configured", strings.Join(names, ", "), np.Name),
		Edits:   []Edit{write.LivePatch(np.Object, patch)},
	}
}

// nominatedPending lists the Pending pods Karpenter nominated to any of the
// claims, which may be gone (its Nominated events, "Pod should schedule on:
// nodeclaim/NAME[, node/...]").
func nominatedPending(m *cluster.Model, claims []string) []*cluster.Pod {
	names := make(map[string]bool, len(claims))
	for _, c := range claims {
		names[c] = true
	}
	var out []*cluster.Pod
	for _, pod := range m.Pods {
		if pod.Spec.NodeName != "" || pod.Status.Phase != corev1.PodPending {
			continue
		}
		if len(nominatedTo(names, []*cluster.Pod{pod})) > 0 {
			out = append(out, pod)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Object.Ref().Less(out[j].Object.Ref()) })
	return out
}

// strandedOn lists the pods bound to the nodes that never started (Pending).
func strandedOn(m *cluster.Model, nodes []string) []*cluster.Pod {
	var out []*cluster.Pod
	for _, pod := range m.Pods {
		if pod.Status.Phase == corev1.PodPending && slices.Contains(nodes, pod.Spec.NodeName) && !pod.Object.Terminating() {
			out = append(out, pod)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Object.Ref().Less(out[j].Object.Ref()) })
	return out
}

// podList names pods as namespace/name, in order.
func podList(pods []*cluster.Pod) string {
	names := make([]string, len(pods))
	for i, pod := range pods {
		names[i] = pod.Object.Namespace + "/" + pod.Object.Name
	}
	return strings.Join(names, ", ")
}

// nominatedClaim is the NodeClaim a Nominated event names.
func nominatedClaim(msg string) string {
	_, rest, ok := strings.Cut(msg, "nodeclaim/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, ",")
	return strings.TrimSpace(name)
}

func liveNodePool(m *cluster.Model, name string) *cluster.NodePool {
	for _, np := range m.NodePools {
		if np.Name == name && np.Object != nil && np.Object.Manager == "cluster" {
			return np
		}
	}
	return nil
}

func nodeCondition(n *cluster.Node, typ string) *cluster.Condition {
	conds, _ := n.Object.Get("status.conditions").([]any)
	for _, c := range conds {
		cm, _ := c.(map[string]any)
		if cm["type"] != typ {
			continue
		}
		cond := &cluster.Condition{Type: typ}
		cond.Status, _ = cm["status"].(string)
		cond.Reason, _ = cm["reason"].(string)
		cond.Message, _ = cm["message"].(string)
		return cond
	}
	return nil
}

func nodeReadiness(n *cluster.Node) string {
	if c := nodeCondition(n, "Ready"); c != nil {
		return c.String()
	}
	return "no Ready condition"
}

func taintList(ts []corev1.Taint) string {
	if len(ts) == 0 {
		return "none"
	}
	var out []string
	for _, t := range ts {
		out = append(out, sim.TaintText(t))
	}
	return strings.Join(out, ", ")
}

func hasTaint(ts []corev1.Taint, t corev1.Taint) bool {
	for _, x := range ts {
		if x.Key == t.Key && x.Effect == t.Effect && x.Value == t.Value {
			return true
		}
	}
	return false
}
