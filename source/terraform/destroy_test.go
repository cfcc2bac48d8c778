package terraform

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/cluster"
)

func TestAddressingOwner(t *testing.T) {
	g := cluster.NewGraph()
	for _, a := range []string{"module.eks", "helm_release.karpenter", "kubectl_manifest.pools", "module.addons.module.inner"} {
		g.Add(&cluster.Resource{Address: a})
	}
	for _, tt := range []struct{ addr, want string }{
		{addr: "helm_release.karpenter", want: "helm_release.karpenter"},
		{addr: `kubectl_manifest.pools["default"]`, want: "kubectl_manifest.pools"},
		{addr: `module.eks.module.eks_managed_node_group["karpenter"].aws_eks_node_group.this[0]`, want: "module.eks"},
		{addr: `module.eks.aws_eks_fargate_profile.this["karpenter"]`, want: "module.eks"},
		{addr: "module.addons.module.inner.helm_release.x", want: "module.addons.module.inner"},
		{addr: "module.addons.helm_release.x", want: ""},
		{addr: "managedNodeGroups.0", want: ""},
		{addr: "", want: ""},
	} {
		if got := (Addressing{}).Owner(g, tt.addr); got != tt.want {
			t.Errorf("Owner(%q) = %q, want %q", tt.addr, got, tt.want)
		}
	}
	if got := (Addressing{}).Owner(nil, "helm_release.karpenter"); got != "" {
		t.Errorf("Owner without a graph = %q, want none", got)
	}
}

func TestAddressingConfig(t *testing.T) {
	a := Addressing{}
	for in, want := range map[string]string{
		"kubectl_manifest.np":                                         "kubectl_manifest.np",
		"kubectl_manifest.np[0]":                                      "kubectl_manifest.np",
		`module.eks.aws_eks_node_group.this["a"]`:                     "module.eks.aws_eks_node_group.this",
		`module.m["x"].kubectl_manifest.np["k"]`:                      "module.m.kubectl_manifest.np",
		`kubectl_manifest.p["kind: P\nvalues: [\"a\", \"b]\"]\n"]`:    "kubectl_manifest.p",
		`kubectl_manifest.p["escaped \\\" quote ] and [ brackets"].x`: "kubectl_manifest.p.x",
	} {
		if got := a.Config(in); got != want {
			t.Errorf("Config(%q) = %q, want %q", in, got, want)
		}
	}
	if !a.Same(`aws_iam_role.karpenter[0]`, "aws_iam_role.karpenter") || a.Same("aws_iam_role.karpenter", "aws_iam_role.karpenter_node") {
		t.Errorf("Same does not compare configuration addresses")
	}
}

func TestAddressingModules(t *testing.T) {
	a := Addressing{}
	for _, tt := range []struct {
		addr  string
		depth int
	}{
		{"aws_iam_role.x", 0},
		{"module.eks", 0},
		{`module.a["k"].aws_iam_role.x`, 1},
		{"module.a.module.b", 1},
		{"module.a.module.b.aws_iam_role.x[0]", 2},
	} {
		if got := a.Depth(tt.addr); got != tt.depth {
			t.Errorf("Depth(%q) = %d, want %d", tt.addr, got, tt.depth)
		}
	}
	if !a.Within("module.karpenter.helm_release.this", "module.karpenter") {
		t.Errorf("a release inside module.karpenter is not within it")
	}
	for _, tt := range [][2]string{{"module.karpenter_crd.helm_release.x", "module.karpenter"}, {"module.karpenter", "module.karpenter"}, {"helm_release.x", ""}} {
		if a.Within(tt[0], tt[1]) {
			t.Errorf("%s is within %q", tt[0], tt[1])
		}
	}
	for _, tt := range []struct {
		addr string
		want cluster.ObjectRef
		ok   bool
	}{
		{"module.karpenter", cluster.ObjectRef{Kind: "module", Name: "karpenter"}, true},
		{"helm_release.karpenter", cluster.ObjectRef{Kind: "helm_release", Name: "karpenter"}, true},
		{"module.addons.helm_release.karpenter", cluster.ObjectRef{Kind: "helm_release", Name: "module.addons.helm_release.karpenter"}, true},
		{"karpenter", cluster.ObjectRef{}, false},
	} {
		if got, ok := a.Ref(tt.addr); got != tt.want || ok != tt.ok {
			t.Errorf("Ref(%q) = %v, %v; want %v, %v", tt.addr, got, ok, tt.want, tt.ok)
		}
	}
}

