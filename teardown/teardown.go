package teardown

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/shell"
	"github.com/eksdoctor/eksdoctor/schema"
	"github.com/eksdoctor/eksdoctor/sim"
)

// Stage is one step of the safe teardown order.
type Stage int

const (
	_ Stage = iota
	// StageNodePools deletes the NodePools and waits until no NodeClaim remains.
	StageNodePools
	// StageNodeClasses deletes the EC2NodeClasses.
	StageNodeClasses
	// StageController uninstalls the Karpenter release (and its CRD release).
	StageController
	// StageKarpenterAWS removes the controller's IAM role, interruption queue and
	// EventBridge rules.
	StageKarpenterAWS
	// StageHostCompute removes the node group or Fargate profile the controller
	// runs on.
	StageHostCompute
	// StageCluster removes the EKS cluster.
	StageCluster
	// StageNetwork removes the VPC.
	StageNetwork
)

// Stages lists the stages in teardown order.
var Stages = []Stage{StageNodePools, StageNodeClasses, StageController, StageKarpenterAWS, StageHostCompute, StageCluster, StageNetwork}

func (s Stage) String() string {
	switch s {
	case StageNodePools:
		return "nodepools"
	case StageNodeClasses:
		return "nodeclasses"
	case StageController:
		return "karpenter-controller"
	case StageKarpenterAWS:
		return "karpenter-aws"
	case StageHostCompute:
		return "controller-compute"
	case StageCluster:
		return "cluster"
	case StageNetwork:
		return "network"
	}
	return "invalid"
}

// Title describes a stage for people.
func (s Stage) Title() string {
	switch s {
	case StageNodePools:
		return "Delete the NodePools and wait until no NodeClaim remains"
	case StageNodeClasses:
		return "Delete the EC2NodeClasses"
	case StageController:
		return "Uninstall the Karpenter controller"
	case StageKarpenterAWS:
		return "Remove the Karpenter IAM roles, interruption queue and EventBridge rules"
	case StageHostCompute:
		return "Remove the node group or Fargate profile that runs the Karpenter controller"
	case StageCluster:
		return "Delete the EKS cluster"
	case StageNetwork:
		return "Delete the network (VPC, subnets, NAT gateways)"
	}
	return "invalid"
}

// Item is one thing a stage removes: a Terraform resource or module call, or a
// Kubernetes object managed by another tool.
type Item struct {
	// Address is the Terraform address ("kubectl_manifest.karpenter_node_pool");
	// "" for an item outside Terraform.
	Address string
	// Objects are the Kubernetes objects the item creates (a kubectl_manifest's
	// NodePool), or the object itself for an item outside Terraform.
	Objects []cluster.ObjectRef
	// Name describes the item ("node group \"karpenter\"", "helm release karpenter").
	Name   string
	Origin cluster.Origin
	// Manager is the tool that deletes it: "terraform", "kubectl", "helm",
	// "eksctl", "eks" or "cluster" (live objects of unknown origin).
	Manager string
	// Command, for an item a destroy-time command deletes (a local-exec
	// provisioner with when = destroy), is that command as read.
	Command string
	// Live lists what a running cluster still holds for the item: the NodeClaims
	// of a NodePool ("NodeClaim default-abcde (deleting, finalizer karpenter.sh/termination)").
	Live []string
}

// Key identifies the item in changes and orderings.
func (it Item) Key() string {
	if it.Address != "" {
		return it.Address
	}
	if len(it.Objects) > 0 {
		return it.Objects[0].String()
	}
	return it.Name
}

// Step is one stage with what it removes.
type Step struct {
	Stage Stage
	Items []Item
	// Wait says what must be true before the next step.
	Wait string
	// Commands are the commands that carry the step out when the tool that
	// destroys the configuration does not (kubectl, helm, eksctl).
	Commands []string
}

// HazardKind classifies what can make a teardown hang or leak.
type HazardKind int

const (
	_ HazardKind = iota
	// HazardCRBeforeController: a NodePool or EC2NodeClass does not depend on the
	// Karpenter release, so destroy may uninstall the controller first.
	HazardCRBeforeController
	// HazardControllerBeforeAWS: the Karpenter release does not depend on the
	// controller's IAM role and queue, so destroy may remove its permissions first.
	HazardControllerBeforeAWS
	// HazardControllerBeforeCompute: the Karpenter release does not depend on the
	// node group or Fargate profile it runs on.
	HazardControllerBeforeCompute
	// HazardPoolAfterClass: a NodePool does not depend on its EC2NodeClass. No
	// longer reported: both deletes may run together without harm (the class's
	// finalizer waits for the pool's NodeClaims).
	HazardPoolAfterClass
	// HazardNoWait: a kubectl_manifest NodePool or EC2NodeClass without wait =
	// true: destroy returns before the finalizers ran and moves on.
	HazardNoWait
	// HazardApplyOnly: apply_only = true: destroy never deletes the object.
	HazardApplyOnly
	// HazardForceNew: force_new = true on a NodePool: any change deletes and
	// recreates it, draining every node at once.
	HazardForceNew
	// HazardOutOfBand: NodePools that the tool destroying the cluster does not
	// manage: destroying the cluster leaves their instances running.
	HazardOutOfBand
	// HazardCRBeforeNetwork: nothing orders a NodePool (or the controller it
	// depends on) before the NAT gateways, routes and route tables its nodes
	// and the controller reach AWS through, so destroy may delete them while
	// Karpenter still drains and terminates the nodes.
	HazardCRBeforeNetwork
	// HazardDrainBlocked: a NodePool's nodes hold pods no eviction may
	// remove (a PodDisruptionBudget that allows none, the do-not-disrupt
	// annotation) and no terminationGracePeriod ends their drain: the
	// NodeClaims' finalizer waits forever, and so does the destroy.
	HazardDrainBlocked
)

func (k HazardKind) String() string {
	switch k {
	case HazardCRBeforeController:
		return "custom-resource-before-controller"
	case HazardControllerBeforeAWS:
		return "controller-before-permissions"
	case HazardControllerBeforeCompute:
		return "controller-before-compute"
	case HazardPoolAfterClass:
		return "nodepool-after-nodeclass"
	case HazardNoWait:
		return "no-wait"
	case HazardApplyOnly:
		return "apply-only"
	case HazardForceNew:
		return "force-new"
	case HazardOutOfBand:
		return "out-of-band"
	case HazardCRBeforeNetwork:
		return "custom-resource-before-network"
	case HazardDrainBlocked:
		return "drain-blocked"
	}
	return "invalid"
}

// Order reports whether the hazard is about the dependency order (teardown-order)
// rather than about what destroy deletes or waits for (teardown-orphans).
func (k HazardKind) Order() bool {
	switch k {
	case HazardCRBeforeController, HazardControllerBeforeAWS, HazardControllerBeforeCompute, HazardPoolAfterClass, HazardCRBeforeNetwork:
		return true
	}
	return false
}

// Hazard is one way the configuration's teardown can hang or leak.
type Hazard struct {
	Kind HazardKind
	// Subject is the item at fault; Targets the items it should depend on.
	Subject Item
	Targets []Item
	// Message explains the hazard in one sentence.
	Message string
	// Change is the change of a Terraform resource that removes it; nil when
	// there is none.
	Change *Change
}

// ChangeKind is what a Change does to a Terraform resource.
type ChangeKind int

