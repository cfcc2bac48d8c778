package sim

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// A NodePool of a provider eksdoctor does not model (kwok's KWOKNodeClass) is
// refused for certain only by what the NodePool itself says: taints,
// requirements on keys that are not the provider's, limits already reached.
// Everything its instance types or its own labels decide is unknown, never
// judged against the EC2 catalog.
func TestOtherProvidersNodePools(t *testing.T) {
	t.Parallel()
	kwok := func(np *cluster.NodePool) *cluster.NodePool {
		np.NodeClassRef = cluster.NodeClassRef{Group: "karpenter.kwok.sh", Kind: "KWOKNodeClass", Name: "default"}
		return np
	}
	in := func(key string, vals ...string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: vals}
	}
	q := resource.MustParse
	tests := []struct {
		name     string
		pool     *cluster.NodePool
		spec     corev1.PodSpec
		want     Result
		contains string
	}{{
		name: "taints are the NodePool's",
		pool: kwok(nodePool("gpu", nil, []corev1.Taint{{Key: "nvidia.com/gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}})),
		spec: corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
		want: Refuses, contains: "did not tolerate taint (taint=nvidia.com/gpu=true:NoSchedule)",
	}, {
		name: "a custom label the NodePool does not define",
		pool: kwok(nodePool("general", map[string]string{"workload": "general"}, nil)),
		spec: corev1.PodSpec{NodeSelector: map[string]string{"team": "data"}, Containers: []corev1.Container{container("100m", "")}},
		want: Refuses, contains: `incompatible requirements, label "team" does not have known values`,
	}, {
		name: "the AWS provider's labels are custom labels for another provider",
		pool: kwok(nodePool("general", nil, nil)),
		spec: corev1.PodSpec{NodeSelector: map[string]string{"karpenter.k8s.aws/instance-family": "m5"}, Containers: []corev1.Container{container("100m", "")}},
		want: Refuses, contains: `label "karpenter.k8s.aws/instance-family" does not have known values`,
	}, {
		name: "requirements on well-known keys",
		pool: kwok(nodePool("spot", nil, nil, in("karpenter.sh/capacity-type", "spot"))),
		spec: corev1.PodSpec{NodeSelector: map[string]string{"karpenter.sh/capacity-type": "on-demand"}, Containers: []corev1.Container{container("100m", "")}},
		want: Refuses, contains: "key karpenter.sh/capacity-type, karpenter.sh/capacity-type In [on-demand] not in karpenter.sh/capacity-type In [spot]",
	}, {
		name: "the provider's own labels are unknown",
		pool: kwok(nodePool("general", nil, nil)),
		spec: corev1.PodSpec{NodeSelector: map[string]string{"karpenter.kwok.sh/instance-family": "c"}, Containers: []corev1.Container{container("100m", "")}},
		want: Unknown, contains: `label "karpenter.kwok.sh/instance-family" is the karpenter.kwok.sh provider's own`,
	}, {
		name: "what fits is the instance types', which are unknown",
		pool: kwok(nodePool("general", map[string]string{"workload": "general"}, nil)),
		spec: corev1.PodSpec{NodeSelector: map[string]string{"workload": "general"}, Containers: []corev1.Container{container("100m", "")}},
		want: Unknown, contains: `the instance types of its node class KWOKNodeClass "default" (karpenter.kwok.sh) are not known`,
	}, {
		name: "a request no EC2 type has is not judged by EC2",
		pool: kwok(nodePool("general", nil, nil)),
		spec: corev1.PodSpec{Containers: []corev1.Container{container("1000", "")}},
		want: Unknown, contains: "are not known",
	}, {
		name: "limits already reached refuse whatever the instance types",
		pool: func() *cluster.NodePool {
			np := kwok(nodePool("small", nil, nil))
			np.Limits, np.InUse = corev1.ResourceList{corev1.ResourceCPU: q("2")}, corev1.ResourceList{corev1.ResourceCPU: q("2")}
			return np
		}(),
		spec: corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
		want: Refuses, contains: "all available instance types exceed limits for nodepool (NodePool=small)",
	}, {
		name: "limits with room left are the instance types' to judge",
		pool: func() *cluster.NodePool {
			np := kwok(nodePool("small", nil, nil))
			np.Limits, np.InUse = corev1.ResourceList{corev1.ResourceCPU: q("4")}, corev1.ResourceList{corev1.ResourceCPU: q("2")}
			return np
		}(),
		spec: corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
		want: Unknown,
	}, {
		name: "a running cluster's NodePool that is not Ready is ignored",
		pool: func() *cluster.NodePool {
			np := kwok(nodePool("lost", nil, nil))
			np.Conditions = []cluster.Condition{
				{Type: "NodeClassReady", Status: "False", Reason: "NodeClassNotFound", Message: "NodeClass not found on cluster"},
				{Type: "Ready", Status: "False", Reason: "UnhealthyDependents", Message: "NodeClassReady=False"},
			}
			return np
		}(),
		spec: corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
		want: Refuses, contains: `nodepool "lost" is not Ready (NodeClassReady=False (NodeClassNotFound: NodeClass not found on cluster))`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := deployment("app", "default", tc.spec, nil)
			m := &cluster.Model{NodePools: []*cluster.NodePool{tc.pool}, Workloads: []*cluster.Workload{w}}
			pl := New(m).Place(w, cluster.Steady)
			var v *Verdict
			for i := range pl.Verdicts {
				if pl.Verdicts[i].Source.Kind == cluster.KindNodePool {
					v = &pl.Verdicts[i]
				}
			}
			if v == nil {
				t.Fatal("no NodePool verdict")
			}
			if v.Result != tc.want {
				t.Errorf("result %s, want %s: %s", v.Result, tc.want, reasonList(v.Reasons))
			}
			if !strings.Contains(reasonList(v.Reasons), tc.contains) {
				t.Errorf("reasons %q lack %q", reasonList(v.Reasons), tc.contains)
			}
			if len(v.InstanceTypes) > 0 {
				t.Errorf("EC2 instance types named for another provider's NodePool: %v", v.InstanceTypes)
			}
		})
	}
}

// A running cluster's NodePool conditions decide for the AWS provider too: a
// NodePool Karpenter calls not Ready is ignored, one it calls Ready is used
// whatever eksdoctor makes of its EC2NodeClass.
func TestLiveNodePoolReadiness(t *testing.T) {
	t.Parallel()
	w := deployment("app", "default", corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}}, nil)
	notReady := nodePool("default", nil, nil)
	notReady.Conditions = []cluster.Condition{{Type: "ValidationSucceeded", Status: "False", Reason: "NodePoolValidationFailed", Message: "invalid"}, {Type: "Ready", Status: "False"}}
	ready := nodePool("default", nil, nil)
	ready.Conditions = []cluster.Condition{{Type: "Ready", Status: "True"}}
	noAMI := &cluster.NodeClass{Object: &cluster.Object{APIVersion: "karpenter.k8s.aws/v1", Kind: "EC2NodeClass", Name: "default"}, Name: "default", APIVersion: "karpenter.k8s.aws/v1", Role: "R"}
	for _, tc := range []struct {
		pool *cluster.NodePool
		want Result
	}{{notReady, Refuses}, {ready, Fits}} {
		m := &cluster.Model{NodePools: []*cluster.NodePool{tc.pool}, NodeClasses: []*cluster.NodeClass{noAMI}, Workloads: []*cluster.Workload{w}}
		pl := New(m).Place(w, cluster.Steady)
		if got := pl.Result(); got != tc.want {
			t.Errorf("conditions %v: %s, want %s: %s", tc.pool.Conditions, got, tc.want, pl.Summary())
		}
	}
}

