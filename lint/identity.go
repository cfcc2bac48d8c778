package lint

import (
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/identity"
)

// The F4 checks: the node role of every EC2NodeClass must be authorized as a node
// for the cluster's authentication mode, and the roles meant for pods (the
// Karpenter controller role) or for Fargate must never stand in for it.

var nodeRoleUnauthorized = &Check{
	ID:       "node-role-unauthorized",
	Title:    "EC2NodeClass node role cannot join the cluster",
	Family:   "F4",
	Severity: Error,
	Doc: Doc{
		What: "The IAM role an EC2NodeClass gives its instances (spec.role, or the role inside spec.instanceProfile) has no mapping that makes it a node under the cluster's authentication mode: no aws-auth mapRoles entry with username `system:node:{{EC2PrivateDNSName}}` and groups `system:bootstrappers` and `system:nodes` (no IAM path in the rolearn), and no access entry of type `EC2_LINUX` (`EC2_WINDOWS` for Windows). The finding says which mapping it looked for and what it found instead: an access entry whose type was omitted (EKS defaults it to STANDARD, which never makes a node), a wrong username, a missing group, an IAM path in the rolearn, an aws-auth entry that `authentication_mode = \"API\"` ignores, a STANDARD access entry that takes precedence over a correct aws-auth entry, or an EC2NodeClass that names a role by the prefix the karpenter module appends a random suffix to. Values not known before apply never make it an error; they give an info finding that says what could not be verified.",
		Why:  "Karpenter launches the instance, but the kubelet cannot register: its logs say `Unable to register node with API server\" err=\"Unauthorized\"`, the NodeClaim stays `Launched=True, Registered=Unknown` and is replaced after the registration timeout, again and again, while pods stay Pending.",
		Fix:  "Authorize the role where the configuration already does it: an `aws_eks_access_entry` (or the karpenter module's `create_access_entry = true`, `access_entry_type = \"EC2_LINUX\"`), an `accessConfig.accessEntries` entry in eksctl, or an aws-auth mapRoles entry (`aws_auth_roles`, eksctl `iamIdentityMappings`, the ConfigMap). Correct a wrong entry in place. With `node_iam_role_use_name_prefix` left at true, point the EC2NodeClass at `module.karpenter.node_iam_role_name`, or set `node_iam_role_use_name_prefix = false`.",
		Before: `apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: demo, region: eu-west-1}
accessConfig:
  authenticationMode: API
  accessEntries:
  - principalARN: arn:aws:iam::111122223333:role/KarpenterNodeRole-demo
    kubernetesGroups: [system:nodes]     # type omitted: STANDARD
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{alias: al2023@latest}]`,
		After: `apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: demo, region: eu-west-1}
accessConfig:
  authenticationMode: API
  accessEntries:
  - principalARN: arn:aws:iam::111122223333:role/KarpenterNodeRole-demo
    type: EC2_LINUX`,
		Format: "yaml",
	},
	Run: runNodeRoleUnauthorized,
}

