package lint

import (
	"fmt"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/identity"
	"github.com/eksdoctor/eksdoctor/write"
)

// node-role-unauthorized: the role an EC2NodeClass gives its nodes is not authorized to join the cluster (aws-auth or access entries), so instances launch and never become nodes.

var nodeRoleUnauthorized = &Check{
	ID:       "node-role-unauthorized",
	Title:    "NodeClass node role cannot join the cluster",
	Family:   "F4",
	Severity: Error,
	Doc: Doc{
		What: "The IAM role an EC2NodeClass (or an EKS Auto Mode NodeClass, `eks.amazonaws.com/v1`) gives its instances (spec.role, or the role inside spec.instanceProfile) has no mapping that makes it a node under the cluster's authentication mode: no aws-auth mapRoles entry with username `system:node:{{EC2PrivateDNSName}}` and groups `system:bootstrappers` and `system:nodes` (no IAM path in the rolearn), and no access entry of type `EC2_LINUX` (`EC2_WINDOWS` for Windows). The finding says which mapping it looked for and what it found instead: an access entry whose type was omitted (EKS defaults it to STANDARD, which never makes a node), a wrong username, a missing group, an IAM path in the rolearn, an aws-auth entry that `authentication_mode = \"API\"` ignores, a STANDARD access entry that takes precedence over a correct aws-auth entry, or an EC2NodeClass that names a role by the prefix the karpenter module appends a random suffix to. An Auto Mode NodeClass's role joins through access entries alone: an entry of type `EC2` with the `AmazonEKSAutoNodePolicy` access policy (cluster scope), which EKS creates only for the built-in NodePools' role (the default NodeClass is not checked); a STANDARD or EC2_LINUX entry, an entry without the policy, or an aws-auth mapping is an error. Values not known before apply never make it an error; they give an info finding that says what could not be verified — except a warning when the only mapping the configuration writes for the role is wrong (no mapping it shows is right), or when the cluster uses aws-auth only (CONFIG_MAP), the configuration leaves aws-auth to EKS (which maps only managed node group and Fargate roles) and nothing maps the role: then only a mapping made by hand could let it join.",
		Why:  "Karpenter launches the instance, but the kubelet cannot register: its logs say `Unable to register node with API server\" err=\"Unauthorized\"`, the NodeClaim stays `Launched=True, Registered=Unknown` and is replaced after the registration timeout, again and again, while pods stay Pending.",
		Fix:  "For an Auto Mode NodeClass: an access entry of type `EC2` with an `aws_eks_access_policy_association` of `AmazonEKSAutoNodePolicy` (eksctl: `accessPolicies`); the fix adds both, or the missing association. Otherwise, authorize the role where the configuration already does it: an `aws_eks_access_entry` (or the karpenter module's `create_access_entry = true`, `access_entry_type = \"EC2_LINUX\"`), an `accessConfig.accessEntries` entry in eksctl, or an aws-auth mapRoles entry (`aws_auth_roles`, eksctl `iamIdentityMappings`, the ConfigMap). Correct a wrong entry in place. With `node_iam_role_use_name_prefix` left at true, point the EC2NodeClass at `module.karpenter.node_iam_role_name`, or set `node_iam_role_use_name_prefix = false`.",
	},
	Run: runNodeRoleUnauthorized,
}

