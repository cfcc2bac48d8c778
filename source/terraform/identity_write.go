package terraform

import (
	"fmt"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// Who may join the cluster, as Terraform declares it: aws_eks_access_entry
// resources, terraform-aws-eks access_entries, the karpenter module's own
// access entry, aws_auth_roles and kubernetes_config_map resources. The loader
// attaches each entry's declaration; the writers below change it there.

// accessEntryDecl says how the access entry at an address is declared.
func accessEntryDecl(g *cluster.Graph, addr string) cluster.Decl {
	if g == nil {
		return cluster.Decl{}
	}
	if _, ok := g.Nodes[addr]; ok {
		return cluster.Decl{Kind: cluster.DeclResource, Block: addr}
	}
	call, ok := ModuleCall(addr)
	if !ok || call == addr {
		return cluster.Decl{}
	}
	if strings.Contains(addr, ".aws_eks_access_entry.node") {
		// The karpenter module's own entry for its node role.
		return cluster.Decl{Kind: cluster.DeclModule, Block: call}
	}
	if key, ok := ForEachKey(addr); ok {
		return cluster.Decl{Kind: cluster.DeclModuleEntry, Block: call, Key: key}
	}
	return cluster.Decl{}
}

// addonDecl says whether an add-on is written in a configuration file, where
// an edit at its origin changes it.
func addonDecl(a *cluster.Addon) cluster.Decl {
	if !WrittenInConfig(a.Origin.File) || a.Origin.Line <= 0 {
		return cluster.Decl{}
	}
	return cluster.Decl{Kind: cluster.DeclConfigFile, Block: a.Address}
}

// identityDecls attaches their declarations to the access entries and add-ons.
func (b *builder) identityDecls() {
	for i := range b.m.Identity.AccessEntries {
		e := &b.m.Identity.AccessEntries[i]
		if e.Decl.Kind == cluster.DeclUnknown {
			e.Decl = accessEntryDecl(b.m.Terraform, e.Address)
		}
	}
	for _, a := range b.m.Addons {
		if a.Decl.Kind == cluster.DeclUnknown {
			a.Decl = addonDecl(a)
		}
	}
}

// WrittenInConfig reports whether a file is a Terraform configuration file a
// user edits (not a plan or a JSON configuration).
func WrittenInConfig(file string) bool { return strings.HasSuffix(file, ".tf") }

// InModule reports whether an address is inside a module call.
func InModule(addr string) bool { return strings.HasPrefix(addr, "module.") }

// AccessEntryTypeEdit makes an access entry of the given type, with no
// Kubernetes groups, where it is declared.
func AccessEntryTypeEdit(g *cluster.Graph, e *cluster.AccessEntry, entryType string) (cluster.Edit, bool) {
	typ := fmt.Sprintf("%q", entryType)
	switch e.Decl.Kind {
	case cluster.DeclResource:
		return BlockEdit(g, e.Decl.Block, "type = "+typ+"\nkubernetes_groups = null\n")
	case cluster.DeclModule:
		return BlockEdit(g, e.Decl.Block, "access_entry_type = "+typ+"\n")
	case cluster.DeclModuleEntry:
		return BlockEdit(g, e.Decl.Block, fmt.Sprintf("access_entries = {\n  %s = {\n    type = %s\n    kubernetes_groups = null\n  }\n}\n", MapKey(e.Decl.Key), typ))
	}
	return cluster.Edit{}, false
}

// AccessEntryPrincipalEdit gives an access entry resource another principal,
// an HCL expression.
func AccessEntryPrincipalEdit(g *cluster.Graph, e *cluster.AccessEntry, principal string) (cluster.Edit, bool) {
	if e.Decl.Kind != cluster.DeclResource {
		return cluster.Edit{}, false
	}
	return BlockEdit(g, e.Decl.Block, "principal_arn = "+principal+"\n")
}

// ModuleArgsEdit sets arguments (an HCL body) of the module call that makes
// the resource at an address.
func ModuleArgsEdit(g *cluster.Graph, addr, text string) (cluster.Edit, bool) {
	call, ok := ModuleCall(addr)
	if !ok {
		return cluster.Edit{}, false
	}
	return BlockEdit(g, call, text)
}

// NewAccessEntry declares an aws_eks_access_entry resource for a principal
// (an HCL expression) at the end of the file that declares the cluster; base
// names the resource, made unique.
func NewAccessEntry(g *cluster.Graph, c cluster.EKSCluster, base, principal, entryType string) (cluster.Edit, bool) {
	if !WrittenInConfig(c.Origin.File) {
		return cluster.Edit{}, false
	}
	name := freeResourceName(g, "aws_eks_access_entry", base)
	text := fmt.Sprintf("resource \"aws_eks_access_entry\" %q {\n  cluster_name  = %s\n  principal_arn = %s\n  type          = %s\n}\n", name, ClusterNameExpr(c), principal, fmt.Sprintf("%q", entryType))
	if entryType == cluster.AccessEC2 {
		// An EKS Auto Mode node role needs its access policy too.
		text += "\n" + autoNodePolicyText(g, c, base, "aws_eks_access_entry."+name+".principal_arn")
	}
	return cluster.Edit{File: c.Origin.File, Format: cluster.FormatHCL, Text: text}, true
}

// NewAutoNodePolicy associates AmazonEKSAutoNodePolicy with the principal of
// an access entry the configuration declares, in a resource at the end of the
// file that declares the cluster.
func NewAutoNodePolicy(g *cluster.Graph, c cluster.EKSCluster, e *cluster.AccessEntry, base string) (cluster.Edit, bool) {
	if !WrittenInConfig(c.Origin.File) {
		return cluster.Edit{}, false
	}
	var principal string
	if e.Address != "" && !InModule(e.Address) && strings.HasPrefix(e.Address, "aws_eks_access_entry.") {
		principal = e.Address + ".principal_arn"
	} else if x, ok := cluster.UnknownExpr(e.PrincipalARN); ok {
		principal = x
	} else if e.PrincipalARN != "" && !cluster.IsUnknown(e.PrincipalARN) {
		principal = StringExpr(e.PrincipalARN)
	} else {
		return cluster.Edit{}, false
	}
	return cluster.Edit{File: c.Origin.File, Format: cluster.FormatHCL, Text: autoNodePolicyText(g, c, base, principal)}, true
}

func autoNodePolicyText(g *cluster.Graph, c cluster.EKSCluster, base, principal string) string {
	name := freeResourceName(g, "aws_eks_access_policy_association", base)
	return fmt.Sprintf("resource \"aws_eks_access_policy_association\" %q {\n  cluster_name  = %s\n  principal_arn = %s\n  policy_arn    = %q\n\n  access_scope {\n    type = \"cluster\"\n  }\n}\n", name, ClusterNameExpr(c), principal, cluster.AutoNodePolicy)
}

// ClusterNameExpr is an expression for the cluster's name: the module's or
// resource's attribute, else the name as a string.
func ClusterNameExpr(c cluster.EKSCluster) string {
	if e, ok := clusterAttr(c, "cluster_name", "name"); ok {
		return e
	}
	return StringExpr(c.Name)
}

// ClusterNameRef is the expression for the cluster's name when the cluster is
// a terraform-aws-eks module call or an aws_eks_cluster resource.
func ClusterNameRef(c cluster.EKSCluster) (string, bool) {
	return clusterAttr(c, "cluster_name", "name")
}

// OIDCProviderExpr is an expression for the ARN of the cluster's IAM OIDC
// provider.
func OIDCProviderExpr(c cluster.EKSCluster) string {
	if InModule(c.Address) {
		return c.Address + ".oidc_provider_arn"
	}
	return "aws_iam_openid_connect_provider.this.arn"
}

func clusterAttr(c cluster.EKSCluster, moduleOutput, resourceAttr string) (string, bool) {
	a := c.Address
	switch {
	case strings.HasPrefix(a, "module."):
		return a + "." + moduleOutput, true
	case strings.HasPrefix(a, "aws_eks_cluster."):
		return a + "." + resourceAttr, true
	}
	return "", false
}

// freeResourceName returns a resource name of a type that is not taken yet.
func freeResourceName(g *cluster.Graph, typ, base string) string {
	var b strings.Builder
	for _, r := range base {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := b.String()
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		name = "r_" + name
	}
	cand := name
	for i := 2; g != nil && g.Nodes[typ+"."+cand] != nil; i++ {
		cand = fmt.Sprintf("%s_%d", name, i)
	}
	return cand
}

// NodeOf is the graph node that creates what an address names: its own
// resource, or the module call that contains it; "" when neither is in the
// graph.
func NodeOf(g *cluster.Graph, addr string) string {
	if g == nil {
		return ""
	}
	if _, ok := g.Nodes[addr]; ok {
		return addr
	}
	if call, ok := ModuleCall(addr); ok {
		if _, ok := g.Nodes[call]; ok {
			return call
		}
	}
	return ""
}

// BestRef picks, among expressions that refer to a role, the one for its
// "arn" or "name" a user would write: module outputs and top-level resources
// before resources inside modules, map keys in brackets before dotted ones,
// shorter first.
func BestRef(refs []string, want string) (string, bool) {
	best := ""
	for _, r := range refs {
		if r == "" || !(strings.HasSuffix(r, "_"+want) || strings.HasSuffix(r, "."+want)) {
			continue
		}
		if best == "" || refRank(r) < refRank(best) || (refRank(r) == refRank(best) && r < best) {
			best = r
		}
	}
	return best, best != ""
}

func refRank(r string) int {
	rank := len(r)
	if strings.Count(r, "module.") > 1 || (strings.HasPrefix(r, "module.") && strings.Contains(r, ".aws_")) {
		rank += 1000
	}
	if strings.HasPrefix(r, "module.") && !strings.Contains(r, "[") && strings.Count(r, ".") > 2 {
		rank += 500
	}
	return rank
}

// SwapRefSuffix turns the reference of a role's ARN into that of its name and
// back; "" when it is neither.
func SwapRefSuffix(r string) string {
	switch {
	case strings.HasSuffix(r, "_arn"):
		return strings.TrimSuffix(r, "_arn") + "_name"
	case strings.HasSuffix(r, "_name"):
		return strings.TrimSuffix(r, "_name") + "_arn"
	case strings.HasSuffix(r, ".arn"):
		return strings.TrimSuffix(r, ".arn") + ".name"
	case strings.HasSuffix(r, ".name"):
		return strings.TrimSuffix(r, ".name") + ".arn"
	}
	return ""
}

// AwsAuthRolesEdit writes the user's aws-auth role mappings where Terraform
// declares them: aws_auth_roles of the module that manages aws-auth
// (terraform-aws-eks v19, or its v20 aws-auth sub-module), or the mapRoles of
// a kubernetes_config_map resource.
func AwsAuthRolesEdit(g *cluster.Graph, a *cluster.AwsAuth, entries []cluster.RoleMapping) (cluster.Edit, bool) {
	if a == nil || g == nil {
		return cluster.Edit{}, false
	}
	list := mappingsHCL(entries)
	if call, ok := ModuleCall(a.Address); ok {
		return BlockEdit(g, call, "aws_auth_roles = "+list+"\n")
	}
	if _, ok := g.Nodes[a.Address]; ok {
		return BlockEdit(g, a.Address, "data = {\n  mapRoles = yamlencode("+list+")\n}\n")
	}
	return cluster.Edit{}, false
}

// ImplicitMapping tells the entries terraform-aws-eks adds to aws-auth by
// itself (its node groups' and Fargate profiles' roles) from the user's
// aws_auth_roles.
func ImplicitMapping(c cluster.EKSCluster, rm cluster.RoleMapping) bool {
	if c.Address == "" {
		return false
	}
	for _, e := range cluster.UnknownExprs(rm.RoleARN) {
		for _, in := range []string{".fargate_profiles", ".eks_managed_node_groups", ".self_managed_node_groups"} {
			if strings.HasPrefix(e, c.Address+in) {
				return true
			}
		}
	}
	return false
}

func mappingsHCL(entries []cluster.RoleMapping) string {
	var b strings.Builder
	b.WriteString("[\n")
	for _, rm := range entries {
		var groups []string
		for _, g := range rm.Groups {
			groups = append(groups, StringExpr(g))
		}
		fmt.Fprintf(&b, "  {\n    rolearn  = %s\n    username = %s\n    groups   = [%s]\n  },\n", StringExpr(rm.RoleARN), StringExpr(rm.Username), strings.Join(groups, ", "))
	}
	b.WriteString("]")
	return b.String()
}

// AddonEdit sets an add-on's version (when not empty) and configuration
// where it is written.
func AddonEdit(a *cluster.Addon, version string, config map[string]any) (cluster.Edit, bool) {
	if a.Decl.Kind == cluster.DeclNew {
		return newAddonEdit(a, version, config)
	}
	if a.Decl.Kind != cluster.DeclConfigFile {
		return cluster.Edit{}, false
	}
	var lines []string
	if version != "" {
		lines = append(lines, "addon_version = "+Quote(version))
	}
	if len(config) == 0 {
		lines = append(lines, "configuration_values = null")
	} else {
		lines = append(lines, "configuration_values = jsonencode("+ConfigValue(config, 0)+")")
	}
	return cluster.Edit{File: a.Origin.File, Line: a.Origin.Line, Format: cluster.FormatHCL, Text: strings.Join(lines, "\n") + "\n"}, true
}

// NewAddonAfterEdit declares an add-on EKS installs by itself, as AddonEdit
// does, created after the resources at deps (the capacity its pods need) when
// it becomes a resource of its own; a module entry follows the module's order.
func NewAddonAfterEdit(a *cluster.Addon, config map[string]any, deps []string) (cluster.Edit, bool) {
	if a.Decl.Kind != cluster.DeclNew {
		return cluster.Edit{}, false
	}
	return newAddonEdit(a, "", config, deps...)
}

// newAddonEdit declares an add-on EKS installs by itself, with its version and
// configuration: an entry of the terraform-aws-eks module's add-ons input
// (cluster_addons, addons in v21), or an aws_eks_addon resource beside an
// aws_eks_cluster (created after deps, when given).
func newAddonEdit(a *cluster.Addon, version string, config map[string]any, deps ...string) (cluster.Edit, bool) {
	d := a.Decl
	var lines []string
	if version != "" {
		lines = append(lines, "addon_version = "+Quote(version))
	}
	if len(config) > 0 {
		lines = append(lines, "configuration_values = jsonencode("+ConfigValue(config, 0)+")")
	}
	if len(deps) > 0 && d.List == "" {
		lines = append(lines, "depends_on = ["+strings.Join(deps, ", ")+"]")
	}
	if strings.HasPrefix(d.Block, "module.") && d.List == "" {
		// A module without an add-ons input (terraform-aws-eks v17): a resource
		// beside the call, on the cluster it outputs.
		text := fmt.Sprintf("resource \"aws_eks_addon\" %s {\ncluster_name = %s.cluster_id\naddon_name = %s\n%s\n}\n", Quote(strings.ReplaceAll(a.Name, "-", "_")), moduleCallAddr(d.Block), Quote(a.Name), strings.Join(lines, "\n"))
		return cluster.Edit{File: a.Origin.File, Format: cluster.FormatHCL, Text: text}, true
	}
	if strings.HasPrefix(d.Block, "module.") {
		text := d.List + " = {\n" + MapKey(a.Name) + " = {\n" + strings.Join(lines, "\n") + "\n}\n}\n"
		return cluster.Edit{File: a.Origin.File, Line: a.Origin.Line, Format: cluster.FormatHCL, Text: text}, true
	}
	cl, ok := ResourceName(d.Block)
	if !ok {
		return cluster.Edit{}, false
	}
	text := fmt.Sprintf("resource \"aws_eks_addon\" %s {\ncluster_name = %s.name\naddon_name = %s\n%s\n}\n", Quote(strings.ReplaceAll(a.Name, "-", "_")), cl, Quote(a.Name), strings.Join(lines, "\n"))
	return cluster.Edit{File: a.Origin.File, Format: cluster.FormatHCL, Text: text}, true
}

// ResourceName is the address of a managed resource without its instance key
// ("aws_eks_cluster.this" of "aws_eks_cluster.this[0]"); ok is false for other
// addresses.
func ResourceName(addr string) (string, bool) {
	if strings.HasPrefix(addr, "module.") || strings.HasPrefix(addr, "data.") {
		return "", false
	}
	if i := strings.IndexByte(addr, '['); i >= 0 {
		addr = addr[:i]
	}
	if strings.Count(addr, ".") != 1 {
		return "", false
	}
	return addr, true
}

// moduleCallAddr is the address of a module call without instance keys
// ("module.eks" of `module.eks[0]`).
func moduleCallAddr(addr string) string {
	if i := strings.IndexByte(addr, '['); i >= 0 {
		return addr[:i]
	}
	return addr
}

// AutoModeNodePoolsEdit sets the built-in NodePools of EKS Auto Mode where a
// module call writes them: node_pools inside its compute_config (or
// cluster_compute_config) object.
func AutoModeNodePoolsEdit(g *cluster.Graph, d cluster.Decl, pools []string) (cluster.Edit, bool) {
	quoted := make([]string, len(pools))
	for i, p := range pools {
		quoted[i] = Quote(p)
	}
	return autoModeObjectEdit(g, d, "node_pools = ["+strings.Join(quoted, ", ")+"]")
}

// AutoModeEnabledEdit writes enabled = true in a module call's compute_config
// (or cluster_compute_config) object.
func AutoModeEnabledEdit(g *cluster.Graph, d cluster.Decl) (cluster.Edit, bool) {
	return autoModeObjectEdit(g, d, "enabled = true")
}

// autoModeObjectEdit merges an attribute into the Auto Mode object of a module
// call. Only an object written in the module block itself is edited; a value
// computed elsewhere (a local, a conditional) is left to the user.
func autoModeObjectEdit(g *cluster.Graph, d cluster.Decl, attr string) (cluster.Edit, bool) {
	if g == nil || d.Kind != cluster.DeclModule {
		return cluster.Edit{}, false
	}
	for _, mc := range g.Modules {
		if mc.Address != d.Block {
			continue
		}
		for _, k := range mc.Keys {
			if len(k.Path) == 0 && k.Key == d.Key && k.InCall && strings.HasPrefix(strings.TrimSpace(k.Value), "{") {
				return BlockEdit(g, d.Block, d.Key+" = {\n  "+attr+"\n}\n")
			}
		}
	}
	return cluster.Edit{}, false
}

// ClusterArgEdit sets an argument of the cluster: in its aws_eks_cluster
// resource, or in the terraform-aws-eks module call that creates it.
func ClusterArgEdit(g *cluster.Graph, c cluster.EKSCluster, text string) (cluster.Edit, bool) {
	if call, ok := ModuleCall(c.Address); ok {
		return BlockEdit(g, call, text)
	}
	addr := c.Address
	if i := strings.IndexByte(addr, '['); i > 0 {
		addr = addr[:i]
	}
	return BlockEdit(g, addr, text)
}
