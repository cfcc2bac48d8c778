package lint

import (
	"fmt"
	"sync"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
)

// A Fact is work several checks share: computed once per run, on first use,
// from the model, the simulator and other facts, and read by every check that
// declares it in Check.Requires (as go/analysis passes declare Requires and
// read ResultOf). A check reading a fact it did not declare is a programming
// error.
type Fact struct {
	Name    string
	compute func(*factStore) any
}

// factStore holds the facts of one run.
type factStore struct {
	m *cluster.Model
	s *sim.Simulator

	mu      sync.Mutex
	entries map[*Fact]*factEntry
}

type factEntry struct {
	once sync.Once
	v    any
}

func newFactStore(m *cluster.Model, s *sim.Simulator) *factStore {
	return &factStore{m: m, s: s, entries: map[*Fact]*factEntry{}}
}

func (fs *factStore) get(f *Fact) any {
	fs.mu.Lock()
	e := fs.entries[f]
	if e == nil {
		e = &factEntry{}
		fs.entries[f] = e
	}
	fs.mu.Unlock()
	e.once.Do(func() { e.v = f.compute(fs) })
	return e.v
}

// resultOf returns a fact the running check declared it requires.
func resultOf[T any](p *Pass, f *Fact) T {
	declared := false
	for _, r := range p.check.Requires {
		if r == f {
			declared = true
		}
	}
	if !declared {
		panic(fmt.Sprintf("check %s reads fact %q without requiring it", p.check.ID, f.Name))
	}
	return p.facts.get(f).(T)
}

// karpenterControllerFact is the state of the Karpenter controller in a running
// cluster.
var karpenterControllerFact = &Fact{
	Name: "Karpenter controller",
	compute: func(fs *factStore) any {
		return sim.KarpenterController(fs.m)
	},
}