func runNodeRoleUnauthorized(p *Pass) {
	m := p.Model
	if !identityDeclared(m) {
		return
	}
	res := identity.New(m)
	for _, nc := range sortedNodeClasses(m) {
		if nc.BuiltIn() {
			// EKS creates the access entry of the default NodeClass's role.
			continue
		}
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
				Detail:   nodeRoleWanted(nc) + " " + nodeJoinSymptom,
			})
			continue
		}
		if n := joinedNodes(m, nc.Object.Name); n > 0 {
			// In a running cluster, nodes of the class that registered prove
			// its role may join.
			continue
		}
		role := ncr.Role
		if role.Kind.NotForNodes() {
			// controller-role-as-node-role reports it, with the right role.
			continue
		}
		if trap := prefixTrapRole(res, role); trap != nil {
			reportPrefixTrap(p, res, nc, ncr, *trap)
			continue
		}
		auth := res.NodeAuthorization(role, ncr.Windows)
		if nc.AutoMode() {
			auth = res.Authorize(role, identity.AutoModeNode)
		}
		switch auth.Outcome {
		case identity.Unauthorized:
			p.Report(Finding{
				Object:  ref,
				Origin:  origin,
				Summary: fmt.Sprintf("%s: node role %s cannot join the cluster: %s", ref, asWritten(role), shortReason(auth)),
				Detail:  profileNote(nc) + strings.Join(auth.Explain(), "\n") + "\n" + nodeJoinSymptom,
				Fix:     nodeRoleFix(p, res, nc, ncr, auth),
			})
		case identity.Unverified:
			if why, ok := onlyManualMapping(p.Model, auth); ok {
				p.Report(Finding{
					Severity: Warning,
					Object:   ref,
					Origin:   origin,
					Summary:  fmt.Sprintf("%s: node role %s cannot join the cluster unless it is mapped by hand: %s", ref, asWritten(role), why),
					Detail:   profileNote(nc) + strings.Join(auth.Explain(), "\n") + "\n" + nodeJoinSymptom,
					Fix:      nodeRoleFix(p, res, nc, ncr, auth),
				})
				continue
			}
			if bad, ok := brokenOwnMapping(auth); ok && m.Live == nil {
				// The inputs map the role, wrongly, and nothing in them maps it
				// right: only a mapping they do not show could let it join.
				p.Report(Finding{
					Severity: Warning,
					Object:   ref,
					Origin:   origin,
					Summary:  fmt.Sprintf("%s: node role %s cannot join the cluster through the mapping the configuration gives it: %s", ref, asWritten(role), bad.Problems[0]),
					Detail:   profileNote(nc) + strings.Join(auth.Explain(), "\n") + "\nOnly a mapping the configuration does not show (an access entry made elsewhere) could let it join. " + nodeJoinSymptom,
					Fix:      nodeRoleFix(p, res, nc, ncr, auth),
				})
				continue
			}
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

// nodeRoleWanted says how the node role of a class must be authorized.
func nodeRoleWanted(nc *cluster.NodeClass) string {
	if nc.AutoMode() {
		return "The node role of an EKS Auto Mode NodeClass must have an access entry of type EC2 with the AmazonEKSAutoNodePolicy access policy (cluster scope); aws-auth never makes an Auto Mode node."
	}
	return "The node role must be authorized as a node (an EC2_LINUX access entry, or an aws-auth entry with username system:node:{{EC2PrivateDNSName}} and groups system:bootstrappers, system:nodes)."
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

// shortReason is the gist of an unauthorized role for the summary.
func shortReason(a identity.Authorization) string {
	if probs := a.Problems(); len(probs) > 0 {
		return probs[0]
	}
	if a.Purpose == identity.AutoModeNode {
		return "no access entry of type EC2 exists for it (EKS creates one only for the role of the built-in NodePools)"
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
		if !cr.Kind.NotForNodes() && identity.PrefixTrap(cr, role.Name) {
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
	if trap.Config != nil {
		if e, ok := write.ExactNodeRoleName(p.Model, trap.Config.Address); ok {
			f.Fix = &Fix{Summary: "create the node role with its exact name: node_iam_role_use_name_prefix = false", Edits: []Edit{e}}
		}
	}
	p.Report(f)
}

// nodeRoleFix proposes the smallest change that authorizes the role: correct a
// wrong mapping in place, else add one where the configuration already maps roles.
func nodeRoleFix(p *Pass, res *identity.Resolver, nc *cluster.NodeClass, ncr identity.NodeClassRole, a identity.Authorization) *Fix {
	m := p.Model
	if a.Purpose == identity.AutoModeNode {
		return autoModeNodeRoleFix(m, nc, a)
	}
	readsAccess := a.Mode != cluster.AuthConfigMap
	readsAwsAuth := a.Mode != cluster.AuthAPI
	if readsAccess {
		for _, f := range explicitMappings(a.Access.Found) {
			if len(f.Problems) > 0 {
				if e, ok := write.AccessEntryType(m, f.Entry, a.Purpose); ok {
					return &Fix{Summary: fmt.Sprintf("make the access entry for %s of type %s", a.Role, a.Purpose.EntryType()), Edits: []Edit{e}}
				}
			}
		}
	}
	if readsAwsAuth && a.Access.State != identity.Invalid {
		if e, fixed, ok := correctMapping(m, a.AwsAuth.Found, a.Purpose, true); ok {
			return &Fix{Summary: fmt.Sprintf("correct the aws-auth entry of %s: username %s, groups %s, no IAM path", a.Role, fixed.Username, strings.Join(fixed.Groups, ", ")), Edits: []Edit{e}}
		}
	}
	var edits []Edit
	var what []string
	addAccess := func() bool {
		if e, ok := write.NewAccessEntry(m, nc, a.Role, a.Purpose); ok {
			edits = append(edits, e)
			what = append(what, "an access entry of type "+a.Purpose.EntryType())
			return true
		}
		return false
	}
	addAwsAuth := func() bool {
		rm, ok := write.NodeMapping(m, a.Role, a.Purpose)
		if !ok {
			return false
		}
		if e, ok := write.AwsAuthMapping(m, nil, &rm); ok {
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

// usesAwsAuth reports whether the user writes aws-auth mappings.
func usesAwsAuth(m *cluster.Model) bool {
	a := m.Identity.AwsAuth
	return a != nil && a.Managed == "user"
}

func userAccessEntries(m *cluster.Model) []cluster.AccessEntry {
	var out []cluster.AccessEntry
	for _, e := range m.Identity.AccessEntries {
		if !e.Implicit && m.Terraform.InstanceKey(e.Address) != "cluster_creator" {
			out = append(out, e)
		}
	}
	return out
}

// brokenOwnMapping returns the mapping the configuration itself writes for a
// role (an aws-auth entry or an access entry, not one EKS or a tool adds)
// when every such mapping is wrong for the purpose, for reasons known before
// apply, and none is right.
func brokenOwnMapping(a identity.Authorization) (identity.Found, bool) {
	var bad []identity.Found
	for _, src := range []identity.SourceResult{a.AwsAuth, a.Access} {
		for _, f := range src.Found {
			if f.Implicit {
				continue
			}
			if len(f.Problems) == 0 || len(f.Unknown) > 0 {
				return identity.Found{}, false
			}
			bad = append(bad, f)
		}
		if len(src.Maybe) > 0 {
			return identity.Found{}, false
		}
	}
	if len(bad) == 0 {
		return identity.Found{}, false
	}
	return bad[0], true
}

// onlyManualMapping: the cluster authenticates through aws-auth alone
// (CONFIG_MAP), which the configuration does not write — EKS keeps it, adding
// only the roles of its managed node groups and Fargate profiles, and
// Karpenter never adds its own — and no entry there is for the role. Only an
// edit made by hand (kubectl, eksctl create iamidentitymapping) can map it.
func onlyManualMapping(m *cluster.Model, a identity.Authorization) (string, bool) {
	auth := m.Identity.AwsAuth
	if a.Mode != cluster.AuthConfigMap || m.Live != nil || !m.Cluster.Defined || auth == nil || auth.Managed != "eks" {
		return "", false
	}
	if len(a.AwsAuth.Found) > 0 || len(a.AwsAuth.Maybe) > 0 {
		return "", false
	}
	return "the cluster uses aws-auth only, which the configuration leaves to EKS: EKS maps only its managed node groups' and Fargate profiles' roles, and Karpenter never maps its own", true
}

// autoModeNodeRoleFix authorizes an Auto Mode node role: the type of a wrong
// access entry corrected (with the policy associated), else a new EC2 entry
// with its policy; aws-auth is never the answer.
func autoModeNodeRoleFix(m *cluster.Model, nc *cluster.NodeClass, a identity.Authorization) *Fix {
	for _, f := range explicitMappings(a.Access.Found) {
		if len(f.Problems) == 0 {
			continue
		}
		if f.Entry != nil && strings.EqualFold(f.Entry.EffectiveType(), cluster.AccessEC2) {
			if e, ok := write.AutoNodePolicy(m, nc, f.Entry); ok {
				return &Fix{Summary: fmt.Sprintf("associate AmazonEKSAutoNodePolicy with the access entry of %s", a.Role), Edits: []Edit{e}}
			}
			return nil
		}
		if e, ok := write.AccessEntryType(m, f.Entry, a.Purpose); ok {
			edits := []Edit{e}
			if pe, ok := write.AutoNodePolicy(m, nc, f.Entry); ok && !hasAutoNodePolicy(m, f.Entry) {
				edits = append(edits, pe)
			}
			return &Fix{Summary: fmt.Sprintf("make the access entry for %s of type EC2, with AmazonEKSAutoNodePolicy", a.Role), Edits: edits}
		}
		return nil
	}
	if e, ok := write.NewAccessEntry(m, nc, a.Role, a.Purpose); ok {
		return &Fix{Summary: fmt.Sprintf("authorize %s as an EKS Auto Mode node: add an access entry of type EC2 with AmazonEKSAutoNodePolicy", a.Role), Edits: []Edit{e}}
	}
	return nil
}

// hasAutoNodePolicy reports whether the configuration associates any
// AmazonEKSAutoNodePolicy with the entry's principal.
func hasAutoNodePolicy(m *cluster.Model, e *cluster.AccessEntry) bool {
	for _, pa := range m.Identity.PolicyAssociations {
		if pa.PrincipalARN == e.PrincipalARN && strings.HasSuffix(pa.PolicyARN, "/AmazonEKSAutoNodePolicy") {
			return true
		}
	}
	return false
}
