package sim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/eksdoctor/eksdoctor/cluster"
)

func deployment(name, ns string, spec corev1.PodSpec, labels map[string]string) *cluster.Workload {
	w := &cluster.Workload{
		Object:       &cluster.Object{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name, Origin: cluster.Origin{File: "w.yaml", Line: 1}},
		TemplatePath: "spec.template",
		Replicas:     1,
	}
	w.Template.Namespace = ns
	w.Template.Labels = labels
	w.Template.Spec = spec
	return w
}

func daemonSet(name string, spec corev1.PodSpec) *cluster.Workload {
	w := deployment(name, "kube-system", spec, nil)
	w.Object.Kind = "DaemonSet"
	w.Replicas = -1
	return w
}

func container(cpu, mem string) corev1.Container {
	c := corev1.Container{Name: "c", Image: "app:1", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}}}
	if cpu != "" {
		c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		c.Resources.Requests[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	return c
}

func nodePool(name string, labels map[string]string, taints []corev1.Taint, reqs ...corev1.NodeSelectorRequirement) *cluster.NodePool {
	np := &cluster.NodePool{
		Object:       &cluster.Object{APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: name, Origin: cluster.Origin{File: "np.yaml", Line: 1}},
		Name:         name,
		APIVersion:   "karpenter.sh/v1",
		Labels:       labels,
		Taints:       taints,
		NodeClassRef: cluster.NodeClassRef{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
	}
	for _, r := range reqs {
		np.Requirements = append(np.Requirements, cluster.NodeSelectorRequirement{NodeSelectorRequirement: r})
	}
	return np
}

var defaultClass = &cluster.NodeClass{
	Object: &cluster.Object{APIVersion: "karpenter.k8s.aws/v1", Kind: "EC2NodeClass", Name: "default"},
	Name:   "default", APIVersion: "karpenter.k8s.aws/v1", Role: "KarpenterNodeRole",
	AMISelectorTerms: []map[string]any{{"alias": "al2023@latest"}},
}

var controllerTaint = corev1.Taint{Key: "karpenter.sh/controller", Value: "true", Effect: corev1.TaintEffectNoSchedule}

func TestNodeGroupVerdicts(t *testing.T) {
	t.Parallel()
	group := &cluster.NodeGroup{Name: "system", Managed: true, InstanceTypes: []string{"m5.large"}, Labels: map[string]string{"role": "system"}, Taints: []corev1.Taint{controllerTaint}}
	tests := []struct {
		name    string
		spec    corev1.PodSpec
		want    Result
		code    Code
		message string
	}{
		{
			name:    "untolerated taint",
			spec:    corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
			want:    Refuses,
			code:    CodeTaint,
			message: "node(s) had untolerated taint {karpenter.sh/controller: true}",
		},
		{
			name: "tolerated by key and value",
			spec: corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}, Tolerations: []corev1.Toleration{
				{Key: "karpenter.sh/controller", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}}},
			want: Fits,
		},
		{
			name: "empty key Exists tolerates everything",
			spec: corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}, Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
			want: Fits,
		},
		{
			name: "effect must match",
			spec: corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}, Tolerations: []corev1.Toleration{
				{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}},
			want: Refuses,
			code: CodeTaint,
		},
		{
			name: "wrong value",
			spec: corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}, Tolerations: []corev1.Toleration{
				{Key: "karpenter.sh/controller", Operator: corev1.TolerationOpEqual, Value: "false"}}},
			want: Refuses,
			code: CodeTaint,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := &cluster.Model{NodeGroups: []*cluster.NodeGroup{group}}
			pl := New(m).Place(deployment("app", "default", tc.spec, nil), cluster.Steady)
			if got := pl.Result(); got != tc.want {
				t.Fatalf("Result() = %v, want %v; %s", got, tc.want, pl.Summary())
			}
			if tc.want == Refuses {
				r := pl.Verdicts[0].Reasons[0]
				if r.Code != tc.code {
					t.Errorf("reason code = %v, want %v (%s)", r.Code, tc.code, r.Message)
				}
				if tc.message != "" && r.Message != tc.message {
					t.Errorf("reason = %q, want %q", r.Message, tc.message)
				}
			}
		})
	}
}

