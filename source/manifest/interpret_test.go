package manifest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/shared"
)

func interpret(t *testing.T, file string, data string) *cluster.Model {
	t.Helper()
	objs, probs := Decode(file, []byte(data))
	m := &cluster.Model{Objects: objs, Problems: probs}
	InterpretClusterConfigs(m)
	Interpret(m)
	return m
}

func TestInterpretWorkloadKinds(t *testing.T) {
	t.Parallel()
	data := `apiVersion: v1
kind: Pod
metadata: {name: p, labels: {app: p}}
spec:
  containers: [{name: c, image: x}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: web}
spec:
  replicas: 3
  template:
    metadata: {labels: {app: d}}
    spec:
      nodeSelector: {team: a}
      containers: [{name: c, image: x}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds, namespace: kube-system}
spec:
  template:
    spec:
      containers: [{name: c, image: x}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: cj}
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          tolerations: [{operator: Exists}]
          containers: [{name: c, image: x}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: ss}
spec:
  template:
    spec:
      containers: [{name: c, image: x}]
`
	m := interpret(t, "w.yaml", data)
	if len(m.Problems) > 0 {
		t.Fatalf("problems: %+v", m.Problems)
	}
	type got struct {
		Ref          string
		Namespace    string
		TemplatePath string
		Replicas     int32
	}
	var gs []got
	for _, w := range m.Workloads {
		gs = append(gs, got{w.Ref().String(), w.Template.Namespace, w.TemplatePath, w.Replicas})
	}
	want := []got{
		{"CronJob/cj", "default", "spec.jobTemplate.spec.template", 1},
		{"DaemonSet/kube-system/ds", "kube-system", "spec.template", -1},
		{"Deployment/web/d", "web", "spec.template", 3},
		{"Pod/p", "default", "", 1},
		{"StatefulSet/ss", "default", "spec.template", 1},
	}
	if diff := cmp.Diff(want, gs); diff != "" {
		t.Errorf("workloads (-want +got):\n%s", diff)
	}
	if m.Workloads[0].Template.Spec.Tolerations[0].Operator != corev1.TolerationOpExists {
		t.Errorf("CronJob tolerations not decoded: %+v", m.Workloads[0].Template.Spec.Tolerations)
	}
	if m.Workloads[2].Template.Spec.NodeSelector["team"] != "a" {
		t.Errorf("Deployment nodeSelector not decoded")
	}
}

func TestInterpretBadTemplateIsAProblem(t *testing.T) {
	t.Parallel()
	m := interpret(t, "bad.yaml", `apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      containers: "not a list"
`)
	if len(m.Workloads) != 0 || len(m.Problems) != 1 {
		t.Fatalf("workloads=%d problems=%+v", len(m.Workloads), m.Problems)
	}
	if p := m.Problems[0]; p.Origin.Line != 1 || p.Object.Name != "d" {
		t.Errorf("problem = %+v, want at bad.yaml:1 on Deployment/d", p)
	}
}

func TestInterpretKarpenterObjects(t *testing.T) {
	t.Parallel()
	m := interpret(t, "k.yaml", `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    metadata:
      labels: {team: a}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
      startupTaints: [{key: node.cilium.io/agent-not-ready, value: "true", effect: NoExecute}]
      requirements:
      - {key: karpenter.k8s.aws/instance-category, operator: In, values: [c, m], minValues: 2}
  limits: {cpu: 1000, memory: 1000Gi}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{alias: al2023@latest}]
`)
	if len(m.Problems) > 0 {
		t.Fatalf("problems: %+v", m.Problems)
	}
	np := m.NodePools[0]
	if np.Labels["team"] != "a" || len(np.Taints) != 1 || len(np.StartupTaints) != 1 || np.NodeClassRef.Name != "default" {
		t.Errorf("nodepool = %+v", np)
	}
	if r := np.Requirements[0]; r.Key != "karpenter.k8s.aws/instance-category" || r.MinValues == nil || *r.MinValues != 2 {
		t.Errorf("requirement = %+v", r)
	}
	if c := np.Limits.Cpu().String(); c != "1k" {
		t.Errorf("cpu limit = %s", c)
	}
	nc := m.NodeClasses[0]
	if nc.Role != "KarpenterNodeRole-demo" || len(nc.AMISelectorTerms) != 1 {
		t.Errorf("nodeclass = %+v", nc)
	}
	if m.Karpenter.Version != "1" || m.Karpenter.VersionFrom == "" {
		t.Errorf("Karpenter version = %q from %q, want 1 from the NodePool apiVersion", m.Karpenter.Version, m.Karpenter.VersionFrom)
	}
}

