package lint

import (
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/identity"
	"github.com/eksdoctor/eksdoctor/source/terraform"
)

// Edits that authorize a role for the cluster, in the format that declares the authorization: aws-auth in eksctl, a ConfigMap manifest, Terraform (module input, kubernetes_config_map, kubectl_manifest), and access entries.

// asWritten names a role the way the configuration refers to it: the expression
// when the reference is one, else its name.
func asWritten(r identity.Role) string {
	if e, ok := cluster.UnknownExpr(r.Text); ok {
		return e
	}
	return r.String()
}

// setModuleArg sets arguments of the module call that creates a role.
func setModuleArg(m *cluster.Model, role identity.Role, text string) (Edit, bool) {
	if role.Config == nil {
		return Edit{}, false
	}
	call, ok := terraform.ModuleCall(role.Config.Address)
	if !ok {
		return Edit{}, false
	}
	return blockEdit(m, call, text)
}

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
		refs = append(refs, role.Ref, swapRefSuffix(role.Ref))
	}
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

// refRank prefers module outputs and top-level resources (what users write) over
// resources inside modules, and map keys in brackets over dotted ones.
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

// swapRefSuffix turns the reference of a role's ARN into that of its name and back.
func swapRefSuffix(r string) string {
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

// newNodeMapping is the aws-auth entry that authorizes a role for a purpose, with
// the role written the way the aws-auth store can hold it (decided later).
func newNodeMapping(m *cluster.Model, role identity.Role, p identity.Purpose) (cluster.RoleMapping, bool) {
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
		return a.Address != "iamIdentityMappings" && awsAuthObject(m) == nil
	}
	return eksctlObject(m) == nil && m.Terraform != nil
}

// rewriteAwsAuth writes the user's aws-auth mappings with one entry replaced
// (old != nil) or added (old == nil), in the format the configuration declares
// them: eksctl iamIdentityMappings, the ConfigMap manifest, terraform-aws-eks
// aws_auth_roles, or a Terraform ConfigMap resource.
func rewriteAwsAuth(m *cluster.Model, old, nu *cluster.RoleMapping) (Edit, bool) {
	a := m.Identity.AwsAuth
	switch {
	case a != nil && a.Address == "iamIdentityMappings":
		return rewriteEksctlMappings(m, old, nu)
	case a != nil && a.Managed == "user":
		if o := awsAuthObject(m); o != nil {
			return rewriteConfigMap(m, o, old, nu)
		}
		return rewriteTerraformAwsAuth(m, old, nu)
	case a == nil || a.Managed == "eks":
		// Nothing writes aws-auth yet: eksctl adds identity mappings to the
		// ConfigMap EKS maintains.
		if cc := eksctlObject(m); cc != nil && old == nil {
			return rewriteEksctlMappings(m, nil, nu)
		}
	}
	return Edit{}, false
}

func eksctlObject(m *cluster.Model) *cluster.Object {
	for _, o := range m.Objects {
		if o.Kind == "ClusterConfig" && strings.HasPrefix(o.APIVersion, "eksctl.io/") {
			return o
		}
	}
	return nil
}

func awsAuthObject(m *cluster.Model) *cluster.Object {
	for _, o := range m.Objects {
		if o.Kind == "ConfigMap" && o.Namespace == "kube-system" && o.Name == "aws-auth" && o.Manager != "cluster" {
			return o
		}
	}
	return nil
}

func sameMapping(item map[string]any, arnKey string, rm *cluster.RoleMapping) bool {
	arn, _ := item[arnKey].(string)
	user, _ := item["username"].(string)
	return arn == rm.RoleARN && user == rm.Username
}

func mappingItem(arnKey string, rm *cluster.RoleMapping) map[string]any {
	groups := make([]any, len(rm.Groups))
	for i, g := range rm.Groups {
		groups[i] = g
	}
	return map[string]any{arnKey: rm.RoleARN, "username": rm.Username, "groups": groups}
}

// editList replaces (or appends) one mapping in a raw list of mapping items.
func editList(list []any, arnKey string, old, nu *cluster.RoleMapping) ([]any, bool) {
	out := copyJSONList(list)
	if old == nil {
		return append(out, mappingItem(arnKey, nu)), true
	}
	for i, it := range out {
		item, ok := it.(map[string]any)
		if !ok || !sameMapping(item, arnKey, old) {
			continue
		}
		if nu == nil {
			return append(out[:i], out[i+1:]...), true
		}
		for k, v := range mappingItem(arnKey, nu) {
			item[k] = v
		}
		return out, true
	}
	return nil, false
}

