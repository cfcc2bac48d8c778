package lint

import (
	"fmt"
	"iter"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/write"
)

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

// nest wraps a value under a dotted path: nest("spec.template", v) = {spec: {template: v}}.
func nest(path string, v any) map[string]any {
	m := map[string]any{}
	setPath(m, path, v)
	return m
}

// yamlText renders a patch as YAML.
func yamlText(v any) string { return write.YAMLText(v) }

// podSpecPath is the path of the pod spec inside a workload object.
func podSpecPath(w *cluster.Workload) string {
	if w.TemplatePath == "" {
		return "spec"
	}
	return w.TemplatePath + ".spec"
}

// PodChange is a change to one field of a workload's pod spec, as a fix proposes
// it: the field's complete new value, and for list fields the items it adds.
type PodChange struct {
	// Field is the pod spec field: "tolerations", "nodeSelector", "affinity".
	Field string
	// Value is the field's complete new value (JSON-like), what a manifest patch sets.
	Value any
	// Added lists the items a list field gains. A source that renders the list from
	// its own settings (chart values, add-on defaults) appends these to what it
	// already sets rather than copying the rendered list, whose items may come from
	// the templates themselves.
	Added []any
}

// SourceFixer renders a change to a workload's pod spec in the format of the
// source that installs the workload (Helm values, EKS add-on configuration), and
// says where the change goes. ok=false means the source cannot express it; the
// next fixer is tried, then a patch of the object itself.
type SourceFixer func(m *cluster.Model, w *cluster.Workload, c PodChange) (e Edit, where string, ok bool)

// sourceFixers are tried in order.
var sourceFixers = []SourceFixer{releaseFieldEdit, addonFieldEdit}

func sourceFix(m *cluster.Model, w *cluster.Workload, c PodChange) (Edit, string, bool) {
	for _, f := range sourceFixers {
		if e, where, ok := f(m, w, c); ok {
			return e, where, true
		}
	}
	return Edit{}, "", false
}

// podFix renders a pod spec change where the workload is configured: through its
// source, else as a patch of the object. nil when neither can express it.
func podFix(m *cluster.Model, w *cluster.Workload, c PodChange, summary string) *Fix {
	if e, where, ok := sourceFix(m, w, c); ok {
		return &Fix{Summary: summary + ", through " + where, Edits: []Edit{e}}
	}
	e, ok := write.ObjectPatch(m, w.Object, nest(podSpecPath(w), map[string]any{c.Field: c.Value}))
	if !ok {
		return nil
	}
	return &Fix{Summary: summary, Edits: []Edit{e}}
}

// tolerationChange is the change that adds the tolerations the taints need to
// the workload's; ok is false when it tolerates them all already.
func tolerationChange(w *cluster.Workload, taints []corev1.Taint) (PodChange, []corev1.Toleration, bool) {
	all, added := withTolerations(w.Template.Spec.Tolerations, taints)
	if len(added) == 0 {
		return PodChange{}, nil, false
	}
	return PodChange{Field: "tolerations", Value: tolerationMaps(all), Added: tolerationMaps(added)}, added, true
}

// tolerationFix proposes the tolerations a workload needs for the taints of one
// capacity source, in the format the workload is configured in.
func tolerationFix(m *cluster.Model, w *cluster.Workload, taints []corev1.Taint, where string) *Fix {
	c, added, ok := tolerationChange(w, taints)
	if !ok {
		return nil
	}
	var names []string
	for _, t := range added {
		names = append(names, fmt.Sprintf("%s:%s", t.Key, t.Effect))
	}
	return podFix(m, w, c, fmt.Sprintf("tolerate %s so the pods can run on %s", strings.Join(names, ", "), where))
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
	if v.Result != sim.Refuses || len(v.Reasons) == 0 {
		return false
	}
	for _, r := range v.Reasons {
		if r.Code != sim.CodeTaint {
			return false
		}
	}
	return true
}

// describeSource renders `node group "x"`.
func describeSource(s *sim.Source) string { return s.Describe() }

// taintNeed is a source that refuses a workload only for the taints listed.
type taintNeed struct {
	verdict sim.Verdict
	taints  []corev1.Taint
}

// taintNeeds yields the sources (in the order of kinds) that refuse the
// workload only for their taints, with those taints: one at a time, since a
// placement among hundreds of tainted NodePools is asked for its first few.
func taintNeeds(w *cluster.Workload, pl *sim.Placement, kinds ...cluster.CapacityKind) iter.Seq[taintNeed] {
	return func(yield func(taintNeed) bool) {
		for _, k := range kinds {
			for i := range pl.Verdicts {
				v := &pl.Verdicts[i]
				if v.Source.Kind != k || !onlyTaints(*v) {
					continue
				}
				if taints := blockingTaints(v.Source, w.Template.Spec.Tolerations); len(taints) > 0 && !yield(taintNeed{verdict: *v, taints: taints}) {
					return
				}
			}
		}
	}
}

// firstTaintNeed is the first of taintNeeds, if any.
func firstTaintNeed(w *cluster.Workload, pl *sim.Placement, kinds ...cluster.CapacityKind) (taintNeed, bool) {
	for n := range taintNeeds(w, pl, kinds...) {
		return n, true
	}
	return taintNeed{}, false
}

// taintFix proposes tolerating the taints of the first source (in the order of
// kinds) that refuses the workload only for them and whose fix can be expressed.
func taintFix(m *cluster.Model, w *cluster.Workload, pl *sim.Placement, kinds ...cluster.CapacityKind) *Fix {
	for n := range taintNeeds(w, pl, kinds...) {
		if f := tolerationFix(m, w, n.taints, describeSource(n.verdict.Source)); f != nil {
			return f
		}
	}
	return nil
}