const (
	_ ChangeKind = iota
	// ChangeDelete: destroying the resource must delete its Kubernetes
	// objects, which it never does now.
	ChangeDelete
	// ChangeDependsOn: the resource must depend on every address of
	// Change.DependsOn.
	ChangeDependsOn
	// ChangeInPlace: a change of the resource must update its Kubernetes
	// objects in place rather than delete and recreate them.
	ChangeInPlace
	// ChangeWait: destroying the resource must wait until its Kubernetes
	// objects are gone.
	ChangeWait
)

func (k ChangeKind) String() string {
	switch k {
	case ChangeDelete:
		return "delete"
	case ChangeDependsOn:
		return "depends-on"
	case ChangeInPlace:
		return "in-place"
	case ChangeWait:
		return "wait"
	}
	return "invalid"
}

// Change is a change of one Terraform resource that makes terraform destroy
// follow the plan, in model terms: the checks turn it into an edit of the
// configuration.
type Change struct {
	Kind ChangeKind
	// Address is the graph address of the resource to change.
	Address string
	Origin  cluster.Origin
	// DependsOn is, for ChangeDependsOn, everything the resource must depend
	// on: what it depends on explicitly now and what it must depend on too,
	// sorted.
	DependsOn []string
}

func (c Change) key() string { return c.Address + "|" + c.Kind.String() }

// Plan is the safe teardown of one configuration.
type Plan struct {
	// Tool is what destroys the cluster: "terraform", "eksctl", or "kubectl" when
	// the inputs do not define the cluster.
	Tool    string
	Steps   []Step
	Hazards []Hazard
	// Changes are the changes of Terraform resources that make `terraform
	// destroy` follow the plan, one per resource and kind, sorted.
	Changes []Change
	// Notes record what the plan could not work out.
	Notes []string
	// Blockers say, for a running cluster, what keeps each stage from
	// completing now (Now).
	Blockers map[Stage][]string
}

// Step returns the step of a stage, nil when the plan has none.
func (p *Plan) Step(s Stage) *Step {
	for i := range p.Steps {
		if p.Steps[i].Stage == s {
			return &p.Steps[i]
		}
	}
	return nil
}

// ---- building the plan ----

// karpenterAWS lists what the Karpenter controller needs in AWS: its IAM
// role, policies and pod identity, and its interruption queue and rules. The
// node role's access entry is not among them: it must outlive the nodes, not
// the controller, and the NodePools' dependency on the controller already
// orders it.
var karpenterAWS = map[cluster.DestroyKind]bool{
	cluster.DestroyIAMRole: true, cluster.DestroyIAMPolicy: true, cluster.DestroyInstanceProfile: true,
	cluster.DestroyPodIdentity: true, cluster.DestroyInterruption: true,
}

// controllerPermission reports whether a Karpenter AWS prerequisite is one the
// controller needs to finalize nodes: its own role, policies and pod identity (a
// module that holds them). The interruption queue and its rules, and the nodes'
// own role and instance profile, are not: the controller terminates instances
// without them.
func (b *builder) controllerPermission(addr string) bool {
	r := b.g.Nodes[addr]
	if r == nil {
		return false
	}
	if r.Type == "module" {
		return true
	}
	switch r.Destroy.Kind {
	case cluster.DestroyIAMRole:
		for _, role := range b.m.Identity.Roles {
			if b.g.OwnerOf(role.Address) == addr {
				return role.Kind != cluster.RoleNode
			}
		}
		return !r.Destroy.NodeRole
	case cluster.DestroyIAMPolicy:
		if r.Destroy.ForNodes {
			return false
		}
		role := r.Destroy.Role
		for _, id := range b.m.Identity.Roles {
			if id.Kind == cluster.RoleNode && role != "" && b.refersToRole(role, id) {
				return false
			}
		}
		return true
	case cluster.DestroyPodIdentity:
		return true
	}
	return false
}

// refersToRole reports whether a role argument (a placeholder such as
// ${aws_iam_role.karpenter[0].name}) names the role.
func (b *builder) refersToRole(arg string, role *cluster.IAMRole) bool {
	expr, ok := cluster.UnknownExpr(arg)
	if !ok {
		return arg == role.Name
	}
	for _, ref := range role.Refs {
		if b.g.Same(ref, expr) {
			return true
		}
	}
	return false
}

// crKind tells Karpenter's node-launching custom resources apart: NodePools (and
// v1alpha5 Provisioners) and node classes (EC2NodeClass, v1alpha1 AWSNodeTemplate).
func crKind(o *cluster.Object) Stage {
	if o.Kind != "NodePool" && o.Kind != "Provisioner" && o.Kind != "EC2NodeClass" && o.Kind != "AWSNodeTemplate" {
		// Decided by kind alone: the content of the many other objects is
		// not read.
		return 0
	}
	switch {
	case o.String("spec.template.spec.nodeClassRef.group") == "eks.amazonaws.com":
		// An EKS Auto Mode NodePool: its controller is part of EKS and outlives
		// everything but the cluster itself.
		return 0
	case strings.HasPrefix(o.APIVersion, "karpenter.sh/") && (o.Kind == "NodePool" || o.Kind == "Provisioner"):
		return StageNodePools
	case strings.HasPrefix(o.APIVersion, "karpenter.k8s.aws/") && (o.Kind == "EC2NodeClass" || o.Kind == "AWSNodeTemplate"):
		return StageNodeClasses
	}
	return 0
}

// finalizerless reports whether every object of an item is an AWSNodeTemplate,
// which Karpenter never puts a finalizer on.
func finalizerless(it Item) bool {
	for _, o := range it.Objects {
		if o.Kind != "AWSNodeTemplate" {
			return false
		}
	}
	return len(it.Objects) > 0
}

// servedBy reports whether the Karpenter version in use serves the API version
// of one of its objects: v1alpha5 up to v0.32, v1beta1 from v0.32 to v1.0, v1
// from v1.0. A version not known, or inferred from the objects themselves, may
// serve anything.
func servedBy(o *cluster.Object, k cluster.Karpenter) bool {
	if k.Version == "" || cluster.IsUnknown(k.Version) || strings.HasPrefix(k.VersionFrom, "apiVersion ") {
		return true
	}
	r, ok := schema.ReleaseFor(k.Version)
	alpha := schema.ServesV1alpha5(k.Version)
	if !ok && !alpha {
		return true // not a version
	}
	_, apiVersion, _ := strings.Cut(o.APIVersion, "/")
	switch apiVersion {
	case "v1alpha5", "v1alpha1":
		return alpha
	case "v1beta1":
		return ok && r != schema.Current
	case "v1":
		return ok && r != schema.V0_37
	}
	return true
}

type builder struct {
	s *sim.Simulator
	m *cluster.Model
	// claimsOf are the live NodeClaims by NodePool (liveNodeClaims).
	claimsOf map[string][]*cluster.NodeClaim
	g        *cluster.Graph
	plan     *Plan
	// items by stage, keyed to avoid duplicates
	items map[Stage]map[string]*Item
	// release is the Karpenter release's graph address ("" when not in Terraform).
	release string
	// crds are Karpenter CRD releases in the graph.
	crds []string
	// crItems are the NodePool/EC2NodeClass items managed by Terraform, by address.
	crStage map[string]Stage
	// classOf maps a NodePool resource to the resources of the node classes it uses.
	classOf map[string][]string
	changes map[string]*Change
	// deleters are the resources whose destroy-time commands delete NodePools
	// or node classes in the plan; uninstallers those whose destroy-time
	// commands uninstall the Karpenter release (other than b.release).
	deleters     map[string]bool
	uninstallers []string
	// cur is the graph with the dependency changes so far, built on first use.
	cur *cluster.Graph
}