func TestNoteDestroy(t *testing.T) {
	g := cluster.NewGraph()
	add := func(addr, typ, source string, attrs map[string]any) {
		g.Add(&cluster.Resource{Address: addr, Type: typ, Source: source, Attrs: attrs})
	}
	add("module.karpenter", "module", "terraform-aws-modules/eks/aws//modules/karpenter", nil)
	add("module.karpenter_off", "module", "terraform-aws-modules/eks/aws//modules/karpenter", map[string]any{"create": false})
	add("module.local_karpenter", "module", "./modules/karpenter", map[string]any{"create": "${var.create}"})
	add("module.vpc", "module", "terraform-aws-modules/vpc/aws", map[string]any{"enable_nat_gateway": true})
	add("module.vpc_unknown_nat", "module", "terraform-aws-modules/vpc/aws", map[string]any{"enable_nat_gateway": "${var.nat}"})
	add("module.endpoints", "module", "terraform-aws-modules/vpc/aws//modules/vpc-endpoints", nil)
	add("module.addons", "module", "aws-ia/eks-blueprints-addons/aws", map[string]any{"enable_karpenter": true})
	add("helm_release.karpenter", "helm_release", "", map[string]any{"wait": false})
	add("helm_release.unknown_wait", "helm_release", "", map[string]any{"wait": "${var.wait}"})
	add("helm_release.default_wait", "helm_release", "", nil)
	add("kubectl_manifest.pool", "kubectl_manifest", "", map[string]any{"apply_only": true, "force_new": true})
	add("kubectl_manifest.class", "kubectl_manifest", "", map[string]any{"wait": true})
	add("kubernetes_manifest.pool", "kubernetes_manifest", "", nil)
	add("aws_iam_role.karpenter_node", "aws_iam_role", "", nil)
	add("aws_iam_role.karpenter", "aws_iam_role", "", nil)
	add("aws_iam_role_policy_attachment.workers", "aws_iam_role_policy_attachment", "", map[string]any{"role": "${module.eks.worker_iam_role_name}"})
	add("aws_iam_role_policy_attachment.controller", "aws_iam_role_policy_attachment", "", map[string]any{"role": "${aws_iam_role.karpenter.name}"})
	add("aws_nat_gateway.this", "aws_nat_gateway", "", nil)
	add("aws_vpc_endpoint.s3", "aws_vpc_endpoint", "", nil)
	add("aws_subnet.private", "aws_subnet", "", nil)
	NoteDestroy(g)
	want := map[string]cluster.Destroy{
		"module.karpenter":       {Kind: cluster.DestroyKarpenterModule},
		"module.karpenter_off":   {},
		"module.local_karpenter": {Kind: cluster.DestroyKarpenterModule},
		"module.vpc":             {Kind: cluster.DestroyNetworkModule, Egress: true},
		"module.vpc_unknown_nat": {Kind: cluster.DestroyNetworkModule},
		"module.endpoints":       {Kind: cluster.DestroyEndpointsModule},
		"module.addons":          {Karpenter: true},
		"helm_release.karpenter": {Kind: cluster.DestroyRelease},
		// An unknown wait is not guessed false.
		"helm_release.unknown_wait":                 {Kind: cluster.DestroyRelease, Waits: true},
		"helm_release.default_wait":                 {Kind: cluster.DestroyRelease, Waits: true},
		"kubectl_manifest.pool":                     {Kind: cluster.DestroyManifest, Never: true, Replaces: true},
		"kubectl_manifest.class":                    {Kind: cluster.DestroyManifest, Waits: true},
		"kubernetes_manifest.pool":                  {Kind: cluster.DestroyObjectManifest, Waits: true},
		"aws_iam_role.karpenter_node":               {Kind: cluster.DestroyIAMRole, NodeRole: true},
		"aws_iam_role.karpenter":                    {Kind: cluster.DestroyIAMRole},
		"aws_iam_role_policy_attachment.workers":    {Kind: cluster.DestroyIAMPolicy, ForNodes: true, Role: "${module.eks.worker_iam_role_name}"},
		"aws_iam_role_policy_attachment.controller": {Kind: cluster.DestroyIAMPolicy, Role: "${aws_iam_role.karpenter.name}"},
		"aws_nat_gateway.this":                      {Kind: cluster.DestroyNetwork, Egress: true, Gateway: true},
		// Egress, but not deleted with the VPC's step.
		"aws_vpc_endpoint.s3": {Egress: true},
		"aws_subnet.private":  {Kind: cluster.DestroyNetwork},
	}
	got := map[string]cluster.Destroy{}
	for a, r := range g.Nodes {
		got[a] = r.Destroy
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("destroy facts (-want +got):\n%s", diff)
	}
}

