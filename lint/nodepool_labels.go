package lint

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
)

// What a NodePool puts on the nodes it launches, and the labels a workload selects.

// selectedValue returns the single value a workload requires for a label key
// through its nodeSelector or the first required node affinity term.
func selectedValue(w *cluster.Workload, key string) (string, bool) {
	spec := &w.Template.Spec
	if v, ok := spec.NodeSelector[key]; ok {
		return v, true
	}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, e := range t.MatchExpressions {
				if e.Key == key && e.Operator == corev1.NodeSelectorOpIn && len(e.Values) == 1 {
					return e.Values[0], true
				}
			}
		}
	}
	return "", false
}

// missingLabelOnly reports whether a NodePool refuses the workload only for
// a label it does not define that the workload selects with a single value:
// the NodePool, the label and the value.
func missingLabelOnly(w *cluster.Workload, v sim.Verdict) (*cluster.NodePool, string, string, bool) {
	np := v.Source.NodePool
	if np == nil || v.Result != sim.Refuses || len(v.Reasons) != 1 || v.Reasons[0].Code != sim.CodeRequirements {
		return nil, "", "", false
	}
	r := v.Reasons[0]
	// (A note lists other requirements the NodePool fails: the label alone
	// would not make it take the pods.)
	if !strings.Contains(r.Message, "does not have known values") || r.Note != "" {
		return nil, "", "", false
	}
	value, ok := selectedValue(w, r.Key)
	return np, r.Key, value, ok
}

// poolLabelsParent is where a NodePool keeps the labels of its nodes
// (spec.template.metadata), or a v1alpha5 Provisioner (spec).
func poolLabelsParent(np *cluster.NodePool) string {
	if np.Object != nil && np.Object.Kind == "Provisioner" {
		return "spec"
	}
	return "spec.template.metadata"
}

// poolWord names a NodePool as explanations do: `nodepool "x"`, or
// `provisioner "x"` for a v1alpha5 Provisioner.
func poolWord(np *cluster.NodePool) string {
	return sim.Source{Kind: cluster.KindNodePool, Name: np.Name, NodePool: np}.Describe()
}
