package terraform

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
)

const rawMain = `variable "cluster_name" {
  default = "demo"
}

locals {
  node_labels = { role = "system" }
  addons_ns   = module.addons.ns
}

resource "aws_eks_cluster" "this" {
  name    = var.cluster_name
  version = "1.31"
  access_config {
    authentication_mode = "API"
  }
}

resource "aws_iam_role" "node" {
  name = "${var.cluster_name}-node"
  path = "/nodes/"
  assume_role_policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Action = "sts:AssumeRole", Effect = "Allow", Principal = { Service = "ec2.amazonaws.com" } }]
  })
}

data "aws_iam_policy_document" "fargate" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["eks-fargate-pods.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "fargate" {
  name_prefix        = "fargate-"
  assume_role_policy = data.aws_iam_policy_document.fargate.json
}

resource "aws_iam_role" "controller" {
  name = "karpenter-controller"
  assume_role_policy = jsonencode({
    Statement = [{ Effect = "Allow", Action = "sts:AssumeRoleWithWebIdentity", Principal = { Federated = aws_iam_openid_connect_provider.eks.arn } }]
  })
}

resource "aws_iam_instance_profile" "node" {
  name = "node-profile"
  role = aws_iam_role.node.name
}

resource "aws_eks_node_group" "system" {
  cluster_name    = aws_eks_cluster.this.name
  node_group_name = "system"
  node_role_arn   = aws_iam_role.node.arn
  instance_types  = ["m6i.large"]
  labels          = local.node_labels
  scaling_config {
    min_size     = 1
    max_size     = 3
    desired_size = 2
  }
  taint {
    key    = "CriticalAddonsOnly"
    value  = "true"
    effect = "NO_SCHEDULE"
  }
  dynamic "taint" {
    for_each = { gpu = "nvidia.com/gpu" }
    content {
      key    = taint.value
      effect = "NO_EXECUTE"
    }
  }
}

resource "aws_eks_fargate_profile" "karpenter" {
  cluster_name           = aws_eks_cluster.this.name
  fargate_profile_name   = "karpenter"
  pod_execution_role_arn = aws_iam_role.fargate.arn
  selector {
    namespace = "karpenter"
    labels    = { app = "karpenter" }
  }
}

resource "aws_eks_addon" "coredns" {
  cluster_name         = aws_eks_cluster.this.name
  addon_name           = "coredns"
  addon_version        = "v1.11.1-eksbuild.9"
  configuration_values = jsonencode({ tolerations = [{ key = "CriticalAddonsOnly", operator = "Exists" }] })
}

resource "aws_eks_access_entry" "node" {
  cluster_name  = aws_eks_cluster.this.name
  principal_arn = aws_iam_role.node.arn
  type          = "EC2_LINUX"
}

resource "aws_eks_access_entry" "admin" {
  cluster_name      = aws_eks_cluster.this.name
  principal_arn     = "arn:aws:iam::111122223333:role/admin"
  kubernetes_groups = ["system:masters"]
}

resource "aws_eks_pod_identity_association" "karpenter" {
  namespace       = "karpenter"
  service_account = "karpenter"
  role_arn        = aws_iam_role.controller.arn
}

resource "helm_release" "karpenter" {
  name    = "karpenter"
  namespace = "karpenter"
  chart   = "oci://public.ecr.aws/karpenter/karpenter"
  version = "1.0.8"
  values = [
    file("${path.module}/values/karpenter.yaml"),
    yamlencode({
      settings = { clusterName = aws_eks_cluster.this.name }
      replicas = 1
    }),
  ]
  set {
    name  = "nodeSelector.karpenter\\.sh/controller"
    value = "true"
    type  = "string"
  }
  set_list {
    name  = "extraArgs"
    value = ["a", "b"]
  }
  depends_on = [aws_eks_fargate_profile.karpenter]
}

resource "helm_release" "cilium" {
  name       = "cilium"
  chart      = "cilium"
  repository = "https://helm.cilium.io"
  set = [
    { name = "operator.replicas", value = "1" },
    { name = "tolerations[0].operator", value = "Exists" },
  ]
}

resource "kubectl_manifest" "nodepool" {
  yaml_body  = templatefile("${path.module}/nodepool.yaml.tpl", { role = aws_iam_role.node.name })
  wait       = true
  depends_on = [helm_release.karpenter]
}

data "kubectl_file_documents" "docs" {
  content = file("${path.module}/manifests.yaml")
}

resource "kubectl_manifest" "docs" {
  for_each   = data.kubectl_file_documents.docs.manifests
  yaml_body  = each.value
  apply_only = true
}

resource "kubernetes_manifest" "ec2nodeclass" {
  manifest = {
    apiVersion = "karpenter.k8s.aws/v1"
    kind       = "EC2NodeClass"
    metadata   = { name = "default" }
    spec = {
      role             = aws_iam_role.node.name
      amiSelectorTerms = [{ alias = "al2023@latest" }]
    }
  }
}

resource "kubernetes_manifest" "team" {
  manifest = yamldecode(<<-EOT
    apiVersion: v1
    kind: Namespace
    metadata:
      name: team-a
    EOT
  )
}

resource "kubernetes_config_map_v1_data" "aws_auth" {
  metadata {
    name      = "aws-auth"
    namespace = "kube-system"
  }
  force = true
  data = {
    mapRoles = yamlencode([
      { rolearn = aws_iam_role.node.arn, username = "system:node:{{EC2PrivateDNSName}}", groups = ["system:bootstrappers", "system:nodes"] },
    ])
  }
}

module "addons" {
  source       = "./modules/addons"
  cluster_name = aws_eks_cluster.this.name
  namespace    = "karpenter"
  depends_on   = [aws_eks_node_group.system]
}

resource "kubernetes_namespace" "x" {
  metadata {
    name = local.addons_ns
  }
}

resource "helm_release" "secrets" {
  name                = "secrets"
  chart               = "./charts/secrets"
  repository_password = "hunter2"
  set_sensitive {
    name  = "auth.token"
    value = "s3cr3t"
  }
}
`