func TestInterpretEksctl(t *testing.T) {
	t.Parallel()
	// The eksctl ClusterConfig of Karpenter's getting-started guide.
	data, err := os.ReadFile(filepath.Join(shared.Dir(t, "corpus"), "karpenter-provider-aws", "extracted-eksctl", "step02-create-cluster.eksctl.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := interpret(t, "cluster.yaml", string(data))
	if len(m.Problems) > 0 {
		t.Fatalf("problems: %+v", m.Problems)
	}
	if len(m.NodeGroups) != 1 {
		t.Fatalf("node groups = %d", len(m.NodeGroups))
	}
	ng := m.NodeGroups[0]
	if !ng.Managed || ng.InstanceTypes[0] != "m5.large" || ng.MinSize != 1 || ng.MaxSize != 10 || ng.DesiredSize != 2 {
		t.Errorf("node group = %+v", ng)
	}
	if m.Identity.AwsAuth == nil || len(m.Identity.AwsAuth.Roles) != 1 {
		t.Fatalf("aws-auth = %+v", m.Identity.AwsAuth)
	}
	want := cluster.RoleMapping{
		RoleARN:  "arn:${AWS_PARTITION}:iam::${AWS_ACCOUNT_ID}:role/KarpenterNodeRole-${CLUSTER_NAME}",
		Username: "system:node:{{EC2PrivateDNSName}}",
		Groups:   []string{"system:bootstrappers", "system:nodes"},
	}
	got := m.Identity.AwsAuth.Roles[0]
	got.Origin = cluster.Origin{}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mapping (-want +got):\n%s", diff)
	}
	if m.Identity.AuthMode != cluster.AuthAPIAndConfigMap || !m.Identity.AuthModeDefaulted {
		t.Errorf("auth mode = %q defaulted=%v", m.Identity.AuthMode, m.Identity.AuthModeDefaulted)
	}
	if len(m.Addons) != 1 || m.Addons[0].Name != "eks-pod-identity-agent" {
		t.Errorf("addons = %+v", m.Addons)
	}
	if sa := m.Identity.ServiceAccounts; len(sa) != 1 || sa[0].Mechanism != "pod-identity" || sa[0].Name != "karpenter" {
		t.Errorf("service accounts = %+v", sa)
	}
}

func TestInterpretEksctlTaintForms(t *testing.T) {
	t.Parallel()
	m := interpret(t, "c.yaml", `apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: c, region: us-east-1}
managedNodeGroups:
- name: listform
  taints: [{key: a, value: "1", effect: NoSchedule}]
nodeGroups:
- name: mapform
  taints: {b: "2:NoExecute", c: ":PreferNoSchedule"}
fargateProfiles:
- name: fp
  selectors: [{namespace: karpenter, labels: {app: x}}]
`)
	if len(m.Problems) > 0 {
		t.Fatalf("problems: %+v", m.Problems)
	}
	want := [][]corev1.Taint{
		{{Key: "a", Value: "1", Effect: corev1.TaintEffectNoSchedule}},
		{{Key: "b", Value: "2", Effect: corev1.TaintEffectNoExecute}, {Key: "c", Effect: corev1.TaintEffectPreferNoSchedule}},
	}
	for i, ng := range m.NodeGroups {
		if diff := cmp.Diff(want[i], ng.Taints); diff != "" {
			t.Errorf("%s taints (-want +got):\n%s", ng.Name, diff)
		}
	}
	if m.NodeGroups[1].Managed {
		t.Errorf("nodeGroups entries are self-managed")
	}
	fp := m.FargateProfiles[0]
	if fp.Name != "fp" || fp.Selectors[0].Namespace != "karpenter" || fp.Selectors[0].Labels["app"] != "x" {
		t.Errorf("profile = %+v", fp)
	}
	if d := fp.Decl; d.Kind != cluster.DeclEksctl || d.List != "fargateProfiles" || d.Index != 0 || d.Object == nil || d.Object.Kind != "ClusterConfig" {
		t.Errorf("profile declaration = %+v, want item 0 of the ClusterConfig's fargateProfiles", d)
	}
}

func TestRecognizeComponents(t *testing.T) {
	t.Parallel()
	m := interpret(t, "c.yaml", `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ebs-csi-node, namespace: kube-system}
spec:
  template:
    spec:
      containers:
      - {name: ebs-plugin, image: public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.35.0}
      - {name: node-driver-registrar, image: public.ecr.aws/eks-distro/kubernetes-csi/node-driver-registrar:v2.11.1}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: my-cni, namespace: kube-system}
spec:
  template:
    spec:
      containers: [{name: agent, image: example/agent:1}]
      volumes: [{name: cni, hostPath: {path: /etc/cni/net.d}}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: log-shipper, namespace: kube-system}
spec:
  template:
    spec:
      containers: [{name: fluent, image: fluent/fluent-bit:3}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: karpenter, namespace: kube-system}
spec:
  template:
    spec:
      containers: [{name: controller, image: public.ecr.aws/karpenter/controller:1.0.8@sha256:abc}]
`)
	got := map[string][2]string{}
	for _, w := range m.Workloads {
		got[w.Object.Name] = [2]string{w.Component, w.NodeCritical}
	}
	if c := got["ebs-csi-node"]; c[0] != "ebs-csi-node" || c[1] == "" {
		t.Errorf("ebs-csi-node = %v", c)
	}
	if c := got["my-cni"]; c[0] != "cni:my-cni" || c[1] == "" {
		t.Errorf("my-cni = %v", c)
	}
	if c := got["log-shipper"]; c[0] != "" || c[1] != "" {
		t.Errorf("log-shipper = %v, want no component", c)
	}
	if c := got["karpenter"]; c[0] != "karpenter" {
		t.Errorf("karpenter = %v", c)
	}
	if m.Karpenter.Version != "1.0.8" || m.Karpenter.Controller == nil || m.Karpenter.Namespace != "kube-system" {
		t.Errorf("karpenter install = %+v", m.Karpenter)
	}
	var ctrl *cluster.Workload
	for _, w := range m.Workloads {
		if w.Component == "karpenter" {
			ctrl = w
		}
	}
	if ctrl.Bootstrap == "" {
		t.Errorf("the Karpenter controller must be needed in the bootstrap phase")
	}
}

// The volume Karpenter sizes ephemeral storage by: the rootVolume mapping, else
// the AMI family's device (Bottlerocket's data volume), else the default; and
// eksctl's 80 GiB default or volumeSize.
func TestInterpretDiskSizes(t *testing.T) {
	t.Parallel()
	m := interpret(t, "k.yaml", `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: root}
spec:
  role: r
  amiSelectorTerms: [{alias: al2023@latest}]
  blockDeviceMappings:
  - {deviceName: /dev/xvdb, ebs: {volumeSize: 50Gi}}
  - {deviceName: /dev/xvdc, rootVolume: true, ebs: {volumeSize: 300Gi}}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: bottlerocket}
spec:
  role: r
  amiSelectorTerms: [{alias: bottlerocket@latest}]
  instanceStorePolicy: RAID0
  blockDeviceMappings:
  - {deviceName: /dev/xvda, ebs: {volumeSize: 4Gi}}
  - {deviceName: /dev/xvdb, ebs: {volumeSize: 100Gi}}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: other-device}
spec:
  role: r
  amiSelectorTerms: [{alias: al2023@latest}]
  blockDeviceMappings:
  - {deviceName: /dev/xvdz, ebs: {volumeSize: 500Gi}}
---
apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: demo, region: eu-west-1}
managedNodeGroups:
- {name: default}
- {name: big, volumeSize: 200}
`)
	got := map[string]int64{}
	for _, nc := range m.NodeClasses {
		got[nc.Name] = nc.DiskBytes
	}
	for _, ng := range m.NodeGroups {
		got[ng.Name] = ng.DiskBytes
	}
	want := map[string]int64{"root": 300 << 30, "bottlerocket": 100 << 30, "other-device": 0, "default": 80 << 30, "big": 200 << 30}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("disks (-want +got):\n%s", diff)
	}
	for _, nc := range m.NodeClasses {
		if nc.InstanceStoreRAID0 != (nc.Name == "bottlerocket") {
			t.Errorf("%s: RAID0 %v", nc.Name, nc.InstanceStoreRAID0)
		}
	}
}

