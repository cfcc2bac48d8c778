package karpenter

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// scenario is one configuration: NodePools over one EC2NodeClass,
// DaemonSets, and Deployments whose pods are judged one by one.
type scenario struct {
	index       int
	nodePools   []*karpv1.NodePool
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

// generateScenario draws NodePools (requirements with every operator,
// template labels, taints and startup taints, limits including nodes,
// weights), DaemonSets (requests, selectors, affinity, tolerations) and
// Deployments (limits-only containers, several required terms, preferred
// terms, selectors by NodePool name and label, tolerations; ORed required
// terms on pods whose init containers and sidecars ask for an extended
// resource; several preferred terms, of tied weights too, that contradict
// what the pod requires).
func generateScenario(r *rand.Rand, index int) *scenario {
	sc := &scenario{index: index}
	for i := range 1 + r.IntN(4) {
		sc.nodePools = append(sc.nodePools, generateNodePool(r, fmt.Sprintf("np-%d", i)))
	}
	for i := range r.IntN(4) {
		sc.daemonSets = append(sc.daemonSets, generateDaemonSet(r, fmt.Sprintf("ds-%d", i)))
	}
	for i := range 15 + r.IntN(20) {
		sc.deployments = append(sc.deployments, generateDeployment(r, fmt.Sprintf("app-%02d", i), sc.nodePools))
	}
	return sc
}

func requirement(key string, op corev1.NodeSelectorOperator, values ...string) karpv1.NodeSelectorRequirementWithMinValues {
	return karpv1.NodeSelectorRequirementWithMinValues{Key: key, Operator: op, Values: values}
}

// poolRequirement draws a NodePool requirement on what instance types offer.
func poolRequirement(r *rand.Rand) karpv1.NodeSelectorRequirementWithMinValues {
	switch r.IntN(10) {
	case 0:
		return requirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, pick(r, []string{"amd64", "arm64"}))
	case 1:
		return requirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, pick(r, []string{"spot", "on-demand"}))
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
	}
	return requirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, pick(r, [][]string{{zones[0]}, zones[1:]})...)
}

func generateNodePool(r *rand.Rand, name string) *karpv1.NodePool {
	np := &karpv1.NodePool{
		TypeMeta:   metav1.TypeMeta{APIVersion: "karpenter.sh/v1", Kind: "NodePool"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
	}
	spec := &np.Spec.Template.Spec
	spec.NodeClassRef = &karpv1.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	spec.Requirements = []karpv1.NodeSelectorRequirementWithMinValues{requirement(corev1.LabelOSStable, corev1.NodeSelectorOpIn, "linux")}
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
		np.Spec.Limits = karpv1.Limits{}
		switch r.IntN(4) {
		case 0:
			np.Spec.Limits[corev1.ResourceCPU] = resource.MustParse(pick(r, []string{"2", "8", "64"}))
		case 1:
			np.Spec.Limits[corev1.ResourceMemory] = resource.MustParse(pick(r, []string{"4Gi", "16Gi", "32Gi", "256Gi"}))
		case 2:
			np.Spec.Limits[corev1.ResourceName("nodes")] = resource.MustParse(pick(r, []string{"0", "1", "10"}))
		default:
			np.Spec.Limits[corev1.ResourceCPU] = resource.MustParse(pick(r, []string{"4", "100"}))
			np.Spec.Limits[corev1.ResourceMemory] = resource.MustParse(pick(r, []string{"8Gi", "400Gi"}))
		}
	}
	if r.IntN(8) == 0 {
		// A limit on an extended resource counts the capacity of the
		// instance types that have it.
		if np.Spec.Limits == nil {
			np.Spec.Limits = karpv1.Limits{}
		}
		np.Spec.Limits[corev1.ResourceName("nvidia.com/gpu")] = resource.MustParse(pick(r, []string{"0", "1", "4", "16"}))
	}
	if r.IntN(2) == 0 {
		w := int32(1 + r.IntN(100))
		np.Spec.Weight = &w
	}
	np.Spec.Disruption.ConsolidationPolicy = karpv1.ConsolidationPolicyWhenEmptyOrUnderutilized
	np.Spec.Disruption.ConsolidateAfter = karpv1.MustParseNillableDuration("1m")
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
	switch r.IntN(10) {
	case 7:
		return corev1.NodeSelectorRequirement{Key: "tier", Operator: corev1.NodeSelectorOpIn, Values: []string{pick(r, tiers)}}
	case 8:
		// A typo of kubernetes.io/arch, which Karpenter points out.
		return corev1.NodeSelectorRequirement{Key: "arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}
	case 0:
		return corev1.NodeSelectorRequirement{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{pick(r, []string{"amd64", "arm64"})}}
	case 1:
		return corev1.NodeSelectorRequirement{Key: karpv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"spot"}}
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
	}
	return corev1.NodeSelectorRequirement{Key: "team", Operator: corev1.NodeSelectorOpIn, Values: []string{pick(r, teams)}}
}

