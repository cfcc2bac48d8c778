package sim

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// The cases below are disagreements with kube-scheduler v1.37.1 found by the
// differential test (internal/differential), kept as regression cases: the
// node summary must be the scheduler's FailedScheduling message, word for word.

func liveNode(name string, alloc corev1.ResourceList, taints ...corev1.Taint) *cluster.Node {
	return &cluster.Node{
		Object:      &cluster.Object{APIVersion: "v1", Kind: "Node", Name: name},
		Name:        name,
		Labels:      map[string]string{corev1.LabelHostname: name, corev1.LabelArchStable: "amd64"},
		Taints:      taints,
		Allocatable: alloc,
	}
}

func allocatable(cpu, mem string, pods int64) corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse(mem),
		corev1.ResourcePods:   *resource.NewQuantity(pods, resource.DecimalSI),
	}
}

func namesNodes(terms ...[]string) *corev1.Affinity {
	var ts []corev1.NodeSelectorTerm
	for _, names := range terms {
		var t corev1.NodeSelectorTerm
		for _, n := range names {
			t.MatchFields = append(t.MatchFields, corev1.NodeSelectorRequirement{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{n}})
		}
		ts = append(ts, t)
	}
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: ts}}}
}

func TestNodeSummaryIsTheSchedulersMessage(t *testing.T) {
	t.Parallel()
	taint := corev1.Taint{Key: "dedicated", Value: "red", Effect: corev1.TaintEffectNoSchedule}
	bound := func(node, cpu string) *cluster.Pod {
		return &cluster.Pod{
			Object: &cluster.Object{APIVersion: "v1", Kind: "Pod", Namespace: "default", Name: "bound-" + node + cpu},
			Spec:   corev1.PodSpec{NodeName: node, Containers: []corev1.Container{container(cpu, "")}},
		}
	}
	cases := []struct {
		name  string
		nodes []*cluster.Node
		pods  []*cluster.Pod
		spec  corev1.PodSpec
		want  string
	}{{
		name:  "a full node has too many pods, not insufficient pods",
		nodes: []*cluster.Node{liveNode("a", allocatable("4", "8Gi", 1))},
		pods:  []*cluster.Pod{bound("a", "100m")},
		spec:  corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
		want:  "0/1 nodes are available: 1 Too many pods.",
	}, {
		name:  "a node short of two resources counts under each",
		nodes: []*cluster.Node{liveNode("a", allocatable("1", "1Gi", 10)), liveNode("b", allocatable("4", "1Gi", 10))},
		spec:  corev1.PodSpec{Containers: []corev1.Container{container("2", "2Gi")}},
		want:  "0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory.",
	}, {
		name:  "untolerated taints in the version's words, the first failing filter only",
		nodes: []*cluster.Node{liveNode("a", allocatable("1", "1Gi", 10), taint), liveNode("b", allocatable("1", "1Gi", 10))},
		spec:  corev1.PodSpec{Containers: []corev1.Container{container("2", "")}},
		want:  "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s).",
	}, {
		name:  "a node without allocatable is full",
		nodes: []*cluster.Node{liveNode("a", nil)},
		spec:  corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
		want:  "0/1 nodes are available: 1 Insufficient cpu, 1 Too many pods.",
	}, {
		name:  "nodes a pod does not name are set aside by the PreFilter, whatever else they lack",
		nodes: []*cluster.Node{liveNode("a", allocatable("1", "1Gi", 10)), liveNode("b", allocatable("1", "1Gi", 10), taint), liveNode("c", nil)},
		spec:  corev1.PodSpec{Affinity: namesNodes([]string{"a"}), Containers: []corev1.Container{container("2", "")}},
		want:  "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity].",
	}, {
		name:  "names no node has",
		nodes: []*cluster.Node{liveNode("a", allocatable("1", "1Gi", 10))},
		spec:  corev1.PodSpec{Affinity: namesNodes([]string{"ghost"})},
		want:  "0/1 nodes are available: 1 node(s) didn't satisfy plugin(s) [NodeAffinity].",
	}, {
		name:  "node names that conflict are the one reason",
		nodes: []*cluster.Node{liveNode("a", allocatable("1", "1Gi", 10)), liveNode("b", allocatable("1", "1Gi", 10))},
		spec:  corev1.PodSpec{Affinity: namesNodes([]string{"a", "b"})},
		want:  "0/2 nodes are available: pod affinity terms conflict.",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := &cluster.Model{Nodes: tc.nodes, Pods: tc.pods}
			pod := &cluster.Pod{Object: &cluster.Object{APIVersion: "v1", Kind: "Pod", Namespace: "default", Name: "p"}, Spec: tc.spec}
			pl := New(m).PlacePod(pod)
			if got := pl.NodeSummary(); got != tc.want {
				t.Errorf("NodeSummary()\n got %s\nwant %s", got, tc.want)
			}
			if pl.Result() == Fits {
				t.Errorf("Result() = Fits; want the pod refused")
			}
		})
	}
}

// A node named by a term that also names others (terms are ORed) is judged
// by its own filters, and a pod that fits it fits.
func TestNamedNodeIsJudgedOnItsOwn(t *testing.T) {
	t.Parallel()
	m := &cluster.Model{Nodes: []*cluster.Node{liveNode("a", allocatable("1", "1Gi", 10)), liveNode("b", allocatable("4", "8Gi", 10))}}
	pod := &cluster.Pod{Object: &cluster.Object{APIVersion: "v1", Kind: "Pod", Namespace: "default", Name: "p"},
		Spec: corev1.PodSpec{Affinity: namesNodes([]string{"a"}, []string{"b"}), Containers: []corev1.Container{container("2", "")}}}
	pl := New(m).PlacePod(pod)
	if pl.Result() != Fits {
		t.Fatalf("Result() = %v, %s; want fits on b", pl.Result(), pl.NodeSummary())
	}
}

// A container with limits and no requests requests its limits once the API
// server creates its pods; a static template is judged the same way.
func TestLimitsOnlyRequestTheirLimits(t *testing.T) {
	t.Parallel()
	c := corev1.Container{Name: "c", Image: "app", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourceMemory: resource.MustParse("2Gi")},
	}}
	w := deployment("web", "default", corev1.PodSpec{Containers: []corev1.Container{c}}, nil)
	m := &cluster.Model{Workloads: []*cluster.Workload{w}, Nodes: []*cluster.Node{liveNode("a", allocatable("2", "8Gi", 10))}}
	pl := New(m).Place(w, cluster.Steady)
	cpu, mem := pl.Requests[corev1.ResourceCPU], pl.Requests[corev1.ResourceMemory]
	if cpu.String() != "3" || mem.String() != "1Gi" {
		t.Errorf("requests = cpu %s, memory %s; want the cpu limit (3) and the memory request (1Gi)", cpu.String(), mem.String())
	}
	if got, want := pl.NodeSummary(), "0/1 nodes are available: 1 Insufficient cpu."; got != want {
		t.Errorf("NodeSummary() = %s; want %s", got, want)
	}
	if _, ok := w.Template.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU]; ok {
		t.Error("the template was changed; it must be read only")
	}
}