// A NodePool rendered from values not known before apply (a Terraform template)
// is read with those fields unknown, never as invalid.
func TestInterpretNodePoolWithUnknownValues(t *testing.T) {
	t.Parallel()
	m := interpret(t, "k.yaml", `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    metadata:
      labels: {team: "${var.team}"}
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      taints: "${var.taints}"
      requirements:
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: "${var.families}"}
      - {key: kubernetes.io/arch, operator: In, values: [amd64]}
`)
	if len(m.Problems) > 0 {
		t.Fatalf("problems: %+v", m.Problems)
	}
	np := m.NodePools[0]
	if want := []string{"labels", "taints", "requirements"}; !cmp.Equal(np.Unknown, want) {
		t.Errorf("Unknown = %v, want %v", np.Unknown, want)
	}
	if len(np.Requirements) != 1 || np.Requirements[0].Key != "kubernetes.io/arch" {
		t.Errorf("requirements = %+v, want the known one", np.Requirements)
	}
}

// eksctl's autoModeConfig switches EKS Auto Mode on as eksctl sends it: the
// three settings together, both built-in NodePools when nodePools is not
// written (none when it is empty), bootstrapSelfManagedAddons false, and no
// default add-ons.
func TestInterpretEksctlAutoMode(t *testing.T) {
	t.Parallel()
	m := interpret(t, "c.yaml", "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: auto, region: eu-west-1}\nautoModeConfig:\n  enabled: true\n")
	a := m.Cluster.AutoMode
	if a == nil || a.Compute != cluster.SwitchOn || a.BlockStorage != cluster.SwitchOn || a.LoadBalancing != cluster.SwitchOn || a.BootstrapAddons != cluster.SwitchOff {
		t.Fatalf("auto mode %+v", a)
	}
	if !cmp.Equal(a.NodePools, []string{"general-purpose", "system"}) || a.NodePoolsSet || a.NodeRole == "" || a.NodePoolsAt.Kind != cluster.DeclEksctl {
		t.Errorf("built-in NodePools %v (set %v), role %q, written at %+v", a.NodePools, a.NodePoolsSet, a.NodeRole, a.NodePoolsAt)
	}
	if m.Cluster.NoDefaultAddons == "" {
		t.Error("eksctl installs no default add-ons with Auto Mode")
	}
	m = interpret(t, "c.yaml", "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: auto, region: eu-west-1}\nautoModeConfig:\n  enabled: true\n  nodePools: []\n  nodeRoleARN: arn:aws:iam::111122223333:role/auto\n")
	if a := m.Cluster.AutoMode; len(a.NodePools) != 0 || !a.NodePoolsSet || a.NodeRole != "arn:aws:iam::111122223333:role/auto" {
		t.Errorf("no built-in NodePools: %+v", a)
	}
}