func TestPreferNoScheduleNeverBlocks(t *testing.T) {
	t.Parallel()
	group := &cluster.NodeGroup{Name: "soft", Managed: true, InstanceTypes: []string{"m5.large"},
		Taints: []corev1.Taint{{Key: "soft", Value: "x", Effect: corev1.TaintEffectPreferNoSchedule}}}
	m := &cluster.Model{NodeGroups: []*cluster.NodeGroup{group}}
	pl := New(m).Place(deployment("app", "default", corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}}, nil), cluster.Steady)
	if pl.Result() != Fits {
		t.Fatalf("Result() = %v, want fits: %s", pl.Result(), pl.Summary())
	}
}

func TestSummaryReadsLikeTheScheduler(t *testing.T) {
	t.Parallel()
	group := &cluster.NodeGroup{Name: "karpenter", Managed: true, InstanceTypes: []string{"m5.large"}, Taints: []corev1.Taint{controllerTaint}}
	m := &cluster.Model{NodeGroups: []*cluster.NodeGroup{group}}
	pl := New(m).Place(deployment("ebs-csi-controller", "kube-system", corev1.PodSpec{Containers: []corev1.Container{container("10m", "40Mi")}}, nil), cluster.Bootstrap)
	want := "0/1 node groups are available: 1 node group(s) had untolerated taint {karpenter.sh/controller: true}."
	if got := pl.Summary(); got != want {
		t.Errorf("Summary() =\n  %s\nwant\n  %s", got, want)
	}
}

func TestNodeSelectorAndAffinity(t *testing.T) {
	t.Parallel()
	group := &cluster.NodeGroup{Name: "general", Managed: true, InstanceTypes: []string{"m5.large", "m6g.large"}, Labels: map[string]string{"team": "a"}}
	in := func(key string, vals ...string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: vals}
	}
	op := func(key string, o corev1.NodeSelectorOperator, vals ...string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: key, Operator: o, Values: vals}
	}
	affinity := func(terms ...[]corev1.NodeSelectorRequirement) *corev1.Affinity {
		var ts []corev1.NodeSelectorTerm
		for _, t := range terms {
			ts = append(ts, corev1.NodeSelectorTerm{MatchExpressions: t})
		}
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: ts}}}
	}
	tests := []struct {
		name     string
		selector map[string]string
		affinity *corev1.Affinity
		want     Result
	}{
		{name: "matching label", selector: map[string]string{"team": "a"}, want: Fits},
		{name: "other value", selector: map[string]string{"team": "b"}, want: Refuses},
		{name: "label the group lacks", selector: map[string]string{"workload": "gpu"}, want: Refuses},
		{name: "arch from the instance types", selector: map[string]string{"kubernetes.io/arch": "arm64"}, want: Fits},
		{name: "nodegroup label of managed groups", selector: map[string]string{"eks.amazonaws.com/nodegroup": "general"}, want: Fits},
		{name: "zone is never stated, assumed satisfiable", selector: map[string]string{"topology.kubernetes.io/zone": "us-east-1a"}, want: Fits},
		{name: "terms are ORed", affinity: affinity([]corev1.NodeSelectorRequirement{in("team", "b")}, []corev1.NodeSelectorRequirement{in("team", "a")}), want: Fits},
		{name: "expressions are ANDed", affinity: affinity([]corev1.NodeSelectorRequirement{in("team", "a"), in("kubernetes.io/arch", "s390x")}), want: Refuses},
		{name: "NotIn absent label", affinity: affinity([]corev1.NodeSelectorRequirement{op("karpenter.sh/nodepool", corev1.NodeSelectorOpDoesNotExist)}), want: Fits},
		{name: "DoesNotExist on a present label", affinity: affinity([]corev1.NodeSelectorRequirement{op("team", corev1.NodeSelectorOpDoesNotExist)}), want: Refuses},
		{name: "NotIn fargate", affinity: affinity([]corev1.NodeSelectorRequirement{op("eks.amazonaws.com/compute-type", corev1.NodeSelectorOpNotIn, "fargate")}), want: Fits},
		{name: "Gt on instance memory label absent", affinity: affinity([]corev1.NodeSelectorRequirement{op("memory-gib", corev1.NodeSelectorOpGt, "4")}), want: Refuses},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := &cluster.Model{NodeGroups: []*cluster.NodeGroup{group}}
			spec := corev1.PodSpec{NodeSelector: tc.selector, Affinity: tc.affinity, Containers: []corev1.Container{container("100m", "")}}
			pl := New(m).Place(deployment("app", "default", spec, nil), cluster.Steady)
			if got := pl.Result(); got != tc.want {
				t.Errorf("Result() = %v, want %v: %s", got, tc.want, pl.Summary())
			}
		})
	}
}

