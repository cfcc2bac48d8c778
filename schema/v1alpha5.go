package schema

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// The v1alpha5 Provisioner had no CRD validation to speak of: Karpenter's
// validating webhook (validation.webhook.karpenter.sh, part of every release that
// served v1alpha5) checked it, and refused the Provisioner on create or update.
// ValidateProvisioner applies the rules of that webhook
// (kubernetes-sigs/karpenter v0.21–v0.31, pkg/apis/v1alpha5/provisioner_validation.go)
// that decide whether the Provisioner exists at all.

// provisionerNameLabel is the label v1alpha5 nodes carry, restricted to
// Karpenter.
const provisionerNameLabel = "karpenter.sh/provisioner-name"

var provisionerOperators = map[string]bool{"In": true, "NotIn": true, "Exists": true, "DoesNotExist": true, "Gt": true, "Lt": true}

// ValidateProvisioner reports what Karpenter's webhook refuses in a
// karpenter.sh/v1alpha5 Provisioner; nil for any other object.
func ValidateProvisioner(obj *cluster.Object) []Violation {
	gvk, ok := objectGVK(obj)
	if !ok || gvk.kind != "Provisioner" || gvk.version != "v1alpha5" {
		return nil
	}
	spec, _ := obj.Get("spec").(map[string]any)
	var out []Violation
	add := func(path, format string, args ...any) {
		out = append(out, Violation{Path: path, Kind: Invalid, Message: fmt.Sprintf("%s: %s", path, fmt.Sprintf(format, args...)),
			Hint: "Karpenter's validating webhook refuses the Provisioner, so it is never created (kubectl apply and Terraform fail with \"admission webhook validation.webhook.karpenter.sh denied the request\")"})
	}
	_, provider := spec["provider"]
	_, ref := spec["providerRef"]
	switch {
	case provider && ref:
		add("spec", "expected exactly one, got both: provider, providerRef")
	case !provider && !ref:
		add("spec", "expected exactly one, got neither: provider, providerRef")
	}
	for _, f := range []string{"ttlSecondsAfterEmpty", "ttlSecondsUntilExpired"} {
		if n, ok := spec[f].(int64); ok && n < 0 {
			add("spec."+f, "invalid value: %d: cannot be negative", n)
		}
	}
	if enabled, _ := cluster.Lookup(spec, "consolidation.enabled").(bool); enabled {
		if _, ok := spec["ttlSecondsAfterEmpty"]; ok {
			add("spec", "expected exactly one, got both: ttlSecondsAfterEmpty, consolidation.enabled")
		}
	}
	labels, _ := spec["labels"].(map[string]any)
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == provisionerNameLabel {
			add("spec.labels", "invalid key name %q: restricted", k)
		}
	}
	reqs, _ := spec["requirements"].([]any)
	for i, r := range reqs {
		m, _ := r.(map[string]any)
		key, _ := m["key"].(string)
		op, _ := m["operator"].(string)
		values, _ := m["values"].([]any)
		path := fmt.Sprintf("spec.requirements.%d", i)
		if cluster.IsUnknown(key) || cluster.IsUnknown(op) {
			continue
		}
		if key == provisionerNameLabel {
			add(path, "invalid value: %s is restricted", key)
		}
		if !provisionerOperators[op] {
			add(path, "invalid value: key %s has an unsupported operator %s", key, op)
		}
		if op == "In" && len(values) == 0 {
			add(path, "invalid value: key %s with operator %s must have a value defined", key, op)
		}
		if op == "Gt" || op == "Lt" {
			ok := len(values) == 1
			if ok {
				s, _ := values[0].(string)
				n, err := strconv.Atoi(s)
				ok = err == nil && n >= 0
			}
			if !ok {
				add(path, "invalid value: key %s with operator %s must have a single positive integer value", key, op)
			}
		}
	}
	for _, f := range []string{"taints", "startupTaints"} {
		taints, _ := spec[f].([]any)
		for i, t := range taints {
			m, _ := t.(map[string]any)
			switch e, _ := m["effect"].(string); e {
			case "NoSchedule", "PreferNoSchedule", "NoExecute", "":
			default:
				if !cluster.IsUnknown(e) {
					add(fmt.Sprintf("spec.%s.%d.effect", f, i), "invalid value: %s", e)
				}
			}
		}
	}
	return out
}
