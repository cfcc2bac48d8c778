package cluster

import (
	corev1 "k8s.io/api/core/v1"
	"strings"
)

// Model is everything eksdoctor knows about one cluster configuration.
type Model struct {
	// Objects holds every Kubernetes object from every source.
	Objects []*Object

	Workloads       []*Workload
	Pods            []*Pod // live pods (static sources describe workloads instead)
	NodeGroups      []*NodeGroup
	FargateProfiles []*FargateProfile
	NodePools       []*NodePool
	NodeClasses     []*NodeClass
	NodeClaims      []*NodeClaim
	Nodes           []*Node
	// Unseen is capacity eksdoctor cannot see into (see UnseenCapacity).
	Unseen []UnseenCapacity

	HelmReleases []*HelmRelease
	Addons       []*Addon
	// DevicePlugins are the device plugin DaemonSets a tool installs by itself
	// (eksctl for accelerated node groups), which no input file declares.
	DevicePlugins []*DevicePlugin

	Cluster   EKSCluster
	Identity  Identity
	Karpenter Karpenter
	// Network holds the subnets and security groups the inputs create.
	Network Network

	// Terraform holds the resources and module calls of a Terraform configuration
	// with their dependency edges; nil when no Terraform was read.
	Terraform *Graph

	// Live holds what only a running cluster can show; nil for static inputs.
	Live *Live

	Problems []Problem
	Notes    []Note
	// Suppressions are the ignore comments of the configuration's files.
	Suppressions []Suppression

	// Inputs are the files the configuration reads besides its own (templates,
	// values and manifests read through Terraform's file functions and data
	// sources), sorted: they belong to it, and are not read again on their own.
	Inputs []string
}

// EKSCluster is what the configuration says about the EKS cluster itself.
type EKSCluster struct {
	Name              string
	KubernetesVersion string
	Origin            Origin
	// Address is the Terraform address of the cluster ("module.eks", "aws_eks_cluster.this").
	Address string
	// Module is the terraform-aws-modules/eks version declared ("20.24.0"), if any.
	ModuleVersion string
	// Defined reports whether any source declared the cluster (Terraform, eksctl).
	Defined bool
	// NoDefaultAddons says why EKS does not install its default add-ons (the
	// VPC CNI, kube-proxy and CoreDNS) with the cluster
	// ("bootstrap_self_managed_addons = false"); "" when it does, as it does
	// unless told otherwise.
	NoDefaultAddons string
	// AutoMode is EKS Auto Mode as the inputs switch it on; nil when they do
	// not.
	AutoMode *AutoMode
}

// Phase is a point in a cluster's life at which scheduling is judged.
type Phase int

const (
	_ Phase = iota
	// Bootstrap: only node groups and Fargate profiles exist. This is what EKS
	// add-ons and the Karpenter controller see while Terraform creates them.
	Bootstrap
	// Steady: bootstrap capacity plus the NodePools Karpenter can act on.
	Steady
)

func (p Phase) String() string {
	switch p {
	case Bootstrap:
		return "bootstrap"
	case Steady:
		return "steady"
	}
	return "unknown"
}

// Phases lists the phases in order.
var Phases = []Phase{Bootstrap, Steady}

// Workload is anything that creates pods: a Pod, Deployment, StatefulSet, DaemonSet,
// ReplicaSet, Job or CronJob, or a workload an EKS add-on or a chart installs.
type Workload struct {
	Object   *Object
	Template corev1.PodTemplateSpec
	// TemplatePath is the field path of the pod template inside Object
	// ("spec.template", "spec.jobTemplate.spec.template", "" for a Pod).
	TemplatePath string
	Replicas     int32

	// Component identifies well-known components ("karpenter", "coredns",
	// "ebs-csi-node", "aws-node", "cilium-agent"); empty for the user's own.
	Component string
	// Bootstrap, when set, explains why the workload must be schedulable before
	// any Karpenter capacity exists ("the Karpenter controller launches all
	// Karpenter capacity", "Terraform waits for the coredns add-on").
	Bootstrap string
	// NodeCritical marks DaemonSets that nodes need to work and drain correctly
	// (CSI node plugins, CNI agents), with the reason.
	NodeCritical string

	// Release is the Helm release that installs the workload, if any.
	Release *HelmRelease
	// Addon is the EKS add-on that installs the workload, if any.
	Addon *Addon

	// KeptClaimTemplates is a StatefulSet's spec.volumeClaimTemplates, as
	// KeepClaimTemplates found it (ClaimTemplatesKept); read them with
	// ClaimTemplates.
	KeptClaimTemplates any
	ClaimTemplatesKept bool
}