var rawFiles = map[string]string{
	"main.tf":                   rawMain,
	"providers.tf":              "provider \"aws\" {}\n",
	"values/karpenter.yaml":     "settings:\n  clusterName: placeholder\n  interruptionQueue: q\nreplicas: 2\n",
	"charts/secrets/Chart.yaml": "apiVersion: v2\nname: secrets\nversion: 0.1.0\n",
	"nodepool.yaml.tpl": `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
# role: ${role}
`,
	"manifests.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: one\n---\n# second\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: two\n  namespace: one\n",
	"modules/addons/main.tf": `variable "cluster_name" {}
variable "namespace" {
  default = "x"
}
resource "helm_release" "metrics" {
  name      = "metrics-server"
  namespace = var.namespace
  chart     = "metrics-server"
  values    = [yamlencode({ args = ["--cluster=${var.cluster_name}"] })]
}
output "release" {
  value = helm_release.metrics.name
}
output "ns" {
  value = var.namespace
}
`,
}

func loadRaw(t *testing.T) (*cluster.Model, string) {
	t.Helper()
	dir := writeDir(t, rawFiles)
	m, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Problems {
		t.Errorf("got problem %s: %s, want none", p.Origin, p.Message)
	}
	return m, dir
}

func TestRawResources(t *testing.T) {
	t.Parallel()
	m, dir := loadRaw(t)
	main := filepath.Join(dir, "main.tf")

	wantCluster := cluster.EKSCluster{Name: "demo", KubernetesVersion: "1.31", Origin: cluster.Origin{File: main, Line: 10}, Address: "aws_eks_cluster.this", Defined: true}
	if diff := cmp.Diff(wantCluster, m.Cluster); diff != "" {
		t.Errorf("cluster (-want +got):\n%s", diff)
	}
	if m.Identity.AuthMode != cluster.AuthAPI || m.Identity.AuthModeDefaulted || m.Identity.AuthModeOrigin.Line != 14 {
		t.Errorf("auth mode: got %q defaulted=%v at %s, want API at main.tf:14", m.Identity.AuthMode, m.Identity.AuthModeDefaulted, m.Identity.AuthModeOrigin)
	}

	wantNG := []*cluster.NodeGroup{{
		Name: "system", Managed: true,
		Labels: map[string]string{"role": "system"},
		Taints: []corev1.Taint{
			{Key: "CriticalAddonsOnly", Value: "true", Effect: corev1.TaintEffectNoSchedule},
			{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoExecute},
		},
		InstanceTypes: []string{"m6i.large"},
		MinSize:       1, MaxSize: 3, DesiredSize: 2,
		NodeRole:  "${aws_iam_role.node.arn}",
		Origin:    cluster.Origin{File: main, Line: 54},
		Address:   "aws_eks_node_group.system",
		CreatedBy: "terraform",
	}}
	if diff := cmp.Diff(wantNG, m.NodeGroups); diff != "" {
		t.Errorf("node groups (-want +got):\n%s", diff)
	}

	wantFP := []*cluster.FargateProfile{{
		Name:             "karpenter",
		Selectors:        []cluster.FargateSelector{{Namespace: "karpenter", Labels: map[string]string{"app": "karpenter"}, Origin: cluster.Origin{File: main, Line: 83}}},
		PodExecutionRole: "${aws_iam_role.fargate.arn}",
		Origin:           cluster.Origin{File: main, Line: 79},
		Address:          "aws_eks_fargate_profile.karpenter",
		Decl:             cluster.Decl{Kind: cluster.DeclResource, Block: "aws_eks_fargate_profile.karpenter"},
	}}
	if diff := cmp.Diff(wantFP, m.FargateProfiles); diff != "" {
		t.Errorf("Fargate profiles (-want +got):\n%s", diff)
	}

	if len(m.Addons) != 1 {
		t.Fatalf("add-ons: got %d, want 1", len(m.Addons))
	}
	wantCV := map[string]any{"tolerations": []any{map[string]any{"key": "CriticalAddonsOnly", "operator": "Exists"}}}
	if a := m.Addons[0]; a.Name != "coredns" || a.Version != "v1.11.1-eksbuild.9" || !cmp.Equal(wantCV, a.ConfigurationValues) || a.ConfigurationRaw == "" {
		t.Errorf("coredns: got %+v, want version and tolerations", a)
	}

	type roleView struct {
		Address, Name, Path string
		Prefix              bool
		Kind                cluster.RoleKind
		Trust               []string
	}
	var roles []roleView
	for _, r := range m.Identity.Roles {
		roles = append(roles, roleView{r.Address, r.Name, r.Path, r.NamePrefix, r.Kind, r.Trust})
	}
	wantRoles := []roleView{
		{"aws_iam_role.controller", "karpenter-controller", "", false, cluster.RoleController, []string{"${aws_iam_openid_connect_provider.eks.arn}"}},
		{"aws_iam_role.fargate", "fargate-", "", true, cluster.RoleFargate, []string{"eks-fargate-pods.amazonaws.com"}},
		{"aws_iam_role.node", "demo-node", "/nodes/", false, cluster.RoleNode, []string{"ec2.amazonaws.com"}},
	}
	if diff := cmp.Diff(wantRoles, roles); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	node := roleByRef(t, m, "aws_iam_role.node.arn")
	if !cmp.Equal(node.Refs, []string{"aws_iam_instance_profile.node.arn", "aws_iam_instance_profile.node.id", "aws_iam_instance_profile.node.name", "aws_iam_role.node.arn", "aws_iam_role.node.id", "aws_iam_role.node.name"}) {
		t.Errorf("node role refs: got %v, want the role's and its instance profile's", node.Refs)
	}

	var entries []string
	for _, e := range m.Identity.AccessEntries {
		entries = append(entries, e.Address+" "+e.EffectiveType()+" "+e.PrincipalARN)
	}
	wantEntries := []string{
		"aws_eks_access_entry.admin STANDARD arn:aws:iam::111122223333:role/admin",
		"aws_eks_access_entry.node EC2_LINUX ${aws_iam_role.node.arn}",
		"aws_eks_fargate_profile.karpenter FARGATE_LINUX ${aws_iam_role.fargate.arn}",
		"aws_eks_node_group.system EC2_LINUX ${aws_iam_role.node.arn}",
	}
	if diff := cmp.Diff(wantEntries, entries); diff != "" {
		t.Errorf("access entries (-want +got):\n%s", diff)
	}

	aa := m.Identity.AwsAuth
	wantAA := &cluster.AwsAuth{
		Roles:    []cluster.RoleMapping{{RoleARN: "${aws_iam_role.node.arn}", Username: "system:node:{{EC2PrivateDNSName}}", Groups: []string{"system:bootstrappers", "system:nodes"}, Origin: cluster.Origin{File: main, Line: 194, Path: "mapRoles.0"}}},
		Complete: true, Managed: "user", Origin: cluster.Origin{File: main, Line: 186}, Address: "kubernetes_config_map_v1_data.aws_auth",
	}
	if diff := cmp.Diff(wantAA, aa); diff != "" {
		t.Errorf("aws-auth (-want +got):\n%s", diff)
	}
	wantSA := []cluster.ServiceAccountIdentity{{Namespace: "karpenter", Name: "karpenter", RoleARN: "${aws_iam_role.controller.arn}", Mechanism: "pod-identity", Origin: cluster.Origin{File: main, Line: 108}}}
	if diff := cmp.Diff(wantSA, m.Identity.ServiceAccounts); diff != "" {
		t.Errorf("service accounts (-want +got):\n%s", diff)
	}
}

