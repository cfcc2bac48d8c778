package sim

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
)

// podTerms returns the pod's node requirements, one set per required node
// affinity term (terms are ORed), each including the nodeSelector. A pod with no
// terms has one set.
func podTerms(p *corev1.Pod) []scheduling.Requirements {
	base := func() scheduling.Requirements { return scheduling.NewLabelRequirements(p.Spec.NodeSelector) }
	na := p.Spec.Affinity
	if na == nil || na.NodeAffinity == nil || na.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil ||
		len(na.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) == 0 {
		return []scheduling.Requirements{base()}
	}
	var out []scheduling.Requirements
	for _, term := range na.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		r := base()
		for _, e := range term.MatchExpressions {
			req, err := newRequirement(e)
			if err != nil {
				continue
			}
			r.Add(req)
		}
		out = append(out, r)
	}
	return out
}

// newRequirement converts a node selector requirement, refusing the malformed ones
// Karpenter's constructor would mis-handle (Gt/Lt need one integer).
func newRequirement(e corev1.NodeSelectorRequirement) (*scheduling.Requirement, error) {
	switch e.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if len(e.Values) != 1 {
			return nil, fmt.Errorf("operator %s needs exactly one value", e.Operator)
		}
		var n int
		if _, err := fmt.Sscanf(e.Values[0], "%d", &n); err != nil {
			return nil, fmt.Errorf("operator %s needs an integer value", e.Operator)
		}
	default:
		return nil, fmt.Errorf("unknown operator %q", e.Operator)
	}
	return scheduling.NewRequirement(e.Key, e.Operator, append([]string(nil), e.Values...)...), nil
}

// keyIssue is one requirement the capacity cannot satisfy.
type keyIssue struct {
	key     string
	message string
	// undefined: a custom label the capacity does not define.
	undefined bool
	// unknown: a label of a provider eksdoctor does not model, which it may
	// register as well-known: whether the capacity satisfies it is unknown.
	unknown bool
}

// compatible mirrors Karpenter's Requirements.Compatible, but checks every key in a
// stable order and returns all problems, so explanations are complete and
// deterministic. Custom labels must be defined by the capacity (unless the pod only
// excludes them); well-known labels may be undefined; defined keys must intersect.
// Only the first undefined label is worded (Karpenter names one).
// words and podWords are the two sets of requirements worded
// (requirementWords): a capacity's are quoted by the refusals of many pods,
// a pod's by the refusals of many capacities. provider is the node class
// group of a provider eksdoctor does not model ("" for AWS): its well-known
// labels are Karpenter's own, and those of its domain are unknown.
func compatible(capacity, pod scheduling.Requirements, words, podWords requirementWords, provider string) []keyIssue {
	view := viewOf(provider)
	allowUndefined, hints := view.wellKnown, view.wellKnownSorted
	if view != coreView() {
		// A provider eksdoctor models knows its own labels; of another,
		// its own labels are unknown, everyone else's are custom labels.
		provider = ""
	}
	var issues []keyIssue
	worded := false
	for _, key := range podWords.keys {
		incoming := pod.Get(key)
		op := incoming.Operator()
		if !capacity.Has(key) {
			if allowUndefined.Has(key) || op == corev1.NodeSelectorOpNotIn || op == corev1.NodeSelectorOpDoesNotExist {
				continue
			}
			if provider != "" && providerKey(provider, key) {
				issues = append(issues, keyIssue{key: key, unknown: true,
					message: fmt.Sprintf("label %q is the %s provider's own, which eksdoctor does not model", key, provider)})
				continue
			}
			is := keyIssue{key: key, undefined: true}
			if !worded {
				is.message = fmt.Sprintf("label %q does not have known values%s", key, labelHint(hints, words.keys, key))
				worded = true
			}
			issues = append(issues, is)
			continue
		}
		existing := capacity.Get(key)
		if existing.HasIntersection(incoming) {
			continue
		}
		if (op == corev1.NodeSelectorOpNotIn || op == corev1.NodeSelectorOpDoesNotExist) &&
			(existing.Operator() == corev1.NodeSelectorOpNotIn || existing.Operator() == corev1.NodeSelectorOpDoesNotExist) {
			continue
		}
		issues = append(issues, keyIssue{key: key, message: "key " + key + ", " + podWords.texts[key] + " not in " + words.texts[key]})
	}
	return issues
}

