package write

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/identity"
	"github.com/eksdoctor/eksdoctor/source/manifest"
	"github.com/eksdoctor/eksdoctor/source/terraform"
)

// Edits that authorize a role for the cluster, in the format that declares
// the authorization: aws-auth in eksctl, a ConfigMap manifest, Terraform
// (module input, kubernetes_config_map, kubectl_manifest), and access
// entries; and the edits that point Karpenter at a role.

// roleExpr returns a Terraform expression for a role's "arn" or "name".
func roleExpr(role identity.Role, want string) (string, bool) {
	var refs []string
	if role.Config != nil {
		refs = append(refs, role.Config.Refs...)
		if e, ok := cluster.UnknownExpr(role.Config.ARN); ok {
			refs = append(refs, e)
		}
	}
	if role.Ref != "" {
		refs = append(refs, role.Ref, terraform.SwapRefSuffix(role.Ref))
	}
	return terraform.BestRef(refs, want)
}

// literalARN returns the role's ARN as text usable in YAML (no Terraform
// expressions): its own ARN, or one built from its name with the partition and
// account the configuration uses for its other roles.
func literalARN(m *cluster.Model, role identity.Role, withPath bool) (string, bool) {
	if role.HasARN && len(cluster.UnknownExprs(role.ARN.String())) == len(shellVars(role.ARN.String())) {
		a := role.ARN
		if !withPath {
			return a.WithoutPath(), true
		}
		return a.String(), true
	}
	if !role.Known() && (role.Name == "" || len(cluster.UnknownExprs(role.Name)) != len(shellVars(role.Name))) {
		return "", false
	}
	part, acct := accountOf(m)
	path := "/"
	if withPath && role.Config != nil && role.Config.Path != "" {
		path = role.Config.Path
	}
	return "arn:" + part + ":iam::" + acct + ":role" + path + role.Name, true
}

// shellVars returns the placeholders that are shell variables (${CLUSTER_NAME}),
// which eksctl and envsubst templates keep as text.
func shellVars(s string) []string {
	var out []string
	for _, e := range cluster.UnknownExprs(s) {
		if e != "" && strings.ToUpper(e) == e && !strings.ContainsAny(e, ".()[]\" ") {
			out = append(out, e)
		}
	}
	return out
}

// accountOf finds the partition and account the configuration's role ARNs use.
func accountOf(m *cluster.Model) (string, string) {
	counts := map[[2]string]int{}
	add := func(s string) {
		if a, ok := identity.ParseRoleARN(s); ok && a.Account != "" {
			counts[[2]string{a.Partition, a.Account}]++
		}
	}
	if a := m.Identity.AwsAuth; a != nil {
		for _, r := range a.Roles {
			add(r.RoleARN)
		}
	}
	for _, e := range m.Identity.AccessEntries {
		add(e.PrincipalARN)
	}
	for _, fp := range m.FargateProfiles {
		add(fp.PodExecutionRole)
	}
	for _, ng := range m.NodeGroups {
		add(ng.NodeRole)
	}
	for _, sa := range m.Identity.ServiceAccounts {
		add(sa.RoleARN)
	}
	best, n := [2]string{"aws", "${AWS_ACCOUNT_ID}"}, 0
	keys := make([][2]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+keys[i][1] < keys[j][0]+keys[j][1] })
	for _, k := range keys {
		if counts[k] > n {
			best, n = k, counts[k]
		}
	}
	return best[0], best[1]
}

// NodeMapping is the aws-auth entry that authorizes a role for a purpose, with
// the role written the way the aws-auth store can hold it (decided later).
func NodeMapping(m *cluster.Model, role identity.Role, p identity.Purpose) (cluster.RoleMapping, bool) {
	rm := cluster.RoleMapping{Username: p.Username(), Groups: p.Groups()}
	expr, exprOK := roleExpr(role, "arn")
	lit, litOK := literalARN(m, role, false)
	// Terraform refers to the role (the reference stays right whatever the
	// account); YAML can only hold its ARN.
	if litOK && !(terraformAwsAuth(m) && exprOK) && (!terraformAwsAuth(m) || len(cluster.UnknownExprs(lit)) == 0) {
		rm.RoleARN = lit
		return rm, true
	}
	if exprOK {
		if role.Config != nil && role.Config.Path != "" && role.Config.Path != "/" {
			// aws-auth wants the ARN without the path.
			rm.RoleARN = cluster.Unknown(fmt.Sprintf(`replace(%s, %q, "role/")`, expr, "role"+role.Config.Path))
		} else {
			rm.RoleARN = cluster.Unknown(expr)
		}
		return rm, true
	}
	return rm, false
}

