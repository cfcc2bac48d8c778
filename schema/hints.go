package schema

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"

	"github.com/eksdoctor/eksdoctor/internal/textmatch"
)

// hintContext is what explaining a violation may look at: the object as written, as
// the API server would store it, and the fields it defaulted.
type hintContext struct {
	gvk      groupVersionKind
	release  Release
	original map[string]any
	stored   map[string]any
	defaults map[string]any
}

// explain fills a violation's Hint (and Move) from what is known about the field.
func (h hintContext) explain(v *Violation) {
	if v.Hint != "" {
		return
	}
	if h.explainMove(v) {
		return
	}
	switch v.Kind {
	case UnknownField:
		v.Hint = h.unknownFieldHint(v.Path)
	case Invalid:
		v.Hint = h.ruleHint(v)
	}
}

func (h hintContext) explainMove(v *Violation) bool {
	kind := h.gvk.kind
	v1 := h.gvk.version == "v1"
	// NodeClaim fields sit directly under spec; NodePool's under spec.template.spec.
	tmpl := "spec.template.spec."
	if kind == "NodeClaim" {
		tmpl = "spec."
	}
	switch {
	case kind == "NodePool" && v1 && v.Kind == UnknownField && v.Path == "spec.template.spec.kubelet":
		v.Move = MoveKubelet
		v.Hint = fmt.Sprintf("kubelet moved to EC2NodeClass.spec.kubelet in Karpenter v1: the API server drops it from the NodePool without an error, "+
			"so these kubelet settings silently stop applying. Move the block to spec.kubelet of EC2NodeClass %q (spec.template.spec.nodeClassRef); "+
			"NodePools that share an EC2NodeClass share its kubelet settings, so give each distinct kubelet configuration its own EC2NodeClass",
			h.nodeClassName())
	case kind == "NodeClaim" && v1 && v.Kind == UnknownField && v.Path == "spec.kubelet":
		v.Move = MoveNodeClaimKubelet
		v.Hint = fmt.Sprintf("kubelet moved to EC2NodeClass.spec.kubelet in Karpenter v1: the API server drops it from the NodeClaim without an error; "+
			"set it on EC2NodeClass %q instead", h.nodeClassName())
	case kind == "NodePool" && v1 && v.Kind == UnknownField && v.Path == "spec.disruption.expireAfter":
		v.Move = MoveExpireAfter
		old := fmt.Sprint(lookupPath(h.original, "spec.disruption.expireAfter"))
		now := "720h"
		if d, ok := h.defaults["spec.template.spec.expireAfter"]; ok {
			now = fmt.Sprint(d)
		} else if s, ok := lookupPath(h.stored, "spec.template.spec.expireAfter").(string); ok {
			now = s
		}
		v.Hint = fmt.Sprintf("expireAfter moved to spec.template.spec.expireAfter in Karpenter v1: the API server drops it here, "+
			"and nodes expire after %s instead of %s. Move it: spec.template.spec.expireAfter: %s", now, old, old)
	case kind == "NodePool" && v1 && v.Kind == NotSupported && v.Path == "spec.disruption.consolidationPolicy" &&
		lookupPath(h.original, v.Path) == "WhenUnderutilized":
		v.Move = MoveConsolidation
		v.Hint = "consolidationPolicy WhenUnderutilized was renamed WhenEmptyOrUnderutilized in Karpenter v1; " +
			"set consolidationPolicy: WhenEmptyOrUnderutilized (and consolidateAfter, which v1 requires)"
	case kind == "NodePool" && v1 && v.Kind == Required && v.Path == "spec.disruption.consolidateAfter":
		v.Move = MoveConsolidateAfter
		v.Hint = "Karpenter v1 requires consolidateAfter with every consolidationPolicy (v1beta1 allowed it only with WhenEmpty); " +
			"consolidateAfter: 0s consolidates as soon as a node is empty or underutilized, as v1beta1's WhenUnderutilized did; " +
			"a longer duration such as 1m avoids churn from short-lived pods"
	case (kind == "NodePool" || kind == "NodeClaim") && v1 && v.Kind == Required &&
		(v.Path == tmpl+"nodeClassRef.group" || v.Path == tmpl+"nodeClassRef.kind"):
		v.Move = MoveNodeClassRef
		v.Hint = "Karpenter v1 requires nodeClassRef to name the class by group and kind (v1beta1 made them optional): " +
			"set group: karpenter.k8s.aws and kind: EC2NodeClass; both are immutable once the object exists"
	case (kind == "NodePool" || kind == "NodeClaim") && v1 && v.Kind == UnknownField && v.Path == tmpl+"nodeClassRef.apiVersion":
		v.Move = MoveNodeClassRef
		v.Hint = "Karpenter v1 names the class by group, not apiVersion: replace apiVersion with group: karpenter.k8s.aws (and kind: EC2NodeClass)"
	case kind == "EC2NodeClass" && v1 && v.Kind == Required && v.Path == "spec.amiSelectorTerms":
		v.Move = MoveAMISelectorTerms
		v.Hint = amiHint(lookupPath(h.original, "spec.amiFamily"))
	case kind == "EC2NodeClass" && v1 && v.Kind == NotSupported && v.Path == "spec.amiFamily" &&
		lookupPath(h.original, v.Path) == "Ubuntu":
		v.Move = MoveUbuntu
		v.Hint = "Karpenter v1 removed the Ubuntu AMI family: use amiFamily: Custom with amiSelectorTerms that select the Ubuntu AMIs and userData that joins the node, " +
			"or switch to amiSelectorTerms: [{alias: al2023@latest}]"
	default:
		return false
	}
	return true
}

