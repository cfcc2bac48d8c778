package sim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
)

func TestDisruptionFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		version string
		ok      bool
		gen     Generation
		taint   corev1.Taint
		volumes bool
		groups  bool
	}{
		{version: "1.0.0", ok: true, gen: GenV1, taint: DisruptedTaint, volumes: true, groups: false},
		{version: "v1.0.8", ok: true, gen: GenV1, taint: DisruptedTaint, volumes: true, groups: false},
		{version: "1.1.0", ok: true, gen: GenV1, taint: DisruptedTaint, volumes: true, groups: true},
		{version: "1.6.0", ok: true, gen: GenV1, taint: DisruptedTaint, volumes: true, groups: true},
		// A bare major version comes from an apiVersion: a current 1.x.
		{version: "1", ok: true, gen: GenV1, taint: DisruptedTaint, volumes: true, groups: true},
		{version: "2.0.0-rc.1", ok: true, gen: GenV1, taint: DisruptedTaint, volumes: true, groups: true},
		{version: "0.37.7", ok: true, gen: GenBeta, taint: DisruptingTaint},
		{version: "0.37", ok: true, gen: GenBeta, taint: DisruptingTaint},
		{version: "0.32.0", ok: true, gen: GenBeta, taint: DisruptingTaint},
		{version: "0.31.4", ok: true, gen: GenAlpha, taint: CordonTaint},
		{version: "v0.16.3", ok: true, gen: GenAlpha, taint: CordonTaint},
		{version: "", ok: false},
		{version: "latest", ok: false},
		{version: "${var.karpenter_version}", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			t.Parallel()
			got, ok := DisruptionFor(tt.version)
			if ok != tt.ok {
				t.Fatalf("DisruptionFor(%q) ok = %v, want %v", tt.version, ok, tt.ok)
			}
			if !ok {
				return
			}
			if got.Generation != tt.gen || got.Taint != tt.taint || got.WaitsForVolumes != tt.volumes || got.WaitsBetweenGroups != tt.groups {
				t.Errorf("DisruptionFor(%q) = %v %s volumes=%v groups=%v, want %v %s volumes=%v groups=%v",
					tt.version, got.Generation, TaintText(got.Taint), got.WaitsForVolumes, got.WaitsBetweenGroups,
					tt.gen, TaintText(tt.taint), tt.volumes, tt.groups)
			}
		})
	}
}

func TestDisruptionOfUnknownVersionAssumesV1(t *testing.T) {
	t.Parallel()
	got := DisruptionOf(cluster.Karpenter{})
	if !got.Assumed || got.Generation != GenV1 || got.Taint != DisruptedTaint {
		t.Errorf("DisruptionOf(no version) = assumed %v, %v, %s; want assumed v1 with %s", got.Assumed, got.Generation, TaintText(got.Taint), TaintText(DisruptedTaint))
	}
	if d := got.Describe(); d != "karpenter.sh/disrupted:NoSchedule (the Karpenter version is not stated in the inputs; v1 is assumed)" {
		t.Errorf("Describe() = %q", d)
	}
	known := DisruptionOf(cluster.Karpenter{Version: "0.37.0", VersionFrom: "chart version of helm_release.karpenter"})
	if d := known.Describe(); d != "karpenter.sh/disruption=disrupting:NoSchedule (Karpenter v0.37.0, from chart version of helm_release.karpenter)" {
		t.Errorf("Describe() = %q", d)
	}
}

func tol(key, op, value string, effect corev1.TaintEffect) corev1.Toleration {
	return corev1.Toleration{Key: key, Operator: corev1.TolerationOperator(op), Value: value, Effect: effect}
}

