package differential

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The generated clusters draw labels, taints and sizes from small pools, so
// that pods and nodes meet often: a pod's selector matches some nodes and not
// others, its tolerations some taints.
var (
	archs  = []string{"amd64", "arm64"}
	zones  = []string{"zone-a", "zone-b", "zone-c"}
	teams  = []string{"red", "blue"}
	taints = []corev1.Taint{
		{Key: "dedicated", Value: "red", Effect: corev1.TaintEffectNoSchedule},
		{Key: "dedicated", Value: "blue", Effect: corev1.TaintEffectNoExecute},
		{Key: "gpu", Effect: corev1.TaintEffectNoSchedule},
		{Key: "soft", Value: "yes", Effect: corev1.TaintEffectPreferNoSchedule},
		{Key: "karpenter.sh/disrupted", Effect: corev1.TaintEffectNoSchedule},
	}
	cpus     = []string{"100m", "250m", "500m", "1", "2", "3500m"}
	mems     = []string{"64Mi", "256Mi", "1Gi", "3Gi"}
	widget   = corev1.ResourceName("example.com/widget")
	allocCPU = []string{"500m", "1", "2", "4"}
	allocMem = []string{"512Mi", "1Gi", "2Gi", "8Gi"}
	allocPod = []int64{1, 2, 3, 110}
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// generateScenario draws one scenario from r: 1–6 nodes (labels, taints of
// every effect, cordons, allocatable with extended resources, sometimes none),
// up to 4 pods already bound, and 3–8 pods to place (requests and limits-only
// containers, init and sidecar containers, RuntimeClass overhead, extended
// resources, node selectors, node affinity with every operator and with
// matchFields on node names, tolerations, scheduling gates).
func generateScenario(r *rand.Rand, index int) *scenario {
	sc := &scenario{index: index}
	nNodes := 1 + r.IntN(6)
	for i := range nNodes {
		sc.nodes = append(sc.nodes, generateNode(r, fmt.Sprintf("s%03d-n%d", index, i), i == nNodes-1))
	}
	for i := range r.IntN(5) {
		n := pick(r, sc.nodes)
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%03d-bound-%d", index, i), Namespace: "diff"},
			Spec: corev1.PodSpec{NodeName: n.Name, Containers: []corev1.Container{{Name: "c", Image: "bound", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(pick(r, cpus)), corev1.ResourceMemory: resource.MustParse(pick(r, mems))},
			}}}},
		}
		sc.existing = append(sc.existing, p)
	}
	for i := range 3 + r.IntN(6) {
		sc.pods = append(sc.pods, generatePod(r, fmt.Sprintf("s%03d-pod-%d", index, i), sc.nodes))
	}
	return sc
}

func generateNode(r *rand.Rand, name string, last bool) *corev1.Node {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		corev1.LabelHostname:     name,
		corev1.LabelArchStable:   pick(r, archs),
		corev1.LabelOSStable:     "linux",
		corev1.LabelTopologyZone: pick(r, zones),
		"example.com/generation": strconv.Itoa(1 + r.IntN(5)),
	}}}
	if r.IntN(2) == 0 {
		n.Labels["team"] = pick(r, teams)
	}
	for range r.IntN(2) + r.IntN(2) {
		t := pick(r, taints)
		dup := false
		for _, have := range n.Spec.Taints {
			dup = dup || (have.Key == t.Key && have.Effect == t.Effect)
		}
		if !dup {
			n.Spec.Taints = append(n.Spec.Taints, t)
		}
	}
	n.Spec.Unschedulable = r.IntN(7) == 0
	// A node whose kubelet has not reported its allocatable yet; never the
	// last one, which takes the probe pod.
	if !last && r.IntN(10) == 0 {
		return n
	}
	alloc := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(pick(r, allocCPU)),
		corev1.ResourceMemory: resource.MustParse(pick(r, allocMem)),
		corev1.ResourcePods:   *resource.NewQuantity(pick(r, allocPod), resource.DecimalSI),
	}
	if r.IntN(2) == 0 {
		alloc[corev1.ResourceEphemeralStorage] = resource.MustParse(pick(r, []string{"1Gi", "10Gi"}))
	}
	if r.IntN(3) == 0 {
		alloc[widget] = *resource.NewQuantity(int64(1+r.IntN(2)), resource.DecimalSI)
	}
	if last {
		alloc[markerResource] = resource.MustParse("1")
	}
	n.Status.Allocatable = alloc
	n.Status.Capacity = alloc
	return n
}