var controllerRoleAsNodeRole = &Check{
	ID:       "controller-role-as-node-role",
	Title:    "Controller or Fargate role used as a node role",
	Family:   "F4",
	Severity: Error,
	Doc: Doc{
		What: "A role meant for pods, the Karpenter controller role (trusted by the cluster's OIDC provider for IRSA or by pods.eks.amazonaws.com for EKS Pod Identity), or a Fargate pod execution role, is used as a node role: it is an EC2NodeClass's spec.role, it is mapped in aws-auth with the node username `system:node:{{EC2PrivateDNSName}}` or the node groups, or it has an `EC2_LINUX`/`EC2_WINDOWS` access entry. The most common cause is the terraform-aws-eks v19 to v20 upgrade: v19's `module.karpenter.role_arn` was the node role, v20's `module.karpenter.iam_role_arn` is the controller role (the node role became `node_iam_role_arn`), so renaming `role_arn` to `iam_role_arn` in `aws_auth_roles` or in the EC2NodeClass silently swaps the roles.",
		Why:  "EC2 cannot assume a role that only trusts pods, so Karpenter's instances never get node credentials and never register (NodeClaim `Launched=True, Registered=Unknown`), while the real node role stays unauthorized. Mapping a pod's role as a node also lets that pod act as a node in the cluster.",
		Fix:  "Use the node role: `module.karpenter.node_iam_role_arn` / `node_iam_role_name` (v20+), `role_arn` / `role_name` (v19), or the role your node groups use; the fix proposes the node role the configuration already authorizes.",
		Before: `module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "~> 20.0"
  authentication_mode = "API_AND_CONFIG_MAP"
}

module "aws_auth" {
  source  = "terraform-aws-modules/eks/aws//modules/aws-auth"
  version = "~> 20.0"
  manage_aws_auth_configmap = true
  aws_auth_roles = [{
    rolearn  = module.karpenter.iam_role_arn     # the controller role since v20
    username = "system:node:{{EC2PrivateDNSName}}"
    groups   = ["system:bootstrappers", "system:nodes"]
  }]
}`,
		After: `module "aws_auth" {
  source  = "terraform-aws-modules/eks/aws//modules/aws-auth"
  version = "~> 20.0"
  manage_aws_auth_configmap = true
  aws_auth_roles = [{
    rolearn  = module.karpenter.node_iam_role_arn
    username = "system:node:{{EC2PrivateDNSName}}"
    groups   = ["system:bootstrappers", "system:nodes"]
  }]
}`,
		Format: "hcl",
	},
	Run: runControllerRoleAsNodeRole,
}

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

const nodeJoinSymptom = "Instances launch but never become nodes: the kubelet logs `Unable to register node with API server\" err=\"Unauthorized\"` and the NodeClaim stays `Launched=True, Registered=Unknown` until Karpenter replaces it."

func runNodeRoleUnauthorized(p *Pass) {
	m := p.Model
	if !identityDeclared(m) {
		return
	}
	res := identity.New(m)
	for _, nc := range sortedNodeClasses(m) {
		ncr, ok := res.NodeClassRole(nc)
		if !ok {
			continue
		}
		ref := nc.Object.Ref()
		origin := nc.Object.At(ncr.Field)
		if ncr.Unresolved != "" {
			p.Report(Finding{
				Severity: Info,
				Object:   ref,
				Origin:   origin,
				Summary:  fmt.Sprintf("%s: could not verify that its node role may join the cluster: %s", ref, ncr.Unresolved),
				Detail:   "The node role must be authorized as a node (an EC2_LINUX access entry, or an aws-auth entry with username system:node:{{EC2PrivateDNSName}} and groups system:bootstrappers, system:nodes). " + nodeJoinSymptom,
			})
			continue
		}
		if n := joinedNodes(m, nc.Object.Name); n > 0 {
			// In a running cluster, nodes of the class that registered prove
			// its role may join.
			continue
		}
		role := ncr.Role
		if role.Kind == cluster.RoleController || role.Kind == cluster.RoleFargate {
			// controller-role-as-node-role reports it, with the right role.
			continue
		}
		if trap := prefixTrapRole(res, role); trap != nil {
			reportPrefixTrap(p, res, nc, ncr, *trap)
			continue
		}
		auth := res.NodeAuthorization(role, ncr.Windows)
		switch auth.Outcome {
		case identity.Unauthorized:
			p.Report(Finding{
				Object:  ref,
				Origin:  origin,
				Summary: fmt.Sprintf("%s: node role %s cannot join the cluster: %s", ref, asWritten(role), shortReason(auth)),
				Detail:  strings.Join(auth.Explain(), "\n") + "\n" + nodeJoinSymptom,
				Fix:     nodeRoleFix(p, res, nc, ncr, auth),
			})
		case identity.Unverified:
			p.Report(Finding{
				Severity: Info,
				Object:   ref,
				Origin:   origin,
				Summary:  fmt.Sprintf("%s: could not verify that node role %s may join the cluster%s", ref, asWritten(role), p.beforeApply()),
				Detail:   strings.Join(auth.Explain(), "\n"),
			})
		}
	}
}

