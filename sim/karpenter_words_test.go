package sim

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// Karpenter's message for a pod no NodePool takes is its errors, one per
// NodePool with instance types, in the order its provisioner tries them,
// worded as Karpenter v1.14.1 words them (the differential test in
// internal/differential/karpenter compares them with Karpenter's own).
func TestKarpenterMessageIsKarpentersWords(t *testing.T) {
	t.Parallel()
	hard := corev1.Taint{Key: "dedicated", Value: "red", Effect: corev1.TaintEffectNoSchedule}
	gpu := corev1.Taint{Key: "gpu", Effect: corev1.TaintEffectNoSchedule}
	soft := corev1.Taint{Key: "soft", Value: "yes", Effect: corev1.TaintEffectPreferNoSchedule}
	weighted := func(np *cluster.NodePool, w int32) *cluster.NodePool { np.Weight = w; return np }
	// orphan's node class is not among the inputs: Karpenter would not use it.
	orphan := func() *cluster.NodePool {
		np := nodePool("orphan", nil, []corev1.Taint{gpu})
		np.NodeClassRef.Name = "missing"
		return np
	}
	tests := []struct {
		name  string
		pools []*cluster.NodePool
		spec  corev1.PodSpec
		want  string
	}{{
		name:  "every untolerated taint, in the NodePool's order, the PreferNoSchedule one tolerated at the end",
		pools: []*cluster.NodePool{nodePool("tainted", nil, []corev1.Taint{hard, soft, gpu})},
		spec:  corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
		want:  "did not tolerate taint (taint=dedicated=red:NoSchedule); did not tolerate taint (taint=gpu:NoSchedule)",
	}, {
		name:  "every key whose values do not intersect",
		pools: []*cluster.NodePool{nodePool("blue", map[string]string{"team": "blue"}, nil, req(corev1.LabelArchStable, corev1.NodeSelectorOpIn, "arm64"))},
		spec: corev1.PodSpec{NodeSelector: map[string]string{"team": "red", corev1.LabelArchStable: "amd64"},
			Containers: []corev1.Container{container("100m", "")}},
		want: "incompatible requirements, key kubernetes.io/arch, kubernetes.io/arch In [amd64] not in kubernetes.io/arch In [arm64]; key team, team In [red] not in team In [blue]",
	}, {
		name:  "an undefined custom label is the one error, with Karpenter's typo guess",
		pools: []*cluster.NodePool{nodePool("blue", map[string]string{"team": "blue"}, nil)},
		spec: corev1.PodSpec{NodeSelector: map[string]string{"team": "red", "arch": "amd64"},
			Containers: []corev1.Container{container("100m", "")}},
		want: `incompatible requirements, label "arch" does not have known values (typo of "kubernetes.io/arch"?)`,
	}, {
		name:  "the requirements of a node Karpenter would launch, with its node class and the labels it waits for",
		pools: []*cluster.NodePool{nodePool("small", nil, nil, req("karpenter.k8s.aws/instance-cpu", corev1.NodeSelectorOpLt, "3"))},
		spec:  corev1.PodSpec{Containers: []corev1.Container{container("7", "1Gi")}},
		want:  `no instance type has enough resources, requirements=karpenter.k8s.aws/ec2nodeclass In [default], karpenter.k8s.aws/instance-cpu Exists <=2, karpenter.sh/initialized In [true], karpenter.sh/nodepool In [small], karpenter.sh/registered In [true], resources={"cpu":"7","memory":"1Gi","pods":"1"}`,
	}, {
		name:  "a million CPUs: Karpenter's guess at a typo",
		pools: []*cluster.NodePool{nodePool("default", nil, nil)},
		spec:  corev1.PodSpec{Containers: []corev1.Container{container("2M", "")}},
		want:  `no instance type has enough resources, requirements=karpenter.k8s.aws/ec2nodeclass In [default], karpenter.sh/initialized In [true], karpenter.sh/nodepool In [default], karpenter.sh/registered In [true], resources={"cpu":"2M","pods":"1"} (CPU request >= 1 Million, m vs M typo?)`,
	}, {
		name: "by weight, then by name from the end; a NodePool without instance types is skipped",
		pools: []*cluster.NodePool{
			weighted(nodePool("a", nil, []corev1.Taint{hard}), 10),
			nodePool("b", nil, []corev1.Taint{gpu}),
			nodePool("c", nil, []corev1.Taint{hard}),
			nodePool("none", nil, nil, req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "no.such-type")),
			withLimits(nodePool("z", nil, nil), corev1.ResourceList{resourceNodes: resource.MustParse("0")}),
		},
		spec: corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
		want: "did not tolerate taint (taint=dedicated=red:NoSchedule); node limits have been exhausted for nodepool (NodePool=z); did not tolerate taint (taint=dedicated=red:NoSchedule); did not tolerate taint (taint=gpu:NoSchedule)",
	}, {
		name:  "no NodePool with instance types",
		pools: []*cluster.NodePool{nodePool("none", nil, nil, req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "no.such-type"))},
		spec:  corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
		want:  "nodepool requirements filtered out all available instance types",
	}, {
		name: "a NodePool whose node class is missing is left out, as Karpenter ignores a NodePool that is not ready",
		pools: []*cluster.NodePool{
			nodePool("tainted", nil, []corev1.Taint{hard}),
			orphan(),
		},
		spec: corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
		want: "did not tolerate taint (taint=dedicated=red:NoSchedule)",
	}, {
		name: "no message when every NodePool is left out (Karpenter logs that it found none, on no pod)",
		pools: []*cluster.NodePool{
			orphan(),
		},
		spec: corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
		want: "",
	}, {
		name:  "nothing when a NodePool takes the pod",
		pools: []*cluster.NodePool{nodePool("tainted", nil, []corev1.Taint{hard}), nodePool("default", nil, nil)},
		spec:  corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
		want:  "",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := deployment("app", "default", tc.spec, nil)
			m := &cluster.Model{NodePools: tc.pools, NodeClasses: []*cluster.NodeClass{defaultClass}, Workloads: []*cluster.Workload{w}}
			pl := New(m).Place(w, cluster.Steady)
			if got := pl.KarpenterMessage(); got != tc.want {
				t.Errorf("KarpenterMessage() =\n  %s\nwant\n  %s", got, tc.want)
			}
		})
	}
}