// Ref is the reference of the object that owns the pod template.
func (w *Workload) Ref() ObjectRef { return w.Object.Ref() }

// KeepClaimTemplates keeps the object's spec.volumeClaimTemplates with the
// workload, so that reading them does not read the whole object again once
// its content is released.
func (w *Workload) KeepClaimTemplates() {
	w.KeptClaimTemplates, w.ClaimTemplatesKept = w.Object.Get("spec.volumeClaimTemplates"), true
}

// ClaimTemplates is the object's spec.volumeClaimTemplates (nil when it has
// none): a StatefulSet's claims, one per pod.
func (w *Workload) ClaimTemplates() any {
	if w.ClaimTemplatesKept {
		return w.KeptClaimTemplates
	}
	return w.Object.Get("spec.volumeClaimTemplates")
}

// IsDaemonSet reports whether the workload runs one pod per node.
func (w *Workload) IsDaemonSet() bool { return w.Object.Kind == "DaemonSet" }

// Pod is a live pod.
type Pod struct {
	Object   *Object
	Spec     corev1.PodSpec
	Status   corev1.PodStatus
	Owner    ObjectRef // the controlling workload (Deployment rather than ReplicaSet)
	Workload *Workload
	// Events are the FailedScheduling messages recorded for the pod, newest last.
	Events []Event
}

// Event is a Kubernetes event about an object.
type Event struct {
	Reason  string
	Message string
	Source  string
	Count   int32
	// Last is when it was last seen (lastTimestamp, or eventTime), RFC 3339;
	// "" when not known.
	Last string
}

// CapacityKind tells the kinds of capacity apart.
type CapacityKind int

const (
	_ CapacityKind = iota
	KindNodeGroup
	KindFargate
	KindNodePool
	KindNode
	// KindUnseen is capacity the inputs declare, or must hold, that eksdoctor
	// cannot see into: its answer is always unknown.
	KindUnseen
)

func (k CapacityKind) String() string {
	switch k {
	case KindNodeGroup:
		return "node group"
	case KindFargate:
		return "Fargate profile"
	case KindNodePool:
		return "nodepool"
	case KindNode:
		return "node"
	case KindUnseen:
		return "capacity not seen"
	}
	return "unknown"
}

// UnseenCapacity is capacity eksdoctor cannot see into: node groups of a module
// version it does not model, a value known only after apply, capacity declared
// outside the inputs, v1alpha5 Provisioners. Placement on it is unknown, so a
// workload that fits nothing else is reported as not verified, never as failing.
type UnseenCapacity struct {
	// What names the capacity ("the node groups of module.eks").
	What string
	// Why it cannot be seen.
	Why    string
	Origin Origin
	// SteadyOnly marks capacity that exists only once Karpenter runs.
	SteadyOnly bool
	// Elsewhere marks the compute of a cluster whose inputs declare none: it is
	// defined in another configuration.
	Elsewhere bool
	// Karpenter marks NodePools the inputs do not hold: Karpenter launches
	// their nodes, so they never run the Karpenter controller itself, nor
	// anything while it cannot run.
	Karpenter bool
	// Outside marks capacity presumed to be defined outside the inputs,
	// rather than capacity they declare that cannot be seen into: a
	// configuration file declaring the cluster's capacity complete rules it
	// out.
	Outside bool
}

