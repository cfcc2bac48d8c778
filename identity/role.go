package identity

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/terraform"
)

// Match is the answer to "are these the same role?".
type Match int

const (
	_ Match = iota
	// Yes: provably the same role.
	Yes
	// No: provably different roles.
	No
	// Maybe: it depends on values unknown before apply.
	Maybe
)

func (m Match) String() string {
	switch m {
	case Yes:
		return "yes"
	case No:
		return "no"
	case Maybe:
		return "maybe"
	}
	return "invalid"
}

// Role is what a role reference denotes: a name, an ARN, or an expression whose
// value is unknown before apply, resolved as far as the configuration allows.
type Role struct {
	// Text is the reference as written.
	Text string
	// Name is the role name, possibly with placeholders; "" when not even a
	// pattern is known. For a role created with a name prefix it is the prefix.
	Name string
	// NamePrefix is set when Name is only the prefix of the real name.
	NamePrefix bool
	// ARN is set when the reference is (or the role has) an ARN.
	ARN    ARN
	HasARN bool
	// Ref is the expression (module output, resource attribute) the value comes
	// from, when it is unknown before apply; Key is the role that expression
	// denotes, the same for the name and the ARN of one role
	// ("module.karpenter#node", "aws_iam_role.node").
	Ref string
	Key string
	// Config is the role as the configuration declares it, when found.
	Config *cluster.IAMRole
	// Kind is what the role is for, and Why says how that is known.
	Kind cluster.RoleKind
	Why  string
}

// IsZero reports whether the reference is empty.
func (r Role) IsZero() bool { return r.Text == "" && r.Config == nil }

// Known reports whether the role's real name is known before apply.
func (r Role) Known() bool {
	return r.Name != "" && !r.NamePrefix && !cluster.IsUnknown(r.Name)
}

// String names the role for messages: its name when known, else the expression.
func (r Role) String() string {
	switch {
	case r.Known():
		return r.Name
	case r.Ref != "":
		return r.Ref
	case r.Config != nil && r.Config.Address != "":
		return r.Config.Address
	case r.Text != "":
		return r.Text
	}
	return "(unnamed role)"
}

// Resolver resolves role references against one model.
type Resolver struct {
	m *cluster.Model
	// uses classifies roles by how the configuration uses them.
	uses []use
}

type use struct {
	role Role
	kind cluster.RoleKind
	why  string
}

// New returns a resolver for m. The model must not change afterwards.
func New(m *cluster.Model) *Resolver {
	r := &Resolver{m: m}
	r.collectUses()
	return r
}

// Model returns the model the resolver answers for.
func (r *Resolver) Model() *cluster.Model { return r.m }

// refRE finds references to Terraform values inside an expression.
var refRE = regexp.MustCompile(`\b(?:module\.[A-Za-z0-9_-]+(?:\[[^\]]*\])?(?:\.[A-Za-z0-9_-]+(?:\[[^\]]*\])?)+|data\.[A-Za-z0-9_]+\.[A-Za-z0-9_-]+(?:\[[^\]]*\])?\.[A-Za-z0-9_]+|aws_[a-z0-9_]+\.[A-Za-z0-9_-]+(?:\[[^\]]*\])?\.[A-Za-z0-9_]+|var\.[A-Za-z0-9_-]+|local\.[A-Za-z0-9_-]+)`)