func generatePod(r *rand.Rand, name string, nodes []*corev1.Node) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "diff"}}
	for i := range 1 + r.IntN(2) {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: fmt.Sprintf("c%d", i), Image: "app", Resources: generateResources(r)})
	}
	for i := range r.IntN(3) {
		c := corev1.Container{Name: fmt.Sprintf("init%d", i), Image: "init", Resources: generateResources(r)}
		if r.IntN(2) == 0 {
			always := corev1.ContainerRestartPolicyAlways
			c.RestartPolicy = &always // a sidecar
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
	if r.IntN(5) == 0 {
		rc := "with-overhead"
		p.Spec.RuntimeClassName = &rc
	}
	if r.IntN(3) == 0 {
		p.Spec.NodeSelector = map[string]string{}
		switch r.IntN(3) {
		case 0:
			p.Spec.NodeSelector[corev1.LabelArchStable] = pick(r, archs)
		case 1:
			p.Spec.NodeSelector[corev1.LabelTopologyZone] = pick(r, zones)
		default:
			p.Spec.NodeSelector["team"] = pick(r, teams)
		}
	}
	if r.IntN(5) < 2 {
		var terms []corev1.NodeSelectorTerm
		for range 1 + r.IntN(2) {
			terms = append(terms, generateTerm(r, nodes))
		}
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
		}}
	}
	for range r.IntN(4) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, generateToleration(r))
	}
	if r.IntN(12) == 0 {
		p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/gate"}}
	}
	return p
}

// generateResources: nothing, requests, limits only (the API server copies
// them into requests), or extended resources, which need both.
func generateResources(r *rand.Rand) corev1.ResourceRequirements {
	var rr corev1.ResourceRequirements
	switch r.IntN(5) {
	case 0:
	case 1:
		rr.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(pick(r, cpus)), corev1.ResourceMemory: resource.MustParse(pick(r, mems))}
	case 2:
		rr.Requests = corev1.ResourceList{widget: resource.MustParse("1")}
		rr.Limits = corev1.ResourceList{widget: resource.MustParse("1")}
	default:
		rr.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(pick(r, cpus)), corev1.ResourceMemory: resource.MustParse(pick(r, mems))}
		if r.IntN(3) == 0 {
			rr.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse(pick(r, []string{"500Mi", "5Gi"}))
		}
	}
	return rr
}

// generateTerm draws a required node-affinity term: label expressions with
// every operator, and sometimes node names (matchFields metadata.name, as
// DaemonSet pods have, a name that no node has, or two names at once, which
// conflict).
func generateTerm(r *rand.Rand, nodes []*corev1.Node) corev1.NodeSelectorTerm {
	var t corev1.NodeSelectorTerm
	if r.IntN(3) == 0 {
		names := []string{pick(r, nodes).Name}
		if r.IntN(4) == 0 {
			names = []string{"no-such-node"}
		}
		t.MatchFields = append(t.MatchFields, corev1.NodeSelectorRequirement{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: names})
		if r.IntN(5) == 0 {
			t.MatchFields = append(t.MatchFields, corev1.NodeSelectorRequirement{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{pick(r, nodes).Name}})
		}
		if r.IntN(2) == 0 {
			return t
		}
	}
	for range 1 + r.IntN(2) {
		var e corev1.NodeSelectorRequirement
		switch r.IntN(6) {
		case 0:
			e = corev1.NodeSelectorRequirement{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{pick(r, zones), pick(r, zones)}}
		case 1:
			e = corev1.NodeSelectorRequirement{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpNotIn, Values: []string{pick(r, archs)}}
		case 2:
			e = corev1.NodeSelectorRequirement{Key: "team", Operator: corev1.NodeSelectorOpExists}
		case 3:
			e = corev1.NodeSelectorRequirement{Key: "team", Operator: corev1.NodeSelectorOpDoesNotExist}
		case 4:
			e = corev1.NodeSelectorRequirement{Key: "example.com/generation", Operator: corev1.NodeSelectorOpGt, Values: []string{strconv.Itoa(r.IntN(5))}}
		default:
			e = corev1.NodeSelectorRequirement{Key: "example.com/generation", Operator: corev1.NodeSelectorOpLt, Values: []string{strconv.Itoa(2 + r.IntN(5))}}
		}
		t.MatchExpressions = append(t.MatchExpressions, e)
	}
	return t
}

// generateToleration tolerates a taint of the pool by key and value, by key
// alone, every taint (an empty key with Exists), or the cordon's taint.
func generateToleration(r *rand.Rand) corev1.Toleration {
	t := pick(r, taints)
	switch r.IntN(6) {
	case 0:
		return corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpEqual, Value: t.Value, Effect: t.Effect}
	case 1:
		return corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpExists}
	case 2:
		return corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpEqual, Value: t.Value}
	case 3:
		return corev1.Toleration{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	case 4:
		if r.IntN(3) == 0 {
			return corev1.Toleration{Operator: corev1.TolerationOpExists}
		}
	}
	return corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpEqual, Value: t.Value, Effect: corev1.TaintEffectNoExecute}
}