// joinedNodes counts the registered nodes Karpenter launched for an EC2NodeClass
// (labelled karpenter.k8s.aws/ec2nodeclass); none outside a running cluster.
func joinedNodes(m *cluster.Model, class string) int {
	n := 0
	for _, node := range m.Nodes {
		if node.Labels["karpenter.k8s.aws/ec2nodeclass"] == class && node.Labels["karpenter.sh/registered"] == "true" {
			n++
		}
	}
	return n
}

// asWritten names a role the way the configuration refers to it: the expression
// when the reference is one, else its name.
func asWritten(r identity.Role) string {
	if e, ok := cluster.UnknownExpr(r.Text); ok {
		return e
	}
	return r.String()
}

// shortReason is the gist of an unauthorized role for the summary.
func shortReason(a identity.Authorization) string {
	if probs := a.Problems(); len(probs) > 0 {
		return probs[0]
	}
	switch a.Mode {
	case cluster.AuthAPI:
		if len(explicitMappings(a.AwsAuth.Found)) > 0 {
			return "authentication mode API ignores its aws-auth entry, and no " + a.Purpose.EntryType() + " access entry exists"
		}
		return "no " + a.Purpose.EntryType() + " access entry exists for it"
	case cluster.AuthConfigMap:
		if len(explicitMappings(a.Access.Found)) > 0 {
			return "authentication mode CONFIG_MAP ignores its access entry, and aws-auth does not map it"
		}
		return "aws-auth does not map it"
	}
	return "neither an access entry nor an aws-auth entry maps it"
}

func explicitMappings(fs []identity.Found) []identity.Found {
	var out []identity.Found
	for _, f := range fs {
		if !f.Implicit {
			out = append(out, f)
		}
	}
	return out
}

// prefixTrapRole finds the configuration role an EC2NodeClass means when it names
// a role by the prefix its real name starts with.
func prefixTrapRole(res *identity.Resolver, role identity.Role) *identity.Role {
	if role.Config != nil || !role.Known() {
		return nil
	}
	for _, c := range res.Model().Identity.Roles {
		if c == nil || !c.NamePrefix {
			continue
		}
		cr := res.FromConfig(c)
		if cr.Kind != cluster.RoleController && cr.Kind != cluster.RoleFargate && identity.PrefixTrap(cr, role.Name) {
			return &cr
		}
	}
	return nil
}

func reportPrefixTrap(p *Pass, res *identity.Resolver, nc *cluster.NodeClass, ncr identity.NodeClassRole, trap identity.Role) {
	ref := nc.Object.Ref()
	where := trap.String()
	if trap.Config != nil && trap.Config.Address != "" {
		where = trap.Config.Address
	}
	f := Finding{
		Object:  ref,
		Origin:  nc.Object.At(ncr.Field),
		Summary: fmt.Sprintf("%s: node role %q is only the name prefix of %s; the real name ends in a random suffix, so no role has this name", ref, ncr.Role.Name, where),
		Detail: fmt.Sprintf("%s is created with name_prefix %q (node_iam_role_use_name_prefix defaults to true), so its name is %q followed by a random suffix. Karpenter cannot create an instance profile for a role named %q, and the role that is authorized to join is the other one.\n%s",
			where, trap.Name, trap.Name, ncr.Role.Name, nodeJoinSymptom),
	}
	if e, ok := setModuleArg(p.Model, trap, "node_iam_role_use_name_prefix = false\n"); ok {
		f.Fix = &Fix{Summary: "create the node role with its exact name: node_iam_role_use_name_prefix = false", Edits: []Edit{e}}
	}
	p.Report(f)
}

// setModuleArg sets arguments of the module call that creates a role.
func setModuleArg(m *cluster.Model, role identity.Role, text string) (Edit, bool) {
	if role.Config == nil {
		return Edit{}, false
	}
	call, ok := moduleCallOf(role.Config.Address)
	if !ok {
		return Edit{}, false
	}
	return blockEdit(m, call, text)
}

// moduleCallOf returns the top-level module call ("module.karpenter") of an
// address inside it.
func moduleCallOf(addr string) (string, bool) {
	if !strings.HasPrefix(addr, "module.") {
		return "", false
	}
	rest := addr[len("module."):]
	depth := 0
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case '[':
			depth++
		case ']':
			depth--
		case '.':
			if depth == 0 {
				return "module." + rest[:i], true
			}
		}
	}
	return addr, true
}

