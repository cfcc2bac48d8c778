package lint

import (
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/parallel"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/write"
)

// Pending pods of a running cluster: grouped by owner, judged by the same placement as inputs, reported as pod-unschedulable or bootstrap-deadlock.

// pendingGroup is the unscheduled Pending pods of one owner.
type pendingGroup struct {
	owner    cluster.ObjectRef
	workload *cluster.Workload
	pods     []*cluster.Pod
}

// pendingGroups returns the Pending pods of a live cluster that kube-scheduler
// has not placed, grouped by owner (a Deployment's pods together), in a stable
// order. Pods of other schedulers (fargate-scheduler, custom ones) are left out:
// eksdoctor judges placement as kube-scheduler does. So are pods held by
// scheduling gates. Pods the live Fargate checks explain are settled by
// arbitrate: each finding names its pods as causes.
func pendingGroups(m *cluster.Model) []pendingGroup {
	by := pendingPods(m, func(pod *cluster.Pod) bool {
		// Held back on purpose until its gates are removed, or placed by
		// another scheduler.
		s := pod.Spec.SchedulerName
		return !pod.Object.Terminating() && len(pod.Spec.SchedulingGates) == 0 && (s == "" || s == corev1.DefaultSchedulerName)
	})
	out := make([]pendingGroup, 0, len(by))
	for _, ref := range sortedOwners(by) {
		pods := by[ref]
		sort.Slice(pods, func(i, j int) bool { return pods[i].Object.Name < pods[j].Object.Name })
		out = append(out, pendingGroup{owner: ref, workload: pods[0].Workload, pods: pods})
	}
	return out
}

// pendingDetail renders the scheduler's words beside eksdoctor's explanation.
func pendingDetail(g pendingGroup, pl *sim.Placement, extra ...string) string {
	var b strings.Builder
	if q := cluster.SchedulerMessage(g.pods); q.Message != "" {
		fmt.Fprintf(&b, "kube-scheduler: %q (%s).\n", q.Message, q.From)
	} else {
		b.WriteString("kube-scheduler: no FailedScheduling event or PodScheduled message was read (events expire after an hour).\n")
	}
	said := cluster.KarpenterSaid(g.pods)
	if said.Message != "" {
		fmt.Fprintf(&b, "Karpenter: %q (%s).\n", said.Message, said.From)
	}
	b.WriteString("eksdoctor: " + pl.Summary())
	if k := pl.KarpenterMessage(); k != "" && "Failed to schedule pod, "+k != said.Message {
		// Karpenter's FailedScheduling event on the pods, word for word, as
		// it would be now.
		verb := "would say"
		if said.Message != "" {
			verb = "would say now"
		}
		fmt.Fprintf(&b, "\nKarpenter %s: %q.", verb, "Failed to schedule pod, "+k)
	}
	if lines := pl.Grouped(maxDetailed); len(lines) > 0 {
		b.WriteString("\nSource by source, in the cluster as it is:")
		for _, l := range lines {
			b.WriteString("\n  - " + l)
		}
	}
	for _, e := range extra {
		if e != "" {
			b.WriteString("\n" + e)
		}
	}
	fmt.Fprintf(&b, "\nPending pods (%d): %s.", len(g.pods), podNames(g.pods))
	return b.String()
}

// oldestPending is how long the longest-waiting pod of a group has existed.
func oldestPending(m *cluster.Model, g pendingGroup) (time.Duration, bool) {
	now, ok := m.NowTime()
	var oldest time.Duration
	known := false
	for _, p := range g.pods {
		if age, ok := ageAt(now, ok, creationTimestamp(p.Object)); ok && age > oldest {
			oldest, known = age, true
		}
	}
	return oldest, known
}

func sourceNames(vs []sim.Verdict) string {
	var names []string
	for _, v := range vs {
		names = append(names, describeSource(v.Source))
	}
	if len(names) > 4 {
		names = append(names[:4], fmt.Sprintf("and %d more", len(names)-4))
	}
	return strings.Join(names, ", ")
}

// pendingKind is the check a group of Pending pods is reported under.
type pendingKind int

const (
	pendingUnschedulable pendingKind = iota + 1 // pod-unschedulable
	pendingBootstrap                            // bootstrap-deadlock
)

