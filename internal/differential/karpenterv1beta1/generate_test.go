package karpenterv1beta1

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/karpenter/pkg/apis/v1beta1"
)

// scenario is one configuration: v1beta1 NodePools over one EC2NodeClass,
// DaemonSets, and Deployments whose pods are judged one by one. It draws what
// the generator of internal/differential/karpenter draws, in v1beta1's types,
// and what v1beta1 has of its own (minValues, both consolidation policies).
type scenario struct {
	index       int
	nodePools   []*v1beta1.NodePool
	daemonSets  []*appsv1.DaemonSet
	deployments []*appsv1.Deployment
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

var (
	teams      = []string{"red", "blue"}
	tiers      = []string{"web", "batch"}
	poolTaints = []corev1.Taint{
		{Key: "dedicated", Value: "red", Effect: corev1.TaintEffectNoSchedule},
		{Key: "gpu", Effect: corev1.TaintEffectNoSchedule},
		{Key: "batch", Value: "true", Effect: corev1.TaintEffectNoExecute},
		{Key: "soft", Value: "yes", Effect: corev1.TaintEffectPreferNoSchedule},
	}
	cpus = []string{"100m", "500m", "1", "2", "3", "7", "15", "40"}
	mems = []string{"128Mi", "1Gi", "3Gi", "7Gi", "15Gi", "60Gi", "300Gi"}
)

// generateScenario draws NodePools (requirements with every operator and
// minValues, template labels, taints and startup taints, limits, weights),
// DaemonSets (requests, selectors, affinity, tolerations) and Deployments
// (limits-only containers, init containers, several required terms,
// preferred terms, selectors by NodePool name and label, tolerations). Every
// Deployment is named app, one namespace each, so that one `explain
// deployment/app` answers for all of them.
func generateScenario(r *rand.Rand, index int) *scenario {
	sc := &scenario{index: index}
	for i := range 1 + r.IntN(4) {
		sc.nodePools = append(sc.nodePools, generateNodePool(r, fmt.Sprintf("np-%d", i)))
	}
	for i := range r.IntN(4) {
		sc.daemonSets = append(sc.daemonSets, generateDaemonSet(r, fmt.Sprintf("ds-%d", i)))
	}
	for i := range 15 + r.IntN(20) {
		sc.deployments = append(sc.deployments, generateDeployment(r, fmt.Sprintf("ns-%02d", i), sc.nodePools))
	}
	return sc
}

func requirement(key string, op corev1.NodeSelectorOperator, values ...string) v1beta1.NodeSelectorRequirementWithMinValues {
	return v1beta1.NodeSelectorRequirementWithMinValues{NodeSelectorRequirement: corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}}
}

// poolRequirement draws a NodePool requirement on what instance types offer.
func poolRequirement(r *rand.Rand) v1beta1.NodeSelectorRequirementWithMinValues {
	switch r.IntN(12) {
	case 0:
		return requirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, pick(r, []string{"amd64", "arm64"}))
	case 1:
		return requirement(v1beta1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, pick(r, []string{"spot", "on-demand"}))
	case 2:
		return requirement("karpenter.k8s.aws/instance-category", corev1.NodeSelectorOpIn, pick(r, [][]string{{"c", "m", "r"}, {"t"}, {"m"}, {"g", "p"}})...)
	case 3:
		return requirement("karpenter.k8s.aws/instance-cpu", corev1.NodeSelectorOpLt, pick(r, []string{"3", "9", "33"}))
	case 4:
		return requirement("karpenter.k8s.aws/instance-cpu", corev1.NodeSelectorOpGt, pick(r, []string{"1", "3", "15"}))
	case 5:
		return requirement("karpenter.k8s.aws/instance-generation", corev1.NodeSelectorOpGt, pick(r, []string{"2", "4", "6"}))
	case 6:
		return requirement("karpenter.k8s.aws/instance-family", corev1.NodeSelectorOpNotIn, pick(r, []string{"t2", "t3", "m5"}))
	case 7:
		return requirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, pick(r, [][]string{{"m5.large", "m5.xlarge"}, {"c6g.large"}, {"r5.24xlarge", "m5.large"}})...)
	case 8:
		return requirement("karpenter.k8s.aws/instance-gpu-count", pick(r, []corev1.NodeSelectorOperator{corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist}))
	case 9, 10:
		// minValues (v0.35 on): the NodePool launches only where that many
		// values of the key remain among the instance types that fit.
		req := pick(r, []v1beta1.NodeSelectorRequirementWithMinValues{
			requirement("karpenter.k8s.aws/instance-family", corev1.NodeSelectorOpExists),
			requirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpExists),
			requirement("karpenter.k8s.aws/instance-category", corev1.NodeSelectorOpIn, "c", "m", "r"),
			requirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, "m5.large", "m5.xlarge", "m5.2xlarge", "c5.large"),
		})
		n := pick(r, []int{1, 2, 3, 5, 50})
		if req.Operator == corev1.NodeSelectorOpIn {
			// Validation: an In requirement lists at least minValues values.
			n = min(n, len(req.Values))
		}
		req.MinValues = &n
		return req
	}
	return requirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, pick(r, [][]string{{zones[0]}, zones[1:]})...)
}

