package lint

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/write"
)

// disruption-daemonset-evicted: node-critical DaemonSet pods (CSI, CNI) evicted from a node Karpenter is draining while volumes are still attached there.

// disruptionDaemonSetEvicted is the live evidence of F3. It has its own ID rather
// than adding to disruption-toleration-missing: that check judges a DaemonSet's
// configuration (one finding per DaemonSet, static and live alike, fixed in its
// chart or add-on), while this one reports an incident on one node now, which
// matters even once the configuration is fixed (the volumes on that node are
// still attached) and can be silenced separately.
var disruptionDaemonSetEvicted = &Check{
	ID:       "disruption-daemonset-evicted",
	Title:    "Node-critical DaemonSet pod gone from a node Karpenter is draining",
	Family:   "F3",
	Severity: Error,
	Live:     true,
	Doc: Doc{
		What: "A node carries Karpenter's disruption taint (`karpenter.sh/disrupted:NoSchedule`, or `karpenter.sh/disruption=disrupting:NoSchedule` before v1) and a node-critical DaemonSet that would otherwise run there (a CSI node plugin, a CNI agent) has no pod on it, or only a terminating one, while workload pods with persistent volumes of that plugin's driver are still on the node or their volumes are still attached to it. The DaemonSet does not tolerate the taint, so Karpenter evicted its pod with the others. This is the live evidence of what `disruption-toleration-missing` predicts from the configuration; it is reported per node and DaemonSet.",
		Why:  "Without its CSI node plugin the node cannot unmount, unstage and detach the volumes of the pods still leaving it: the VolumeAttachments stay, and the pods' replacements on other nodes fail with `Multi-Attach error` until the attach/detach controller force-detaches after six minutes. Without the CNI agent, pods still shutting down lose their network.",
		Fix:  "Make the DaemonSet tolerate the disruption taint where it is configured (`disruption-toleration-missing` gives the fix in the chart's values or the add-on's configuration); the patch in the finding adds the toleration to the live object, which the next Helm upgrade or add-on update replaces. Then check the VolumeAttachments left on the node (`volumeattachment-stale`).",
	},
	Run: runDisruptionDaemonSetEvicted,
}

// volumeUser is a pod on a node with a persistent volume of a driver.
type volumeUser struct {
	pod    *cluster.Pod
	claim  string
	driver string
}

