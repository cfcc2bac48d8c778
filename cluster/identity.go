package cluster

// Authentication modes of an EKS cluster.
const (
	AuthConfigMap       = "CONFIG_MAP"
	AuthAPIAndConfigMap = "API_AND_CONFIG_MAP"
	AuthAPI             = "API"
)

// Access entry types.
const (
	AccessStandard     = "STANDARD"
	AccessEC2Linux     = "EC2_LINUX"
	AccessEC2Windows   = "EC2_WINDOWS"
	AccessFargateLinux = "FARGATE_LINUX"
	// AccessEC2 is the type of the access entry of an EKS Auto Mode node role.
	AccessEC2 = "EC2"
)

// AutoNodePolicy is the access policy an EKS Auto Mode node role's EC2 access
// entry needs (cluster scope).
const AutoNodePolicy = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSAutoNodePolicy"

// RoleKind classifies an IAM role by what it is for.
type RoleKind int

const (
	RoleUnknown RoleKind = iota
	// RoleNode is assumed by EC2 instances (trust ec2.amazonaws.com).
	RoleNode
	// RoleController is assumed by a pod (IRSA through the cluster's OIDC provider,
	// or EKS Pod Identity: pods.eks.amazonaws.com), e.g. the Karpenter controller.
	RoleController
	// RoleFargate is a Fargate pod execution role (eks-fargate-pods.amazonaws.com).
	RoleFargate
	// RoleCluster is an EKS cluster role, assumed by the control plane
	// (eks.amazonaws.com).
	RoleCluster
)

// NotForNodes reports whether the role is one EC2 instances cannot assume: a
// pod's role (a controller's, a Fargate pod execution role) or the control
// plane's.
func (k RoleKind) NotForNodes() bool {
	return k == RoleController || k == RoleFargate || k == RoleCluster
}

func (k RoleKind) String() string {
	switch k {
	case RoleNode:
		return "node role"
	case RoleController:
		return "controller role"
	case RoleFargate:
		return "Fargate pod execution role"
	case RoleCluster:
		return "EKS cluster role"
	}
	return "role"
}

// Identity is how IAM principals become Kubernetes users in the cluster.
type Identity struct {
	// AuthMode is the cluster's authentication_mode; "" when not known.
	AuthMode string
	// AuthModeDefaulted is set when AuthMode is the default of the tool in use
	// rather than written by the user.
	AuthModeDefaulted bool
	AuthModeOrigin    Origin

	// AwsAuth is the aws-auth ConfigMap as the configuration defines it; nil when
	// the configuration does not manage it.
	AwsAuth *AwsAuth

	AccessEntries []AccessEntry
	// PolicyAssociations are the access policies associated with principals.
	PolicyAssociations []PolicyAssociation
	Roles              []*IAMRole
	// ServiceAccounts are IAM-enabled service accounts (IRSA, Pod Identity).
	ServiceAccounts []ServiceAccountIdentity
}

// AwsAuth is the kube-system/aws-auth ConfigMap.
type AwsAuth struct {
	Roles []RoleMapping
	// Complete is false when some entries could not be resolved statically (an
	// unknown list, a for expression over a data source).
	Complete bool
	// Managed tells who writes it: "user" (a manifest, Terraform kubernetes_config_map,
	// the terraform-aws-eks aws-auth code, eksctl iamIdentityMappings) or "eks".
	Managed string
	Origin  Origin
	Address string
}

// RoleMapping is one mapRoles entry.
type RoleMapping struct {
	RoleARN  string
	Username string
	Groups   []string
	Origin   Origin
}

// AccessEntry is an EKS access entry.
type AccessEntry struct {
	PrincipalARN     string
	Type             string // "" means the API default, STANDARD
	Username         string
	KubernetesGroups []string
	Origin           Origin
	Address          string
	// Decl is how the entry is declared, for the writers of fixes.
	Decl Decl
	// Implicit marks entries EKS creates by itself (managed node groups, Fargate
	// profiles, the terraform-aws-eks karpenter module).
	Implicit bool
}

// PolicyAssociation associates an access policy with an access entry's
// principal (aws_eks_access_policy_association, a module's
// policy_associations, eksctl accessPolicies).
type PolicyAssociation struct {
	PrincipalARN string
	PolicyARN    string
	Origin       Origin
	Address      string
	// Implicit marks associations EKS makes by itself (the built-in Auto
	// Mode node role's).
	Implicit bool
}

// EffectiveType returns the access entry type with the API default applied.
func (a AccessEntry) EffectiveType() string {
	if a.Type == "" {
		return AccessStandard
	}
	return a.Type
}

// IAMRole is an IAM role the configuration creates or names.
type IAMRole struct {
	// Name is the role name; NamePrefix is set when the name is only a prefix to
	// which a random suffix is appended (name_prefix, node_iam_role_use_name_prefix).
	Name       string
	NamePrefix bool
	ARN        string
	Path       string
	Kind       RoleKind
	// Trust lists the trust policy principals (services, federated providers).
	Trust []string
	// Refs lists the expressions that evaluate to this role's ARN or name
	// ("module.karpenter.node_iam_role_arn", "aws_iam_role.karpenter_node.name").
	Refs    []string
	Origin  Origin
	Address string
	// MappedAsNode, when set, says that the tool that creates the role also
	// maps it in aws-auth as a node role (eksctl's Karpenter node role), and
	// names that entry.
	MappedAsNode string
}

// ServiceAccountIdentity binds a Kubernetes service account to an IAM role.
type ServiceAccountIdentity struct {
	Namespace string
	Name      string
	RoleARN   string
	// Mechanism is "irsa" or "pod-identity".
	Mechanism string
	Origin    Origin
}

// Karpenter is what the configuration says about the Karpenter installation.
type Karpenter struct {
	// Version is the Karpenter version in use ("1.0.8"), "" when unknown.
	Version string
	// VersionFrom says where Version came from: "chart version of helm_release.karpenter",
	// "image tag", "CRD apiVersion karpenter.sh/v1", "assumed".
	VersionFrom string
	Namespace   string
	Release     *HelmRelease
	// Controller is the controller workload, nil when the configuration does not
	// install Karpenter itself.
	Controller *Workload
	// ControllerRole and NodeRole are the role ARNs (or placeholders) the
	// installation uses; Address is the karpenter sub-module or resource address.
	ControllerRole string
	NodeRole       string
	Address        string
	Origin         Origin
}
