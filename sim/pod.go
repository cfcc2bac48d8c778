package sim

import (
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
// with, in order: it requires the heaviest preferred node-affinity term too,
// and relaxes a pod that does not schedule, first by dropping required terms
// but the last one by one, then the preference. Without a preference these
// are the required terms.
func karpenterAttempts(p *corev1.Pod, terms []scheduling.Requirements) []scheduling.Requirements {
	pref := heaviestPreference(p)
	if pref == nil {
		return terms
	}
	out := make([]scheduling.Requirements, 0, len(terms)+1)
	for _, t := range terms {
		r := scheduling.NewRequirements(t.Values()...)
		r.Add(pref.Values()...)
		out = append(out, r)
	}
	return append(out, terms[len(terms)-1])
}

// heaviestPreference is the preferred node-affinity term of most weight (the
// first of equals), as requirements; nil when the pod has none.
func heaviestPreference(p *corev1.Pod) scheduling.Requirements {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		return nil
	}
	best := a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0]
	for _, t := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution[1:] {
		if t.Weight > best.Weight {
			best = t
		}
	}
	r := scheduling.NewRequirements()
	for _, e := range best.Preference.MatchExpressions {
		if req, err := newRequirement(e); err == nil {
			r.Add(req)
		}
	}
	return r
}

// signature renders nodeSelector, required node affinity and tolerations.
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
			for _, e := range t.MatchExpressions {
				b.WriteString(e.Key)
				b.WriteByte(0)
				b.WriteString(string(e.Operator))
				for _, v := range e.Values {
					b.WriteByte(0)
					b.WriteString(v)
				}
				b.WriteByte(2)
			}
			b.WriteByte(3)
		}
	}
	b.WriteByte(1)
	if pref := heaviestPreference(p); pref != nil {
		b.WriteString(pref.String())
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
