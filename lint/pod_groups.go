package lint

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// The Pending pods of a running cluster, grouped by owner, and the events the scheduler left on them.

// pendingPods groups the unscheduled Pending pods of a live cluster by the
// workload that owns them, in a stable order.
func pendingPods(m *cluster.Model, match func(*cluster.Pod) bool) map[cluster.ObjectRef][]*cluster.Pod {
	out := map[cluster.ObjectRef][]*cluster.Pod{}
	for _, p := range m.Pods {
		if p.Status.Phase != corev1.PodPending || p.Spec.NodeName != "" || !match(p) {
			continue
		}
		out[p.Owner] = append(out[p.Owner], p)
	}
	return out
}

func sortedOwners(m map[cluster.ObjectRef][]*cluster.Pod) []cluster.ObjectRef {
	refs := make([]cluster.ObjectRef, 0, len(m))
	for r := range m {
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Less(refs[j]) })
	return refs
}

// schedulingEvent returns the newest scheduling event whose message contains text.
func schedulingEvent(p *cluster.Pod, text string) (cluster.Event, bool) {
	for i := len(p.Events) - 1; i >= 0; i-- {
		if strings.Contains(p.Events[i].Message, text) {
			return p.Events[i], true
		}
	}
	return cluster.Event{}, false
}

func podNameList(pods []*cluster.Pod) string {
	return strings.Join(sortedPodNames(pods), " ")
}

func orDefaultName(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func podNames(pods []*cluster.Pod) string {
	return strings.Join(sortedPodNames(pods), ", ")
}

// sortedPodNames lists the pods' names, sorted.
func sortedPodNames(pods []*cluster.Pod) []string {
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Object.Name
	}
	sort.Strings(names)
	return names
}