// NodeGroup is an EKS managed or self-managed node group (an eksctl nodeGroup, a
// terraform-aws-eks eks_managed_node_groups entry, an aws_eks_node_group).
type NodeGroup struct {
	Name    string
	Managed bool
	Labels  map[string]string
	Taints  []corev1.Taint
	// InstanceTypes lists the instance types the group launches; empty means the
	// provider's default (see DefaultInstanceType).
	InstanceTypes []string
	// Zones are the Availability Zones the group's nodes run in, when the
	// inputs say (eksctl availabilityZones); nil when not known.
	Zones       []string
	AMIType     string
	MinSize     int // -1 when unknown
	MaxSize     int
	DesiredSize int
	// NodeRole is the IAM role ARN (or an unknown placeholder) the nodes run with.
	NodeRole string
	// DiskBytes is the size of the volume that holds the nodes' ephemeral
	// storage (the root volume, Bottlerocket's data volume): 0 when it is the
	// AMI's default (20 GiB), -1 when it is not known before apply.
	DiskBytes int64
	// Unknown lists the fields whose value could not be resolved ("labels", "taints").
	Unknown []string
	Origin  Origin
	// Address is the Terraform address or eksctl path of the group.
	Address string
	// CreatedBy is the tool that creates it: "terraform", "eksctl", "cluster".
	CreatedBy string
	// Conditional is the count or for_each expression, not known before apply,
	// that decides whether it exists; "" when it certainly does.
	Conditional string
}

// DevicePlugin is a device plugin DaemonSet a tool installs by itself: a
// node advertises the plugin's extended resources only while the plugin runs
// on it.
type DevicePlugin struct {
	// Name and Namespace are the DaemonSet's.
	Name, Namespace string
	// Resources are the extended resources it advertises (nvidia.com/gpu).
	Resources []corev1.ResourceName
	// Tolerations are its pod template's tolerations.
	Tolerations []corev1.Toleration
	// Groups are the node groups whose nodes need it for those resources.
	Groups []*NodeGroup
	// InstalledBy is the tool that installs it ("eksctl").
	InstalledBy string
	// Earlier, when set, are the tolerations the tool's versions before
	// EarlierBefore gave it; a taint only the later ones tolerate depends on
	// the version in use, which no input states.
	Earlier       []corev1.Toleration
	EarlierBefore string
	Origin        Origin
}

// FargateProfile is an EKS Fargate profile.
type FargateProfile struct {
	Name             string
	Selectors        []FargateSelector
	PodExecutionRole string
	Unknown          []string
	Origin           Origin
	Address          string
	// Decl is how the profile is declared, for the writers of fixes.
	Decl Decl
	// Conditional is the count or for_each expression, not known before apply,
	// that decides whether it exists; "" when it certainly does.
	Conditional string
}

// FargateSelector selects pods by namespace and labels; both may use * and ?.
type FargateSelector struct {
	Namespace string
	Labels    map[string]string
	Origin    Origin
}

// NodeSelectorRequirement is a NodePool requirement (a node selector requirement
// with Karpenter's minValues).
type NodeSelectorRequirement struct {
	corev1.NodeSelectorRequirement
	MinValues *int
}

// NodeClassRef points a NodePool at its node class.
type NodeClassRef struct {
	Group string
	Kind  string
	Name  string
}

// NodePool is a Karpenter NodePool (v1 or v1beta1), or a v1alpha5 Provisioner
// (Karpenter v0.31 and earlier), read as the NodePool it became.
type NodePool struct {
	Object        *Object
	Name          string
	APIVersion    string
	Labels        map[string]string
	Taints        []corev1.Taint
	StartupTaints []corev1.Taint
	Requirements  []NodeSelectorRequirement
	Limits        corev1.ResourceList
	// InUse is what the NodePool's nodes already hold against its limits
	// (status.resources, which Karpenter keeps in a running cluster); nil
	// when not known.
	InUse corev1.ResourceList
	// Conditions are the NodePool's status conditions, which Karpenter keeps
	// in a running cluster (Ready, NodeClassReady, ValidationSucceeded, ...).
	Conditions   []Condition
	NodeClassRef NodeClassRef
	// InlineNodeClass marks a v1alpha5 Provisioner whose AWS settings are
	// written inline (spec.provider) rather than in a node class.
	InlineNodeClass bool
	Weight          int32
	// Unknown lists the fields not known before apply ("requirements",
	// "labels", "taints"): what is refused for them may fit.
	Unknown []string
}