// A pod template with values not known before apply where a list or a number
// belongs (a Terraform variable) decodes without them, marked, not invalid.
func TestInterpretPodTemplateWithUnknownValues(t *testing.T) {
	t.Parallel()
	m := interpret(t, "d.yaml", `apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: default}
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      tolerations: "${var.extra_tolerations}"
      priority: "${var.priority}"
      containers: [{name: api, image: nginx}]
`)
	if len(m.Problems) > 0 || len(m.Workloads) != 1 {
		t.Fatalf("problems %+v, workloads %d", m.Problems, len(m.Workloads))
	}
	if u := m.Workloads[0].Object.Unknown; !strings.Contains(u, "spec.template.spec.priority") || !strings.Contains(u, "spec.template.spec.tolerations") {
		t.Errorf("Unknown = %q, want the unknown fields named", u)
	}
}

// Fields placement never reads do not make a pod template uncertain: a pod
// security context set from a variable leaves the workload's scheduling known.
func TestUnknownValuesOutsideSchedulingAreIgnored(t *testing.T) {
	t.Parallel()
	m := interpret(t, "d.yaml", `apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: default}
spec:
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      securityContext: {fsGroup: "${var.mount_owner}"}
      containers: [{name: api, image: nginx, securityContext: {privileged: true, capabilities: {drop: [ALL]}}}]
`)
	if len(m.Problems) > 0 || len(m.Workloads) != 1 {
		t.Fatalf("problems %+v, workloads %d", m.Problems, len(m.Workloads))
	}
	w := m.Workloads[0]
	if u := w.Object.Unknown; u != "" {
		t.Errorf("Unknown = %q, want none: the pod security context does not decide where pods run", u)
	}
	sc := w.Template.Spec.Containers[0].SecurityContext
	if sc == nil || sc.Privileged == nil || !*sc.Privileged || sc.Capabilities != nil {
		t.Errorf("container security context %+v, want privileged kept and nothing else", sc)
	}
}