// New plans the safe teardown of the simulator's model.
func New(s *sim.Simulator) *Plan {
	m := s.Model()
	b := &builder{
		s: s, m: m, g: m.Terraform, plan: &Plan{},
		items:    map[Stage]map[string]*Item{},
		crStage:  map[string]Stage{},
		classOf:  map[string][]string{},
		changes:  map[string]*Change{},
		deleters: map[string]bool{},
	}
	b.plan.Tool = b.tool()
	b.customResources()
	b.controller()
	b.karpenterAWS()
	b.hostCompute()
	b.clusterAndNetwork()
	b.orderHazards()
	b.orphanHazards()
	b.finish()
	return b.plan
}

func (b *builder) tool() string {
	for _, o := range b.m.Objects {
		if o.Kind == "ClusterConfig" && strings.HasPrefix(o.APIVersion, "eksctl.io/") {
			return "eksctl"
		}
	}
	if b.g != nil && len(b.g.Nodes) > 0 {
		return "terraform"
	}
	return "kubectl"
}

func (b *builder) add(st Stage, it Item) *Item {
	if b.items[st] == nil {
		b.items[st] = map[string]*Item{}
	}
	key := it.Key()
	if old, ok := b.items[st][key]; ok {
		old.Objects = appendRefs(old.Objects, it.Objects...)
		return old
	}
	cp := it
	b.items[st][key] = &cp
	return &cp
}

func appendRefs(list []cluster.ObjectRef, refs ...cluster.ObjectRef) []cluster.ObjectRef {
	for _, r := range refs {
		dup := false
		for _, x := range list {
			if x == r {
				dup = true
			}
		}
		if !dup {
			list = append(list, r)
		}
	}
	return list
}

// customResources collects the NodePools and node classes, by the tool that
// manages them.
func (b *builder) customResources() {
	classRes := map[string][]string{} // node class name -> resources
	type poolRef struct {
		addr  string
		class string
	}
	var pools []poolRef
	for _, o := range b.m.Objects {
		st := crKind(o)
		if st == 0 {
			continue
		}
		if !servedBy(o, b.m.Karpenter) {
			// The Karpenter version in use does not serve the object's API
			// version: it is never created (karpenter-schema reports it), so
			// there is nothing to delete.
			continue
		}
		it := Item{Objects: []cluster.ObjectRef{o.Ref()}, Origin: o.Origin, Manager: o.Manager, Name: o.Ref().String()}
		if addr := b.g.OwnerOf(o.Via); addr != "" && o.Manager == "terraform" {
			if addr == b.karpenterReleaseAddress() {
				b.plan.Notes = append(b.plan.Notes, fmt.Sprintf("%s is created by the Karpenter release itself (%s); it is removed with the controller", o.Ref(), addr))
				continue
			}
			it.Address, it.Name = addr, addr
			if r := b.g.Nodes[addr]; r != nil {
				it.Origin = r.Origin
			}
			b.crStage[addr] = st
			if st == StageNodeClasses {
				classRes[o.Name] = append(classRes[o.Name], addr)
			} else {
				pools = append(pools, poolRef{addr: addr, class: nodeClassName(o)})
			}
		}
		if it.Address == "" {
			if addr, c := b.commandDeleter(o.Ref()); addr != "" {
				// A destroy-time command of addr deletes it: terraform
				// destroy does, when it destroys addr.
				it.Address, it.Name, it.Manager, it.Origin, it.Command = addr, addr+" (destroy-time command)", "terraform", c.Origin, c.Text
				b.deleters[addr] = true
				if _, ok := b.crStage[addr]; !ok || st == StageNodePools {
					// A command deleting both is judged by its NodePools.
					b.crStage[addr] = st
				}
				if st == StageNodeClasses {
					classRes[o.Name] = append(classRes[o.Name], addr)
				} else {
					pools = append(pools, poolRef{addr: addr, class: nodeClassName(o)})
				}
			}
		}
		if it.Manager == "" {
			it.Manager = "kubectl"
		}
		if st == StageNodePools {
			it.Live = b.liveNodeClaims(o.Name)
		}
		b.add(st, it)
	}
	for _, p := range pools {
		for _, c := range classRes[p.class] {
			if c != p.addr {
				b.classOf[p.addr] = appendUnique(b.classOf[p.addr], c)
			}
		}
	}
}

func appendUnique(list []string, s ...string) []string {
	for _, x := range s {
		found := false
		for _, y := range list {
			if x == y {
				found = true
			}
		}
		if !found {
			list = append(list, x)
		}
	}
	return list
}

func nodeClassName(o *cluster.Object) string {
	for _, p := range []string{"spec.template.spec.nodeClassRef.name", "spec.providerRef.name"} {
		if s := o.String(p); s != "" {
			return s
		}
	}
	return ""
}