// terraformAwsAuth reports whether aws-auth mappings are written in Terraform.
func terraformAwsAuth(m *cluster.Model) bool {
	a := m.Identity.AwsAuth
	if a != nil && a.Managed == "user" {
		return a.Address != "iamIdentityMappings" && AwsAuthObject(m) == nil
	}
	return EksctlConfig(m) == nil && m.Terraform != nil
}

// AwsAuthMapping writes the user's aws-auth mappings with one entry replaced
// (old != nil) or added (old == nil), in the format the configuration declares
// them: eksctl iamIdentityMappings, the ConfigMap manifest, terraform-aws-eks
// aws_auth_roles, or a Terraform ConfigMap resource.
func AwsAuthMapping(m *cluster.Model, old, nu *cluster.RoleMapping) (cluster.Edit, bool) {
	a := m.Identity.AwsAuth
	switch {
	case a != nil && a.Address == "iamIdentityMappings":
		return rewriteEksctlMappings(m, old, nu)
	case a != nil && a.Managed == "user":
		if o := AwsAuthObject(m); o != nil {
			return rewriteConfigMap(m, o, old, nu)
		}
		return rewriteTerraformAwsAuth(m, old, nu)
	case a == nil || a.Managed == "eks":
		// Nothing writes aws-auth yet: eksctl adds identity mappings to the
		// ConfigMap EKS maintains.
		if cc := EksctlConfig(m); cc != nil && old == nil {
			return rewriteEksctlMappings(m, nil, nu)
		}
	}
	return cluster.Edit{}, false
}

// EksctlConfig is the eksctl ClusterConfig among the model's objects, nil
// when there is none.
func EksctlConfig(m *cluster.Model) *cluster.Object {
	for _, o := range m.Objects {
		if o.Kind == "ClusterConfig" && strings.HasPrefix(o.APIVersion, "eksctl.io/") {
			return o
		}
	}
	return nil
}

// AwsAuthObject is the aws-auth ConfigMap the inputs declare (not the one
// read from a cluster), nil when there is none.
func AwsAuthObject(m *cluster.Model) *cluster.Object {
	for _, o := range m.Objects {
		if o.Kind == "ConfigMap" && o.Namespace == "kube-system" && o.Name == "aws-auth" && o.Manager != "cluster" {
			return o
		}
	}
	return nil
}

func rewriteEksctlMappings(m *cluster.Model, old, nu *cluster.RoleMapping) (cluster.Edit, bool) {
	o := EksctlConfig(m)
	if o == nil {
		return cluster.Edit{}, false
	}
	patch, ok := manifest.EksctlMappingsPatch(o, old, nu)
	if !ok {
		return cluster.Edit{}, false
	}
	return ObjectPatch(m, o, patch)
}

func rewriteConfigMap(m *cluster.Model, o *cluster.Object, old, nu *cluster.RoleMapping) (cluster.Edit, bool) {
	patch, ok := manifest.AwsAuthPatch(o, old, nu)
	if !ok {
		return cluster.Edit{}, false
	}
	return ObjectPatch(m, o, patch)
}

