package lint

import "sort"

// registry is every check, sorted by ID. Adding a check means adding it here.
var registry = []*Check{
	addonTolerationUnsupported,
	bootstrapDeadlock,
	controllerRoleAsNodeRole,
	disruptionDaemonSetEvicted,
	disruptionTolerationMissing,
	fargateProfileMismatch,
	fargateRoleUnauthorized,
	fargateUnsupported,
	finalizerStuck,
	helmValuesUnknown,
	inputUnresolved,
	invalidInput,
	karpenterSchema,
	liveResourceSkipped,
	nodeClaimNotRegistered,
	nodeRoleUnauthorized,
	podUnschedulable,
	teardownOrder,
	teardownOrphans,
	volumeAttachmentStale,
}

// Checks returns every check, sorted by ID.
func Checks() []*Check {
	out := append([]*Check(nil), registry...)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Lookup returns the check with an ID.
func Lookup(id string) (*Check, bool) {
	for _, c := range registry {
		if c.ID == id {
			return c, true
		}
	}
	return nil, false
}
