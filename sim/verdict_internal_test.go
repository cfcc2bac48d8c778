package sim

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// sortVerdicts orders as a stable sort by kind, then name, does: for the runs
// placement appends (Fargate, node groups, nodes, unseen, NodePools), for many
// short runs and for names out of order, equal names keeping their order.
func TestSortVerdictsIsStableByKindAndName(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	kinds := []cluster.CapacityKind{cluster.KindFargate, cluster.KindNodeGroup, cluster.KindNode, cluster.KindUnseen, cluster.KindNodePool}
	for trial := range 300 {
		var vs []Verdict
		for _, k := range kinds {
			n := r.IntN(6)
			if trial%3 == 0 {
				n = r.IntN(40)
			}
			for i := range n {
				name := fmt.Sprintf("%s-%03d", k, i)
				if trial%2 == 1 {
					name = fmt.Sprintf("%s-%03d", k, r.IntN(5))
				}
				vs = append(vs, Verdict{Source: &Source{Kind: k, Name: name}, Result: Result(len(vs))})
			}
		}
		if trial%5 == 4 {
			// Many short runs: kinds interleaved.
			r.Shuffle(len(vs), func(i, j int) { vs[i], vs[j] = vs[j], vs[i] })
		}
		want := slices.Clone(vs)
		slices.SortStableFunc(want, func(a, b Verdict) int {
			return cmp.Or(cmp.Compare(a.Source.Kind, b.Source.Kind), strings.Compare(a.Source.Name, b.Source.Name))
		})
		sortVerdicts(vs)
		for i := range vs {
			if vs[i].Source != want[i].Source || vs[i].Result != want[i].Result {
				t.Fatalf("trial %d: at %d got %v %q (%d), want %v %q (%d)", trial, i, vs[i].Source.Kind, vs[i].Source.Name, vs[i].Result, want[i].Source.Kind, want[i].Source.Name, want[i].Result)
			}
		}
	}
}