// rewriteTerraformAwsAuth rewrites aws_auth_roles of the module that manages
// aws-auth (terraform-aws-eks v19, or its v20 aws-auth sub-module), or the
// mapRoles of a kubernetes_config_map resource.
func rewriteTerraformAwsAuth(m *cluster.Model, old, nu *cluster.RoleMapping) (cluster.Edit, bool) {
	a := m.Identity.AwsAuth
	if a == nil || m.Terraform == nil {
		return cluster.Edit{}, false
	}
	var entries []cluster.RoleMapping
	found := old == nil
	for _, rm := range a.Roles {
		if terraform.ImplicitMapping(m.Cluster, rm) {
			continue
		}
		if old != nil && !found && rm.RoleARN == old.RoleARN && rm.Username == old.Username {
			found = true
			if nu != nil {
				entries = append(entries, *nu)
			}
			continue
		}
		entries = append(entries, rm)
	}
	if !found {
		return cluster.Edit{}, false
	}
	if old == nil {
		entries = append(entries, *nu)
	}
	return terraform.AwsAuthRolesEdit(m.Terraform, a, entries)
}

// principalExpr is a role as an access entry's principal_arn: a reference to
// the role's ARN, else its ARN written out.
func principalExpr(m *cluster.Model, role identity.Role) (string, bool) {
	if expr, ok := roleExpr(role, "arn"); ok {
		return expr, true
	}
	lit, ok := literalARN(m, role, true)
	if !ok {
		return "", false
	}
	return terraform.StringExpr(lit), true
}

// AccessEntryType makes an access entry the type the purpose needs.
func AccessEntryType(m *cluster.Model, e *cluster.AccessEntry, p identity.Purpose) (cluster.Edit, bool) {
	if e == nil {
		return cluster.Edit{}, false
	}
	if e.Decl.Kind == cluster.DeclEksctl {
		patch, ok := manifest.AccessEntryTypePatch(e.Decl.Object, e.PrincipalARN, p.EntryType())
		if !ok {
			return cluster.Edit{}, false
		}
		return ObjectPatch(m, e.Decl.Object, patch)
	}
	return terraform.AccessEntryTypeEdit(m.Terraform, e, p.EntryType())
}

// NewAccessEntry creates an access entry for the role: in eksctl's accessConfig,
// through the karpenter module's own inputs when it creates the role, or as an
// aws_eks_access_entry resource next to the cluster.
func NewAccessEntry(m *cluster.Model, nc *cluster.NodeClass, role identity.Role, p identity.Purpose) (cluster.Edit, bool) {
	if o := EksctlConfig(m); o != nil && m.Cluster.Defined && !terraform.WrittenInConfig(m.Cluster.Origin.File) {
		arn, ok := literalARN(m, role, true)
		if !ok {
			return cluster.Edit{}, false
		}
		patch, ok := manifest.NewAccessEntryPatch(o, arn, p.EntryType())
		if !ok {
			return cluster.Edit{}, false
		}
		return ObjectPatch(m, o, patch)
	}
	if m.Terraform == nil {
		return cluster.Edit{}, false
	}
	if role.Config != nil && strings.HasSuffix(role.Key, "#node") && terraform.InModule(role.Config.Address) {
		return terraform.ModuleArgsEdit(m.Terraform, role.Config.Address, fmt.Sprintf("create_access_entry = true\naccess_entry_type = %q\n", p.EntryType()))
	}
	principal, ok := principalExpr(m, role)
	if !ok {
		return cluster.Edit{}, false
	}
	return terraform.NewAccessEntry(m.Terraform, m.Cluster, nc.Name+"_node", principal, p.EntryType())
}

// AutoNodePolicy associates AmazonEKSAutoNodePolicy with the principal of an
// access entry: in the eksctl entry's accessPolicies, or as an
// aws_eks_access_policy_association resource next to the cluster.
func AutoNodePolicy(m *cluster.Model, nc *cluster.NodeClass, e *cluster.AccessEntry) (cluster.Edit, bool) {
	if e == nil {
		return cluster.Edit{}, false
	}
	if e.Decl.Kind == cluster.DeclEksctl {
		list, _ := e.Decl.Object.Get(e.Decl.List + "." + strconv.Itoa(e.Decl.Index) + ".accessPolicies").([]any)
		if len(list) > 0 {
			list = cluster.CopyJSON(list).([]any)
		}
		list = append(list, map[string]any{"policyARN": cluster.AutoNodePolicy, "accessScope": map[string]any{"type": "cluster"}})
		patch, ok := manifest.EksctlItemPatch(e.Decl, map[string]any{"accessPolicies": list})
		if !ok {
			return cluster.Edit{}, false
		}
		return ObjectPatch(m, e.Decl.Object, patch)
	}
	if m.Terraform == nil {
		return cluster.Edit{}, false
	}
	return terraform.NewAutoNodePolicy(m.Terraform, m.Cluster, e, nc.Name+"_node")
}

