package lint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/write"
)

var addonTolerationUnsupported = &Check{
	ID:       "addon-toleration-unsupported",
	Title:    "EKS add-on version cannot be configured with what its pods need",
	Family:   "F1",
	Severity: Error,
	Doc: Doc{
		What: "A workload an EKS add-on installs needs tolerations (or a node selector or affinity) to run on the capacity meant for it, and the add-on version's configuration schema does not accept that key: the EBS CSI driver's `controller.tolerations` before `v1.14.0-eksbuild.1`, CoreDNS `tolerations` before `v1.9.3-eksbuild.3`, kube-proxy, snapshot-controller and the Mountpoint for S3 controller, which accept no tolerations. It also reports a `configuration_values` that already sets a key the version rejects. When the knowledge base cannot tell whether the version accepts the key, it says so as info.",
		Why:  "EKS validates `configuration_values` against the add-on version's JSON schema and fails `CreateAddon`/`UpdateAddon` with `InvalidParameterException` for a key it does not know, so the configuration that would let the pods tolerate the node group's taint cannot be applied: the pods stay Pending, and `terraform apply` waits for the add-on until it times out.",
		Fix:  "Upgrade the add-on to the first version whose schema accepts the key (the finding names it; the proposed fix sets `addon_version` and the configuration, keeping the add-on's default tolerations), install the component with its Helm chart instead of the add-on, or do not taint the node group the pods must run on.",
	},
	Run:      runAddonTolerationUnsupported,
	Requires: []*Fact{podsFact},
}

func runAddonTolerationUnsupported(p *Pass) {
	rejected := map[*cluster.Addon]map[string]bool{}
	for _, a := range p.Model.Addons {
		rejected[a] = reportRejectedConfig(p, a)
	}
	// What the pods lack is what pod-unschedulable and bootstrap-deadlock
	// decide, and their fixes would tolerate.
	decided := resultOf[map[*cluster.Workload]*podsDecision](p, podsFact)
	for _, w := range p.Model.Workloads {
		a := w.Addon
		d := decided[w]
		if a == nil || w.Replicas == 0 || d == nil || d.need == nil {
			continue
		}
		need := *d.need
		kb, ok := catalog.AddonFor(a.Name, addonVersion(a))
		if !ok {
			continue
		}
		comp, ok := componentOf(kb.Component, w)
		if !ok {
			continue
		}
		c, _, ok := tolerationChange(w, need.taints)
		if !ok {
			continue
		}
		key := componentKey(comp, c.Field)
		if rejected[a][key] {
			// The configuration already sets the key: reported with the
			// configuration above.
			continue
		}
		switch kb.Accepts(key) {
		case catalog.AddonRejected:
			reportUnsupportedKey(p, w, kb, key, c, need)
		case catalog.AddonUnverified:
			p.Report(Finding{
				Severity: Info,
				Object:   w.Ref(),
				Origin:   a.Origin,
				Summary:  fmt.Sprintf("%s needs %s in the configuration of EKS add-on %s %s; could not verify that the version's schema accepts it", w.Ref(), key, a.Name, kb.Version),
				Detail:   fmt.Sprintf("%s\nThe knowledge base does not say whether add-on %s %s accepts %s in configuration_values; EKS fails the apply with InvalidParameterException for keys its schema lacks (aws eks describe-addon-configuration --addon-name %s --addon-version %s shows the schema).", need.verdict.Line(), a.Name, kb.Version, key, a.Name, kb.Version),
				causes:   []string{podsCause(w.Ref())},
			})
		}
	}
}

func reportUnsupportedKey(p *Pass, w *cluster.Workload, kb *catalog.Addon, key string, c PodChange, n podsNeed) {
	a := w.Addon
	src := describeSource(n.verdict.Source)
	var taints []string
	for _, t := range n.taints {
		taints = append(taints, sim.TaintText(t))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "In the %s phase %s refuses the pods only for its taints: %s.\n", n.phase, src, n.verdict.Reasons[0].Text())
	fmt.Fprintf(&b, "Tolerating %s takes %s in the add-on's configuration_values, and add-on %s %s does not accept that key: EKS fails CreateAddon/UpdateAddon with InvalidParameterException.", strings.Join(taints, ", "), key, a.Name, kb.Version)
	upgrade, canUpgrade := catalog.AddonUpgrade(a.Name, kb.Version, key)
	b.WriteString("\nWays out:")
	if canUpgrade {
		fmt.Fprintf(&b, "\n  - upgrade the add-on to %s, the first version whose configuration schema accepts %s (or a later one that supports the cluster's Kubernetes version), and set it;", upgrade, key)
	} else {
		fmt.Fprintf(&b, "\n  - no known version of the add-on accepts %s;", key)
	}
	fmt.Fprintf(&b, "\n  - install %s with its Helm chart instead of the EKS add-on: the chart's values set the tolerations of %s;", a.Name, w.Object.Name)
	fmt.Fprintf(&b, "\n  - or do not taint %s, so the pods can run there as they are.", src)
	f := Finding{
		Object:  w.Ref(),
		Origin:  a.Origin,
		Summary: fmt.Sprintf("%s needs to tolerate %s to run on %s, and EKS add-on %s %s does not accept %s in its configuration", w.Ref(), strings.Join(taints, ", "), src, a.Name, kb.Version, key),
		Detail:  b.String(),
		causes:  []string{podsCause(w.Ref())},
	}
	if canUpgrade {
		f.Fix = upgradeFix(p.Model, w, upgrade, c)
	}
	p.Report(f)
}

