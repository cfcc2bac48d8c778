package schema

// Move is one change between Karpenter's v1beta1 and v1 APIs that breaks an object
// written for v1beta1. The table is data: checks cite it, the documentation renders
// it, and Fix applies the entries with a non-empty Fix.
type Move struct {
	// ID is stable; violations name the move they come from in Violation.Move.
	ID string
	// Kind is the kind the v1beta1 form is written on.
	Kind string
	// V1beta1 is the field or value as v1beta1 has it.
	V1beta1 string
	// V1 is where the setting lives in v1, or what v1 requires instead.
	V1 string
	// Effect is what the v1 API server does with the v1beta1 form.
	Effect string
	// Fix says what Fix does for this move; empty when the move needs a decision
	// Fix cannot make.
	Fix string
}

// The IDs of the moves.
const (
	MoveAPIVersion       = "api-version"
	MoveV1alpha5         = "v1alpha5-kinds"
	MoveKubelet          = "kubelet-to-ec2nodeclass"
	MoveNodeClaimKubelet = "nodeclaim-kubelet"
	MoveExpireAfter      = "expire-after"
	MoveConsolidation    = "consolidation-policy"
	MoveConsolidateAfter = "consolidate-after"
	MoveNodeClassRef     = "node-class-ref"
	MoveAMISelectorTerms = "ami-selector-terms"
	MoveUbuntu           = "ubuntu-family"
)

var moves = []Move{
	{
		ID:      MoveAPIVersion,
		Kind:    "NodePool, NodeClaim, EC2NodeClass",
		V1beta1: "apiVersion: karpenter.sh/v1beta1, karpenter.k8s.aws/v1beta1",
		V1:      "apiVersion: karpenter.sh/v1, karpenter.k8s.aws/v1",
		Effect:  "Karpenter 1.0 serves v1beta1 only through its conversion webhooks; Karpenter 1.1 removed v1beta1, so applying it fails with no matches for kind",
		Fix:     "sets the v1 apiVersion and applies the other moves",
	},
	{
		ID:      MoveV1alpha5,
		Kind:    "Provisioner, AWSNodeTemplate, Machine",
		V1beta1: "karpenter.sh/v1alpha5 Provisioner and Machine, karpenter.k8s.aws/v1alpha1 AWSNodeTemplate",
		V1:      "NodePool, EC2NodeClass and NodeClaim",
		Effect:  "removed in Karpenter v0.33: no release since serves these kinds, and nothing acts on them",
	},
	{
		ID:      MoveKubelet,
		Kind:    "NodePool",
		V1beta1: "NodePool spec.template.spec.kubelet",
		V1:      "EC2NodeClass spec.kubelet",
		Effect:  "the v1 NodePool has no kubelet field: the API server drops it without an error and the kubelet settings (maxPods, reserved resources, eviction thresholds) silently stop applying",
		Fix:     "removes the block from the NodePool and returns it as a patch for the EC2NodeClass named by nodeClassRef, keeping the fields v1beta1 applied",
	},
	{
		ID:      MoveNodeClaimKubelet,
		Kind:    "NodeClaim",
		V1beta1: "NodeClaim spec.kubelet",
		V1:      "EC2NodeClass spec.kubelet",
		Effect:  "the v1 NodeClaim has no kubelet field: the API server drops it without an error",
		Fix:     "removes the block from the NodeClaim and returns it as a patch for the EC2NodeClass named by nodeClassRef",
	},
	{
		ID:      MoveExpireAfter,
		Kind:    "NodePool",
		V1beta1: "spec.disruption.expireAfter",
		V1:      "spec.template.spec.expireAfter",
		Effect:  "the API server drops spec.disruption.expireAfter and defaults spec.template.spec.expireAfter to 720h: nodes expire after 30 days whatever the NodePool said",
		Fix:     "moves the value to spec.template.spec.expireAfter",
	},
	{
		ID:      MoveConsolidation,
		Kind:    "NodePool",
		V1beta1: "spec.disruption.consolidationPolicy: WhenUnderutilized",
		V1:      "spec.disruption.consolidationPolicy: WhenEmptyOrUnderutilized",
		Effect:  "the API server rejects the NodePool: Unsupported value",
		Fix:     "renames the policy",
	},
	{
		ID:      MoveConsolidateAfter,
		Kind:    "NodePool",
		V1beta1: "spec.disruption.consolidateAfter, allowed only with consolidationPolicy: WhenEmpty",
		V1:      "spec.disruption.consolidateAfter, required with both policies",
		Effect:  "the API server rejects a disruption block without it: spec.disruption.consolidateAfter: Required value",
		Fix:     "adds consolidateAfter: 0s, which keeps v1beta1's behaviour of consolidating as soon as a node is underutilized",
	},
	{
		ID:      MoveNodeClassRef,
		Kind:    "NodePool, NodeClaim",
		V1beta1: "nodeClassRef: {name} (apiVersion and kind optional)",
		V1:      "nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name} (all required and immutable)",
		Effect:  "the API server rejects the object: nodeClassRef.group and nodeClassRef.kind: Required value; nodeClassRef.apiVersion is dropped",
		Fix:     "sets group: karpenter.k8s.aws and kind: EC2NodeClass and removes apiVersion",
	},
	{
		ID:      MoveAMISelectorTerms,
		Kind:    "EC2NodeClass",
		V1beta1: "spec.amiFamily chooses the AMI; spec.amiSelectorTerms optional",
		V1:      "spec.amiSelectorTerms required; `- alias: <family>@<version>` selects the EKS-optimized AMI (amiFamily optional with an alias)",
		Effect:  "the API server rejects the EC2NodeClass: spec.amiSelectorTerms: Required value",
		Fix:     "adds `- alias: <family>@latest` for the amiFamily in use (AL2, AL2023, Bottlerocket, Windows2019, Windows2022); Custom needs explicit terms",
	},
	{
		ID:      MoveUbuntu,
		Kind:    "EC2NodeClass",
		V1beta1: "spec.amiFamily: Ubuntu",
		V1:      "no Ubuntu family: spec.amiFamily: Custom (or AL2) with amiSelectorTerms naming the Ubuntu AMIs and your own userData",
		Effect:  "the API server rejects the EC2NodeClass: Unsupported value",
	},
}

// Moves returns the v1beta1 → v1 moves, in the order the documentation shows them.
func Moves() []Move {
	out := make([]Move, len(moves))
	copy(out, moves)
	return out
}

// moveByID returns the move with an ID.
func moveByID(id string) (Move, bool) {
	for _, m := range moves {
		if m.ID == id {
			return m, true
		}
	}
	return Move{}, false
}
