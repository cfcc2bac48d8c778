package sim

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// podOf builds the pod a workload creates, as the scheduler sees it.
//
// The pod shares the template's maps and slices (it is only read); DaemonSet pods
// get a fresh tolerations slice with the controller's additions.
func podOf(w *cluster.Workload) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: w.Template.ObjectMeta, Spec: w.Template.Spec}
	p.Namespace = w.Template.Namespace
	if w.IsDaemonSet() {
		p.Spec.Tolerations = append(append([]corev1.Toleration(nil), w.Template.Spec.Tolerations...), daemonSetTolerations(p)...)
	}
	return p
}

// constraints are what placement needs from a pod, computed once per placement.
type constraints struct {
	pod   *corev1.Pod
	terms []scheduling.Requirements
	// attempts are the requirement sets Karpenter tries the pod with, in
	// order (karpenterAttempts).
	attempts []scheduling.Requirements
	// sig identifies the pod's node selection and tolerations: two pods with the
	// same sig get the same taint and label answers from every source.
	sig string
	// pools are the NodePools' answers to sig (Simulator.poolStatic), found
	// at the first NodePool asked, and words the attempts worded, at the first
	// refusal that quotes them. A constraints is one placement's, asked by
	// one goroutine.
	pools *memo[*cluster.NodePool, *poolStatic]
	words []requirementWords
	// vols are the pod's volumes (volumesOf), nil when it has none.
	vols *podVolumes
}

// wordsAt is attempt i worded, once for the hundreds of NodePools that may
// refuse it.
func (pc *constraints) wordsAt(i int) requirementWords {
	if pc.words == nil {
		pc.words = make([]requirementWords, len(pc.attempts))
	}
	if pc.words[i].texts == nil {
		pc.words[i] = wordsOf(pc.attempts[i])
	}
	return pc.words[i]
}

func constraintsOf(p *corev1.Pod) *constraints {
	terms := podTerms(p)
	return &constraints{pod: p, terms: terms, attempts: karpenterAttempts(p, terms), sig: signature(p)}
}

// karpenterAttempts are the requirement sets Karpenter's scheduler tries a pod
// with, in order. It requires the heaviest preferred node-affinity term too,
// and relaxes a pod that does not schedule one step at a time
// (Preferences.Relax): first by dropping the first required term while more
// than one is left, then by dropping the heaviest preferred term, so that the
// next heaviest is required in its place, and so on until none is left. Each
// preference is added to the required term by intersection: one that
// contradicts the term on a key leaves the key no value (DoesNotExist), which
// a NodePool that does not define a custom label accepts where it refuses the
// term alone. Without a preference these are the required terms.
func karpenterAttempts(p *corev1.Pod, terms []scheduling.Requirements) []scheduling.Requirements {
	prefs := preferencesByWeight(p)
	if len(prefs) == 0 {
		return terms
	}
	with := func(t, pref scheduling.Requirements) scheduling.Requirements {
		r := scheduling.NewRequirements(t.Values()...)
		r.Add(pref.Values()...)
		return r
	}
	out := make([]scheduling.Requirements, 0, len(terms)+len(prefs))
	for _, t := range terms[:len(terms)-1] {
		out = append(out, with(t, prefs[0]))
	}
	last := terms[len(terms)-1]
	for _, pref := range prefs {
		out = append(out, with(last, pref))
	}
	return append(out, last)
}

// preferencesByWeight are the pod's preferred node-affinity terms as
// requirements, heaviest first and equals in their order, as Karpenter
// requires and then drops them; nil when the pod has none.
func preferencesByWeight(p *corev1.Pod) []scheduling.Requirements {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		return nil
	}
	terms := slices.Clone(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	slices.SortStableFunc(terms, func(x, y corev1.PreferredSchedulingTerm) int { return cmp.Compare(y.Weight, x.Weight) })
	out := make([]scheduling.Requirements, len(terms))
	for i, t := range terms {
		r := scheduling.NewRequirements()
		for _, e := range t.Preference.MatchExpressions {
			if req, err := newRequirement(e); err == nil {
				r.Add(req)
			}
		}
		out[i] = r
	}
	return out
}

