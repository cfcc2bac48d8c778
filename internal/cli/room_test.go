package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
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

// The limit follows the live heap after each collection, never below its
// floor, and no longer once stopped.
func TestPacerFollowsTheLiveHeap(t *testing.T) {
	if got := limitFor(30<<20, 500<<20, false); got != 500<<20 {
		t.Errorf("limitFor(30 MiB live, 500 MiB floor) = %d, want the floor", got)
	}
	if got, want := limitFor(200<<20, 300<<20, false), int64(584<<20); got != want {
		t.Errorf("limitFor(200 MiB live, 300 MiB floor) = %d, want %d (384 MiB of room)", got, want)
	}
	if got, want := limitFor(480<<20, 300<<20, false), int64(budget); got != want {
		t.Errorf("limitFor(480 MiB live) = %d, want %d (the budget)", got, want)
	}
	if got, want := limitFor(800<<20, 300<<20, false), int64(1000<<20); got != want {
		t.Errorf("limitFor(800 MiB live) = %d, want %d (a quarter past the budget)", got, want)
	}
	// A snapshot's room, given ahead, is the budget until the model outgrows it.
	if got, want := limitFor(700<<20, 935<<20, true), int64(935<<20); got != want {
		t.Errorf("limitFor(700 MiB live, 935 MiB floor given ahead) = %d, want the floor", got)
	}
	if got, want := limitFor(1000<<20, 935<<20, true), int64(1250<<20); got != want {
		t.Errorf("limitFor(1000 MiB live, 935 MiB floor given ahead) = %d, want %d", got, want)
	}

	set := make(chan int64, 100)
	p := startPacer(1<<20, func(n int64) { set <- n })
	defer p.stop()
	keep := make([][]byte, 64) // 64 MiB alive across the collection
	for i := range keep {
		keep[i] = make([]byte, 1<<20)
		keep[i][0] = 1
	}
	deadline := time.After(10 * time.Second)
	for {
		runtime.GC()
		select {
		case n := <-set:
			if n < 64<<20+minRoom {
				continue // an earlier collection's
			}
			runtime.KeepAlive(keep)
			if n > 100<<20+minRoom {
				t.Errorf("limit %d for 64 MiB alive", n)
			}
			limit := func() int64 {
				p.mu.Lock()
				defer p.mu.Unlock()
				return p.limit
			}
			p.raise(512 << 20)
			if l := limit(); l != 512<<20 {
				t.Errorf("raised floor: limit %d, want 512 MiB", l)
			}
			if p.afterGC(64 << 20); limit() != 512<<20 {
				t.Errorf("after a collection below the raised floor: limit %d, want 512 MiB", limit())
			}
			p.stop()
			if p.afterGC(1 << 30) {
				t.Error("a stopped pacer still follows")
			}
			return
		case <-deadline:
			t.Fatal("no limit set after a collection with 64 MiB alive")
		case <-time.After(100 * time.Millisecond):
		}
	}
}
