package lint

import "github.com/eksdoctor/eksdoctor/cluster"

// An EKS add-on's version and configuration as the inputs give them.

// addonVersion is the version to describe an add-on at; "" (the newest known)
// when it is not pinned or not known before apply.
func addonVersion(a *cluster.Addon) string {
	if cluster.IsUnknown(a.Version) {
		return ""
	}
	return a.Version
}

// addonConfig is a copy of the add-on's configuration, empty when unset.
func addonConfig(a *cluster.Addon) map[string]any {
	if a.ConfigurationValues == nil {
		return map[string]any{}
	}
	return cluster.CopyJSON(a.ConfigurationValues).(map[string]any)
}
