package lint

import (
	"fmt"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/identity"
	"github.com/eksdoctor/eksdoctor/write"
)

// controller-role-as-node-role: the Karpenter controller's role, or another non-node role, used or authorized as the nodes' role.

var controllerRoleAsNodeRole = &Check{
	ID:       "controller-role-as-node-role",
	Title:    "Controller, Fargate or cluster role used as a node role",
	Family:   "F4",
	Severity: Error,
	Doc: Doc{
		What: "A role meant for pods, the Karpenter controller role (trusted by the cluster's OIDC provider for IRSA or by pods.eks.amazonaws.com for EKS Pod Identity), or a Fargate pod execution role, or the EKS cluster role (trusted by eks.amazonaws.com: `module.eks.cluster_iam_role_*`, the aws_eks_cluster's role_arn), is used as a node role: it is the role inside the instance profile a v1alpha5 Provisioner or AWSNodeTemplate gets from the chart's `aws.defaultInstanceProfile`, it is an EC2NodeClass's spec.role, it is mapped in aws-auth with the node username `system:node:{{EC2PrivateDNSName}}` or the node groups, or it has an `EC2_LINUX`/`EC2_WINDOWS` access entry. The most common cause is the terraform-aws-eks v19 to v20 upgrade: v19's `module.karpenter.role_arn` was the node role, v20's `module.karpenter.iam_role_arn` is the controller role (the node role became `node_iam_role_arn`), so renaming `role_arn` to `iam_role_arn` in `aws_auth_roles` or in the EC2NodeClass silently swaps the roles.",
		Why:  "EC2 cannot assume a role that only trusts pods, so Karpenter's instances never get node credentials and never register (NodeClaim `Launched=True, Registered=Unknown`), while the real node role stays unauthorized. Mapping a pod's role as a node also lets that pod act as a node in the cluster.",
		Fix:  "Use the node role: `module.karpenter.node_iam_role_arn` / `node_iam_role_name` (v20+), `role_arn` / `role_name` (v19), or the role your node groups use; the fix proposes the node role the configuration already authorizes.",
	},
	Run: runControllerRoleAsNodeRole,
}

func runControllerRoleAsNodeRole(p *Pass) {
	m := p.Model
	res := identity.New(m)
	for _, nc := range sortedNodeClasses(m) {
		ncr, ok := res.NodeClassRole(nc)
		if !ok || ncr.Role.IsZero() {
			continue
		}
		role := ncr.Role
		if !role.Kind.NotForNodes() {
			continue
		}
		ref := nc.Object.Ref()
		f := Finding{
			Object:  ref,
			Origin:  nc.Object.At(ncr.Field),
			Summary: fmt.Sprintf("%s uses the %s %s as its node role", ref, role.Kind, asWritten(role)),
			Detail:  profileNote(nc) + misuseDetail(role),
		}
		if nr, ok := nodeRoleFor(res, role); ok {
			if e, ok := write.NodeClassRole(m, nc, ncr, nr); ok {
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
				if fixed, ok := write.NodeMapping(m, nr, identity.LinuxNode); ok {
					fixed.Username, fixed.Groups = rm.Username, rm.Groups
					if e, ok := write.AwsAuthMapping(m, rm, &fixed); ok {
						f.Fix = &Fix{Summary: fmt.Sprintf("map the node role %s instead", nr), Edits: []Edit{e}}
					}
				}
			} else if e, ok := write.AwsAuthMapping(m, rm, nil); ok {
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
		if !role.Kind.NotForNodes() {
			continue
		}
		f := Finding{
			Object:  cluster.ObjectRef{Kind: "AccessEntry", Name: accessEntryName(e)},
			Origin:  e.Origin,
			Summary: fmt.Sprintf("access entry %s makes the %s %s a node (type %s)", accessEntryName(e), role.Kind, role, typ),
			Detail:  misuseDetail(role),
		}
		if nr, ok := nodeRoleFor(res, role); ok {
			if ed, ok := write.AccessEntryPrincipal(m, e, nr); ok {
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
	if o := write.AwsAuthObject(m); o != nil {
		return o.Ref()
	}
	if a := m.Identity.AwsAuth; a != nil && a.Address == "iamIdentityMappings" {
		if o := write.EksctlConfig(m); o != nil {
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
		fmt.Fprintf(&b, "%s is %s: %s.\n", role, article(role.Kind.String()), role.Why)
	}
	switch role.Kind {
	case cluster.RoleController:
		b.WriteString("A controller role is assumed by a pod (IRSA or EKS Pod Identity); EC2 instances cannot assume it, so nodes launched with it never get credentials to register, and mapping it as a node lets the pod act as one.")
	case cluster.RoleFargate:
		b.WriteString("A Fargate pod execution role trusts eks-fargate-pods.amazonaws.com only; EC2 instances cannot assume it.")
	case cluster.RoleCluster:
		b.WriteString("The EKS cluster role trusts eks.amazonaws.com only: the control plane assumes it, EC2 instances cannot, and EKS maps it as no node.")
	}
	b.WriteString("\n" + nodeJoinSymptom)
	return b.String()
}

// nodeRoleFor proposes the node role a misused role should be replaced by: the
// node role of the same karpenter module, else the one node role the
// configuration authorizes or declares.
func nodeRoleFor(res *identity.Resolver, wrong identity.Role) (identity.Role, bool) {
	cands := res.NodeRoles()
	if nr, ok := res.ModuleNodeRole(wrong); ok {
		return nr, true
	}
	// The node classes' own node roles come first: a mapping of the wrong role
	// was almost always meant for them.
	var others []identity.Role
	for _, nc := range sortedNodeClasses(res.Model()) {
		if ncr, ok := res.NodeClassRole(nc); ok && !ncr.Role.IsZero() && !ncr.Role.Kind.NotForNodes() && identity.Same(ncr.Role, wrong) != identity.Yes {
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

// article puts "a" or "an" before a noun phrase.
func article(s string) string {
	if s != "" && strings.ContainsRune("AEIOUaeiou", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}