func generateNodePool(r *rand.Rand, name string) *v1beta1.NodePool {
	np := &v1beta1.NodePool{
		TypeMeta:   metav1.TypeMeta{APIVersion: "karpenter.sh/v1beta1", Kind: "NodePool"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}
	spec := &np.Spec.Template.Spec
	spec.NodeClassRef = &v1beta1.NodeClassReference{APIVersion: "karpenter.k8s.aws/v1beta1", Kind: "EC2NodeClass", Name: "default"}
	spec.Requirements = []v1beta1.NodeSelectorRequirementWithMinValues{requirement(corev1.LabelOSStable, corev1.NodeSelectorOpIn, "linux")}
	for range r.IntN(3) {
		spec.Requirements = append(spec.Requirements, poolRequirement(r))
	}
	if r.IntN(3) == 0 {
		np.Spec.Template.Labels = map[string]string{"team": pick(r, teams)}
	}
	if r.IntN(4) == 0 {
		if np.Spec.Template.Labels == nil {
			np.Spec.Template.Labels = map[string]string{}
		}
		np.Spec.Template.Labels["tier"] = pick(r, tiers)
	}
	if r.IntN(3) == 0 {
		spec.Taints = append(spec.Taints, pick(r, poolTaints))
	}
	if r.IntN(5) == 0 {
		spec.StartupTaints = []corev1.Taint{{Key: "node.cilium.io/agent-not-ready", Value: "true", Effect: corev1.TaintEffectNoExecute}}
	}
	if r.IntN(2) == 0 {
		np.Spec.Limits = v1beta1.Limits{}
		switch r.IntN(4) {
		case 0:
			np.Spec.Limits[corev1.ResourceCPU] = resource.MustParse(pick(r, []string{"2", "8", "64"}))
		case 1:
			np.Spec.Limits[corev1.ResourceMemory] = resource.MustParse(pick(r, []string{"4Gi", "16Gi", "32Gi", "256Gi"}))
		case 2:
			// A node limit, which Karpenter v1.11 counts and v0.37 does not.
			np.Spec.Limits[corev1.ResourceName("nodes")] = resource.MustParse(pick(r, []string{"0", "1"}))
		default:
			np.Spec.Limits[corev1.ResourceCPU] = resource.MustParse(pick(r, []string{"4", "100"}))
			np.Spec.Limits[corev1.ResourceMemory] = resource.MustParse(pick(r, []string{"8Gi", "400Gi"}))
		}
	}
	if r.IntN(2) == 0 {
		w := int32(1 + r.IntN(100))
		np.Spec.Weight = &w
	}
	// v1beta1's disruption: WhenUnderutilized takes no consolidateAfter,
	// WhenEmpty requires one.
	if r.IntN(2) == 0 {
		np.Spec.Disruption.ConsolidationPolicy = v1beta1.ConsolidationPolicyWhenUnderutilized
	} else {
		np.Spec.Disruption.ConsolidationPolicy = v1beta1.ConsolidationPolicyWhenEmpty
		d := v1beta1.MustParseNillableDuration("30s")
		np.Spec.Disruption.ConsolidateAfter = &d
	}
	np.Spec.Disruption.ExpireAfter = v1beta1.MustParseNillableDuration("720h")
	return np
}

func resources(r *rand.Rand) corev1.ResourceRequirements {
	cpu, mem := resource.MustParse(pick(r, cpus)), resource.MustParse(pick(r, mems))
	switch r.IntN(4) {
	case 0: // limits only: the API server copies them into requests
		return corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem}}
	case 1:
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: cpu}, Limits: corev1.ResourceList{corev1.ResourceMemory: mem}}
	}
	return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem}}
}

