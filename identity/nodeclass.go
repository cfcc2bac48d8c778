package identity

import (
	"fmt"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// NodeClassRole is the node role an EC2NodeClass gives its instances.
type NodeClassRole struct {
	Role Role
	// Field is the EC2NodeClass field it comes from: "spec.role" or
	// "spec.instanceProfile".
	Field string
	// Unresolved explains why the role behind spec.instanceProfile is not known;
	// Role is then zero.
	Unresolved string
	// Windows is set when the node class launches Windows instances.
	Windows bool
}

// NodeClassRole resolves the node role of an EC2NodeClass: spec.role, or the role
// of the instance profile named by spec.instanceProfile. ok is false when the node
// class names neither.
func (r *Resolver) NodeClassRole(nc *cluster.NodeClass) (NodeClassRole, bool) {
	out := NodeClassRole{Windows: IsWindowsNodeClass(nc)}
	switch {
	case strings.TrimSpace(nc.Role) != "":
		out.Field = "spec.role"
		out.Role = r.Resolve(nc.Role)
	case strings.TrimSpace(nc.InstanceProfile) != "":
		out.Field = "spec.instanceProfile"
		out.Role, out.Unresolved = r.instanceProfileRole(nc.InstanceProfile)
	default:
		return out, false
	}
	return out, true
}

// IsWindowsNodeClass reports whether a node class launches Windows instances.
func IsWindowsNodeClass(nc *cluster.NodeClass) bool {
	if strings.HasPrefix(strings.ToLower(nc.AMIFamily), "windows") {
		return true
	}
	for _, t := range nc.AMISelectorTerms {
		if a, ok := t["alias"].(string); ok && strings.HasPrefix(strings.ToLower(a), "windows") {
			return true
		}
	}
	return false
}

// instanceProfileRole finds the role inside an instance profile: through the
// karpenter module's instance_profile_* outputs, or an aws_iam_instance_profile
// resource of the configuration.
func (r *Resolver) instanceProfileRole(text string) (Role, string) {
	text = strings.TrimSpace(text)
	if cluster.IsUnknown(text) {
		refs := refsOf(strings.Join(cluster.UnknownExprs(text), " "))
		if len(refs) == 1 {
			ref := refs[0]
			if key, kind, why := r.keyOf(ref); strings.HasSuffix(key, "#node") {
				role := Role{Text: text, Ref: ref, Key: key, Kind: kind, Why: why}
				for _, c := range r.m.Identity.Roles {
					if c != nil && r.fromConfig(c, "").Key == key {
						role = r.fromConfig(c, text)
						break
					}
				}
				r.classify(&role)
				return role, ""
			}
			if res := r.instanceProfileResource(strings.TrimSuffix(strings.TrimSuffix(ref, ".name"), ".id")); res != nil {
				return r.profileResourceRole(res, text)
			}
		}
		return Role{}, fmt.Sprintf("instance profile %s is not known before apply, nor is the role inside it", text)
	}
	if g := r.m.Terraform; g != nil {
		for _, res := range g.OfType("aws_iam_instance_profile") {
			if n, ok := res.Attrs["name"].(string); ok && strings.EqualFold(n, text) {
				return r.profileResourceRole(res, text)
			}
		}
	}
	for _, c := range r.m.Identity.Roles {
		// A configuration role whose refs name the instance profile itself.
		if c == nil {
			continue
		}
		for _, ref := range c.Refs {
			if ref == text {
				return r.FromConfig(c), ""
			}
		}
	}
	return Role{}, fmt.Sprintf("the configuration does not show which role instance profile %q holds", text)
}

func (r *Resolver) instanceProfileResource(addr string) *cluster.Resource {
	if g := r.m.Terraform; g != nil {
		if res, ok := g.Nodes[addr]; ok && res.Type == "aws_iam_instance_profile" {
			return res
		}
	}
	return nil
}

func (r *Resolver) profileResourceRole(res *cluster.Resource, text string) (Role, string) {
	if role, ok := res.Attrs["role"].(string); ok && role != "" {
		out := r.Resolve(role)
		return out, ""
	}
	return Role{}, fmt.Sprintf("%s (instance profile %s) does not say which role it holds", res.Address, text)
}

// NodeRoles lists the roles the configuration presents as node roles: roles it
// declares as such, the Karpenter node role, and roles mapped as nodes in aws-auth
// or by EC2 access entries, provided nothing says they are controller or Fargate
// roles. Node group roles come last. Used to propose the role a misused
// reference should have been.
func (r *Resolver) NodeRoles() []Role {
	var out []Role
	add := func(role Role) {
		if role.IsZero() || role.Kind.NotForNodes() {
			return
		}
		for _, o := range out {
			if Same(o, role) == Yes {
				return
			}
		}
		out = append(out, role)
	}
	m := r.m
	for _, c := range m.Identity.Roles {
		if c == nil {
			continue
		}
		if role := r.FromConfig(c); role.Kind == cluster.RoleNode {
			add(role)
		}
	}
	if m.Karpenter.NodeRole != "" {
		add(r.Resolve(m.Karpenter.NodeRole))
	}
	if a := m.Identity.AwsAuth; a != nil {
		for _, rm := range a.Roles {
			if rm.Username == NodeUsername {
				add(r.Resolve(rm.RoleARN))
			}
		}
	}
	for _, e := range m.Identity.AccessEntries {
		if t := strings.ToUpper(e.Type); t == cluster.AccessEC2Linux || t == cluster.AccessEC2Windows {
			add(r.Resolve(e.PrincipalARN))
		}
	}
	groups := map[string]bool{}
	for _, ng := range m.NodeGroups {
		if ng.NodeRole != "" {
			groups[ng.NodeRole] = true
		}
	}
	// Roles that are only node group roles are the weakest candidates.
	sort.SliceStable(out, func(i, j int) bool { return !groups[out[i].Text] && groups[out[j].Text] })
	return out
}
