package helm

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
)

var mainTF = cluster.Origin{File: "main.tf", Line: 40}

func expandRelease(t *testing.T, r *cluster.HelmRelease) *cluster.Model {
	t.Helper()
	if r.Origin.IsZero() {
		r.Origin = mainTF
	}
	m := &cluster.Model{HelmReleases: []*cluster.HelmRelease{r}}
	Expand(m)
	if len(m.Problems) != 0 {
		t.Fatalf("problems: %v", m.Problems)
	}
	return m
}

func expandAddon(t *testing.T, a *cluster.Addon) *cluster.Model {
	t.Helper()
	if a.Origin.IsZero() {
		a.Origin = mainTF
	}
	m := &cluster.Model{Addons: []*cluster.Addon{a}}
	Expand(m)
	if len(m.Problems) != 0 {
		t.Fatalf("problems: %v", m.Problems)
	}
	return m
}

func karpenter(t *testing.T, version string, values map[string]any) *cluster.Object {
	t.Helper()
	m := expandRelease(t, &cluster.HelmRelease{Name: "karpenter", Namespace: "kube-system", Chart: "karpenter", Repository: "oci://public.ecr.aws/karpenter", Version: version, Values: values, Address: "helm_release.karpenter"})
	return find(t, m.Objects, "Deployment", "karpenter")
}

func TestKarpenterByVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		version      string
		dnsPolicy    string
		spread       string
		affinityKeys []any
		image        string
	}{
		{"0.31.4", "Default", "ScheduleAnyway", []any{"karpenter.sh/provisioner-name"}, "public.ecr.aws/karpenter/controller:v0.31.4"},
		{"0.32.10", "Default", "ScheduleAnyway", []any{"karpenter.sh/provisioner-name", "karpenter.sh/nodepool"}, "public.ecr.aws/karpenter/controller:v0.32.10"},
		{"0.33.0", "Default", "ScheduleAnyway", []any{"karpenter.sh/nodepool"}, "public.ecr.aws/karpenter/controller:v0.33.0"},
		{"0.34.0", "ClusterFirst", "ScheduleAnyway", []any{"karpenter.sh/nodepool"}, "public.ecr.aws/karpenter/controller:v0.34.0"},
		{"0.37.7", "ClusterFirst", "ScheduleAnyway", []any{"karpenter.sh/nodepool"}, "public.ecr.aws/karpenter/controller:0.37.7"},
		{"1.0.0", "ClusterFirst", "DoNotSchedule", []any{"karpenter.sh/nodepool"}, "public.ecr.aws/karpenter/controller:1.0.0"},
		{"1.14.1", "ClusterFirst", "DoNotSchedule", []any{"karpenter.sh/nodepool"}, "public.ecr.aws/karpenter/controller:1.14.1"},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			t.Parallel()
			d := karpenter(t, tt.version, nil)
			if got := d.String("spec.template.spec.dnsPolicy"); got != tt.dnsPolicy {
				t.Errorf("dnsPolicy = %q, want %q", got, tt.dnsPolicy)
			}
			if got := d.String("spec.template.spec.topologySpreadConstraints.0.whenUnsatisfiable"); got != tt.spread {
				t.Errorf("whenUnsatisfiable = %q, want %q", got, tt.spread)
			}
			exprs, _ := d.Get("spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.0.matchExpressions").([]any)
			var keys []any
			for _, e := range exprs {
				keys = append(keys, e.(map[string]any)["key"])
				if op := e.(map[string]any)["operator"]; op != "DoesNotExist" {
					t.Errorf("operator %v", op)
				}
			}
			if diff := cmp.Diff(tt.affinityKeys, keys); diff != "" {
				t.Errorf("node affinity keys (-want +got):\n%s", diff)
			}
			if got := d.String("spec.template.spec.containers.0.image"); got != tt.image {
				t.Errorf("image = %q, want %q", got, tt.image)
			}
			if diff := cmp.Diff([]any{map[string]any{"key": "CriticalAddonsOnly", "operator": "Exists"}}, d.Get("spec.template.spec.tolerations")); diff != "" {
				t.Errorf("tolerations (-want +got):\n%s", diff)
			}
			if got := d.String("spec.template.spec.priorityClassName"); got != "system-cluster-critical" {
				t.Errorf("priorityClassName = %q", got)
			}
			if got := d.Get("spec.replicas"); got != int64(2) {
				t.Errorf("replicas = %#v", got)
			}
			if got := d.Annotations[ChartVersionAnnotation]; got != tt.version {
				t.Errorf("chart-version annotation = %q", got)
			}
			if d.Annotations[ComponentAnnotation] != "karpenter" || d.Origin != mainTF || d.Via != "helm_release.karpenter" || d.Manager != "terraform" {
				t.Errorf("component %q origin %v via %q manager %q", d.Annotations[ComponentAnnotation], d.Origin, d.Via, d.Manager)
			}
		})
	}
}

