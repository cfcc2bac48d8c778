package lint

import (
	"testing"

	"github.com/eksdoctor/eksdoctor/cluster"
)

func TestEC2Glob(t *testing.T) {
	for _, tc := range []struct {
		pattern, value string
		want           bool
	}{
		{pattern: "prod", value: "prod", want: true},
		{pattern: "prod", value: "production", want: false},
		{pattern: "*", value: "", want: true},
		{pattern: "*private*", value: "shop-private-eu-west-1a", want: true},
		{pattern: "*Public*", value: "shop-private-eu-west-1a", want: false},
		{pattern: "eks-?", value: "eks-a", want: true},
		{pattern: "eks-?", value: "eks-ab", want: false},
		{pattern: "a*b*c", value: "a/x/b/y/c", want: true},
	} {
		if got := ec2Glob(tc.pattern, tc.value); got != tc.want {
			t.Errorf("ec2Glob(%q, %q) = %v, want %v", tc.pattern, tc.value, got, tc.want)
		}
	}
}

func TestTermMatch(t *testing.T) {
	subnets := &cluster.NetworkResource{
		Kind: cluster.NetworkSubnet, What: "the private subnets of module.vpc", Refs: []string{"module.vpc.private_subnets"},
		Tags: map[string]string{"karpenter.sh/discovery": "prod", "Name": cluster.Unknown("module.vpc.name")},
	}
	for _, tc := range []struct {
		name     string
		term     selectorTerm
		r        *cluster.NetworkResource
		floating []cluster.AddedTag
		want     selects
	}{
		{name: "tag matches", term: selectorTerm{tags: map[string]string{"karpenter.sh/discovery": "prod"}}, r: subnets, want: selectsYes},
		{name: "tags are ANDed", term: selectorTerm{tags: map[string]string{"karpenter.sh/discovery": "prod", "tier": "app"}}, r: subnets, want: selectsNo},
		{name: "another value", term: selectorTerm{tags: map[string]string{"karpenter.sh/discovery": "staging"}}, r: subnets, want: selectsNo},
		{name: "any value", term: selectorTerm{tags: map[string]string{"karpenter.sh/discovery": "*"}}, r: subnets, want: selectsYes},
		{name: "selected value not known", term: selectorTerm{tags: map[string]string{"karpenter.sh/discovery": cluster.Unknown("var.name")}}, r: subnets, want: selectsMaybe},
		{name: "tag value not known", term: selectorTerm{tags: map[string]string{"Name": "shop-private"}}, r: subnets, want: selectsMaybe},
		{name: "a tag added by an ID not known", term: selectorTerm{tags: map[string]string{"tier": "app"}}, r: subnets,
			floating: []cluster.AddedTag{{Key: "tier", Value: "app", ResourceID: cluster.Unknown("var.subnet_id")}}, want: selectsMaybe},
		{name: "ID not shown", term: selectorTerm{id: "subnet-0abc"}, r: subnets, want: selectsMaybe},
		{name: "ID by reference", term: selectorTerm{id: cluster.Unknown("module.vpc.private_subnets[0]")}, r: subnets, want: selectsYes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := termMatch(tc.term, tc.r, tc.floating)
			if got != tc.want {
				t.Errorf("termMatch(%s) = %d (%s), want %d", tc.term, got, why, tc.want)
			}
		})
	}
}

func TestSelectorTermsV1alpha(t *testing.T) {
	o := &cluster.Object{Kind: "AWSNodeTemplate", APIVersion: "karpenter.k8s.aws/v1alpha1", Name: "default",
		Content: map[string]any{"spec": map[string]any{"subnetSelector": map[string]any{"aws-ids": "subnet-a, subnet-b"}, "securityGroupSelector": map[string]any{"karpenter.sh/discovery": "demo"}}}}
	nc := &cluster.NodeClass{Object: o, Name: "default", APIVersion: o.APIVersion}
	subnets, ok := selectorTerms(nc, discoveryKinds[0])
	if !ok || len(subnets) != 2 || subnets[0].id != "subnet-a" || subnets[1].id != "subnet-b" {
		t.Errorf("subnet terms = %+v, %v; want the two IDs", subnets, ok)
	}
	sgs, ok := selectorTerms(nc, discoveryKinds[1])
	if !ok || len(sgs) != 1 || sgs[0].tags["karpenter.sh/discovery"] != "demo" {
		t.Errorf("security group terms = %+v, %v; want the one tag term", sgs, ok)
	}
}