func TestGroupOf(t *testing.T) {
	t.Parallel()
	v1, _ := DisruptionFor("1.2.0")
	beta, _ := DisruptionFor("0.37.0")
	alpha, _ := DisruptionFor("0.31.0")
	dsTolerations := daemonSetTolerations(&corev1.Pod{})
	tests := []struct {
		name      string
		d         Disruption
		spec      corev1.PodSpec
		daemon    bool
		static    bool
		wantGroup EvictionGroup
		wantStays string
	}{
		{name: "plain pod", d: v1, spec: corev1.PodSpec{}, wantGroup: NonCriticalPods},
		{name: "plain daemon pod", d: v1, spec: corev1.PodSpec{Tolerations: dsTolerations}, daemon: true, wantGroup: NonCriticalDaemonPods},
		{name: "cluster-critical pod", d: v1, spec: corev1.PodSpec{PriorityClassName: "system-cluster-critical"}, wantGroup: CriticalPods},
		{name: "node-critical daemon pod", d: v1, spec: corev1.PodSpec{PriorityClassName: "system-node-critical", Tolerations: dsTolerations}, daemon: true, wantGroup: CriticalDaemonPods},
		{name: "custom priority class is not critical", d: v1, spec: corev1.PodSpec{PriorityClassName: "high"}, wantGroup: NonCriticalPods},
		{name: "empty-key Exists tolerates everything", d: v1, spec: corev1.PodSpec{Tolerations: []corev1.Toleration{tol("", "Exists", "", "")}}, daemon: true, wantStays: "tolerates karpenter.sh/disrupted:NoSchedule"},
		{name: "v1 key with NoSchedule", d: v1, spec: corev1.PodSpec{Tolerations: []corev1.Toleration{tol("karpenter.sh/disrupted", "Exists", "", corev1.TaintEffectNoSchedule)}}, daemon: true, wantStays: "tolerates karpenter.sh/disrupted:NoSchedule"},
		{name: "v1 key with any effect", d: v1, spec: corev1.PodSpec{Tolerations: []corev1.Toleration{tol("karpenter.sh/disrupted", "Exists", "", "")}}, daemon: true, wantStays: "tolerates karpenter.sh/disrupted:NoSchedule"},
		{name: "Exists NoExecute does not match NoSchedule", d: v1, spec: corev1.PodSpec{PriorityClassName: "system-node-critical", Tolerations: []corev1.Toleration{tol("", "Exists", "", corev1.TaintEffectNoExecute)}}, daemon: true, wantGroup: CriticalDaemonPods},
		{name: "v1 key with NoExecute does not match", d: v1, spec: corev1.PodSpec{Tolerations: []corev1.Toleration{tol("karpenter.sh/disrupted", "Exists", "", corev1.TaintEffectNoExecute)}}, daemon: true, wantGroup: NonCriticalDaemonPods},
		{name: "v1beta1 key under v1", d: v1, spec: corev1.PodSpec{Tolerations: []corev1.Toleration{tol("karpenter.sh/disruption", "Exists", "", "")}}, daemon: true, wantGroup: NonCriticalDaemonPods},
		{name: "v1 key under v1beta1", d: beta, spec: corev1.PodSpec{Tolerations: []corev1.Toleration{tol("karpenter.sh/disrupted", "Exists", "", "")}}, daemon: true, wantGroup: NonCriticalDaemonPods},
		{name: "v1beta1 key Equal disrupting", d: beta, spec: corev1.PodSpec{Tolerations: []corev1.Toleration{tol("karpenter.sh/disruption", "Equal", "disrupting", corev1.TaintEffectNoSchedule)}}, daemon: true, wantStays: "tolerates karpenter.sh/disruption=disrupting:NoSchedule"},
		{name: "v1beta1 key Equal wrong value", d: beta, spec: corev1.PodSpec{Tolerations: []corev1.Toleration{tol("karpenter.sh/disruption", "Equal", "true", corev1.TaintEffectNoSchedule)}}, daemon: true, wantGroup: NonCriticalDaemonPods},
		{name: "cordon era leaves DaemonSet pods", d: alpha, spec: corev1.PodSpec{Tolerations: dsTolerations}, daemon: true, wantStays: "tolerates node.kubernetes.io/unschedulable:NoSchedule"},
		{name: "cordon era evicts other pods", d: alpha, spec: corev1.PodSpec{}, wantGroup: NonCriticalPods},
		{name: "static pod", d: v1, spec: corev1.PodSpec{}, static: true, wantStays: "static pod: the kubelet owns it, it cannot be evicted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			group, stays := GroupOf(&tt.spec, tt.daemon, tt.static, tt.d)
			if group != tt.wantGroup || stays != tt.wantStays {
				t.Errorf("GroupOf() = %v, %q; want %v, %q", group, stays, tt.wantGroup, tt.wantStays)
			}
		})
	}
}

// ---- drain of a NodePool ----

func drainWorkload(kind, ns, name string, spec corev1.PodSpec) *cluster.Workload {
	w := &cluster.Workload{
		Object:       &cluster.Object{APIVersion: "apps/v1", Kind: kind, Namespace: ns, Name: name, Origin: cluster.Origin{File: "w.yaml", Line: 1}},
		TemplatePath: "spec.template",
		Replicas:     1,
	}
	if kind == "DaemonSet" {
		w.Replicas = -1
	}
	w.Template.Namespace = ns
	w.Template.Spec = spec
	if len(w.Template.Spec.Containers) == 0 {
		w.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "app:1"}}
	}
	return w
}