func TestResourcesCountInitContainersAndOverhead(t *testing.T) {
	t.Parallel()
	// m5.large allocates about 1930m CPU.
	group := &cluster.NodeGroup{Name: "small", Managed: true, InstanceTypes: []string{"m5.large"}}
	tests := []struct {
		name string
		spec corev1.PodSpec
		want Result
	}{
		{name: "fits", spec: corev1.PodSpec{Containers: []corev1.Container{container("1", "1Gi")}}, want: Fits},
		{name: "too much cpu", spec: corev1.PodSpec{Containers: []corev1.Container{container("3", "1Gi")}}, want: Refuses},
		{name: "containers add up", spec: corev1.PodSpec{Containers: []corev1.Container{container("1", ""), container("1", "")}}, want: Refuses},
		{name: "init container is the max", spec: corev1.PodSpec{InitContainers: []corev1.Container{container("2500m", "")}, Containers: []corev1.Container{container("100m", "")}}, want: Refuses},
		{name: "overhead counts", spec: corev1.PodSpec{Overhead: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}, Containers: []corev1.Container{container("1", "")}}, want: Refuses},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := &cluster.Model{NodeGroups: []*cluster.NodeGroup{group}}
			pl := New(m).Place(deployment("app", "default", tc.spec, nil), cluster.Steady)
			if got := pl.Result(); got != tc.want {
				t.Fatalf("Result() = %v, want %v: %s", got, tc.want, pl.Summary())
			}
			if tc.want == Refuses && pl.Verdicts[0].Reasons[0].Code != CodeResources {
				t.Errorf("reason = %+v, want CodeResources", pl.Verdicts[0].Reasons[0])
			}
		})
	}
}

func TestDaemonSetOverheadOnNodeGroup(t *testing.T) {
	t.Parallel()
	group := &cluster.NodeGroup{Name: "small", Managed: true, InstanceTypes: []string{"m5.large"}}
	app := deployment("app", "default", corev1.PodSpec{Containers: []corev1.Container{container("1500m", "")}}, nil)
	m := &cluster.Model{NodeGroups: []*cluster.NodeGroup{group}, Workloads: []*cluster.Workload{app}}
	if r := New(m).Place(app, cluster.Steady).Result(); r != Fits {
		t.Fatalf("without DaemonSets: %v, want fits", r)
	}
	ds := daemonSet("agent", corev1.PodSpec{Containers: []corev1.Container{container("500m", "")}})
	m.Workloads = append(m.Workloads, ds)
	if r := New(m).Place(app, cluster.Steady).Result(); r != Refuses {
		t.Fatalf("with a 500m DaemonSet on the nodes: %v, want refuses", r)
	}
}

