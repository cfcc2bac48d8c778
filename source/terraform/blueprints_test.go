package terraform

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/cluster"
)

const blueprintsEKS = `
provider "aws" {
  region = "eu-west-1"
}

module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "~> 20.0"

  cluster_name    = "demo"
  cluster_version = "1.31"

  eks_managed_node_groups = {
    system = { instance_types = ["m5.large"] }
  }
}
`

func releaseNamed(m *cluster.Model, name string) *cluster.HelmRelease {
	for _, r := range m.HelmReleases {
		if r.Name == name {
			return r
		}
	}
	return nil
}

// What a call of aws-ia/eks-blueprints-addons creates is the module's own
// resources for the pinned release: the Karpenter release with the values the
// module sets itself, the controller's IRSA role, the node role and its instance
// profile, the add-ons it installs, and the EKS add-ons of eks_addons.
func TestBlueprintsAddons(t *testing.T) {
	t.Parallel()
	m := loadSrc(t, blueprintsEKS+`
module "eks_blueprints_addons" {
  source  = "aws-ia/eks-blueprints-addons/aws"
  version = "~> 1.16"

  cluster_name      = module.eks.cluster_name
  cluster_endpoint  = module.eks.cluster_endpoint
  cluster_version   = module.eks.cluster_version
  oidc_provider_arn = module.eks.oidc_provider_arn

  enable_karpenter                    = true
  enable_aws_load_balancer_controller = true
  enable_cluster_autoscaler           = false

  karpenter = {
    chart_version = "1.0.8"
    values        = [yamlencode({ replicas = 1 })]
  }
  karpenter_node = {
    iam_role_use_name_prefix = false
  }
  eks_addons = {
    coredns = {
      configuration_values = jsonencode({ replicaCount = 3 })
    }
  }
}
`)
	k := releaseNamed(m, "karpenter")
	if k == nil {
		t.Fatalf("no karpenter release among %d", len(m.HelmReleases))
	}
	type view struct {
		Address, Namespace, Chart, Repository, Version string
		Values                                         map[string]any
		Input                                          string
	}
	got := view{k.Address, k.Namespace, k.Chart, k.Repository, k.Version, map[string]any{"replicas": k.Values["replicas"]}, k.Input.Name}
	want := view{
		Address:    "module.eks_blueprints_addons.module.karpenter.helm_release.this[0]",
		Namespace:  "karpenter",
		Chart:      "karpenter",
		Repository: "oci://public.ecr.aws/karpenter",
		Version:    "1.0.8",
		Values:     map[string]any{"replicas": int64(1)},
		Input:      "karpenter",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("karpenter release (-want +got):\n%s", diff)
	}
	// The settings of every Karpenter version the module sets at once are the
	// module's, not the user's.
	for _, key := range []string{"settings.aws.clusterName", "settings.clusterName", "serviceAccount.annotations.eks.amazonaws.com/role-arn"} {
		if !slices.Contains(k.Preset, key) {
			t.Errorf("karpenter preset lacks %s: %v", key, k.Preset)
		}
		if _, ok := k.ValueOrigins[key]; ok {
			t.Errorf("%s has a user origin", key)
		}
	}
	if s, _ := k.Values["settings"].(map[string]any); s == nil || s["clusterName"] != "${module.eks.cluster_name}" {
		t.Errorf("settings.clusterName = %v, want the cluster name input", k.Values["settings"])
	}

	lbc := releaseNamed(m, "aws-load-balancer-controller")
	if lbc == nil || lbc.Namespace != "kube-system" || lbc.Version != "1.7.1" || lbc.Conditional != "" {
		t.Errorf("load balancer controller release: %+v", lbc)
	}
	if r := releaseNamed(m, "cluster-autoscaler"); r != nil {
		t.Errorf("disabled add-on installed: %+v", r)
	}

	kp := m.Karpenter
	if kp.Namespace != "karpenter" || kp.ControllerRole != "${module.eks_blueprints_addons.karpenter.iam_role_arn}" || kp.NodeRole != "${module.eks_blueprints_addons.karpenter.node_iam_role_arn}" {
		t.Errorf("karpenter: namespace %q controller role %q node role %q", kp.Namespace, kp.ControllerRole, kp.NodeRole)
	}
	if kp.Version != "1.0.8" {
		t.Errorf("karpenter version %q (%s), want the chart's", kp.Version, kp.VersionFrom)
	}

	var addons []string
	for _, a := range m.Addons {
		addons = append(addons, a.Address)
	}
	if want := []string{`module.eks_blueprints_addons.aws_eks_addon.this["coredns"]`}; !cmp.Equal(addons, want) {
		t.Errorf("add-ons %v, want %v", addons, want)
	}
	if a := m.Addons[0]; a.ConfigurationValues["replicaCount"] != int64(3) {
		t.Errorf("coredns configuration %v", a.ConfigurationValues)
	}

	// The node role is named without a prefix, as karpenter_node says.
	var nodeRole *cluster.IAMRole
	for i, r := range m.Identity.Roles {
		if r.Address == "module.eks_blueprints_addons.aws_iam_role.karpenter[0]" {
			nodeRole = m.Identity.Roles[i]
		}
	}
	if nodeRole == nil || nodeRole.Name != "karpenter-${module.eks.cluster_name}" || nodeRole.Kind != cluster.RoleNode {
		t.Errorf("node role: %+v", nodeRole)
	}
}

