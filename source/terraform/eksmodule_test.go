package terraform

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
)

func loadSrc(t *testing.T, src string) *cluster.Model {
	t.Helper()
	m, err := Load(writeDir(t, map[string]string{"main.tf": src}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Problems {
		t.Errorf("got problem %s: %s, want none", p.Origin, p.Message)
	}
	return m
}

// loadSrcUnresolved loads a configuration of which some part cannot be evaluated:
// problems are allowed only when unresolved (info), and returned.
func loadSrcUnresolved(t *testing.T, src string) (*cluster.Model, []string) {
	t.Helper()
	m, err := Load(writeDir(t, map[string]string{"main.tf": src}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, p := range m.Problems {
		if !p.Unresolved {
			t.Errorf("got problem %s: %s, want only unresolved ones", p.Origin, p.Message)
		}
		msgs = append(msgs, p.Message)
	}
	return m, msgs
}

func hasNote(m *cluster.Model, subject, text string) bool {
	for _, n := range m.Notes {
		if n.Subject == subject && strings.Contains(n.Message, text) {
			return true
		}
	}
	return false
}

func TestModuleVersions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		source    string
		version   string
		inputs    string
		wantMajor string
		wantNote  string
	}{
		{name: "registry constraint", source: "terraform-aws-modules/eks/aws", version: "~> 19.16", inputs: `cluster_name = "a"`, wantMajor: "~> 19.16"},
		{name: "registry host", source: "registry.terraform.io/terraform-aws-modules/eks/aws", version: ">= 20.0, < 21.0", inputs: `cluster_name = "a"`, wantMajor: ">= 20.0, < 21.0"},
		{name: "git ref", source: "git::https://github.com/terraform-aws-modules/terraform-aws-eks.git?ref=v20.8.5", inputs: `cluster_name = "a"`, wantMajor: "20"},
		{name: "undeclared v19 inputs", source: "terraform-aws-modules/eks/aws", inputs: "cluster_name = \"a\"\n  manage_aws_auth_configmap = true", wantMajor: "19", wantNote: "v19 semantics are used (inferred from the inputs"},
		{name: "undeclared v21 inputs", source: "terraform-aws-modules/eks/aws", inputs: `name = "a"`, wantMajor: "21", wantNote: "v21 semantics are used (inferred"},
		{name: "undeclared ambiguous", source: "terraform-aws-modules/eks/aws", inputs: `cluster_name = "a"`, wantMajor: "20", wantNote: "v20 semantics are used (assumed: the newest version the inputs allow)"},
		{name: "too old", source: "terraform-aws-modules/eks/aws", version: "18.31.2", inputs: `cluster_name = "a"`, wantMajor: "18.31.2", wantNote: "v18 is older than v19"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := "module \"eks\" {\n  source = \"" + tt.source + "\"\n"
			if tt.version != "" {
				src += "  version = \"" + tt.version + "\"\n"
			}
			src += "  " + tt.inputs + "\n}\n"
			m := loadSrc(t, src)
			if m.Cluster.ModuleVersion != tt.wantMajor || m.Cluster.Address != "module.eks" {
				t.Errorf("cluster: got module version %q at %q, want %q at module.eks", m.Cluster.ModuleVersion, m.Cluster.Address, tt.wantMajor)
			}
			if tt.wantNote != "" && !hasNote(m, "module.eks", tt.wantNote) {
				t.Errorf("notes: got %v, want one containing %q", m.Notes, tt.wantNote)
			}
		})
	}
	if got := majorOf(">= 19.0, < 20"); got != 19 {
		t.Errorf("majorOf: got %d, want 19", got)
	}
}

func TestEKSNodeGroupDefaults(t *testing.T) {
	t.Parallel()
	m := loadSrc(t, `
variable "groups" {}
module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "~> 20.0"
  cluster_name = "demo"

  eks_managed_node_group_defaults = {
    ami_type = "AL2023_ARM_64_STANDARD"
    labels   = { tier = "default" }
    taints   = [{ key = "dedicated", value = "system", effect = "NO_EXECUTE" }]
  }
  eks_managed_node_groups = {
    system = {}
    apps = {
      name            = "applications"
      use_name_prefix = false
      labels          = { tier = "apps" }
      taints          = []
      instance_types  = ["c7g.large"]
      create_iam_role = false
      iam_role_arn    = "arn:aws:iam::111122223333:role/nodes"
    }
    off = { create = false }
  }
  fargate_profiles = {
    given = {
      selectors       = [{ namespace = "ns-*", labels = { team = "a" } }]
      create_iam_role = false
      iam_role_arn    = "arn:aws:iam::111122223333:role/fargate"
    }
  }
  self_managed_node_groups = var.groups
}
`)
	got := nodeGroups(m)
	want := map[string]ngView{
		"system":       {Name: "system", Managed: true, Labels: map[string]string{"tier": "default"}, Taints: []corev1.Taint{{Key: "dedicated", Value: "system", Effect: corev1.TaintEffectNoExecute}}, AMIType: "AL2023_ARM_64_STANDARD", Min: 1, Max: 3, Des: 1, NodeRole: `${module.eks.eks_managed_node_groups["system"].iam_role_arn}`},
		"applications": {Name: "applications", Managed: true, Labels: map[string]string{"tier": "apps"}, InstanceTypes: []string{"c7g.large"}, AMIType: "AL2023_ARM_64_STANDARD", Min: 1, Max: 3, Des: 1, NodeRole: "arn:aws:iam::111122223333:role/nodes"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("node groups (-want +got):\n%s", diff)
	}
	var roles []string
	for _, r := range m.Identity.Roles {
		roles = append(roles, r.Address)
	}
	if want := []string{`module.eks.module.eks_managed_node_group["system"].aws_iam_role.this[0]`}; !cmp.Equal(roles, want) {
		t.Errorf("roles: got %v, want only the created one %v", roles, want)
	}
	if len(m.FargateProfiles) != 1 || m.FargateProfiles[0].PodExecutionRole != "arn:aws:iam::111122223333:role/fargate" ||
		!cmp.Equal(m.FargateProfiles[0].Selectors[0].Labels, map[string]string{"team": "a"}) {
		t.Errorf("Fargate profile: got %+v", m.FargateProfiles)
	}
	// Node groups that cannot be seen are unseen capacity: placement on them is
	// unknown, never absent.
	if len(m.Unseen) != 1 || m.Unseen[0].What != "the node groups of module.eks.self_managed_node_groups" || m.Unseen[0].Why != "var.groups is not known before apply" {
		t.Errorf("unseen capacity: got %+v, want the unknown self-managed groups", m.Unseen)
	}
}

func TestEKSAddonsAndAccess(t *testing.T) {
	t.Parallel()
	m := loadSrc(t, `
module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "~> 21.0"
  name    = "demo"
  authentication_mode = "API_AND_CONFIG_MAP"
  addons = {
    coredns = {
      addon_version        = "v1.11.3-eksbuild.1"
      configuration_values = module.settings.coredns_json
    }
    vpc-cni = {
      before_compute = true
      most_recent    = true
    }
  }
  access_entries = {
    admin = { principal_arn = "arn:aws:iam::111122223333:role/admin" }
    nodes = { principal_arn = "arn:aws:iam::111122223333:role/nodes", type = "EC2_LINUX" }
  }
}
module "settings" {
  source = "example.com/settings/aws"
}
`)
	type addon struct {
		Name, Version string
		Before        bool
		Unknown       []string
	}
	var got []addon
	for _, a := range m.Addons {
		got = append(got, addon{a.Name, a.Version, a.BeforeCompute, a.Unknown})
	}
	want := []addon{
		{Name: "vpc-cni", Before: true},
		{Name: "coredns", Version: "v1.11.3-eksbuild.1", Unknown: []string{"configuration_values"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("add-ons (-want +got):\n%s", diff)
	}
	var entries []string
	for _, e := range m.Identity.AccessEntries {
		entries = append(entries, e.Address+" "+e.Type)
	}
	wantEntries := []string{`module.eks.aws_eks_access_entry.this["admin"] STANDARD`, `module.eks.aws_eks_access_entry.this["nodes"] EC2_LINUX`}
	if diff := cmp.Diff(wantEntries, entries); diff != "" {
		t.Errorf("access entries (-want +got):\n%s", diff)
	}
	if m.Identity.AuthMode != cluster.AuthAPIAndConfigMap || m.Identity.AuthModeDefaulted {
		t.Errorf("auth mode: got %q defaulted=%v, want API_AND_CONFIG_MAP as written", m.Identity.AuthMode, m.Identity.AuthModeDefaulted)
	}
}

func TestAwsAuthModules(t *testing.T) {
	t.Parallel()
	m := loadSrc(t, `
module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "~> 20.0"
  cluster_name = "demo"
}
module "aws_auth" {
  source  = "terraform-aws-modules/eks/aws//modules/aws-auth"
  version = "~> 20.0"
  manage_aws_auth_configmap = true
  aws_auth_roles = [
    {
      rolearn  = module.karpenter.iam_role_arn
      username = "system:node:{{EC2PrivateDNSName}}"
      groups   = ["system:bootstrappers", "system:nodes"]
    },
  ]
}
module "karpenter" {
  source  = "terraform-aws-modules/eks/aws//modules/karpenter"
  version = "~> 20.0"
  cluster_name = "demo"
}
`)
	aa := m.Identity.AwsAuth
	if aa == nil || aa.Address != "module.aws_auth.kubernetes_config_map_v1_data.aws_auth[0]" || aa.Managed != "user" || !aa.Complete {
		t.Fatalf("aws-auth: got %+v, want the v20 aws-auth sub-module's", aa)
	}
	if len(aa.Roles) != 1 || aa.Roles[0].RoleARN != "${module.karpenter.iam_role_arn}" || aa.Roles[0].Origin.Line != 12 {
		t.Errorf("aws-auth roles: got %+v, want the controller role mapped at line 12", aa.Roles)
	}
	// The mapping names the controller role: a check can see it through the refs.
	if got := roleByRef(t, m, "module.karpenter.iam_role_arn").Kind; got != cluster.RoleController {
		t.Errorf("mapped role: got %s, want controller role", got)
	}
}

func TestV19AwsAuthCreate(t *testing.T) {
	t.Parallel()
	m := loadSrc(t, `
module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "19.21.0"
  cluster_name = "demo"
  create_aws_auth_configmap = true
  self_managed_node_groups = {
    win = { platform = "windows", instance_type = "m5.large" }
  }
  aws_auth_roles = [{ rolearn = "arn:aws:iam::111122223333:role/ops", username = "ops", groups = ["system:masters"] }]
}
`)
	aa := m.Identity.AwsAuth
	if aa == nil || aa.Address != "module.eks.kubernetes_config_map.aws_auth[0]" {
		t.Fatalf("aws-auth: got %+v, want the module's kubernetes_config_map", aa)
	}
	var got []string
	for _, r := range aa.Roles {
		got = append(got, r.RoleARN+" "+r.Username+" "+strings.Join(r.Groups, ","))
	}
	want := []string{
		`${module.eks.self_managed_node_groups["win"].iam_role_arn} system:node:{{EC2PrivateDNSName}} eks:kube-proxy-windows,system:bootstrappers,system:nodes`,
		"arn:aws:iam::111122223333:role/ops ops system:masters",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("aws-auth roles (-want +got):\n%s", diff)
	}
	if n := len(m.Identity.AccessEntries); n != 0 {
		t.Errorf("access entries: got %d, want none with v19", n)
	}
}

func TestKarpenterModule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		src       string
		want      cluster.Karpenter
		entries   []string
		accounts  []string
		nodeKind  cluster.RoleKind
		nodeRoles int
	}{
		{
			name: "v20 irsa without access entry",
			src: `module "karpenter" {
  source  = "terraform-aws-modules/eks/aws//modules/karpenter"
  version = "20.24.1"
  cluster_name = "demo"
  namespace    = "karpenter"
  enable_irsa  = true
  irsa_oidc_provider_arn          = "arn:aws:iam::111122223333:oidc-provider/x"
  irsa_namespace_service_accounts = ["karpenter:karpenter-sa"]
  create_access_entry = false
}`,
			want:      cluster.Karpenter{Namespace: "karpenter", ControllerRole: "${module.karpenter.iam_role_arn}", NodeRole: "${module.karpenter.node_iam_role_arn}", Address: "module.karpenter"},
			accounts:  []string{"karpenter/karpenter-sa irsa"},
			nodeRoles: 1,
		},
		{
			name: "v20 windows access entry",
			src: `module "karpenter" {
  source  = "terraform-aws-modules/eks/aws//modules/karpenter"
  version = "~> 20.0"
  cluster_name      = "demo"
  access_entry_type = "EC2_WINDOWS"
}`,
			want:      cluster.Karpenter{Namespace: "kube-system", ControllerRole: "${module.karpenter.iam_role_arn}", NodeRole: "${module.karpenter.node_iam_role_arn}", Address: "module.karpenter"},
			entries:   []string{"${module.karpenter.node_iam_role_arn} EC2_WINDOWS"},
			nodeRoles: 1,
		},
		{
			name: "v21 defaults",
			src: `module "karpenter" {
  source  = "terraform-aws-modules/eks/aws//modules/karpenter"
  version = "~> 21.0"
  cluster_name = "demo"
}`,
			want:      cluster.Karpenter{Namespace: "kube-system", ControllerRole: "${module.karpenter.iam_role_arn}", NodeRole: "${module.karpenter.node_iam_role_arn}", Address: "module.karpenter"},
			entries:   []string{"${module.karpenter.node_iam_role_arn} EC2_LINUX"},
			accounts:  []string{"kube-system/karpenter pod-identity"},
			nodeRoles: 1,
		},
		{
			name: "v20 existing node role",
			src: `module "karpenter" {
  source  = "terraform-aws-modules/eks/aws//modules/karpenter"
  version = "~> 20.0"
  cluster_name         = "demo"
  create_node_iam_role = false
  node_iam_role_arn    = "arn:aws:iam::111122223333:role/KarpenterNodeRole"
}`,
			want:    cluster.Karpenter{Namespace: "kube-system", ControllerRole: "${module.karpenter.iam_role_arn}", NodeRole: "arn:aws:iam::111122223333:role/KarpenterNodeRole", Address: "module.karpenter"},
			entries: []string{"arn:aws:iam::111122223333:role/KarpenterNodeRole EC2_LINUX"},
		},
		{
			name: "v19 existing node role",
			src: `module "karpenter" {
  source  = "terraform-aws-modules/eks/aws//modules/karpenter"
  version = "~> 19.0"
  cluster_name    = "demo"
  create_iam_role = false
  iam_role_arn    = "arn:aws:iam::111122223333:role/nodes"
  create_irsa     = false
}`,
			want: cluster.Karpenter{Namespace: "karpenter", NodeRole: "arn:aws:iam::111122223333:role/nodes", Address: "module.karpenter"},
		},
		{
			name: "disabled",
			src: `module "karpenter" {
  source  = "terraform-aws-modules/eks/aws//modules/karpenter"
  version = "~> 20.0"
  create  = false
}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := loadSrc(t, tt.src)
			got := m.Karpenter
			got.Origin = cluster.Origin{}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Karpenter (-want +got):\n%s", diff)
			}
			var entries []string
			for _, e := range m.Identity.AccessEntries {
				if !e.Implicit {
					t.Errorf("access entry %s: got explicit, want implicit", e.Address)
				}
				entries = append(entries, e.PrincipalARN+" "+e.Type)
			}
			if diff := cmp.Diff(tt.entries, entries); diff != "" {
				t.Errorf("access entries (-want +got):\n%s", diff)
			}
			var accounts []string
			for _, s := range m.Identity.ServiceAccounts {
				accounts = append(accounts, s.Namespace+"/"+s.Name+" "+s.Mechanism)
			}
			if diff := cmp.Diff(tt.accounts, accounts); diff != "" {
				t.Errorf("service accounts (-want +got):\n%s", diff)
			}
			var nodes int
			for _, r := range m.Identity.Roles {
				if r.Kind == cluster.RoleNode {
					nodes++
				}
			}
			if nodes != tt.nodeRoles {
				t.Errorf("node roles: got %d, want %d", nodes, tt.nodeRoles)
			}
		})
	}
}

// terraform-aws-eks v17 writes aws-auth itself unless manage_aws_auth =
// false: the worker role as a node, then map_roles. Empty node group inputs
// are no capacity rather than capacity not seen.
func TestV17AwsAuthAndEmptyGroups(t *testing.T) {
	t.Parallel()
	src := `module "eks" {
  source          = "terraform-aws-modules/eks/aws"
  version         = "17.23.0"
  cluster_name    = "demo"
  cluster_version = "1.21"
  vpc_id          = "vpc-1"
  subnets         = ["subnet-1"]
  worker_groups   = []
  node_groups     = {}
  map_roles = [{
    rolearn  = "arn:aws:iam::111122223333:role/admin"
    username = "admin"
    groups   = ["system:masters"]
  }]
}
`
	m, _ := loadSrcUnresolved(t, src)
	a := m.Identity.AwsAuth
	if a == nil {
		t.Fatal("no aws-auth: v17 manages it by default")
	}
	var got []string
	for _, r := range a.Roles {
		got = append(got, r.RoleARN+" "+r.Username)
	}
	want := []string{"${module.eks.worker_iam_role_arn} system:node:{{EC2PrivateDNSName}}", "arn:aws:iam::111122223333:role/admin admin"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("aws-auth roles (-want +got):\n%s", diff)
	}
	if len(m.Unseen) != 0 {
		t.Errorf("unseen capacity %+v, want none: the node group inputs are empty", m.Unseen)
	}
	off, _ := loadSrcUnresolved(t, strings.Replace(src, `worker_groups   = []`, `manage_aws_auth = false`, 1))
	if off.Identity.AwsAuth != nil {
		t.Errorf("manage_aws_auth = false still gives aws-auth %+v", off.Identity.AwsAuth)
	}
}

// Labels written into user data reach the nodes only where the module renders
// it: a managed node group on the EKS-optimized AMI gets no
// bootstrap_extra_args (EKS writes the bootstrap call) unless
// enable_bootstrap_user_data is set; self-managed groups always render it; no
// release after v17 reads kubelet_extra_args.
func TestUserDataLabelsWhereRendered(t *testing.T) {
	t.Parallel()
	m := loadSrc(t, `module "eks" {
  source          = "terraform-aws-modules/eks/aws"
  version         = "19.19.1"
  cluster_name    = "demo"
  cluster_version = "1.28"
  vpc_id          = "vpc-1"
  subnet_ids      = ["subnet-1"]
  eks_managed_node_groups = {
    plain = {
      bootstrap_extra_args = "--kubelet-extra-args '--node-labels=lifecycle=OnDemand'"
    }
    custom = {
      enable_bootstrap_user_data = true
      bootstrap_extra_args       = "--kubelet-extra-args '--node-labels=lifecycle=OnDemand'"
    }
    old = {
      kubelet_extra_args = "--node-labels=app=test"
    }
  }
  self_managed_node_groups = {
    self = {
      bootstrap_extra_args = "--kubelet-extra-args '--node-labels=lifecycle=OnDemand'"
    }
  }
}
`)
	got := map[string]string{}
	for _, ng := range m.NodeGroups {
		got[ng.Name] = ng.Labels["lifecycle"] + ng.Labels["app"]
	}
	want := map[string]string{"plain": "", "custom": "OnDemand", "old": "", "self": "OnDemand"}
	for name, w := range want {
		if g, ok := got[name]; !ok || g != w {
			t.Errorf("node group %s: label %q (present %v), want %q", name, g, ok, w)
		}
	}
}
