package terraform

import (
	"testing"

	"github.com/eksdoctor/eksdoctor/cluster"
)

func TestAccessEntryDecl(t *testing.T) {
	t.Parallel()
	g := cluster.NewGraph()
	g.Add(&cluster.Resource{Address: "aws_eks_access_entry.nodes", Type: "aws_eks_access_entry"})
	for _, c := range []struct {
		addr string
		want cluster.Decl
	}{
		{"aws_eks_access_entry.nodes", cluster.Decl{Kind: cluster.DeclResource, Block: "aws_eks_access_entry.nodes"}},
		{"module.karpenter.aws_eks_access_entry.node[0]", cluster.Decl{Kind: cluster.DeclModule, Block: "module.karpenter"}},
		{`module.eks.aws_eks_access_entry.this["admins"]`, cluster.Decl{Kind: cluster.DeclModuleEntry, Block: "module.eks", Key: "admins"}},
		{"module.eks", cluster.Decl{}},
		{"accessConfig.accessEntries.0", cluster.Decl{}},
	} {
		if got := accessEntryDecl(g, c.addr); got != c.want {
			t.Errorf("accessEntryDecl(%s) = %+v, want %+v", c.addr, got, c.want)
		}
	}
}

func TestAccessEntryTypeEdit(t *testing.T) {
	t.Parallel()
	g := cluster.NewGraph()
	g.Add(&cluster.Resource{Address: "module.eks", Type: "module", Origin: cluster.Origin{File: "main.tf", Line: 1}})
	g.Add(&cluster.Resource{Address: "aws_eks_access_entry.nodes", Type: "aws_eks_access_entry", Origin: cluster.Origin{File: "iam.tf", Line: 4}})
	for _, c := range []struct {
		decl cluster.Decl
		line int
		text string
	}{
		{cluster.Decl{Kind: cluster.DeclResource, Block: "aws_eks_access_entry.nodes"}, 4, "type = \"EC2_LINUX\"\nkubernetes_groups = null\n"},
		{cluster.Decl{Kind: cluster.DeclModuleEntry, Block: "module.eks", Key: "my nodes"}, 1, "access_entries = {\n  \"my nodes\" = {\n    type = \"EC2_LINUX\"\n    kubernetes_groups = null\n  }\n}\n"},
	} {
		e, ok := AccessEntryTypeEdit(g, &cluster.AccessEntry{Decl: c.decl}, "EC2_LINUX")
		if !ok || e.Line != c.line || e.Text != c.text || e.Format != cluster.FormatHCL {
			t.Errorf("%+v: edit %+v, %v; want line %d %q", c.decl, e, ok, c.line, c.text)
		}
	}
	if _, ok := AccessEntryTypeEdit(g, &cluster.AccessEntry{Decl: cluster.Decl{Kind: cluster.DeclEksctl}}, "EC2_LINUX"); ok {
		t.Error("the Terraform writer wrote an eksctl access entry")
	}
}
