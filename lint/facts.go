package lint

import (
	"fmt"
	"strings"
	"sync"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
)

// A Fact is work several checks share: computed once per run, on first use,
// from the model, the simulator and the facts it declares in Fact.Requires,
// and read by every check that declares it in Check.Requires (as go/analysis
// analyzers declare Requires and read ResultOf). A fact's requirements are
// computed before it, in the order declared. Reading a fact one did not
// declare is a programming error, and so is a cycle of requirements: facts
// are package variables, so Go refuses to initialize two that require each
// other, and factOrder (run by RunAll and by a test over the registry) names
// any cycle made otherwise.
type Fact struct {
	Name string
	// Requires lists the facts this one is computed from (factOf).
	Requires []*Fact
	compute  func(*factPass) any
}

// factPass is what a fact's compute receives.
type factPass struct {
	Model *cluster.Model
	Sim   *sim.Simulator

	fact  *Fact
	store *factStore
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

// get computes a fact once, after the facts it requires.
func (fs *factStore) get(f *Fact) any {
	fs.mu.Lock()
	e := fs.entries[f]
	if e == nil {
		e = &factEntry{}
		fs.entries[f] = e
	}
	fs.mu.Unlock()
	e.once.Do(func() {
		for _, r := range f.Requires {
			fs.get(r)
		}
		e.v = f.compute(&factPass{Model: fs.m, Sim: fs.s, fact: f, store: fs})
	})
	return e.v
}

// resultOf returns a fact the running check declared it requires.
func resultOf[T any](p *Pass, f *Fact) T {
	if !requires(p.check.Requires, f) {
		panic(fmt.Sprintf("check %s reads fact %q without requiring it", p.check.ID, f.Name))
	}
	return p.facts.get(f).(T)
}

// factOf returns a fact the computing fact declared it requires.
func factOf[T any](fp *factPass, f *Fact) T {
	if !requires(fp.fact.Requires, f) {
		panic(fmt.Sprintf("fact %q reads fact %q without requiring it", fp.fact.Name, f.Name))
	}
	return fp.store.get(f).(T)
}

func requires(rs []*Fact, f *Fact) bool {
	for _, r := range rs {
		if r == f {
			return true
		}
	}
	return false
}

// factOrder lists every fact the checks require, each after the facts it
// requires (in the order declared), or fails naming a cycle.
func factOrder(checks []*Check) ([]*Fact, error) {
	const (
		visiting = 1
		done     = 2
	)
	state := map[*Fact]int{}
	var order []*Fact
	var path []*Fact
	var visit func(f *Fact) error
	visit = func(f *Fact) error {
		switch state[f] {
		case done:
			return nil
		case visiting:
			var names []string
			start := 0
			for i, g := range path {
				if g == f {
					start = i
				}
			}
			for _, g := range path[start:] {
				names = append(names, fmt.Sprintf("%q", g.Name))
			}
			names = append(names, fmt.Sprintf("%q", f.Name))
			return fmt.Errorf("facts require each other: %s", strings.Join(names, " requires "))
		}
		state[f] = visiting
		path = append(path, f)
		for _, r := range f.Requires {
			if err := visit(r); err != nil {
				return err
			}
		}
		path = path[:len(path)-1]
		state[f] = done
		order = append(order, f)
		return nil
	}
	for _, c := range checks {
		for _, f := range c.Requires {
			if err := visit(f); err != nil {
				return nil, fmt.Errorf("check %s: %w", c.ID, err)
			}
		}
	}
	return order, nil
}

// karpenterControllerFact is the state of the Karpenter controller in a running
// cluster.
var karpenterControllerFact = &Fact{
	Name: "Karpenter controller",
	compute: func(fp *factPass) any {
		return sim.KarpenterController(fp.Model)
	},
}
