package sim

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// A NodePool's node class says which of Karpenter's cloud providers launches
// its nodes, and so which instance types it can launch and which labels they
// carry. eksdoctor models Karpenter's AWS provider (its EC2 instance-type
// catalog and its labels). A NodePool whose node class belongs to another
// provider (kwok's KWOKNodeClass, Azure's AKSNodeClass, ...) is judged on what
// the NodePool itself says: its taints, requirements and labels, and limits it
// has already reached; what depends on its instance types is unknown, and said
// so, rather than judged against EC2's.

// awsNodeClassGroup is the API group of the AWS provider's node classes
// (EC2NodeClass, and the AWSNodeTemplate of v1alpha5 Provisioners).
const awsNodeClassGroup = "karpenter.k8s.aws"

// otherProvider is the API group of a NodePool's node class when it belongs
// to a provider eksdoctor does not model; "" for the AWS provider (a reference
// without a group is the AWS provider's: v1beta1 defaulted it).
func otherProvider(np *cluster.NodePool) string {
	if np.InlineNodeClass {
		return ""
	}
	return OtherProvider(np.NodeClassRef)
}

// OtherProvider is the API group of a node class reference when it names a
// provider eksdoctor does not model (karpenter.kwok.sh), "" for AWS's.
func OtherProvider(ref cluster.NodeClassRef) string {
	if g := ref.Group; g != "" && g != awsNodeClassGroup && g != autoModeGroup() {
		return g
	}
	return ""
}

// IsAutoMode reports whether a NodePool's nodes are EKS Auto Mode's: its node
// class is an eks.amazonaws.com NodeClass, which Auto Mode's Karpenter, run by
// AWS outside the cluster, acts on.
func IsAutoMode(np *cluster.NodePool) bool {
	return !np.InlineNodeClass && np.NodeClassRef.Group == autoModeGroup()
}

// unmodelledTypes words why a NodePool of another provider cannot be judged
// by its instance types.
func unmodelledTypes(np *cluster.NodePool) string {
	return fmt.Sprintf("the instance types of its node class %s %q (%s) are not known: eksdoctor models Karpenter's AWS provider only",
		kindOr(np.NodeClassRef.Kind), np.NodeClassRef.Name, np.NodeClassRef.Group)
}

// providerKey reports whether a label key belongs to a provider's own domain
// (karpenter.kwok.sh/instance-family for karpenter.kwok.sh): such a provider
// registers its keys as well-known, and which it registers is not known.
func providerKey(group, key string) bool {
	domain, _, ok := strings.Cut(key, "/")
	return ok && (domain == group || strings.HasSuffix(domain, "."+group))
}

// readiness is what a running cluster says of a NodePool: Karpenter ignores
// NodePools whose Ready condition is not True ("ignoring nodepool, not
// ready"). It returns why it is not Ready ("" when it is), and false when the
// NodePool has no Ready condition (files, or a NodePool not yet reconciled).
func readiness(np *cluster.NodePool) (string, bool) {
	var ready *cluster.Condition
	for i := range np.Conditions {
		if np.Conditions[i].Type == "Ready" {
			ready = &np.Conditions[i]
		}
	}
	if ready == nil {
		return "", false
	}
	if ready.Status == "True" {
		return "", true
	}
	// The conditions Ready is made of say more than Ready itself
	// ("UnhealthyDependents").
	var parts []string
	for _, c := range np.Conditions {
		if c.Type == "Ready" || c.Status == "True" || c.Type == "NodeRegistrationHealthy" {
			continue
		}
		parts = append(parts, c.String())
	}
	if len(parts) == 0 {
		parts = append(parts, ready.String())
	}
	return fmt.Sprintf("nodepool %q is not Ready (%s), and Karpenter ignores NodePools that are not Ready", np.Name, strings.Join(parts, "; ")), true
}

// notReadyCondition is readiness for a NodePool whose node class eksdoctor
// does not model: "" when Ready or not known.
func notReadyCondition(np *cluster.NodePool) string {
	why, _ := readiness(np)
	return why
}

// splitUnknown separates the requirement issues that refuse for certain from
// the first that could not be judged.
func splitUnknown(issues []keyIssue) ([]keyIssue, *Reason) {
	var sure []keyIssue
	var unknown *Reason
	for _, is := range issues {
		if !is.unknown {
			sure = append(sure, is)
			continue
		}
		if unknown == nil {
			unknown = &Reason{Code: CodeUnknownValue, Key: is.key, Message: is.message}
		}
	}
	return sure, unknown
}

// uncertain marks the reasons of a NodePool whose limits may word Karpenter's
// answer instead (another provider's limits with room left). A pod that asks
// for more than the limits leave is refused for certain: every instance type
// that holds it exceeds them.
func uncertain(np *cluster.NodePool, rs []Reason, remaining, req corev1.ResourceList) []Reason {
	out := make([]Reason, len(rs))
	copy(out, rs)
	for name, left := range remaining {
		if q, ok := req[name]; ok && q.Cmp(left) > 0 && out[0].Code == CodeUnknownValue {
			out[0] = Reason{Code: CodeLimits, Message: "all available instance types exceed limits for nodepool" + nodePoolField(np), Note: fmt.Sprintf("its limits leave %s %s, less than one pod asks (%s)", name, left.String(), q.String())}
		}
	}
	for i := range out {
		out[i].Uncertain = true
	}
	return out
}
