package terraform

import (
	"testing"

	"github.com/eksdoctor/eksdoctor/cluster"
)

func TestFargateDecl(t *testing.T) {
	t.Parallel()
	g := cluster.NewGraph()
	g.Add(&cluster.Resource{Address: "aws_eks_fargate_profile.karpenter", Type: "aws_eks_fargate_profile"})
	g.Add(&cluster.Resource{Address: "module.eks", Type: "module"})
	g.Add(&cluster.Resource{Address: "module.fp", Type: "module"})
	for _, c := range []struct {
		addr string
		want cluster.Decl
	}{
		{"aws_eks_fargate_profile.karpenter", cluster.Decl{Kind: cluster.DeclResource, Block: "aws_eks_fargate_profile.karpenter"}},
		{`module.eks.module.fargate_profile["kube-system"].aws_eks_fargate_profile.this[0]`, cluster.Decl{Kind: cluster.DeclModuleEntry, Block: "module.eks"}},
		{"module.fp.aws_eks_fargate_profile.this[0]", cluster.Decl{Kind: cluster.DeclModule, Block: "module.fp"}},
		{"module.other.aws_eks_fargate_profile.this[0]", cluster.Decl{}},
		{"fargateProfiles.0", cluster.Decl{}},
	} {
		if got := fargateDecl(g, c.addr); got != c.want {
			t.Errorf("fargateDecl(%s) = %+v, want %+v", c.addr, got, c.want)
		}
	}
	if got := fargateDecl(nil, "aws_eks_fargate_profile.karpenter"); got != (cluster.Decl{}) {
		t.Errorf("without a graph: %+v", got)
	}
}

func TestFargateWritersOnlyWriteTheirDeclarations(t *testing.T) {
	t.Parallel()
	g := cluster.NewGraph()
	g.Add(&cluster.Resource{Address: "module.eks", Type: "module", Origin: cluster.Origin{File: "main.tf", Line: 3}})
	entry := &cluster.FargateProfile{Name: "kube-system", Origin: cluster.Origin{File: "main.tf", Line: 9},
		Selectors: []cluster.FargateSelector{{Namespace: "kube-system"}},
		Decl:      cluster.Decl{Kind: cluster.DeclModuleEntry, Block: "module.eks"}}
	sel := cluster.FargateSelector{Namespace: "karpenter", Labels: map[string]string{"b": "2", "a": "1"}}
	e, ok := AddFargateSelector(g, entry, sel)
	want := "selectors = [\n  { namespace = \"kube-system\" },\n  { namespace = \"karpenter\", labels = { \"a\" = \"1\", \"b\" = \"2\" } },\n]\n"
	if !ok || e.File != "main.tf" || e.Line != 9 || e.Format != cluster.FormatHCL || e.Text != want {
		t.Errorf("AddFargateSelector on a module entry = %+v, %v; want the entry's selectors %q", e, ok, want)
	}
	e, ok = NewFargateProfile(g, entry, "karpenter", sel)
	if !ok || e.Line != 3 || e.Text != "fargate_profiles = {\n  karpenter = {\n    selectors = [{ namespace = \"karpenter\", labels = { \"a\" = \"1\", \"b\" = \"2\" } }]\n  }\n}\n" {
		t.Errorf("NewFargateProfile beside a module entry = %+v, %v", e, ok)
	}
	eksctl := &cluster.FargateProfile{Name: "fp", Decl: cluster.Decl{Kind: cluster.DeclEksctl, List: "fargateProfiles"}}
	if _, ok := AddFargateSelector(g, eksctl, sel); ok {
		t.Error("the Terraform writer wrote an eksctl profile")
	}
	if _, ok := NewFargateProfile(g, &cluster.FargateProfile{Decl: cluster.Decl{Kind: cluster.DeclResource, Block: "x"}}, "n", sel); ok {
		t.Error("a new profile was declared beside a resource, which has no map of profiles")
	}
}
