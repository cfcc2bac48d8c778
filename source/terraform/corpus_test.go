package terraform

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/shared"
)

// corpusDir is shared/corpus beside the repository: the reference
// configurations, kept where they are (its SOURCES.md names their origins).
var corpusDir, _ = shared.Find("corpus")

// corpusDirs lists every directory of the test corpus that holds .tf files.
func corpusDirs(t *testing.T) []string {
	t.Helper()
	shared.Dir(t, "corpus")
	set := map[string]bool{}
	err := filepath.WalkDir(corpusDir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".tf") {
			set[filepath.Dir(p)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sortedKeys(set)
}

// TestLoadCorpus does not run in parallel with other tests: each Load is
// timed against a budget.
func TestLoadCorpus(t *testing.T) {
	dirs := corpusDirs(t)
	if len(dirs) < 25 {
		t.Fatalf("got %d corpus directories, want at least 25", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(strings.TrimPrefix(dir, corpusDir+"/"), func(t *testing.T) {
			start := time.Now()
			m, err := Load(dir, Options{})
			if err != nil {
				t.Fatalf("Load(%s): got error %v, want none", dir, err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Load(%s) took %s, want under 2s", dir, d)
			}
			var unresolved []string
			for _, p := range m.Problems {
				if !p.Unresolved {
					t.Errorf("Load(%s): got problem %s: %s, want none", dir, p.Origin, p.Message)
				}
				if !assumedRepositoryModule(t, dir, p.Message) {
					unresolved = append(unresolved, p.Message)
				}
			}
			if want := corpusUnresolved[strings.TrimPrefix(dir, corpusDir+"/")]; !cmp.Equal(unresolved, want) {
				t.Errorf("Load(%s): what could not be evaluated: got %q, want %q", dir, unresolved, want)
			}
			if !m.Cluster.Defined {
				t.Errorf("Load(%s): got no cluster, want one", dir)
			}
			if m.Terraform == nil || len(m.Terraform.Nodes) == 0 {
				t.Errorf("Load(%s): got no dependency graph", dir)
			}
		})
	}
}

// corpusUnresolved is what eksdoctor cannot evaluate in the reference
// configurations, by directory: each is said as an info finding.
var corpusUnresolved = map[string][]string{
	// Two clusters in one root: the settings of the second are not analysed.
	"terraform-aws-eks/examples/eks-managed-node-group": {"module.eks_bottlerocket.aws_eks_cluster.this[0] defines a second EKS cluster in the same configuration; its settings (authentication mode, version) are not analysed, only those of module.eks_al2023, though the node groups and objects of both are"},
	// The per-zone profiles are keyed by a data source.
	"terraform-aws-eks/@v19.21.0/examples/fargate_profile": {"module.eks.fargate_profiles is only partly known statically; the profiles whose names or selectors are not known are analysed as unknown"},
}

// assumedRepositoryModule recognises what an example of the module's own
// repository says of its source = "../..", which the corpus does not hold:
// terraform-aws-eks, assumed from its inputs.
func assumedRepositoryModule(t *testing.T, dir, msg string) bool {
	t.Helper()
	const said = ") is not in the inputs; its inputs are those of terraform-aws-modules/eks, which is assumed"
	if !strings.HasSuffix(msg, said) {
		return false
	}
	src := msg[strings.Index(msg, "(")+1 : len(msg)-len(said)]
	if src != "../.." && src != "../../" {
		t.Errorf("%s: module source %q assumed to be terraform-aws-eks", dir, src)
	}
	return true
}

func loadCorpus(t *testing.T, rel string) *cluster.Model {
	t.Helper()
	shared.Dir(t, "corpus")
	m, err := Load(filepath.Join(corpusDir, rel), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var unresolved []string
	for _, p := range m.Problems {
		if !p.Unresolved {
			t.Errorf("%s: got problem %s: %s, want none", rel, p.Origin, p.Message)
		}
		if !assumedRepositoryModule(t, filepath.Join(corpusDir, rel), p.Message) {
			unresolved = append(unresolved, p.Message)
		}
	}
	if want := corpusUnresolved[rel]; !cmp.Equal(unresolved, want) {
		t.Errorf("%s: what could not be evaluated: got %q, want %q", rel, unresolved, want)
	}
	return m
}

// ngView is what the scheduling checks read from a node group.
type ngView struct {
	Name          string
	Managed       bool
	Labels        map[string]string
	Taints        []corev1.Taint
	InstanceTypes []string
	AMIType       string
	Min, Max, Des int
	NodeRole      string
}

func nodeGroups(m *cluster.Model) map[string]ngView {
	out := map[string]ngView{}
	for _, ng := range m.NodeGroups {
		out[ng.Name] = ngView{ng.Name, ng.Managed, ng.Labels, ng.Taints, ng.InstanceTypes, ng.AMIType, ng.MinSize, ng.MaxSize, ng.DesiredSize, ng.NodeRole}
	}
	return out
}

func object(t *testing.T, m *cluster.Model, kind, name string) *cluster.Object {
	t.Helper()
	for _, o := range m.Objects {
		if o.Kind == kind && o.Name == name {
			return o
		}
	}
	t.Fatalf("got no %s %s among %d objects", kind, name, len(m.Objects))
	return nil
}

func roleByRef(t *testing.T, m *cluster.Model, ref string) *cluster.IAMRole {
	t.Helper()
	for _, r := range m.Identity.Roles {
		for _, x := range r.Refs {
			if x == ref {
				return r
			}
		}
	}
	t.Fatalf("got no role denoted by %s", ref)
	return nil
}

func release(t *testing.T, m *cluster.Model, addr string) *cluster.HelmRelease {
	t.Helper()
	for _, r := range m.HelmReleases {
		if r.Address == addr {
			return r
		}
	}
	t.Fatalf("got no helm release %s", addr)
	return nil
}

func names[T any](list []T, name func(T) string) []string {
	var out []string
	for _, x := range list {
		out = append(out, name(x))
	}
	sort.Strings(out)
	return out
}

func TestCorpusV19Karpenter(t *testing.T) {
	t.Parallel()
	m := loadCorpus(t, "terraform-aws-eks/@v19.21.0/examples/karpenter")
	type fp struct {
		Name       string
		Namespaces []string
		Role       string
	}
	var got []fp
	for _, p := range m.FargateProfiles {
		var ns []string
		for _, s := range p.Selectors {
			ns = append(ns, s.Namespace)
		}
		got = append(got, fp{p.Name, ns, p.PodExecutionRole})
	}
	want := []fp{
		{"karpenter", []string{"karpenter"}, `${module.eks.fargate_profiles["karpenter"].fargate_profile_pod_execution_role_arn}`},
		{"kube-system", []string{"kube-system"}, `${module.eks.fargate_profiles["kube-system"].fargate_profile_pod_execution_role_arn}`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Fargate profiles: got %v, want %v (-want +got):\n%s", got, want, diff)
	}
	if m.Identity.AuthMode != cluster.AuthConfigMap || !m.Identity.AuthModeDefaulted {
		t.Errorf("auth mode: got %q defaulted=%v, want CONFIG_MAP defaulted", m.Identity.AuthMode, m.Identity.AuthModeDefaulted)
	}
	if m.Cluster.ModuleVersion != "19" || m.Cluster.Name != "ex-karpenter" || m.Cluster.KubernetesVersion != "1.27" {
		t.Errorf("cluster: got %+v, want ex-karpenter 1.27 module v19", m.Cluster)
	}
	aa := m.Identity.AwsAuth
	if aa == nil || aa.Managed != "user" || !aa.Complete {
		t.Fatalf("aws-auth: got %+v, want one managed by the module, complete", aa)
	}
	var mapped *cluster.RoleMapping
	for i, r := range aa.Roles {
		if r.RoleARN == "${module.karpenter.role_arn}" {
			mapped = &aa.Roles[i]
		}
	}
	if mapped == nil {
		t.Fatalf("aws-auth roles: got %v, want ${module.karpenter.role_arn}", aa.Roles)
	}
	if mapped.Username != "system:node:{{EC2PrivateDNSName}}" || mapped.Origin.Line != 122 {
		t.Errorf("karpenter mapping: got %+v, want node username at main.tf:122", mapped)
	}
	if got := roleByRef(t, m, "module.karpenter.role_arn").Kind; got != cluster.RoleNode {
		t.Errorf("module.karpenter.role_arn: got %s, want node role (v19 output)", got)
	}
	if got := roleByRef(t, m, "module.karpenter.irsa_arn").Kind; got != cluster.RoleController {
		t.Errorf("module.karpenter.irsa_arn: got %s, want controller role", got)
	}
	// The module adds the Fargate pod execution roles to aws-auth itself.
	if got, want := len(aa.Roles), 3; got != want {
		t.Errorf("aws-auth roles: got %d, want %d (2 Fargate profiles + aws_auth_roles)", got, want)
	}
	nc := object(t, m, "EC2NodeClass", "default")
	if got := nc.String("spec.role"); got != "${module.karpenter.role_name}" {
		t.Errorf("EC2NodeClass role: got %q, want ${module.karpenter.role_name}", got)
	}
	if m.Karpenter.NodeRole != "${module.karpenter.role_arn}" || m.Karpenter.ControllerRole != "${module.karpenter.irsa_arn}" || m.Karpenter.Namespace != "karpenter" {
		t.Errorf("Karpenter: got %+v, want v19 roles in namespace karpenter", m.Karpenter)
	}
	rel := release(t, m, "helm_release.karpenter")
	if got := cluster.Lookup(rel.Values, "settings.interruptionQueueName"); got != "${module.karpenter.queue_name}" {
		t.Errorf("values settings.interruptionQueueName: got %v", got)
	}
}

func TestCorpusV20Karpenter(t *testing.T) {
	t.Parallel()
	m := loadCorpus(t, "terraform-aws-eks/@v20.24.0/examples/karpenter")
	got := nodeGroups(m)
	want := map[string]ngView{"karpenter": {
		Name: "karpenter", Managed: true,
		Taints:        []corev1.Taint{{Key: "CriticalAddonsOnly", Value: "true", Effect: corev1.TaintEffectNoSchedule}},
		InstanceTypes: []string{"m5.large"}, AMIType: "AL2023_x86_64_STANDARD", Min: 2, Max: 3, Des: 2,
		NodeRole: `${module.eks.eks_managed_node_groups["karpenter"].iam_role_arn}`,
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("node groups (-want +got):\n%s", diff)
	}
	rel := release(t, m, "helm_release.karpenter")
	if rel.Namespace != "kube-system" || rel.Version != "1.0.0" || rel.Wait == nil || *rel.Wait {
		t.Errorf("karpenter release: got namespace %q version %q wait %v, want kube-system 1.0.0 false", rel.Namespace, rel.Version, rel.Wait)
	}
	wantValues := map[string]any{
		"serviceAccount": map[string]any{"name": "${module.karpenter.service_account}"},
		"settings": map[string]any{
			"clusterName":       "${module.eks.cluster_name}",
			"clusterEndpoint":   "${module.eks.cluster_endpoint}",
			"interruptionQueue": "${module.karpenter.queue_name}",
		},
	}
	if diff := cmp.Diff(wantValues, rel.Values); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if o := rel.ValueOrigins["settings.interruptionQueue"]; o.Line != 170 || !strings.HasSuffix(o.File, "main.tf") {
		t.Errorf("settings.interruptionQueue origin: got %s, want main.tf:170", o)
	}
	nc := object(t, m, "EC2NodeClass", "default")
	if got := nc.String("spec.role"); got != "${module.karpenter.node_iam_role_name}" {
		t.Errorf("EC2NodeClass role: got %q, want ${module.karpenter.node_iam_role_name}", got)
	}
	if nc.Origin.Line != 177 || nc.At("spec.role").Line != 183 || nc.Via != "kubectl_manifest.karpenter_node_class" || nc.Manager != "terraform" {
		t.Errorf("EC2NodeClass: got origin %s, role at %s, via %q, manager %q; want main.tf:177, :183, kubectl_manifest.karpenter_node_class, terraform", nc.Origin, nc.At("spec.role"), nc.Via, nc.Manager)
	}
	np := object(t, m, "NodePool", "default")
	if np.Origin.Line != 201 {
		t.Errorf("NodePool origin: got %s, want main.tf:201", np.Origin)
	}
	g := m.Terraform
	if got, want := g.Path("kubectl_manifest.karpenter_node_pool", "helm_release.karpenter"), []string{"kubectl_manifest.karpenter_node_pool", "kubectl_manifest.karpenter_node_class", "helm_release.karpenter"}; !cmp.Equal(got, want) {
		t.Errorf("depends_on chain: got %v, want %v", got, want)
	}
	if !g.DependsOn("helm_release.karpenter", "module.karpenter") || !g.DependsOn("helm_release.karpenter", "module.eks") {
		t.Errorf("helm_release.karpenter: got edges %v, want module.eks and module.karpenter", g.Edges("helm_release.karpenter"))
	}
	if got := g.Nodes["kubectl_manifest.karpenter_node_pool"].Attrs["wait"]; got != nil {
		t.Errorf("NodePool wait: got %v, want unset", got)
	}
	if got := roleByRef(t, m, "module.karpenter.iam_role_arn").Kind; got != cluster.RoleController {
		t.Errorf("module.karpenter.iam_role_arn: got %s, want controller role (v20 output)", got)
	}
	node := roleByRef(t, m, "module.karpenter.node_iam_role_name")
	if node.Kind != cluster.RoleNode || !node.NamePrefix || node.Name != "Karpenter-${module.eks.cluster_name}-" {
		t.Errorf("node role: got %+v, want node role Karpenter-<cluster> with a name prefix", node)
	}
	if m.Identity.AuthMode != cluster.AuthAPIAndConfigMap || !m.Identity.AuthModeDefaulted {
		t.Errorf("auth mode: got %q defaulted=%v, want API_AND_CONFIG_MAP defaulted", m.Identity.AuthMode, m.Identity.AuthModeDefaulted)
	}
	wantSA := []cluster.ServiceAccountIdentity{{Namespace: "kube-system", Name: "karpenter", RoleARN: "${module.karpenter.iam_role_arn}", Mechanism: "pod-identity"}}
	if diff := cmp.Diff(wantSA, m.Identity.ServiceAccounts, cmpIgnoreOrigins); diff != "" {
		t.Errorf("service accounts (-want +got):\n%s", diff)
	}
	if m.Karpenter.Version != "1.0.0" || m.Karpenter.Namespace != "kube-system" || m.Karpenter.Release != rel {
		t.Errorf("Karpenter: got version %q namespace %q, want 1.0.0 kube-system with the release", m.Karpenter.Version, m.Karpenter.Namespace)
	}
}

var cmpIgnoreOrigins = cmp.FilterPath(func(p cmp.Path) bool {
	return strings.HasSuffix(p.String(), "Origin")
}, cmp.Ignore())

func TestCorpusCurrentKarpenter(t *testing.T) {
	t.Parallel()
	m := loadCorpus(t, "terraform-aws-eks/examples/karpenter")
	ng := nodeGroups(m)["karpenter"]
	if diff := cmp.Diff(map[string]string{"karpenter.sh/controller": "true"}, ng.Labels); diff != "" || len(ng.Taints) != 0 {
		t.Errorf("karpenter node group: got labels %v taints %v, want the controller label and no taint", ng.Labels, ng.Taints)
	}
	node := roleByRef(t, m, "module.karpenter.node_iam_role_name")
	if node.NamePrefix || node.Name != "ex-karpenter" {
		t.Errorf("node role: got name %q prefix %v, want ex-karpenter without prefix", node.Name, node.NamePrefix)
	}
	var entry *cluster.AccessEntry
	for i, e := range m.Identity.AccessEntries {
		if e.Address == "module.karpenter.aws_eks_access_entry.node[0]" {
			entry = &m.Identity.AccessEntries[i]
		}
	}
	if entry == nil || entry.Type != cluster.AccessEC2Linux || !entry.Implicit || entry.PrincipalARN != "${module.karpenter.node_iam_role_arn}" {
		t.Errorf("karpenter access entry: got %+v, want implicit EC2_LINUX for the node role", entry)
	}
	var before []string
	for _, a := range m.Addons {
		if a.BeforeCompute {
			before = append(before, a.Name)
		}
	}
	if want := []string{"eks-pod-identity-agent", "vpc-cni"}; !cmp.Equal(before, want) {
		t.Errorf("before_compute add-ons: got %v, want %v", before, want)
	}
	if m.Cluster.ModuleVersion != "21" || m.Cluster.KubernetesVersion != "1.33" {
		t.Errorf("cluster: got %+v, want module v21, Kubernetes 1.33", m.Cluster)
	}
	rel := release(t, m, "helm_release.karpenter")
	if got := cluster.Lookup(rel.Values, "nodeSelector"); !cmp.Equal(got, map[string]any{"karpenter.sh/controller": "true"}) {
		t.Errorf("nodeSelector: got %v", got)
	}
	if len(m.Objects) != 0 {
		t.Errorf("objects: got %d, want none (NodePools are applied out of band)", len(m.Objects))
	}
}

func TestCorpusBlueprintsKarpenterMNG(t *testing.T) {
	t.Parallel()
	m := loadCorpus(t, "terraform-aws-eks-blueprints/patterns/karpenter-mng")
	ng := nodeGroups(m)["karpenter"]
	want := []corev1.Taint{{Key: "karpenter.sh/controller", Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	if diff := cmp.Diff(want, ng.Taints); diff != "" {
		t.Errorf("taints (-want +got):\n%s", diff)
	}
	var coredns *cluster.Addon
	for _, a := range m.Addons {
		if a.Name == "coredns" {
			coredns = a
		}
	}
	if coredns == nil {
		t.Fatal("got no coredns add-on")
	}
	wantCV := map[string]any{"tolerations": []any{map[string]any{"key": "karpenter.sh/controller", "value": "true", "effect": "NoSchedule"}}}
	if diff := cmp.Diff(wantCV, coredns.ConfigurationValues); diff != "" {
		t.Errorf("coredns configuration_values (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(coredns.ConfigurationRaw, "jsonencode(") {
		t.Errorf("coredns ConfigurationRaw: got %q, want the HCL as written", coredns.ConfigurationRaw)
	}
	if m.Cluster.ModuleVersion != "~> 20.24" {
		t.Errorf("module version: got %q, want ~> 20.24", m.Cluster.ModuleVersion)
	}
	if m.Karpenter.Namespace != "karpenter" || m.Karpenter.Address != "module.karpenter" {
		t.Errorf("Karpenter: got namespace %q address %q, want karpenter module.karpenter", m.Karpenter.Namespace, m.Karpenter.Address)
	}
	var sa []string
	for _, s := range m.Identity.ServiceAccounts {
		sa = append(sa, s.Namespace+"/"+s.Name+" "+s.Mechanism)
	}
	if want := []string{"karpenter/karpenter pod-identity"}; !cmp.Equal(sa, want) {
		t.Errorf("service accounts: got %v, want %v", sa, want)
	}
}

func TestCorpusKarpenterBlueprints(t *testing.T) {
	t.Parallel()
	m := loadCorpus(t, "karpenter-blueprints/cluster/terraform")
	np := object(t, m, "NodePool", "default")
	if np.APIVersion != "karpenter.sh/v1" {
		t.Errorf("NodePool apiVersion: got %q, want karpenter.sh/v1", np.APIVersion)
	}
	wantKubelet := map[string]any{"containerRuntime": "containerd", "systemReserved": map[string]any{"cpu": "100m", "memory": "100Mi"}}
	if diff := cmp.Diff(wantKubelet, np.Get("spec.template.spec.kubelet")); diff != "" {
		t.Errorf("spec.template.spec.kubelet (-want +got):\n%s", diff)
	}
	if got := np.At("spec.template.spec.kubelet"); got.Line != 115 || !strings.HasSuffix(got.File, "karpenter.tf") {
		t.Errorf("kubelet origin: got %s, want karpenter.tf:115", got)
	}
	nc := object(t, m, "EC2NodeClass", "default")
	if got := nc.String("spec.role"); got != "${module.karpenter.node_iam_role_name}" {
		t.Errorf("EC2NodeClass role: got %q", got)
	}
	if m.Cluster.ModuleVersion != "~> 21.6" || m.Karpenter.Namespace != "karpenter" {
		t.Errorf("got module version %q, Karpenter namespace %q; want ~> 21.6, karpenter", m.Cluster.ModuleVersion, m.Karpenter.Namespace)
	}
	ng := nodeGroups(m)["mng"]
	if len(ng.InstanceTypes) != 8 || ng.Labels["karpenter.sh/controller"] != "true" {
		t.Errorf("mng: got %+v, want 8 instance types and the controller label", ng)
	}
}

func TestCorpusV20Fargate(t *testing.T) {
	t.Parallel()
	m := loadCorpus(t, "terraform-aws-eks/@v20.8.5/examples/karpenter")
	ctrl := roleByRef(t, m, "module.karpenter.iam_role_arn")
	if !cmp.Equal(ctrl.Trust, []string{"${module.eks.oidc_provider_arn}", "pods.eks.amazonaws.com"}) || ctrl.Kind != cluster.RoleController {
		t.Errorf("controller role: got trust %v kind %s, want IRSA and Pod Identity trust", ctrl.Trust, ctrl.Kind)
	}
	var sa []string
	for _, s := range m.Identity.ServiceAccounts {
		sa = append(sa, s.Namespace+"/"+s.Name+" "+s.Mechanism)
	}
	if want := []string{"karpenter/karpenter irsa"}; !cmp.Equal(sa, want) {
		t.Errorf("service accounts: got %v, want %v", sa, want)
	}
	rel := release(t, m, "helm_release.karpenter")
	tol := cluster.Lookup(rel.Values, "tolerations.0")
	want := map[string]any{"key": "eks.amazonaws.com/compute-type", "operator": "Equal", "value": "fargate", "effect": "NoSchedule"}
	if diff := cmp.Diff(want, tol); diff != "" {
		t.Errorf("toleration (-want +got):\n%s", diff)
	}
	if got := names(m.FargateProfiles, func(p *cluster.FargateProfile) string { return p.Name }); !cmp.Equal(got, []string{"karpenter", "kube-system"}) {
		t.Errorf("Fargate profiles: got %v", got)
	}
	// With access entries, EKS authorizes Fargate pod execution roles by itself.
	var fargate []string
	for _, e := range m.Identity.AccessEntries {
		if e.Type == cluster.AccessFargateLinux && e.Implicit {
			fargate = append(fargate, e.PrincipalARN)
		}
	}
	if len(fargate) != 2 {
		t.Errorf("implicit FARGATE_LINUX entries: got %v, want 2", fargate)
	}
}

func TestCorpusNodeGroupTests(t *testing.T) {
	t.Parallel()
	m := loadCorpus(t, "terraform-aws-eks/tests/eks-managed-node-group")
	ngs := nodeGroups(m)
	br := ngs["bottlerocket_custom"]
	wantTaints := []corev1.Taint{
		{Key: "dedicated", Value: "experimental", Effect: corev1.TaintEffectPreferNoSchedule},
		{Key: "special", Value: "true", Effect: corev1.TaintEffectNoSchedule},
	}
	if diff := cmp.Diff(wantTaints, br.Taints); diff != "" {
		t.Errorf("Bottlerocket user data taints (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"label1": "foo", "label2": "bar"}, br.Labels); diff != "" {
		t.Errorf("Bottlerocket user data labels (-want +got):\n%s", diff)
	}
	if got := ngs["separate-eks-mng"]; got.NodeRole != "${module.eks_managed_node_group.iam_role_arn}" || got.Labels["label1"] != "foo" {
		t.Errorf("separate node group: got %+v", got)
	}
	if got := ngs["complete-eks-mng"]; !cmp.Equal(got.InstanceTypes, []string{"m6i.large", "m5.large", "m5n.large", "m5zn.large"}) || got.Max != 7 {
		t.Errorf("complete node group: got %+v", got)
	}
	if len(ngs) != 10 {
		t.Errorf("node groups: got %d %v, want 10 (disabled modules create none)", len(ngs), names(m.NodeGroups, func(n *cluster.NodeGroup) string { return n.Name }))
	}
	var entries []string
	for _, e := range m.Identity.AccessEntries {
		if !e.Implicit {
			entries = append(entries, e.Address+" "+e.EffectiveType())
		}
	}
	want := []string{
		`module.eks.aws_eks_access_entry.this["cluster_creator"] STANDARD`,
		`module.eks.aws_eks_access_entry.this["ex-multiple"] STANDARD`,
		`module.eks.aws_eks_access_entry.this["ex-single"] STANDARD`,
		`module.eks.aws_eks_access_entry.this["no-policy"] STANDARD`,
	}
	if diff := cmp.Diff(want, entries); diff != "" {
		t.Errorf("access entries (-want +got):\n%s", diff)
	}
	// aws_iam_role.this has a for_each over a known set: two instances.
	var roles []string
	for _, r := range m.Identity.Roles {
		if strings.HasPrefix(r.Address, "aws_iam_role.this") {
			roles = append(roles, r.Address+" "+r.Name+" "+r.Kind.String())
		}
	}
	if want := []string{`aws_iam_role.this["multiple"] ex-multiple node role`, `aws_iam_role.this["single"] ex-single node role`}; !cmp.Equal(roles, want) {
		t.Errorf("roles: got %v, want %v", roles, want)
	}
}

func TestCorpusSelfManagedTests(t *testing.T) {
	t.Parallel()
	m := loadCorpus(t, "terraform-aws-eks/tests/self-managed-node-group")
	ngs := nodeGroups(m)
	tests := []struct {
		name string
		want ngView
	}{
		{name: "mixed", want: ngView{Name: "mixed", Labels: map[string]string{"node.kubernetes.io/lifecycle": "spot"}, InstanceTypes: []string{"m5.large", "m6i.large"}, Min: 1, Max: 5, Des: 2, NodeRole: `${module.eks.self_managed_node_groups["mixed"].iam_role_arn}`}},
		{name: "efa", want: ngView{Name: "efa", Labels: map[string]string{"nvidia.com/gpu.present": "true", "vpc.amazonaws.com/efa.present": "true"}, Taints: []corev1.Taint{{Key: "nvidia.com/gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}}, InstanceTypes: []string{"p4d.24xlarge"}, AMIType: "AL2023_x86_64_NVIDIA", Min: 0, Max: 1, Des: 0, NodeRole: `${module.eks.self_managed_node_groups["efa"].iam_role_arn}`}},
		{name: "instance-attributes", want: ngView{Name: "instance-attributes", Min: 1, Max: 2, Des: 1, NodeRole: `${module.eks.self_managed_node_groups["instance_attributes"].iam_role_arn}`}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, ngs[tt.name]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	var implicit int
	for _, e := range m.Identity.AccessEntries {
		if e.Implicit && e.Type == cluster.AccessEC2Linux {
			implicit++
		}
	}
	if implicit != 6 {
		t.Errorf("implicit EC2_LINUX access entries for self-managed groups: got %d, want 6", implicit)
	}
}

func TestCorpusBottlerocketPattern(t *testing.T) {
	t.Parallel()
	m := loadCorpus(t, "terraform-aws-eks-blueprints/patterns/bottlerocket")
	if m.Identity.AuthMode != cluster.AuthAPI || m.Identity.AuthModeDefaulted {
		t.Errorf("auth mode: got %q defaulted=%v, want API as written", m.Identity.AuthMode, m.Identity.AuthModeDefaulted)
	}
	ng := nodeGroups(m)["bottlerocket"]
	if diff := cmp.Diff([]corev1.Taint{{Key: "CriticalAddonsOnly", Value: "true", Effect: corev1.TaintEffectNoSchedule}}, ng.Taints); diff != "" {
		t.Errorf("Bottlerocket taints (-want +got):\n%s", diff)
	}
	rel := release(t, m, "helm_release.karpenter_resources")
	if want := filepath.Join(corpusDir, "terraform-aws-eks-blueprints/patterns/bottlerocket/karpenter-resources"); rel.ChartDir != want {
		t.Errorf("ChartDir: got %q, want %q", rel.ChartDir, want)
	}
	if got := cluster.Lookup(rel.Values, "ec2nodeclass.role"); got != `${split("/", module.eks_blueprints_addons.karpenter.node_iam_role_arn)[1]}` {
		t.Errorf("ec2nodeclass.role: got %v", got)
	}
	if got := rel.ValueOrigins["nodepool.zone"]; got.Line != 88 {
		t.Errorf("set_list origin: got %s, want addons.tf:88", got)
	}
	var raw *cluster.AccessEntry
	for i, e := range m.Identity.AccessEntries {
		if e.Address == "aws_eks_access_entry.karpenter" {
			raw = &m.Identity.AccessEntries[i]
		}
	}
	if raw == nil || raw.Type != cluster.AccessEC2Linux || raw.PrincipalARN != "${module.eks_blueprints_addons.karpenter.node_iam_role_arn}" {
		t.Errorf("raw access entry: got %+v", raw)
	}
}

// The v19 fargate_profile example merges a known profile with one per
// availability zone, keyed by a data source: the known profile keeps its
// selectors and the per-zone ones keep theirs under unknown names, instead of
// the whole map being dropped.
func TestCorpusV19FargateProfilesMerge(t *testing.T) {
	t.Parallel()
	m := loadCorpus(t, "terraform-aws-eks/@v19.21.0/examples/fargate_profile")
	type profile struct {
		Name      string
		Selectors []string
		Unknown   []string
	}
	var got []profile
	for _, fp := range m.FargateProfiles {
		p := profile{Name: fp.Name, Unknown: fp.Unknown}
		for _, s := range fp.Selectors {
			p.Selectors = append(p.Selectors, s.Namespace+" "+labelText(s.Labels))
		}
		got = append(got, p)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Name < got[j].Name })
	key := `kube-system-${element(split("-", local.azs[i]), 2)}`
	want := []profile{
		{Name: "example", Selectors: []string{"backend Application=backend", "app-* Application=app-wildcard"}},
		{Name: key + "[0]", Selectors: []string{"kube-system "}},
		{Name: key + "[1]", Selectors: []string{"kube-system "}},
		{Name: key + "[2]", Selectors: []string{"kube-system "}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Fargate profiles (-want +got):\n%s", diff)
	}
	// loadCorpus checks that the partly known map is said (corpusUnresolved).
}

// A merge() part that is not known at all stands for profiles whose selectors
// are unknown, so placement on Fargate is unknown rather than refused.
func TestFargateProfilesMergeUnknownPart(t *testing.T) {
	t.Parallel()
	m, unresolved := loadSrcUnresolved(t, `
variable "extra_profiles" {
  type = any
}

module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "~> 20.0"

  cluster_name = "demo"

  fargate_profiles = merge(
    { karpenter = { selectors = [{ namespace = "karpenter" }] } },
    var.extra_profiles,
  )
}
`)
	var names []string
	unknown := map[string][]string{}
	for _, fp := range m.FargateProfiles {
		names = append(names, fp.Name)
		unknown[fp.Name] = fp.Unknown
	}
	sort.Strings(names)
	if want := []string{"${var.extra_profiles}", "karpenter"}; !cmp.Equal(names, want) {
		t.Fatalf("profiles: got %v, want %v", names, want)
	}
	if got := unknown["${var.extra_profiles}"]; !cmp.Equal(got, []string{"selectors"}) {
		t.Errorf("unknown part: got Unknown %v, want [selectors]", got)
	}
	if want := []string{"module.eks.fargate_profiles is only partly known statically; the profiles whose names or selectors are not known are analysed as unknown"}; !cmp.Equal(unresolved, want) {
		t.Errorf("unresolved: got %q, want %q", unresolved, want)
	}
	if got := unknown["karpenter"]; len(got) != 0 {
		t.Errorf("known profile: got Unknown %v, want none", got)
	}
}

func labelText(m map[string]string) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