func TestRawHelmReleases(t *testing.T) {
	t.Parallel()
	m, dir := loadRaw(t)
	main := filepath.Join(dir, "main.tf")
	k := release(t, m, "helm_release.karpenter")
	wantValues := map[string]any{
		"settings":     map[string]any{"clusterName": "${aws_eks_cluster.this.name}", "interruptionQueue": "q"},
		"replicas":     int64(1),
		"nodeSelector": map[string]any{"karpenter.sh/controller": "true"},
		"extraArgs":    []any{"a", "b"},
	}
	if diff := cmp.Diff(wantValues, k.Values); diff != "" {
		t.Errorf("merged values (-want +got):\n%s", diff)
	}
	// Keys set in values documents name themselves; keys set by set blocks name
	// the block.
	wantOrigins := map[string]cluster.Origin{
		"settings.interruptionQueue":           {File: filepath.Join(dir, "values/karpenter.yaml"), Line: 3, Path: "settings.interruptionQueue"},
		"settings.clusterName":                 {File: main, Line: 122, Path: "settings.clusterName"},
		"replicas":                             {File: main, Line: 123, Path: "replicas"},
		"nodeSelector.karpenter.sh/controller": {File: main, Line: 126, Path: "set.0"},
		"extraArgs":                            {File: main, Line: 131, Path: "set_list.0"},
	}
	for key, want := range wantOrigins {
		got := k.ValueOrigins[key]
		if got != want {
			t.Errorf("origin of %s: got %s, want %s", key, got, want)
		}
	}
	if k.Namespace != "karpenter" || k.ChartDir != "" || !cmp.Equal(k.DependsOn, []string{"aws_eks_fargate_profile.karpenter"}) {
		t.Errorf("karpenter release: got namespace %q chart dir %q depends on %v", k.Namespace, k.ChartDir, k.DependsOn)
	}
	if m.Karpenter.Release != k || m.Karpenter.Version != "1.0.8" || m.Karpenter.Namespace != "karpenter" {
		t.Errorf("Karpenter: got %+v, want the release, version 1.0.8", m.Karpenter)
	}
	c := release(t, m, "helm_release.cilium")
	wantCilium := map[string]any{"operator": map[string]any{"replicas": int64(1)}, "tolerations": []any{map[string]any{"operator": "Exists"}}}
	if diff := cmp.Diff(wantCilium, c.Values); diff != "" || c.Namespace != "default" {
		t.Errorf("cilium (provider v3 set list): got namespace %q (-want +got):\n%s", c.Namespace, diff)
	}
	if got := c.ValueOrigins["tolerations.0.operator"]; got.Line != 144 {
		t.Errorf("set origin: got %s, want main.tf:144", got)
	}
	sec := release(t, m, "helm_release.secrets")
	if got := cluster.Lookup(sec.Values, "auth.token"); got != "(sensitive)" {
		t.Errorf("set_sensitive value: got %v, want it withheld", got)
	}
	if want := filepath.Join(dir, "charts/secrets"); sec.ChartDir != want {
		t.Errorf("local chart: got ChartDir %q, want %q", sec.ChartDir, want)
	}
	if _, ok := m.Terraform.Nodes["helm_release.secrets"].Attrs["repository_password"]; ok {
		t.Error("graph attributes: got repository_password, want credentials left out")
	}
	metrics := release(t, m, "module.addons.helm_release.metrics")
	if metrics.Namespace != "karpenter" || !cmp.Equal(cluster.Lookup(metrics.Values, "args"), []any{"--cluster=${aws_eks_cluster.this.name}"}) {
		t.Errorf("module release: got namespace %q values %v", metrics.Namespace, metrics.Values)
	}
}

