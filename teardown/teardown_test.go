package teardown

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/source/terraform"
)

// plan plans the teardown of a model built by hand as the loaders build one:
// with what the Terraform loader knows of each resource and of its addresses.
func plan(m *cluster.Model) *Plan {
	if m.Terraform != nil {
		terraform.NoteDestroy(m.Terraform)
		m.Terraform.Addressing = terraform.Addressing{}
	}
	return New(sim.New(m))
}

// written is a change as the checks write it into the configuration.
func written(c Change) string {
	g := cluster.NewGraph()
	g.Add(&cluster.Resource{Address: c.Address, Origin: c.Origin})
	var e cluster.Edit
	switch c.Kind {
	case ChangeDependsOn:
		e, _ = terraform.DependsOnEdit(g, c.Address, c.DependsOn, true)
	case ChangeWait:
		e, _ = terraform.DestroyWaitEdit(g, c.Address)
	case ChangeDelete:
		e, _ = terraform.DestroyDeleteEdit(g, c.Address)
	case ChangeInPlace:
		e, _ = terraform.UpdateInPlaceEdit(g, c.Address)
	}
	return c.Address + ": " + e.Text
}

func drainWorkload(kind, ns, name string, spec corev1.PodSpec) *cluster.Workload {
	w := &cluster.Workload{
		Object:       &cluster.Object{APIVersion: "apps/v1", Kind: kind, Namespace: ns, Name: name, Origin: cluster.Origin{File: "w.yaml", Line: 1}},
		TemplatePath: "spec.template",
		Replicas:     1,
	}
	w.Template.Namespace = ns
	w.Template.Spec = spec
	if len(w.Template.Spec.Containers) == 0 {
		w.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "app:1"}}
	}
	return w
}

// tfModel builds a Terraform-shaped model: resources in a graph, the objects of
// kubectl_manifest resources, a managed node group inside module.eks and the
// Karpenter controller installed by helm_release.karpenter.
type tfModel struct {
	m *cluster.Model
}

func newTFModel() *tfModel {
	m := &cluster.Model{Terraform: cluster.NewGraph()}
	m.Cluster = cluster.EKSCluster{Name: "demo", Address: "module.eks", Defined: true, Origin: cluster.Origin{File: "main.tf", Line: 10}}
	return &tfModel{m: m}
}

func (tm *tfModel) resource(addr, typ string, line int, dependsOn []string, refs []string, attrs map[string]any) *cluster.Resource {
	name := addr[strings.LastIndexByte(addr, '.')+1:]
	r := &cluster.Resource{Address: addr, Type: typ, Name: name, DependsOn: dependsOn, Refs: refs, Attrs: attrs, Origin: cluster.Origin{File: "main.tf", Line: line}}
	tm.m.Terraform.Add(r)
	return r
}

func (tm *tfModel) object(via, apiVersion, kind, name string, content map[string]any) {
	mgr := "terraform"
	if via == "" {
		mgr = "kubectl"
	}
	tm.m.Objects = append(tm.m.Objects, &cluster.Object{APIVersion: apiVersion, Kind: kind, Name: name, Via: via, Manager: mgr, Content: content, Origin: cluster.Origin{File: "karpenter.yaml", Line: 1}})
}

func (tm *tfModel) module(addr, source string, line int, refs ...string) {
	r := tm.resource(addr, "module", line, nil, refs, nil)
	r.Source = source
}