// NodeClassRole points an EC2NodeClass at a node role.
func NodeClassRole(m *cluster.Model, nc *cluster.NodeClass, ncr identity.NodeClassRole, nr identity.Role) (cluster.Edit, bool) {
	if nc.Object == nil || nc.Object.Kind != "EC2NodeClass" || nc.InstanceProfileFrom != "" {
		// v1alpha5 kinds have no spec.role; a profile the chart's settings
		// give is changed where the profile is made.
		return cluster.Edit{}, false
	}
	var value string
	switch {
	case nr.Known():
		value = nr.Name
	case nc.Object.Via != "":
		expr, ok := roleExpr(nr, "name")
		if !ok {
			return cluster.Edit{}, false
		}
		value = cluster.Unknown(expr)
	default:
		return cluster.Edit{}, false
	}
	spec := map[string]any{"role": value}
	if ncr.Field == "spec.instanceProfile" {
		spec["instanceProfile"] = nil
	}
	return ObjectPatch(m, nc.Object, map[string]any{"spec": spec})
}

// AccessEntryPrincipal gives an access entry to another role.
func AccessEntryPrincipal(m *cluster.Model, e *cluster.AccessEntry, nr identity.Role) (cluster.Edit, bool) {
	if e.Decl.Kind == cluster.DeclEksctl {
		arn, ok := literalARN(m, nr, true)
		if !ok {
			return cluster.Edit{}, false
		}
		patch, ok := manifest.AccessEntryPrincipalPatch(e.Decl.Object, e.PrincipalARN, arn)
		if !ok {
			return cluster.Edit{}, false
		}
		return ObjectPatch(m, e.Decl.Object, patch)
	}
	if e.Decl.Kind != cluster.DeclResource {
		return cluster.Edit{}, false
	}
	principal, ok := principalExpr(m, nr)
	if !ok {
		return cluster.Edit{}, false
	}
	return terraform.AccessEntryPrincipalEdit(m.Terraform, e, principal)
}

// AutoModeNodePools enables EKS Auto Mode's built-in NodePools pools (the
// complete list) where the configuration switches Auto Mode on.
func AutoModeNodePools(m *cluster.Model, a *cluster.AutoMode, pools []string) (cluster.Edit, bool) {
	if a == nil {
		return cluster.Edit{}, false
	}
	switch a.NodePoolsAt.Kind {
	case cluster.DeclEksctl:
		patch, ok := manifest.AutoModeNodePoolsPatch(a.NodePoolsAt.Object, pools)
		if !ok {
			return cluster.Edit{}, false
		}
		return ObjectPatch(m, a.NodePoolsAt.Object, patch)
	case cluster.DeclModule:
		return terraform.AutoModeNodePoolsEdit(m.Terraform, a.NodePoolsAt, pools)
	}
	return cluster.Edit{}, false
}

// AutoModeEnabled writes enabled = true where the configuration names EKS
// Auto Mode's built-in NodePools (a module's compute_config object).
func AutoModeEnabled(m *cluster.Model, a *cluster.AutoMode) (cluster.Edit, bool) {
	if a == nil || a.NodePoolsAt.Kind != cluster.DeclModule {
		return cluster.Edit{}, false
	}
	return terraform.AutoModeEnabledEdit(m.Terraform, a.NodePoolsAt)
}

// NoBootstrapAddons sets bootstrap_self_managed_addons = false on the cluster
// the configuration creates.
func NoBootstrapAddons(m *cluster.Model) (cluster.Edit, bool) {
	if m.Terraform == nil || !m.Cluster.Defined || !terraform.WrittenInConfig(m.Cluster.Origin.File) {
		return cluster.Edit{}, false
	}
	return terraform.ClusterArgEdit(m.Terraform, m.Cluster, "bootstrap_self_managed_addons = false\n")
}
