package sim

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// The cases below are disagreements with Karpenter v1.14.1's provisioning
// scheduler found by the differential test (internal/differential/karpenter),
// kept as regression cases: each NodePool's verdict and first reason must be
// Karpenter's.

func req(key string, op corev1.NodeSelectorOperator, vals ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: vals}
}

func requiredTerms(terms ...[]corev1.NodeSelectorRequirement) *corev1.Affinity {
	var ts []corev1.NodeSelectorTerm
	for _, t := range terms {
		ts = append(ts, corev1.NodeSelectorTerm{MatchExpressions: t})
	}
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: ts}}}
}

func withLimits(np *cluster.NodePool, limits corev1.ResourceList) *cluster.NodePool {
	np.Limits = limits
	return np
}

func TestNodePoolVerdictsFollowKarpenter(t *testing.T) {
	t.Parallel()
	soft := corev1.Taint{Key: "soft", Value: "yes", Effect: corev1.TaintEffectPreferNoSchedule}
	hard := corev1.Taint{Key: "dedicated", Value: "red", Effect: corev1.TaintEffectNoSchedule}
	arm64Agent := daemonSet("agent", corev1.PodSpec{
		NodeSelector: map[string]string{corev1.LabelArchStable: "arm64"},
		Containers:   []corev1.Container{container("3", "")},
	})
	tests := []struct {
		name    string
		pool    *cluster.NodePool
		extra   []*cluster.Workload
		spec    corev1.PodSpec
		want    Result
		first   Code
		message string
	}{{
		name:  "a node limit of zero, before the taints",
		pool:  withLimits(nodePool("none", nil, []corev1.Taint{hard}), corev1.ResourceList{"nodes": resource.MustParse("0")}),
		spec:  corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
		want:  Refuses,
		first: CodeLimits, message: `node limits have been exhausted for nodepool (NodePool=none)`,
	}, {
		name: "a node limit of one allows a node",
		pool: withLimits(nodePool("one", nil, nil), corev1.ResourceList{"nodes": resource.MustParse("1")}),
		spec: corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
		want: Fits,
	}, {
		name: "limits before requirements",
		pool: withLimits(nodePool("tiny", nil, nil), corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0")}),
		spec: corev1.PodSpec{NodeSelector: map[string]string{"team": "red"}, Containers: []corev1.Container{container("100m", "")}},
		want: Refuses, first: CodeLimits, message: "all available instance types exceed limits",
	}, {
		// m5.large: 8 GiB, whose capacity after the VM overhead (7578Mi) is
		// within 7.5Gi (7680Mi); the instance-memory label (8192) is not.
		name: "memory limits count capacity after the VM overhead",
		pool: withLimits(nodePool("mem", nil, nil, req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.large")), corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("7.5Gi")}),
		spec: corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
		want: Fits,
	}, {
		name:  "types over the limits are set aside before resources are judged",
		pool:  withLimits(nodePool("capped", nil, nil), corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}),
		spec:  corev1.PodSpec{Containers: []corev1.Container{container("6", "")}},
		want:  Refuses,
		first: CodeNoInstanceType, message: "no instance type has enough resources",
	}, {
		name:  "requirements that leave the NodePool no instance type",
		pool:  nodePool("nothing", nil, nil, req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "no-such.type")),
		spec:  corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
		want:  Refuses,
		first: CodeNoInstanceType, message: "requirements filtered out all available instance types",
	}, {
		name:  "an arm64-only DaemonSet does not shrink amd64 types",
		pool:  nodePool("amd", nil, nil, req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.xlarge", "m6g.xlarge")),
		extra: []*cluster.Workload{arm64Agent},
		spec:  corev1.PodSpec{Containers: []corev1.Container{container("3", "")}},
		want:  Fits,
	}, {
		name:  "the same DaemonSet counts on arm64 types",
		pool:  nodePool("arm", nil, nil, req(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m6g.xlarge")),
		extra: []*cluster.Workload{arm64Agent},
		spec:  corev1.PodSpec{Containers: []corev1.Container{container("3", "")}},
		want:  Refuses, first: CodeNoInstanceType,
	}, {
		name: "the next required term is tried when the first cannot get its resources",
		pool: nodePool("any", nil, nil),
		spec: corev1.PodSpec{
			Affinity: requiredTerms(
				[]corev1.NodeSelectorRequirement{req("karpenter.k8s.aws/instance-cpu", corev1.NodeSelectorOpLt, "3")},
				[]corev1.NodeSelectorRequirement{req("karpenter.k8s.aws/instance-cpu", corev1.NodeSelectorOpGt, "7")},
			),
			Containers: []corev1.Container{container("6", "")},
		},
		want: Fits,
	}, {
		name: "the reason is the last term's",
		pool: nodePool("blue", map[string]string{"team": "blue"}, nil),
		spec: corev1.PodSpec{
			Affinity: requiredTerms(
				[]corev1.NodeSelectorRequirement{req("karpenter.k8s.aws/instance-cpu", corev1.NodeSelectorOpLt, "3")},
				[]corev1.NodeSelectorRequirement{req("team", corev1.NodeSelectorOpIn, "red")},
			),
			Containers: []corev1.Container{container("6", "")},
		},
		want: Refuses, first: CodeRequirements, message: "team In [red] not in team In [blue]",
	}, {
		// Karpenter tries the first term without tolerating the
		// PreferNoSchedule taint, relaxes to the second, and tolerates the
		// taint only for that last term.
		name: "a PreferNoSchedule taint holds until the last relaxation",
		pool: nodePool("soft", map[string]string{"team": "blue"}, []corev1.Taint{soft}),
		spec: corev1.PodSpec{
			Affinity: requiredTerms(
				[]corev1.NodeSelectorRequirement{req("karpenter.k8s.aws/instance-category", corev1.NodeSelectorOpIn, "r")},
				[]corev1.NodeSelectorRequirement{req("team", corev1.NodeSelectorOpIn, "red")},
			),
			Containers: []corev1.Container{container("100m", "")},
		},
		want: Refuses, first: CodeRequirements, message: "team In [red]",
	}, {
		name: "a PreferNoSchedule taint never blocks a pod with one term",
		pool: nodePool("soft", nil, []corev1.Taint{soft}),
		spec: corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
		want: Fits,
	}, {
		name:  "a NodePool whose zone requirements exclude each other has no instance type",
		pool:  nodePool("nowhere", nil, nil, req(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, "us-west-2b", "us-west-2c"), req(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, "us-west-2a")),
		spec:  corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
		want:  Refuses,
		first: CodeNoInstanceType, message: "requirements filtered out all available instance types",
	}, {
		name:  "two zones required at once leave no offering",
		pool:  nodePool("zones", nil, nil),
		spec:  corev1.PodSpec{Affinity: requiredTerms([]corev1.NodeSelectorRequirement{req(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, "us-west-2a"), req(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, "us-west-2c")}), Containers: []corev1.Container{container("100m", "")}},
		want:  Refuses,
		first: CodeNoInstanceType,
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
			if tc.want == Fits {
				return
			}
			r := pl.Verdicts[0].Reasons[0]
			if r.Code != tc.first || !strings.Contains(r.Message, tc.message) {
				t.Errorf("first reason = %v %q; want %v containing %q", r.Code, r.Message, tc.first, tc.message)
			}
		})
	}
}
