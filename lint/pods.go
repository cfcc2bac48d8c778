package lint

import (
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/parallel"
	"github.com/eksdoctor/eksdoctor/sim"
)

// Where a workload's pods can run is decided once, by decidePods, for the
// configuration and for a running cluster alike: pod-unschedulable and
// bootstrap-deadlock report its outcome. What only a running cluster shows
// (how long the pods have waited, whether the controller runs) is extra
// evidence, not a second path; the outcome is then worded with it. The
// configuration's decisions are one fact (podsFact), which
// addon-toleration-unsupported reads too.

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
	// nominated names the NodeClaims Karpenter said the pods should run on
	// (its Nominated events): it found capacity for them, whatever eksdoctor
	// could judge of the NodePools.
	nominated []string
	// karpenterRefused: Karpenter's last word on the pods is that no NodePool
	// takes them (its FailedScheduling event), where eksdoctor could not
	// judge every NodePool (another provider's instance types).
	karpenterRefused bool
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
	case noneNow && len(e.pools) == 0 && e.unknown && e.karpenterRefused && len(e.nominated) == 0:
		return podsFitNothing
	case noneNow && len(e.pools) == 0 && e.unknown && len(e.nominated) == 0:
		return podsUnverified
	case noneNow && (e.blocked || e.controllerDown && len(e.pools) > 0):
		return podsNeedController
	case noneNow && len(e.pools) == 0 && len(e.nominated) == 0:
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

// podsDecision is what the configuration says about where a workload's pods
// run, decided once for every check that asks: pod-unschedulable and
// bootstrap-deadlock report it, and addon-toleration-unsupported reads what
// they would have the pods tolerate.
type podsDecision struct {
	// steady is the placement once Karpenter runs; nil when the pods fit (or
	// there are none), so it was not worked out source by source.
	steady        *sim.Placement
	steadyOutcome podsOutcome
	// boot is the placement before Karpenter runs, for a component
	// bootstrap-deadlock judges; nil for any other.
	boot        *sim.Placement
	bootOutcome podsOutcome
	// need is what the pods lack to run where they must: the taints of the
	// first source that refuses them only for those, in the phase that
	// decides; nil when nothing is wrong or a taint is not what is.
	need *podsNeed
}

// podsNeed is the taints of one source that stand between a workload and the
// capacity meant for it, in a phase.
type podsNeed struct {
	taintNeed
	phase cluster.Phase
}

// podsFact decides, for every workload judged from the configuration, where
// its pods run (see podsDecision).
var podsFact = &Fact{
	Name: "where the configuration lets workloads' pods run",
	compute: func(fp *factPass) any {
		m, s := fp.Model, fp.Sim
		ws := m.Workloads
		decided := make([]*podsDecision, len(ws))
		parallel.Each(len(ws), func(i int) {
			if judgedStatically(m, ws[i]) {
				decided[i] = decideWorkloadPods(m, s, ws[i])
			}
		})
		out := make(map[*cluster.Workload]*podsDecision, len(ws))
		for i, w := range ws {
			if decided[i] != nil {
				out[w] = decided[i]
			}
		}
		return out
	},
}

// decideWorkloadPods places a workload in the phases that matter and decides
// what each placement says.
func decideWorkloadPods(m *cluster.Model, s *sim.Simulator, w *cluster.Workload) *podsDecision {
	d := &podsDecision{}
	ds := w.IsDaemonSet()
	if bootstrapJudged(m, w) {
		d.boot = s.Place(w, cluster.Bootstrap)
		if !ds {
			d.bootOutcome = decidePods(bootstrapEvidence(d.boot))
		}
	}
	if ds || w.Replicas != 0 && s.Result(w, cluster.Steady) != sim.Fits {
		d.steady = s.Place(w, cluster.Steady)
		if !ds {
			d.steadyOutcome = decidePods(steadyEvidence(d.steady))
			if d.steadyOutcome == podsNoNodePool && w.Component == "karpenter" {
				// The controller never runs on the nodes it launches.
				d.steadyOutcome = podsUnverified
			}
		}
	}
	d.need = decidedNeed(s, w, d)
	return d
}