func TestNodePoolCompatibility(t *testing.T) {
	t.Parallel()
	in := func(key string, vals ...string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: vals}
	}
	tests := []struct {
		name     string
		pool     *cluster.NodePool
		classes  []*cluster.NodeClass
		spec     corev1.PodSpec
		want     Result
		contains string
	}{
		{
			name: "undeclared custom label",
			pool: nodePool("default", nil, nil, in("kubernetes.io/arch", "amd64")),
			spec: corev1.PodSpec{NodeSelector: map[string]string{"workload": "api"}, Containers: []corev1.Container{container("100m", "")}},
			want: Refuses, contains: `nodepool "default": incompatible requirements, label "workload" does not have known values`,
		},
		{
			name: "template label satisfies the selector",
			pool: nodePool("default", map[string]string{"workload": "api"}, nil),
			spec: corev1.PodSpec{NodeSelector: map[string]string{"workload": "api"}, Containers: []corev1.Container{container("100m", "")}},
			want: Fits,
		},
		{
			name: "requirement Exists satisfies custom label",
			pool: nodePool("default", nil, nil, corev1.NodeSelectorRequirement{Key: "workload", Operator: corev1.NodeSelectorOpExists}),
			spec: corev1.PodSpec{NodeSelector: map[string]string{"workload": "api"}, Containers: []corev1.Container{container("100m", "")}},
			want: Fits,
		},
		{
			name: "well-known label needs no declaration",
			pool: nodePool("default", nil, nil),
			spec: corev1.PodSpec{NodeSelector: map[string]string{"karpenter.k8s.aws/instance-family": "c7g"}, Containers: []corev1.Container{container("100m", "")}},
			want: Fits,
		},
		{
			name: "intersection of well-known values",
			pool: nodePool("default", nil, nil, in("kubernetes.io/arch", "amd64")),
			spec: corev1.PodSpec{NodeSelector: map[string]string{"kubernetes.io/arch": "arm64"}, Containers: []corev1.Container{container("100m", "")}},
			want: Refuses, contains: "key kubernetes.io/arch",
		},
		{
			name: "typo hint",
			pool: nodePool("default", map[string]string{"workload-type": "batch"}, nil),
			spec: corev1.PodSpec{NodeSelector: map[string]string{"workload": "batch"}, Containers: []corev1.Container{container("100m", "")}},
			want: Refuses, contains: `(typo of "workload-type"?)`,
		},
		{
			name: "untolerated nodepool taint",
			pool: nodePool("gpu", nil, []corev1.Taint{{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}}),
			spec: corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
			want: Refuses, contains: "did not tolerate taint (taint=nvidia.com/gpu:NoSchedule)",
		},
		{
			name: "no instance type big enough",
			pool: nodePool("small", nil, nil, in("karpenter.k8s.aws/instance-size", "large")),
			spec: corev1.PodSpec{Containers: []corev1.Container{container("64", "")}},
			want: Refuses, contains: "no instance type has enough resources",
		},
		{
			name: "limits smaller than any node",
			pool: func() *cluster.NodePool {
				np := nodePool("tiny", nil, nil)
				np.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0")}
				return np
			}(),
			spec: corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
			want: Refuses, contains: `all available instance types exceed limits for nodepool (NodePool=tiny)`,
		},
		{
			name:    "missing node class",
			pool:    nodePool("default", nil, nil),
			classes: []*cluster.NodeClass{{Object: &cluster.Object{}, Name: "other", APIVersion: "karpenter.k8s.aws/v1", Role: "r", AMISelectorTerms: []map[string]any{{"alias": "al2023@latest"}}}},
			spec:    corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
			want:    Refuses, contains: `EC2NodeClass "default" not found`,
		},
		{
			name:    "v1 node class without amiSelectorTerms is never ready",
			pool:    nodePool("default", nil, nil),
			classes: []*cluster.NodeClass{{Object: &cluster.Object{}, Name: "default", APIVersion: "karpenter.k8s.aws/v1", Role: "r"}},
			spec:    corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}},
			want:    Refuses, contains: "no amiSelectorTerms",
		},
		{
			name:    "windows node class gives windows nodes",
			pool:    nodePool("win", nil, nil),
			classes: []*cluster.NodeClass{{Object: &cluster.Object{}, Name: "default", APIVersion: "karpenter.k8s.aws/v1", Role: "r", AMISelectorTerms: []map[string]any{{"alias": "windows2022@latest"}}}},
			spec:    corev1.PodSpec{NodeSelector: map[string]string{"kubernetes.io/os": "linux"}, Containers: []corev1.Container{container("100m", "")}},
			want:    Refuses,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			classes := tc.classes
			if classes == nil {
				classes = []*cluster.NodeClass{defaultClass}
			}
			m := &cluster.Model{NodePools: []*cluster.NodePool{tc.pool}, NodeClasses: classes}
			pl := New(m).Place(deployment("app", "default", tc.spec, nil), cluster.Steady)
			if got := pl.Result(); got != tc.want {
				t.Fatalf("Result() = %v, want %v: %s", got, tc.want, pl.Summary())
			}
			if tc.contains != "" && !strings.Contains(pl.Summary(), tc.contains) {
				t.Errorf("Summary() = %q, want it to contain %q", pl.Summary(), tc.contains)
			}
		})
	}
}

func TestNodePoolsAbsentInBootstrap(t *testing.T) {
	t.Parallel()
	m := &cluster.Model{NodePools: []*cluster.NodePool{nodePool("default", nil, nil)}, NodeClasses: []*cluster.NodeClass{defaultClass}}
	w := deployment("app", "default", corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}}, nil)
	s := New(m)
	if r := s.Place(w, cluster.Steady).Result(); r != Fits {
		t.Fatalf("steady: %v, want fits", r)
	}
	if r := s.Place(w, cluster.Bootstrap).Result(); r != Refuses {
		t.Fatalf("bootstrap: %v, want refuses", r)
	}
}

