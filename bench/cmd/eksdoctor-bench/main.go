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
	"time"

	"github.com/eksdoctor/eksdoctor/bench"
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
		n, err := bench.Parse(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("parsed %d objects in %s\n", n, time.Since(start).Round(time.Millisecond))
	default:
		fmt.Fprintln(os.Stderr, "usage: eksdoctor-bench gen|parse DIR")
		os.Exit(2)
	}
}