func TestRawObjects(t *testing.T) {
	t.Parallel()
	m, dir := loadRaw(t)
	type view struct {
		Ref     string
		File    string
		Line    int
		Via     string
		Manager string
	}
	var got []view
	for _, o := range m.Objects {
		got = append(got, view{o.Ref().String(), filepath.Base(o.Origin.File), o.Origin.Line, o.Via, o.Manager})
	}
	want := []view{
		{"Deployment/one/two", "manifests.yaml", 7, `kubectl_manifest.docs["/apis/apps/v1/namespaces/one/deployments/two"]`, "terraform"},
		{"EC2NodeClass/default", "main.tf", 165, "kubernetes_manifest.ec2nodeclass", "terraform"},
		{"Namespace/one", "manifests.yaml", 1, `kubectl_manifest.docs["/api/v1/namespaces/one"]`, "terraform"},
		{"Namespace/team-a", "main.tf", 178, "kubernetes_manifest.team", "terraform"},
		{"NodePool/default", "nodepool.yaml.tpl", 1, "kubectl_manifest.nodepool", "terraform"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	nc := object(t, m, "EC2NodeClass", "default")
	if got := nc.String("spec.role"); got != "${aws_iam_role.node.name}" {
		t.Errorf("EC2NodeClass role: got %q", got)
	}
	if got := nc.At("spec.amiSelectorTerms").Line; got != 171 {
		t.Errorf("amiSelectorTerms line: got %d, want 171", got)
	}
	np := object(t, m, "NodePool", "default")
	if got := np.At("spec.template.spec.nodeClassRef.kind").Line; got != 10 {
		t.Errorf("NodePool nodeClassRef.kind line: got %d, want 10 of the template", got)
	}
	_ = dir
}

func TestRawGraph(t *testing.T) {
	t.Parallel()
	m, _ := loadRaw(t)
	g := m.Terraform
	tests := []struct {
		addr      string
		dependsOn []string
		refs      []string
		attrs     map[string]any
		count     string
	}{
		{
			addr:      "kubectl_manifest.nodepool",
			dependsOn: []string{"helm_release.karpenter"},
			refs:      []string{"aws_iam_role.node"},
			attrs:     map[string]any{"wait": true},
		},
		{
			addr:  "kubectl_manifest.docs",
			refs:  []string{"data.kubectl_file_documents.docs"},
			attrs: map[string]any{"apply_only": true, "yaml_body": "${each.value}"},
			count: "data.kubectl_file_documents.docs.manifests",
		},
		{
			addr:      "module.addons.helm_release.metrics",
			dependsOn: []string{"aws_eks_node_group.system"},
			refs:      []string{"aws_eks_cluster.this"},
			attrs:     map[string]any{"chart": "metrics-server", "name": "metrics-server", "namespace": "karpenter"},
		},
		{
			addr:      "module.addons",
			dependsOn: []string{"aws_eks_node_group.system"},
			refs:      []string{"aws_eks_cluster.this", "module.addons.helm_release.metrics"},
			attrs:     map[string]any{"cluster_name": "${aws_eks_cluster.this.name}", "namespace": "karpenter"},
		},
		{
			addr: "kubernetes_namespace.x",
			refs: []string{"module.addons"},
		},
	}
	for _, tt := range tests {
		r := g.Nodes[tt.addr]
		if r == nil {
			t.Errorf("%s: got no graph node", tt.addr)
			continue
		}
		if diff := cmp.Diff(tt.dependsOn, r.DependsOn); diff != "" {
			t.Errorf("%s depends_on (-want +got):\n%s", tt.addr, diff)
		}
		if diff := cmp.Diff(tt.refs, r.Refs); diff != "" {
			t.Errorf("%s refs (-want +got):\n%s", tt.addr, diff)
		}
		if tt.attrs != nil {
			got := map[string]any{}
			for k := range tt.attrs {
				got[k] = r.Attrs[k]
			}
			if diff := cmp.Diff(tt.attrs, got); diff != "" {
				t.Errorf("%s attrs (-want +got):\n%s", tt.addr, diff)
			}
		}
		if r.Count != tt.count {
			t.Errorf("%s count: got %q, want %q", tt.addr, r.Count, tt.count)
		}
	}
	// Through the local module the namespace resolves; the release name is known
	// only after apply.
	ns := g.Nodes["kubernetes_namespace.x"]
	if ns == nil {
		t.Fatal("no kubernetes_namespace.x")
	}
	if got := graphNode(g, `module.addons.helm_release.metrics`); got != "module.addons.helm_release.metrics" {
		t.Errorf("graphNode of a local module resource: got %q", got)
	}
	if got := graphNode(g, `module.eks.module.eks_managed_node_group["x"].aws_eks_node_group.this[0]`); got != "" {
		t.Errorf("graphNode of an unknown module: got %q, want none", got)
	}
	if !g.DependsOn("module.addons.helm_release.metrics", "aws_eks_node_group.system") {
		t.Error("module depends_on is not inherited by the module's resources")
	}
}

func TestLocalModuleOutputs(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"main.tf": `module "net" {
  source = "./net"
  name   = "x"
}
module "roles" {
  for_each = toset(["a", "b"])
  source   = "./roles"
  name     = each.key
}
locals {
  result = {
    known   = module.net.cidr
    unknown = module.net.vpc_id
    nested  = module.net.ids
    each    = [module.roles["a"].role_name, module.roles["b"].role_arn]
  }
}
`,
		"net/main.tf": `variable "name" {}
resource "aws_vpc" "this" {
  cidr_block = "10.0.0.0/16"
}
output "cidr" { value = "10.0.0.0/16-${var.name}" }
output "vpc_id" { value = aws_vpc.this.id }
output "ids" { value = { vpc = aws_vpc.this.id, name = var.name } }
`,
		"roles/main.tf": `variable "name" {}
resource "aws_iam_role" "this" {
  name = "role-${var.name}"
  assume_role_policy = jsonencode({ Statement = [{ Effect = "Allow", Principal = { Service = "ec2.amazonaws.com" } }] })
}
output "role_name" { value = aws_iam_role.this.name }
output "role_arn" { value = aws_iam_role.this.arn }
`,
	}
	got, l := evalIn(t, files["main.tf"], map[string]string{"net/main.tf": files["net/main.tf"], "roles/main.tf": files["roles/main.tf"]})
	want := map[string]any{
		"known":   "10.0.0.0/16-x",
		"unknown": "${module.net.vpc_id}",
		"nested":  map[string]any{"vpc": "${module.net.ids.vpc}", "name": "x"},
		"each":    []any{`${module.roles["a"].role_name}`, `${module.roles["b"].role_arn}`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("module outputs (-want +got):\n%s\nnotes: %v", diff, l.notes)
	}
	dir := writeDir(t, files)
	m, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, r := range m.Identity.Roles {
		roles = append(roles, r.Address+" "+r.Name)
	}
	if want := []string{`module.roles["a"].aws_iam_role.this role-a`, `module.roles["b"].aws_iam_role.this role-b`}; !cmp.Equal(roles, want) {
		t.Errorf("roles of module instances: got %v, want %v", roles, want)
	}
}

// A file that does not parse is a problem naming file and line; the other files are
// still analysed.
func TestBadInput(t *testing.T) {
	t.Parallel()
	dir := writeDir(t, map[string]string{
		"good.tf": `resource "aws_eks_cluster" "this" {
  name    = "ok"
  version = "1.31"
}
resource "kubectl_manifest" "np" {
  yaml_body = <<-YAML
    apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata:
      name: [broken
  YAML
}
`,
		"bad.tf": "locals {\n  a = 1\n  b = \n}\n",
		"dup.tf": "resource \"aws_eks_cluster\" \"this\" {\n  name = \"again\"\n}\n",
	})
	m, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	type p struct {
		File string
		Line int
		Has  string
	}
	var got []p
	for _, pr := range m.Problems {
		got = append(got, p{filepath.Base(pr.Origin.File), pr.Origin.Line, pr.Message})
	}
	want := []struct {
		File string
		Line int
		Has  string
	}{
		{"bad.tf", 3, "Terraform syntax error"},
		{"good.tf", 1, "duplicate resource aws_eks_cluster.this"},
		{"good.tf", 10, "YAML syntax error"},
	}
	if len(got) != len(want) {
		t.Fatalf("problems: got %v, want %d", got, len(want))
	}
	for i, w := range want {
		// The YAML parser reports a bad flow sequence on its line or the one before.
		lineOK := got[i].Line == w.Line || (w.Has == "YAML syntax error" && got[i].Line == w.Line-1)
		if got[i].File != w.File || !lineOK || !strings.Contains(got[i].Has, w.Has) {
			t.Errorf("problem %d: got %+v, want %s:%d containing %q", i, got[i], w.File, w.Line, w.Has)
		}
	}
	if m.Cluster.Name != "again" && m.Cluster.Name != "ok" {
		t.Errorf("cluster: got %q, want the first definition kept", m.Cluster.Name)
	}
	if _, err := Load(filepath.Join(dir, "missing"), Options{}); err == nil {
		t.Error("Load of a missing directory: got no error, want one")
	}
}

// A manifest resource whose object is not known before apply is said; when it
// is named as Karpenter's, it may be a NodePool: capacity that cannot be seen.
func TestUnknownManifestObject(t *testing.T) {
	t.Parallel()
	m, unresolved := loadSrcUnresolved(t, `
variable "pool_yaml" {
  type = string
}
variable "crds" {
  type = map(string)
}
resource "kubectl_manifest" "karpenter_node_pool" {
  yaml_body = var.pool_yaml
}
resource "kubectl_manifest" "crds" {
  for_each  = var.crds
  yaml_body = each.value
}
`)
	want := []string{
		"the object kubectl_manifest.crds applies is not known before apply (yaml_body); it is not analysed",
		"the object kubectl_manifest.karpenter_node_pool applies is not known before apply (yaml_body); it is not analysed",
	}
	sort.Strings(unresolved)
	if !cmp.Equal(unresolved, want) {
		t.Errorf("unresolved %q, want %q", unresolved, want)
	}
	if len(m.Unseen) != 1 || m.Unseen[0].What != "the object of kubectl_manifest.karpenter_node_pool" || !m.Unseen[0].SteadyOnly {
		t.Errorf("unseen %+v", m.Unseen)
	}
}

// The disk of a node group: the module's launch template sizes it by
// block_device_mappings, disk_size without one; a raw node group's launch
// template is not read.
func TestNodeGroupDisks(t *testing.T) {
	t.Parallel()
	m := loadSrc(t, `
module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "~> 20.0"

  cluster_name = "demo"
  eks_managed_node_groups = {
    lt = {
      block_device_mappings = {
        xvda = { device_name = "/dev/xvda", ebs = { volume_size = 100, volume_type = "gp3" } }
      }
    }
    plain = {
      use_custom_launch_template = false
      disk_size                  = 50
    }
    default = {}
  }
}

resource "aws_eks_node_group" "raw" {
  cluster_name  = "demo"
  node_role_arn = "arn:aws:iam::111122223333:role/n"
  subnet_ids    = ["s"]
  disk_size     = 30
  scaling_config {
    desired_size = 1
    max_size     = 1
    min_size     = 1
  }
}

resource "aws_eks_node_group" "templated" {
  cluster_name  = "demo"
  node_role_arn = "arn:aws:iam::111122223333:role/n"
  subnet_ids    = ["s"]
  launch_template {
    id      = "lt-1"
    version = "1"
  }
  scaling_config {
    desired_size = 1
    max_size     = 1
    min_size     = 1
  }
}
`)
	got := map[string]int64{}
	for _, ng := range m.NodeGroups {
		got[ng.Name] = ng.DiskBytes
	}
	want := map[string]int64{"lt": 100 << 30, "plain": 50 << 30, "default": 0, "": 30 << 30}
	delete(got, "")
	delete(want, "")
	for _, ng := range m.NodeGroups {
		switch ng.Address {
		case "aws_eks_node_group.raw":
			got["raw"], want["raw"] = ng.DiskBytes, 30<<30
		case "aws_eks_node_group.templated":
			got["templated"], want["templated"] = ng.DiskBytes, -1
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("disks (-want +got):\n%s", diff)
	}
}

// A body that is a value known only after apply, with text around it, is not
// known: never invalid input.
func TestManifestBodyOfAnHTTPResponse(t *testing.T) {
	t.Parallel()
	_, unresolved := loadSrcUnresolved(t, `
data "http" "plugin" {
  url = "https://example.com/plugin.yaml"
}
resource "kubectl_manifest" "plugin" {
  yaml_body = <<YAML
${data.http.plugin.response_body}
YAML
}
resource "kubectl_manifest" "framed" {
  yaml_body = <<YAML
# the plugin
---
${data.http.plugin.response_body}
YAML
}
`)
	if len(unresolved) != 2 {
		t.Errorf("unresolved %q, want one per resource", unresolved)
	}
}
