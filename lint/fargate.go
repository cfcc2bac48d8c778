package lint

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/write"
)

// The F2 checks. EKS runs a pod on Fargate only when a profile selects it at
// creation: its namespace matches a selector's and it carries every label of that
// selector (* and ? wildcards). Such pods are mutated to use fargate-scheduler and
// get a Fargate node each; every other pod sees Fargate nodes as tainted
// eks.amazonaws.com/compute-type=fargate:NoSchedule.

// fargateTaint is the taint of every Fargate node.
var fargateTaint = corev1.Taint{Key: "eks.amazonaws.com/compute-type", Value: "fargate", Effect: corev1.TaintEffectNoSchedule}

// maxFargateSelectors is the EKS limit on selectors per profile.
const maxFargateSelectors = write.MaxFargateSelectors

func sortedProfiles(m *cluster.Model) []*cluster.FargateProfile {
	out := append([]*cluster.FargateProfile(nil), m.FargateProfiles...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func profileRef(fp *cluster.FargateProfile) cluster.ObjectRef {
	return cluster.ObjectRef{Kind: "FargateProfile", Name: fp.Name}
}

// judgedStatically reports whether the static checks should judge a workload's pods: live
// workloads are judged by their pods.
func judgedStatically(m *cluster.Model, w *cluster.Workload) bool {
	return !(m.Live != nil && w.Object.Manager == "cluster")
}

// isHelmHook reports whether the workload is a Helm hook (run while helm waits).
func isHelmHook(w *cluster.Workload) bool {
	_, ok := w.Object.Annotations["helm.sh/hook"]
	return ok
}

// requiredPhase is the phase a workload must be schedulable in: components needed
// before Karpenter capacity exists, and Helm hooks, in the bootstrap phase.
func requiredPhase(w *cluster.Workload) cluster.Phase {
	if w.Bootstrap != "" || isHelmHook(w) {
		return cluster.Bootstrap
	}
	return cluster.Steady
}

func templateLabels(w *cluster.Workload) map[string]string {
	if w.TemplatePath == "" {
		return w.Object.Labels
	}
	return w.Template.Labels
}

func labelSetText(m map[string]string) string {
	if len(m) == 0 {
		return "no labels"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return "labels {" + strings.Join(parts, ", ") + "}"
}

func selectorText(s cluster.FargateSelector) string {
	if len(s.Labels) == 0 {
		return fmt.Sprintf("{namespace: %s}", s.Namespace)
	}
	return fmt.Sprintf("{namespace: %s, %s}", s.Namespace, labelSetText(s.Labels))
}

// fargateNodes estimates how many Fargate nodes exist: one per pod a profile
// selects.
func fargateNodes(p *Pass) int {
	n := 0
	for _, w := range p.Model.Workloads {
		if w.IsDaemonSet() || w.Replicas <= 0 {
			continue
		}
		if sim.ProfileFor(p.Model.FargateProfiles, w.Template.Namespace, templateLabels(w), w.Template.Annotations) != nil {
			n += int(w.Replicas)
		}
	}
	return n
}

func untoleratedMessage(n int) string {
	if n == 0 {
		return "kube-scheduler reports `no nodes available to schedule pods` (and `0/N nodes are available: N node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}` once other pods run on Fargate)"
	}
	return fmt.Sprintf("kube-scheduler reports `0/%d nodes are available: %d node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}` (one Fargate node per pod a profile selects)", n, n)
}

// ---- live clusters: Pending pods explained by their scheduling events ----

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

const fargateTaintEvent = "untolerated taint {eks.amazonaws.com/compute-type: fargate}"

func orDefaultName(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// newProfileEdit declares a Fargate profile next to the existing ones.
func newProfileEdit(m *cluster.Model, name string, sel cluster.FargateSelector) (Edit, bool) {
	for _, fp := range m.FargateProfiles {
		if fp.Name == name {
			return Edit{}, false
		}
	}
	fps := sortedProfiles(m)
	if len(fps) == 0 {
		return Edit{}, false
	}
	return write.NewFargateProfile(m, fps[0], name, sel, false)
}