// ---- node-role-unauthorized fixes ----

// nodeRoleFix proposes the smallest change that authorizes the role: correct a
// wrong mapping in place, else add one where the configuration already maps roles.
func nodeRoleFix(p *Pass, res *identity.Resolver, nc *cluster.NodeClass, ncr identity.NodeClassRole, a identity.Authorization) *Fix {
	m := p.Model
	readsAccess := a.Mode != cluster.AuthConfigMap
	readsAwsAuth := a.Mode != cluster.AuthAPI
	if readsAccess {
		for _, f := range explicitMappings(a.Access.Found) {
			if len(f.Problems) > 0 {
				if e, ok := fixAccessEntry(m, f.Entry, a.Purpose); ok {
					return &Fix{Summary: fmt.Sprintf("make the access entry for %s of type %s", a.Role, a.Purpose.EntryType()), Edits: []Edit{e}}
				}
			}
		}
	}
	if readsAwsAuth && a.Access.State != identity.Invalid {
		for _, f := range explicitMappings(a.AwsAuth.Found) {
			if len(f.Problems) == 0 || f.Mapping == nil {
				continue
			}
			fixed := *f.Mapping
			if arn, ok := identity.ParseRoleARN(fixed.RoleARN); ok && arn.HasPath() {
				fixed.RoleARN = arn.WithoutPath()
			} else if f.PathInARN {
				continue
			}
			fixed.Username = a.Purpose.Username()
			fixed.Groups = unionGroups(fixed.Groups, a.Purpose.Groups())
			if e, ok := rewriteAwsAuth(m, f.Mapping, &fixed); ok {
				return &Fix{Summary: fmt.Sprintf("correct the aws-auth entry of %s: username %s, groups %s, no IAM path", a.Role, fixed.Username, strings.Join(fixed.Groups, ", ")), Edits: []Edit{e}}
			}
		}
	}
	var edits []Edit
	var what []string
	addAccess := func() bool {
		if e, ok := addAccessEntry(m, res, nc, a.Role, a.Purpose); ok {
			edits = append(edits, e)
			what = append(what, "an access entry of type "+a.Purpose.EntryType())
			return true
		}
		return false
	}
	addAwsAuth := func() bool {
		rm, ok := newNodeMapping(m, a.Role, a.Purpose)
		if !ok {
			return false
		}
		if e, ok := rewriteAwsAuth(m, nil, &rm); ok {
			edits = append(edits, e)
			what = append(what, "an aws-auth entry")
			return true
		}
		return false
	}
	switch a.Mode {
	case cluster.AuthAPI:
		addAccess()
	case cluster.AuthConfigMap:
		addAwsAuth()
	case cluster.AuthAPIAndConfigMap:
		if usesAwsAuth(m) && len(userAccessEntries(m)) == 0 {
			if !addAwsAuth() {
				addAccess()
			}
		} else if !addAccess() {
			addAwsAuth()
		}
	default:
		// The mode is not known: authorize the role for every mode.
		addAccess()
		addAwsAuth()
	}
	if len(edits) == 0 {
		return nil
	}
	return &Fix{Summary: fmt.Sprintf("authorize %s as a %s: add %s", a.Role, a.Purpose, strings.Join(what, " and ")), Edits: edits}
}

func unionGroups(have, want []string) []string {
	out := append([]string(nil), have...)
	seen := map[string]bool{}
	for _, g := range have {
		seen[g] = true
	}
	for _, g := range want {
		if !seen[g] {
			out = append(out, g)
		}
	}
	return out
}

// usesAwsAuth reports whether the user writes aws-auth mappings.
func usesAwsAuth(m *cluster.Model) bool {
	a := m.Identity.AwsAuth
	return a != nil && a.Managed == "user"
}

func userAccessEntries(m *cluster.Model) []cluster.AccessEntry {
	var out []cluster.AccessEntry
	for _, e := range m.Identity.AccessEntries {
		if !e.Implicit && !strings.Contains(e.Address, `["cluster_creator"]`) {
			out = append(out, e)
		}
	}
	return out
}