// standard adds the usual shape: vpc, eks with a managed node group, the karpenter
// sub-module, and helm_release.karpenter whose controller fits the node group.
func (tm *tfModel) standard(releaseRefs ...string) {
	tm.module("module.vpc", "terraform-aws-modules/vpc/aws", 200)
	tm.module("module.eks", "terraform-aws-modules/eks/aws", 10, "module.vpc")
	tm.module("module.karpenter", "terraform-aws-modules/eks/aws//modules/karpenter", 60, "module.eks")
	tm.resource("helm_release.karpenter", "helm_release", 80, nil, releaseRefs, map[string]any{"chart": "karpenter", "wait": false})
	tm.m.NodeGroups = append(tm.m.NodeGroups, &cluster.NodeGroup{
		Name: "karpenter", Managed: true, InstanceTypes: []string{"m5.large"}, CreatedBy: "terraform",
		Address: `module.eks.module.eks_managed_node_group["karpenter"].aws_eks_node_group.this[0]`, Origin: cluster.Origin{File: "main.tf", Line: 30},
	})
	ctrl := drainWorkload("Deployment", "kube-system", "karpenter", corev1.PodSpec{})
	ctrl.Component = "karpenter"
	tm.m.Workloads = append(tm.m.Workloads, ctrl)
	tm.m.Karpenter = cluster.Karpenter{
		Version: "1.0.0", Controller: ctrl, Address: "module.karpenter",
		Release: &cluster.HelmRelease{Name: "karpenter", Namespace: "kube-system", Chart: "karpenter", Address: "helm_release.karpenter", Origin: cluster.Origin{File: "main.tf", Line: 80}},
	}
}

var (
	classContent = map[string]any{"spec": map[string]any{"role": "demo"}}
	poolContent  = map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"nodeClassRef": map[string]any{"name": "default"}}}}}
)

type hazardRow struct {
	Kind    HazardKind
	Subject string
	Targets []string
	Edit    string
}

func hazardRows(p *Plan) []hazardRow {
	var out []hazardRow
	for _, h := range p.Hazards {
		r := hazardRow{Kind: h.Kind, Subject: h.Subject.Key()}
		for _, t := range h.Targets {
			r.Targets = append(r.Targets, t.Key())
		}
		if h.Change != nil {
			r.Edit = written(*h.Change)
		}
		out = append(out, r)
	}
	return out
}

func stageKeys(p *Plan) map[Stage][]string {
	out := map[Stage][]string{}
	for _, s := range p.Steps {
		for _, it := range s.Items {
			out[s.Stage] = append(out[s.Stage], it.Key())
		}
	}
	return out
}

func TestTeardownTerraformOrder(t *testing.T) {
	tm := newTFModel()
	// The release reads only module.eks: nothing orders it after module.karpenter.
	tm.standard("module.eks")
	tm.resource("kubectl_manifest.node_class", "kubectl_manifest", 100, nil, []string{"module.karpenter"}, map[string]any{"wait": true})
	tm.resource("kubectl_manifest.node_pool", "kubectl_manifest", 120, []string{"kubectl_manifest.node_class"}, nil, map[string]any{"wait": true})
	tm.object("kubectl_manifest.node_class", "karpenter.k8s.aws/v1", "EC2NodeClass", "default", classContent)
	tm.object("kubectl_manifest.node_pool", "karpenter.sh/v1", "NodePool", "default", poolContent)

	p := plan(tm.m)
	if p.Tool != "terraform" {
		t.Errorf("tool = %q, want terraform", p.Tool)
	}
	wantStages := map[Stage][]string{
		StageNodePools:    {"kubectl_manifest.node_pool"},
		StageNodeClasses:  {"kubectl_manifest.node_class"},
		StageController:   {"helm_release.karpenter"},
		StageKarpenterAWS: {"module.karpenter"},
		StageHostCompute:  {"module.eks"},
		StageCluster:      {"module.eks"},
		StageNetwork:      {"module.vpc"},
	}
	if diff := cmp.Diff(wantStages, stageKeys(p)); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
	want := []hazardRow{
		{Kind: HazardControllerBeforeAWS, Subject: "helm_release.karpenter", Targets: []string{"module.karpenter"}, Edit: "helm_release.karpenter: depends_on = [\n  module.karpenter,\n]\n"},
		// The node class is the only custom resource that needs an edge: the
		// NodePool reaches the release through it once it is added.
		{Kind: HazardCRBeforeController, Subject: "kubectl_manifest.node_class", Targets: []string{"helm_release.karpenter"}, Edit: "kubectl_manifest.node_class: depends_on = [\n  helm_release.karpenter,\n]\n"},
	}
	if diff := cmp.Diff(want, hazardRows(p)); diff != "" {
		t.Errorf("hazards (-want +got):\n%s", diff)
	}
	after := p.OrderViolations(WithChanges(tm.m.Terraform, p.Changes))
	if len(after) > 0 {
		t.Errorf("violations after the edits: %v", after)
	}
	g := WithChanges(tm.m.Terraform, p.Changes)
	for _, need := range [][2]string{
		{"kubectl_manifest.node_pool", "helm_release.karpenter"},
		{"kubectl_manifest.node_class", "helm_release.karpenter"},
		{"helm_release.karpenter", "module.karpenter"},
		{"helm_release.karpenter", "module.eks"},
	} {
		if !g.DependsOn(need[0], need[1]) {
			t.Errorf("after the edits %s does not depend on %s", need[0], need[1])
		}
	}
}

