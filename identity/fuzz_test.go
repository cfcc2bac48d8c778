package identity

import (
	"testing"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// FuzzResolve feeds hostile role references through parsing, resolution,
// comparison and authorization: configurations are untrusted input, and none of
// it may panic.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		"arn:aws:iam::111122223333:role/team/KarpenterNodeRole-demo",
		"arn:${AWS_PARTITION}:iam::${AWS_ACCOUNT_ID}:role/KarpenterNodeRole-${CLUSTER_NAME}",
		"${module.karpenter.node_iam_role_name}",
		`${split("/", module.x.karpenter.node_iam_role_arn)[1]}`,
		"${a ? b : c}", "${", "}${", "arn:aws:iam::1:role/", "\x00A\x00", "*?*",
	} {
		f.Add(s, "KarpenterNodeRole-demo")
	}
	m := karpenterModel()
	m.Cluster.Defined = true
	m.Identity.AwsAuth = &cluster.AwsAuth{Complete: true, Managed: "user", Roles: []cluster.RoleMapping{{RoleARN: "arn:aws:iam::1:role/x", Username: NodeUsername}}}
	m.Identity.AccessEntries = []cluster.AccessEntry{{PrincipalARN: "${module.karpenter.node_iam_role_arn}", Type: "EC2_LINUX"}}
	r := New(m)
	f.Fuzz(func(t *testing.T, a, b string) {
		ParseRoleARN(a)
		ra, rb := r.Resolve(a), r.Resolve(b)
		if Same(ra, rb) != Same(rb, ra) {
			t.Errorf("Same(%q, %q) is not symmetric", a, b)
		}
		_ = ra.String()
		for _, p := range []Purpose{LinuxNode, WindowsNode, FargatePods} {
			au := r.Authorize(ra, p)
			_ = au.Explain()
		}
		r.NodeClassRole(&cluster.NodeClass{InstanceProfile: a})
	})
}
