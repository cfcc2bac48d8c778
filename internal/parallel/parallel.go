// Package parallel runs independent pieces of work on every processor.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Each calls f(i) once for every i in [0, n), on as many goroutines as there
// are processors, each taking the next index when it is done with one (pieces
// of very different cost spread evenly). It returns when every call has.
func Each(n int, f func(i int)) { EachOf(n, runtime.GOMAXPROCS(0), f) }

// EachOf is Each on at most workers goroutines: for work that waits (requests
// to a server) rather than computes.
func EachOf(n, workers int, f func(i int)) {
	workers = min(workers, n)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}
