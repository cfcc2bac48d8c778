package terraform

import (
	"regexp"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// What a resource or module call is to a cluster's teardown, read from its
// type, its module source and its arguments (cluster.Destroy), and what the
// destroy planner asks of addresses (cluster.Addressing).

var (
	// karpenterModuleRE: the karpenter sub-module of terraform-aws-modules/eks,
	// or a local module so named.
	karpenterModuleRE = regexp.MustCompile(`(^|/)modules/karpenter/?$`)
	// vpcModuleRE: terraform-aws-modules/vpc and its sub-modules, or a local
	// module named vpc.
	vpcModuleRE          = regexp.MustCompile(`terraform-aws-modules/vpc/aws|(^|/)vpc/?$`)
	vpcEndpointsModuleRE = regexp.MustCompile(`terraform-aws-modules/vpc/aws//modules/vpc-endpoints/?$`)
	// nodeRoleRE matches a role argument or an address that names a node,
	// worker or cluster role: terraform-aws-eks outputs such as
	// module.eks.worker_iam_role_name, or a role resource whose name says so.
	nodeRoleRE = regexp.MustCompile(`(?i)(^|[._])(worker|node|nodes|cluster)_iam_role|aws_iam_role\.[a-z0-9_-]*(node|worker)`)
)

var destroyKinds = map[string]cluster.DestroyKind{
	"helm_release":                     cluster.DestroyRelease,
	"kubernetes_manifest":              cluster.DestroyObjectManifest,
	"kubectl_manifest":                 cluster.DestroyManifest,
	"aws_iam_role":                     cluster.DestroyIAMRole,
	"aws_iam_policy":                   cluster.DestroyIAMPolicy,
	"aws_iam_role_policy":              cluster.DestroyIAMPolicy,
	"aws_iam_role_policy_attachment":   cluster.DestroyIAMPolicy,
	"aws_iam_instance_profile":         cluster.DestroyInstanceProfile,
	"aws_eks_pod_identity_association": cluster.DestroyPodIdentity,
	"aws_sqs_queue":                    cluster.DestroyInterruption,
	"aws_sqs_queue_policy":             cluster.DestroyInterruption,
	"aws_cloudwatch_event_rule":        cluster.DestroyInterruption,
	"aws_cloudwatch_event_target":      cluster.DestroyInterruption,
	"aws_eks_cluster":                  cluster.DestroyCluster,
	"aws_vpc":                          cluster.DestroyNetwork,
	"aws_subnet":                       cluster.DestroyNetwork,
	"aws_nat_gateway":                  cluster.DestroyNetwork,
	"aws_internet_gateway":             cluster.DestroyNetwork,
	"aws_route_table":                  cluster.DestroyNetwork,
	"aws_route_table_association":      cluster.DestroyNetwork,
	"aws_route":                        cluster.DestroyNetwork,
}

// egressTypes are the resources through which nodes in private subnets reach
// AWS and the internet: gateways, route tables, routes, associations, VPC
// endpoints.
var egressTypes = map[string]bool{
	"aws_nat_gateway": true, "aws_internet_gateway": true, "aws_egress_only_internet_gateway": true,
	"aws_route_table": true, "aws_route_table_association": true, "aws_route": true, "aws_vpc_endpoint": true,
}

// NoteDestroy fills in what each resource and module call of a graph is to a
// cluster's teardown (cluster.Resource.Destroy), from its type, module source
// and evaluated arguments.
func NoteDestroy(g *cluster.Graph) {
	if g == nil {
		return
	}
	for _, r := range g.Nodes {
		r.Destroy = destroyOf(r)
	}
}

func destroyOf(r *cluster.Resource) cluster.Destroy {
	d := cluster.Destroy{Kind: destroyKinds[r.Type]}
	boolArg := func(name string) (bool, bool) {
		v, ok := r.Attrs[name].(bool)
		return v, ok
	}
	if r.Type == "module" {
		switch {
		case vpcEndpointsModuleRE.MatchString(r.Source):
			d.Kind = cluster.DestroyEndpointsModule
		case vpcModuleRE.MatchString(r.Source):
			d.Kind = cluster.DestroyNetworkModule
		case karpenterModuleRE.MatchString(r.Source):
			if create, ok := boolArg("create"); !ok || create {
				d.Kind = cluster.DestroyKarpenterModule
			}
		}
		// aws-ia/eks-blueprints-addons and its predecessors install the
		// controller, its IAM role and its queue themselves.
		d.Karpenter, _ = boolArg("enable_karpenter")
		// Only when NAT gateways are known to be enabled: the default of
		// terraform-aws-modules/vpc is false, and an unknown value is not
		// guessed.
		d.Egress, _ = boolArg("enable_nat_gateway")
		return d
	}
	d.Egress = egressTypes[r.Type]
	d.Gateway = r.Type == "aws_nat_gateway" || r.Type == "aws_internet_gateway"
	switch r.Type {
	case "helm_release":
		// helm uninstall waits for the chart's objects to be deleted, their
		// finalizers included, unless the release says wait = false [infer:
		// terraform-provider-helm passes wait to the uninstall].
		wait, ok := boolArg("wait")
		d.Waits = !ok || wait
	case "kubernetes_manifest":
		// It waits until the deleted object is gone [infer:
		// terraform-provider-kubernetes polls for the object after the delete
		// call, within its delete timeout].
		d.Waits = true
	case "kubectl_manifest":
		d.Waits, _ = boolArg("wait")
		d.Replaces, _ = boolArg("force_new")
	case "aws_iam_role":
		d.NodeRole = nodeRoleRE.MatchString(r.Address)
	case "aws_iam_role_policy", "aws_iam_role_policy_attachment", "aws_iam_instance_profile":
		role, _ := r.Attrs["role"].(string)
		d.Role = role
		d.ForNodes = role != "" && nodeRoleRE.MatchString(role)
	case "aws_iam_policy":
		d.Role, _ = r.Attrs["role"].(string)
	}
	d.Never, _ = boolArg("apply_only")
	return d
}

// Owner is the graph node that stands for an instance address: its resource
// without instance keys, or the innermost module call of the graph that holds
// it.
func (Addressing) Owner(g *cluster.Graph, addr string) string { return graphNode(g, addr) }

// Same reports whether two addresses name the same configuration address.
func (Addressing) Same(a, b string) bool { return ConfigAddress(a) == ConfigAddress(b) }

// Within reports whether addr is inside the module call `call`.
func (Addressing) Within(addr, call string) bool {
	return call != "" && strings.HasPrefix(addr, call+".")
}

// Depth is how many module calls an address is nested in.
func (Addressing) Depth(addr string) int {
	n := 0
	for a := enclosingModule(ConfigAddress(addr)); a != ""; a = enclosingModule(a) {
		n++
	}
	return n
}

// Ref names the resource or module call at an address as the object of a
// finding.
func (Addressing) Ref(addr string) (cluster.ObjectRef, bool) {
	parts := strings.Split(addr, ".")
	switch {
	case len(parts) == 2 && parts[0] == "module":
		return cluster.ObjectRef{Kind: "module", Name: parts[1]}, true
	case len(parts) == 2:
		return cluster.ObjectRef{Kind: parts[0], Name: parts[1]}, true
	case len(parts) > 2:
		return cluster.ObjectRef{Kind: parts[len(parts)-2], Name: addr}, true
	}
	return cluster.ObjectRef{}, false
}