func TestTeardownNodePoolReachesControllerThroughItsClass(t *testing.T) {
	tm := newTFModel()
	tm.standard("module.eks", "module.karpenter")
	tm.resource("kubectl_manifest.node_class", "kubectl_manifest", 100, []string{"helm_release.karpenter"}, nil, map[string]any{"wait": true})
	tm.resource("kubectl_manifest.node_pool", "kubectl_manifest", 120, nil, nil, map[string]any{"wait": true})
	tm.object("kubectl_manifest.node_class", "karpenter.k8s.aws/v1", "EC2NodeClass", "default", classContent)
	tm.object("kubectl_manifest.node_pool", "karpenter.sh/v1", "NodePool", "default", poolContent)

	p := plan(tm.m)
	want := []hazardRow{
		{Kind: HazardCRBeforeController, Subject: "kubectl_manifest.node_pool", Targets: []string{"helm_release.karpenter"}, Edit: "kubectl_manifest.node_pool: depends_on = [\n  kubectl_manifest.node_class,\n]\n"},
	}
	if diff := cmp.Diff(want, hazardRows(p)); diff != "" {
		t.Errorf("hazards (-want +got):\n%s", diff)
	}
}

// A NodePool that does not depend on its EC2NodeClass is no hazard: both
// deletes may run together, and the class's finalizer waits for the pool's
// NodeClaims, so neither blocks the other.
func TestTeardownNodePoolBesideClass(t *testing.T) {
	tm := newTFModel()
	tm.standard("module.eks", "module.karpenter")
	tm.resource("kubectl_manifest.node_class", "kubectl_manifest", 100, []string{"helm_release.karpenter"}, nil, map[string]any{"wait": true})
	tm.resource("kubectl_manifest.node_pool", "kubectl_manifest", 120, []string{"helm_release.karpenter"}, nil, map[string]any{"wait": true})
	tm.object("kubectl_manifest.node_class", "karpenter.k8s.aws/v1", "EC2NodeClass", "default", classContent)
	tm.object("kubectl_manifest.node_pool", "karpenter.sh/v1", "NodePool", "default", poolContent)

	p := plan(tm.m)
	if rows := hazardRows(p); len(rows) != 0 {
		t.Errorf("hazards %+v, want none", rows)
	}
}

