// Command eksdoctor-bench generates the large configuration the benchmarks use
// and times eksdoctor's stages on it:
//
//	eksdoctor-bench gen DIR      write the configuration (5,000 workloads, 50 NodePools, 20 node groups)
//	eksdoctor-bench parse DIR    read and decode every file, nothing else: the baseline, with
//	                             the same decoder and parallelism as `eksdoctor check`
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eksdoctor/eksdoctor/bench"
	"github.com/eksdoctor/eksdoctor/source/manifest"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: eksdoctor-bench gen|parse DIR")
		os.Exit(2)
	}
	dir := os.Args[2]
	switch os.Args[1] {
	case "gen":
		n, err := bench.Generate(dir, bench.Large)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("wrote %.1f MB to %s\n", float64(n)/1e6, dir)
	case "parse":
		start := time.Now()
		var files []string
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var objects atomic.Int64
		var wg sync.WaitGroup
		next := make(chan string)
		for i := 0; i < runtime.GOMAXPROCS(0); i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for p := range next {
					data, err := os.ReadFile(p)
					if err != nil {
						fmt.Fprintln(os.Stderr, err)
						os.Exit(1)
					}
					objs, _ := manifest.DecodeFile(p, data)
					objects.Add(int64(len(objs)))
				}
			}()
		}
		for _, f := range files {
			next <- f
		}
		close(next)
		wg.Wait()
		fmt.Printf("parsed %d objects in %s\n", objects.Load(), time.Since(start).Round(time.Millisecond))
	default:
		fmt.Fprintln(os.Stderr, "usage: eksdoctor-bench gen|parse DIR")
		os.Exit(2)
	}
}
