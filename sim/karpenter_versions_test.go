package sim

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// v1beta1 makes a NodePool karpenter.sh/v1beta1: Karpenter v0.32 to v0.37.
func v1beta1(np *cluster.NodePool) *cluster.NodePool {
	np.APIVersion = "karpenter.sh/v1beta1"
	np.Object.APIVersion = np.APIVersion
	return np
}

func withMinValues(np *cluster.NodePool, key string, n int) *cluster.NodePool {
	for i := range np.Requirements {
		if np.Requirements[i].Key == key {
			np.Requirements[i].MinValues = &n
		}
	}
	return np
}

// The cases below are where Karpenter's versions judge alike or apart, as
// the differential tests found them (internal/differential/karpenter against
// v1.14.1, internal/differential/karpenterv1beta1 against v0.37.1).
func TestNodePoolVerdictsFollowKarpentersVersion(t *testing.T) {
	t.Parallel()
	m5 := func() *cluster.NodePool {
		return nodePool("m5", nil, nil, req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.large", "m5.xlarge", "m5.2xlarge"))
	}
	arm64Agent := daemonSet("agent", corev1.PodSpec{
		NodeSelector: map[string]string{corev1.LabelArchStable: "arm64"},
		Containers:   []corev1.Container{container("3", "")},
	})
	amd64Pod := corev1.PodSpec{NodeSelector: map[string]string{corev1.LabelArchStable: "amd64"}, Containers: []corev1.Container{container("1", "")}}
	tests := []struct {
		name    string
		pool    *cluster.NodePool
		extra   []*cluster.Workload
		spec    corev1.PodSpec
		want    Result
		message string
	}{{
		name: "minValues met: the three types take the pod",
		pool: withMinValues(m5(), corev1.LabelInstanceTypeStable, 3),
		spec: corev1.PodSpec{Containers: []corev1.Container{container("1", "")}},
		want: Fits,
	}, {
		name:    "minValues not met by the types that have the resources (m5.large has not)",
		pool:    withMinValues(m5(), corev1.LabelInstanceTypeStable, 3),
		spec:    corev1.PodSpec{Containers: []corev1.Container{container("3", "")}},
		want:    Refuses,
		message: "minValues requirement is not met for label(s) (label(s)=[node.kubernetes.io/instance-type])",
	}, {
		name:    "v1beta1 has minValues too",
		pool:    v1beta1(withMinValues(m5(), corev1.LabelInstanceTypeStable, 3)),
		spec:    corev1.PodSpec{Containers: []corev1.Container{container("3", "")}},
		want:    Refuses,
		message: "minValues requirement is not met",
	}, {
		name: "a lower minValues the two larger types meet",
		pool: withMinValues(m5(), corev1.LabelInstanceTypeStable, 2),
		spec: corev1.PodSpec{Containers: []corev1.Container{container("3", "")}},
		want: Fits,
	}, {
		name:  "v1: an arm64-only DaemonSet does not count on amd64 types",
		pool:  nodePool("any", nil, nil, req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.xlarge", "m6g.xlarge")),
		extra: []*cluster.Workload{arm64Agent},
		spec:  amd64Pod,
		want:  Fits,
	}, {
		name:  "v1beta1: it counts on every type the NodePool allows",
		pool:  v1beta1(nodePool("any", nil, nil, req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.xlarge", "m6g.xlarge"))),
		extra: []*cluster.Workload{arm64Agent},
		spec:  amd64Pod,
		want:  Refuses,
	}, {
		name:    "v1: a node limit of zero",
		pool:    withLimits(nodePool("none", nil, nil), corev1.ResourceList{"nodes": resource.MustParse("0")}),
		spec:    corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
		want:    Refuses,
		message: "node limits have been exhausted",
	}, {
		name: "v1beta1: a node limit is not counted",
		pool: v1beta1(withLimits(nodePool("none", nil, nil), corev1.ResourceList{"nodes": resource.MustParse("0")})),
		spec: corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
		want: Fits,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := deployment("app", "default", tc.spec, nil)
			m := &cluster.Model{NodePools: []*cluster.NodePool{tc.pool}, NodeClasses: []*cluster.NodeClass{defaultClass}, Workloads: append([]*cluster.Workload{w}, tc.extra...)}
			pl := New(m).Place(w, cluster.Steady)
			if got := pl.Result(); got != tc.want {
				t.Fatalf("Result() = %v, want %v: %s", got, tc.want, strings.Join(pl.Explain(), "; "))
			}
			if tc.want == Refuses && !strings.Contains(pl.Verdicts[0].Reasons[0].Message, tc.message) {
				t.Errorf("first reason %q; want it to contain %q", pl.Verdicts[0].Reasons[0].Message, tc.message)
			}
		})
	}
}

// A v1 NodePool judged by a Karpenter before v1.2 (known from the chart)
// counts a DaemonSet once for the NodePool, as v1beta1 does.
func TestDaemonSetOverheadPerNodePoolBeforeV1_2(t *testing.T) {
	t.Parallel()
	arm64Agent := daemonSet("agent", corev1.PodSpec{
		NodeSelector: map[string]string{corev1.LabelArchStable: "arm64"},
		Containers:   []corev1.Container{container("3", "")},
	})
	for version, want := range map[string]Result{"1.1.5": Refuses, "1.2.0": Fits, "": Fits} {
		np := nodePool("any", nil, nil, req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.xlarge", "m6g.xlarge"))
		w := deployment("app", "default", corev1.PodSpec{NodeSelector: map[string]string{corev1.LabelArchStable: "amd64"}, Containers: []corev1.Container{container("1", "")}}, nil)
		m := &cluster.Model{NodePools: []*cluster.NodePool{np}, NodeClasses: []*cluster.NodeClass{defaultClass}, Workloads: []*cluster.Workload{w, arm64Agent}}
		m.Karpenter.Version = version
		if got := New(m).Place(w, cluster.Steady).Result(); got != want {
			t.Errorf("Karpenter %q: %v, want %v", version, got, want)
		}
	}
}
