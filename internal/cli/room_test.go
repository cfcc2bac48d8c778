package cli

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// Only snapshots of 64 MiB or more get room in the soft memory limit: a
// configuration, whatever its size, keeps the limit that bounds what hostile
// input can make eksdoctor hold.
func TestRoomForSnapshotsOnly(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "snapshot.json")
	big := `{"kind": "EKSDoctorSnapshot", "version": 1, "objects": [` + strings.Repeat(`{"a": 1},`, 8<<20) + `{}]}`
	if err := os.WriteFile(snap, []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(manifest, []byte(strings.Repeat("---\n", 20<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	before := debug.SetMemoryLimit(300 << 20)
	defer debug.SetMemoryLimit(before)
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	env := &Env{Getenv: func(string) string { return "" }}

	roomFor(env, []string{manifest, dir})
	if got := debug.SetMemoryLimit(-1); got != 300<<20 {
		t.Errorf("a large configuration raised the limit to %d", got)
	}
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("a large configuration changed the GC percent to %d", got)
	}
	roomFor(env, []string{snap})
	if got, want := debug.SetMemoryLimit(-1), int64(roomPerByte*len(big)); got != want {
		t.Errorf("a %d-byte snapshot: limit %d, want %d", len(big), got, want)
	}
	if got := debug.SetGCPercent(100); got != -1 {
		t.Errorf("a large snapshot: GC percent %d, want -1 (collect at the limit only)", got)
	}
	debug.SetMemoryLimit(300 << 20)
	set := &Env{Getenv: func(string) string { return "1GiB" }}
	roomFor(set, []string{snap})
	if got := debug.SetMemoryLimit(-1); got != 300<<20 {
		t.Errorf("with GOMEMLIMIT set, the limit changed to %d", got)
	}
}
