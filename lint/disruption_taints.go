package lint

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
)

// Karpenter's disruption taints on nodes, and why tolerations do not match them.

// disruptionTaintOn returns the Karpenter disruption taint a node carries.
func disruptionTaintOn(n *cluster.Node) (corev1.Taint, bool) {
	for _, t := range n.Taints {
		if t.Key == sim.DisruptedTaint.Key || t.Key == sim.DisruptingTaint.Key {
			return t, true
		}
	}
	return corev1.Taint{}, false
}

// tolerationMismatches explains why tolerations that look related do not match
// the disruption taint.
func tolerationMismatches(ts []corev1.Toleration, d sim.Disruption) []string {
	var out []string
	for _, t := range ts {
		text := tolerationText(t)
		switch {
		case t.Key == "" && t.Operator == corev1.TolerationOpExists && t.Effect != "" && t.Effect != d.Taint.Effect:
			line := fmt.Sprintf("%s matches only %s taints; the disruption taint is %s", text, t.Effect, d.Taint.Effect)
			if t.Effect == corev1.TaintEffectNoExecute {
				line += " (this is the aws-ebs-csi-driver chart's default node.tolerations)"
			}
			out = append(out, line)
		case t.Key == d.Taint.Key && t.Effect != "" && t.Effect != d.Taint.Effect:
			out = append(out, fmt.Sprintf("%s has effect %s; the disruption taint is %s", text, t.Effect, d.Taint.Effect))
		case t.Key == d.Taint.Key && t.Operator != corev1.TolerationOpExists && t.Value != d.Taint.Value:
			out = append(out, fmt.Sprintf("%s requires the value %q; the taint's value is %q (use operator: Exists)", text, t.Value, d.Taint.Value))
		case t.Key == sim.DisruptingTaint.Key && d.Generation == sim.GenV1:
			out = append(out, fmt.Sprintf("%s names the v1beta1 key (Karpenter v0.32 to v0.37); v1 renamed the taint %s", text, sim.DisruptedTaint.Key))
		case t.Key == sim.DisruptedTaint.Key && d.Generation == sim.GenBeta:
			out = append(out, fmt.Sprintf("%s names the v1 key; Karpenter v%s still uses %s", text, strings.TrimPrefix(d.Version, "v"), sim.TaintText(sim.DisruptingTaint)))
		}
	}
	return out
}

// tolerationText renders a toleration the way users write it: {key: k, operator: Exists}.
func tolerationText(t corev1.Toleration) string {
	var parts []string
	if t.Key != "" {
		parts = append(parts, "key: "+t.Key)
	}
	op := t.Operator
	if op == "" {
		op = corev1.TolerationOpEqual
	}
	parts = append(parts, "operator: "+string(op))
	if t.Value != "" {
		parts = append(parts, "value: "+t.Value)
	}
	if t.Effect != "" {
		parts = append(parts, "effect: "+string(t.Effect))
	}
	if t.TolerationSeconds != nil {
		parts = append(parts, fmt.Sprintf("tolerationSeconds: %d", *t.TolerationSeconds))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
