package cli

import (
	"runtime"
	"testing"
)

// TestIdentityFromTheReleaseBuild: what the release build sets with -X is what
// version prints; without it the build information decides, and what nothing
// says is "unknown", never empty.
func TestIdentityFromTheReleaseBuild(t *testing.T) {
	t.Parallel()
	defer func(v, c, d string) { buildVersion, buildCommit, buildDate = v, c, d }(buildVersion, buildCommit, buildDate)

	buildVersion, buildCommit, buildDate = "v1.4.0", "0123abc", "2026-11-24T10:00:00Z"
	got := identity(&Env{}).String()
	want := "eksdoctor v1.4.0 (commit 0123abc, built 2026-11-24T10:00:00Z, " + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")"
	if got != want {
		t.Errorf("release build:\n got %s\nwant %s", got, want)
	}

	buildVersion, buildCommit, buildDate = "", "", ""
	id := identity(&Env{})
	if id.Version != "dev" {
		t.Errorf("a test binary has no module version: got %q, want dev", id.Version)
	}
	if id.Commit == "" || id.Date == "" {
		t.Errorf("empty fields: %+v", id)
	}
	if id := identity(&Env{Version: "v9"}); id.Version != "v9" {
		t.Errorf("Env.Version overrides: got %q", id.Version)
	}
}