func runDisruptionDaemonSetEvicted(p *Pass) {
	m := p.Model
	if m.Live == nil {
		return
	}
	if _, skipped := m.SkippedReason("pods"); skipped {
		return
	}
	var daemons []*cluster.Workload
	for _, w := range m.Workloads {
		if w.IsDaemonSet() && w.NodeCritical != "" && w.Object.Manager == "cluster" {
			daemons = append(daemons, w)
		}
	}
	sort.Slice(daemons, func(i, j int) bool { return daemons[i].Ref().Less(daemons[j].Ref()) })
	nodes := append([]*cluster.Node(nil), m.Nodes...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	for _, n := range nodes {
		taint, ok := disruptionTaintOn(n)
		if !ok || n.Labels["eks.amazonaws.com/compute-type"] == "fargate" {
			continue
		}
		users := volumeUsers(m, n)
		attached := map[string][]string{} // driver → VolumeAttachments
		for _, va := range m.Live.VolumeAttachments {
			if va.NodeName == n.Name {
				attached[va.Attacher] = append(attached[va.Attacher], va.Name)
			}
		}
		for _, w := range daemons {
			if !liveReadNamespace(m, w.Object.Namespace) || sim.Tolerates(sim.PodTolerations(w), taint) || !wouldRunOn(w, n) {
				continue
			}
			driver := p.Sim.PluginDriver(w)
			var mine []volumeUser
			for _, u := range users {
				if driver == "" || u.driver == driver || u.driver == "" {
					mine = append(mine, u)
				}
			}
			vas := attached[driver]
			if driver == "" {
				vas = nil
			}
			if len(mine) == 0 && len(vas) == 0 {
				continue
			}
			state, present := daemonPodState(m, w, n)
			if present {
				continue
			}
			reportEvictedDaemon(p, w, n, taint, state, driver, mine, vas)
		}
	}
}

// volumeUsers lists the pods on a node (other than DaemonSet pods) that mount
// persistent volumes.
func volumeUsers(m *cluster.Model, n *cluster.Node) []volumeUser {
	var out []volumeUser
	for _, p := range m.Pods {
		if !podRunsOn(p, n.Name) || p.Owner.Kind == "DaemonSet" {
			continue
		}
		for _, c := range claimNames(p) {
			out = append(out, volumeUser{pod: p, claim: c, driver: claimDriver(m, p.Object.Namespace, c)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.pod.Object.Ref() != b.pod.Object.Ref() {
			return a.pod.Object.Ref().Less(b.pod.Object.Ref())
		}
		return a.claim < b.claim
	})
	return out
}

// wouldRunOn reports whether a DaemonSet places a pod on the node, leaving
// Karpenter's disruption taint and the node's passing conditions aside: its
// tolerations (with those the DaemonSet controller adds) match every other
// taint, and its node affinity matches.
func wouldRunOn(w *cluster.Workload, n *cluster.Node) bool {
	tols := sim.PodTolerations(w)
	for _, t := range n.Taints {
		// The pod was placed while the node was healthy: conditions of the
		// moment (not-ready, unreachable, the disruption itself) do not say
		// whether it belongs there.
		if !lastingTaint(t) || t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !sim.Tolerates(tols, t) {
			return false
		}
	}
	pod := &corev1.Pod{Spec: w.Template.Spec}
	node := &corev1.Node{}
	node.Name = n.Name
	node.Labels = n.Labels
	ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)
	return err == nil && ok
}

// daemonPodState says whether the DaemonSet's pod is on the node and serving.
func daemonPodState(m *cluster.Model, w *cluster.Workload, n *cluster.Node) (string, bool) {
	for _, p := range m.Pods {
		if p.Owner != w.Ref() || p.Spec.NodeName != n.Name {
			continue
		}
		if p.Object.Terminating() {
			return "has only a terminating pod (" + p.Object.Name + ") on", false
		}
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		return "", true
	}
	return "has no pod on", false
}

func reportEvictedDaemon(p *Pass, w *cluster.Workload, n *cluster.Node, taint corev1.Taint, state, driver string, users []volumeUser, vas []string) {
	var uses []string
	for _, u := range users {
		s := fmt.Sprintf("%s/%s (claim %s", u.pod.Object.Namespace, u.pod.Object.Name, u.claim)
		if u.driver != "" && driver == "" {
			s += ", " + u.driver
		}
		uses = append(uses, s+")")
	}
	sort.Strings(vas)
	var what []string
	if len(uses) > 0 {
		what = append(what, "pods still use volumes there: "+strings.Join(uses, ", "))
	}
	if len(vas) > 0 {
		what = append(what, "VolumeAttachments still attach volumes to it: "+strings.Join(vas, ", "))
	}
	plugin := "its network agent"
	if driver != "" {
		plugin = "the " + driver + " node plugin"
	}
	summary := fmt.Sprintf("%s %s node %s, which Karpenter is draining (%s), while %s", w.Ref(), state, n.Name, sim.TaintText(taint), strings.Join(what, "; "))
	var b strings.Builder
	fmt.Fprintf(&b, "%s is a %s. It does not tolerate %s, so Karpenter evicted it with the other pods; the DaemonSet controller does not bring it back on the tainted node.", w.Ref(), w.NodeCritical, sim.TaintText(taint))
	if driver != "" {
		b.WriteString("\nWithout " + plugin + " the node cannot unmount, unstage and detach these volumes: their VolumeAttachments stay and the pods' replacements fail with `Multi-Attach error` until the attach/detach controller force-detaches them after six minutes.")
	} else {
		b.WriteString("\nPods still shutting down on the node have lost their network; their volumes may not be released cleanly.")
	}
	if mism := tolerationMismatches(w.Template.Spec.Tolerations, sim.Disruption{Taint: taint}); len(mism) > 0 {
		b.WriteString("\nIts tolerations do not match the taint:")
		for _, l := range mism {
			b.WriteString("\n  - " + l)
		}
	}
	b.WriteString("\nFix the DaemonSet's configuration as disruption-toleration-missing says; the patch below fixes the live object only.")
	var fix *Fix
	all, added := withTolerations(w.Template.Spec.Tolerations, []corev1.Taint{taint})
	if len(added) > 0 {
		patch := nest(podSpecPath(w), map[string]any{"tolerations": tolerationMaps(all)})
		fix = &Fix{
			Summary: fmt.Sprintf("tolerate %s so Karpenter leaves %s on the nodes it drains%s", sim.TaintText(taint), w.Ref(), helmNote(w.Object)),
			Edits:   []Edit{write.LivePatch(w.Object, patch)},
		}
	}
	p.Report(Finding{
		Object:  w.Ref(),
		Origin:  w.Object.Origin,
		Summary: summary,
		Detail:  b.String(),
		Fix:     fix,
	})
}
