package terraform

import (
	"regexp"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// What the outputs of the registry modules eksdoctor models depend on, read
// from each module's outputs.tf (and the depends_on of its resources) across
// the versions listed. Terraform builds its graph per output: reading
// module.eks.cluster_name waits for what that output's expression and its
// depends_on refer to, not for every resource of the module. An output not
// listed here is taken to depend on the whole module.

// modulePart describes a part of a modelled module.
type modulePart struct {
	name     string
	prefixes []string
	deps     []string
}

type moduleModel struct {
	parts   []modulePart
	outputs map[string]string // output -> part
}

// eksModel: terraform-aws-modules/eks v18 to v21. The cluster part holds
// aws_eks_cluster.this and what it needs or what depends on it alone (IAM
// role, security groups, KMS key, log group, OIDC provider, access entries,
// the before_compute add-ons, time_sleep); v20 and v21 cluster_* outputs
// also depend_on the access entries and policy associations, which depend on
// the cluster only. The Fargate profiles and node groups are sub-modules
// that read the cluster; aws_eks_addon.this (cluster_addons) and the v19
// aws-auth ConfigMap depend on the compute.
var eksModel = moduleModel{
	parts: []modulePart{
		{name: "cluster"},
		{name: cluster.PartFargate, prefixes: []string{"module.fargate_profile"}, deps: []string{"cluster"}},
		{name: "node-groups", prefixes: []string{"module.eks_managed_node_group", "module.self_managed_node_group"}, deps: []string{"cluster"}},
		{name: "after-compute", prefixes: []string{"aws_eks_addon.this", "kubernetes_config_map.aws_auth", "kubernetes_config_map_v1_data.aws_auth"}, deps: []string{"cluster", cluster.PartFargate, "node-groups"}},
	},
	outputs: partOutputs(map[string][]string{
		"cluster": {
			"cluster_arn", "cluster_certificate_authority_data", "cluster_endpoint", "cluster_id", "cluster_name",
			"cluster_oidc_issuer_url", "cluster_version", "cluster_platform_version", "cluster_status",
			"cluster_primary_security_group_id", "access_entries", "access_policy_associations",
			"kms_key_arn", "kms_key_id", "kms_key_policy", "cluster_security_group_arn", "cluster_security_group_id",
			"node_security_group_arn", "node_security_group_id", "oidc_provider", "oidc_provider_arn",
			"cluster_tls_certificate_sha1_fingerprint", "cluster_iam_role_name", "cluster_iam_role_arn",
			"cluster_iam_role_unique_id", "cloudwatch_log_group_name", "cloudwatch_log_group_arn",
		},
		cluster.PartFargate: {"fargate_profiles"},
		"node-groups": {
			"eks_managed_node_groups", "eks_managed_node_groups_autoscaling_group_names",
			"self_managed_node_groups", "self_managed_node_groups_autoscaling_group_names",
		},
		"after-compute": {"cluster_addons"},
	}),
}

// vpcModel: terraform-aws-modules/vpc v2 to v6. Subnets read the VPC (and its
// secondary CIDR associations); the NAT gateways sit in the public subnets,
// and routes, route tables and their associations read the gateways and the
// subnets. Nothing of the VPC or the subnets reads the gateways or routes, so
// module.vpc.private_subnets does not wait for the NAT gateway.
var vpcModel = moduleModel{
	parts: []modulePart{
		{name: "vpc"},
		{name: "subnets", prefixes: []string{"aws_subnet."}, deps: []string{"vpc"}},
		{name: cluster.PartEgress, prefixes: []string{
			"aws_internet_gateway.", "aws_egress_only_internet_gateway.", "aws_eip.nat", "aws_nat_gateway.",
			"aws_route_table.", "aws_route_table_association.", "aws_route.",
		}, deps: []string{"vpc", "subnets"}},
	},
	outputs: partOutputs(map[string][]string{
		"vpc": {
			"vpc_id", "vpc_arn", "vpc_cidr_block", "default_security_group_id", "vpc_ipv6_cidr_block",
			"vpc_secondary_cidr_blocks", "vpc_owner_id", "azs", "name",
		},
		"subnets": {
			"private_subnets", "private_subnet_arns", "private_subnets_cidr_blocks", "private_subnets_ipv6_cidr_blocks",
			"public_subnets", "public_subnet_arns", "public_subnets_cidr_blocks", "public_subnets_ipv6_cidr_blocks",
			"intra_subnets", "intra_subnet_arns", "intra_subnets_cidr_blocks", "intra_subnets_ipv6_cidr_blocks",
			"database_subnets", "database_subnet_arns", "database_subnets_cidr_blocks",
			"elasticache_subnets", "redshift_subnets", "outpost_subnets",
		},
		cluster.PartEgress: {
			"natgw_ids", "nat_ids", "nat_public_ips", "igw_id", "igw_arn",
			"private_route_table_ids", "public_route_table_ids", "intra_route_table_ids", "database_route_table_ids",
			"private_nat_gateway_route_ids", "public_internet_gateway_route_id",
		},
	}),
}

func partOutputs(byPart map[string][]string) map[string]string {
	out := map[string]string{}
	for part, names := range byPart {
		for _, n := range names {
			out[n] = part
		}
	}
	return out
}

var (
	vpcRegistryRE = regexp.MustCompile(`^(?:(?:registry\.terraform\.io|registry\.opentofu\.org)/)?terraform-aws-modules/vpc/aws/?$`)
	vpcGitRE      = regexp.MustCompile(`(?:^|[/:@])terraform-aws-modules/terraform-aws-vpc(?:\.git)?/?(?:\?(.*))?$`)
)

// modelOf returns the output model of a module call, nil when the module or
// its version is not modelled.
func modelOf(call *moduleCall) *moduleModel {
	switch {
	case call.kind == kindEKS && !isLocalSource(call.source):
		if d := call.declaredMajor; d != 0 && (d < 18 || d > newestMajor) {
			return nil
		}
		return &eksModel
	case vpcRegistryRE.MatchString(call.source):
		if v := majorOf(call.version); call.version != "" && (v < 2 || v > 6) {
			return nil
		}
		return &vpcModel
	case vpcGitRE.MatchString(call.source):
		mm := vpcGitRE.FindStringSubmatch(call.source)
		r := refRE.FindStringSubmatch(mm[1])
		if r == nil {
			return nil
		}
		if v := majorOf(r[1]); v < 2 || v > 6 {
			return nil
		}
		return &vpcModel
	}
	return nil
}

// modelledParts returns the parts of a call of a modelled registry module and
// what each output depends on; nil, nil when the module is not modelled.
func modelledParts(call *moduleCall, addr string) ([]cluster.ModulePart, map[string][]string) {
	model := modelOf(call)
	if model == nil {
		return nil, nil
	}
	partAddr := func(name string) string { return addr + "#" + name }
	var parts []cluster.ModulePart
	for _, p := range model.parts {
		mp := cluster.ModulePart{Address: partAddr(p.name), Name: p.name, Prefixes: p.prefixes}
		for _, d := range p.deps {
			mp.Deps = append(mp.Deps, partAddr(d))
		}
		parts = append(parts, mp)
	}
	outputs := map[string][]string{}
	for o, p := range model.outputs {
		outputs[o] = []string{partAddr(p)}
	}
	return parts, outputs
}

// PartOf returns what creates an address in the graph, as precisely as the
// graph knows: the resource itself, the part of a modelled module call that
// holds it ("module.eks#fargate" for a Fargate profile of
// terraform-aws-modules/eks), or the module call; "" when none.
func PartOf(g *cluster.Graph, addr string) string {
	node := graphNode(g, addr)
	if node == "" {
		return ""
	}
	r := g.Nodes[node]
	a := ConfigAddress(addr)
	if len(r.Parts) == 0 || len(a) <= len(node)+1 || a[:len(node)+1] != node+"." {
		return node
	}
	rest := a[len(node)+1:]
	def := node
	for _, p := range r.Parts {
		if len(p.Prefixes) == 0 {
			def = p.Address
		}
		for _, pre := range p.Prefixes {
			if len(rest) >= len(pre) && rest[:len(pre)] == pre {
				return p.Address
			}
		}
	}
	return def
}
