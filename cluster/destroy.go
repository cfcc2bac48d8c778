package cluster

// DestroyKind is what a Terraform resource or module call is to a cluster's
// teardown.
type DestroyKind int

const (
	_ DestroyKind = iota
	// DestroyRelease is a Helm release: destroying it uninstalls the chart.
	DestroyRelease
	// DestroyObjectManifest is a manifest resource whose delete returns only
	// once the object is gone (kubernetes_manifest).
	DestroyObjectManifest
	// DestroyManifest is a manifest resource whose delete returns at once
	// unless Destroy.Waits (kubectl_manifest).
	DestroyManifest
	// DestroyIAMRole is an IAM role.
	DestroyIAMRole
	// DestroyIAMPolicy is an IAM policy, inline role policy or policy
	// attachment.
	DestroyIAMPolicy
	// DestroyInstanceProfile is an IAM instance profile.
	DestroyInstanceProfile
	// DestroyPodIdentity is an EKS Pod Identity association.
	DestroyPodIdentity
	// DestroyInterruption is an SQS queue or policy, or an EventBridge rule or
	// target: what carries the interruption events Karpenter reads.
	DestroyInterruption
	// DestroyCluster is an EKS cluster resource.
	DestroyCluster
	// DestroyNetwork is a VPC, subnet, Internet or NAT gateway, route table,
	// route or route table association.
	DestroyNetwork
	// DestroyKarpenterModule is a call of the karpenter sub-module of
	// terraform-aws-modules/eks (or a module so named) that creates the
	// controller's IAM role, queue and rules.
	DestroyKarpenterModule
	// DestroyNetworkModule is a call of terraform-aws-modules/vpc (or a
	// module so named).
	DestroyNetworkModule
	// DestroyEndpointsModule is a call of the vpc-endpoints sub-module of
	// terraform-aws-modules/vpc.
	DestroyEndpointsModule
)

// Destroy is what the Terraform loader knows of a resource for its teardown.
type Destroy struct {
	Kind DestroyKind
	// Waits: destroying the resource returns only once the Kubernetes objects
	// it deletes are gone (a Helm release unless told not to wait, a
	// kubectl_manifest told to wait, every kubernetes_manifest).
	Waits bool
	// Never: destroying the resource never deletes its Kubernetes objects.
	Never bool
	// Replaces: every change of the resource deletes and recreates its
	// Kubernetes objects rather than updating them.
	Replaces bool
	// Egress: for a resource, network the nodes reach AWS through (an
	// Internet, egress-only or NAT gateway, a route table, route,
	// association or VPC endpoint); for a module call, that its egress parts
	// (PartEgress) are created, NAT gateways being enabled.
	Egress bool
	// Gateway: an Internet or NAT gateway.
	Gateway bool
	// ForNodes: a role policy, attachment or instance profile whose role
	// argument names a node, worker or cluster role rather than a
	// controller's.
	ForNodes bool
	// NodeRole: an IAM role whose address names it for nodes or workers.
	NodeRole bool
	// Karpenter: a module call that installs the Karpenter controller, its
	// IAM role and its queue itself (aws-ia/eks-blueprints-addons and its
	// predecessors with enable_karpenter = true).
	Karpenter bool
	// Role is the role argument of an IAM policy, role policy, attachment or
	// instance profile, as evaluated (a placeholder when unknown).
	Role string
}
