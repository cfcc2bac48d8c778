package lint

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/write"
)

// plainValue is v as JSON gives it (maps, lists, strings, numbers): the form
// of a PodChange's value, for a value of the Kubernetes API's types.
func plainValue(v any) (any, bool) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	var out any
	return out, json.Unmarshal(b, &out) == nil
}

// yamlText renders a patch as YAML.
func yamlText(v any) string { return write.YAMLText(v) }

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

// describeSource renders `node group "x"`.
func describeSource(s *sim.Source) string { return s.Describe() }

// taintFix proposes tolerating the taints of the first source (in the order of
// kinds) that refuses the workload only for them, takes it once they are
// tolerated, and whose fix can be expressed.
func taintFix(p *Pass, w *cluster.Workload, pl *sim.Placement, kinds ...cluster.CapacityKind) *Fix {
	for n := range taintNeeds(p.Sim, w, pl, kinds...) {
		if f := tolerationFix(p.Model, w, n.taints, describeSource(n.verdict.Source)); f != nil {
			// Of the NodePools EKS creates, only the tainted one (Auto
			// Mode's system pool) ever needs a toleration.
			if np := n.verdict.Source.NodePool; np != nil && np.Object != nil && np.Object.Manager == cluster.ManagerEKS {
				f.Summary += fmt.Sprintf(" (EKS Auto Mode's built-in %s pool is meant for critical add-ons: a custom NodePool on the default NodeClass is the usual home of application pods)", np.Name)
			}
			return f
		}
	}
	return nil
}

// tolerationFixFor proposes tolerating the taints of v's source when they are
// all that keeps the workload off it in phase.
func tolerationFixFor(p *Pass, w *cluster.Workload, phase cluster.Phase, v sim.Verdict) *Fix {
	if !onlyTaints(v) {
		return nil
	}
	taints := blockingTaints(v.Source, w.Template.Spec.Tolerations)
	if !toleratingTakes(p.Sim, w, phase, v, taints) {
		return nil
	}
	return tolerationFix(p.Model, w, taints, describeSource(v.Source))
}