// amiHint suggests the alias for the AMI family an EC2NodeClass uses.
func amiHint(family any) string {
	const base = "Karpenter v1 requires amiSelectorTerms; amiFamily alone no longer selects an AMI. "
	f, _ := family.(string)
	if alias, ok := familyAlias[f]; ok {
		hint := base + fmt.Sprintf("For the EKS-optimized %s AMI add amiSelectorTerms: [{alias: %s@latest}] "+
			"(amiFamily may then be omitted; pin a version instead of latest to control AMI rollouts)", f, alias)
		if f == "AL2" {
			hint += "; EKS publishes no AL2 AMIs for Kubernetes 1.33 and later, where al2023@latest is the successor"
		}
		return hint
	}
	switch f {
	case "Custom":
		return base + "amiFamily: Custom needs terms that select your AMIs (id, name, tags or ssmParameter)"
	case "":
		return base + "Add an alias for the family the nodes should run, e.g. amiSelectorTerms: [{alias: al2023@latest}] for the EKS-optimized Amazon Linux 2023 AMI"
	}
	return base + "Add terms that select your AMIs, or an alias such as amiSelectorTerms: [{alias: al2023@latest}]"
}

// familyAlias maps v1beta1 amiFamily values to the v1 alias family.
var familyAlias = map[string]string{
	"AL2":          "al2",
	"AL2023":       "al2023",
	"Bottlerocket": "bottlerocket",
	"Windows2019":  "windows2019",
	"Windows2022":  "windows2022",
	"Windows2025":  "windows2025",
}

// ruleHint explains the CEL rules and patterns users trip over most.
func (h hintContext) ruleHint(v *Violation) string {
	msg := v.Message
	switch {
	case strings.HasSuffix(v.Path, "nodeClassRef.group") && strings.Contains(fmt.Sprint(lookupPath(h.original, v.Path)), "/"):
		return "group is the API group alone, without a version: group: karpenter.k8s.aws"
	case strings.Contains(msg, "must specify exactly one of ['role', 'instanceProfile']"):
		return "set role (the node IAM role's name; Karpenter creates and manages an instance profile for it) or instanceProfile " +
			"(the name of an instance profile you manage), not both and not neither"
	case strings.Contains(msg, "must specify amiFamily if amiSelectorTerms does not contain an alias"):
		return "Karpenter generates the node's userData from amiFamily; with id, name, tags or ssmParameter terms it cannot tell the AMI's family: " +
			"set amiFamily to the family of the selected AMIs (AL2023, AL2, Bottlerocket, Windows2019/2022/2025, or Custom with your own userData), or select the AMI with an alias instead"
	case strings.Contains(msg, `label "kubernetes.io/hostname" is restricted`):
		return "a NodePool cannot set or require a hostname: Karpenter names nodes itself; to place pods on particular nodes use the pods' nodeSelector, affinity or topology spread"
	case strings.Contains(msg, `label "karpenter.sh/nodepool" is restricted`):
		return "Karpenter sets karpenter.sh/nodepool on every node it launches; to steer pods to this NodePool put karpenter.sh/nodepool: <name> in the pods' nodeSelector, not in the NodePool"
	case strings.Contains(msg, `label domain "karpenter.sh" is restricted`):
		return "the karpenter.sh label domain belongs to Karpenter; only the well-known karpenter.sh/capacity-type may be used in a NodePool. Use your own domain for custom labels"
	case strings.Contains(msg, `label domain "karpenter.k8s.aws" is restricted`):
		return "the karpenter.k8s.aws label domain belongs to Karpenter; only its well-known instance labels (instance-family, instance-category, instance-cpu, ...) may be used. Use your own domain for custom labels"
	case strings.Contains(msg, `label domain "kubernetes.io" is restricted`), strings.Contains(msg, `label domain "k8s.io" is restricted`):
		return "the kubernetes.io and k8s.io label domains are reserved for Kubernetes; only well-known labels (topology.kubernetes.io/zone, kubernetes.io/arch, node.kubernetes.io/instance-type, ...) and node-restriction.kubernetes.io/* may be used. Use your own domain for custom labels"
	}
	return ""
}