func TestControllerThatCannotRunDisablesNodePools(t *testing.T) {
	t.Parallel()
	group := &cluster.NodeGroup{Name: "system", Managed: true, InstanceTypes: []string{"m5.large"}, Taints: []corev1.Taint{controllerTaint}}
	ctrl := deployment("karpenter", "kube-system", corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}}, nil)
	ctrl.Component = "karpenter"
	m := &cluster.Model{NodeGroups: []*cluster.NodeGroup{group}, NodePools: []*cluster.NodePool{nodePool("default", nil, nil)}, NodeClasses: []*cluster.NodeClass{defaultClass}, Workloads: []*cluster.Workload{ctrl}}
	m.Karpenter.Controller = ctrl
	app := deployment("app", "default", corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}}, nil)
	pl := New(m).Place(app, cluster.Steady)
	if pl.Result() != Refuses {
		t.Fatalf("Result() = %v, want refuses: %s", pl.Result(), pl.Summary())
	}
	var np Verdict
	for _, v := range pl.Verdicts {
		if v.Source.Kind == cluster.KindNodePool {
			np = v
		}
	}
	if len(np.Reasons) == 0 || np.Reasons[0].Code != CodeController {
		t.Errorf("nodepool reasons = %+v, want CodeController first", np.Reasons)
	}
}

func TestFargateSelection(t *testing.T) {
	t.Parallel()
	profiles := []*cluster.FargateProfile{
		{Name: "karpenter", Selectors: []cluster.FargateSelector{{Namespace: "karpenter"}}},
		{Name: "apps", Selectors: []cluster.FargateSelector{{Namespace: "app-*", Labels: map[string]string{"fargate": "y?s"}}}},
		{Name: "a-first", Selectors: []cluster.FargateSelector{{Namespace: "app-*", Labels: map[string]string{"fargate": "yes"}}}},
	}
	tests := []struct {
		name   string
		ns     string
		labels map[string]string
		want   string
	}{
		{name: "namespace", ns: "karpenter", want: "karpenter"},
		{name: "other namespace", ns: "kube-system", want: ""},
		{name: "wildcards, first name wins", ns: "app-web", labels: map[string]string{"fargate": "yes"}, want: "a-first"},
		{name: "question mark is one character", ns: "app-web", labels: map[string]string{"fargate": "yas"}, want: "apps"},
		{name: "missing label", ns: "app-web", want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := ""
			if fp := SelectingProfile(profiles, tc.ns, tc.labels); fp != nil {
				got = fp.Name
			}
			if got != tc.want {
				t.Errorf("SelectingProfile(%q, %v) = %q, want %q", tc.ns, tc.labels, got, tc.want)
			}
		})
	}
}

func TestFargateSelectedPodIgnoresEC2(t *testing.T) {
	t.Parallel()
	group := &cluster.NodeGroup{Name: "general", Managed: true, InstanceTypes: []string{"m5.large"}}
	fp := &cluster.FargateProfile{Name: "karpenter", Selectors: []cluster.FargateSelector{{Namespace: "karpenter"}}}
	m := &cluster.Model{NodeGroups: []*cluster.NodeGroup{group}, FargateProfiles: []*cluster.FargateProfile{fp}}
	pl := New(m).Place(deployment("karpenter", "karpenter", corev1.PodSpec{Containers: []corev1.Container{container("1", "1Gi")}}, nil), cluster.Bootstrap)
	if pl.Fargate != fp || pl.Result() != Fits {
		t.Fatalf("Fargate = %v, Result = %v; want profile karpenter, fits", pl.Fargate, pl.Result())
	}
	var got []string
	for _, f := range pl.Fitting() {
		got = append(got, f.Source.Name)
	}
	if diff := cmp.Diff([]string{"karpenter"}, got); diff != "" {
		t.Errorf("fitting sources (-want +got):\n%s", diff)
	}
	ds := daemonSet("agent", corev1.PodSpec{Containers: []corev1.Container{container("10m", "")}})
	ds.Template.Namespace = "karpenter"
	if pl := New(m).Place(ds, cluster.Bootstrap); pl.Fargate != nil {
		t.Errorf("a DaemonSet is never placed on Fargate")
	}
}