// A NodePool refused both for a label it lacks and for not being the one the
// pod names: Karpenter names only the label; eksdoctor adds the rest in its
// note, which keeps the NodePool the pod names first and stops a fix that
// would label the wrong NodePool.
func TestUndefinedLabelNotesTheOtherKeys(t *testing.T) {
	t.Parallel()
	pools := []*cluster.NodePool{nodePool("np-0", nil, nil), nodePool("np-1", nil, nil)}
	w := deployment("app", "default", corev1.PodSpec{
		NodeSelector: map[string]string{"workload": "web", "karpenter.sh/nodepool": "np-1"},
		Containers:   []corev1.Container{container("100m", "")},
	}, nil)
	m := &cluster.Model{NodePools: pools, NodeClasses: []*cluster.NodeClass{defaultClass}, Workloads: []*cluster.Workload{w}}
	pl := New(m).Place(w, cluster.Steady)
	other, named := pl.Verdicts[0].Reasons[0], pl.Verdicts[1].Reasons[0]
	if other.Message != `incompatible requirements, label "workload" does not have known values` ||
		other.Note != "also key karpenter.sh/nodepool, karpenter.sh/nodepool In [np-1] not in karpenter.sh/nodepool In [np-0]" {
		t.Errorf("np-0: %q (%q)", other.Message, other.Note)
	}
	if named.Note != "" {
		t.Errorf("np-1, the one named, has a note: %q", named.Note)
	}
	if order := pl.nearest(cluster.KindNodePool).order; pl.Verdicts[order[0]].Source.Name != "np-1" {
		t.Errorf("nearest first = %s, want np-1", pl.Verdicts[order[0]].Source.Name)
	}
}

// In a running cluster a NodePool's nodes hold part of its limits
// (status.resources): Karpenter subtracts them before it launches a node.
func TestLimitsLessWhatTheNodesHold(t *testing.T) {
	t.Parallel()
	inUse := func(np *cluster.NodePool, limits, used corev1.ResourceList) *cluster.NodePool {
		np.Limits, np.InUse = limits, used
		return np
	}
	q := resource.MustParse
	tests := []struct {
		name       string
		pool       *cluster.NodePool
		want, note string
	}{{
		name: "no node left",
		pool: inUse(nodePool("full", nil, nil), corev1.ResourceList{resourceNodes: q("10")}, corev1.ResourceList{resourceNodes: q("10"), corev1.ResourceCPU: q("40")}),
		want: "node limits have been exhausted for nodepool (NodePool=full)", note: "in use: nodes 10 of 10",
	}, {
		name: "more nodes than the limit allows now",
		pool: inUse(nodePool("over", nil, nil), corev1.ResourceList{resourceNodes: q("10")}, corev1.ResourceList{resourceNodes: q("12")}),
		want: "all available instance types exceed limits for nodepool (NodePool=over)", note: "in use: nodes 12 of 10",
	}, {
		name: "no cpu left",
		pool: inUse(nodePool("cpu", nil, nil), corev1.ResourceList{corev1.ResourceCPU: q("100")}, corev1.ResourceList{corev1.ResourceCPU: q("100")}),
		want: "all available instance types exceed limits for nodepool (NodePool=cpu)", note: "in use: cpu 100 of 100",
	}, {
		name: "room left",
		pool: inUse(nodePool("room", nil, nil), corev1.ResourceList{corev1.ResourceCPU: q("100")}, corev1.ResourceList{corev1.ResourceCPU: q("60")}),
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := deployment("app", "default", corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}}, nil)
			m := &cluster.Model{NodePools: []*cluster.NodePool{tc.pool}, NodeClasses: []*cluster.NodeClass{defaultClass}, Workloads: []*cluster.Workload{w}}
			pl := New(m).Place(w, cluster.Steady)
			if tc.want == "" {
				if pl.Result() != Fits {
					t.Fatalf("refused: %s", pl.Explain())
				}
				return
			}
			if pl.Result() != Refuses {
				t.Fatalf("Result() = %v, want refuses", pl.Result())
			}
			r := pl.Verdicts[0].Reasons[0]
			if r.Message != tc.want || r.Note != tc.note {
				t.Errorf("reason = %q (%q), want %q (%q)", r.Message, r.Note, tc.want, tc.note)
			}
		})
	}
}