func TestKarpenterUserValues(t *testing.T) {
	t.Parallel()
	d := karpenter(t, "1.1.1", map[string]any{
		"podLabels":     map[string]any{"role": "controller"},
		"nodeSelector":  map[string]any{"karpenter.sh/controller": "true"},
		"dnsPolicy":     "Default",
		"replicas":      int64(1),
		"schedulerName": "fargate-scheduler",
		"tolerations":   []any{map[string]any{"key": "karpenter.sh/controller", "operator": "Exists", "effect": "NoSchedule"}},
		"affinity":      map[string]any{"podAntiAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{"topologyKey": "kubernetes.io/hostname"}}}},
	})
	labels, _ := d.Get("spec.template.metadata.labels").(map[string]any)
	if labels["role"] != "controller" || labels["app.kubernetes.io/name"] != "karpenter" || labels["app.kubernetes.io/instance"] != "karpenter" {
		t.Errorf("pod labels = %v", labels)
	}
	if diff := cmp.Diff(map[string]any{"kubernetes.io/os": "linux", "karpenter.sh/controller": "true"}, d.Get("spec.template.spec.nodeSelector")); diff != "" {
		t.Errorf("nodeSelector merges with the default map (-want +got):\n%s", diff)
	}
	if got := d.String("spec.template.spec.schedulerName"); got != "fargate-scheduler" {
		t.Errorf("schedulerName = %q", got)
	}
	if got := d.Get("spec.replicas"); got != int64(1) {
		t.Errorf("replicas = %#v", got)
	}
	if got := d.Get("spec.template.spec.tolerations.0.key"); got != "karpenter.sh/controller" {
		t.Errorf("tolerations replaced? %v", d.Get("spec.template.spec.tolerations"))
	}
	if got := d.Get("spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution.0.labelSelector.matchLabels"); !cmp.Equal(got, map[string]any{"app.kubernetes.io/name": "karpenter", "app.kubernetes.io/instance": "karpenter"}) {
		t.Errorf("anti-affinity label selector = %v", got)
	}
	// The user's affinity replaces the nodeAffinity part too? No: Helm merges maps,
	// so the default nodeAffinity stays.
	if d.Get("spec.template.spec.affinity.nodeAffinity") == nil {
		t.Error("default nodeAffinity lost")
	}
}

func TestKarpenterSchedulerNameOnlySince111(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]string{"1.0.8": "", "1.1.0": "", "1.1.1": "default-scheduler", "1.14.1": "default-scheduler"} {
		d := karpenter(t, v, nil)
		if got := d.String("spec.template.spec.schedulerName"); got != want {
			t.Errorf("%s: schedulerName = %q, want %q", v, got, want)
		}
		d = karpenter(t, v, map[string]any{"schedulerName": "fargate-scheduler"})
		if got, set := d.String("spec.template.spec.schedulerName"), want != ""; (got == "fargate-scheduler") != set {
			t.Errorf("%s: user schedulerName applied = %v, want %v", v, got == "fargate-scheduler", set)
		}
	}
}