// requirementWords are requirements worded once for the refusals that quote
// them: each by key, and the keys in order.
type requirementWords struct {
	texts map[string]string
	keys  []string
}

func wordsOf(r scheduling.Requirements) requirementWords {
	w := requirementWords{texts: make(map[string]string, len(r)), keys: sortedKeys(r)}
	for k, req := range r {
		w.texts[k] = req.String()
	}
	return w
}

// labelHint suggests the key the user may have meant, as Karpenter's "(typo
// of ...?)" does: a well-known label, else one of the capacity's (keys, in
// order), that contains the key or ends with its part after the prefix; the
// first in key order where Karpenter takes the first in map order.
func labelHint(wellKnown, keys []string, key string) string {
	suffix := key
	if _, after, ok := strings.Cut(key, "/"); ok {
		suffix = after
	}
	for _, cands := range [][]string{wellKnown, keys} {
		for _, c := range cands {
			if strings.Contains(c, key) || strings.HasSuffix(c, suffix) {
				return fmt.Sprintf(" (typo of %q?)", c)
			}
		}
	}
	return ""
}

// nodePoolRequirements are the requirements every node of a NodePool satisfies:
// its requirements, its template labels, and its own name label.
func nodePoolRequirements(np *cluster.NodePool) scheduling.Requirements {
	r := scheduling.NewRequirements()
	for _, req := range np.Requirements {
		if nr, err := newRequirement(req.NodeSelectorRequirement); err == nil {
			nr.MinValues = req.MinValues
			r.Add(nr)
		}
	}
	for _, k := range sortedKeys(np.Labels) {
		r.Add(scheduling.NewRequirement(k, corev1.NodeSelectorOpIn, np.Labels[k]))
	}
	r.Add(scheduling.NewRequirement(poolNameLabelKey(np), corev1.NodeSelectorOpIn, np.Name))
	// Karpenter labels its nodes with the node class, and requires them
	// registered and initialized (for DaemonSets that select on those).
	r.Add(scheduling.NewRequirement(nodeClassLabelKey(np.NodeClassRef), corev1.NodeSelectorOpIn, np.NodeClassRef.Name))
	r.Add(scheduling.NewRequirement(karpv1.NodeRegisteredLabelKey, corev1.NodeSelectorOpIn, "true"))
	r.Add(scheduling.NewRequirement(karpv1.NodeInitializedLabelKey, corev1.NodeSelectorOpIn, "true"))
	return r
}

// poolNameLabelKey is the label Karpenter gives a node for the NodePool that
// launched it: karpenter.sh/nodepool, or karpenter.sh/provisioner-name for a
// v1alpha5 Provisioner's.
func poolNameLabelKey(np *cluster.NodePool) string {
	if np.Object != nil && np.Object.Kind == "Provisioner" {
		return "karpenter.sh/provisioner-name"
	}
	return karpv1.NodePoolLabelKey
}

// instanceTypeFits reports whether an instance type's labels satisfy requirements
// on the keys the instance type defines in a view (other keys are not its
// business).
func instanceTypeFits(view *catalogView, it *catalog.InstanceType, reqs scheduling.Requirements, os string) bool {
	for key, req := range reqs {
		if !view.isInstanceKey(key) {
			continue
		}
		v, ok := it.Labels[key]
		if key == corev1.LabelOSStable && os != "" {
			v, ok = os, true
		}
		if !ok {
			if op := req.Operator(); op != corev1.NodeSelectorOpNotIn && op != corev1.NodeSelectorOpDoesNotExist {
				return false
			}
			continue
		}
		if !req.Has(v) {
			return false
		}
	}
	return true
}

// nodeClassLabelKey is the label Karpenter gives a node for its node class:
// karpenter.k8s.aws/ec2nodeclass for an EC2NodeClass (the default of a
// v1beta1 reference without a group).
func nodeClassLabelKey(ref cluster.NodeClassRef) string {
	group, kind := ref.Group, ref.Kind
	if group == "" {
		group = "karpenter.k8s.aws"
	}
	return karpv1.NodeClassLabelKey(schema.GroupKind{Group: group, Kind: kindOr(kind)})
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