// TestDependsOnEdit: depends_on inside a module names resources without the
// module's address; what is outside the module cannot be named there and is
// said in a comment instead.
func TestDependsOnEdit(t *testing.T) {
	g := cluster.NewGraph()
	for _, a := range []string{"helm_release.karpenter", "module.aws.helm_release.karpenter", "module.a.module.b.kubectl_manifest.pool", "module.addons"} {
		g.Add(&cluster.Resource{Address: a, Origin: cluster.Origin{File: "main.tf", Line: 3}})
	}
	for _, c := range []struct {
		addr string
		deps []string
		want string
	}{
		{"helm_release.karpenter", []string{"module.eks", "aws_iam_role.node"},
			"depends_on = [module.eks, aws_iam_role.node]\n"},
		{"module.aws.helm_release.karpenter", []string{"module.aws.aws_iam_role_policy.controller", "module.aws.null_resource.ready", "module.eks"},
			"depends_on = [\n  aws_iam_role_policy.controller,\n  null_resource.ready,\n  # module.eks is outside this module: add it to depends_on of the module call instead\n]\n"},
		{"module.a.module.b.kubectl_manifest.pool", []string{"module.a.module.b.helm_release.k"},
			"depends_on = [helm_release.k]\n"},
		// A module call of the root module is written in the root module.
		{"module.addons", []string{"module.eks"},
			"depends_on = [module.eks]\n"},
	} {
		e, ok := DependsOnEdit(g, c.addr, c.deps, false)
		if !ok || e.Text != c.want || e.File != "main.tf" || e.Line != 3 || e.Format != cluster.FormatHCL {
			t.Errorf("%s:\n got %+v (%v)\nwant %q", c.addr, e, ok, c.want)
		}
	}
	// In lines, as a destroy plan shows its changes.
	if e, _ := DependsOnEdit(g, "helm_release.karpenter", []string{"module.eks", "aws_iam_role.node"}, true); e.Text != "depends_on = [\n  module.eks,\n  aws_iam_role.node,\n]\n" {
		t.Errorf("in lines: got %q", e.Text)
	}
	if _, ok := DependsOnEdit(g, "helm_release.absent", []string{"module.eks"}, false); ok {
		t.Errorf("an edit of a resource not in the graph")
	}
	for _, c := range []struct {
		edit func(*cluster.Graph, string) (cluster.Edit, bool)
		want string
	}{
		{DestroyWaitEdit, "wait = true\n"},
		{DestroyDeleteEdit, "apply_only = false\n"},
		{UpdateInPlaceEdit, "force_new = false\n"},
	} {
		if e, ok := c.edit(g, "helm_release.karpenter"); !ok || e.Text != c.want {
			t.Errorf("got %+v (%v), want %q", e, ok, c.want)
		}
	}
}

// TestLoadNotesDestroy: the loader fills in what each resource is to a
// teardown, and its graph answers what the planner asks of addresses.
func TestLoadNotesDestroy(t *testing.T) {
	m := loadSrc(t, `
module "karpenter" {
  source = "terraform-aws-modules/eks/aws//modules/karpenter"
}

resource "helm_release" "karpenter" {
  name       = "karpenter"
  chart      = "karpenter"
  repository = "oci://public.ecr.aws/karpenter"
  wait       = false
}

resource "kubectl_manifest" "pool" {
  yaml_body  = "{apiVersion: karpenter.sh/v1, kind: NodePool, metadata: {name: default}}"
  wait       = true
  apply_only = true
}
`)
	if m.Terraform.Addressing == nil {
		t.Fatalf("the graph has no address reader")
	}
	want := map[string]cluster.Destroy{
		"module.karpenter":       {Kind: cluster.DestroyKarpenterModule},
		"helm_release.karpenter": {Kind: cluster.DestroyRelease},
		"kubectl_manifest.pool":  {Kind: cluster.DestroyManifest, Waits: true, Never: true},
	}
	got := map[string]cluster.Destroy{}
	for a := range want {
		if r := m.Terraform.Nodes[a]; r != nil {
			got[a] = r.Destroy
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("destroy facts (-want +got):\n%s", diff)
	}
	merged := cluster.Merge(&cluster.Model{}, m)
	if r := merged.Terraform.Nodes["helm_release.karpenter"]; r == nil || r.Destroy.Kind != cluster.DestroyRelease {
		t.Errorf("merging models loses the destroy facts")
	}
	if merged.Terraform.OwnerOf(`module.karpenter.aws_iam_role.controller[0]`) != "module.karpenter" {
		t.Errorf("merging models loses the address reader")
	}
}
