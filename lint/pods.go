package lint

import (
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
)

// decidePods decides what the evidence says about a workload's pods.
func decidePods(e podsEvidence) podsOutcome {
	noneNow := len(e.existing) == 0
	switch {
	case e.bootstrap && noneNow:
		return podsDeadlock
	case e.bootstrap:
		return podsFine
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
	return podsEvidence{existing: pl.Fitting(), unknown: pl.Result() == sim.Unknown, blocked: blockedOnlyByController(pl)}
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