func TestKarpenterPostInstallHookOnlyIn100(t *testing.T) {
	t.Parallel()
	m := expandRelease(t, &cluster.HelmRelease{Name: "karpenter", Namespace: "karpenter", Chart: "karpenter", Version: "1.0.0",
		Values: map[string]any{"podLabels": map[string]any{"fargate": "yes"}, "nodeSelector": map[string]any{"x": "y"}}})
	job := find(t, m.Objects, "Job", "karpenter-post-install-hook")
	if job.Get("spec.template.metadata.labels") != nil || job.Get("spec.template.spec.nodeSelector") != nil {
		t.Errorf("hook pods carry labels %v / nodeSelector %v; v1.0.0's hook has neither", job.Get("spec.template.metadata.labels"), job.Get("spec.template.spec.nodeSelector"))
	}
	if job.Get("spec.template.spec.tolerations.0.key") != "CriticalAddonsOnly" {
		t.Errorf("hook tolerations = %v", job.Get("spec.template.spec.tolerations"))
	}
	if job.Annotations[ComponentAnnotation] != "karpenter-post-install-hook" || job.Namespace != "karpenter" {
		t.Errorf("hook component %q namespace %q", job.Annotations[ComponentAnnotation], job.Namespace)
	}
	for _, v := range []string{"0.37.7", "1.0.1"} {
		m := expandRelease(t, &cluster.HelmRelease{Name: "karpenter", Namespace: "karpenter", Chart: "karpenter", Version: v})
		for _, o := range m.Objects {
			if o.Kind == "Job" {
				t.Errorf("%s: unexpected Job %s", v, o.Name)
			}
		}
	}
}

func TestKarpenterFullname(t *testing.T) {
	t.Parallel()
	m := expandRelease(t, &cluster.HelmRelease{Name: "kp", Namespace: "kube-system", Chart: "karpenter", Version: "1.14.1"})
	d := find(t, m.Objects, "Deployment", "kp-karpenter")
	labels, _ := d.Get("spec.template.metadata.labels").(map[string]any)
	if labels["app.kubernetes.io/instance"] != "kp" {
		t.Errorf("instance label %v", labels)
	}
	if d.Via != "helm:kp" || d.Manager != "helm" {
		t.Errorf("via %q manager %q", d.Via, d.Manager)
	}
}

func nodeTolerations(t *testing.T, m *cluster.Model) []any {
	t.Helper()
	ds := find(t, m.Objects, "DaemonSet", "ebs-csi-node")
	l, _ := ds.Get("spec.template.spec.tolerations").([]any)
	return l
}

func hasToleration(list []any, key string) bool {
	for _, x := range list {
		if m, ok := x.(map[string]any); ok && m["key"] == key {
			return true
		}
	}
	return false
}

func TestEBSNodeTolerationsByVersion(t *testing.T) {
	t.Parallel()
	notTolerateAll := map[string]any{"node": map[string]any{"tolerateAllTaints": false}}
	tests := []struct {
		version   string
		values    map[string]any
		all       bool // "- operator: Exists" only
		disrupted bool
	}{
		{"2.10.1", nil, false, false},
		{"2.11.0", nil, true, false},
		{"2.35.1", nil, true, false},
		{"2.35.1", notTolerateAll, false, false},
		{"2.36.0", notTolerateAll, false, true},
		{"2.64.0", notTolerateAll, false, true},
		{"2.64.0", nil, true, false},
	}
	for _, tt := range tests {
		m := expandRelease(t, &cluster.HelmRelease{Name: "aws-ebs-csi-driver", Namespace: "kube-system", Chart: "aws-ebs-csi-driver", Version: tt.version, Values: tt.values})
		tol := nodeTolerations(t, m)
		all := cmp.Equal(tol, []any{map[string]any{"operator": "Exists"}})
		if all != tt.all {
			t.Errorf("%s %v: tolerate all = %v, want %v (%v)", tt.version, tt.values, all, tt.all, tol)
		}
		if got := hasToleration(tol, "karpenter.sh/disrupted"); got != tt.disrupted {
			t.Errorf("%s %v: karpenter.sh/disrupted toleration = %v, want %v (%v)", tt.version, tt.values, got, tt.disrupted, tol)
		}
		if tt.disrupted && !hasToleration(tol, "karpenter.sh/disruption") {
			t.Errorf("%s: no karpenter.sh/disruption toleration", tt.version)
		}
	}
	// 2.35.1 with tolerateAllTaints false keeps only the NoExecute default: the
	// documented F3 trap.
	m := expandRelease(t, &cluster.HelmRelease{Name: "ebs", Namespace: "kube-system", Chart: "aws-ebs-csi-driver", Version: "2.35.1", Values: notTolerateAll})
	tol := nodeTolerations(t, m)
	if len(tol) == 0 || !cmp.Equal(tol[0], map[string]any{"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": int64(300)}) {
		t.Errorf("2.35.1 node tolerations = %v", tol)
	}
	ds := find(t, m.Objects, "DaemonSet", "ebs-csi-node")
	if ds.Annotations[ComponentAnnotation] != "ebs-csi-node" || ds.Annotations[ChartVersionAnnotation] != "2.35.1" {
		t.Errorf("annotations %v", ds.Annotations)
	}
	if got := ds.String("spec.template.spec.containers.0.image"); got != "public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.35.0" {
		t.Errorf("driver image = %q", got)
	}
	if got := ds.String("spec.template.spec.containers.1.name"); got != "node-driver-registrar" {
		t.Errorf("second container = %q", got)
	}
	if got := ds.String("spec.template.spec.volumes.0.hostPath.path"); got != "/var/lib/kubelet" {
		t.Errorf("kubelet hostPath = %q", got)
	}
	ctrl := find(t, m.Objects, "Deployment", "ebs-csi-controller")
	ctol, _ := ctrl.Get("spec.template.spec.tolerations").([]any)
	if !hasToleration(ctol, "CriticalAddonsOnly") || len(ctol) != 2 {
		t.Errorf("controller tolerations = %v", ctol)
	}
}