// pendingJudgment is what a group of Pending pods is.
type pendingJudgment struct {
	kind    pendingKind
	finding Finding
}

// livePendingFact judges the Pending pods of a running cluster once for the
// two checks that report them: each group is reported once, under one ID.
var livePendingFact = &Fact{
	Name:     "Pending pods of a running cluster",
	Requires: []*Fact{karpenterControllerFact},
	compute: func(fp *factPass) any {
		m, s := fp.Model, fp.Sim
		if m.Live == nil {
			return []pendingJudgment(nil)
		}
		ctrl := factOf[sim.Controller](fp, karpenterControllerFact)
		// Groups are judged side by side (a large cluster has thousands),
		// kept in their order.
		groups := pendingGroups(m)
		claims := nodeClaimNames(m)
		judged := make([]*pendingJudgment, len(groups))
		parallel.Each(len(groups), func(i int) {
			g := groups[i]
			if !judgeWholePlacements.Load() && fitsQuietly(m, g, s, ctrl, claims) {
				return
			}
			placed := s.PlacePod(g.pods[0])
			pl := placed
			if g.owner.Kind == "DaemonSet" {
				pl = withoutNodePools(pl)
			}
			if kind, f, ok := judgePending(m, g, pl, ctrl, claims); ok {
				f.causes = podCauses(g.pods)
				judged[i] = &pendingJudgment{kind: kind, finding: f}
			}
			// The finding is worded: what it was worded from can go.
			s.Release(placed)
		})
		var out []pendingJudgment
		for _, j := range judged {
			if j != nil {
				out = append(out, *j)
			}
		}
		return out
	},
}

// judgeWholePlacements, when set, judges every group of Pending pods on its
// whole placement (tests compare it with fitsQuietly's judgment).
var judgeWholePlacements atomic.Bool

// fitsQuietly reports whether a group of Pending pods fits some capacity and
// is no problem, as the sources that fit say it: the sources that refuse
// are not worked out (most Pending pods of a large cluster scaling up fit
// one NodePool of hundreds). A placement of only the fitting sources gives
// the same evidence as the whole one when some source fits, so the judgment
// is the same; any other group is judged on the whole placement.
func fitsQuietly(m *cluster.Model, g pendingGroup, s *sim.Simulator, ctrl sim.Controller, claims map[string]bool) bool {
	placed := s.PlacePodFitting(g.pods[0])
	defer s.Release(placed)
	pl := placed
	if g.owner.Kind == "DaemonSet" {
		pl = withoutNodePools(pl)
	}
	if pl.Result() != sim.Fits {
		return false
	}
	_, _, ok := judgePending(m, g, pl, ctrl, claims)
	return !ok
}

// reportPendingPods reports the Pending pods of a live cluster judged to be of
// a kind; the static variants of both checks leave live workloads to this.
func reportPendingPods(p *Pass, kind pendingKind) {
	for _, j := range resultOf[[]pendingJudgment](p, livePendingFact) {
		if j.kind == kind {
			p.Report(j.finding)
		}
	}
}

// withoutNodePools leaves NodePools out of a placement: Karpenter launches no
// node for a DaemonSet's pod, which is bound to the node it was created for.
func withoutNodePools(pl *sim.Placement) *sim.Placement { return pl.Without(cluster.KindNodePool) }

