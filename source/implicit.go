package source

import (
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/manifest"
)

// defaultAddons are the add-ons EKS installs with a cluster unless told not to
// (bootstrap_self_managed_addons = false; eksctl's addonsConfig.
// disableDefaultAddons; terraform-aws-modules/eks v21, which always says false):
// the VPC CNI, kube-proxy and CoreDNS. eksctl installs the same three.
var defaultAddons = []string{"vpc-cni", "kube-proxy", "coredns"}

// implicitAddons adds to a configuration that defines an EKS cluster the default
// add-ons it does not declare: they run whether or not the user wrote them, with
// the scheduling attributes of their own (CoreDNS tolerates CriticalAddonsOnly
// and needs a Linux node; it does not tolerate Fargate's taint), so a cluster
// without capacity for them leaves them Pending, and everything that needs DNS
// after them. A running cluster shows them as they are.
func implicitAddons(m *cluster.Model) {
	if m.Live != nil || !m.Cluster.Defined || m.Cluster.NoDefaultAddons != "" {
		return
	}
	declared := map[string]bool{}
	for _, a := range m.Addons {
		declared[a.Name] = true
	}
	// Workloads the inputs install by other means (a manifest of CoreDNS, a
	// chart) stand for the add-on.
	names := map[string]string{"vpc-cni": "aws-node", "kube-proxy": "kube-proxy", "coredns": "coredns"}
	present := map[string]bool{}
	for _, o := range m.Objects {
		if o.Namespace == "kube-system" && (o.Kind == "Deployment" || o.Kind == "DaemonSet") {
			present[o.Name] = true
		}
	}
	decl := newAddonDecl(m)
	for _, name := range defaultAddons {
		if declared[name] || present[names[name]] {
			continue
		}
		m.Addons = append(m.Addons, &cluster.Addon{
			Name:     name,
			Origin:   m.Cluster.Origin,
			Decl:     decl,
			Implicit: "EKS installs it with cluster " + clusterLabel(m.Cluster),
		})
	}
}

// newAddonDecl is where a configuration declares an add-on it does not
// declare yet: the addons list of its eksctl ClusterConfig, the add-ons input
// of its terraform-aws-eks module call, or an aws_eks_addon beside its
// aws_eks_cluster.
func newAddonDecl(m *cluster.Model) cluster.Decl {
	addr := m.Cluster.Address
	switch {
	case strings.HasPrefix(addr, "module."):
		return cluster.Decl{Kind: cluster.DeclNew, Block: addr, List: "cluster_addons"}
	case strings.Contains(addr, "aws_eks_cluster."):
		return cluster.Decl{Kind: cluster.DeclNew, Block: addr}
	}
	for _, o := range m.Objects {
		if manifest.IsClusterConfig(o) && o.Origin.File == m.Cluster.Origin.File {
			return cluster.Decl{Kind: cluster.DeclNew, Object: o, List: "addons"}
		}
	}
	return cluster.Decl{}
}

func clusterLabel(c cluster.EKSCluster) string {
	if c.Name != "" && !cluster.IsUnknown(c.Name) {
		return c.Name + " (" + c.Address + ")"
	}
	return c.Address
}
