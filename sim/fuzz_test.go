package sim

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// FuzzPlace feeds arbitrary keys, values, operators and quantities through every
// kind of capacity: the engine must answer, never panic.
func FuzzPlace(f *testing.F) {
	f.Add("workload", "api", "In", "Gt", "10", "karpenter.sh/controller", "true", "NoSchedule", "Exists", "100m", "karpenter-*", "kube-?ystem")
	f.Add("", "", "", "Lt", "x", "", "", "", "", "", "*", "")
	f.Add("kubernetes.io/arch", "arm64", "NotIn", "Gt", "9223372036854775807", "k", "${var.v}", "NoExecute", "Equal", "64", "${x}", "**??")
	f.Fuzz(func(t *testing.T, key, value, op, op2, num, taintKey, taintValue, effect, tolOp, cpu, fpNS, podNS string) {
		q, err := resource.ParseQuantity(cpu)
		if err != nil {
			q = resource.MustParse("1")
		}
		taint := corev1.Taint{Key: taintKey, Value: taintValue, Effect: corev1.TaintEffect(effect)}
		reqs := []corev1.NodeSelectorRequirement{
			{Key: key, Operator: corev1.NodeSelectorOperator(op), Values: []string{value}},
			{Key: key, Operator: corev1.NodeSelectorOperator(op2), Values: []string{num}},
		}
		np := nodePool("np", map[string]string{key: value}, []corev1.Taint{taint}, reqs...)
		np.Limits = corev1.ResourceList{corev1.ResourceCPU: q}
		m := &cluster.Model{
			NodeGroups:      []*cluster.NodeGroup{{Name: "g", Labels: map[string]string{key: value}, Taints: []corev1.Taint{taint}, InstanceTypes: []string{value, "m5.large"}}},
			FargateProfiles: []*cluster.FargateProfile{{Name: "f", Selectors: []cluster.FargateSelector{{Namespace: fpNS, Labels: map[string]string{key: value}}}}},
			NodePools:       []*cluster.NodePool{np},
			NodeClasses:     []*cluster.NodeClass{defaultClass},
			Nodes:           []*cluster.Node{{Object: &cluster.Object{Name: "n"}, Name: "n", Labels: map[string]string{key: value}, Taints: []corev1.Taint{taint}, Allocatable: corev1.ResourceList{corev1.ResourceCPU: q}}},
		}
		spec := corev1.PodSpec{
			NodeSelector: map[string]string{key: value},
			Tolerations:  []corev1.Toleration{{Key: taintKey, Operator: corev1.TolerationOperator(tolOp), Value: value, Effect: corev1.TaintEffect(effect)}},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: reqs}},
			}}},
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q}}}},
		}
		w := deployment("app", podNS, spec, map[string]string{key: value})
		ds := daemonSet("ds", spec)
		m.Workloads = []*cluster.Workload{w, ds}
		s := New(m)
		for _, ph := range cluster.Phases {
			pl := s.Place(w, ph)
			_ = pl.Summary()
			_ = pl.Explain()
			_ = s.Place(ds, ph).Summary()
		}
	})
}