// NodeClass is a Karpenter EC2NodeClass.
type NodeClass struct {
	Object     *Object
	Name       string
	APIVersion string
	// Role is spec.role; InstanceProfile is spec.instanceProfile. Either may be an
	// unknown placeholder.
	Role            string
	InstanceProfile string
	// InstanceProfileFrom says where InstanceProfile comes from when the
	// object does not write it (a v1alpha5 AWSNodeTemplate or Provisioner
	// takes the chart's default instance profile); "" when it does.
	InstanceProfileFrom string
	// Inline is set for the node class a v1alpha5 Provisioner writes inline
	// (spec.provider): Object is the Provisioner.
	Inline           bool
	AMIFamily        string
	AMISelectorTerms []map[string]any
	// DiskBytes is the size of the volume Karpenter sizes the nodes' ephemeral
	// storage by (blockDeviceMappings: the rootVolume one, or the AMI family's
	// device): 0 when the family's default (20 GiB), -1 when not known.
	// InstanceStoreRAID0 is spec.instanceStorePolicy RAID0: instance types with
	// local NVMe disks use them instead.
	DiskBytes          int64
	InstanceStoreRAID0 bool
	// Conditions are the class's status conditions, which Karpenter keeps in
	// a running cluster (Ready, SubnetsReady, SecurityGroupsReady, ...).
	Conditions []Condition
}

// AutoMode reports whether the class is an EKS Auto Mode NodeClass
// (eks.amazonaws.com).
func (nc *NodeClass) AutoMode() bool {
	return strings.HasPrefix(nc.APIVersion, "eks.amazonaws.com/")
}

// BuiltIn reports whether EKS itself creates the class (Auto Mode's default
// NodeClass, when built-in NodePools are enabled).
func (nc *NodeClass) BuiltIn() bool {
	return nc.Object != nil && nc.Object.Manager == ManagerEKS
}

// NodeClaim is a Karpenter NodeClaim (live).
type NodeClaim struct {
	Object       *Object
	Name         string
	NodePool     string
	NodeClassRef NodeClassRef
	ProviderID   string
	NodeName     string
	Conditions   []Condition
	Finalizers   []string
	Deleting     bool
}

// Condition is a status condition.
type Condition struct {
	Type               string
	Status             string
	Reason             string
	Message            string
	LastTransitionTime string // RFC 3339
}

// Node is a live node.
type Node struct {
	Object        *Object
	Name          string
	Labels        map[string]string
	Taints        []corev1.Taint
	Allocatable   corev1.ResourceList
	Unschedulable bool
	ProviderID    string
	Ready         bool
	Finalizers    []string
	Deleting      bool
}

// HelmRelease is a Helm release (Terraform helm_release, or a chart given on the
// command line).
type HelmRelease struct {
	Name       string
	Namespace  string
	Chart      string // chart name ("karpenter") or local path
	Repository string
	Version    string // chart version, "" when unpinned or unknown
	// Values are the merged values the user passes (values files, values blocks,
	// set blocks), before chart defaults.
	Values map[string]any
	// ValueOrigins maps a dotted values key to where the user set it.
	ValueOrigins map[string]Origin
	// Input, for a release a module creates from one of its inputs
	// (aws-ia/eks-blueprints-addons creates the Karpenter release from
	// var.karpenter), is that input: a change to the release's values is written
	// there.
	Input *ModuleInput
	// InstalledBy names the tool that installs the release with values of its
	// own ("eksctl's karpenter section"): the values are not the user's to
	// change, and fixes do not write them.
	InstalledBy string
	// Preset are the dotted values keys a module sets on the user's behalf when it
	// creates the release (aws-ia/eks-blueprints-addons sets the settings of
	// every Karpenter version at once): not the user's to fix.
	Preset []string
	// Parent, for the release of a dependency a wrapper chart declares, is the
	// key under which the wrapper's values reach it ("karpenter"): the user
	// writes the dependency's keys under it. Stray are the top-level keys of the
	// wrapper's values no chart receives, carried here (at the top level) so
	// that they are judged against the dependency's chart.
	Parent string
	Stray  []string
	// Decl is how the release is declared when a GitOps object declares it,
	// for the writers of fixes.
	Decl Decl
	// ChartDir is the chart on disk when it is local; ChartFiles are its files as
	// the loader read them (nil when they could not be read), the only thing
	// rendering looks at.
	ChartDir   string
	ChartFiles []File
	// Rendered reports whether the chart was rendered (local chart) rather than
	// described from the built-in knowledge base.
	Rendered bool
	// Wait is helm_release.wait; nil when not set (the provider default is true).
	Wait      *bool
	DependsOn []string
	Origin    Origin
	Address   string
	// Conditional is the count or for_each expression, not known before apply,
	// that decides whether it exists; "" when it certainly does.
	Conditional string
	// Unknown lists the values sources not known before apply ("values[0]",
	// "set"): the release may set anything there.
	Unknown []string
}