func TestEBSControllerUserTolerations(t *testing.T) {
	t.Parallel()
	m := expandRelease(t, &cluster.HelmRelease{Name: "ebs", Namespace: "kube-system", Chart: "aws-ebs-csi-driver", Version: "2.10.1",
		Values: map[string]any{"controller": map[string]any{"tolerations": []any{map[string]any{"key": "dedicated", "operator": "Exists"}}}}})
	ctrl := find(t, m.Objects, "Deployment", "ebs-csi-controller")
	tol, _ := ctrl.Get("spec.template.spec.tolerations").([]any)
	// 2.10.x templates put their defaults before the user's list.
	if !hasToleration(tol, "CriticalAddonsOnly") || !hasToleration(tol, "dedicated") {
		t.Errorf("controller tolerations = %v", tol)
	}
}

func TestValueOriginsBecomeFieldLines(t *testing.T) {
	t.Parallel()
	r := &cluster.HelmRelease{Name: "karpenter", Namespace: "kube-system", Chart: "karpenter", Version: "1.14.1",
		Values:       map[string]any{"tolerations": []any{map[string]any{"operator": "Exists"}}},
		ValueOrigins: map[string]cluster.Origin{"tolerations": {File: "main.tf", Line: 55}, "nodeSelector": {File: "values.yaml", Line: 2}},
	}
	m := expandRelease(t, r)
	d := find(t, m.Objects, "Deployment", "karpenter")
	if got := d.At("spec.template.spec.tolerations.0"); got.File != "main.tf" || got.Line != 55 {
		t.Errorf("tolerations at %+v, want main.tf:55", got)
	}
	if got := d.At("spec.template.spec.nodeSelector"); got.Line != mainTF.Line {
		t.Errorf("nodeSelector (set in another file) at %+v, want the release line", got)
	}
}

