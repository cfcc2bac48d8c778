package sim

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
)

func BenchmarkPlaceNodePool(b *testing.B) {
	in := corev1.NodeSelectorRequirement{Key: "karpenter.k8s.aws/instance-category", Operator: corev1.NodeSelectorOpIn, Values: []string{"c", "m", "r"}}
	m := &cluster.Model{
		NodeGroups:  []*cluster.NodeGroup{{Name: "system", Managed: true, InstanceTypes: []string{"m5.large"}, Taints: []corev1.Taint{controllerTaint}}},
		NodePools:   []*cluster.NodePool{nodePool("default", map[string]string{"team": "a"}, nil, in)},
		NodeClasses: []*cluster.NodeClass{defaultClass},
	}
	var ws []*cluster.Workload
	for i := 0; i < b.N; i++ {
		ws = append(ws, deployment("app", "default", corev1.PodSpec{NodeSelector: map[string]string{"team": "a"}, Containers: []corev1.Container{container("500m", "1Gi")}}, nil))
	}
	s := New(m)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Place(ws[i], cluster.Steady)
	}
}
