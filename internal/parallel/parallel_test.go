package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"
)

func TestEachCallsEveryIndexOnce(t *testing.T) {
	t.Parallel()
	for _, procs := range []int{1, 4} {
		old := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 3, 1000} {
			calls := make([]atomic.Int32, n)
			Each(n, func(i int) { calls[i].Add(1) })
			EachOf(n, 8, func(i int) { calls[i].Add(1) })
			for i := range calls {
				if c := calls[i].Load(); c != 2 {
					t.Errorf("GOMAXPROCS %d, n %d: index %d called %d times, want once by each", procs, n, i, c)
				}
			}
		}
		runtime.GOMAXPROCS(old)
	}
}