func rewriteEksctlMappings(m *cluster.Model, old, nu *cluster.RoleMapping) (Edit, bool) {
	o := eksctlObject(m)
	if o == nil {
		return Edit{}, false
	}
	list, _ := o.Get("iamIdentityMappings").([]any)
	out, ok := editList(list, "arn", old, nu)
	if !ok {
		return Edit{}, false
	}
	return objectPatch(m, o, map[string]any{"iamIdentityMappings": out})
}

func rewriteConfigMap(m *cluster.Model, o *cluster.Object, old, nu *cluster.RoleMapping) (Edit, bool) {
	raw, _ := o.Get("data.mapRoles").(string)
	var list []any
	if strings.TrimSpace(raw) != "" {
		v, err := parseMapRolesList(raw)
		if err != nil {
			return Edit{}, false
		}
		list = v
	}
	out, ok := editList(list, "rolearn", old, nu)
	if !ok {
		return Edit{}, false
	}
	return objectPatch(m, o, map[string]any{"data": map[string]any{"mapRoles": mapRolesText(out)}})
}

// mapRolesText renders mapRoles the way the aws-auth documentation writes it:
// rolearn, username, groups, in that order.
func mapRolesText(list []any) string {
	var b strings.Builder
	for _, it := range list {
		item, ok := it.(map[string]any)
		if !ok {
			continue
		}
		first := true
		line := func(k string, v any) {
			prefix := "  "
			if first {
				prefix = "- "
				first = false
			}
			b.WriteString(prefix + k + ": " + strings.TrimSpace(yamlText(v)) + "\n")
		}
		for _, k := range []string{"rolearn", "username"} {
			if v, ok := item[k]; ok {
				line(k, v)
			}
		}
		if gs, ok := item["groups"].([]any); ok {
			if first {
				b.WriteString("- groups:\n")
				first = false
			} else {
				b.WriteString("  groups:\n")
			}
			for _, g := range gs {
				b.WriteString("  - " + strings.TrimSpace(yamlText(g)) + "\n")
			}
		}
		var rest []string
		for k := range item {
			if k != "rolearn" && k != "username" && k != "groups" {
				rest = append(rest, k)
			}
		}
		sort.Strings(rest)
		for _, k := range rest {
			line(k, item[k])
		}
	}
	return b.String()
}