// judgePending decides what a group of Pending pods is, and under which check it
// is reported. ok is false when the pods are not (yet) a problem.
func judgePending(m *cluster.Model, g pendingGroup, pl *sim.Placement, ctrl sim.Controller, claims map[string]bool) (pendingKind, Finding, bool) {
	f := Finding{Object: g.owner, Origin: g.pods[0].Object.Origin}
	if w := g.workload; w != nil {
		f.Origin = w.Object.Origin
	}
	n := len(g.pods)
	age, known := oldestPending(m, g)
	waitedText := ""
	if known {
		waitedText = " for " + ageText(age)
	}
	w := g.workload
	e := liveEvidence(w, pl, ctrl, !known || age >= pendingGrace)
	e.nominated = nominatedTo(claims, g.pods)
	e.karpenterRefused = karpenterRefused(g.pods)
	existing, pools := e.existing, e.pools
	clause := func() string { return firstClause(pl) }

	switch decidePods(e) {
	case podsDeadlock:
		f.Severity = Error
		what := "fit no node that exists"
		if len(pools) > 0 {
			what = "fit only Karpenter capacity (" + sourceNames(pools) + ")"
		}
		f.Summary = fmt.Sprintf("%s: %d pod(s) Pending%s: they %s, and %s: %s", g.owner, n, waitedText, what, lowerFirst(w.Bootstrap), clause())
		f.Detail = pendingDetail(g, pl, "It must run before Karpenter can launch nodes: "+w.Bootstrap+". "+ctrl.Sentence())
		f.Fix = livePendingFix(w, pl, true)
		return pendingBootstrap, f, true
	case podsUnverified:
		f.Severity = Info
		f.Summary = fmt.Sprintf("%s: %d pod(s) Pending%s; could not verify whether they fit any capacity", g.owner, n, waitedText)
		f.Detail = pendingDetail(g, pl)
		return pendingUnschedulable, f, true
	case podsFitNothing:
		f.Severity = Error
		f.Summary = fmt.Sprintf("%s: %d pod(s) Pending%s fit no capacity: %s", g.owner, n, waitedText, clause())
		if e.unknown {
			// eksdoctor could not judge every NodePool; Karpenter did.
			f.Summary = fmt.Sprintf("%s: %d pod(s) Pending%s fit no node, and Karpenter found no NodePool for them: %q", g.owner, n, waitedText, cluster.KarpenterSaid(g.pods).Message)
		}
		f.Detail = pendingDetail(g, pl)
		if w != nil {
			f.Fix = livePendingFix(w, pl, false)
		}
		return pendingUnschedulable, f, true
	case podsNeedController:
		// The root cause, the controller, is reported on its own pods
		// (bootstrap-deadlock) or its deletion (finalizer-stuck).
		f.Severity = Warning
		why := ctrl.Why
		if e.blocked {
			why = "the Karpenter controller fits no node that exists"
		}
		f.Summary = fmt.Sprintf("%s: %d pod(s) Pending%s fit only %s, and no Karpenter controller is ready to launch a node: %s", g.owner, n, waitedText, sourceNames(pools), why)
		f.Detail = pendingDetail(g, pl, ctrl.Sentence())
		return pendingUnschedulable, f, true
	case podsNotLaunched:
		f.Severity = Warning
		f.Summary = fmt.Sprintf("%s: %d pod(s) Pending%s fit only %s, yet no node has come for them", g.owner, n, waitedText, sourceNames(pools))
		if len(pools) == 0 {
			f.Summary = fmt.Sprintf("%s: %d pod(s) Pending%s: Karpenter nominated them to NodeClaim %s, yet no node has come for them", g.owner, n, waitedText, strings.Join(e.nominated, ", "))
		}
		f.Detail = pendingDetail(g, pl, ctrl.Sentence(), launchHint(m, pools))
		return pendingUnschedulable, f, true
	case podsRefusedUnmodelled:
		f.Severity = Info
		f.Summary = fmt.Sprintf("%s: %d pod(s) Pending%s although %s fits what eksdoctor checks (taints, node selection, resources)", g.owner, n, waitedText, sourceNames(existing))
		f.Detail = pendingDetail(g, pl, "The scheduler refuses for a reason eksdoctor does not model: inter-pod affinity or anti-affinity, topology spread, a volume's zone, host ports, or requests that changed since the pods were listed.")
		return pendingUnschedulable, f, true
	}
	return 0, Finding{}, false
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// karpenterRefused reports whether Karpenter's newest word on each of the
// pods is a FailedScheduling event that places them nowhere (not "would
// schedule against" a NodeClaim on its way).
func karpenterRefused(pods []*cluster.Pod) bool {
	for _, p := range pods {
		var last *cluster.Event
		for i := range p.Events {
			ev := &p.Events[i]
			if ev.Source == "karpenter" && (ev.Reason == "FailedScheduling" || ev.Reason == "Nominated") {
				last = ev
			}
		}
		if last == nil || last.Reason != "FailedScheduling" || strings.Contains(last.Message, "would schedule against") {
			return false
		}
	}
	return len(pods) > 0
}

// nodeClaimNames is the set of the cluster's NodeClaims.
func nodeClaimNames(m *cluster.Model) map[string]bool {
	claims := make(map[string]bool, len(m.NodeClaims))
	for _, nc := range m.NodeClaims {
		claims[nc.Name] = true
	}
	return claims
}

// nominatedTo names the NodeClaims among claims Karpenter nominated the pods
// to (its Nominated events), in order.
func nominatedTo(claims map[string]bool, pods []*cluster.Pod) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range pods {
		for _, ev := range p.Events {
			if ev.Reason != "Nominated" || ev.Source != "karpenter" {
				continue
			}
			if c := nominatedClaim(ev.Message); claims[c] && !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	sort.Strings(out)
	return out
}

// launchHint points at what keeps Karpenter from launching for NodePools that
// fit: NodeClaims of those pools that never registered.
func launchHint(m *cluster.Model, pools []sim.Verdict) string {
	names := map[string]bool{}
	for _, v := range pools {
		if v.Source.NodePool != nil {
			names[v.Source.NodePool.Name] = true
		}
	}
	var claims []string
	for _, nc := range m.NodeClaims {
		if !names[nc.NodePool] {
			continue
		}
		if reg := conditionOf(nc.Conditions, "Registered"); reg == nil || reg.Status != "True" {
			claims = append(claims, nc.Name)
		}
	}
	sort.Strings(claims)
	if len(claims) == 0 {
		return "No NodeClaim of those NodePools exists: the Karpenter controller's log says why it does not launch (limits, instance type availability, the EC2NodeClass not Ready)."
	}
	return fmt.Sprintf("NodeClaims of those NodePools that have not registered a node: %s (see nodeclaim-not-registered).", strings.Join(claims, ", "))
}

// livePendingFix proposes, for Pending pods of a live workload, the smallest
// change that lets one source take them, as commands against the cluster: the
// tolerations for a NodePool's taints (or, for components that must run before
// Karpenter, a node's that is not Karpenter's), or a NodePool label the pods
// select.
func livePendingFix(w *cluster.Workload, pl *sim.Placement, bootstrap bool) *Fix {
	if w.Object.Kind == "Job" || w.Object.Manager != "cluster" {
		// A Job's pod template cannot be changed once created.
		return nil
	}
	kinds := []cluster.CapacityKind{cluster.KindNodePool, cluster.KindNode}
	if bootstrap {
		kinds = []cluster.CapacityKind{cluster.KindNode}
	}
	for _, k := range kinds {
		for _, v := range pl.Verdicts {
			if v.Source.Kind != k || !onlyTaints(v) {
				continue
			}
			if n := v.Source.Node; n != nil && (n.Labels["karpenter.sh/nodepool"] != "" && bootstrap || n.Deleting) {
				continue
			}
			taints := blockingTaints(v.Source, w.Template.Spec.Tolerations)
			lasting := len(taints) > 0
			for _, t := range taints {
				lasting = lasting && lastingTaint(t)
			}
			if !lasting {
				continue
			}
			all, added := withTolerations(w.Template.Spec.Tolerations, taints)
			if len(added) == 0 {
				continue
			}
			var names []string
			for _, t := range added {
				names = append(names, fmt.Sprintf("%s:%s", t.Key, t.Effect))
			}
			patch := nest(podSpecPath(w), map[string]any{"tolerations": tolerationMaps(all)})
			return &Fix{
				Summary: fmt.Sprintf("tolerate %s so the pods can run on %s%s", strings.Join(names, ", "), describeSource(v.Source), helmNote(w.Object)),
				Edits:   []Edit{write.LivePatch(w.Object, patch)},
			}
		}
	}
	if bootstrap {
		return nil
	}
	for _, v := range pl.Verdicts {
		np, key, value, ok := missingLabelOnly(w, v)
		if !ok || np.Object.Manager != "cluster" {
			continue
		}
		patch := nest(poolLabelsParent(np), map[string]any{"labels": map[string]any{key: value}})
		return &Fix{
			Summary: fmt.Sprintf("label the nodes of %s with %s=%s, the label the pods select (Karpenter replaces the NodePool's existing nodes, which drifted)%s", poolWord(np), key, value, helmNote(np.Object)),
			Edits:   []Edit{write.LivePatch(np.Object, patch)},
		}
	}
	return nil
}