// Of a container's command line only the flags checks read are kept (the
// Karpenter controller's --cluster-name), as for a running cluster's pods.
func TestCommandLineKeepsCheckedFlags(t *testing.T) {
	t.Parallel()
	m := interpret(t, "k.yaml", `apiVersion: apps/v1
kind: Deployment
metadata: {name: karpenter, namespace: kube-system}
spec:
  selector: {matchLabels: {app: karpenter}}
  template:
    metadata: {labels: {app: karpenter}}
    spec:
      containers:
      - name: controller
        image: public.ecr.aws/karpenter/controller:1.1.0
        command: [/ko-app/controller, --cluster-name, prod]
        args: [--log-level=debug, --cluster-name=prod]
        env:
        - {name: KUBERNETES_MIN_VERSION, value: "1.19.0-0"}
        - name: SYSTEM_NAMESPACE
          valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
        - name: CLUSTER_NAME
          valueFrom: {configMapKeyRef: {name: cluster, key: name}}
`)
	if len(m.Workloads) != 1 {
		t.Fatalf("workloads %d, problems %+v", len(m.Workloads), m.Problems)
	}
	c := m.Workloads[0].Template.Spec.Containers[0]
	if !slices.Equal(c.Command, []string{"--cluster-name"}) || !slices.Equal(c.Args, []string{"--cluster-name"}) {
		t.Errorf("command %q, args %q; want only --cluster-name in each", c.Command, c.Args)
	}
	// Of the environment, only what checks read is kept, from a reference too.
	if len(c.Env) != 1 || c.Env[0].Name != "CLUSTER_NAME" || c.Env[0].ValueFrom == nil || c.Env[0].ValueFrom.ConfigMapKeyRef == nil {
		t.Errorf("env %+v; want only CLUSTER_NAME, from its config map", c.Env)
	}
}

// eksctl's karpenter section is a Helm release with the values eksctl
// generates (settings.aws before chart 0.33), its node role mapped in aws-auth
// by eksctl, and the instance profile that holds it.
func TestEksctlKarpenterSection(t *testing.T) {
	t.Parallel()
	cfg := func(version, profile string) string {
		return `apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: demo, region: us-east-1}
iam: {withOIDC: true}
karpenter:
  version: "` + version + `"
  createServiceAccount: true
` + profile
	}
	for _, tc := range []struct {
		version, profile, settingsKey, wantProfile string
	}{
		{"v0.29.2", "", "settings.aws.defaultInstanceProfile", "eksctl-KarpenterNodeInstanceProfile-demo"},
		{"0.37.0", "  defaultInstanceProfile: Mine\n", "settings.defaultInstanceProfile", "Mine"},
	} {
		m := interpret(t, "cluster.yaml", cfg(tc.version, tc.profile))
		if len(m.HelmReleases) != 1 {
			t.Fatalf("%s: %d releases, want the one eksctl installs", tc.version, len(m.HelmReleases))
		}
		r := m.HelmReleases[0]
		if r.Name != "karpenter" || r.Namespace != "karpenter" || r.Version != strings.TrimPrefix(tc.version, "v") || r.InstalledBy == "" || r.Wait == nil || !*r.Wait {
			t.Errorf("%s: release %+v", tc.version, r)
		}
		if got := cluster.Lookup(r.Values, tc.settingsKey); got != tc.wantProfile {
			t.Errorf("%s: %s = %v, want %s", tc.version, tc.settingsKey, got, tc.wantProfile)
		}
		if got := cluster.Lookup(r.Values, "serviceAccount.create"); got != true {
			t.Errorf("%s: serviceAccount.create = %v", tc.version, got)
		}
		if !slices.Contains(r.Preset, tc.settingsKey) {
			t.Errorf("%s: %s is eksctl's, not the user's: Preset %v", tc.version, tc.settingsKey, r.Preset)
		}
		var node *cluster.IAMRole
		for _, role := range m.Identity.Roles {
			if role.Kind == cluster.RoleNode {
				node = role
			}
		}
		if node == nil || node.Name != "eksctl-KarpenterNodeRole-demo" || node.MappedAsNode == "" || !slices.Contains(node.Refs, tc.wantProfile) {
			t.Errorf("%s: node role %+v", tc.version, node)
		}
	}
	if m := interpret(t, "cluster.yaml", "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: demo, region: us-east-1}\n"); len(m.HelmReleases) != 0 {
		t.Errorf("no karpenter section, yet releases %+v", m.HelmReleases)
	}
}