// rewriteTerraformAwsAuth rewrites aws_auth_roles of the module that manages
// aws-auth (terraform-aws-eks v19, or its v20 aws-auth sub-module), or the
// mapRoles of a kubernetes_config_map resource.
func rewriteTerraformAwsAuth(m *cluster.Model, old, nu *cluster.RoleMapping) (Edit, bool) {
	a := m.Identity.AwsAuth
	if a == nil || m.Terraform == nil {
		return Edit{}, false
	}
	var entries []cluster.RoleMapping
	found := old == nil
	for _, rm := range a.Roles {
		if implicitTerraformMapping(m, rm) {
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
		return Edit{}, false
	}
	if old == nil {
		entries = append(entries, *nu)
	}
	list := hclMappings(entries)
	if call, ok := terraform.ModuleCall(a.Address); ok {
		return blockEdit(m, call, "aws_auth_roles = "+list+"\n")
	}
	if _, ok := m.Terraform.Nodes[a.Address]; ok {
		return blockEdit(m, a.Address, "data = {\n  mapRoles = yamlencode("+list+")\n}\n")
	}
	return Edit{}, false
}

// implicitTerraformMapping tells the entries terraform-aws-eks adds to aws-auth by
// itself (its node groups' and Fargate profiles' roles) from the user's
// aws_auth_roles.
func implicitTerraformMapping(m *cluster.Model, rm cluster.RoleMapping) bool {
	c := m.Cluster.Address
	if c == "" {
		return false
	}
	for _, e := range cluster.UnknownExprs(rm.RoleARN) {
		for _, in := range []string{".fargate_profiles", ".eks_managed_node_groups", ".self_managed_node_groups"} {
			if strings.HasPrefix(e, c+in) {
				return true
			}
		}
	}
	return false
}

func hclMappings(entries []cluster.RoleMapping) string {
	var b strings.Builder
	b.WriteString("[\n")
	for _, rm := range entries {
		var groups []string
		for _, g := range rm.Groups {
			groups = append(groups, terraform.StringExpr(g))
		}
		fmt.Fprintf(&b, "  {\n    rolearn  = %s\n    username = %s\n    groups   = [%s]\n  },\n", terraform.StringExpr(rm.RoleARN), terraform.StringExpr(rm.Username), strings.Join(groups, ", "))
	}
	b.WriteString("]")
	return b.String()
}

// fixAccessEntry makes an access entry the type the purpose needs.
func fixAccessEntry(m *cluster.Model, e *cluster.AccessEntry, p identity.Purpose) (Edit, bool) {
	if e == nil {
		return Edit{}, false
	}
	if strings.HasPrefix(e.Address, "accessConfig.accessEntries.") {
		return eksctlAccessEntries(m, func(list []any) ([]any, bool) {
			for _, it := range list {
				item, ok := it.(map[string]any)
				if !ok || item["principalARN"] != e.PrincipalARN {
					continue
				}
				item["type"] = p.EntryType()
				delete(item, "kubernetesGroups")
				delete(item, "accessPolicies")
				return list, true
			}
			return nil, false
		})
	}
	if m.Terraform == nil {
		return Edit{}, false
	}
	typ := fmt.Sprintf("%q", p.EntryType())
	if _, ok := m.Terraform.Nodes[e.Address]; ok {
		return blockEdit(m, e.Address, "type = "+typ+"\nkubernetes_groups = null\n")
	}
	call, ok := terraform.ModuleCall(e.Address)
	if !ok || call == e.Address {
		return Edit{}, false
	}
	if strings.Contains(e.Address, ".aws_eks_access_entry.node") {
		// The karpenter module's own entry for its node role.
		return blockEdit(m, call, "access_entry_type = "+typ+"\n")
	}
	if key, ok := terraform.ForEachKey(e.Address); ok {
		return blockEdit(m, call, fmt.Sprintf("access_entries = {\n  %s = {\n    type = %s\n    kubernetes_groups = null\n  }\n}\n", terraform.MapKey(key), typ))
	}
	return Edit{}, false
}

func eksctlAccessEntries(m *cluster.Model, change func([]any) ([]any, bool)) (Edit, bool) {
	o := eksctlObject(m)
	if o == nil {
		return Edit{}, false
	}
	list, _ := o.Get("accessConfig.accessEntries").([]any)
	out, ok := change(copyJSONList(list))
	if !ok {
		return Edit{}, false
	}
	return objectPatch(m, o, map[string]any{"accessConfig": map[string]any{"accessEntries": out}})
}

// addAccessEntry creates an access entry for the role: in eksctl's accessConfig,
// through the karpenter module's own inputs when it creates the role, or as an
// aws_eks_access_entry resource next to the cluster.
func addAccessEntry(m *cluster.Model, res *identity.Resolver, nc *cluster.NodeClass, role identity.Role, p identity.Purpose) (Edit, bool) {
	if eksctlObject(m) != nil && m.Cluster.Defined && !strings.HasSuffix(m.Cluster.Origin.File, ".tf") {
		arn, ok := literalARN(m, role, true)
		if !ok {
			return Edit{}, false
		}
		return eksctlAccessEntries(m, func(list []any) ([]any, bool) {
			return append(list, map[string]any{"principalARN": arn, "type": p.EntryType()}), true
		})
	}
	if m.Terraform == nil {
		return Edit{}, false
	}
	typ := fmt.Sprintf("%q", p.EntryType())
	if role.Config != nil && strings.HasSuffix(role.Key, "#node") {
		if call, ok := terraform.ModuleCall(role.Config.Address); ok {
			return blockEdit(m, call, "create_access_entry = true\naccess_entry_type = "+typ+"\n")
		}
	}
	principal, ok := roleExpr(role, "arn")
	if !ok {
		lit, ok := literalARN(m, role, true)
		if !ok {
			return Edit{}, false
		}
		principal = terraform.StringExpr(lit)
	}
	file := m.Cluster.Origin.File
	if !strings.HasSuffix(file, ".tf") {
		return Edit{}, false
	}
	name := freeResourceName(m, "aws_eks_access_entry", nc.Name+"_node")
	return Edit{File: file, Format: FormatHCL, Text: fmt.Sprintf("resource \"aws_eks_access_entry\" %q {\n  cluster_name  = %s\n  principal_arn = %s\n  type          = %s\n}\n", name, clusterNameExpr(m), principal, typ)}, true
}

func clusterNameExpr(m *cluster.Model) string {
	a := m.Cluster.Address
	switch {
	case strings.HasPrefix(a, "module."):
		return a + ".cluster_name"
	case strings.HasPrefix(a, "aws_eks_cluster."):
		return a + ".name"
	}
	return terraform.StringExpr(m.Cluster.Name)
}

// freeResourceName returns a resource name of a type that is not taken yet.
func freeResourceName(m *cluster.Model, typ, base string) string {
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
	for i := 2; m.Terraform != nil && m.Terraform.Nodes[typ+"."+cand] != nil; i++ {
		cand = fmt.Sprintf("%s_%d", name, i)
	}
	return cand
}

func copyJSONList(v any) []any {
	l, _ := cluster.CopyJSON(v).([]any)
	return l
}

// parseMapRolesList decodes a YAML list (aws-auth mapRoles).
func parseMapRolesList(text string) ([]any, error) {
	var out []any
	if err := yaml.Unmarshal([]byte(text), &out); err != nil {
		return nil, err
	}
	return out, nil
}