func podSpec(r *rand.Rand, pools []*karpv1.NodePool) corev1.PodSpec {
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1", Resources: resources(r)}}}
	if r.IntN(3) == 0 {
		spec.InitContainers = []corev1.Container{{Name: "init", Image: "init:1", Resources: resources(r)}}
	}
	switch r.IntN(5) {
	case 0:
		spec.NodeSelector = map[string]string{karpv1.NodePoolLabelKey: pick(r, pools).Name}
	case 1:
		spec.NodeSelector = map[string]string{"team": pick(r, teams)}
	case 2:
		spec.NodeSelector = map[string]string{corev1.LabelArchStable: pick(r, []string{"amd64", "arm64"})}
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
	if r.IntN(3) == 0 {
		// Several ORed required terms, which Karpenter relaxes one at a
		// time, on a pod whose init containers ask for an extended resource.
		orderedTermsWithInitResources(r, &spec)
	}
	if r.IntN(3) == 0 {
		// Preferences, some of which contradict what the pod requires.
		preferences(r, &spec)
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

func generateDeployment(r *rand.Rand, name string, pools []*karpv1.NodePool) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	replicas := int32(1)
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "apps"},
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
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: karpv1.CapacityTypeLabelKey, Operator: corev1.NodeSelectorOpIn, Values: []string{"on-demand"}}},
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

// extendedResources are the extended resources the pods ask for: one some
// instance types offer, in several counts, and one none does.
var extendedResources = []corev1.ResourceName{"nvidia.com/gpu", "nvidia.com/gpu", "example.com/widget"}

// withExtended adds an extended resource to a container's resources: as a
// limit (the API server copies it into the requests) or as equal request and
// limit, as the API server requires of resources that are not overcommitted.
func withExtended(r *rand.Rand, res corev1.ResourceRequirements, name corev1.ResourceName) corev1.ResourceRequirements {
	q := resource.MustParse(pick(r, []string{"1", "1", "2", "4", "8"}))
	res = *res.DeepCopy()
	if res.Limits == nil {
		res.Limits = corev1.ResourceList{}
	}
	res.Limits[name] = q
	if r.IntN(2) == 0 {
		if res.Requests == nil {
			res.Requests = corev1.ResourceList{}
		}
		res.Requests[name] = q.DeepCopy()
	}
	return res
}

// gpuRequirement draws a pod requirement on what accelerated instance types
// offer, or on what plain ones do.
func gpuRequirement(r *rand.Rand) corev1.NodeSelectorRequirement {
	switch r.IntN(6) {
	case 0:
		return corev1.NodeSelectorRequirement{Key: "karpenter.k8s.aws/instance-gpu-count", Operator: pick(r, []corev1.NodeSelectorOperator{corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist})}
	case 1:
		return corev1.NodeSelectorRequirement{Key: "karpenter.k8s.aws/instance-gpu-count", Operator: corev1.NodeSelectorOpGt, Values: []string{pick(r, []string{"1", "3"})}}
	case 2:
		return corev1.NodeSelectorRequirement{Key: "karpenter.k8s.aws/instance-gpu-manufacturer", Operator: corev1.NodeSelectorOpIn, Values: []string{pick(r, []string{"nvidia", "amd"})}}
	case 3:
		return corev1.NodeSelectorRequirement{Key: "karpenter.k8s.aws/instance-family", Operator: corev1.NodeSelectorOpIn, Values: pick(r, [][]string{{"g4dn", "g5"}, {"p3"}, {"m5", "c5"}, {"g5g"}})}
	case 4:
		return corev1.NodeSelectorRequirement{Key: "karpenter.k8s.aws/instance-category", Operator: corev1.NodeSelectorOpIn, Values: pick(r, [][]string{{"g"}, {"p"}, {"g", "p"}, {"m"}})}
	}
	return podRequirement(r)
}

// orderedTermsWithInitResources gives the pod two to four required terms
// (replacing any it has), most of them on accelerated instance types, and
// init containers one of which asks for an extended resource: before the app
// container, as a sidecar that runs beside it (restartPolicy Always), or
// both; the app container asks for one too, sometimes.
func orderedTermsWithInitResources(r *rand.Rand, spec *corev1.PodSpec) {
	var terms []corev1.NodeSelectorTerm
	for range 2 + r.IntN(3) {
		var t corev1.NodeSelectorTerm
		for range 1 + r.IntN(2) {
			if r.IntN(3) == 0 {
				t.MatchExpressions = append(t.MatchExpressions, podRequirement(r))
			} else {
				t.MatchExpressions = append(t.MatchExpressions, gpuRequirement(r))
			}
		}
		terms = append(terms, t)
	}
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: terms}
	name := pick(r, extendedResources)
	always := corev1.ContainerRestartPolicyAlways
	small := func() corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(pick(r, []string{"100m", "500m", "1"})),
			corev1.ResourceMemory: resource.MustParse(pick(r, []string{"128Mi", "1Gi"})),
		}}
	}
	spec.InitContainers = nil
	for i := range 1 + r.IntN(3) {
		c := corev1.Container{Name: fmt.Sprintf("init-%d", i), Image: "init:1", Resources: small()}
		if r.IntN(3) == 0 {
			c.RestartPolicy = &always
		}
		spec.InitContainers = append(spec.InitContainers, c)
	}
	asks := r.IntN(len(spec.InitContainers))
	spec.InitContainers[asks].Resources = withExtended(r, spec.InitContainers[asks].Resources, name)
	if r.IntN(3) == 0 {
		spec.Containers[0].Resources = withExtended(r, spec.Containers[0].Resources, name)
	}
	if r.IntN(2) == 0 {
		// Tolerate the accelerated NodePools' taint.
		spec.Tolerations = append(spec.Tolerations, corev1.Toleration{Key: "gpu", Operator: corev1.TolerationOpExists})
	}
}