// An add-on turned on by a value not known before apply exists only if it turns
// out true.
func TestBlueprintsAddonsConditional(t *testing.T) {
	t.Parallel()
	m, unresolved := loadSrcUnresolved(t, blueprintsEKS+`
variable "lbc" {
  type = bool
}

module "eks_blueprints_addons" {
  source = "aws-ia/eks-blueprints-addons/aws"

  cluster_name      = module.eks.cluster_name
  cluster_endpoint  = module.eks.cluster_endpoint
  cluster_version   = module.eks.cluster_version
  oidc_provider_arn = module.eks.oidc_provider_arn

  enable_aws_load_balancer_controller = var.lbc
  aws_load_balancer_controller = {
    values = [var.lbc_values]
  }
}

variable "lbc_values" {
  type = string
}
`)
	lbc := releaseNamed(m, "aws-load-balancer-controller")
	if lbc == nil || lbc.Conditional != "var.lbc" {
		t.Fatalf("load balancer controller: %+v", lbc)
	}
	if !cmp.Equal(lbc.Unknown, []string{"values[0]"}) {
		t.Errorf("Unknown = %v, want the values document", lbc.Unknown)
	}
	// Not pinned: the newest release eksdoctor knows is assumed, and said.
	if len(unresolved) != 1 || !strings.Contains(unresolved[0], "the version of module.eks_blueprints_addons (aws-ia/eks-blueprints-addons) is not pinned; release 1.24.3") {
		t.Errorf("unresolved %q", unresolved)
	}
}

// The release a version constraint installs decides what the module creates:
// before 1.10 Karpenter v0.27 with the v1alpha5 settings only.
func TestBlueprintsAddonsByRelease(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		version, chart string
		preset         string
		notPreset      string
	}{
		{"1.3.0", "v0.27.2", "settings.aws.clusterName", "settings.clusterName"},
		// 1.10 names the keys by karpenter_enable_instance_profile_creation,
		// true by default: the v0.32 layout only.
		{"1.10.0", "v0.32.1", "settings.clusterName", "settings.aws.clusterName"},
		{"~> 1.12.0", "v0.32.1", "settings.clusterName", ""},
		{"1.16.4", "0.37.0", "settings.interruptionQueue", ""},
	} {
		m := loadSrc(t, blueprintsEKS+`
module "addons" {
  source  = "aws-ia/eks-blueprints-addons/aws"
  version = "`+tt.version+`"

  cluster_name      = module.eks.cluster_name
  cluster_endpoint  = module.eks.cluster_endpoint
  cluster_version   = module.eks.cluster_version
  oidc_provider_arn = module.eks.oidc_provider_arn

  enable_karpenter = true
}
`)
		k := releaseNamed(m, "karpenter")
		if k == nil {
			t.Fatalf("%s: no karpenter release", tt.version)
		}
		if k.Version != strings.TrimPrefix(tt.chart, "v") || !slices.Contains(k.Preset, tt.preset) || tt.notPreset != "" && slices.Contains(k.Preset, tt.notPreset) {
			t.Errorf("%s: chart %s preset %v", tt.version, k.Version, k.Preset)
		}
	}
}