func ebsPlugin(tolerations ...corev1.Toleration) *cluster.Workload {
	w := drainWorkload("DaemonSet", "kube-system", "ebs-csi-node", corev1.PodSpec{
		PriorityClassName: "system-node-critical",
		Tolerations:       tolerations,
		Containers: []corev1.Container{
			{Name: "ebs-plugin", Image: "public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.35.0"},
			{Name: "node-driver-registrar", Image: "public.ecr.aws/eks-distro/kubernetes-csi/node-driver-registrar:v2.12.0"},
		},
		Volumes: []corev1.Volume{{Name: "plugin-dir", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/kubelet/plugins/ebs.csi.aws.com/"}}}},
	})
	w.Component, w.NodeCritical = "ebs-csi-node", "CSI node plugin: it unmounts and detaches volumes when pods leave the node"
	return w
}

func pvcVolume(claim string) corev1.Volume {
	return corev1.Volume{Name: claim, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}
}

func drainModel(version string, ws ...*cluster.Workload) *cluster.Model {
	np := &cluster.NodePool{
		Object:       &cluster.Object{APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: "default", Origin: cluster.Origin{File: "np.yaml", Line: 1}},
		Name:         "default",
		APIVersion:   "karpenter.sh/v1",
		NodeClassRef: cluster.NodeClassRef{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"},
		Requirements: []cluster.NodeSelectorRequirement{{NodeSelectorRequirement: corev1.NodeSelectorRequirement{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}},
	}
	nc := &cluster.NodeClass{
		Object: &cluster.Object{APIVersion: "karpenter.k8s.aws/v1", Kind: "EC2NodeClass", Name: "default"},
		Name:   "default", APIVersion: "karpenter.k8s.aws/v1", Role: "KarpenterNodeRole",
		AMISelectorTerms: []map[string]any{{"alias": "al2023@latest"}},
	}
	gp3 := &cluster.Object{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass", Name: "gp3", Content: map[string]any{"provisioner": "ebs.csi.aws.com"}}
	efs := &cluster.Object{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass", Name: "efs", Content: map[string]any{"provisioner": "efs.csi.aws.com"}}
	pvc := &cluster.Object{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: "default", Name: "data", Content: map[string]any{"spec": map[string]any{"storageClassName": "gp3"}}}
	shared := &cluster.Object{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: "default", Name: "shared", Content: map[string]any{"spec": map[string]any{"storageClassName": "efs"}}}
	return &cluster.Model{
		Objects:     []*cluster.Object{gp3, efs, pvc, shared},
		Workloads:   ws,
		NodePools:   []*cluster.NodePool{np},
		NodeClasses: []*cluster.NodeClass{nc},
		Karpenter:   cluster.Karpenter{Version: version, VersionFrom: "test"},
	}
}

type drainEntry struct {
	Ref   string
	Group EvictionGroup
	Stays string
}

func entries(ps []PodDrain) []drainEntry {
	var out []drainEntry
	for _, p := range ps {
		out = append(out, drainEntry{Ref: p.Ref().String(), Group: p.Group, Stays: p.Stays})
	}
	return out
}

func TestDrainNodePoolOrder(t *testing.T) {
	t.Parallel()
	plugin := ebsPlugin(tol("", "Exists", "", corev1.TaintEffectNoExecute))
	cni := drainWorkload("DaemonSet", "kube-system", "aws-node", corev1.PodSpec{PriorityClassName: "system-node-critical", Tolerations: []corev1.Toleration{tol("", "Exists", "", "")}})
	logs := drainWorkload("DaemonSet", "logging", "fluent-bit", corev1.PodSpec{})
	api := drainWorkload("Deployment", "default", "api", corev1.PodSpec{})
	dns := drainWorkload("Deployment", "kube-system", "coredns", corev1.PodSpec{PriorityClassName: "system-cluster-critical"})
	db := drainWorkload("Deployment", "default", "db", corev1.PodSpec{Volumes: []corev1.Volume{pvcVolume("data")}})
	scaled := drainWorkload("Deployment", "default", "idle", corev1.PodSpec{})
	scaled.Replicas = 0
	m := drainModel("1.2.0", plugin, cni, logs, api, dns, db, scaled)
	d := New(m).DrainNodePool(m.NodePools[0])

	got := entries(d.Evicted())
	want := []drainEntry{
		{Ref: "Deployment/default/api", Group: NonCriticalPods},
		{Ref: "Deployment/default/db", Group: NonCriticalPods},
		{Ref: "DaemonSet/logging/fluent-bit", Group: NonCriticalDaemonPods},
		{Ref: "Deployment/kube-system/coredns", Group: CriticalPods},
		{Ref: "DaemonSet/kube-system/ebs-csi-node", Group: CriticalDaemonPods},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("evicted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]drainEntry{{Ref: "DaemonSet/kube-system/aws-node", Stays: "tolerates karpenter.sh/disrupted:NoSchedule"}}, entries(d.Stays)); diff != "" {
		t.Errorf("stays (-want +got):\n%s", diff)
	}
	if len(d.Volumes) != 1 {
		t.Fatalf("volume risks = %d, want 1 (db on the EBS plugin)", len(d.Volumes))
	}
	v := d.Volumes[0]
	if v.User.Ref().String() != "Deployment/default/db" || v.Plugin.Workload != plugin || v.Driver != "ebs.csi.aws.com" || v.When != PluginAfter || v.Assumed {
		t.Errorf("volume risk = %s on %s (%s) when %v assumed %v; want Deployment/default/db on ebs-csi-node (ebs.csi.aws.com) after, not assumed",
			v.User.Ref(), v.Plugin.Ref(), v.Driver, v.When, v.Assumed)
	}
}

func TestDrainVolumeTiming(t *testing.T) {
	t.Parallel()
	db := func(spec corev1.PodSpec) *cluster.Workload {
		spec.Volumes = append(spec.Volumes, pvcVolume("data"))
		return drainWorkload("Deployment", "default", "db", spec)
	}
	noEffect := tol("", "Exists", "", corev1.TaintEffectNoExecute)
	tests := []struct {
		name    string
		version string
		plugin  *cluster.Workload
		user    *cluster.Workload
		want    VolumeTiming
		risks   int
	}{
		{name: "plugin after the pods that use the volumes", version: "1.2.0", plugin: ebsPlugin(noEffect), user: db(corev1.PodSpec{}), want: PluginAfter, risks: 1},
		{name: "next group before pods terminate (v1.0.x)", version: "1.0.5", plugin: ebsPlugin(noEffect), user: db(corev1.PodSpec{}), want: PluginWhileTerminating, risks: 1},
		{name: "plugin without priority class leaves before critical users", version: "1.2.0", plugin: func() *cluster.Workload {
			w := ebsPlugin(noEffect)
			w.Template.Spec.PriorityClassName = ""
			return w
		}(), user: db(corev1.PodSpec{PriorityClassName: "system-cluster-critical"}), want: PluginFirst, risks: 1},
		{name: "critical DaemonSet user leaves together with the plugin", version: "1.2.0", plugin: ebsPlugin(noEffect), user: func() *cluster.Workload {
			w := db(corev1.PodSpec{PriorityClassName: "system-node-critical"})
			w.Object.Kind = "DaemonSet"
			return w
		}(), want: PluginTogether, risks: 1},
		{name: "tolerating plugin is no risk", version: "1.2.0", plugin: ebsPlugin(tol("karpenter.sh/disrupted", "Exists", "", corev1.TaintEffectNoSchedule)), user: db(corev1.PodSpec{}), risks: 0},
		{name: "claims of another driver", version: "1.2.0", plugin: ebsPlugin(noEffect), user: drainWorkload("Deployment", "default", "web", corev1.PodSpec{Volumes: []corev1.Volume{pvcVolume("shared")}}), risks: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := drainModel(tt.version, tt.plugin, tt.user)
			d := New(m).DrainNodePool(m.NodePools[0])
			if len(d.Volumes) != tt.risks {
				t.Fatalf("volume risks = %d, want %d", len(d.Volumes), tt.risks)
			}
			if tt.risks > 0 && d.Volumes[0].When != tt.want {
				t.Errorf("timing = %v, want %v", d.Volumes[0].When, tt.want)
			}
		})
	}
}

func TestClaims(t *testing.T) {
	t.Parallel()
	gp2 := "gp2"
	m := drainModel("1.2.0")
	m.Objects = append(m.Objects,
		&cluster.Object{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass", Name: "gp2", Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}, Content: map[string]any{"provisioner": "kubernetes.io/aws-ebs"}},
		&cluster.Object{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: "default", Name: "bound", Annotations: map[string]string{"volume.kubernetes.io/storage-provisioner": "efs.csi.aws.com"}, Content: map[string]any{}},
	)
	sts := &cluster.Object{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: "default", Name: "pg", Content: map[string]any{"spec": map[string]any{"volumeClaimTemplates": []any{
		map[string]any{"metadata": map[string]any{"name": "data"}, "spec": map[string]any{"storageClassName": "gp3"}},
		map[string]any{"metadata": map[string]any{"name": "wal"}},
	}}}}
	spec := corev1.PodSpec{Volumes: []corev1.Volume{
		pvcVolume("data"),
		pvcVolume("bound"),
		pvcVolume("missing"),
		{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: &gp2}}}}},
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}}
	got := New(m).claims("default", &spec, &cluster.Workload{Object: sts})
	want := []Claim{
		{Name: "data", Driver: "ebs.csi.aws.com", From: "StorageClass gp3"},
		{Name: "bound", Driver: "efs.csi.aws.com", From: "PersistentVolumeClaim bound"},
		{Name: "missing"},
		{Name: "scratch (ephemeral)", Driver: "ebs.csi.aws.com", From: "StorageClass gp2"},
		{Name: "data", Driver: "ebs.csi.aws.com", From: "StorageClass gp3"},
		{Name: "wal", Driver: "ebs.csi.aws.com", From: "default StorageClass gp2"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
}

func TestPluginDriver(t *testing.T) {
	t.Parallel()
	efs := drainWorkload("DaemonSet", "kube-system", "efs-csi-node", corev1.PodSpec{Volumes: []corev1.Volume{
		{Name: "registration", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/kubelet/plugins_registry/"}}},
		{Name: "plugin", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/kubelet/plugins/efs.csi.aws.com/"}}},
	}})
	efs.Component, efs.NodeCritical = "efs-csi-node", "CSI node plugin"
	windows := drainWorkload("DaemonSet", "kube-system", "ebs-csi-node-windows", corev1.PodSpec{})
	windows.Component, windows.NodeCritical = "ebs-csi-node-windows", "CSI node plugin"
	cni := drainWorkload("DaemonSet", "kube-system", "aws-node", corev1.PodSpec{})
	cni.Component, cni.NodeCritical = "aws-node", "CNI agent"
	s := New(&cluster.Model{})
	tests := []struct {
		w    *cluster.Workload
		want string
	}{
		{w: efs, want: "efs.csi.aws.com"},
		{w: windows, want: "ebs.csi.aws.com"},
		{w: ebsPlugin(), want: "ebs.csi.aws.com"},
		{w: cni, want: ""},
	}
	for _, tt := range tests {
		if got := s.PluginDriver(tt.w); got != tt.want {
			t.Errorf("PluginDriver(%s) = %q, want %q", tt.w.Ref(), got, tt.want)
		}
	}
}

func TestDrainLiveNode(t *testing.T) {
	t.Parallel()
	pod := func(name, owner string, spec corev1.PodSpec, annotations map[string]string) *cluster.Pod {
		o := &cluster.Object{APIVersion: "v1", Kind: "Pod", Namespace: "default", Name: name, Annotations: annotations, Content: map[string]any{}}
		if owner != "" {
			o.Content["metadata"] = map[string]any{"ownerReferences": []any{map[string]any{"kind": owner, "name": "x", "controller": true}}}
		}
		spec.NodeName = "ip-10-0-0-1"
		return &cluster.Pod{Object: o, Spec: spec}
	}
	done := pod("done", "Job", corev1.PodSpec{}, nil)
	done.Status.Phase = corev1.PodSucceeded
	other := pod("elsewhere", "", corev1.PodSpec{}, nil)
	other.Spec.NodeName = "ip-10-0-0-2"
	m := &cluster.Model{
		Karpenter: cluster.Karpenter{Version: "1.2.0"},
		Pods: []*cluster.Pod{
			pod("web", "ReplicaSet", corev1.PodSpec{}, nil),
			pod("ebs-csi-node-abc", "DaemonSet", corev1.PodSpec{PriorityClassName: "system-node-critical"}, nil),
			pod("kube-proxy-mirror", "Node", corev1.PodSpec{}, map[string]string{corev1.MirrorPodAnnotationKey: "x"}),
			done, other,
		},
	}
	d := New(m).DrainNode(&cluster.Node{Name: "ip-10-0-0-1"})
	got := append(entries(d.Evicted()), entries(d.Stays)...)
	want := []drainEntry{
		{Ref: "Pod/default/web", Group: NonCriticalPods},
		{Ref: "Pod/default/ebs-csi-node-abc", Group: CriticalDaemonPods},
		{Ref: "Pod/default/kube-proxy-mirror", Stays: "static pod: the kubelet owns it, it cannot be evicted"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("live drain (-want +got):\n%s", diff)
	}
}
