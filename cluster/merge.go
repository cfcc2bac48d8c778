package cluster

// Merge joins partial models from several loaders into one. Lists are concatenated
// in argument order; for single-valued facts (the cluster, the authentication mode,
// the Karpenter installation) the first model that knows them wins, and an explicit
// value beats a defaulted one.
func Merge(parts ...*Model) *Model {
	m := &Model{}
	for _, p := range parts {
		if p == nil {
			continue
		}
		m.Objects = append(m.Objects, p.Objects...)
		m.Workloads = append(m.Workloads, p.Workloads...)
		m.Pods = append(m.Pods, p.Pods...)
		m.NodeGroups = append(m.NodeGroups, p.NodeGroups...)
		m.FargateProfiles = append(m.FargateProfiles, p.FargateProfiles...)
		m.NodePools = append(m.NodePools, p.NodePools...)
		m.NodeClasses = append(m.NodeClasses, p.NodeClasses...)
		m.NodeClaims = append(m.NodeClaims, p.NodeClaims...)
		m.Nodes = append(m.Nodes, p.Nodes...)
		m.HelmReleases = append(m.HelmReleases, p.HelmReleases...)
		m.Addons = append(m.Addons, p.Addons...)
		m.Problems = append(m.Problems, p.Problems...)
		m.Notes = append(m.Notes, p.Notes...)
		m.Suppressions = append(m.Suppressions, p.Suppressions...)
		m.Unseen = append(m.Unseen, p.Unseen...)
		m.Inputs = append(m.Inputs, p.Inputs...)

		if !m.Cluster.Defined && p.Cluster.Defined {
			m.Cluster = p.Cluster
		}
		mergeIdentity(&m.Identity, &p.Identity)
		mergeKarpenter(&m.Karpenter, &p.Karpenter)
		m.Network.add(p.Network)

		if p.Terraform != nil {
			if m.Terraform == nil {
				m.Terraform = NewGraph()
			}
			if m.Terraform.Addressing == nil {
				m.Terraform.Addressing = p.Terraform.Addressing
			}
			m.Terraform.Modules = append(m.Terraform.Modules, p.Terraform.Modules...)
			for a, r := range p.Terraform.Nodes {
				m.Terraform.Nodes[a] = r
			}
		}
		if p.Live != nil && m.Live == nil {
			m.Live = p.Live
		}
	}
	return m
}

func mergeIdentity(dst, src *Identity) {
	if src.AuthMode != "" && (dst.AuthMode == "" || (dst.AuthModeDefaulted && !src.AuthModeDefaulted)) {
		dst.AuthMode, dst.AuthModeDefaulted, dst.AuthModeOrigin = src.AuthMode, src.AuthModeDefaulted, src.AuthModeOrigin
	}
	if src.AwsAuth != nil {
		if dst.AwsAuth == nil {
			cp := *src.AwsAuth
			dst.AwsAuth = &cp
		} else {
			dst.AwsAuth.Roles = append(dst.AwsAuth.Roles, src.AwsAuth.Roles...)
			dst.AwsAuth.Complete = dst.AwsAuth.Complete && src.AwsAuth.Complete
		}
	}
	dst.AccessEntries = append(dst.AccessEntries, src.AccessEntries...)
	dst.PolicyAssociations = append(dst.PolicyAssociations, src.PolicyAssociations...)
	dst.Roles = append(dst.Roles, src.Roles...)
	dst.ServiceAccounts = append(dst.ServiceAccounts, src.ServiceAccounts...)
}

func mergeKarpenter(dst, src *Karpenter) {
	if dst.Version == "" && src.Version != "" {
		dst.Version, dst.VersionFrom = src.Version, src.VersionFrom
	}
	if dst.Namespace == "" {
		dst.Namespace = src.Namespace
	}
	if dst.Release == nil {
		dst.Release = src.Release
	}
	if dst.Controller == nil {
		dst.Controller = src.Controller
	}
	if dst.ControllerRole == "" {
		dst.ControllerRole = src.ControllerRole
	}
	if dst.NodeRole == "" {
		dst.NodeRole = src.NodeRole
	}
	if dst.Address == "" {
		dst.Address, dst.Origin = src.Address, src.Origin
	}
}

// Empty reports whether a model holds nothing at all: no object, capacity,
// release, add-on, problem, note or configuration.
func (m *Model) Empty() bool {
	return len(m.Objects) == 0 && len(m.Workloads) == 0 && len(m.Pods) == 0 && len(m.NodeGroups) == 0 &&
		len(m.FargateProfiles) == 0 && len(m.NodePools) == 0 && len(m.NodeClasses) == 0 && len(m.NodeClaims) == 0 &&
		len(m.Nodes) == 0 && len(m.Unseen) == 0 && len(m.HelmReleases) == 0 && len(m.Addons) == 0 &&
		len(m.Problems) == 0 && len(m.Notes) == 0 && len(m.Suppressions) == 0 && len(m.Inputs) == 0 &&
		!m.Cluster.Defined && m.Terraform == nil && m.Live == nil
}
