package lint

import (
	"iter"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
)

// Taints and the tolerations that match them: which taints keep pods off a capacity source, and the tolerations that let them on.

// toleration returns the toleration that matches exactly one taint.
func toleration(t corev1.Taint) corev1.Toleration {
	if t.Value == "" {
		return corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpExists, Effect: t.Effect}
	}
	return corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpEqual, Value: t.Value, Effect: t.Effect}
}

// tolerationMaps renders tolerations as plain maps in the field order users write.
func tolerationMaps(ts []corev1.Toleration) []any {
	out := make([]any, 0, len(ts))
	for _, t := range ts {
		m := map[string]any{"key": t.Key, "operator": string(t.Operator)}
		if t.Key == "" {
			delete(m, "key")
		}
		if t.Operator == "" {
			m["operator"] = string(corev1.TolerationOpEqual)
		}
		if t.Value != "" {
			m["value"] = t.Value
		}
		if t.Effect != "" {
			m["effect"] = string(t.Effect)
		}
		if t.TolerationSeconds != nil {
			m["tolerationSeconds"] = *t.TolerationSeconds
		}
		out = append(out, m)
	}
	return out
}

// withTolerations returns the workload's tolerations plus those needed for taints.
func withTolerations(existing []corev1.Toleration, taints []corev1.Taint) ([]corev1.Toleration, []corev1.Toleration) {
	all := append([]corev1.Toleration(nil), existing...)
	var added []corev1.Toleration
	for _, t := range taints {
		if sim.Tolerates(all, t) {
			continue
		}
		tol := toleration(t)
		all = append(all, tol)
		added = append(added, tol)
	}
	return all, added
}

// blockingTaints returns every NoSchedule/NoExecute taint of a source the
// tolerations do not match.
func blockingTaints(src *sim.Source, tolerations []corev1.Toleration) []corev1.Taint {
	var taints []corev1.Taint
	switch {
	case src.NodeGroup != nil:
		taints = src.NodeGroup.Taints
	case src.NodePool != nil:
		taints = src.NodePool.Taints
	case src.Node != nil:
		taints = src.Node.Taints
	}
	var out []corev1.Taint
	for _, t := range taints {
		if t.Effect == corev1.TaintEffectPreferNoSchedule || sim.Tolerates(tolerations, t) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// onlyTaints reports whether a verdict refuses for untolerated taints alone, so
// tolerating them would make the source fit.
func onlyTaints(v sim.Verdict) bool {
	return v.Result == sim.Refuses && sim.OnlyCode(v.Reasons, sim.CodeTaint)
}

// toleratingTakes reports whether the source of v takes the workload's pods
// once they tolerate taints, in the phase of v: its verdict is no longer a
// refusal, or refuses only because the Karpenter controller cannot run (a
// problem reported on its own).
func toleratingTakes(s *sim.Simulator, w *cluster.Workload, phase cluster.Phase, v sim.Verdict, taints []corev1.Taint) bool {
	_, added := withTolerations(w.Template.Spec.Tolerations, taints)
	u, ok := s.VerdictTolerating(w, phase, added, v.Source)
	return ok && (u.Result != sim.Refuses || sim.OnlyCode(u.Reasons, sim.CodeController))
}

// taintNeed is a source that refuses a workload only for the taints listed.
type taintNeed struct {
	verdict sim.Verdict
	taints  []corev1.Taint
}

// taintNeeds yields the sources (in the order of kinds) that refuse the
// workload only for their taints and take it once it tolerates them, with
// those taints: one at a time, since a placement among hundreds of tainted
// NodePools is asked for its first few.
func taintNeeds(s *sim.Simulator, w *cluster.Workload, pl *sim.Placement, kinds ...cluster.CapacityKind) iter.Seq[taintNeed] {
	return func(yield func(taintNeed) bool) {
		for _, k := range kinds {
			for i := range pl.Verdicts {
				v := &pl.Verdicts[i]
				if v.Source.Kind != k || !onlyTaints(*v) {
					continue
				}
				taints := blockingTaints(v.Source, w.Template.Spec.Tolerations)
				if len(taints) == 0 || !toleratingTakes(s, w, pl.Phase, *v, taints) {
					continue
				}
				if !yield(taintNeed{verdict: *v, taints: taints}) {
					return
				}
			}
		}
	}
}

// firstTaintNeed is the first of taintNeeds, if any.
func firstTaintNeed(s *sim.Simulator, w *cluster.Workload, pl *sim.Placement, kinds ...cluster.CapacityKind) (taintNeed, bool) {
	for n := range taintNeeds(s, w, pl, kinds...) {
		return n, true
	}
	return taintNeed{}, false
}

// toleratesFargate finds an explicit toleration of the Fargate taint (an empty key
// with Exists tolerates every taint, which is not a Fargate-specific choice).
func toleratesFargate(ts []corev1.Toleration) (corev1.Toleration, bool) {
	for _, t := range ts {
		if t.Key == fargateTaint.Key && sim.Tolerates([]corev1.Toleration{t}, fargateTaint) {
			return t, true
		}
	}
	return corev1.Toleration{}, false
}

func fargateTolerationText(t corev1.Toleration) string {
	s := "{key: " + t.Key + ", operator: " + string(t.Operator)
	if t.Value != "" {
		s += ", value: " + t.Value
	}
	if t.Effect != "" {
		s += ", effect: " + string(t.Effect)
	}
	return s + "}"
}

// lastingTaint reports whether a node taint describes the capacity rather than a
// passing state of one node: tolerating a disruption, readiness or Fargate taint
// is never the fix.
func lastingTaint(t corev1.Taint) bool {
	switch {
	case t.Key == sim.DisruptedTaint.Key, t.Key == sim.DisruptingTaint.Key,
		t.Key == "karpenter.sh/unregistered",
		strings.HasPrefix(t.Key, "node.kubernetes.io/"),
		strings.HasPrefix(t.Key, "node.cloudprovider.kubernetes.io/"),
		t.Key == fargateTaint.Key,
		t.Key == "ToBeDeletedByClusterAutoscaler", t.Key == "DeletionCandidateOfClusterAutoscaler":
		return false
	}
	return true
}