// podRequirement draws a pod's requirement on a node label.
func podRequirement(r *rand.Rand) corev1.NodeSelectorRequirement {
	switch r.IntN(11) {
	case 0:
		return corev1.NodeSelectorRequirement{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{pick(r, []string{"amd64", "arm64"})}}
	case 1:
		return corev1.NodeSelectorRequirement{Key: v1beta1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"spot"}}
	case 2:
		return corev1.NodeSelectorRequirement{Key: "team", Operator: pick(r, []corev1.NodeSelectorOperator{corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist})}
	case 3:
		return corev1.NodeSelectorRequirement{Key: "karpenter.k8s.aws/instance-cpu", Operator: corev1.NodeSelectorOpGt, Values: []string{pick(r, []string{"3", "7", "31"})}}
	case 4:
		return corev1.NodeSelectorRequirement{Key: "karpenter.k8s.aws/instance-memory", Operator: corev1.NodeSelectorOpLt, Values: []string{pick(r, []string{"4097", "16385", "65537"})}}
	case 5:
		return corev1.NodeSelectorRequirement{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{pick(r, zones)}}
	case 6:
		return corev1.NodeSelectorRequirement{Key: "karpenter.k8s.aws/instance-category", Operator: corev1.NodeSelectorOpIn, Values: []string{pick(r, []string{"c", "r", "t", "g"})}}
	case 7:
		return corev1.NodeSelectorRequirement{Key: "tier", Operator: corev1.NodeSelectorOpIn, Values: []string{pick(r, tiers)}}
	case 8:
		// A typo of kubernetes.io/arch.
		return corev1.NodeSelectorRequirement{Key: "arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}
	case 9:
		return corev1.NodeSelectorRequirement{Key: "karpenter.k8s.aws/instance-family", Operator: corev1.NodeSelectorOpIn, Values: []string{pick(r, []string{"m5", "c6g", "t3"})}}
	}
	return corev1.NodeSelectorRequirement{Key: "team", Operator: corev1.NodeSelectorOpIn, Values: []string{pick(r, teams)}}
}

func podSpec(r *rand.Rand, pools []*v1beta1.NodePool) corev1.PodSpec {
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1", Resources: resources(r)}}}
	if r.IntN(3) == 0 {
		spec.InitContainers = []corev1.Container{{Name: "init", Image: "init:1", Resources: resources(r)}}
	}
	switch r.IntN(6) {
	case 0:
		spec.NodeSelector = map[string]string{v1beta1.NodePoolLabelKey: pick(r, pools).Name}
	case 1:
		spec.NodeSelector = map[string]string{"team": pick(r, teams)}
	case 2:
		spec.NodeSelector = map[string]string{corev1.LabelArchStable: pick(r, []string{"amd64", "arm64"})}
	case 3:
		spec.NodeSelector = map[string]string{v1beta1.CapacityTypeLabelKey: pick(r, []string{"spot", "on-demand"})}
	}
	if r.IntN(2) == 0 {
		var terms []corev1.NodeSelectorTerm
		for range 1 + r.IntN(3) {
			var t corev1.NodeSelectorTerm
			for range 1 + r.IntN(2) {
				t.MatchExpressions = append(t.MatchExpressions, podRequirement(r))
			}
			terms = append(terms, t)
		}
		spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
	}
	if r.IntN(3) == 0 {
		if spec.Affinity == nil {
			spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}
		}
		spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = []corev1.PreferredSchedulingTerm{{
			Weight: 50, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{podRequirement(r)}},
		}}
	}
	for range r.IntN(3) {
		t := pick(r, poolTaints)
		switch r.IntN(3) {
		case 0:
			spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpExists})
		case 1:
			spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpEqual, Value: t.Value, Effect: t.Effect})
		default:
			spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpEqual, Value: "other", Effect: t.Effect})
		}
	}
	return spec
}

func generateDeployment(r *rand.Rand, namespace string, pools []*v1beta1.NodePool) *appsv1.Deployment {
	labels := map[string]string{"app": "app"}
	replicas := int32(1)
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec(r, pools)},
		},
	}
}

func generateDaemonSet(r *rand.Rand, name string) *appsv1.DaemonSet {
	labels := map[string]string{"app": name}
	cpu := resource.MustParse(pick(r, []string{"50m", "200m", "1"}))
	mem := resource.MustParse(pick(r, []string{"64Mi", "512Mi", "2Gi"}))
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "agent:1", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem}}}}}
	switch r.IntN(4) {
	case 0:
		spec.NodeSelector = map[string]string{corev1.LabelArchStable: pick(r, []string{"amd64", "arm64"})}
	case 1:
		spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "karpenter.k8s.aws/instance-cpu", Operator: corev1.NodeSelectorOpGt, Values: []string{strconv.Itoa(pick(r, []int{1, 3, 7}))}}},
		}}}}}
	case 2:
		spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: v1beta1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{"on-demand"}}},
		}}}}}
	}
	if r.IntN(2) == 0 {
		spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	}
	return &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}