// upgradeFix upgrades the add-on to a version that accepts the change and
// configures it there.
func upgradeFix(m *cluster.Model, w *cluster.Workload, version string, c PodChange) *Fix {
	a := w.Addon
	kb, ok := catalog.AddonFor(a.Name, version)
	if !ok || slices.Contains(a.Unknown, "configuration_values") {
		return nil
	}
	comp, ok := componentOf(kb.Component, w)
	if !ok {
		return nil
	}
	key := componentKey(comp, c.Field)
	config := addonConfig(a)
	value, ok := changedValue(config, kb.DefaultValues(), key, c)
	if !ok {
		return nil
	}
	setPath(config, key, value)
	e, ok := write.Addon(m, a, version, config)
	if !ok {
		return nil
	}
	return &Fix{Summary: fmt.Sprintf("upgrade EKS add-on %s to %s and set %s in its configuration (keeping the add-on's defaults)", a.Name, version, key), Edits: []Edit{e}}
}

// reportRejectedConfig reports a configuration_values with keys the add-on
// version rejects and returns those keys.
func reportRejectedConfig(p *Pass, a *cluster.Addon) map[string]bool {
	if len(a.ConfigurationValues) == 0 {
		return nil
	}
	kb, ok := catalog.AddonFor(a.Name, addonVersion(a))
	if !ok {
		return nil
	}
	var keys []string
	for _, v := range kb.CheckConfig(a.ConfigurationValues) {
		if v.Acceptance == catalog.AddonRejected {
			keys = append(keys, v.Key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	out := map[string]bool{}
	for _, k := range keys {
		out[k] = true
	}
	f := Finding{
		Object:  addonRef(a),
		Origin:  a.Origin,
		Summary: fmt.Sprintf("EKS add-on %s %s rejects its configuration_values: the version's schema has no %s", a.Name, kb.Version, strings.Join(keys, ", ")),
		Detail:  "EKS validates configuration_values against the JSON schema of the add-on version and fails CreateAddon/UpdateAddon with InvalidParameterException for keys it does not know, so terraform apply (or eksctl) fails on this add-on. The rest of the analysis describes the add-on without these keys.",
	}
	if kb.Assumed != "" {
		f.Detail += "\nThe version is not pinned; " + kb.Assumed + "."
	}
	if v, ok := catalog.AddonUpgrade(a.Name, kb.Version, keys...); ok {
		if e, ok := write.Addon(p.Model, a, v, addonConfig(a)); ok {
			f.Fix = &Fix{Summary: fmt.Sprintf("upgrade EKS add-on %s to %s, the first version whose schema accepts %s", a.Name, v, strings.Join(keys, ", ")), Edits: []Edit{e}}
		}
	} else {
		config := addonConfig(a)
		for _, k := range keys {
			deletePath(config, k)
		}
		if e, ok := write.Addon(p.Model, a, "", config); ok {
			f.Fix = &Fix{Summary: fmt.Sprintf("remove %s from the configuration: no known version of add-on %s accepts it", strings.Join(keys, ", "), a.Name), Edits: []Edit{e}}
		}
	}
	p.Report(f)
	return out
}

func addonRef(a *cluster.Addon) cluster.ObjectRef {
	return cluster.ObjectRef{Kind: "Addon", Name: a.Name}
}

// ---- the add-on configuration as a fix format ----

// addonFieldEdit renders a pod spec change of a workload an EKS add-on installs
// as the add-on's configuration, at the key of the add-on component. The whole
// configuration is rewritten (configuration_values is one JSON document): the
// user's keys are kept, and list items are appended to the list the add-on
// renders today (the user's, else the add-on's default, which a list in the
// configuration replaces). ok is false when the version rejects the key or the
// configuration is not known before apply.
func addonFieldEdit(m *cluster.Model, w *cluster.Workload, c PodChange) (Edit, string, bool) {
	a := w.Addon
	if a == nil || slices.Contains(a.Unknown, "configuration_values") {
		return Edit{}, "", false
	}
	kb, ok := catalog.AddonFor(a.Name, addonVersion(a))
	if !ok {
		return Edit{}, "", false
	}
	comp, ok := componentOf(kb.Component, w)
	if !ok {
		return Edit{}, "", false
	}
	key := componentKey(comp, c.Field)
	accepts := kb.Accepts(key)
	if accepts == catalog.AddonRejected {
		return Edit{}, "", false
	}
	config := addonConfig(a)
	value, ok := changedValue(config, kb.DefaultValues(), key, c)
	if !ok {
		return Edit{}, "", false
	}
	setPath(config, key, value)
	e, ok := write.Addon(m, a, "", config)
	if !ok {
		return Edit{}, "", false
	}
	where := fmt.Sprintf("%s in the add-on configuration of %s", key, a.Name)
	if c.Added != nil && cluster.Lookup(a.ConfigurationValues, key) == nil && cluster.Lookup(kb.DefaultValues(), key) != nil {
		where += " (the list replaces the add-on's default, so it keeps the default items)"
	}
	if accepts == catalog.AddonUnverified {
		where += fmt.Sprintf("; eksdoctor does not know the configuration schema of %s %s: check that the version accepts %s (aws eks describe-addon-configuration)", a.Name, orUnpinned(addonVersion(a)), key)
	}
	return e, where, true
}

// orUnpinned is a version, or says there is none.
func orUnpinned(v string) string {
	if v == "" {
		return "(version not pinned)"
	}
	return v
}
