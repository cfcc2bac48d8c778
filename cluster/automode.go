package cluster

import "slices"

// Switch is a setting a configuration may write on, off, or not at all.
type Switch int

const (
	// SwitchUnset: not written (each writer's default applies).
	SwitchUnset Switch = iota
	SwitchOn
	SwitchOff
	// SwitchUnknown: written, but not known before apply.
	SwitchUnknown
)

func (s Switch) String() string {
	switch s {
	case SwitchOn:
		return "true"
	case SwitchOff:
		return "false"
	case SwitchUnknown:
		return "not known before apply"
	}
	return "not set"
}

// AutoMode is EKS Auto Mode as the inputs switch it on: what each of its three
// settings says, the built-in NodePools they enable and the node role, as the
// request to EKS will carry them (a module's logic applied). A cluster the
// inputs do not switch to Auto Mode has none (EKSCluster.AutoMode is nil).
type AutoMode struct {
	// Compute, BlockStorage and LoadBalancing are computeConfig.enabled,
	// storageConfig.blockStorage.enabled and
	// kubernetesNetworkConfig.elasticLoadBalancing.enabled, which EKS
	// requires all on or all off.
	Compute, BlockStorage, LoadBalancing Switch
	// NodePools are the built-in NodePools enabled (node_pools,
	// nodePools), sorted; NodePoolsSet says they are written (an empty list
	// enables none), NodePoolsUnknown that they are not known before apply.
	NodePools        []string
	NodePoolsSet     bool
	NodePoolsUnknown bool
	// NodeRole is the built-in NodePools' node role (node_role_arn,
	// nodeRoleARN, or the role a module creates): an ARN or ${expression};
	// "" when none is sent.
	NodeRole string
	// BootstrapAddons is bootstrap_self_managed_addons as the request
	// carries it: EKS requires it false with Auto Mode.
	BootstrapAddons Switch
	// Ignored says what the configuration writes that its writer drops
	// ("node_pools without enabled": terraform-aws-eks v20 sends neither).
	Ignored string
	// From says who declares it ("module.eks (terraform-aws-modules/eks
	// v21) compute_config", "aws_eks_cluster.this", "eksctl
	// autoModeConfig", "the running cluster"); Origin where.
	From   string
	Origin Origin
	// NodePoolsAt is where the built-in NodePools are written or would be:
	// the edit that enables one goes there (Decl.Key names the argument,
	// "node_pools" or "nodePools").
	NodePoolsAt Decl
	// Live marks what a running cluster shows (its Auto Mode NodePools and
	// nodes): the switches are not visible, only that it runs.
	Live bool
}

// On reports whether Auto Mode's compute is on (or may be: not known).
func (a *AutoMode) On() bool {
	return a != nil && (a.Compute == SwitchOn || a.Compute == SwitchUnknown || a.Live)
}

// Enables reports whether a built-in NodePool is enabled.
func (a *AutoMode) Enables(pool string) bool {
	return a.On() && slices.Contains(a.NodePools, pool)
}
