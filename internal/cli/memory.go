package cli

import (
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"

	"github.com/eksdoctor/eksdoctor/source/live"
)

// How eksdoctor uses memory, in one place.
//
// eksdoctor builds one model and keeps it to the end, so the Go default (collect
// whenever the heap doubles) spends a third of a large run marking the same
// objects again: collection runs when the heap triples (GOGC 200). A soft limit
// keeps the peak low: baseLimit at the start, then, after each collection,
// what was found alive plus room to collect seldom, within a budget
// (limitFor), so that a large configuration (50,000 workloads make about
// 240 MB of model, 510 MB while their placements are explained) is neither
// collected over and over against a limit it cannot meet nor let grow past
// 1 GB. Large snapshots get room beforehand (roomFor). GOGC and GOMEMLIMIT,
// when set, decide instead.
const baseLimit = 300 << 20

// TuneMemory sets the collection pace and soft memory limit of the program, as
// the environment allows. It returns a function that stops following the heap.
func TuneMemory(getenv func(string) string) (stop func()) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
	if getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	debug.SetMemoryLimit(baseLimit)
	memory.p = startPacer(baseLimit, func(n int64) { debug.SetMemoryLimit(n) })
	return memory.p.stop
}

// memory is the program's pacer, when TuneMemory started one.
var memory struct{ p *pacer }

// pacer raises the soft memory limit after each collection to follow the live
// heap, never below its floor.
type pacer struct {
	set func(int64)

	mu    sync.Mutex
	floor int64
	limit int64
	// ahead: the floor was raised for what the input is known to need
	// (roomFor), and is a budget that already holds room to collect seldom.
	ahead   bool
	stopped bool
}

func startPacer(floor int64, set func(int64)) *pacer {
	p := &pacer{set: set, floor: floor, limit: floor}
	p.arm()
	return p
}

// arm asks to be told of the next collection: a cleanup runs after the
// collection that frees its object, and arms the next one.
func (p *pacer) arm() {
	runtime.AddCleanup(new([16]byte), func(p *pacer) {
		if p.afterGC(liveHeap()) {
			p.arm()
		}
	}, p)
}

// afterGC sets the limit for a live heap; false once stopped.
func (p *pacer) afterGC(live int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return false
	}
	if want := limitFor(live, p.floor, p.ahead); want != p.limit {
		p.limit = want
		p.set(want)
	}
	return true
}

// raise lifts the floor (roomFor, for a large snapshot).
func (p *pacer) raise(floor int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if floor > p.floor {
		p.floor, p.ahead = floor, true
		if floor > p.limit {
			p.limit = floor
			p.set(floor)
		}
	}
}

func (p *pacer) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
}

// limitFor is the soft limit for a live heap: the floor, or the live heap
// and room to collect seldom — half the live heap, at least minRoom — when
// that is higher, up to budget. With less room, a limit just above what is
// alive makes every few megabytes allocated a collection of all of it, and a
// growing model is scanned hundreds of times instead of a few dozen. The room
// is larger than what is allocated between two collections: the heap's spans
// hold free slots the collector cannot hand back (a large configuration's
// model is decoded among the garbage of its YAML, about 200 MiB of them at
// 50,000 workloads). Past the budget, and for a floor raised ahead (roomFor),
// which already holds the room, the limit passes it only when the live heap
// does, by a quarter.
func limitFor(live, floor int64, ahead bool) int64 {
	if ahead {
		return max(floor, live+live/4)
	}
	return max(floor, min(live+max(live/2, minRoom), max(budget, live+live/4)))
}

const (
	minRoom = 384 << 20
	budget  = 850 << 20
)

// liveHeap is the heap the last collection found alive.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// roomFor raises the soft memory limit for large snapshots. A snapshot, which
// eksdoctor wrote from a cluster the user reads, gets room before it is read: a
// 100,000-pod cluster is about 85 MB of JSON and 650 MB of model and
// placements, and would otherwise spend half its time collecting garbage. The
// limit becomes roomPerByte times the size of the snapshots given, at most
// 4 GiB, when they add up to 64 MiB or more: the model and placements are
// seven to eight times the JSON, and the rest is what the collector needs to
// run seldom (a 100,000-pod snapshot stays under 1 GB). A configuration gets no room ahead:
// its size says nothing of what it makes (a hostile one of the same size is
// mostly refused), and the limit follows what it does make. GOMEMLIMIT, when
// set, decides instead.
func roomFor(env *Env, paths []string) {
	if _, set := lookupEnv(env, "GOMEMLIMIT"); set {
		return
	}
	var total int64
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || !snapshotFile(p) {
			continue
		}
		total += fi.Size()
	}
	if total < minRoomInput {
		return
	}
	if want := min(roomPerByte*total, maxRoom); want > debug.SetMemoryLimit(-1) {
		if memory.p != nil {
			memory.p.raise(want)
		} else {
			debug.SetMemoryLimit(want)
		}
		// The collector then runs only when the heap reaches the limit: a
		// snapshot's model is made once and kept to the end, so collecting
		// as the heap doubles would only scan it again and again.
		debug.SetGCPercent(-1)
	}
}

// snapshotFile reports whether a file starts as a snapshot does (its kind
// comes first).
func snapshotFile(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	return live.IsSnapshot(head[:n])
}

const (
	minRoomInput = 64 << 20
	roomPerByte  = 11
	maxRoom      = 4 << 30
)

// roomToAnalyseAgain gives serve room for its next analysis: serve keeps the
// cluster it follows and the latest analysis, and each analysis makes a new
// model beside them; against the limit that suits a single run (live heap
// plus a quarter to a half), a 100,000-pod cluster's analysis was collected
// a dozen times and took three to four times as long. The floor becomes twice
// the heap the last collection found alive, when that is higher. GOMEMLIMIT,
// when set, decides instead.
func roomToAnalyseAgain() {
	if memory.p != nil {
		memory.p.raise(2 * liveHeap())
	}
}
