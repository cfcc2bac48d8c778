package sim

import "testing"

// TestResourceEditInsideAModule: depends_on inside a module names resources
// without the module's address; what is outside the module cannot be named
// there and is said in a comment instead.
func TestResourceEditInsideAModule(t *testing.T) {
	for _, c := range []struct {
		addr string
		deps []string
		want string
	}{
		{"helm_release.karpenter", []string{"module.eks", "aws_iam_role.node"},
			"depends_on = [\n  module.eks,\n  aws_iam_role.node,\n]\n"},
		{"module.aws.helm_release.karpenter", []string{"module.aws.aws_iam_role_policy.controller", "module.aws.null_resource.ready", "module.eks"},
			"depends_on = [\n  aws_iam_role_policy.controller,\n  null_resource.ready,\n  # module.eks is outside this module: add it to depends_on of the module call instead\n]\n"},
		{"module.a.module.b.kubectl_manifest.pool", []string{"module.a.module.b.helm_release.k"},
			"depends_on = [\n  helm_release.k,\n]\n"},
	} {
		got := ResourceEdit{Address: c.addr, Attr: "depends_on", DependsOn: c.deps}.HCL()
		if got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.addr, got, c.want)
		}
	}
}