// refsOf returns the distinct Terraform references inside an expression.
func refsOf(expr string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range refRE.FindAllString(expr, -1) {
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}

// karpenterOutputs gives the meaning of the karpenter sub-module's outputs across
// versions. v19: role_* is the node role, irsa_* the controller role. v20+:
// node_iam_role_* is the node role, iam_role_* the controller role. The names never
// overlap across versions, which is exactly why a rename from role_arn to
// iam_role_arn silently swaps the node role for the controller role.
var karpenterOutputs = map[string]struct {
	kind cluster.RoleKind
	why  string
}{
	"role_arn":                  {cluster.RoleNode, "v19 output role_arn of the karpenter module is the node role"},
	"role_name":                 {cluster.RoleNode, "v19 output role_name of the karpenter module is the node role"},
	"role_unique_id":            {cluster.RoleNode, "v19 output role_unique_id of the karpenter module is the node role"},
	"node_iam_role_arn":         {cluster.RoleNode, "output node_iam_role_arn of the karpenter module is the node role"},
	"node_iam_role_name":        {cluster.RoleNode, "output node_iam_role_name of the karpenter module is the node role"},
	"node_iam_role_unique_id":   {cluster.RoleNode, "output node_iam_role_unique_id of the karpenter module is the node role"},
	"instance_profile_name":     {cluster.RoleNode, "output instance_profile_name of the karpenter module is the node role's instance profile"},
	"instance_profile_arn":      {cluster.RoleNode, "output instance_profile_arn of the karpenter module is the node role's instance profile"},
	"instance_profile_id":       {cluster.RoleNode, "output instance_profile_id of the karpenter module is the node role's instance profile"},
	"iam_role_arn":              {cluster.RoleController, "v20+ output iam_role_arn of the karpenter module is the controller role (v19's role_arn was the node role; v20 renamed it node_iam_role_arn)"},
	"iam_role_name":             {cluster.RoleController, "v20+ output iam_role_name of the karpenter module is the controller role (v19's role_name was the node role; v20 renamed it node_iam_role_name)"},
	"iam_role_unique_id":        {cluster.RoleController, "v20+ output iam_role_unique_id of the karpenter module is the controller role"},
	"irsa_arn":                  {cluster.RoleController, "v19 output irsa_arn of the karpenter module is the controller role"},
	"irsa_name":                 {cluster.RoleController, "v19 output irsa_name of the karpenter module is the controller role"},
	"irsa_unique_id":            {cluster.RoleController, "v19 output irsa_unique_id of the karpenter module is the controller role"},
	"pod_identity_role_arn":     {cluster.RoleController, "output pod_identity_role_arn of the karpenter module is the controller role"},
	"fargate_profile_role_arn":  {cluster.RoleFargate, "Fargate profile output is the pod execution role"},
	"iam_role_arn_fargate":      {cluster.RoleFargate, "Fargate profile output is the pod execution role"},
	"fargate_profile_role_name": {cluster.RoleFargate, "Fargate profile output is the pod execution role"},
}

// isKarpenterModule tells whether a module call is the karpenter sub-module. When
// the configuration does not say (no graph, no source), a module whose name
// mentions karpenter is taken to be it: the output names are distinctive enough.
func (r *Resolver) isKarpenterModule(call string) bool {
	if g := r.m.Terraform; g != nil {
		if res, ok := g.Nodes[call]; ok && res.Source != "" {
			return strings.Contains(res.Source, "karpenter")
		}
	}
	if r.m.Karpenter.Address != "" && r.m.Karpenter.Address == call {
		return true
	}
	return strings.Contains(strings.ToLower(call), "karpenter")
}

// isEKSModule tells whether a module call is terraform-aws-modules/eks itself
// (not one of its sub-modules).
func (r *Resolver) isEKSModule(call string) bool {
	if r.m.Cluster.Address == call {
		return true
	}
	if g := r.m.Terraform; g != nil {
		if res, ok := g.Nodes[call]; ok {
			s := strings.TrimPrefix(res.Source, "registry.terraform.io/")
			return strings.HasPrefix(s, "terraform-aws-modules/eks/aws") && !strings.Contains(s, "//")
		}
	}
	return false
}

// keyOf turns a reference to a role attribute into the key of the role: the name,
// ARN and id of one role share it. Karpenter module outputs map to the node or
// controller role of the module call, whatever the version.
func (r *Resolver) keyOf(ref string) (key string, kind cluster.RoleKind, why string) {
	if call, rest, ok := terraform.SplitModuleCall(ref); ok && !strings.Contains(rest, ".") && r.isKarpenterModule(call) {
		if o, ok := karpenterOutputs[rest]; ok {
			suffix := "#node"
			switch o.kind {
			case cluster.RoleController:
				suffix = "#controller"
			case cluster.RoleFargate:
				suffix = "#fargate"
			}
			return call + suffix, o.kind, o.why
		}
	}
	if call, rest, ok := terraform.SplitModuleCall(ref); ok && strings.HasPrefix(rest, "cluster_iam_role_") && r.isEKSModule(call) {
		return call + "#cluster", cluster.RoleCluster, "output " + rest + " of terraform-aws-modules/eks is the cluster's own IAM role, which the EKS control plane assumes"
	}
	if strings.HasPrefix(ref, "var.") || strings.HasPrefix(ref, "local.") {
		// Two variables may name two roles; only attributes of one resource or
		// outputs of one module follow the <role>_arn / <role>_name convention.
		return ref, cluster.RoleUnknown, ""
	}
	i := strings.LastIndexByte(ref, '.')
	if i < 0 {
		return ref, cluster.RoleUnknown, ""
	}
	head, last := ref[:i], ref[i+1:]
	switch last {
	case "arn", "name", "id", "unique_id":
		return head, cluster.RoleUnknown, ""
	}
	for _, suf := range []string{"_arn", "_name", "_unique_id", "_id"} {
		if strings.HasSuffix(last, suf) {
			return head + "." + strings.TrimSuffix(last, suf), cluster.RoleUnknown, ""
		}
	}
	return ref, cluster.RoleUnknown, ""
}

// Resolve resolves a role reference: a role name, a role ARN, or a placeholder.
func (r *Resolver) Resolve(text string) Role {
	role := r.parse(text)
	r.classify(&role)
	return role
}

// parse resolves without classifying.
func (r *Resolver) parse(text string) Role {
	text = strings.TrimSpace(text)
	role := Role{Text: text}
	if text == "" {
		return role
	}
	if a, ok := ParseRoleARN(text); ok {
		role.ARN, role.HasARN, role.Name = a, true, a.Name
	} else if !cluster.IsUnknown(text) {
		role.Name = text
	}
	if cluster.IsUnknown(text) {
		// The value comes from an expression: a whole placeholder, or the name
		// part of an ARN built around one. Find the one role reference in it.
		src := text
		if role.HasARN {
			src = role.ARN.Name
		}
		refs := refsOf(strings.Join(cluster.UnknownExprs(src), " "))
		// Only a value that is the reference itself names a role by it; in a
		// pattern such as "KarpenterNodeRole-${var.cluster}" the reference is
		// a part of the name, not a role.
		_, whole := cluster.UnknownExpr(src)
		whole = whole && len(refs) == 1
		if whole {
			role.Ref = refs[0]
			role.Key, role.Kind, role.Why = r.keyOf(refs[0])
		}
		if !role.HasARN {
			if whole {
				role.Name = ""
			} else {
				role.Name = text
			}
		}
		if role.Name == "" && role.Ref != "" {
			role.Name = r.dataSourceName(role.Key)
		}
	}
	if c := r.configRole(role); c != nil {
		role = r.fromConfig(c, role.Text)
	}
	return role
}

// dataSourceName returns the name an aws_iam_role data source looks up, when the
// configuration states it.
func (r *Resolver) dataSourceName(key string) string {
	g := r.m.Terraform
	if g == nil || !strings.HasPrefix(key, "data.aws_iam_role.") {
		return ""
	}
	n, ok := g.Nodes[key]
	if !ok {
		return ""
	}
	name, _ := n.Attrs["name"].(string)
	if cluster.IsUnknown(name) {
		return ""
	}
	return name
}

// configRole finds the configuration's role a reference denotes.
func (r *Resolver) configRole(ref Role) *cluster.IAMRole {
	var byName *cluster.IAMRole
	for _, c := range r.m.Identity.Roles {
		if c == nil {
			continue
		}
		if ref.Ref != "" {
			for _, cr := range c.Refs {
				if cr == ref.Ref {
					return c
				}
				if k, _, _ := r.keyOf(cr); k != "" && k == ref.Key {
					return c
				}
			}
			if c.ARN != "" && c.ARN == ref.Text {
				return c
			}
			continue
		}
		if ref.Name == "" || cluster.IsUnknown(ref.Name) || c.NamePrefix {
			continue
		}
		if nameMatch(c.Name, ref.Name) == Yes && byName == nil {
			if ref.HasARN {
				if ca, ok := ParseRoleARN(c.ARN); ok && (partMatch(ca.Account, ref.ARN.Account) == No || partMatch(ca.Partition, ref.ARN.Partition) == No) {
					continue
				}
			}
			byName = c
		}
	}
	return byName
}

// fromConfig describes a configuration role.
func (r *Resolver) fromConfig(c *cluster.IAMRole, text string) Role {
	role := Role{Text: text, Config: c, Name: c.Name, NamePrefix: c.NamePrefix}
	if text == "" {
		role.Text = c.Address
	}
	if a, ok := ParseRoleARN(c.ARN); ok {
		role.ARN, role.HasARN = a, true
		if role.Name == "" {
			role.Name = a.Name
		}
	}
	if c.Path != "" && role.HasARN && !role.ARN.HasPath() {
		role.ARN.Path = c.Path
	}
	if expr, ok := cluster.UnknownExpr(role.Name); ok && len(refsOf(expr)) == 1 && refsOf(expr)[0] == expr {
		role.Name = ""
	}
	role.Ref = preferredRef(c)
	if role.Ref != "" {
		k, kind, why := r.keyOf(role.Ref)
		role.Key = k
		if kind != cluster.RoleUnknown {
			role.Kind, role.Why = kind, why
		}
	}
	if role.Key == "" && c.Address != "" {
		role.Key = c.Address
	}
	return role
}

// preferredRef picks the reference that names a configuration role best: the
// expression of its ARN when that is one reference (a module output the user can
// write), else its shortest reference.
func preferredRef(c *cluster.IAMRole) string {
	if expr, ok := cluster.UnknownExpr(c.ARN); ok {
		if refs := refsOf(expr); len(refs) == 1 && refs[0] == expr {
			return expr
		}
	}
	best := ""
	for _, cr := range c.Refs {
		if best == "" || len(cr) < len(best) || (len(cr) == len(best) && cr < best) {
			best = cr
		}
	}
	return best
}

// FromConfig describes a role the configuration declares.
func (r *Resolver) FromConfig(c *cluster.IAMRole) Role {
	role := r.fromConfig(c, "")
	r.classify(&role)
	return role
}

// Same reports whether two references denote the same role.
func Same(a, b Role) Match {
	if a.IsZero() || b.IsZero() {
		return Maybe
	}
	if a.Config != nil && b.Config != nil {
		if a.Config == b.Config {
			return Yes
		}
		if a.Known() && b.Known() {
			return nameMatch(a.Name, b.Name)
		}
		if a.Key != "" && a.Key == b.Key {
			return Yes
		}
		if strings.HasPrefix(a.Config.Address, "data.") || strings.HasPrefix(b.Config.Address, "data.") {
			// A data source may look up a role declared elsewhere.
			return Maybe
		}
		// Two roles the configuration creates are two roles.
		return No
	}
	if a.Key != "" && a.Key == b.Key {
		return Yes
	}
	if isCaller(a) != isCaller(b) {
		// The identity that runs Terraform (terraform-aws-eks' cluster creator
		// entry) is a person's or a pipeline's, not a role the configuration
		// names for its nodes, controllers or Fargate profiles.
		return No
	}
	if a.HasARN && b.HasARN {
		if partMatch(a.ARN.Account, b.ARN.Account) == No || partMatch(a.ARN.Partition, b.ARN.Partition) == No {
			return No
		}
	}
	// A name prefix never equals the name written out: the real name carries a
	// random suffix after it.
	if a.NamePrefix || b.NamePrefix {
		p, o := a, b
		if b.NamePrefix {
			p, o = b, a
		}
		if o.NamePrefix {
			return Maybe
		}
		if o.Known() && p.Name != "" && !globFold(pattern(p.Name)+"*", o.Name) {
			return No
		}
		if o.Known() && PrefixTrap(p, o.Name) {
			return No
		}
		return Maybe
	}
	if a.Name != "" && b.Name != "" {
		return nameMatch(a.Name, b.Name)
	}
	return Maybe
}

// isCaller reports whether a reference is the identity that runs Terraform (the
// cluster creator's access entry of terraform-aws-eks).
func isCaller(r Role) bool {
	for _, e := range cluster.UnknownExprs(r.Text) {
		if strings.Contains(e, "aws_iam_session_context") || strings.Contains(e, "aws_caller_identity") {
			return true
		}
	}
	return false
}

// PrefixTrap reports whether name is what a user writes for a role created with
// a name prefix: the prefix itself, with or without its trailing dash. The real
// name is the prefix followed by a random suffix, so no role has this name.
func PrefixTrap(prefixRole Role, name string) bool {
	if !prefixRole.NamePrefix || prefixRole.Name == "" || cluster.IsUnknown(prefixRole.Name) {
		return false
	}
	p := strings.ToLower(prefixRole.Name)
	n := strings.ToLower(name)
	return n == p || n == strings.TrimSuffix(p, "-")
}

// classify sets the role's kind: from its declaration (kind, trust policy), from
// the karpenter module output it comes from, then from how the configuration uses
// it.
func (r *Resolver) classify(role *Role) {
	if c := role.Config; c != nil {
		if c.Kind != cluster.RoleUnknown {
			role.Kind, role.Why = c.Kind, fmt.Sprintf("%s is declared as a %s", describeConfig(c), c.Kind)
			return
		}
		if k, why := kindFromTrust(c.Trust); k != cluster.RoleUnknown {
			role.Kind, role.Why = k, fmt.Sprintf("%s %s", describeConfig(c), why)
			return
		}
	}
	if role.Kind != cluster.RoleUnknown {
		return
	}
	for _, u := range r.uses {
		if Same(*role, u.role) == Yes {
			role.Kind, role.Why = u.kind, u.why
			return
		}
	}
}

func describeConfig(c *cluster.IAMRole) string {
	if c.Address != "" {
		return c.Address
	}
	if c.Name != "" {
		return fmt.Sprintf("role %q", c.Name)
	}
	return "the role"
}

// kindFromTrust classifies a role by who may assume it.
func kindFromTrust(trust []string) (cluster.RoleKind, string) {
	for _, t := range trust {
		switch lt := strings.ToLower(t); {
		case strings.Contains(lt, "eks-fargate-pods.amazonaws.com"):
			return cluster.RoleFargate, "is trusted by eks-fargate-pods.amazonaws.com (a Fargate pod execution role)"
		case strings.Contains(lt, "pods.eks.amazonaws.com"):
			return cluster.RoleController, "is trusted by pods.eks.amazonaws.com (EKS Pod Identity, assumed by a pod)"
		case strings.Contains(lt, "oidc-provider") || strings.Contains(lt, "oidc.eks.") || strings.Contains(lt, "oidc_provider") || strings.Contains(lt, "assumerolewithwebidentity"):
			return cluster.RoleController, "is trusted by the cluster's OIDC provider (IRSA, assumed by a pod)"
		}
	}
	for _, t := range trust {
		if strings.Contains(strings.ToLower(t), "ec2.amazonaws.com") {
			return cluster.RoleNode, "is trusted by ec2.amazonaws.com (an instance role)"
		}
	}
	for _, t := range trust {
		if lt := strings.ToLower(strings.TrimSpace(t)); lt == "eks.amazonaws.com" || strings.HasSuffix(lt, ":eks.amazonaws.com") {
			return cluster.RoleCluster, "is trusted by eks.amazonaws.com (the EKS control plane's role)"
		}
	}
	return cluster.RoleUnknown, ""
}

// IRSAAnnotation is the ServiceAccount annotation that binds it to an IAM role
// through the cluster's OIDC provider.
const IRSAAnnotation = "eks.amazonaws.com/role-arn"

// collectUses records every place the configuration says what a role is for.
func (r *Resolver) collectUses() {
	m := r.m
	add := func(text string, kind cluster.RoleKind, why string) {
		if strings.TrimSpace(text) == "" {
			return
		}
		r.uses = append(r.uses, use{role: r.parse(text), kind: kind, why: why})
	}
	for _, fp := range m.FargateProfiles {
		add(fp.PodExecutionRole, cluster.RoleFargate, fmt.Sprintf("it is the pod execution role of Fargate profile %q", fp.Name))
	}
	if g := m.Terraform; g != nil {
		if res, ok := g.Nodes[m.Cluster.Address]; ok && res.Type == "aws_eks_cluster" {
			if arn, ok := res.Attrs["role_arn"].(string); ok {
				add(arn, cluster.RoleCluster, fmt.Sprintf("it is the role of %s, which the EKS control plane assumes", res.Address))
			}
		}
	}
	for _, sa := range m.Identity.ServiceAccounts {
		mech := "IRSA"
		if sa.Mechanism == "pod-identity" {
			mech = "EKS Pod Identity"
		}
		add(sa.RoleARN, cluster.RoleController, fmt.Sprintf("service account %s/%s assumes it through %s", sa.Namespace, sa.Name, mech))
	}
	for _, o := range m.Objects {
		if o.Kind == "ServiceAccount" {
			if arn := o.Annotations[IRSAAnnotation]; arn != "" {
				add(arn, cluster.RoleController, fmt.Sprintf("service account %s/%s assumes it through IRSA (annotation %s)", o.Namespace, o.Name, IRSAAnnotation))
			}
		}
	}
	for _, rel := range m.HelmReleases {
		if rel == nil {
			continue
		}
		if arn, ok := cluster.Lookup(rel.Values, "serviceAccount.annotations").(map[string]any); ok {
			if s, ok := arn[IRSAAnnotation].(string); ok {
				add(s, cluster.RoleController, fmt.Sprintf("Helm release %s gives it to its service account (serviceAccount.annotations %s)", rel.Name, IRSAAnnotation))
			}
		}
	}
	if m.Karpenter.ControllerRole != "" {
		add(m.Karpenter.ControllerRole, cluster.RoleController, "it is the Karpenter controller role")
	}
	if m.Karpenter.NodeRole != "" {
		add(m.Karpenter.NodeRole, cluster.RoleNode, "it is the Karpenter node role")
	}
	for _, ng := range m.NodeGroups {
		add(ng.NodeRole, cluster.RoleNode, fmt.Sprintf("it is the node role of node group %q", ng.Name))
	}
	// Declared kinds and trust policies come first when classifying, so uses only
	// fill the gaps. Among uses, being a pod's or a Fargate profile's role is
	// stronger evidence than being used as a node role, which is the mistake the
	// checks look for.
	sort.SliceStable(r.uses, func(i, j int) bool { return r.uses[i].kind > r.uses[j].kind })
}