// signature renders nodeSelector, required and preferred node affinity, and
// tolerations.
func signature(p *corev1.Pod) string {
	var b strings.Builder
	for _, k := range sortedKeys(p.Spec.NodeSelector) {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(p.Spec.NodeSelector[k])
		b.WriteByte(0)
	}
	b.WriteByte(1)
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			writeExpressions(&b, t.MatchExpressions)
			b.WriteByte(3)
		}
	}
	b.WriteByte(1)
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		for _, t := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			b.WriteString(strconv.Itoa(int(t.Weight)))
			b.WriteByte(0)
			writeExpressions(&b, t.Preference.MatchExpressions)
			b.WriteByte(3)
		}
	}
	b.WriteByte(1)
	for _, t := range p.Spec.Tolerations {
		b.WriteString(t.Key)
		b.WriteByte(0)
		b.WriteString(string(t.Operator))
		b.WriteByte(0)
		b.WriteString(t.Value)
		b.WriteByte(0)
		b.WriteString(string(t.Effect))
		b.WriteByte(2)
	}
	return b.String()
}

// writeExpressions renders node selector requirements for a signature.
func writeExpressions(b *strings.Builder, es []corev1.NodeSelectorRequirement) {
	for _, e := range es {
		b.WriteString(e.Key)
		b.WriteByte(0)
		b.WriteString(string(e.Operator))
		for _, v := range e.Values {
			b.WriteByte(0)
			b.WriteString(v)
		}
		b.WriteByte(2)
	}
}

// daemonSetTolerations are the tolerations the DaemonSet controller adds to every
// pod it creates (pkg/controller/daemon/util.AddOrUpdateDaemonPodTolerations).
func daemonSetTolerations(p *corev1.Pod) []corev1.Toleration {
	ts := []corev1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: "node.kubernetes.io/disk-pressure", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: "node.kubernetes.io/memory-pressure", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: "node.kubernetes.io/pid-pressure", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: "node.kubernetes.io/unschedulable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	}
	if p.Spec.HostNetwork {
		ts = append(ts, corev1.Toleration{Key: "node.kubernetes.io/network-unavailable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	return ts
}

// requests returns what one pod asks of a node: the larger of the containers' sum
// and any init container, plus overhead, and one pod slot.
func requests(p *corev1.Pod) corev1.ResourceList {
	r := resourcehelper.PodRequests(withDefaultRequests(p), resourcehelper.PodResourcesOptions{})
	if r == nil {
		r = corev1.ResourceList{}
	}
	r[corev1.ResourcePods] = *resource.NewQuantity(1, resource.DecimalSI)
	return r
}

// withDefaultRequests returns the pod as the API server creates it from a
// template: a container that sets a limit and no request for a resource
// requests its limit (SetDefaults_Pod). The pod itself when nothing changes;
// otherwise a copy whose containers are copies.
func withDefaultRequests(p *corev1.Pod) *corev1.Pod {
	if !limitsOnly(p.Spec.Containers) && !limitsOnly(p.Spec.InitContainers) {
		return p
	}
	out := *p
	out.Spec.Containers = defaultRequests(p.Spec.Containers)
	out.Spec.InitContainers = defaultRequests(p.Spec.InitContainers)
	return &out
}

func limitsOnly(cs []corev1.Container) bool {
	for _, c := range cs {
		for name := range c.Resources.Limits {
			if _, ok := c.Resources.Requests[name]; !ok {
				return true
			}
		}
	}
	return false
}

func defaultRequests(cs []corev1.Container) []corev1.Container {
	if cs == nil {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = c
		if len(c.Resources.Limits) == 0 {
			continue
		}
		req := c.Resources.Requests.DeepCopy()
		if req == nil {
			req = corev1.ResourceList{}
		}
		for name, q := range c.Resources.Limits {
			if _, ok := req[name]; !ok {
				req[name] = q.DeepCopy()
			}
		}
		out[i].Resources.Requests = req
	}
	return out
}

func addTo(dst, src corev1.ResourceList) {
	for k, v := range src {
		q := dst[k]
		q.Add(v)
		dst[k] = q
	}
}

// shortfall returns the resources req asks for beyond what alloc minus used offers.
func shortfall(req, alloc, used corev1.ResourceList) []corev1.ResourceName {
	var out []corev1.ResourceName
	for _, name := range sortedResourceNames(req) {
		need := req[name]
		if need.IsZero() {
			continue
		}
		have := alloc[name].DeepCopy()
		if u, ok := used[name]; ok {
			have.Sub(u)
		}
		if need.Cmp(have) > 0 {
			out = append(out, name)
		}
	}
	return out
}