// A pod annotated eks.amazonaws.com/compute-type: ec2 (CoreDNS as EKS creates
// it) is not taken by the profile that selects it; two workloads that differ
// only in that annotation are placed apart, not shared as one class.
func TestComputeTypeAnnotationKeepsOffFargate(t *testing.T) {
	t.Parallel()
	fp := &cluster.FargateProfile{Name: "kube-system", Selectors: []cluster.FargateSelector{{Namespace: "kube-system"}}}
	m := &cluster.Model{FargateProfiles: []*cluster.FargateProfile{fp}}
	s := New(m)
	spec := corev1.PodSpec{Containers: []corev1.Container{container("100m", "70Mi")}}
	plain := deployment("dns", "kube-system", spec, nil)
	kept := deployment("coredns", "kube-system", spec, nil)
	kept.Template.Annotations = map[string]string{ComputeTypeKey: "ec2"}
	if pl := s.Place(plain, cluster.Steady); pl.Fargate != fp || pl.Result() != Fits {
		t.Fatalf("without the annotation: Fargate = %v, Result = %v; want the profile, fits", pl.Fargate, pl.Result())
	}
	pl := s.Place(kept, cluster.Steady)
	if pl.Fargate != nil || pl.Result() != Refuses {
		t.Fatalf("with the annotation: Fargate = %v, Result = %v; want none, refuses", pl.Fargate, pl.Result())
	}
	if r := pl.Verdicts[0].Reasons; len(r) != 1 || r[0].Key != ComputeTypeKey || !strings.Contains(r[0].Message, "keeps it off Fargate") {
		t.Errorf("reasons = %+v, want the annotation named", r)
	}
	fargate := deployment("coredns", "kube-system", spec, nil)
	fargate.Template.Annotations = map[string]string{ComputeTypeKey: "fargate"}
	if pl := s.Place(fargate, cluster.Steady); pl.Fargate != fp {
		t.Errorf("compute-type fargate (as eksctl patches CoreDNS): Fargate = %v, want the profile", pl.Fargate)
	}
	if ProfileFor(m.FargateProfiles, "kube-system", nil, map[string]string{ComputeTypeKey: "ec2"}) != nil {
		t.Errorf("ProfileFor takes a pod annotated compute-type ec2")
	}
}

func TestUnknownValuesNeverRefuse(t *testing.T) {
	t.Parallel()
	group := &cluster.NodeGroup{Name: "general", Managed: true, InstanceTypes: []string{"m5.large"}, Labels: map[string]string{"team": cluster.Unknown("var.team")}}
	m := &cluster.Model{NodeGroups: []*cluster.NodeGroup{group}}
	pl := New(m).Place(deployment("app", "default", corev1.PodSpec{NodeSelector: map[string]string{"team": "a"}, Containers: []corev1.Container{container("100m", "")}}, nil), cluster.Steady)
	if pl.Result() != Unknown {
		t.Errorf("Result() = %v, want unknown: %s", pl.Result(), pl.Summary())
	}
}