// aws-ia/eks-blueprints-addon installs one chart, with the IRSA role under the
// keys set_irsa_names names.
func TestBlueprintsAddonSingle(t *testing.T) {
	t.Parallel()
	m := loadSrc(t, blueprintsEKS+`
module "lbc" {
  source  = "aws-ia/eks-blueprints-addon/aws"
  version = "~> 1.1"

  chart         = "aws-load-balancer-controller"
  chart_version = "1.7.1"
  repository    = "https://aws.github.io/eks-charts"
  name          = "aws-load-balancer-controller"
  namespace     = "kube-system"

  set = [{ name = "clusterName", value = module.eks.cluster_name }]

  create_role    = true
  set_irsa_names = ["serviceAccount.annotations.eks\\.amazonaws\\.com/role-arn"]
}
`)
	r := releaseNamed(m, "aws-load-balancer-controller")
	if r == nil || r.Namespace != "kube-system" || r.Version != "1.7.1" || r.Address != "module.lbc.helm_release.this[0]" {
		t.Fatalf("release: %+v", r)
	}
	if r.Values["clusterName"] != "${module.eks.cluster_name}" {
		t.Errorf("set value: %v", r.Values["clusterName"])
	}
	if !slices.Contains(r.Preset, "serviceAccount.annotations.eks.amazonaws.com/role-arn") {
		t.Errorf("preset %v", r.Preset)
	}
}

// A module eksdoctor does not model that creates compute (here EKS Blueprints
// v4) is capacity that cannot be seen, and said: its node groups are not
// guessed, and placement on them is unknown rather than refused.
func TestOpaqueModuleWithCompute(t *testing.T) {
	t.Parallel()
	m, unresolved := loadSrcUnresolved(t, `
module "eks_blueprints" {
  source = "github.com/aws-ia/terraform-aws-eks-blueprints?ref=v4.16.0"

  cluster_name = "demo"
  managed_node_groups = {
    mg_5 = { node_group_name = "managed-ondemand", instance_types = ["m5.large"] }
  }
}

module "vpc" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "~> 5.0"
  name    = "demo"
}
`)
	want := []string{"module.eks_blueprints (github.com/aws-ia/terraform-aws-eks-blueprints?ref=v4.16.0) is not a module eksdoctor models: the compute and add-ons it creates from managed_node_groups are not analysed"}
	if !cmp.Equal(unresolved, want) {
		t.Errorf("unresolved %q, want %q", unresolved, want)
	}
	if len(m.Unseen) != 1 || m.Unseen[0].What != "what module.eks_blueprints creates" {
		t.Errorf("unseen capacity %+v", m.Unseen)
	}
}

// Which inputs of a module eksdoctor does not model say it creates compute.
func TestOpaqueComputeInputs(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"managed_node_groups":                 true,
		"eks_managed_node_groups":             true,
		"fargate_profiles":                    true,
		"enable_karpenter":                    true,
		"enable_karpenter_resources":          true,
		"karpenter_resources_helm_config":     true,
		"node_pools":                          true,
		"attach_karpenter_controller_policy":  false,
		"karpenter_controller_cluster_name":   false,
		"karpenter_sqs_queue_arn":             false,
		"cluster_name":                        false,
		"enable_aws_load_balancer_controller": false,
	} {
		if got := computeInput.MatchString(name) && !iamInput.MatchString(name); got != want {
			t.Errorf("%s: compute %v, want %v", name, got, want)
		}
	}
}

