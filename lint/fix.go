package lint

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
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
	parts := strings.Split(path, ".")
	cur := v
	for i := len(parts) - 1; i >= 0; i-- {
		cur = map[string]any{parts[i]: cur}
	}
	return cur.(map[string]any)
}

// yamlText renders a patch as YAML.
func yamlText(v any) string { return YAMLText(v) }

// objectPatch is an edit merging patch into a manifest object.
func objectPatch(o *cluster.Object, patch map[string]any) Edit {
	return Edit{File: o.Origin.File, Line: o.Origin.Line, Format: FormatYAML, Text: yamlText(patch)}
}

// podSpecPath is the path of the pod spec inside a workload object.
func podSpecPath(w *cluster.Workload) string {
	if w.TemplatePath == "" {
		return "spec"
	}
	return w.TemplatePath + ".spec"
}

// tolerationFix proposes the tolerations a workload needs for the taints of one
// capacity source, in the format the workload is written in.
func tolerationFix(w *cluster.Workload, taints []corev1.Taint, where string) *Fix {
	all, added := withTolerations(w.Template.Spec.Tolerations, taints)
	if len(added) == 0 {
		return nil
	}
	var names []string
	for _, t := range added {
		names = append(names, fmt.Sprintf("%s:%s", t.Key, t.Effect))
	}
	summary := fmt.Sprintf("tolerate %s so the pods can run on %s", strings.Join(names, ", "), where)
	if e, ok := sourceFix(w, "tolerations", tolerationMaps(all)); ok {
		return &Fix{Summary: summary, Edits: []Edit{e}}
	}
	patch := nest(podSpecPath(w), map[string]any{"tolerations": tolerationMaps(all)})
	return &Fix{Summary: summary, Edits: []Edit{objectPatch(w.Object, patch)}}
}

// SourceFixer renders a change to a workload's pod spec field in the format of the
// workload's source (Helm values, EKS add-on configuration). Sources that know
// their formats register one; ok=false falls back to a manifest patch.
type SourceFixer func(w *cluster.Workload, field string, value any) (Edit, bool)

var sourceFixers []SourceFixer

func sourceFix(w *cluster.Workload, field string, value any) (Edit, bool) {
	for _, f := range sourceFixers {
		if e, ok := f(w, field, value); ok {
			return e, true
		}
	}
	return Edit{}, false
}

// blockingTaints returns every NoSchedule/NoExecute taint of a source the
// tolerations do not match.
func blockingTaints(src sim.Source, tolerations []corev1.Toleration) []corev1.Taint {
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
func describeSource(s sim.Source) string {
	return fmt.Sprintf("%s %q", s.Kind, s.Name)
}

// taintFix finds the first source (node groups before NodePools) that refuses the
// workload only for its taints and proposes tolerating them.
func taintFix(w *cluster.Workload, pl *sim.Placement, kinds ...cluster.CapacityKind) *Fix {
	for _, k := range kinds {
		for _, v := range pl.Verdicts {
			if v.Source.Kind != k || !onlyTaints(v) {
				continue
			}
			taints := blockingTaints(v.Source, w.Template.Spec.Tolerations)
			if f := tolerationFix(w, taints, describeSource(v.Source)); f != nil {
				return f
			}
		}
	}
	return nil
}