// A NodePool that is not waited for is no orphan hazard when every EC2NodeClass
// it uses is waited for and goes before the controller: the class's finalizer
// keeps destroy waiting until the pool's nodes are gone.
func TestTeardownClassWaitHoldsThePoolsNodes(t *testing.T) {
	tm := newTFModel()
	tm.standard("module.eks", "module.karpenter")
	tm.resource("kubectl_manifest.node_class", "kubectl_manifest", 100, []string{"helm_release.karpenter"}, nil, map[string]any{"wait": true})
	tm.resource("kubectl_manifest.node_pool", "kubectl_manifest", 120, []string{"kubectl_manifest.node_class"}, nil, nil)
	tm.object("kubectl_manifest.node_class", "karpenter.k8s.aws/v1", "EC2NodeClass", "default", classContent)
	tm.object("kubectl_manifest.node_pool", "karpenter.sh/v1", "NodePool", "default", poolContent)
	if rows := hazardRows(plan(tm.m)); len(rows) != 0 {
		t.Errorf("hazards %+v, want none", rows)
	}
	// Without the class's wait, nothing keeps destroy waiting.
	tm.m.Terraform.Nodes["kubectl_manifest.node_class"].Attrs["wait"] = false
	rows := hazardRows(plan(tm.m))
	if len(rows) != 2 || rows[0].Kind != HazardNoWait || rows[1].Kind != HazardNoWait {
		t.Errorf("hazards %+v, want the class and the pool not waited for", rows)
	}
}

func TestTeardownControllerCompute(t *testing.T) {
	tm := newTFModel()
	tm.module("module.vpc", "terraform-aws-modules/vpc/aws", 200)
	tm.resource("aws_eks_cluster.this", "aws_eks_cluster", 10, nil, []string{"module.vpc"}, nil)
	tm.resource("aws_eks_node_group.system", "aws_eks_node_group", 30, nil, []string{"aws_eks_cluster.this"}, nil)
	tm.resource("aws_iam_role.karpenter_controller", "aws_iam_role", 40, nil, nil, nil)
	tm.resource("aws_iam_role_policy_attachment.karpenter_controller", "aws_iam_role_policy_attachment", 45, nil, []string{"aws_iam_role.karpenter_controller"}, nil)
	tm.resource("aws_sqs_queue.karpenter", "aws_sqs_queue", 50, nil, nil, nil)
	tm.resource("aws_cloudwatch_event_rule.karpenter_spot", "aws_cloudwatch_event_rule", 55, nil, nil, nil)
	tm.resource("aws_cloudwatch_event_target.karpenter_spot", "aws_cloudwatch_event_target", 56, nil, []string{"aws_cloudwatch_event_rule.karpenter_spot", "aws_sqs_queue.karpenter"}, nil)
	tm.resource("helm_release.karpenter", "helm_release", 80, nil, []string{"aws_eks_cluster.this", "aws_sqs_queue.karpenter"}, nil)
	tm.m.Cluster.Address = "aws_eks_cluster.this"
	tm.m.NodeGroups = []*cluster.NodeGroup{{Name: "system", Managed: true, InstanceTypes: []string{"m5.large"}, Address: "aws_eks_node_group.system", CreatedBy: "terraform"}}
	ctrl := drainWorkload("Deployment", "karpenter", "karpenter", corev1.PodSpec{})
	ctrl.Component = "karpenter"
	tm.m.Workloads = []*cluster.Workload{ctrl}
	tm.m.Karpenter = cluster.Karpenter{Version: "1.6.0", Controller: ctrl, Release: &cluster.HelmRelease{Name: "karpenter", Address: "helm_release.karpenter"}}

	p := plan(tm.m)
	want := []hazardRow{
		// The policy attachment depends on the role: one edge covers both. The
		// queue and its rule may go first: terminating instances needs neither.
		{Kind: HazardControllerBeforeAWS, Subject: "helm_release.karpenter", Targets: []string{"aws_iam_role_policy_attachment.karpenter_controller"}},
		{Kind: HazardControllerBeforeCompute, Subject: "helm_release.karpenter", Targets: []string{"aws_eks_node_group.system"}},
	}
	got := hazardRows(p)
	for i := range got {
		got[i].Edit = ""
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hazards (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"aws_eks_node_group.system", "aws_iam_role_policy_attachment.karpenter_controller"}, p.Changes[0].DependsOn); diff != "" {
		t.Errorf("release depends_on (-want +got):\n%s", diff)
	}
	if v := p.OrderViolations(WithChanges(tm.m.Terraform, p.Changes)); len(v) > 0 {
		t.Errorf("violations after the edits: %v", v)
	}
}

