package lint

import (
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
)

// Where a workload's pods can run is decided once, by decidePods, for the
// configuration and for a running cluster alike: pod-unschedulable and
// bootstrap-deadlock report its outcome. What only a running cluster shows
// (how long the pods have waited, whether the controller runs) is extra
// evidence, not a second path; the outcome is then worded with it.

// podsEvidence is what is known about where a workload's pods can run.
type podsEvidence struct {
	// bootstrap: the pods must run before Karpenter can launch nodes, judged
	// on the capacity that exists before it.
	bootstrap bool
	// existing is the capacity that exists now and takes (or may take) them.
	existing []sim.Verdict
	// pools are the NodePools Karpenter could launch a node from for them.
	pools []sim.Verdict
	// unknown: nothing is known to take them, and something may.
	unknown bool
	// blocked: NodePools refuse them only because the controller cannot run.
	blocked bool
	// poolsRefuse: the inputs hold NodePools and every one refuses the pods,
	// and what may take them is only node groups the inputs do not hold.
	poolsRefuse bool

	// What a running cluster adds.
	live bool
	// controllerDown: the Karpenter controller is not ready, or absent.
	controllerDown bool
	// waited: the pods have been Pending longer than a node takes to come.
	waited bool
}

// podsOutcome is what the evidence says about the pods.
type podsOutcome int

const (
	podsFine podsOutcome = iota
	// podsDeadlock: needed before Karpenter, and nothing that exists takes them.
	podsDeadlock
	// podsUnverified: whether anything takes them is not known.
	podsUnverified
	// podsNeedController: only NodePools take them, and no controller can
	// launch a node.
	podsNeedController
	// podsFitNothing: no capacity takes them.
	podsFitNothing
	// podsNotLaunched: only NodePools take them and, in a running cluster, no
	// node has come for them in time.
	podsNotLaunched
	// podsRefusedUnmodelled: in a running cluster, capacity that exists takes
	// them by what eksdoctor checks, and the scheduler still refuses.
	podsRefusedUnmodelled
	// podsNoNodePool: no NodePool of the inputs takes them, so Karpenter
	// never launches a node for them; only node groups the inputs do not
	// hold might.
	podsNoNodePool
)

// decidePods decides what the evidence says about a workload's pods.
func decidePods(e podsEvidence) podsOutcome {
	noneNow := len(e.existing) == 0
	switch {
	case e.bootstrap && noneNow:
		return podsDeadlock
	case e.bootstrap:
		return podsFine
	case noneNow && e.unknown && e.poolsRefuse:
		return podsNoNodePool
	case noneNow && len(e.pools) == 0 && e.unknown:
		return podsUnverified
	case noneNow && (e.blocked || e.controllerDown && len(e.pools) > 0):
		return podsNeedController
	case noneNow && len(e.pools) == 0:
		return podsFitNothing
	case noneNow && e.waited:
		return podsNotLaunched
	case !noneNow && e.live && e.waited:
		return podsRefusedUnmodelled
	}
	return podsFine
}

// steadyEvidence is the evidence of a configuration's placement once Karpenter
// runs: every source that fits is capacity, NodePools included.
func steadyEvidence(pl *sim.Placement) podsEvidence {
	return podsEvidence{existing: pl.Fitting(), unknown: pl.Result() == sim.Unknown, blocked: blockedOnlyByController(pl), poolsRefuse: poolsRefuse(pl)}
}

// poolsRefuse reports whether the placement has NodePools, each refusing the
// pods for what they require of the node (labels, requirements, size; not
// only for taints, which leaves them to other capacity, nor for the
// controller), and what may take them is only the compute of a cluster whose
// inputs declare none.
func poolsRefuse(pl *sim.Placement) bool {
	pools := 0
	for _, v := range pl.Verdicts {
		switch {
		case v.Source.Kind == cluster.KindNodePool:
			if v.Result != sim.Refuses || len(v.Reasons) == 0 || v.Reasons[0].Code == sim.CodeController {
				return false
			}
			if onlyTaints(v) && !selectsPoolLabel(pl.Workload, v.Source.NodePool) {
				// Refused by taints alone, and nothing says the pods were
				// meant for this NodePool: other capacity may be theirs.
				return false
			}
			pools++
		case v.Result == sim.Unknown:
			if u := v.Source.Unseen; u == nil || !u.Elsewhere {
				return false
			}
		}
	}
	return pools > 0
}

// bootstrapEvidence is the evidence of a configuration's placement before
// Karpenter runs: what exists then takes the pods or may (a source not known
// before apply may be the one it runs on).
func bootstrapEvidence(boot *sim.Placement) podsEvidence {
	e := podsEvidence{bootstrap: true}
	for _, v := range boot.Verdicts {
		if boot.Fargate != nil && v.Source.Fargate != boot.Fargate {
			// A Fargate profile selects the pods: nothing else runs them.
			continue
		}
		if v.Result == sim.Fits || v.Result == sim.Unknown {
			e.existing = append(e.existing, v)
		}
	}
	return e
}

// liveEvidence is the evidence of Pending pods in a running cluster: the
// nodes that exist, the NodePools that could launch one, the controller's
// state and how long the pods have waited.
func liveEvidence(w *cluster.Workload, pl *sim.Placement, ctrl sim.Controller, waited bool) podsEvidence {
	pools, blocked := launchable(pl)
	return podsEvidence{
		bootstrap:      w != nil && w.Bootstrap != "",
		existing:       fitsExisting(pl),
		pools:          pools,
		unknown:        pl.Result() == sim.Unknown,
		blocked:        blocked,
		live:           true,
		controllerDown: ctrl.State == sim.ControllerNotReady || ctrl.State == sim.ControllerAbsent,
		waited:         waited,
	}
}

// selectsPoolLabel reports whether a workload requires a label that a
// NodePool puts on its nodes by its own (spec.template.metadata.labels, a
// Provisioner's spec.labels), beyond the well-known ones every node has: the
// pods were meant for that NodePool.
func selectsPoolLabel(w *cluster.Workload, np *cluster.NodePool) bool {
	if w == nil || np == nil {
		return false
	}
	for k, v := range np.Labels {
		if cluster.IsUnknown(v) || wellKnownLabel(k) {
			continue
		}
		if got, ok := selectedValue(w, k); ok && got == v {
			return true
		}
	}
	return false
}

// wellKnownLabel reports whether a label key is one nodes carry whatever
// capacity they come from (kubernetes.io/*, topology, instance type).
func wellKnownLabel(k string) bool {
	return strings.Contains(k, "kubernetes.io/") || strings.HasPrefix(k, "topology.") || strings.HasPrefix(k, "node.kubernetes.io")
}
