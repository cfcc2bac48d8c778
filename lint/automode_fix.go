package lint

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/write"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// Fixes of pods that EKS Auto Mode's capacity refuses: a selector of a label
// only Karpenter's AWS provider gives its nodes, a built-in NodePool that is
// not enabled.

// autoModeFix proposes the first Auto Mode fix that applies.
func autoModeFix(m *cluster.Model, w *cluster.Workload, pl *sim.Placement) *Fix {
	if !m.Cluster.AutoMode.On() {
		return nil
	}
	if f := autoModeBuiltinPoolFix(m, w); f != nil {
		return f
	}
	return autoModeSelectorFix(m, w, pl)
}

// autoModeSelectorFix: the pods select a label of Karpenter's AWS provider
// (karpenter.k8s.aws/instance-family) that Auto Mode nodes never carry, and
// an Auto Mode NodePool is among the capacity that refuses them: select
// Auto Mode's label of the same values (eks.amazonaws.com/instance-family).
func autoModeSelectorFix(m *cluster.Model, w *cluster.Workload, pl *sim.Placement) *Fix {
	auto := false
	for _, v := range pl.Verdicts {
		if v.Source.NodePool != nil && sim.IsAutoMode(v.Source.NodePool) {
			auto = true
			break
		}
	}
	if !auto {
		return nil
	}
	theirs := map[string]string{}
	for ours, aws := range catalog.AutoMode().InstanceLabels {
		theirs[aws] = ours
	}
	sel := w.Template.Spec.NodeSelector
	if len(sel) == 0 {
		return autoModeAffinityFix(m, w, theirs)
	}
	value := map[string]any{}
	var from, to []string
	for _, k := range slices.Sorted(maps.Keys(sel)) {
		if ours, ok := theirs[k]; ok {
			if _, taken := sel[ours]; taken {
				continue
			}
			value[k] = nil // a merge patch removes the key
			value[ours] = sel[k]
			from, to = append(from, k), append(to, ours)
		}
	}
	if len(from) == 0 {
		return autoModeAffinityFix(m, w, theirs)
	}
	return podFix(m, w, PodChange{Field: "nodeSelector", Value: value},
		fmt.Sprintf("select %s, the label EKS Auto Mode nodes carry, instead of %s, which only Karpenter's AWS provider gives its nodes", strings.Join(to, ", "), strings.Join(from, ", ")))
}

// autoModeBuiltinPoolFix: the pods select a built-in NodePool by name
// (karpenter.sh/nodepool: system) that the configuration does not enable and
// no NodePool of the inputs takes the name of: enable it where Auto Mode is
// switched on, and tolerate its taints when the pods do not.
func autoModeBuiltinPoolFix(m *cluster.Model, w *cluster.Workload) *Fix {
	a := m.Cluster.AutoMode
	name := w.Template.Spec.NodeSelector[karpv1.NodePoolLabelKey]
	bp, ok := catalog.AutoMode().BuiltinNodePool(name)
	if !ok || a.Enables(name) || a.NodePoolsUnknown {
		return nil
	}
	for _, np := range m.NodePools {
		if np.Name == name {
			return nil
		}
	}
	pools := append(slices.Clone(a.NodePools), name)
	sort.Strings(pools)
	e, ok := write.AutoModeNodePools(m, a, pools)
	if !ok {
		return nil
	}
	f := &Fix{Summary: fmt.Sprintf("enable EKS Auto Mode's built-in NodePool %q", name), Edits: []Edit{e}}
	if c, added, ok := tolerationChange(w, bp.Taints); ok {
		if tf := podFix(m, w, c, ""); tf != nil {
			var names []string
			for _, t := range added {
				names = append(names, fmt.Sprintf("%s:%s", t.Key, t.Effect))
			}
			f.Summary += ", and tolerate its taint " + strings.Join(names, ", ")
			f.Edits = append(f.Edits, tf.Edits...)
		}
	}
	return f
}

// autoModeAffinityFix is autoModeSelectorFix for the node affinity: each
// expression on a label of Karpenter's AWS provider (theirs maps it to Auto
// Mode's) in a required or preferred term is rewritten to Auto Mode's label,
// unless the term already has an expression on it.
func autoModeAffinityFix(m *cluster.Model, w *cluster.Workload, theirs map[string]string) *Fix {
	a := w.Template.Spec.Affinity
	if a == nil || a.NodeAffinity == nil {
		return nil
	}
	na := a.NodeAffinity.DeepCopy()
	var from, to []string
	rename := func(t *corev1.NodeSelectorTerm) {
		for i, e := range t.MatchExpressions {
			ours, ok := theirs[e.Key]
			if !ok || slices.ContainsFunc(t.MatchExpressions, func(o corev1.NodeSelectorRequirement) bool { return o.Key == ours }) {
				continue
			}
			t.MatchExpressions[i].Key = ours
			if !slices.Contains(from, e.Key) {
				from, to = append(from, e.Key), append(to, ours)
			}
		}
	}
	if r := na.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
		for i := range r.NodeSelectorTerms {
			rename(&r.NodeSelectorTerms[i])
		}
	}
	for i := range na.PreferredDuringSchedulingIgnoredDuringExecution {
		rename(&na.PreferredDuringSchedulingIgnoredDuringExecution[i].Preference)
	}
	if len(from) == 0 {
		return nil
	}
	value, ok := plainValue(map[string]any{"nodeAffinity": na})
	if !ok {
		return nil
	}
	return podFix(m, w, PodChange{Field: "affinity", Value: value},
		fmt.Sprintf("require %s, the label EKS Auto Mode nodes carry, in the node affinity instead of %s, which only Karpenter's AWS provider gives its nodes", strings.Join(to, ", "), strings.Join(from, ", ")))
}
