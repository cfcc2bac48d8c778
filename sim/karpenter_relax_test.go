package sim

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/eksdoctor/eksdoctor/cluster"
)

func preferred(terms ...corev1.PreferredSchedulingTerm) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: terms}}
}

func preference(weight int32, reqs ...corev1.NodeSelectorRequirement) corev1.PreferredSchedulingTerm {
	return corev1.PreferredSchedulingTerm{Weight: weight, Preference: corev1.NodeSelectorTerm{MatchExpressions: reqs}}
}

// Karpenter v1.14.1 relaxes a pod's preferred node-affinity terms one at a
// time, heaviest first, each in turn required with the pod's last required
// term; a preference that contradicts a custom label the pod selects leaves
// the label no value, which a NodePool that does not define it accepts.
// These are disagreements the differential test found
// (internal/differential/karpenter).
func TestPreferencesRelaxOneAtATime(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pool    *cluster.NodePool
		spec    corev1.PodSpec
		want    Result
		first   Code
		message string
	}{{
		// Required first: team=red ∩ cpu>3, which the NodePool refuses
		// (no team label); then team=red ∩ team In [blue], no team at
		// all, which it accepts.
		name: "the next preference is required once the heaviest is dropped",
		pool: nodePool("plain", nil, nil),
		spec: corev1.PodSpec{
			NodeSelector: map[string]string{"team": "red"},
			Affinity: preferred(
				preference(100, req("karpenter.k8s.aws/instance-cpu", corev1.NodeSelectorOpGt, "3")),
				preference(50, req("team", corev1.NodeSelectorOpIn, "blue")),
			),
			Containers: []corev1.Container{container("500m", "")},
		},
		want: Fits,
	}, {
		name: "preferences of equal weight are relaxed in their order",
		pool: nodePool("plain", nil, nil),
		spec: corev1.PodSpec{
			NodeSelector: map[string]string{"team": "blue"},
			Affinity: preferred(
				preference(50, req("karpenter.k8s.aws/instance-memory", corev1.NodeSelectorOpLt, "16385")),
				preference(50, req("team", corev1.NodeSelectorOpIn, "red")),
			),
			Containers: []corev1.Container{container("500m", "")},
		},
		want: Fits,
	}, {
		name: "a lighter preference is not required while a heavier one is",
		pool: nodePool("plain", nil, nil),
		spec: corev1.PodSpec{
			NodeSelector: map[string]string{"team": "blue"},
			Affinity: preferred(
				preference(1, req("team", corev1.NodeSelectorOpNotIn, "blue")),
				preference(100, req("karpenter.k8s.aws/instance-cpu", corev1.NodeSelectorOpGt, "3")),
			),
			Containers: []corev1.Container{container("500m", "")},
		},
		want: Fits,
	}, {
		// The preferences are relaxed only once one required term is left:
		// the first term with the heaviest preference, then the second
		// with each preference in turn, then the second alone.
		name: "required terms are dropped before preferences",
		pool: nodePool("plain", nil, nil),
		spec: corev1.PodSpec{
			NodeSelector: map[string]string{"team": "red"},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: requiredTerms(
					[]corev1.NodeSelectorRequirement{req("karpenter.k8s.aws/instance-cpu", corev1.NodeSelectorOpGt, "3")},
					[]corev1.NodeSelectorRequirement{req("karpenter.k8s.aws/instance-category", corev1.NodeSelectorOpIn, "m")},
				).NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
					preference(100, req("karpenter.k8s.aws/instance-generation", corev1.NodeSelectorOpGt, "4")),
					preference(10, req("team", corev1.NodeSelectorOpDoesNotExist)),
				},
			}},
			Containers: []corev1.Container{container("500m", "")},
		},
		want: Fits,
	}, {
		// Where the NodePool defines the label, no value is no match:
		// the reason is the last attempt's, the required label alone.
		name: "a contradicting preference on a label the NodePool defines",
		pool: nodePool("blue", map[string]string{"team": "blue"}, nil),
		spec: corev1.PodSpec{
			NodeSelector: map[string]string{"team": "red"},
			Affinity: preferred(
				preference(100, req("karpenter.k8s.aws/instance-cpu", corev1.NodeSelectorOpGt, "3")),
				preference(50, req("team", corev1.NodeSelectorOpNotIn, "red")),
			),
			Containers: []corev1.Container{container("500m", "")},
		},
		want: Refuses, first: CodeRequirements, message: "key team, team In [red] not in team In [blue]",
	}, {
		// The init container's GPU fits only the second term's types, and
		// only once the light preference has replaced the heavy one: the
		// first term with the heavy preference, the second with it, then
		// the second with the light one, which the NodePool accepts.
		name: "several required terms, an init container's GPU, and the preferences in turn",
		pool: nodePool("plain", nil, nil),
		spec: corev1.PodSpec{
			NodeSelector:   map[string]string{"team": "red"},
			Affinity:       gpuTermsPreferring("m", ""),
			InitContainers: []corev1.Container{gpuInit()},
			Containers:     []corev1.Container{container("500m", "128Mi")},
		},
		want: Fits,
	}, {
		// The same, the terms the other way round: the second term with
		// the light preference is accepted but has no GPU; the last
		// attempt, the second term alone, is refused for its label, and
		// that is the reason.
		name: "the reason is the last attempt's, without preferences",
		pool: nodePool("plain", nil, nil),
		spec: corev1.PodSpec{
			NodeSelector:   map[string]string{"team": "red"},
			Affinity:       gpuTermsPreferring("g", "m"),
			InitContainers: []corev1.Container{gpuInit()},
			Containers:     []corev1.Container{container("500m", "128Mi")},
		},
		want: Refuses, first: CodeRequirements, message: `label "team" does not have known values`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := deployment("app", "default", tc.spec, nil)
			m := &cluster.Model{NodePools: []*cluster.NodePool{tc.pool}, NodeClasses: []*cluster.NodeClass{defaultClass}, Workloads: []*cluster.Workload{w}}
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

// gpuInit is an init container that asks for a GPU by its limit.
func gpuInit() corev1.Container {
	c := container("100m", "")
	c.Name = "init"
	c.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
	return c
}

// gpuTermsPreferring is two required terms, the first on the instance
// category, the second on a GPU (or on another category), with a heavy
// preference for more than three CPUs and a light one for no team label.
func gpuTermsPreferring(first, second string) *corev1.Affinity {
	last := req("karpenter.k8s.aws/instance-gpu-count", corev1.NodeSelectorOpExists)
	if second != "" {
		last = req("karpenter.k8s.aws/instance-category", corev1.NodeSelectorOpIn, second)
	}
	a := requiredTerms(
		[]corev1.NodeSelectorRequirement{req("karpenter.k8s.aws/instance-category", corev1.NodeSelectorOpIn, first)},
		[]corev1.NodeSelectorRequirement{last},
	)
	a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = []corev1.PreferredSchedulingTerm{
		preference(100, req("karpenter.k8s.aws/instance-cpu", corev1.NodeSelectorOpGt, "3")),
		preference(10, req("team", corev1.NodeSelectorOpDoesNotExist)),
	}
	return a
}