// A local source that is not in the inputs is recognised by its inputs, and
// said; sources recognised as nothing are said once each, whatever the number of
// calls.
func TestMissingLocalSources(t *testing.T) {
	t.Parallel()
	m, unresolved := loadSrcUnresolved(t, blueprintsEKS+`
module "addons" {
  source = "../../"

  cluster_name      = module.eks.cluster_name
  cluster_endpoint  = module.eks.cluster_endpoint
  oidc_provider_arn = module.eks.oidc_provider_arn
  enable_karpenter  = true
}

module "user_data_a" {
  source = "../../modules/_user_data"
  platform = "al2023"
}
module "user_data_b" {
  source = "../../modules/_user_data"
  platform = "bottlerocket"
}
`)
	if releaseNamed(m, "karpenter") == nil {
		t.Error("the Karpenter release of the module assumed from its inputs is missing")
	}
	sort.Strings(unresolved)
	want := []string{
		"the source ../../modules/_user_data of 2 module calls (module.user_data_a, module.user_data_b) is not in the inputs; what it creates is not analysed and its outputs are unknown",
		"the source of module.addons (../../) is not in the inputs; its inputs are those of aws-ia/eks-blueprints-addons, which is assumed",
		"the version of module.addons (aws-ia/eks-blueprints-addons) is not pinned; release 1.24.3, the newest eksdoctor knows, is assumed",
	}
	if diff := cmp.Diff(want, unresolved); diff != "" {
		t.Errorf("unresolved (-want +got):\n%s", diff)
	}
}

// A git source pinned to a commit is not said to be unpinned.
func TestBlueprintsAddonsPinnedToACommit(t *testing.T) {
	t.Parallel()
	_, unresolved := loadSrcUnresolved(t, blueprintsEKS+`
module "addons" {
  source = "github.com/aws-ia/terraform-aws-eks-blueprints-addons?ref=08650fd2b4bc894bbe3d7b4d2a3b3e8b4c1d2e3f"

  cluster_name      = module.eks.cluster_name
  cluster_endpoint  = module.eks.cluster_endpoint
  oidc_provider_arn = module.eks.oidc_provider_arn
}
`)
	want := []string{"the version of module.addons (aws-ia/eks-blueprints-addons) is pinned to ref 08650fd2b4bc894bbe3d7b4d2a3b3e8b4c1d2e3f, which is not a release eksdoctor knows; release 1.24.3, the newest eksdoctor knows, is assumed"}
	if diff := cmp.Diff(want, unresolved); diff != "" {
		t.Errorf("unresolved (-want +got):\n%s", diff)
	}
}

// A git source pinned to a release tag installs that release.
func TestBlueprintsAddonsPinnedToATag(t *testing.T) {
	t.Parallel()
	m := loadSrc(t, blueprintsEKS+`
module "addons" {
  source = "git::https://github.com/aws-ia/terraform-aws-eks-blueprints-addons.git?ref=v1.16.3"

  cluster_name      = module.eks.cluster_name
  cluster_endpoint  = module.eks.cluster_endpoint
  oidc_provider_arn = module.eks.oidc_provider_arn
  enable_karpenter  = true
}
`)
	if k := releaseNamed(m, "karpenter"); k == nil || k.Version != "0.35.0" {
		t.Errorf("karpenter release %+v, want chart 0.35.0 of release 1.16.3", k)
	}
}

// OpenTofu evaluates variables in module sources: such a source is what
// eksdoctor cannot follow, not invalid input.
func TestModuleSourceExpression(t *testing.T) {
	t.Parallel()
	_, unresolved := loadSrcUnresolved(t, `
variable "pf_module_source" {
  default = "github.com/panfactum/stack.git//packages/infrastructure/"
}
module "constants" {
  source = "${var.pf_module_source}kube_constants"
}
`)
	want := []string{`the source of module.constants is an expression ("${var.pf_module_source}kube_constants"), which OpenTofu evaluates early and Terraform rejects; what the module creates is not analysed and its outputs are unknown`}
	if diff := cmp.Diff(want, unresolved); diff != "" {
		t.Errorf("unresolved (-want +got):\n%s", diff)
	}
}