// decidedNeed is the taints whose toleration the checks' fixes propose: for a
// DaemonSet, the first node group it does not run on before Karpenter (a
// component needed then), else the first source whose nodes a node-critical
// one selects and whose taints it does not tolerate; for other workloads, the
// first source, before Karpenter for a component it deadlocks, else once it
// runs, that refuses the pods only for taints — and in every case one that
// takes them once they tolerate the taints.
func decidedNeed(s *sim.Simulator, w *cluster.Workload, d *podsDecision) *podsNeed {
	if w.IsDaemonSet() {
		if d.boot != nil {
			for _, v := range d.boot.Verdicts {
				if v.Source.Kind == cluster.KindNodeGroup && onlyTaints(v) {
					if taints := blockingTaints(v.Source, w.Template.Spec.Tolerations); toleratingTakes(s, w, cluster.Bootstrap, v, taints) {
						return &podsNeed{taintNeed{v, taints}, cluster.Bootstrap}
					}
				}
			}
		}
		if w.NodeCritical != "" && d.steady != nil {
			for _, v := range d.steady.Verdicts {
				if v.Source.Kind != cluster.KindFargate && onlyTaints(v) {
					if taints := blockingTaints(v.Source, w.Template.Spec.Tolerations); toleratingTakes(s, w, cluster.Steady, v, taints) {
						return &podsNeed{taintNeed{v, taints}, cluster.Steady}
					}
				}
			}
		}
		return nil
	}
	if d.boot != nil && d.bootOutcome == podsDeadlock {
		if n, ok := firstTaintNeed(s, w, d.boot, cluster.KindNodeGroup, cluster.KindNode); ok {
			return &podsNeed{n, cluster.Bootstrap}
		}
	}
	if d.steady != nil && d.steady.Fargate == nil && (d.steadyOutcome == podsNeedController || d.steadyOutcome == podsFitNothing) {
		if n, ok := firstTaintNeed(s, w, d.steady, cluster.KindNodeGroup, cluster.KindNodePool, cluster.KindNode); ok {
			return &podsNeed{n, cluster.Steady}
		}
	}
	return nil
}

// fitsExisting returns the fitting sources that exist now (nodes; node groups and
// Fargate profiles when static inputs are read with the cluster).
func fitsExisting(pl *sim.Placement) []sim.Verdict {
	var out []sim.Verdict
	for _, v := range pl.Fitting() {
		if v.Source.Kind != cluster.KindNodePool {
			out = append(out, v)
		}
	}
	return out
}

// launchable returns the NodePools that could launch a node for the pods: those
// that fit, and those that refuse only because the Karpenter controller cannot
// run (blocked is then set).
func launchable(pl *sim.Placement) (pools []sim.Verdict, blocked bool) {
	for _, v := range pl.Verdicts {
		if v.Source.Kind != cluster.KindNodePool {
			continue
		}
		switch {
		case v.Result == sim.Fits && pl.Fargate == nil:
			pools = append(pools, v)
		case v.Result == sim.Refuses && len(v.Reasons) == 1 && v.Reasons[0].Code == sim.CodeController:
			pools = append(pools, v)
			blocked = true
		}
	}
	return pools, blocked
}

func blockedOnlyByController(pl *sim.Placement) bool {
	for _, v := range pl.Verdicts {
		if v.Source.Kind == cluster.KindNodePool && len(v.Reasons) == 1 && v.Reasons[0].Code == sim.CodeController {
			return true
		}
	}
	return false
}

// bootstrapJudged reports whether bootstrap-deadlock judges a workload: a
// component needed before Karpenter capacity exists, from the configuration.
func bootstrapJudged(m *cluster.Model, w *cluster.Workload) bool {
	return w.Bootstrap != "" && w.Replicas != 0 && judgedStatically(m, w) && !addonAfterKarpenter(m, w)
}

// addonAfterKarpenter reports whether Terraform creates the add-on only after
// the Karpenter controller and a NodePool exist (its resource depends on both):
// Karpenter capacity can then come up while Terraform waits for the add-on, and
// only the steady phase matters, as for an add-on enabled once the cluster runs.
func addonAfterKarpenter(m *cluster.Model, w *cluster.Workload) bool {
	a := w.Addon
	if a == nil || m.Terraform == nil || m.Karpenter.Release == nil || m.Karpenter.Release.Address == "" {
		return false
	}
	addr := m.Terraform.ResourceOf(a.Address)
	if addr == "" || !m.Terraform.DependsOn(addr, m.Terraform.ResourceOf(m.Karpenter.Release.Address)) {
		return false
	}
	for _, np := range m.NodePools {
		if via := m.Terraform.ResourceOf(np.Object.Via); via != "" && m.Terraform.DependsOn(addr, via) {
			return true
		}
	}
	return false
}
