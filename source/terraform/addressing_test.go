package terraform

import (
	"testing"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// The graph answers the checks' questions about addresses through the
// loader's Addressing.
func TestAddressing(t *testing.T) {
	g := cluster.NewGraph()
	g.Addressing = Addressing{}
	g.Add(&cluster.Resource{Address: "helm_release.karpenter", Type: "helm_release"})
	g.Add(&cluster.Resource{Address: "aws_eks_addon.this", Type: "aws_eks_addon"})
	g.Add(&cluster.Resource{Address: "module.eks", Type: "module", Parts: []cluster.ModulePart{
		{Address: "module.eks#fargate", Name: cluster.PartFargate, Prefixes: []string{"module.fargate_profile"}},
		{Address: "module.eks#rest", Name: "rest"},
	}})
	resources := []struct{ addr, want string }{
		{"helm_release.karpenter", "helm_release.karpenter"},
		{`aws_eks_addon.this["coredns"]`, "aws_eks_addon.this"},
		{`aws_eks_addon.this["a"].x`, ""},
		{"module.eks.aws_eks_cluster.this", ""},
		{"", ""},
	}
	for _, tt := range resources {
		if got := g.ResourceOf(tt.addr); got != tt.want {
			t.Errorf("ResourceOf(%q) = %q, want %q", tt.addr, got, tt.want)
		}
	}
	nodes := []struct{ addr, want string }{
		{"helm_release.karpenter", "helm_release.karpenter"},
		{`module.eks.module.fargate_profile["kube-system"].aws_eks_fargate_profile.this[0]`, "module.eks"},
		{"module.vpc.aws_vpc.this", ""},
		{"aws_iam_role.x", ""},
	}
	for _, tt := range nodes {
		if got := g.NodeOf(tt.addr); got != tt.want {
			t.Errorf("NodeOf(%q) = %q, want %q", tt.addr, got, tt.want)
		}
	}
	parts := []struct{ addr, want string }{
		{`module.eks.module.fargate_profile["kube-system"].aws_eks_fargate_profile.this[0]`, "module.eks#fargate"},
		{"module.eks.aws_eks_cluster.this[0]", "module.eks#rest"},
		{"helm_release.karpenter", "helm_release.karpenter"},
		{"aws_iam_role.x", ""},
	}
	for _, tt := range parts {
		if got := g.PartOf(tt.addr); got != tt.want {
			t.Errorf("PartOf(%q) = %q, want %q", tt.addr, got, tt.want)
		}
	}
	if !g.InModule("module.eks.aws_eks_cluster.this") || g.InModule("aws_eks_cluster.this") {
		t.Error("InModule: module.eks.aws_eks_cluster.this is in a module call, aws_eks_cluster.this is not")
	}
	if got := g.ConfigAddress(`module.eks["a"].kubectl_manifest.pool["x.y"]`); got != "module.eks.kubectl_manifest.pool" {
		t.Errorf("ConfigAddress = %q", got)
	}
	if got := g.InstanceKey(`module.eks.aws_eks_access_entry.this["cluster_creator"]`); got != "cluster_creator" {
		t.Errorf("InstanceKey = %q, want cluster_creator", got)
	}
	if got := g.InstanceKey("aws_eks_access_entry.node"); got != "" {
		t.Errorf("InstanceKey of an address without a key = %q", got)
	}
	if !g.InConfig("infra/main.tf") || g.InConfig("plan.json") || g.InConfig("values.yaml") {
		t.Error("InConfig: main.tf is a configuration file, plan.json and values.yaml are not")
	}
}

// The loader sets Addressing on the graph it builds, and it survives
// merging models.
func TestGraphAddressingSet(t *testing.T) {
	m := loadSrc(t, `resource "helm_release" "karpenter" {
  name  = "karpenter"
  chart = "karpenter"
}
`)
	if m.Terraform == nil || m.Terraform.Addressing == nil {
		t.Fatal("the loader set no Addressing on the graph")
	}
	merged := cluster.Merge(&cluster.Model{}, m)
	if merged.Terraform.NodeOf("helm_release.karpenter") != "helm_release.karpenter" {
		t.Error("a merged model's graph lost its Addressing")
	}
}
