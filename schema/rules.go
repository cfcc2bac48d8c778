package schema

import (
	"fmt"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// removedKind reports the v1alpha5-era kinds, which no Karpenter release since v0.33
// serves (v0.32 served them beside v1beta1, to migrate).
func removedKind(gvk groupVersionKind) (Violation, bool) {
	replacement := map[string]string{
		"Provisioner":     "a NodePool (karpenter.sh/v1)",
		"Machine":         "a NodeClaim (karpenter.sh/v1), which Karpenter creates itself",
		"AWSNodeTemplate": "an EC2NodeClass (karpenter.k8s.aws/v1)",
	}
	r, ok := replacement[gvk.kind]
	if !ok || (gvk.version != "v1alpha5" && gvk.version != "v1alpha1") {
		return Violation{}, false
	}
	return Violation{
		Path:    "kind",
		Message: fmt.Sprintf("no matches for kind %q in version %q", gvk.kind, gvk.apiVersion()),
		Kind:    Removed,
		Hint: fmt.Sprintf("%s %s was removed in Karpenter v0.33: no release since serves it and nothing acts on it; rewrite it as %s",
			gvk.apiVersion(), gvk.kind, r),
		Move: MoveV1alpha5,
	}, true
}

// extraRules checks what the CRDs cannot express but Karpenter depends on.
func extraRules(gvk groupVersionKind, obj map[string]any) []Violation {
	var out []Violation
	if gvk.kind == "EC2NodeClass" {
		// The CRD accepts any non-empty string, but Karpenter hands the value to EC2 as
		// an instance profile name; an ARN fails every launch.
		if p, ok := lookupPath(obj, "spec.instanceProfile").(string); ok && strings.HasPrefix(p, "arn:") && !cluster.IsUnknown(p) {
			out = append(out, Violation{
				Path:     "spec.instanceProfile",
				Message:  fmt.Sprintf("spec.instanceProfile: Invalid value: %q: must be an instance profile name, not an ARN", p),
				Kind:     Invalid,
				Accepted: true,
				Hint: fmt.Sprintf("the API server accepts it, but Karpenter passes instanceProfile to EC2 as a name, so every launch fails; use instanceProfile: %s",
					instanceProfileName(p)),
			})
		}
	}
	return out
}

// instanceProfileName returns the name in an instance profile ARN
// (arn:aws:iam::111122223333:instance-profile/path/name → name).
func instanceProfileName(arn string) string {
	if i := strings.LastIndexByte(arn, '/'); i >= 0 {
		return arn[i+1:]
	}
	if i := strings.LastIndexByte(arn, ':'); i >= 0 {
		return arn[i+1:]
	}
	return arn
}
