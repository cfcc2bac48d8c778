package lint

import (
	"fmt"
	"strings"
	"testing"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
)

func TestFactReadWithoutRequiringPanics(t *testing.T) {
	m := &cluster.Model{}
	c := &Check{ID: "reader"}
	p := &Pass{Model: m, check: c, facts: newFactStore(m, sim.New(m))}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "without requiring it") {
			t.Errorf("reading an undeclared fact: recover() = %v", r)
		}
	}()
	resultOf[sim.Controller](p, karpenterControllerFact)
}

func TestFactComputedOnce(t *testing.T) {
	m := &cluster.Model{}
	n := 0
	f := &Fact{Name: "counter", compute: func(*factPass) any { n++; return n }}
	c := &Check{ID: "reader", Requires: []*Fact{f}}
	store := newFactStore(m, sim.New(m))
	for range 3 {
		p := &Pass{Model: m, check: c, facts: store}
		if v := resultOf[int](p, f); v != 1 {
			t.Fatalf("fact = %d, want 1 (computed once)", v)
		}
	}
}

func TestFactRequirementsComputedFirst(t *testing.T) {
	m := &cluster.Model{}
	var order []string
	base := &Fact{Name: "base", compute: func(*factPass) any { order = append(order, "base"); return 2 }}
	other := &Fact{Name: "other", compute: func(*factPass) any { order = append(order, "other"); return 3 }}
	product := &Fact{Name: "product", Requires: []*Fact{other, base}, compute: func(fp *factPass) any {
		order = append(order, "product")
		return factOf[int](fp, base) * factOf[int](fp, other)
	}}
	c := &Check{ID: "reader", Requires: []*Fact{product, base}}
	p := &Pass{Model: m, check: c, facts: newFactStore(m, sim.New(m))}
	if v := resultOf[int](p, product); v != 6 {
		t.Errorf("product = %d, want 6", v)
	}
	if v := resultOf[int](p, base); v != 2 {
		t.Errorf("base = %d, want 2", v)
	}
	// Requirements first, in the order declared; each computed once.
	if got, want := strings.Join(order, " "), "other base product"; got != want {
		t.Errorf("computed %q, want %q", got, want)
	}
	got, err := factOrder([]*Check{c})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range got {
		names = append(names, f.Name)
	}
	if got, want := strings.Join(names, " "), "other base product"; got != want {
		t.Errorf("factOrder = %q, want %q", got, want)
	}
}

func TestFactReadingAnUndeclaredFactPanics(t *testing.T) {
	m := &cluster.Model{}
	base := &Fact{Name: "base", compute: func(*factPass) any { return 1 }}
	sneaky := &Fact{Name: "sneaky", compute: func(fp *factPass) any { return factOf[int](fp, base) }}
	c := &Check{ID: "reader", Requires: []*Fact{sneaky}}
	p := &Pass{Model: m, check: c, facts: newFactStore(m, sim.New(m))}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), `fact "sneaky" reads fact "base" without requiring it`) {
			t.Errorf("a fact reading an undeclared fact: recover() = %v", r)
		}
	}()
	resultOf[int](p, sneaky)
}

func TestFactCycleIsDetected(t *testing.T) {
	a := &Fact{Name: "a"}
	b := &Fact{Name: "b", Requires: []*Fact{a}}
	c := &Fact{Name: "c", Requires: []*Fact{b}}
	a.Requires = []*Fact{c}
	_, err := factOrder([]*Check{{ID: "reader", Requires: []*Fact{b}}})
	if err == nil || !strings.Contains(err.Error(), `"b" requires "a" requires "c" requires "b"`) {
		t.Errorf("factOrder over a cycle: err = %v", err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "facts require each other") {
			t.Errorf("RunAll over a cycle: recover() = %v", r)
		}
	}()
	m := &cluster.Model{}
	RunAll(m, sim.New(m), []*Check{{ID: "reader", Requires: []*Fact{b}, Run: func(*Pass) {}}})
}

func TestRegisteredFactsFormNoCycle(t *testing.T) {
	order, err := factOrder(registry)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[*Fact]bool{}
	for _, f := range order {
		for _, r := range f.Requires {
			if !seen[r] {
				t.Errorf("fact %q is ordered before %q, which it requires", f.Name, r.Name)
			}
		}
		seen[f] = true
	}
	if !seen[karpenterControllerFact] {
		t.Errorf("factOrder(registry) misses %q, which %q requires", karpenterControllerFact.Name, livePendingFact.Name)
	}
}