// labelValues are values of the labels the pods select on, to draw one
// other than a pod's.
var labelValues = map[string][]string{
	corev1.LabelTopologyZone:                      zones,
	corev1.LabelArchStable:                        {"amd64", "arm64"},
	karpv1.CapacityTypeLabelKey:                   {"spot", "on-demand"},
	"team":                                        teams,
	"tier":                                        tiers,
	"karpenter.k8s.aws/instance-category":         {"c", "g", "m", "p", "r", "t"},
	"karpenter.k8s.aws/instance-family":           {"c5", "g4dn", "g5", "m5", "p3"},
	"karpenter.k8s.aws/instance-gpu-manufacturer": {"amd", "nvidia"},
}

// contradicting draws a requirement on e's key that no node meeting e meets:
// another value for In, the values themselves for NotIn, the opposite of
// Exists and DoesNotExist, the other side of a bound.
func contradicting(r *rand.Rand, e corev1.NodeSelectorRequirement) corev1.NodeSelectorRequirement {
	out := corev1.NodeSelectorRequirement{Key: e.Key}
	switch e.Operator {
	case corev1.NodeSelectorOpIn:
		var others []string
		for _, v := range labelValues[e.Key] {
			if !slices.Contains(e.Values, v) {
				others = append(others, v)
			}
		}
		switch {
		case len(others) > 0 && r.IntN(2) == 0:
			out.Operator, out.Values = corev1.NodeSelectorOpIn, []string{pick(r, others)}
		case r.IntN(2) == 0:
			out.Operator = corev1.NodeSelectorOpDoesNotExist
		default:
			out.Operator, out.Values = corev1.NodeSelectorOpNotIn, slices.Clone(e.Values)
		}
	case corev1.NodeSelectorOpNotIn:
		out.Operator, out.Values = corev1.NodeSelectorOpIn, slices.Clone(e.Values)
	case corev1.NodeSelectorOpExists:
		out.Operator = corev1.NodeSelectorOpDoesNotExist
	case corev1.NodeSelectorOpDoesNotExist:
		if vs := labelValues[e.Key]; len(vs) > 0 && r.IntN(2) == 0 {
			out.Operator, out.Values = corev1.NodeSelectorOpIn, []string{pick(r, vs)}
		} else {
			out.Operator = corev1.NodeSelectorOpExists
		}
	case corev1.NodeSelectorOpGt:
		out.Operator, out.Values = corev1.NodeSelectorOpLt, slices.Clone(e.Values)
	case corev1.NodeSelectorOpLt:
		out.Operator, out.Values = corev1.NodeSelectorOpGt, slices.Clone(e.Values)
	default:
		return e
	}
	return out
}

// preferences replaces the pod's preferred node-affinity terms with one to
// three, of weights that tie sometimes: some contradict a requirement of the
// pod's (a required term's, mostly the first's or the last's, or its node
// selector's), others are drawn as requirements are, alone or beside a
// contradiction.
func preferences(r *rand.Rand, spec *corev1.PodSpec) {
	var required []corev1.NodeSelectorRequirement
	for k, v := range spec.NodeSelector {
		required = append(required, corev1.NodeSelectorRequirement{Key: k, Operator: corev1.NodeSelectorOpIn, Values: []string{v}})
	}
	slices.SortFunc(required, func(a, b corev1.NodeSelectorRequirement) int { return strings.Compare(a.Key, b.Key) })
	var terms []corev1.NodeSelectorTerm
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		terms = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	}
	var prefs []corev1.PreferredSchedulingTerm
	for range 1 + r.IntN(3) {
		var t corev1.NodeSelectorTerm
		from := required
		if len(terms) > 0 && (len(from) == 0 || r.IntN(3) > 0) {
			from = pick(r, [][]corev1.NodeSelectorRequirement{terms[0].MatchExpressions, terms[len(terms)-1].MatchExpressions, pick(r, terms).MatchExpressions})
		}
		if len(from) > 0 && r.IntN(3) > 0 {
			t.MatchExpressions = append(t.MatchExpressions, contradicting(r, pick(r, from)))
		}
		if len(t.MatchExpressions) == 0 || r.IntN(3) == 0 {
			t.MatchExpressions = append(t.MatchExpressions, podRequirement(r))
		}
		prefs = append(prefs, corev1.PreferredSchedulingTerm{Weight: pick(r, []int32{1, 10, 50, 50, 100}), Preference: t})
	}
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = prefs
}