// eksctl installs the NVIDIA device plugin for NVIDIA groups of the
// AmazonLinux families with a toleration for their taints (the first value of
// each key, nodeGroups before managedNodeGroups), the Neuron plugin for
// Inferentia groups and the EFA plugin for efaEnabled groups.
func TestInterpretEksctlDevicePlugins(t *testing.T) {
	t.Parallel()
	m := interpret(t, "c.yaml", `apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: c, region: us-east-1}
managedNodeGroups:
- name: managed-gpu
  instanceType: g5.xlarge
  taints: [{key: team, value: m, effect: NoSchedule}, {key: nvidia.com/gpu, value: "true", effect: NoSchedule}, {key: extra, value: x, effect: NoExecute}]
- name: rocket-gpu
  instanceType: g5.xlarge
  amiFamily: Bottlerocket
  taints: [{key: rocket, value: "1", effect: NoSchedule}]
- name: cpu
  instanceType: m5.large
  efaEnabled: true
nodeGroups:
- name: old-gpu
  instanceType: p2.xlarge
  taints: {team: "u:NoSchedule"}
- name: inf
  instancesDistribution: {instanceTypes: [m5.large, inf2.xlarge]}
`)
	if len(m.DevicePlugins) != 3 {
		t.Fatalf("%d device plugins, want NVIDIA, Neuron and EFA", len(m.DevicePlugins))
	}
	nv, neuron, efa := m.DevicePlugins[0], m.DevicePlugins[1], m.DevicePlugins[2]
	wantTols := []corev1.Toleration{
		{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: "team", Value: "u"},
		{Key: "extra", Value: "x"},
	}
	if diff := cmp.Diff(wantTols, nv.Tolerations); diff != "" {
		t.Errorf("NVIDIA plugin tolerations (-want +got):\n%s", diff)
	}
	names := func(p *cluster.DevicePlugin) []string {
		var out []string
		for _, g := range p.Groups {
			out = append(out, g.Name)
		}
		return out
	}
	for _, c := range []struct {
		p    *cluster.DevicePlugin
		res  corev1.ResourceName
		want []string
	}{{nv, "nvidia.com/gpu", []string{"old-gpu", "managed-gpu"}}, {neuron, "aws.amazon.com/neuron", []string{"inf"}}, {efa, "vpc.amazonaws.com/efa", []string{"cpu"}}} {
		if diff := cmp.Diff(c.want, names(c.p)); diff != "" {
			t.Errorf("%s groups (-want +got):\n%s", c.p.Name, diff)
		}
		if !slices.Contains(c.p.Resources, c.res) {
			t.Errorf("%s advertises %v, want %s", c.p.Name, c.p.Resources, c.res)
		}
	}
	if nv.EarlierBefore != "0.101.0" || len(neuron.Earlier) != 0 {
		t.Errorf("only the NVIDIA plugin's tolerations depend on the eksctl version: %q %v", nv.EarlierBefore, neuron.Earlier)
	}
}