// Ephemeral storage is sized by the volume that holds it, as the EKS AMIs and
// Karpenter size it: a 20Gi default volume allocates 17Gi, a 100 GiB one 89Gi;
// under instanceStorePolicy RAID0 the instance's NVMe disks count instead.
func TestEphemeralStorageFollowsTheDisk(t *testing.T) {
	t.Parallel()
	eph := func(q string) corev1.PodSpec {
		return corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceEphemeralStorage: resource.MustParse(q)}}}}}
	}
	group := func(disk int64) *cluster.NodeGroup {
		return &cluster.NodeGroup{Name: "g", Managed: true, InstanceTypes: []string{"m5.large"}, DiskBytes: disk}
	}
	for _, tc := range []struct {
		name string
		disk int64
		req  string
		want Result
	}{
		{"default volume", 0, "17Gi", Fits},
		{"default volume too small", 0, "18Gi", Refuses},
		{"100 GiB volume", 100 << 30, "89Gi", Fits},
		{"100 GiB volume too small", 100 << 30, "90Gi", Refuses},
		{"volume not known", -1, "500Gi", Fits},
	} {
		m := &cluster.Model{NodeGroups: []*cluster.NodeGroup{group(tc.disk)}}
		if got := New(m).Place(deployment("app", "default", eph(tc.req), nil), cluster.Steady).Result(); got != tc.want {
			t.Errorf("node group, %s, %s: %v, want %v", tc.name, tc.req, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name  string
		class *cluster.NodeClass
		types []string
		req   string
		want  Result
	}{
		{"default", &cluster.NodeClass{Name: "default", Role: "nodes"}, []string{"m5.large"}, "40Gi", Refuses},
		{"200Gi root volume", &cluster.NodeClass{Name: "default", Role: "nodes", DiskBytes: 200 << 30}, []string{"m5.large"}, "40Gi", Fits},
		{"RAID0 without local disks", &cluster.NodeClass{Name: "default", Role: "nodes", InstanceStoreRAID0: true}, []string{"m5.large"}, "40Gi", Refuses},
		{"RAID0 over 75 GiB of NVMe", &cluster.NodeClass{Name: "default", Role: "nodes", InstanceStoreRAID0: true}, []string{"c5ad.large"}, "60Gi", Fits},
	} {
		np := nodePool("default", nil, nil, corev1.NodeSelectorRequirement{Key: corev1.LabelInstanceTypeStable, Operator: corev1.NodeSelectorOpIn, Values: tc.types})
		m := &cluster.Model{NodePools: []*cluster.NodePool{np}, NodeClasses: []*cluster.NodeClass{tc.class}}
		if got := New(m).Place(deployment("app", "default", eph(tc.req), nil), cluster.Steady).Result(); got != tc.want {
			t.Errorf("NodePool, %s, %s: %v, want %v", tc.name, tc.req, got, tc.want)
		}
	}
}

// A NodePool whose requirements are not known before apply may allow what
// its known ones refuse.
func TestNodePoolWithUnknownFields(t *testing.T) {
	t.Parallel()
	np := nodePool("default", nil, nil, corev1.NodeSelectorRequirement{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}})
	m := &cluster.Model{NodePools: []*cluster.NodePool{np}, NodeClasses: []*cluster.NodeClass{{Name: "default", Role: "nodes"}}}
	app := deployment("app", "default", corev1.PodSpec{NodeSelector: map[string]string{"team": "a"}, Containers: []corev1.Container{container("100m", "")}}, nil)
	if got := New(m).Place(app, cluster.Steady).Result(); got != Refuses {
		t.Fatalf("known NodePool: %v, want refuses", got)
	}
	np.Unknown = []string{"labels"}
	pl := New(m).Place(app, cluster.Steady)
	if got := pl.Result(); got != Unknown || !strings.Contains(pl.Explain()[0], `nodepool "default" labels not known before apply`) {
		t.Errorf("NodePool with unknown labels: %v %q, want unknown", got, pl.Explain())
	}
}

// A node group that exists only if a value not known before apply says so is
// summed up as not judged, in a sentence.
func TestSummaryOfAConditionalNodeGroup(t *testing.T) {
	t.Parallel()
	g := &cluster.NodeGroup{Name: "g", Managed: true, InstanceTypes: []string{"m5.large"}, Conditional: "var.enabled"}
	m := &cluster.Model{NodeGroups: []*cluster.NodeGroup{g}}
	pl := New(m).Place(deployment("app", "default", corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}}, nil), cluster.Steady)
	if want := "0/1 node groups are available: 1 node group(s) could not be judged (it exists only if var.enabled, which is not known before apply)."; pl.Summary() != want {
		t.Errorf("summary %q, want %q", pl.Summary(), want)
	}
}

// A NodePool is passed over when looking for a fit only when its nodes
// certainly fail the pod's node selector.
func TestLabelConflict(t *testing.T) {
	t.Parallel()
	np := &cluster.NodePool{Name: "web", Labels: map[string]string{"team": "web", "tier": cluster.Unknown("var.tier")}}
	for _, tc := range []struct {
		sel  map[string]string
		want bool
	}{
		{sel: map[string]string{"team": "batch"}, want: true},
		{sel: map[string]string{"team": "web"}},
		{sel: map[string]string{"zone": "a"}},
		{sel: map[string]string{"tier": "front"}},
		{sel: map[string]string{"team": cluster.Unknown("var.team")}},
		{},
	} {
		if got := labelConflict(np, selectedLabels(tc.sel)); got != tc.want {
			t.Errorf("labelConflict(%v) = %v, want %v", tc.sel, got, tc.want)
		}
	}
	unknown := &cluster.NodePool{Name: "u", Labels: map[string]string{"team": "web"}, Unknown: []string{"labels"}}
	if labelConflict(unknown, selectedLabels(map[string]string{"team": "batch"})) {
		t.Error("a NodePool whose labels are not known is passed over")
	}
}

