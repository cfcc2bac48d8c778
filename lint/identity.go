package lint

import (
	"sort"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/identity"
	"github.com/eksdoctor/eksdoctor/write"
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

// asWritten names a role the way the configuration refers to it: the expression
// when the reference is one, else its name.
func asWritten(r identity.Role) string {
	if e, ok := cluster.UnknownExpr(r.Text); ok {
		return e
	}
	return r.String()
}

// correctMapping rewrites the first explicit aws-auth mapping of a role that has
// problems into the one the purpose needs: its username and groups, the ARN
// without an IAM path. withPathOnly leaves alone a mapping whose path problem
// cannot be seen in a parsed ARN.
func correctMapping(m *cluster.Model, found []identity.Found, p identity.Purpose, withPathOnly bool) (Edit, cluster.RoleMapping, bool) {
	for _, f := range explicitMappings(found) {
		if len(f.Problems) == 0 || f.Mapping == nil {
			continue
		}
		fixed := *f.Mapping
		if arn, ok := identity.ParseRoleARN(fixed.RoleARN); ok && arn.HasPath() {
			fixed.RoleARN = arn.WithoutPath()
		} else if withPathOnly && f.PathInARN {
			continue
		}
		fixed.Username = p.Username()
		fixed.Groups = unionGroups(fixed.Groups, p.Groups())
		if e, ok := write.AwsAuthMapping(m, f.Mapping, &fixed); ok {
			return e, fixed, true
		}
	}
	return Edit{}, cluster.RoleMapping{}, false
}

func copyJSONList(v any) []any {
	l, _ := cluster.CopyJSON(v).([]any)
	return l
}