// ---- role text in the user's formats ----

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

// ---- aws-auth edits ----

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
	if call, ok := moduleCallOf(a.Address); ok {
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
			groups = append(groups, hclStringExpr(g))
		}
		fmt.Fprintf(&b, "  {\n    rolearn  = %s\n    username = %s\n    groups   = [%s]\n  },\n", hclStringExpr(rm.RoleARN), hclStringExpr(rm.Username), strings.Join(groups, ", "))
	}
	b.WriteString("]")
	return b.String()
}

// hclStringExpr renders a model string as an HCL expression: a value that is one
// placeholder becomes its expression; other placeholders stay interpolations.
func hclStringExpr(s string) string {
	if e, ok := cluster.UnknownExpr(s); ok {
		return e
	}
	var b strings.Builder
	b.WriteByte('"')
	rest := s
	for _, e := range cluster.UnknownExprs(s) {
		ph := cluster.Unknown(e)
		i := strings.Index(rest, ph)
		if i < 0 {
			break
		}
		b.WriteString(hclEscapeLiteral(rest[:i]))
		b.WriteString(ph)
		rest = rest[i+len(ph):]
	}
	b.WriteString(hclEscapeLiteral(rest))
	b.WriteByte('"')
	return b.String()
}

func hclEscapeLiteral(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "%{", "%%{", "${", "$${")
	return r.Replace(s)
}

// ---- access entry edits ----

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
	call, ok := moduleCallOf(e.Address)
	if !ok || call == e.Address {
		return Edit{}, false
	}
	if strings.Contains(e.Address, ".aws_eks_access_entry.node") {
		// The karpenter module's own entry for its node role.
		return blockEdit(m, call, "access_entry_type = "+typ+"\n")
	}
	if key, ok := forEachKey(e.Address); ok {
		return blockEdit(m, call, fmt.Sprintf("access_entries = {\n  %s = {\n    type = %s\n    kubernetes_groups = null\n  }\n}\n", hclMapKey(key), typ))
	}
	return Edit{}, false
}

// forEachKey returns the for_each key of the last resource instance in an address.
func forEachKey(addr string) (string, bool) {
	i := strings.LastIndex(addr, `["`)
	j := strings.LastIndex(addr, `"]`)
	if i < 0 || j < i {
		return "", false
	}
	return addr[i+2 : j], true
}

