package lint

import (
	"sort"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// The F4 checks: the node role of every EC2NodeClass must be authorized as a node
// for the cluster's authentication mode, and the roles meant for pods (the
// Karpenter controller role) or for Fargate must never stand in for it.

// identityDeclared reports whether the configuration says anything about how
// principals join the cluster; a bundle of Karpenter manifests alone does not, and
// gets no identity findings at all.
func identityDeclared(m *cluster.Model) bool {
	id := m.Identity
	return m.Cluster.Defined || id.AwsAuth != nil || len(id.AccessEntries) > 0 || len(id.Roles) > 0
}

func sortedNodeClasses(m *cluster.Model) []*cluster.NodeClass {
	out := append([]*cluster.NodeClass(nil), m.NodeClasses...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Object.Ref().Less(out[j].Object.Ref()) })
	return out
}