func TestTeardownFargateHostedController(t *testing.T) {
	tm := newTFModel()
	tm.standard()
	// The release refers to nothing: it needs the karpenter module, and module.eks
	// where the Fargate profile is; module.karpenter does not lead there here.
	tm.m.Terraform.Nodes["module.karpenter"].Refs = nil
	tm.m.NodeGroups = nil
	tm.m.FargateProfiles = []*cluster.FargateProfile{{Name: "karpenter", Selectors: []cluster.FargateSelector{{Namespace: "kube-system"}}, Address: `module.eks.module.fargate_profile["karpenter"].aws_eks_fargate_profile.this[0]`}}
	p := plan(tm.m)
	want := []hazardRow{
		{Kind: HazardControllerBeforeAWS, Subject: "helm_release.karpenter", Targets: []string{"module.karpenter"}},
		{Kind: HazardControllerBeforeCompute, Subject: "helm_release.karpenter", Targets: []string{"module.eks"}},
	}
	got := hazardRows(p)
	for i := range got {
		got[i].Edit = ""
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hazards (-want +got):\n%s", diff)
	}
	if got := p.Step(StageHostCompute).Items[0].Name; got != `Fargate profile "karpenter" (in module.eks)` {
		t.Errorf("compute item = %q", got)
	}

	// Once the release reads module.karpenter, which reads module.eks, both are
	// covered.
	tm.m.Terraform.Nodes["module.karpenter"].Refs = []string{"module.eks"}
	tm.m.Terraform.Nodes["helm_release.karpenter"].Refs = []string{"module.karpenter"}
	if rows := hazardRows(plan(tm.m)); len(rows) != 0 {
		t.Errorf("hazards = %+v, want none", rows)
	}
}

func TestTeardownOrphans(t *testing.T) {
	tm := newTFModel()
	tm.standard("module.eks", "module.karpenter")
	tm.resource("kubectl_manifest.node_class", "kubectl_manifest", 100, []string{"helm_release.karpenter"}, nil, nil)
	tm.resource("kubectl_manifest.node_pool", "kubectl_manifest", 120, []string{"kubectl_manifest.node_class"}, nil, map[string]any{"wait": true, "apply_only": true, "force_new": true})
	tm.resource("helm_release.pools", "helm_release", 140, []string{"helm_release.karpenter"}, nil, map[string]any{"wait": false})
	tm.object("kubectl_manifest.node_class", "karpenter.k8s.aws/v1", "EC2NodeClass", "default", classContent)
	tm.object("kubectl_manifest.node_pool", "karpenter.sh/v1", "NodePool", "default", poolContent)
	tm.object("helm_release.pools", "karpenter.sh/v1", "NodePool", "batch", map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"nodeClassRef": map[string]any{"name": "batch"}}}}})
	tm.object("", "karpenter.sh/v1", "NodePool", "gpu", poolContent)

	p := plan(tm.m)
	want := []hazardRow{
		{Kind: HazardOutOfBand, Subject: "NodePool/gpu"},
		{Kind: HazardNoWait, Subject: "helm_release.pools", Edit: "helm_release.pools: wait = true\n"},
		{Kind: HazardNoWait, Subject: "kubectl_manifest.node_class", Edit: "kubectl_manifest.node_class: wait = true\n"},
		{Kind: HazardApplyOnly, Subject: "kubectl_manifest.node_pool", Edit: "kubectl_manifest.node_pool: apply_only = false\n"},
		{Kind: HazardForceNew, Subject: "kubectl_manifest.node_pool", Edit: "kubectl_manifest.node_pool: force_new = false\n"},
	}
	if diff := cmp.Diff(want, hazardRows(p)); diff != "" {
		t.Errorf("hazards (-want +got):\n%s", diff)
	}
	wantCmds := []string{
		"kubectl delete nodepools.karpenter.sh gpu",
		"kubectl wait --for=delete nodeclaims.karpenter.sh --all --timeout=30m",
	}
	if diff := cmp.Diff(wantCmds, p.Step(StageNodePools).Commands); diff != "" {
		t.Errorf("NodePool commands (-want +got):\n%s", diff)
	}
}

