package sim

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// podOf builds the pod a workload creates, as the scheduler sees it.
func podOf(w *cluster.Workload) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: *w.Template.ObjectMeta.DeepCopy(),
		Spec:       *w.Template.Spec.DeepCopy(),
	}
	p.Namespace = w.Template.Namespace
	if w.IsDaemonSet() {
		p.Spec.Tolerations = append(p.Spec.Tolerations, daemonSetTolerations(p)...)
	}
	return p
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
	r := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
	if r == nil {
		r = corev1.ResourceList{}
	}
	r[corev1.ResourcePods] = *resource.NewQuantity(1, resource.DecimalSI)
	return r
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