func TestCoreDNSAddon(t *testing.T) {
	t.Parallel()
	m := expandAddon(t, &cluster.Addon{Name: "coredns", Version: "v1.11.1-eksbuild.4", Address: "module.eks.aws_eks_addon.this[\"coredns\"]"})
	d := find(t, m.Objects, "Deployment", "coredns")
	want := []any{
		map[string]any{"key": "CriticalAddonsOnly", "operator": "Exists"},
		map[string]any{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"},
	}
	if diff := cmp.Diff(want, d.Get("spec.template.spec.tolerations")); diff != "" {
		t.Errorf("default tolerations (-want +got):\n%s", diff)
	}
	if d.Namespace != "kube-system" || d.Via != "module.eks.aws_eks_addon.this[\"coredns\"]" || d.Manager != "eks" {
		t.Errorf("namespace %q via %q manager %q", d.Namespace, d.Via, d.Manager)
	}
	if d.Annotations[ComponentAnnotation] != "coredns" || d.Annotations[AddonVersionAnnotation] != "v1.11.1-eksbuild.4" {
		t.Errorf("annotations %v", d.Annotations)
	}
	labels, _ := d.Get("spec.template.metadata.labels").(map[string]any)
	if labels["k8s-app"] != "kube-dns" {
		t.Errorf("labels %v", labels)
	}
	ann, _ := d.Get("spec.template.metadata.annotations").(map[string]any)
	if ann["eks.amazonaws.com/compute-type"] != "ec2" {
		t.Errorf("pod annotations %v", ann)
	}
	if d.Get("spec.template.spec.affinity.podAntiAffinity") == nil {
		t.Error("no podAntiAffinity")
	}

	// User tolerations replace the defaults: a fix must repeat them.
	m = expandAddon(t, &cluster.Addon{Name: "coredns", Version: "v1.11.1-eksbuild.4", ConfigurationValues: map[string]any{
		"tolerations": []any{map[string]any{"key": "karpenter.sh/controller", "operator": "Exists", "effect": "NoSchedule"}},
		"computeType": "Fargate",
	}})
	d = find(t, m.Objects, "Deployment", "coredns")
	if diff := cmp.Diff([]any{map[string]any{"key": "karpenter.sh/controller", "operator": "Exists", "effect": "NoSchedule"}}, d.Get("spec.template.spec.tolerations")); diff != "" {
		t.Errorf("configured tolerations (-want +got):\n%s", diff)
	}
	ann, _ = d.Get("spec.template.metadata.annotations").(map[string]any)
	if _, ok := ann["eks.amazonaws.com/compute-type"]; ok {
		t.Errorf("computeType Fargate keeps the ec2 annotation: %v", ann)
	}
}

func TestAddonRejectedKeyIsLeftOut(t *testing.T) {
	t.Parallel()
	m := expandAddon(t, &cluster.Addon{Name: "coredns", Version: "v1.9.3-eksbuild.2", ConfigurationValues: map[string]any{
		"tolerations":  []any{map[string]any{"operator": "Exists"}},
		"replicaCount": int64(3),
	}})
	d := find(t, m.Objects, "Deployment", "coredns")
	if hasToleration(d.Get("spec.template.spec.tolerations").([]any), "") {
		t.Errorf("rejected tolerations applied: %v", d.Get("spec.template.spec.tolerations"))
	}
	if d.Get("spec.replicas") != int64(3) {
		t.Errorf("accepted replicaCount not applied: %v", d.Get("spec.replicas"))
	}
	// addon-toleration-unsupported reports the rejected key; describing the
	// add-on without it is no problem of its own.
	if len(m.Notes) != 0 || len(m.Problems) != 0 {
		t.Errorf("notes = %v, problems = %v", m.Notes, m.Problems)
	}
}

func TestEBSAddon(t *testing.T) {
	t.Parallel()
	m := expandAddon(t, &cluster.Addon{Name: "aws-ebs-csi-driver", Version: "v1.14.0-eksbuild.1"})
	if tol := nodeTolerations(t, m); !cmp.Equal(tol, []any{map[string]any{"operator": "Exists"}}) {
		t.Errorf("add-on node tolerations = %v, want tolerate all (add-on default)", tol)
	}
	m = expandAddon(t, &cluster.Addon{Name: "aws-ebs-csi-driver", Version: "v1.14.0-eksbuild.1", ConfigurationValues: map[string]any{
		"controller": map[string]any{"tolerations": []any{map[string]any{"key": "CriticalAddonsOnly", "operator": "Exists"}, map[string]any{"key": "karpenter.sh/controller", "operator": "Exists"}}},
	}})
	ctrl := find(t, m.Objects, "Deployment", "ebs-csi-controller")
	if tol, _ := ctrl.Get("spec.template.spec.tolerations").([]any); !hasToleration(tol, "karpenter.sh/controller") {
		t.Errorf("controller tolerations = %v", tol)
	}
	if len(m.Notes) != 0 {
		t.Errorf("notes = %v", m.Notes)
	}
	// v1.13 rejects controller.tolerations: EKS refuses the configuration.
	m = expandAddon(t, &cluster.Addon{Name: "aws-ebs-csi-driver", Version: "v1.13.0-eksbuild.3", ConfigurationValues: map[string]any{
		"controller": map[string]any{"tolerations": []any{map[string]any{"key": "karpenter.sh/controller", "operator": "Exists"}}},
	}})
	ctrl = find(t, m.Objects, "Deployment", "ebs-csi-controller")
	if tol, _ := ctrl.Get("spec.template.spec.tolerations").([]any); hasToleration(tol, "karpenter.sh/controller") {
		t.Errorf("v1.13 applied controller.tolerations: %v", tol)
	}
	if len(m.Notes) != 0 || len(m.Problems) != 0 {
		t.Errorf("notes = %v, problems = %v", m.Notes, m.Problems)
	}
}

func TestNodeAgentsTolerateEverything(t *testing.T) {
	t.Parallel()
	for name, ds := range map[string]string{"vpc-cni": "aws-node", "kube-proxy": "kube-proxy", "eks-pod-identity-agent": "eks-pod-identity-agent"} {
		m := expandAddon(t, &cluster.Addon{Name: name})
		o := find(t, m.Objects, "DaemonSet", ds)
		tol, _ := o.Get("spec.template.spec.tolerations").([]any)
		if len(tol) == 0 || !cmp.Equal(tol[0], map[string]any{"operator": "Exists"}) {
			t.Errorf("%s tolerations = %v", ds, tol)
		}
		if o.Annotations[ComponentAnnotation] != ds {
			t.Errorf("%s component %q", ds, o.Annotations[ComponentAnnotation])
		}
		if o.Get("spec.template.spec.hostNetwork") != true {
			t.Errorf("%s hostNetwork = %v", ds, o.Get("spec.template.spec.hostNetwork"))
		}
		if len(m.Notes) != 1 || !strings.Contains(m.Notes[0].Message, "no version given") {
			t.Errorf("%s notes = %v", name, m.Notes)
		}
	}
}

func TestCiliumChart(t *testing.T) {
	t.Parallel()
	m := expandRelease(t, &cluster.HelmRelease{Name: "cilium", Namespace: "kube-system", Chart: "cilium", Repository: "https://helm.cilium.io", Version: "1.16.5"})
	agent := find(t, m.Objects, "DaemonSet", "cilium")
	if diff := cmp.Diff([]any{map[string]any{"operator": "Exists"}}, agent.Get("spec.template.spec.tolerations")); diff != "" {
		t.Errorf("agent tolerations (-want +got):\n%s", diff)
	}
	if agent.Annotations[ComponentAnnotation] != "cilium-agent" {
		t.Errorf("component %q", agent.Annotations[ComponentAnnotation])
	}
	find(t, m.Objects, "Deployment", "cilium-operator")
	// Overriding the list loses the blanket toleration (FACTS.md F3).
	m = expandRelease(t, &cluster.HelmRelease{Name: "cilium", Namespace: "kube-system", Chart: "cilium", Version: "1.16.5",
		Values: map[string]any{"tolerations": []any{map[string]any{"key": "CriticalAddonsOnly", "operator": "Exists"}}}})
	agent = find(t, m.Objects, "DaemonSet", "cilium")
	if hasToleration(agent.Get("spec.template.spec.tolerations").([]any), "") {
		t.Error("user tolerations did not replace the default")
	}
}

func TestExpandNotes(t *testing.T) {
	t.Parallel()
	m := &cluster.Model{
		HelmReleases: []*cluster.HelmRelease{
			{Name: "x", Chart: "some-private-chart", Origin: cluster.Origin{File: "a.tf", Line: 1}, Address: "helm_release.x"},
			{Name: "karpenter", Chart: "karpenter", Version: "", Origin: cluster.Origin{File: "a.tf", Line: 9}},
			{Name: "old", Chart: "karpenter", Version: "0.0.9", Origin: cluster.Origin{File: "a.tf", Line: 20}},
			{Name: "unknown", Chart: cluster.Unknown("var.chart"), Origin: cluster.Origin{File: "a.tf", Line: 30}},
		},
		Addons: []*cluster.Addon{
			{Name: "some-addon", Origin: cluster.Origin{File: "a.tf", Line: 40}},
			{Name: "coredns", Version: "v1.11.1-eksbuild.4", Unknown: []string{"configuration_values"}, Origin: cluster.Origin{File: "a.tf", Line: 50}},
		},
	}
	Expand(m)
	// What could not be described, or was assumed where the user pinned
	// something eksdoctor does not know, is unresolved (an info finding); a
	// version left to Helm is a note; values not known mark the objects.
	var got []string
	for _, p := range m.Problems {
		got = append(got, fmt.Sprintf("%s unresolved=%v %s", p.Origin, p.Unresolved, p.Message))
	}
	for _, n := range m.Notes {
		got = append(got, n.Origin.String()+" note "+n.Message)
	}
	wants := []string{
		"a.tf:20 unresolved=true chart karpenter of helm release old: version 0.0.9 is older than every known version; 0.1.3 is assumed",
		"a.tf:30 unresolved=true the chart of helm release unknown is not known before apply",
		// Charts and add-ons eksdoctor does not know are said once, together.
		"a.tf:1 unresolved=true 2 charts and add-ons are not in eksdoctor's knowledge base and not on disk; what they create is not analysed: chart some-private-chart of helm_release.x; EKS add-on some-addon (EKS add-on some-addon)",
		"a.tf:9 note chart karpenter of helm release karpenter: no version given; the newest known version 1.14.1 is assumed",
	}
	if len(got) != len(wants) {
		t.Fatalf("problems and notes:\n%s", strings.Join(got, "\n"))
	}
	for i, w := range wants {
		if !strings.HasPrefix(got[i], w) {
			t.Errorf("note %d = %q, want prefix %q", i, got[i], w)
		}
	}
	for _, o := range m.Objects {
		if o.Via == "helm_release.x" {
			t.Errorf("object synthesized for an unknown chart: %s", o.Ref())
		}
		want := ""
		if o.Via == "eks-addon:coredns" {
			want = "configuration_values of EKS add-on coredns"
		}
		if o.Unknown != want {
			t.Errorf("%s %s: Unknown = %q, want %q", o.Via, o.Ref(), o.Unknown, want)
		}
	}
}

func TestValuesThatDoNotRenderAreProblems(t *testing.T) {
	t.Parallel()
	m := &cluster.Model{HelmReleases: []*cluster.HelmRelease{{Name: "karpenter", Chart: "karpenter", Version: "1.14.1", Origin: mainTF,
		Values: map[string]any{"affinity": "not a map", "controller": "nope"}}}}
	Expand(m)
	if len(m.Problems) != 1 || m.Problems[0].Origin != mainTF || !strings.Contains(m.Problems[0].Message, "karpenter 1.14.1") {
		t.Errorf("problems = %v", m.Problems)
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	o, ok := AddonDefaults("coredns", "v1.11.1-eksbuild.4", "coredns")
	if !ok || !hasToleration(o.Get("spec.template.spec.tolerations").([]any), "CriticalAddonsOnly") {
		t.Errorf("coredns defaults: %v %v", ok, o)
	}
	o, ok = ChartDefaults("oci://public.ecr.aws/karpenter/karpenter", "0.33.0", "karpenter")
	if !ok || o.String("spec.template.spec.dnsPolicy") != "Default" {
		t.Errorf("karpenter 0.33.0 defaults: %v", ok)
	}
	if _, ok := ChartDefaults("karpenter", "1.0.0", "nope"); ok {
		t.Error("unknown component found")
	}
}

func TestUnknownValuesKeepDefaults(t *testing.T) {
	t.Parallel()
	m := expandRelease(t, &cluster.HelmRelease{Name: "karpenter", Namespace: "kube-system", Chart: "karpenter", Version: "1.14.1",
		Values: map[string]any{
			"affinity":    cluster.Unknown("var.affinity"),
			"tolerations": cluster.Unknown("local.tolerations"),
			"settings":    map[string]any{"clusterName": cluster.Unknown("module.eks.cluster_name")},
		}})
	d := find(t, m.Objects, "Deployment", "karpenter")
	if d.Get("spec.template.spec.affinity.nodeAffinity") == nil || d.Get("spec.template.spec.tolerations.0.key") != "CriticalAddonsOnly" {
		t.Errorf("defaults not kept: affinity %v tolerations %v", d.Get("spec.template.spec.affinity"), d.Get("spec.template.spec.tolerations"))
	}
	if d.Unknown != "value affinity, value tolerations of helm release karpenter" {
		t.Errorf("Unknown = %q, want the dropped values", d.Unknown)
	}
	m = expandAddon(t, &cluster.Addon{Name: "coredns", Version: "v1.11.1-eksbuild.4", ConfigurationValues: map[string]any{"tolerations": cluster.Unknown("var.t")}})
	d = find(t, m.Objects, "Deployment", "coredns")
	if d.Get("spec.template.spec.tolerations.0.key") != "CriticalAddonsOnly" {
		t.Errorf("coredns tolerations %v", d.Get("spec.template.spec.tolerations"))
	}
}

func TestUnknownVersionNote(t *testing.T) {
	t.Parallel()
	m := &cluster.Model{
		HelmReleases: []*cluster.HelmRelease{{Name: "karpenter", Chart: "karpenter", Version: cluster.Unknown("var.karpenter_version"), Origin: mainTF}},
		Addons:       []*cluster.Addon{{Name: "coredns", Version: cluster.Unknown("data.aws_eks_addon_version.coredns.version"), Origin: mainTF}},
	}
	Expand(m)
	// A chart version not known is said; an add-on version looked up with
	// data.aws_eks_addon_version is the cluster's default, as when none is given.
	if len(m.Problems) != 1 || !m.Problems[0].Unresolved || !strings.Contains(m.Problems[0].Message, "the version of chart karpenter of helm release karpenter is not known before apply") {
		t.Errorf("problems = %+v", m.Problems)
	}
	if len(m.Notes) != 1 || !strings.Contains(m.Notes[0].Message, "add-on coredns: the version is looked up at apply time") {
		t.Errorf("notes = %+v", m.Notes)
	}
	if len(m.Objects) == 0 {
		t.Error("nothing synthesized for an unknown version")
	}
}

func TestOneUnknownChart(t *testing.T) {
	t.Parallel()
	m := &cluster.Model{HelmReleases: []*cluster.HelmRelease{{Name: "x", Chart: "private", Repository: "https://charts.example.com", Version: "1.0.0", Origin: mainTF, Address: "helm_release.x"}}}
	Expand(m)
	want := []cluster.Problem{{Origin: mainTF, Unresolved: true, Message: "chart https://charts.example.com/private of helm_release.x is not in eksdoctor's knowledge base and not on disk; what it creates is not analysed"}}
	if diff := cmp.Diff(want, m.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// A value not known before apply that breaks the rendering (a conditional that
// renders as text with ": " in it) is left to the chart's default, and said on
// the objects, rather than being invalid input.
func TestUnknownValueThatBreaksRendering(t *testing.T) {
	t.Parallel()
	m := expandRelease(t, &cluster.HelmRelease{Name: "karpenter", Namespace: "kube-system", Chart: "karpenter", Version: "1.1.1",
		Values: map[string]any{"replicas": cluster.Unknown("var.sla_target == 3 ? 2 : 1"), "settings": map[string]any{"clusterName": "demo"}}})
	d := find(t, m.Objects, "Deployment", "karpenter")
	if !strings.Contains(d.Unknown, "value replicas") {
		t.Errorf("Unknown = %q, want the replicas value named", d.Unknown)
	}
	for _, p := range m.Problems {
		if !p.Unresolved {
			t.Errorf("problem %+v", p)
		}
	}
}

// Two values keys setting one field give the field the line of the key named
// like it, on every run: map order must not choose.
func TestFieldLinesDeterministic(t *testing.T) {
	c := &catalog.ChartComponent{ValuesPrefix: "node", Fields: map[string]string{
		"tolerateAllTaints": "spec.template.spec.tolerations",
		"tolerations":       "spec.template.spec.tolerations",
		"nodeSelector":      "spec.template.spec.nodeSelector",
		"a":                 "spec.template.spec.affinity",
		"b":                 "spec.template.spec.affinity",
	}}
	at := cluster.Origin{File: "main.tf", Line: 40}
	origins := map[string]cluster.Origin{
		"node.tolerateAllTaints": {File: "main.tf", Line: 55},
		"node.tolerations":       {File: "main.tf", Line: 56},
		"node.nodeSelector":      {File: "main.tf", Line: 60},
		"node.a":                 {File: "main.tf", Line: 62},
		"node.b":                 {File: "main.tf", Line: 61},
	}
	want := map[string]int{"spec.template.spec.tolerations": 56, "spec.template.spec.nodeSelector": 60, "spec.template.spec.affinity": 61}
	for i := 0; i < 50; i++ {
		got := fieldLines(c, origins, at)
		if !maps.Equal(got, want) {
			t.Fatalf("run %d: fieldLines = %v, want %v", i, got, want)
		}
	}
}
