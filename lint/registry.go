package lint

import (
	"fmt"
	"slices"
	"sort"

	"github.com/eksdoctor/eksdoctor/internal/textmatch"
)

// registry is every check, sorted by ID. Adding a check means adding it here.
var registry = []*Check{
	addonTolerationUnsupported,
	autoModeConfig,
	bootstrapDeadlock,
	controllerRoleAsNodeRole,
	disruptionBlocked,
	disruptionDaemonSetEvicted,
	disruptionTolerationMissing,
	duplicateObject,
	fargateProfileMismatch,
	fargateRoleUnauthorized,
	fargateUnsupported,
	finalizerStuck,
	helmValuesUnknown,
	inputUnresolved,
	invalidInput,
	karpenterSchema,
	liveResourceSkipped,
	moduleInputUnknown,
	nodeClaimNotInitialized,
	nodeClaimNotRegistered,
	nodeClassDiscoveryEmpty,
	nodeRoleUnauthorized,
	podUnschedulable,
	recreateOnChange,
	teardownOrder,
	teardownOrphans,
	storageProvisionerMissing,
	volumeAttachmentStale,
	volumeZoneConflict,
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

// Suggest is the check ID nearest a mistyped one (a few edits away, or one the
// mistyped ID is a part of), or "" when none is near.
func Suggest(id string) string {
	return textmatch.Nearest(id, ids)
}

// ids are the check IDs, sorted (read by checks themselves, which the
// registry holds: set once it is).
var ids []string

func init() {
	for _, c := range Checks() {
		ids = append(ids, c.ID)
	}
}

// UnknownCheck words an unknown check ID, with the ID it was probably meant to be.
func UnknownCheck(id string) string {
	msg := fmt.Sprintf("unknown check %q", id)
	if s := Suggest(id); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	} else {
		msg += " (eksdoctor checks lists them)"
	}
	return msg
}

// knownID reports whether an ID in an ignore annotation or comment names a
// check ("*" and "all" name them all).
func knownID(id string) bool {
	return slices.Contains(ids, id) || id == "*" || id == "all"
}