// unknownFieldHint explains a dropped field: the consequence, a likely typo, and
// whether another embedded release knows the field.
func (h hintContext) unknownFieldHint(path string) string {
	hint := "the API server drops unknown fields: kubectl apply (strict field validation) rejects the object, other clients " +
		"(Terraform providers, client libraries) get at most a warning and the setting silently has no effect"
	segs := strings.Split(path, ".")
	name := segs[len(segs)-1]
	if len(segs) == 2 && segs[0] == "metadata" {
		if guess := closest(name, objectMetaFields); guess != "" {
			hint += fmt.Sprintf("; did you mean %q?", guess)
		}
	} else if s, err := lookup(h.release, h.gvk); err == nil && s != nil {
		if parent := schemaAt(s.structural, segs[:len(segs)-1]); parent != nil {
			if guess := closest(name, propertyNames(parent)); guess != "" {
				hint += fmt.Sprintf("; did you mean %q?", guess)
			}
		}
	}
	for _, r := range Releases() {
		if releaseIndex(r) <= releaseIndex(h.release) {
			continue
		}
		if s, err := lookup(r, h.gvk); err == nil && s != nil && schemaAt(s.structural, segs) != nil {
			return hint + fmt.Sprintf("; the field exists in newer Karpenter CRDs, the %s ones: upgrade Karpenter and its CRDs, or remove it", releaseLabel(r))
		}
	}
	switch h.gvk.version {
	case "v1":
		old := h.gvk
		old.version = "v1beta1"
		if s, err := lookup(V0_37, old); err == nil && s != nil && schemaAt(s.structural, segs) != nil {
			return hint + fmt.Sprintf("; it is a %s field that %s removed", old.apiVersion(), h.gvk.apiVersion())
		}
	case "v1beta1":
		v1 := h.gvk
		v1.version = "v1"
		if s, err := lookup(Current, v1); err == nil && s != nil && schemaAt(s.structural, segs) != nil {
			return hint + fmt.Sprintf("; it is a %s field, which %s does not have: write the object as %s (Fix does the mechanical part)",
				v1.apiVersion(), h.gvk.apiVersion(), v1.apiVersion())
		}
	}
	return hint
}

func releaseIndex(r Release) int {
	for i, x := range Releases() {
		if x == r {
			return i
		}
	}
	return -1
}

// releaseLabel names a release in hints.
func releaseLabel(r Release) string {
	if r == Current {
		return "current (chart 1.14.1)"
	}
	return "Karpenter " + string(r)
}

// schemaAt walks a structural schema along dotted segments; list indexes step into
// items, other keys into properties or additionalProperties.
func schemaAt(s *structuralschema.Structural, segs []string) *structuralschema.Structural {
	for _, seg := range segs {
		if s == nil {
			return nil
		}
		if p, ok := s.Properties[seg]; ok {
			s = &p
			continue
		}
		if _, err := strconv.Atoi(seg); err == nil && s.Items != nil {
			s = s.Items
			continue
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
			s = s.AdditionalProperties.Structural
			continue
		}
		return nil
	}
	return s
}

// objectMetaFields are the fields of metadata a manifest may set; the CRDs leave
// metadata to the API server, so their schemas do not list them.
var objectMetaFields = []string{"annotations", "finalizers", "generateName", "labels", "name", "namespace", "ownerReferences"}

func propertyNames(s *structuralschema.Structural) []string {
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// closest returns the name a misspelt field most likely meant: the same name in
// another case, or one within two edits. keys must be sorted, so ties are stable.
func closest(name string, keys []string) string {
	best, bestD := "", 3
	for _, k := range keys {
		if strings.EqualFold(k, name) {
			return k
		}
		if d := textmatch.Distance(strings.ToLower(name), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// nodeClassName returns the EC2NodeClass a NodePool or NodeClaim refers to.
func (h hintContext) nodeClassName() string {
	for _, p := range []string{"spec.template.spec.nodeClassRef.name", "spec.nodeClassRef.name"} {
		if s, ok := lookupPath(h.original, p).(string); ok && s != "" {
			return s
		}
	}
	return "<nodeClassRef.name>"
}

// lookupPath reads a dotted path made of field names (no keys containing dots).
func lookupPath(v any, path string) any {
	got, _ := valueAt(v, strings.Split(path, "."))
	return got
}