// TestPlacementsAfterPrepare: Prepare lets go of what it learned per NodePool
// and kind of node selection once its workloads are placed; a placement asked
// afterwards — of a workload it placed, of one with the same node selection,
// or of a new one — reads exactly as a fresh simulator's.
func TestPlacementsAfterPrepare(t *testing.T) {
	t.Parallel()
	in := func(key string, vals ...string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: vals}
	}
	m := &cluster.Model{
		NodeClasses: []*cluster.NodeClass{defaultClass},
		NodePools: []*cluster.NodePool{
			nodePool("team-a", map[string]string{"team": "a"}, nil, in("kubernetes.io/arch", "amd64")),
			nodePool("team-b", map[string]string{"team": "b"}, []corev1.Taint{{Key: "team", Value: "b", Effect: corev1.TaintEffectNoSchedule}}),
			nodePool("small", nil, nil, in("karpenter.k8s.aws/instance-size", "large")),
		},
	}
	spec := func(team, cpu string) corev1.PodSpec {
		return corev1.PodSpec{NodeSelector: map[string]string{"team": team}, Containers: []corev1.Container{container(cpu, "")}}
	}
	prepared := []*cluster.Workload{
		deployment("a", "apps", spec("a", "100m"), nil),
		deployment("b", "apps", spec("b", "100m"), nil),
		deployment("c", "apps", spec("c", "100m"), nil),
	}
	later := []*cluster.Workload{
		prepared[1],
		deployment("b-large", "apps", spec("b", "64"), nil),
		deployment("a-huge", "apps", spec("a", "500"), nil),
	}
	s := New(m)
	s.Prepare(prepared, cluster.Steady)
	for _, w := range later {
		got := s.Place(w, cluster.Steady).Grouped(1)
		want := New(m).Place(w, cluster.Steady).Grouped(1)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s after Prepare (-fresh +after):\n%s", w.Object.Name, diff)
		}
		if len(got) != len(m.NodePools) {
			t.Errorf("%s: %d lines, want one per NodePool: %q", w.Object.Name, len(got), got)
		}
	}
}

// TestNearestSharedAcrossClasses: pods of different scheduling classes that
// NodePools refuse alike share the ordering of the refusals, and read exactly
// as if each had been ordered on its own; refusals that differ (resources)
// are ordered on their own.
func TestNearestSharedAcrossClasses(t *testing.T) {
	t.Parallel()
	in := func(key string, vals ...string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: vals}
	}
	m := &cluster.Model{NodeClasses: []*cluster.NodeClass{defaultClass}}
	for i := range 6 {
		team := fmt.Sprintf("t%d", i)
		var taints []corev1.Taint
		if i%2 == 1 {
			taints = []corev1.Taint{{Key: "dedicated", Value: team, Effect: corev1.TaintEffectNoSchedule}}
		}
		m.NodePools = append(m.NodePools, nodePool("np-"+team, map[string]string{"team": team}, taints, in("karpenter.k8s.aws/instance-size", "large")))
	}
	spec := func(team, cpu string) corev1.PodSpec {
		return corev1.PodSpec{NodeSelector: map[string]string{"team": team}, Containers: []corev1.Container{container(cpu, "")}}
	}
	s := New(m)
	entries := func() int {
		s.nearest.mu.Lock()
		defer s.nearest.mu.Unlock()
		n := 0
		for _, es := range s.nearest.m {
			n += len(es)
		}
		return n
	}
	for _, tc := range []struct {
		w       *cluster.Workload
		entries int // after its placement is summarized
	}{
		{deployment("missing-100m", "apps", spec("none", "100m"), nil), 1},
		{deployment("missing-200m", "apps", spec("none", "200m"), nil), 1}, // another class, the same refusals
		{deployment("other-selector", "apps", spec("gone", "100m"), nil), 2},
		{deployment("t0-huge", "apps", spec("t0", "500"), nil), 3},  // np-t0 refuses for resources
		{deployment("t0-huger", "apps", spec("t0", "600"), nil), 4}, // worded anew: not shared
	} {
		pl := s.Place(tc.w, cluster.Steady)
		alone := *pl
		alone.memo = &summaryMemo{} // ordered on its own
		if got, want := pl.Summary(), alone.Summary(); got != want {
			t.Errorf("%s: summary %q, want %q", tc.w.Object.Name, got, want)
		}
		if diff := cmp.Diff(alone.Grouped(1), pl.Grouped(1)); diff != "" {
			t.Errorf("%s: detail (-alone +shared):\n%s", tc.w.Object.Name, diff)
		}
		if n := entries(); n != tc.entries {
			t.Errorf("after %s: %d orderings kept, want %d", tc.w.Object.Name, n, tc.entries)
		}
	}
}
