package identity

import (
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// ModuleNodeRole is the node role of the module call that made a role (the
// Karpenter module's node role for its controller role), when the role is
// one a module call makes: the node role the configuration shows, else the
// module's node_iam_role_arn output (role_arn for the v19 module's IRSA
// role, whose node role output had that name). ok is false for a role no
// module call makes, and for a cluster role.
func (r *Resolver) ModuleNodeRole(made Role) (Role, bool) {
	i := strings.LastIndexByte(made.Key, '#')
	if i <= 0 || made.Kind == cluster.RoleCluster {
		return Role{}, false
	}
	call := made.Key[:i]
	want := call + "#node"
	for _, c := range r.NodeRoles() {
		if c.Key == want {
			return c, true
		}
	}
	// The module's node role even when the configuration does not show it.
	if strings.HasPrefix(made.Ref, call+".irsa") {
		return r.Resolve(cluster.Unknown(call + ".role_arn")), true
	}
	return r.Resolve(cluster.Unknown(call + ".node_iam_role_arn")), true
}