// liveNodeClaims lists a live NodePool's NodeClaims.
func (b *builder) liveNodeClaims(pool string) []string {
	if b.claimsOf == nil {
		// By NodePool, once: a large cluster has a thousand NodePools and a
		// hundred thousand NodeClaims.
		b.claimsOf = map[string][]*cluster.NodeClaim{}
		for _, nc := range b.m.NodeClaims {
			b.claimsOf[nc.NodePool] = append(b.claimsOf[nc.NodePool], nc)
		}
	}
	var out []string
	for _, nc := range b.claimsOf[pool] {
		s := "NodeClaim " + nc.Name
		var notes []string
		if nc.Deleting {
			notes = append(notes, "deleting")
		}
		if len(nc.Finalizers) > 0 {
			notes = append(notes, "finalizers "+strings.Join(nc.Finalizers, ", "))
		}
		if len(notes) > 0 {
			s += " (" + strings.Join(notes, "; ") + ")"
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func (b *builder) karpenterReleaseAddress() string {
	if r := b.m.Karpenter.Release; r != nil {
		return b.g.OwnerOf(r.Address)
	}
	return ""
}

// controller collects the Karpenter release (and a karpenter-crd release).
func (b *builder) controller() {
	k := b.m.Karpenter
	if r := k.Release; r != nil {
		it := Item{Name: "helm release " + r.Name, Origin: r.Origin, Manager: "helm"}
		if addr := b.g.OwnerOf(r.Address); addr != "" {
			it.Address, it.Name, it.Manager = addr, addr, "terraform"
			b.release = addr
		} else if u := b.uninstallerOf(r.Name); len(u) > 0 {
			// Installed with a command; a destroy-time helm uninstall of u[0]
			// removes it when terraform destroy destroys u[0].
			it.Address, it.Name, it.Manager = u[0], u[0]+" (destroy-time helm uninstall "+r.Name+")", "terraform"
			if n := b.g.Nodes[u[0]]; n != nil {
				it.Origin = n.Origin
			}
			b.release = u[0]
			b.uninstallers = u[1:]
		}
		if b.release != "" && b.uninstallers == nil {
			for _, u := range b.uninstallerOf(r.Name) {
				if u != b.release {
					b.uninstallers = append(b.uninstallers, u)
				}
			}
		}
		if k.Controller != nil {
			it.Objects = []cluster.ObjectRef{k.Controller.Ref()}
		}
		b.add(StageController, it)
	} else if c := k.Controller; c != nil {
		mgr := c.Object.Manager
		if mgr == "" {
			mgr = "kubectl"
		}
		b.add(StageController, Item{Name: c.Ref().String(), Objects: []cluster.ObjectRef{c.Ref()}, Origin: c.Object.Origin, Manager: mgr})
	}
	if b.release == "" && b.g != nil {
		// Add-on modules (aws-ia/eks-blueprints-addons and its predecessors)
		// install the controller, its IAM role and its queue themselves.
		for _, addr := range b.g.Addresses() {
			r := b.g.Nodes[addr]
			if r.Type == "module" && r.Destroy.Karpenter {
				b.release = addr
				b.add(StageController, Item{Address: addr, Name: addr + " (enable_karpenter)", Origin: r.Origin, Manager: "terraform"})
				b.add(StageKarpenterAWS, Item{Address: addr, Name: addr + " (enable_karpenter)", Origin: r.Origin, Manager: "terraform"})
				break
			}
		}
	}
	for _, r := range b.m.HelmReleases {
		if chartBaseName(r.Chart) != "karpenter-crd" {
			continue
		}
		it := Item{Name: "helm release " + r.Name, Origin: r.Origin, Manager: "helm"}
		if addr := b.g.OwnerOf(r.Address); addr != "" {
			it.Address, it.Name, it.Manager = addr, addr, "terraform"
			b.crds = append(b.crds, addr)
		}
		b.add(StageController, it)
	}
}

func chartBaseName(ref string) string {
	ref = strings.TrimRight(ref, "/")
	if i := strings.LastIndexByte(ref, '/'); i >= 0 {
		ref = ref[i+1:]
	}
	return ref
}

// karpenterAWS collects the controller's AWS prerequisites: the karpenter
// sub-module of terraform-aws-modules/eks, or raw IAM/SQS/EventBridge resources
// that are Karpenter's by name or because the release refers to them.
func (b *builder) karpenterAWS() {
	if b.g == nil {
		k := b.m.Karpenter
		if b.plan.Tool == "eksctl" && (k.Release != nil || k.Controller != nil) {
			// eksctl creates neither the controller role nor the queue: the
			// getting-started guide creates them in a CloudFormation stack.
			b.add(StageKarpenterAWS, Item{Name: "the Karpenter controller role, interruption queue and EventBridge rules (not in the eksctl configuration)", Manager: "aws"})
		}
		return
	}
	var relRefs map[string]bool
	if r := b.g.Nodes[b.release]; r != nil {
		relRefs = map[string]bool{}
		for _, a := range b.g.Edges(b.release) {
			relRefs[a] = true
		}
	}
	for _, addr := range b.g.Addresses() {
		r := b.g.Nodes[addr]
		switch {
		case r.Destroy.Kind == cluster.DestroyKarpenterModule:
			if b.g.Within(b.release, addr) {
				// A module that installs the controller (a local wrapper named
				// like the karpenter sub-module) is not what it needs.
				continue
			}
		case karpenterAWS[r.Destroy.Kind] && nested(b.g, addr) < 2 && (strings.Contains(strings.ToLower(r.Name), "karpenter") || relRefs[addr]):
			if r.Destroy.ForNodes {
				// Permissions of the nodes, not of the controller: nothing
				// the controller needs to finalize them.
				continue
			}
		default:
			continue
		}
		b.add(StageKarpenterAWS, Item{Address: addr, Name: addr, Origin: r.Origin, Manager: "terraform"})
	}
	if a := b.g.OwnerOf(b.m.Karpenter.Address); a != "" && b.items[StageKarpenterAWS][a] == nil {
		if r := b.g.Nodes[a]; r != nil && r.Destroy.Kind != cluster.DestroyRelease {
			b.add(StageKarpenterAWS, Item{Address: a, Name: a, Origin: r.Origin, Manager: "terraform"})
		}
	}
}

// hostCompute finds the node groups and Fargate profiles the controller fits in
// the bootstrap phase: those are what it runs on while it finalizes.
func (b *builder) hostCompute() {
	pl := b.s.ControllerPlacement()
	if pl == nil {
		return
	}
	fitting := pl.Fitting()
	if len(fitting) == 0 {
		b.plan.Notes = append(b.plan.Notes, "the Karpenter controller fits no node group or Fargate profile in the bootstrap phase (see bootstrap-deadlock), so the compute it runs on is unknown")
		return
	}
	for _, v := range fitting {
		var addr, created string
		switch {
		case v.Source.NodeGroup != nil:
			addr, created = v.Source.NodeGroup.Address, v.Source.NodeGroup.CreatedBy
		case v.Source.Fargate != nil:
			addr = v.Source.Fargate.Address
		default:
			continue
		}
		it := Item{Name: describeVerdictSource(v.Source), Origin: v.Source.Origin(), Manager: created}
		if ga := b.g.OwnerOf(addr); ga != "" {
			it.Address, it.Manager = ga, "terraform"
			if !b.g.Same(ga, addr) {
				it.Name += " (in " + ga + ")"
			}
		} else if b.plan.Tool == "eksctl" {
			it.Manager = "eksctl"
		}
		b.add(StageHostCompute, it)
	}
}

func describeVerdictSource(s *sim.Source) string { return s.Describe() }

// clusterAndNetwork collects the cluster and the network it lives in.
func (b *builder) clusterAndNetwork() {
	c := b.m.Cluster
	if b.g != nil {
		if a := b.g.OwnerOf(c.Address); a != "" {
			b.add(StageCluster, Item{Address: a, Name: a, Origin: b.g.Nodes[a].Origin, Manager: "terraform"})
		}
		for _, addr := range b.g.Addresses() {
			r := b.g.Nodes[addr]
			switch {
			case r.Destroy.Kind == cluster.DestroyCluster && b.items[StageCluster] == nil:
				b.add(StageCluster, Item{Address: addr, Name: addr, Origin: r.Origin, Manager: "terraform"})
			case r.Destroy.Kind == cluster.DestroyNetworkModule, r.Destroy.Kind == cluster.DestroyEndpointsModule, r.Destroy.Kind == cluster.DestroyNetwork:
				b.add(StageNetwork, Item{Address: addr, Name: addr, Origin: r.Origin, Manager: "terraform"})
			}
		}
		return
	}
	if c.Defined {
		name := c.Name
		if name == "" {
			name = "the cluster"
		}
		b.add(StageCluster, Item{Name: "cluster " + name, Origin: c.Origin, Manager: b.plan.Tool})
	}
}

// ---- hazards ----

func (b *builder) itemAt(st Stage, addr string) Item {
	if it := b.items[st][addr]; it != nil {
		return *it
	}
	for _, m := range b.items {
		if it := m[addr]; it != nil {
			return *it
		}
	}
	it := Item{Address: addr, Name: addr, Manager: "terraform"}
	if r := b.g.Nodes[addr]; r != nil {
		it.Origin = r.Origin
	}
	return it
}

// dependsAfter reports whether from depends on to once the changes so far are
// made.
func (b *builder) dependsAfter(from, to string) bool {
	return b.current().DependsOn(from, to)
}

// WithChanges returns a copy of the graph with the dependencies of changes
// (ChangeDependsOn) added.
func WithChanges(g *cluster.Graph, changes []Change) *cluster.Graph {
	out := cluster.NewGraph()
	if g == nil {
		return out
	}
	for a, r := range g.Nodes {
		cp := *r
		out.Nodes[a] = &cp
	}
	for _, c := range changes {
		if c.Kind != ChangeDependsOn {
			continue
		}
		if r := out.Nodes[c.Address]; r != nil {
			r.DependsOn = append([]string(nil), c.DependsOn...)
		}
	}
	return out
}

// needDependency records that from must depend on to.
func (b *builder) needDependency(from, to string) *Change {
	c := Change{Kind: ChangeDependsOn, Address: from}
	e := b.changes[c.key()]
	if e == nil {
		r := b.g.Nodes[from]
		c.Origin, c.DependsOn = r.Origin, append([]string(nil), r.DependsOn...)
		e = &c
		b.changes[c.key()] = e
	}
	e.DependsOn = appendUnique(e.DependsOn, to)
	sort.Strings(e.DependsOn)
	if b.cur != nil {
		if r := b.cur.Nodes[from]; r != nil {
			r.DependsOn = append([]string(nil), e.DependsOn...)
		}
	}
	return e
}

// need records a change of a resource other than a dependency.
func (b *builder) need(kind ChangeKind, addr string) *Change {
	c := Change{Kind: kind, Address: addr}
	if e := b.changes[c.key()]; e != nil {
		return e
	}
	c.Origin = b.g.Nodes[addr].Origin
	b.changes[c.key()] = &c
	return &c
}

func (b *builder) hazard(h Hazard) { b.plan.Hazards = append(b.plan.Hazards, h) }

// orderHazards checks the Terraform dependency edges the safe order needs.
func (b *builder) orderHazards() {
	if b.g == nil {
		return
	}
	controllers := append([]string(nil), b.crds...)
	if b.release != "" {
		controllers = append([]string{b.release}, controllers...)
	}
	// A destroy-time helm uninstall of the Karpenter release removes the
	// controller as surely as destroying its helm_release.
	controllers = append(controllers, b.uninstallers...)
	// Node classes first, so that a NodePool can reach the controller through its
	// node class.
	for _, st := range []Stage{StageNodeClasses, StageNodePools} {
		for _, addr := range sortedKeys(b.items[st]) {
			if b.crStage[addr] != st {
				continue
			}
			subject := b.itemAt(st, addr)
			if finalizerless(subject) {
				// v1alpha1 AWSNodeTemplates carry no finalizer: deleting one
				// never waits on the controller or on its nodes.
				continue
			}
			for _, c := range controllers {
				if b.dependsAfter(addr, c) {
					continue
				}
				target := c
				if st == StageNodePools {
					for _, cls := range b.classOf[addr] {
						if b.dependsAfter(cls, c) {
							target = cls
							break
						}
					}
				}
				e := b.needDependency(addr, target)
				b.hazard(Hazard{
					Kind: HazardCRBeforeController, Subject: subject, Targets: []Item{b.itemAt(StageController, c)}, Change: e,
					Message: fmt.Sprintf("%s does not depend on %s, so terraform destroy can uninstall the controller before (or while) it deletes %s, and nothing removes the finalizers (karpenter.sh/termination on NodeClaims and Nodes, karpenter.k8s.aws/termination on EC2NodeClasses)", addr, c, objectsText(subject)),
				})
			}
			// A NodePool that does not depend on its EC2NodeClass is no hazard:
			// both deletes may run together, the class's finalizer holds it
			// until the pool's NodeClaims are gone, and neither blocks the other.
		}
	}
	b.networkHazards()
	if b.release == "" {
		return
	}
	rel := b.itemAt(StageController, b.release)
	var missingAWS []string
	for _, a := range sortedKeys(b.items[StageKarpenterAWS]) {
		if a != b.release && !b.dependsAfter(b.release, a) && b.controllerPermission(a) {
			missingAWS = append(missingAWS, a)
		}
	}
	// Depending on one item that depends on another covers both.
	for _, a := range minimal(b.g, missingAWS) {
		e := b.needDependency(b.release, a)
		b.hazard(Hazard{
			Kind: HazardControllerBeforeAWS, Subject: rel, Targets: []Item{b.itemAt(StageKarpenterAWS, a)}, Change: e,
			Message: fmt.Sprintf("%s does not depend on %s, so terraform destroy can remove the controller's IAM role or interruption queue while the controller is still terminating instances; without permissions it cannot, and the finalizers stay", b.release, a),
		})
	}
	for _, h := range sortedKeys(b.items[StageHostCompute]) {
		if h == b.release || b.dependsAfter(b.release, h) {
			continue
		}
		e := b.needDependency(b.release, h)
		b.hazard(Hazard{
			Kind: HazardControllerBeforeCompute, Subject: rel, Targets: []Item{b.itemAt(StageHostCompute, h)}, Change: e,
			Message: fmt.Sprintf("%s does not depend on %s, where the controller runs, so terraform destroy can remove that capacity while the controller still has finalizers to process; its pods go Pending and the finalizers stay", b.release, h),
		})
	}
}

// egress is one network item the nodes need: the item destroy removes (a
// resource, or a module call) and the graph key a dependency on it is seen at
// (the resource, the module call, or the egress part of a modelled module).
type egress struct{ addr, key string }

// egressTargets lists the network the configuration creates that Karpenter's
// nodes and controller reach AWS through: the gateways and routes of
// terraform-aws-modules/vpc with NAT gateways enabled, terraform-aws-modules/vpc
// vpc-endpoints calls, and raw gateways,
// route tables, routes and endpoints when the configuration creates a NAT or
// internet gateway. A VPC module eksdoctor does not model is left out.
func (b *builder) egressTargets() []egress {
	var out []egress
	rawGateway := false
	for _, addr := range b.g.Addresses() {
		if b.g.Nodes[addr].Destroy.Gateway {
			rawGateway = true
		}
	}
	for _, addr := range b.g.Addresses() {
		r := b.g.Nodes[addr]
		switch {
		case r.Destroy.Kind == cluster.DestroyEndpointsModule:
			out = append(out, egress{addr, addr})
		case r.Type == "module":
			// Only when NAT gateways are known to be enabled.
			if !r.Destroy.Egress {
				continue
			}
			for _, p := range r.Parts {
				if p.Name == cluster.PartEgress {
					out = append(out, egress{addr, p.Address})
				}
			}
		case r.Destroy.Egress && rawGateway:
			out = append(out, egress{addr, addr})
		}
	}
	return out
}

// networkHazards: a NodePool whose deletion waits for Karpenter to drain and
// terminate its nodes must be destroyed before the network those nodes and
// the controller use. Terraform destroys independent resources in parallel:
// when no dependency orders the NodePool (through the controller it depends
// on) before the NAT gateways and routes, destroy can delete the routes while
// the nodes drain; they lose their way out, go NotReady, and the controller
// can no longer reach EC2 to terminate them. Reading module.vpc.private_subnets
// (as module.eks does) orders nothing against the routes: that output depends
// on the subnets alone.
func (b *builder) networkHazards() {
	targets := b.egressTargets()
	if len(targets) == 0 {
		return
	}
	for _, addr := range sortedKeys(b.items[StageNodePools]) {
		if b.crStage[addr] != StageNodePools {
			continue
		}
		subject := b.itemAt(StageNodePools, addr)
		if finalizerless(subject) {
			continue
		}
		if b.g.Nodes[addr].Destroy.Never {
			// Destroy never deletes it (teardown-orphans says so): nothing
			// drains during destroy.
			continue
		}
		// The controller must outlive the nodes and keep its network as long:
		// the edge goes on the release when the pool depends on it, so that
		// the pool, its classes (which may hold destroy until the nodes are
		// gone) and the controller are all destroyed before the network.
		from := addr
		if rel := b.g.Nodes[b.release]; rel != nil && rel.Destroy.Kind == cluster.DestroyRelease && b.dependsAfter(addr, b.release) {
			from = b.release
		}
		reach := b.current().Reach(addr)
		var missing []egress
		for _, t := range targets {
			if !reach[t.key] {
				missing = append(missing, t)
			}
		}
		if len(missing) == 0 {
			continue
		}
		var edges, names []string
		var items []Item
		for _, t := range missing {
			if !slices.Contains(edges, t.addr) {
				edges = append(edges, t.addr)
				items = append(items, b.itemAt(StageNetwork, t.addr))
				names = append(names, t.addr)
			}
		}
		edges = minimal(b.current(), edges)
		var e *Change
		for _, to := range edges {
			e = b.needDependency(from, to)
		}
		via := ""
		if from != addr {
			via = fmt.Sprintf(" (nor %s, the controller it depends on)", from)
		}
		b.hazard(Hazard{
			Kind: HazardCRBeforeNetwork, Subject: subject, Targets: items, Change: e,
			Message: fmt.Sprintf("nothing orders %s%s before %s: terraform destroy can delete the NAT gateways, route tables and routes in parallel while Karpenter drains and terminates the nodes of %s, which then lose their way out of the private subnets (they go NotReady) while the controller can no longer reach the EC2 API to terminate them, so the NodeClaim finalizers stay and destroy hangs", addr, via, strings.Join(names, ", "), objectsText(subject)),
		})
	}
}

// current is the graph with the dependency changes so far.
func (b *builder) current() *cluster.Graph {
	if b.cur == nil {
		b.cur = WithChanges(b.g, nil)
	}
	return b.cur
}

// minimal drops the addresses another address of the list depends on: depending
// on that other one covers them.
func minimal(g *cluster.Graph, addrs []string) []string {
	var out []string
	for _, a := range addrs {
		covered := false
		for _, o := range addrs {
			if o != a && g.DependsOn(o, a) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, a)
		}
	}
	return out
}

func objectsText(it Item) string {
	if len(it.Objects) == 0 {
		return "its objects"
	}
	var parts []string
	for _, o := range it.Objects {
		parts = append(parts, o.String())
	}
	return strings.Join(parts, ", ")
}

// classesHoldNodes reports whether the EC2NodeClasses a NodePool uses keep
// terraform destroy waiting until the pool's nodes are gone, though the NodePool
// itself is not waited for: each is waited for (wait = true) and destroyed
// before the controller. Karpenter keeps an EC2NodeClass's finalizer until no
// NodeClaim of the class is left, and deleting the NodePool deletes its
// NodeClaims.
func (b *builder) classesHoldNodes(pool string) bool {
	classes := b.classOf[pool]
	if len(classes) == 0 || b.release == "" {
		return false
	}
	for _, cls := range classes {
		r := b.g.Nodes[cls]
		it := b.itemAt(StageNodeClasses, cls)
		if b.deleters[cls] {
			if finalizerless(it) || !b.dependsAfter(cls, b.release) || !commandWaitsFor(r, "EC2NodeClass") {
				return false
			}
			continue
		}
		if r == nil || r.Destroy.Kind != cluster.DestroyManifest && r.Destroy.Kind != cluster.DestroyObjectManifest || finalizerless(it) || !b.dependsAfter(cls, b.release) {
			return false
		}
		// kubernetes_manifest waits until the deleted object is gone [infer:
		// terraform-provider-kubernetes polls for the object after the delete
		// call, within its delete timeout]; kubectl_manifest only with wait.
		if !r.Destroy.Waits {
			return false
		}
	}
	return true
}

// orphanHazards finds what destroy does not delete or does not wait for.
func (b *builder) orphanHazards() {
	for _, st := range []Stage{StageNodeClasses, StageNodePools} {
		for _, key := range sortedKeys(b.items[st]) {
			it := *b.items[st][key]
			if it.Address == "" {
				continue
			}
			r := b.g.Nodes[it.Address]
			if r == nil {
				continue
			}
			if b.deleters[it.Address] {
				b.commandWaitHazard(st, it, r)
				continue
			}
			if r.Destroy.Kind == cluster.DestroyRelease {
				// helm uninstall waits for the chart's objects to be deleted, their
				// finalizers included, unless the release says wait = false
				// [infer: terraform-provider-helm passes wait to the uninstall].
				if !r.Destroy.Waits {
					b.hazard(Hazard{
						Kind: HazardNoWait, Subject: it, Change: b.need(ChangeWait, it.Address),
						Message: fmt.Sprintf("%s sets wait = false: terraform destroy uninstalls the chart and moves on without waiting for %s to be finalized", it.Address, objectsText(it)),
					})
				}
				continue
			}
			if r.Destroy.Kind == cluster.DestroyObjectManifest {
				// Deleting a NodePool (or Provisioner) is immediate: it carries
				// no finalizer, and its NodeClaims (nodes) go in the background.
				if st == StageNodePools && !b.classesHoldNodes(it.Address) {
					b.hazard(Hazard{
						Kind: HazardNoWait, Subject: it,
						Message: fmt.Sprintf("%s is a kubernetes_manifest: terraform destroy deletes %s and moves on as soon as the object is gone, which is at once (a NodePool carries no finalizer; its nodes are drained and terminated afterwards, in the background), so the next resources (the controller, its permissions, its node group) can go while Karpenter still has nodes to terminate; no EC2NodeClass with a finalizer holds the destroy for them", it.Address, objectsText(it)),
					})
				}
				continue
			}
			if r.Destroy.Kind != cluster.DestroyManifest || st == StageNodeClasses && onlyKind(it.Objects, "AWSNodeTemplate") {
				// A v1alpha1 AWSNodeTemplate carries no finalizer to wait for.
				continue
			}
			if !r.Destroy.Waits && !(st == StageNodePools && b.classesHoldNodes(it.Address)) {
				b.hazard(Hazard{
					Kind: HazardNoWait, Subject: it, Change: b.need(ChangeWait, it.Address),
					Message: fmt.Sprintf("%s has no wait = true: terraform destroy deletes %s and moves on at once, before Karpenter has drained and terminated the nodes, so the next resources (the controller, its permissions, its node group) can go while the finalizers are still pending", it.Address, objectsText(it)),
				})
			}
			if r.Destroy.Never {
				b.hazard(Hazard{
					Kind: HazardApplyOnly, Subject: it, Change: b.need(ChangeDelete, it.Address),
					Message: fmt.Sprintf("%s sets apply_only = true: terraform destroy never deletes %s, so its nodes keep running after the cluster's controller is gone", it.Address, objectsText(it)),
				})
			}
			if r.Destroy.Replaces && st == StageNodePools {
				b.hazard(Hazard{
					Kind: HazardForceNew, Subject: it, Change: b.need(ChangeInPlace, it.Address),
					Message: fmt.Sprintf("%s sets force_new = true: any change to the manifest deletes and recreates %s, and Karpenter drains every one of its nodes at once", it.Address, objectsText(it)),
				})
			}
		}
	}
	if b.plan.Tool == "kubectl" || !b.m.Cluster.Defined && b.release == "" {
		// Manifests alone define no cluster: the plan's commands delete the
		// NodePools first. A Terraform configuration that neither creates the
		// cluster nor installs Karpenter destroys nothing the NodePools need.
		// eksctl delete cluster never deletes NodePools (it drains and deletes
		// its own node groups only: pkg/actions/cluster, v0.230.0), so theirs
		// are out of band too.
		return
	}
	unread := b.unreadDestroyCommands()
	for _, key := range sortedKeys(b.items[StageNodePools]) {
		it := *b.items[StageNodePools][key]
		if it.Address != "" || it.Manager == "cluster" {
			continue
		}
		if it.Manager == cluster.ManagerCommand {
			if len(unread) > 0 {
				b.plan.Notes = append(b.plan.Notes, fmt.Sprintf("%s is applied by a command; the destroy-time commands of %s cannot be read in full and may delete it", objectsText(it), strings.Join(unread, ", ")))
				continue
			}
			b.hazard(Hazard{
				Kind: HazardOutOfBand, Subject: it,
				Message: fmt.Sprintf("%s is applied by a local-exec command of %s, which Terraform does not track, and no destroy-time command deletes it: terraform destroy leaves it, so its nodes keep running (and its NodeClaims' finalizers stay) once the controller and the cluster are gone", objectsText(it), b.creatorOf(it)),
			})
			continue
		}
		b.hazard(Hazard{
			Kind: HazardOutOfBand, Subject: it,
			Message: fmt.Sprintf("%s is not managed by %s (applied with %s or a GitOps tool): destroying the cluster does not delete it, so its nodes are left running (and its NodeClaims' finalizers stuck) unless it is deleted first", objectsText(it), b.plan.Tool, it.Manager),
		})
	}
}

// onlyKind reports whether every object is of one kind.
func onlyKind(objs []cluster.ObjectRef, kind string) bool {
	for _, o := range objs {
		if o.Kind != kind {
			return false
		}
	}
	return len(objs) > 0
}

// ---- steps ----

func (b *builder) finish() {
	p := b.plan
	for _, st := range Stages {
		m := b.items[st]
		if len(m) == 0 {
			continue
		}
		step := Step{Stage: st}
		for _, k := range sortedKeys(m) {
			step.Items = append(step.Items, *m[k])
		}
		switch st {
		case StageNodePools:
			step.Wait = "no NodeClaim remains (kubectl get nodeclaims shows none): Karpenter has drained and terminated every node"
		case StageNodeClasses:
			step.Wait = "the EC2NodeClasses are gone: Karpenter removed their instance profiles and launch templates"
		case StageController:
			step.Wait = "the controller pods are gone"
		}
		step.Commands = b.commands(step)
		p.Steps = append(p.Steps, step)
	}
	for _, k := range sortedKeys(b.changes) {
		p.Changes = append(p.Changes, *b.changes[k])
	}
	sort.SliceStable(p.Hazards, func(i, j int) bool {
		a, c := p.Hazards[i], p.Hazards[j]
		if a.Subject.Key() != c.Subject.Key() {
			return a.Subject.Key() < c.Subject.Key()
		}
		return a.Kind < c.Kind
	})
	if note := autoModeNote(b.m); note != "" {
		p.Notes = append(p.Notes, note)
	}
	if len(b.items[StageNodePools]) == 0 && !b.m.Cluster.AutoMode.On() {
		where := "is in the inputs"
		if b.m.Live != nil {
			where = "is in the cluster"
		}
		p.Notes = append(p.Notes, "no NodePool "+where+": delete the NodePools the cluster has (kubectl get nodepools) and wait until no NodeClaim remains before anything else")
	}
}

// commands carries out a step with the tools that manage its items, when the
// tool destroying the configuration does not.
func (b *builder) commands(step Step) []string {
	var cmds []string
	kubectlNames := map[string][]string{} // by kind
	for _, it := range step.Items {
		if it.Manager == "terraform" {
			continue
		}
		switch step.Stage {
		case StageNodePools, StageNodeClasses:
			for _, o := range it.Objects {
				kubectlNames[o.Kind] = append(kubectlNames[o.Kind], o.Name)
			}
		case StageController:
			if r := b.m.Karpenter.Release; r != nil && r.Address == "" && it.Name == "helm release "+r.Name {
				ns := r.Namespace
				if ns == "" {
					ns = b.m.Karpenter.Namespace
				}
				cmds = append(cmds, fmt.Sprintf("helm uninstall %s --namespace %s --wait", shell.Quote(r.Name), shell.Quote(orDefault(ns, "kube-system"))))
			} else if len(it.Objects) > 0 && it.Origin.File != "" {
				cmds = append(cmds, "kubectl delete -f "+shell.Path(it.Origin.File))
			}
		case StageHostCompute:
			if it.Manager == "eksctl" {
				switch {
				case strings.HasPrefix(it.Name, cluster.KindFargate.String()):
					cmds = append(cmds, fmt.Sprintf("eksctl delete fargateprofile --cluster %s --name %s --wait", shell.Quote(b.clusterName()), shell.Quote(itemQuoted(it.Name))))
				default:
					cmds = append(cmds, fmt.Sprintf("eksctl delete nodegroup --cluster %s --name %s --wait", shell.Quote(b.clusterName()), shell.Quote(itemQuoted(it.Name))))
				}
			}
		case StageCluster:
			if it.Manager == "eksctl" {
				cmds = append(cmds, fmt.Sprintf("eksctl delete cluster --name %s --wait", shell.Quote(b.clusterName())))
			}
		}
	}
	// The v1alpha5 kinds of Karpenter v0.32 and earlier have resources of their
	// own, and their nodes carry the provisioner's name.
	names := func(kind string) string {
		n := kubectlNames[kind]
		sort.Strings(n)
		return shell.Join(n...)
	}
	switch step.Stage {
	case StageNodePools:
		if n := names("NodePool"); n != "" {
			cmds = append(cmds,
				"kubectl delete nodepools.karpenter.sh "+n,
				"kubectl wait --for=delete nodeclaims.karpenter.sh --all --timeout=30m")
		}
		if n := names("Provisioner"); n != "" {
			cmds = append(cmds,
				"kubectl delete provisioners.karpenter.sh "+n,
				"kubectl wait --for=delete nodes -l karpenter.sh/provisioner-name --timeout=30m")
		}
	case StageNodeClasses:
		if n := names("EC2NodeClass"); n != "" {
			cmds = append(cmds, "kubectl delete ec2nodeclasses.karpenter.k8s.aws "+n+" --wait --timeout=15m")
		}
		if n := names("AWSNodeTemplate"); n != "" {
			cmds = append(cmds, "kubectl delete awsnodetemplates.karpenter.k8s.aws "+n)
		}
	}
	if step.Stage == StageKarpenterAWS && b.plan.Tool == "eksctl" {
		cmds = append(cmds, fmt.Sprintf("aws cloudformation delete-stack --stack-name %s  # the stack of the Karpenter getting-started guide, if it was used", shell.Quote("Karpenter-"+b.clusterName())))
	}
	return cmds
}

func itemQuoted(name string) string {
	if i := strings.IndexByte(name, '"'); i >= 0 {
		if j := strings.IndexByte(name[i+1:], '"'); j >= 0 {
			return name[i+1 : i+1+j]
		}
	}
	return name
}

func (b *builder) clusterName() string {
	if n := b.m.Cluster.Name; n != "" {
		return n
	}
	return "<cluster>"
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// OrderViolations checks a plan against a dependency graph: an item of a later
// step that (transitively) depends on an item of an earlier step would be
// destroyed first. Items that depend on each other (a cycle at module granularity,
// where Terraform orders the resources inside the modules) cannot be judged and are
// skipped.
func (p *Plan) OrderViolations(g *cluster.Graph) []string {
	var out []string
	for i, early := range p.Steps {
		for _, late := range p.Steps[i+1:] {
			for _, a := range early.Items {
				for _, z := range late.Items {
					if a.Address == "" || z.Address == "" || a.Address == z.Address {
						continue
					}
					if g.DependsOn(z.Address, a.Address) && !g.DependsOn(a.Address, z.Address) {
						out = append(out, fmt.Sprintf("%s (%s) depends on %s (%s): terraform destroy removes it first", z.Address, late.Stage, a.Address, early.Stage))
					}
				}
			}
		}
	}
	return out
}

// ---- destroy-time commands ----

// commandDeleter finds the resource whose destroy-time command deletes an
// object, with that command.
func (b *builder) commandDeleter(o cluster.ObjectRef) (string, *cluster.Command) {
	if b.g == nil {
		return "", nil
	}
	for _, addr := range b.g.Addresses() {
		n := b.g.Nodes[addr]
		for i := range n.Commands {
			for _, d := range n.Commands[i].Deletes {
				if d.Covers(o) {
					return addr, &n.Commands[i]
				}
			}
		}
	}
	return "", nil
}

// uninstallerOf lists the resources whose destroy-time commands uninstall a
// Helm release.
func (b *builder) uninstallerOf(release string) []string {
	if b.g == nil || release == "" {
		return nil
	}
	var out []string
	for _, addr := range b.g.Addresses() {
		for _, c := range b.g.Nodes[addr].Commands {
			for _, u := range c.Uninstalls {
				if u == release {
					out = appendUnique(out, addr)
				}
			}
		}
	}
	return out
}

// unreadDestroyCommands lists the resources with destroy-time commands not
// read in full.
func (b *builder) unreadDestroyCommands() []string {
	if b.g == nil {
		return nil
	}
	var out []string
	for _, addr := range b.g.Addresses() {
		for _, c := range b.g.Nodes[addr].Commands {
			if c.Unread {
				out = appendUnique(out, addr)
			}
		}
	}
	return out
}

// creatorOf names the resource that applies an item's objects.
func (b *builder) creatorOf(it Item) string {
	var out []string
	for _, ref := range it.Objects {
		for _, o := range b.m.Objects {
			if o.Ref() == ref && o.Manager == cluster.ManagerCommand && o.Via != "" {
				out = appendUnique(out, o.Via)
			}
		}
	}
	if len(out) == 0 {
		return "a resource"
	}
	return strings.Join(out, ", ")
}

// commandWaitsFor reports whether a resource's destroy-time commands delete
// objects of a kind and wait until they are gone.
func commandWaitsFor(r *cluster.Resource, kind string) bool {
	for _, c := range r.Commands {
		for _, d := range c.Deletes {
			if d.Kind == kind && d.Wait {
				return true
			}
		}
	}
	return false
}

// commandHoldsNodes reports whether a resource's destroy-time commands return
// only once the nodes are gone: they wait for NodeClaims or Nodes (kubectl
// wait --for=delete, or a waiting delete of them), delete the NodePool in the
// foreground and wait (the NodePool goes after its NodeClaims, whose owner
// reference blocks it), or delete the EC2NodeClasses and wait (their finalizer
// holds until no NodeClaim of theirs is left).
func commandHoldsNodes(r *cluster.Resource, poolKind string) bool {
	for _, c := range r.Commands {
		for _, k := range c.WaitsFor {
			if k == "NodeClaim" || k == "Node" || k == "Machine" {
				return true
			}
		}
		for _, d := range c.Deletes {
			switch {
			case !d.Wait:
			case d.Kind == "NodeClaim" || d.Kind == "Node" || d.Kind == "Machine":
				return true
			case d.Kind == poolKind && d.Foreground:
				return true
			case d.Kind == "EC2NodeClass" && poolKind == "NodePool":
				return true
			}
		}
	}
	return false
}

// commandWaitHazard reports a destroy-time command that deletes NodePools or
// node classes without waiting for Karpenter to finalize them.
func (b *builder) commandWaitHazard(st Stage, it Item, r *cluster.Resource) {
	if st == StageNodeClasses {
		if onlyKind(it.Objects, "AWSNodeTemplate") {
			return
		}
		for _, o := range it.Objects {
			if o.Kind == "EC2NodeClass" && !commandWaitsFor(r, "EC2NodeClass") {
				b.hazard(Hazard{
					Kind: HazardNoWait, Subject: it,
					Message: fmt.Sprintf("the destroy-time command of %s deletes %s with --wait=false: terraform destroy moves on at once, before Karpenter has terminated the class's nodes and removed its finalizer", it.Address, objectsText(it)),
				})
				return
			}
		}
		return
	}
	kind := "NodePool"
	if onlyKind(it.Objects, "Provisioner") {
		kind = "Provisioner"
	}
	if commandHoldsNodes(r, kind) || b.classesHoldNodes(it.Address) {
		return
	}
	how := "kubectl delete returns as soon as the " + kind + " object is gone, which is at once (it carries no finalizer; its nodes are drained and terminated afterwards, in the background)"
	for _, c := range r.Commands {
		for _, d := range c.Deletes {
			if d.Kind == kind && !d.Wait {
				how = "it runs kubectl delete with --wait=false"
			}
		}
	}
	b.hazard(Hazard{
		Kind: HazardNoWait, Subject: it,
		Message: fmt.Sprintf("the destroy-time command of %s deletes %s without waiting for the nodes: %s, so the next resources (the controller, its permissions, its node group) can go while Karpenter still has nodes to terminate", it.Address, objectsText(it), how),
	})
}

// nested is how many module calls an address is nested in; 2 (too deep for a
// resource that is the controller's) when the graph cannot tell.
func nested(g *cluster.Graph, addr string) int {
	if d := g.Depth(addr); d >= 0 {
		return d
	}
	return 2
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// autoModeNote says what EKS removes with an Auto Mode cluster and what it
// leaves: its NodePools (built-in and custom) are not steps of the teardown,
// since their controller is part of EKS and outlives everything but the
// cluster.
func autoModeNote(m *cluster.Model) string {
	a := m.Cluster.AutoMode
	if !a.On() {
		return ""
	}
	var pools []string
	for _, o := range m.Objects {
		if o.Kind == "NodePool" && o.String("spec.template.spec.nodeClassRef.group") == "eks.amazonaws.com" {
			pools = append(pools, o.Name)
		}
	}
	sort.Strings(pools)
	what := "EKS Auto Mode's nodes"
	if len(pools) > 0 {
		what += " (NodePools " + strings.Join(pools, ", ") + ")"
	}
	return what + " are terminated by EKS when the cluster is deleted, and so are the load balancers Auto Mode made; the EBS volumes Auto Mode provisioned are not: delete the PersistentVolumeClaims of ebs.csi.eks.amazonaws.com StorageClasses before the cluster, or their volumes remain. Deleting the custom NodePools and waiting until their nodes are gone before deleting the cluster keeps nodes from running while the network is destroyed (a cluster security group left behind has been reported)"
}