// Another provider's limits with room left: a pod that asks for more than the
// room is refused for certain, and Karpenter's words for any refusal of that
// NodePool are not claimed (its instance types decide whether it speaks of
// its limits).
func TestOtherProvidersLimitsWithRoom(t *testing.T) {
	t.Parallel()
	q := resource.MustParse
	pool := nodePool("small", map[string]string{"workload": "small"}, nil)
	pool.NodeClassRef = cluster.NodeClassRef{Group: "karpenter.kwok.sh", Kind: "KWOKNodeClass", Name: "default"}
	pool.Limits, pool.InUse = corev1.ResourceList{corev1.ResourceCPU: q("8")}, corev1.ResourceList{corev1.ResourceCPU: q("6500m")}
	big := deployment("big", "default", corev1.PodSpec{NodeSelector: map[string]string{"workload": "small"}, Containers: []corev1.Container{container("2", "")}}, nil)
	other := deployment("other", "default", corev1.PodSpec{NodeSelector: map[string]string{"workload": "gpu"}, Containers: []corev1.Container{container("100m", "")}}, nil)
	m := &cluster.Model{NodePools: []*cluster.NodePool{pool}, Workloads: []*cluster.Workload{big, other}}
	s := New(m)
	pl := s.Place(big, cluster.Steady)
	if pl.Result() != Refuses || !strings.Contains(pl.Summary(), "all available instance types exceed limits for nodepool (NodePool=small)") {
		t.Errorf("a pod larger than the room left: %s: %s", pl.Result(), pl.Summary())
	}
	if k := pl.KarpenterMessage(); k != "" {
		t.Errorf("Karpenter's words claimed: %q", k)
	}
	pl = s.Place(other, cluster.Steady)
	if pl.Result() != Refuses || pl.KarpenterMessage() != "" {
		t.Errorf("a pod the requirements refuse: %s, message %q (the limits may speak first)", pl.Result(), pl.KarpenterMessage())
	}
	// With less room than any node has, the limits speak for certain.
	pool.InUse = corev1.ResourceList{corev1.ResourceCPU: q("7500m")}
	pl = New(m).Place(other, cluster.Steady)
	if got, want := pl.KarpenterMessage(), "all available instance types exceed limits for nodepool (NodePool=small)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}

// A DaemonSet whose selection and tolerations admit another provider's
// NodePool runs on its nodes, whatever their instance types: disruption
// checks must know it, as the DaemonSet controller does.
func TestDaemonSetRunsOnOtherProvidersNodePool(t *testing.T) {
	t.Parallel()
	pool := nodePool("data", map[string]string{"workload": "data"}, nil)
	pool.NodeClassRef = cluster.NodeClassRef{Group: "karpenter.kwok.sh", Kind: "KWOKNodeClass", Name: "default"}
	selects := daemonSet("csi-node", corev1.PodSpec{NodeSelector: map[string]string{"workload": "data"}, Containers: []corev1.Container{container("10m", "")}})
	elsewhere := daemonSet("other", corev1.PodSpec{NodeSelector: map[string]string{"workload": "gpu"}, Containers: []corev1.Container{container("10m", "")}})
	providers := daemonSet("kwok-only", corev1.PodSpec{NodeSelector: map[string]string{"karpenter.kwok.sh/instance-family": "c"}, Containers: []corev1.Container{container("10m", "")}})
	m := &cluster.Model{NodePools: []*cluster.NodePool{pool}, Workloads: []*cluster.Workload{selects, elsewhere, providers}}
	s := New(m)
	for _, tc := range []struct {
		w    *cluster.Workload
		want Result
	}{{selects, Fits}, {elsewhere, Refuses}, {providers, Unknown}} {
		if got := s.RunsOn(tc.w, pool); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.w.Object.Name, got, tc.want)
		}
	}
}