func TestTeardownEksctl(t *testing.T) {
	m := &cluster.Model{
		Objects: []*cluster.Object{
			{APIVersion: "eksctl.io/v1alpha5", Kind: "ClusterConfig", Name: "demo", Manager: "eksctl", Origin: cluster.Origin{File: "cluster.yaml", Line: 1}},
			{APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: "default", Content: poolContent, Origin: cluster.Origin{File: "karpenter.yaml", Line: 1}},
			{APIVersion: "karpenter.k8s.aws/v1", Kind: "EC2NodeClass", Name: "default", Content: classContent, Origin: cluster.Origin{File: "karpenter.yaml", Line: 20}},
		},
		NodeGroups: []*cluster.NodeGroup{{Name: "demo-ng", Managed: true, InstanceTypes: []string{"m5.large"}, CreatedBy: "eksctl", Address: "managedNodeGroups.0"}},
		Cluster:    cluster.EKSCluster{Name: "demo", Defined: true},
	}
	ctrl := drainWorkload("Deployment", "kube-system", "karpenter", corev1.PodSpec{})
	ctrl.Component = "karpenter"
	m.Workloads = []*cluster.Workload{ctrl}
	m.Karpenter = cluster.Karpenter{Version: "1.6.0", Namespace: "kube-system", Controller: ctrl, Release: &cluster.HelmRelease{Name: "karpenter", Namespace: "kube-system", Chart: "karpenter"}}

	p := plan(m)
	if p.Tool != "eksctl" {
		t.Errorf("tool = %q, want eksctl", p.Tool)
	}
	// eksctl delete cluster never deletes a NodePool: one applied beside the
	// cluster is out of band (the commands below delete it first).
	if rows := hazardRows(p); len(rows) != 1 || rows[0].Kind != HazardOutOfBand || rows[0].Subject != "NodePool/default" {
		t.Errorf("hazards = %+v, want the NodePool out of band", rows)
	}
	var got []string
	for _, s := range p.Steps {
		got = append(got, s.Commands...)
	}
	want := []string{
		"kubectl delete nodepools.karpenter.sh default",
		"kubectl wait --for=delete nodeclaims.karpenter.sh --all --timeout=30m",
		"kubectl delete ec2nodeclasses.karpenter.k8s.aws default --wait --timeout=15m",
		"helm uninstall karpenter --namespace kube-system --wait",
		"aws cloudformation delete-stack --stack-name Karpenter-demo  # the stack of the Karpenter getting-started guide, if it was used",
		"eksctl delete nodegroup --cluster demo --name demo-ng --wait",
		"eksctl delete cluster --name demo --wait",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
}

func TestTeardownLiveNodeClaims(t *testing.T) {
	m := &cluster.Model{
		Live: &cluster.Live{},
		Objects: []*cluster.Object{
			{APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: "default", Manager: "cluster", Content: poolContent},
		},
		NodeClaims: []*cluster.NodeClaim{
			{Name: "default-b", NodePool: "default", Deleting: true, Finalizers: []string{"karpenter.sh/termination"}},
			{Name: "default-a", NodePool: "default"},
			{Name: "other-x", NodePool: "other"},
		},
	}
	p := plan(m)
	step := p.Step(StageNodePools)
	if step == nil || len(step.Items) != 1 {
		t.Fatalf("NodePool step = %+v", step)
	}
	want := []string{"NodeClaim default-a", "NodeClaim default-b (deleting; finalizers karpenter.sh/termination)"}
	if diff := cmp.Diff(want, step.Items[0].Live); diff != "" {
		t.Errorf("live NodeClaims (-want +got):\n%s", diff)
	}
	if len(p.Hazards) != 0 {
		t.Errorf("live objects are not out of band: %+v", hazardRows(p))
	}
}

func TestOrderViolations(t *testing.T) {
	g := cluster.NewGraph()
	g.Add(&cluster.Resource{Address: "kubectl_manifest.pool"})
	g.Add(&cluster.Resource{Address: "helm_release.karpenter", DependsOn: []string{"kubectl_manifest.pool"}})
	g.Add(&cluster.Resource{Address: "module.eks", Refs: []string{"module.karpenter"}})
	g.Add(&cluster.Resource{Address: "module.karpenter", Refs: []string{"module.eks"}})
	p := &Plan{Steps: []Step{
		{Stage: StageNodePools, Items: []Item{{Address: "kubectl_manifest.pool"}}},
		{Stage: StageController, Items: []Item{{Address: "helm_release.karpenter"}}},
		{Stage: StageKarpenterAWS, Items: []Item{{Address: "module.karpenter"}}},
		{Stage: StageCluster, Items: []Item{{Address: "module.eks"}}},
	}}
	want := []string{"helm_release.karpenter (karpenter-controller) depends on kubectl_manifest.pool (nodepools): terraform destroy removes it first"}
	if diff := cmp.Diff(want, p.OrderViolations(g)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

func TestTeardownOutOfBandNeedsSomethingTerraformDestroys(t *testing.T) {
	tm := newTFModel()
	tm.m.Cluster = cluster.EKSCluster{}
	tm.resource("kubernetes_namespace.apps", "kubernetes_namespace", 1, nil, nil, nil)
	tm.object("", "karpenter.sh/v1", "NodePool", "default", poolContent)
	if rows := hazardRows(plan(tm.m)); len(rows) != 0 {
		t.Errorf("hazards = %+v, want none: this configuration neither creates the cluster nor installs Karpenter", rows)
	}
	tm.standard("module.eks", "module.karpenter")
	want := []hazardRow{{Kind: HazardOutOfBand, Subject: "NodePool/default"}}
	if diff := cmp.Diff(want, hazardRows(plan(tm.m))); diff != "" {
		t.Errorf("hazards with the cluster and Karpenter in Terraform (-want +got):\n%s", diff)
	}
}

func TestTeardownCommandsV1alpha5(t *testing.T) {
	m := &cluster.Model{
		Objects: []*cluster.Object{
			{APIVersion: "eksctl.io/v1alpha5", Kind: "ClusterConfig", Name: "demo", Manager: "eksctl", Origin: cluster.Origin{File: "cluster.yaml", Line: 1}},
			{APIVersion: "karpenter.sh/v1alpha5", Kind: "Provisioner", Name: "default", Manager: "kubectl", Origin: cluster.Origin{File: "karpenter.yaml", Line: 1}},
			{APIVersion: "karpenter.k8s.aws/v1alpha1", Kind: "AWSNodeTemplate", Name: "default", Manager: "kubectl", Origin: cluster.Origin{File: "karpenter.yaml", Line: 20}},
		},
		Cluster: cluster.EKSCluster{Name: "demo", Defined: true},
	}
	m.Karpenter = cluster.Karpenter{Version: "0.32.1", VersionFrom: "chart version of helm release karpenter"}
	var got []string
	for _, s := range plan(m).Steps {
		got = append(got, s.Commands...)
	}
	for _, want := range []string{
		"kubectl delete provisioners.karpenter.sh default",
		"kubectl wait --for=delete nodes -l karpenter.sh/provisioner-name --timeout=30m",
		"kubectl delete awsnodetemplates.karpenter.k8s.aws default",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("commands %q lack %q", got, want)
		}
	}
	// Karpenter 1.0 serves none of them: they never exist, and nothing is to
	// be deleted.
	m.Karpenter.Version = "1.0.8"
	for _, s := range plan(m).Steps {
		for _, c := range s.Commands {
			if strings.Contains(c, "provisioners") || strings.Contains(c, "awsnodetemplates") {
				t.Errorf("command for an object Karpenter 1.0.8 cannot have: %s", c)
			}
		}
	}
}