func hclMapKey(k string) string {
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Sprintf("%q", k)
		}
	}
	return k
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
		if call, ok := moduleCallOf(role.Config.Address); ok {
			return blockEdit(m, call, "create_access_entry = true\naccess_entry_type = "+typ+"\n")
		}
	}
	principal, ok := roleExpr(role, "arn")
	if !ok {
		lit, ok := literalARN(m, role, true)
		if !ok {
			return Edit{}, false
		}
		principal = hclStringExpr(lit)
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
	return hclStringExpr(m.Cluster.Name)
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

// ---- objects ----

func copyJSONList(v any) []any {
	l, _ := copyJSON(v).([]any)
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

// ---- controller-role-as-node-role ----

func runControllerRoleAsNodeRole(p *Pass) {
	m := p.Model
	res := identity.New(m)
	for _, nc := range sortedNodeClasses(m) {
		ncr, ok := res.NodeClassRole(nc)
		if !ok || ncr.Role.IsZero() {
			continue
		}
		role := ncr.Role
		if role.Kind != cluster.RoleController && role.Kind != cluster.RoleFargate {
			continue
		}
		ref := nc.Object.Ref()
		f := Finding{
			Object:  ref,
			Origin:  nc.Object.At(ncr.Field),
			Summary: fmt.Sprintf("%s uses the %s %s as its node role", ref, role.Kind, asWritten(role)),
			Detail:  misuseDetail(role),
		}
		if nr, ok := nodeRoleFor(res, role); ok {
			if e, ok := nodeClassRoleEdit(m, nc, ncr, nr); ok {
				f.Fix = &Fix{Summary: fmt.Sprintf("use the node role %s", nr), Edits: []Edit{e}}
			}
		}
		p.Report(f)
	}
	if a := m.Identity.AwsAuth; a != nil {
		for i := range a.Roles {
			rm := &a.Roles[i]
			role := res.Resolve(rm.RoleARN)
			if !mapsAsNode(rm, role.Kind) {
				continue
			}
			f := Finding{
				Object:  awsAuthRef(m),
				Origin:  rm.Origin,
				Summary: fmt.Sprintf("aws-auth maps the %s %s as a node (username %s)", role.Kind, role, rm.Username),
				Detail:  misuseDetail(role),
			}
			if nr, ok := nodeRoleFor(res, role); ok {
				if fixed, ok := newNodeMapping(m, nr, identity.LinuxNode); ok {
					fixed.Username, fixed.Groups = rm.Username, rm.Groups
					if e, ok := rewriteAwsAuth(m, rm, &fixed); ok {
						f.Fix = &Fix{Summary: fmt.Sprintf("map the node role %s instead", nr), Edits: []Edit{e}}
					}
				}
			} else if e, ok := rewriteAwsAuth(m, rm, nil); ok {
				f.Fix = &Fix{Summary: "remove the entry: the role is not a node role", Edits: []Edit{e}}
			}
			p.Report(f)
		}
	}
	for i := range m.Identity.AccessEntries {
		e := &m.Identity.AccessEntries[i]
		typ := strings.ToUpper(e.Type)
		if typ != cluster.AccessEC2Linux && typ != cluster.AccessEC2Windows {
			continue
		}
		role := res.Resolve(e.PrincipalARN)
		if role.Kind != cluster.RoleController && role.Kind != cluster.RoleFargate {
			continue
		}
		f := Finding{
			Object:  cluster.ObjectRef{Kind: "AccessEntry", Name: accessEntryName(e)},
			Origin:  e.Origin,
			Summary: fmt.Sprintf("access entry %s makes the %s %s a node (type %s)", accessEntryName(e), role.Kind, role, typ),
			Detail:  misuseDetail(role),
		}
		if nr, ok := nodeRoleFor(res, role); ok {
			if ed, ok := setEntryPrincipal(m, e, nr); ok {
				f.Fix = &Fix{Summary: fmt.Sprintf("give the access entry to the node role %s", nr), Edits: []Edit{ed}}
			}
		}
		p.Report(f)
	}
}

// mapsAsNode reports whether an aws-auth entry makes a pod's or a Fargate role an
// EC2 node. A Fargate role with the Fargate username is mapped correctly.
func mapsAsNode(rm *cluster.RoleMapping, kind cluster.RoleKind) bool {
	switch kind {
	case cluster.RoleController:
		if rm.Username == identity.NodeUsername {
			return true
		}
		for _, g := range rm.Groups {
			if g == "system:nodes" || g == "system:bootstrappers" {
				return true
			}
		}
	case cluster.RoleFargate:
		return rm.Username == identity.NodeUsername
	}
	return false
}

func awsAuthRef(m *cluster.Model) cluster.ObjectRef {
	if o := awsAuthObject(m); o != nil {
		return o.Ref()
	}
	if a := m.Identity.AwsAuth; a != nil && a.Address == "iamIdentityMappings" {
		if o := eksctlObject(m); o != nil {
			return o.Ref()
		}
	}
	return cluster.ObjectRef{Kind: "ConfigMap", Namespace: "kube-system", Name: "aws-auth"}
}

func accessEntryName(e *cluster.AccessEntry) string {
	if e.Address != "" {
		return e.Address
	}
	return e.PrincipalARN
}

func misuseDetail(role identity.Role) string {
	var b strings.Builder
	if role.Why != "" {
		fmt.Fprintf(&b, "%s is a %s: %s.\n", role, role.Kind, role.Why)
	}
	switch role.Kind {
	case cluster.RoleController:
		b.WriteString("A controller role is assumed by a pod (IRSA or EKS Pod Identity); EC2 instances cannot assume it, so nodes launched with it never get credentials to register, and mapping it as a node lets the pod act as one.")
	case cluster.RoleFargate:
		b.WriteString("A Fargate pod execution role trusts eks-fargate-pods.amazonaws.com only; EC2 instances cannot assume it.")
	}
	b.WriteString("\n" + nodeJoinSymptom)
	return b.String()
}

// nodeRoleFor proposes the node role a misused role should be replaced by: the
// node role of the same karpenter module, else the one node role the
// configuration authorizes or declares.
func nodeRoleFor(res *identity.Resolver, wrong identity.Role) (identity.Role, bool) {
	cands := res.NodeRoles()
	if i := strings.LastIndexByte(wrong.Key, '#'); i > 0 {
		want := wrong.Key[:i] + "#node"
		for _, c := range cands {
			if c.Key == want {
				return c, true
			}
		}
		// The module's node role even when the configuration does not show it.
		nr := res.Resolve(cluster.Unknown(wrong.Key[:i] + ".node_iam_role_arn"))
		if strings.HasPrefix(wrong.Ref, wrong.Key[:i]+".irsa") {
			nr = res.Resolve(cluster.Unknown(wrong.Key[:i] + ".role_arn"))
		}
		return nr, true
	}
	// The node classes' own node roles come first: a mapping of the wrong role
	// was almost always meant for them.
	var others []identity.Role
	for _, nc := range sortedNodeClasses(res.Model()) {
		if ncr, ok := res.NodeClassRole(nc); ok && !ncr.Role.IsZero() && ncr.Role.Kind != cluster.RoleController && ncr.Role.Kind != cluster.RoleFargate && identity.Same(ncr.Role, wrong) != identity.Yes {
			others = appendRole(others, ncr.Role)
		}
	}
	if len(others) == 1 {
		return others[0], true
	}
	if len(others) > 1 {
		return identity.Role{}, false
	}
	for _, c := range cands {
		if identity.Same(c, wrong) != identity.Yes {
			others = appendRole(others, c)
		}
	}
	if len(others) == 1 {
		return others[0], true
	}
	return identity.Role{}, false
}

func appendRole(list []identity.Role, r identity.Role) []identity.Role {
	for _, x := range list {
		if identity.Same(x, r) == identity.Yes {
			return list
		}
	}
	return append(list, r)
}

// nodeClassRoleEdit points an EC2NodeClass at a node role.
func nodeClassRoleEdit(m *cluster.Model, nc *cluster.NodeClass, ncr identity.NodeClassRole, nr identity.Role) (Edit, bool) {
	var value string
	switch {
	case nr.Known():
		value = nr.Name
	case nc.Object.Via != "":
		expr, ok := roleExpr(nr, "name")
		if !ok {
			return Edit{}, false
		}
		value = cluster.Unknown(expr)
	default:
		return Edit{}, false
	}
	spec := map[string]any{"role": value}
	if ncr.Field == "spec.instanceProfile" {
		spec["instanceProfile"] = nil
	}
	return objectPatch(m, nc.Object, map[string]any{"spec": spec})
}

// setEntryPrincipal gives an access entry to another role.
func setEntryPrincipal(m *cluster.Model, e *cluster.AccessEntry, nr identity.Role) (Edit, bool) {
	if strings.HasPrefix(e.Address, "accessConfig.accessEntries.") {
		arn, ok := literalARN(m, nr, true)
		if !ok {
			return Edit{}, false
		}
		return eksctlAccessEntries(m, func(list []any) ([]any, bool) {
			for _, it := range list {
				if item, ok := it.(map[string]any); ok && item["principalARN"] == e.PrincipalARN {
					item["principalARN"] = arn
					return list, true
				}
			}
			return nil, false
		})
	}
	if m.Terraform == nil {
		return Edit{}, false
	}
	if _, ok := m.Terraform.Nodes[e.Address]; !ok {
		return Edit{}, false
	}
	principal, ok := roleExpr(nr, "arn")
	if !ok {
		lit, ok := literalARN(m, nr, true)
		if !ok {
			return Edit{}, false
		}
		principal = hclStringExpr(lit)
	}
	return blockEdit(m, e.Address, "principal_arn = "+principal+"\n")
}