// ModuleInput is the input of a module call that declares something the module
// creates: the call's block (Origin), the input's name, and how it is written,
// so that a change keeps what the user wrote.
type ModuleInput struct {
	Module string // the module call address
	Name   string // the input ("karpenter")
	Origin Origin // the module block
	// Expr is the input's expression when it is not an object written in the
	// module block (karpenter = local.karpenter); "" when it is one, or unset.
	Expr string
	// Values are the documents of the input's values list as written, one
	// expression each; ValuesExpr is the whole values expression when it is not
	// written as a list.
	Values     []string
	ValuesExpr string
}

// File is a file read by a loader and kept for a later step (the files of a local
// chart, rendered once the model is complete).
type File struct {
	Name string
	Data []byte
}

// Addon is an EKS managed add-on.
type Addon struct {
	Name    string
	Version string // "" when the latest/default version is used
	// ConfigurationValues is the decoded configuration_values JSON; nil when unset.
	ConfigurationValues map[string]any
	// ConfigurationRaw is the configuration as written (HCL or JSON text).
	ConfigurationRaw string
	// BeforeCompute is terraform-aws-eks' before_compute: the add-on is created
	// before the node groups.
	BeforeCompute bool
	Origin        Origin
	Address       string
	// Decl is how the add-on is declared, for the writers of fixes.
	Decl Decl
	// Unknown lists fields that could not be resolved ("configuration_values").
	Unknown []string
	// Conditional is the count or for_each expression, not known before apply,
	// that decides whether it exists; "" when it certainly does.
	Conditional string
	// Implicit says who creates the add-on when the inputs do not declare it
	// ("EKS creates it with the cluster"); "" for a declared add-on.
	Implicit string
	// PodAnnotations are set on the add-on's pod templates after it is
	// created, by the tool that creates the cluster (eksctl moves CoreDNS to
	// Fargate when a profile selects it), with PatchedBy naming who does it.
	PodAnnotations map[string]string
	PatchedBy      string
}

// Live is what only a running cluster shows.
type Live struct {
	// Context is the kubeconfig context read; Server its API server URL.
	Context string
	Server  string
	// Namespace is the namespace the read was restricted to (kubectl's -n);
	// "" when every namespace was read. Namespaced objects outside it are
	// unknown, not absent.
	Namespace         string
	VolumeAttachments []VolumeAttachment
	PVCs              []*Object
	PVs               []*Object
	CSIDrivers        []string
	// Skipped lists the resources eksdoctor could not read, with why.
	Skipped []Skipped
	// Now is when the state was read (RFC 3339), the clock for age-based checks.
	Now string
}

// VolumeAttachment is a storage.k8s.io VolumeAttachment.
type VolumeAttachment struct {
	Object   *Object
	Name     string
	Attacher string
	NodeName string
	PV       string
	Attached bool
}

// Skipped records a resource the live source could not list.
type Skipped struct {
	Resource string
	Reason   string
}
