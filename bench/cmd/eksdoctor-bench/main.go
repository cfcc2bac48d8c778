// Command eksdoctor-bench generates the large configuration the benchmarks use
// and times eksdoctor's stages on it, and measures eksdoctor on hostile inputs:
//
//	eksdoctor-bench gen DIR [huge]   write the configuration (5,000 workloads, 50 NodePools, 20 node
//	                                 groups, 10 DaemonSets; huge: 50,000, 500 NodePools, 30 DaemonSets)
//	eksdoctor-bench parse DIR        read and decode every file, nothing else: the baseline, with
//	                                 the same decoder and parallelism as `eksdoctor check`
//	eksdoctor-bench static BIN DIR   run `BIN check DIR` and, beside it, `eksdoctor-bench parse DIR`
//	                                 (the parse-only floor); print wall time, peak RSS and their
//	                                 ratio, median of five runs each
//	eksdoctor-bench snapshot FILE [large|huge] [SHAPE]
//	                                 write a running cluster's snapshot: 10,000 pods on 500
//	                                 nodes and 20 NodePools, or 100,000 / 5,000 / 200, or
//	                                 1,000,000 / 100,000 / 1,000; SHAPE is uniform or words
//	                                 joined by "-": thin spreads the Pending pods over 300
//	                                 workloads selecting their NodePool by name, unique gives
//	                                 every node its own type, zone and usage, pools five times
//	                                 the NodePools, sparse twice the nodes and half the DaemonSets
//	eksdoctor-bench live BIN FILE    run `BIN check FILE` and, beside it, Python's json.load of
//	                                 the same file (the parse-only floor); print wall time,
//	                                 peak RSS and their ratio, median of five runs each
//	eksdoctor-bench cluster BIN [large] [SHAPE]
//	                                 start a real kube-apiserver and etcd (the test setup's;
//	                                 KUBEBUILDER_ASSETS is used when set), create in it the
//	                                 objects of a generated snapshot (10,000 pods, or 100,000),
//	                                 then time `BIN cluster` beside `BIN snapshot` (the same
//	                                 reads, no analysis: the floor), median of five runs each
//	eksdoctor-bench churn BIN [large] [SHAPE] [DURATION] [N/min]
//	                                 fill a real API server as cluster does, start `BIN serve` on
//	                                 it and change its pods N times a minute (1000) for DURATION
//	                                 (30m): most relabelled, every tenth deleted and created again;
//	                                 print the time of the analyses that followed changes
//	                                 (median, 95th percentile, most), serve's memory after five
//	                                 minutes and at the end, and its read errors
//	eksdoctor-bench hostile BIN [CASE...]
//	                                 run the eksdoctor binary BIN on every hostile input (or the
//	                                 named ones) and on examples/broken, and print wall time and
//	                                 peak memory of each run
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/eksdoctor/eksdoctor/bench"
	"github.com/eksdoctor/eksdoctor/internal/hostile"
	"github.com/eksdoctor/eksdoctor/internal/testenv"
)

const usage = "usage: eksdoctor-bench gen|parse DIR | static BIN DIR | snapshot FILE [large|huge] [SHAPE] | live BIN FILE | cluster BIN [large] [SHAPE] | churn BIN [large] [SHAPE] [DURATION] [N/min] | hostile BIN [CASE...]"

func main() {
	hostile.Launch()
	err := errUsage
	if len(os.Args) >= 3 {
		err = run(os.Args[1], os.Args[2:])
	}
	switch {
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

// run runs one command; args has at least its first argument.
func run(cmd string, args []string) error {
	dir := args[0]
	// second is the optional second argument ("huge", "large").
	second := func(word string) bool { return len(args) > 1 && args[1] == word }
	switch cmd {
	case "gen":
		o := bench.Large
		if second("huge") {
			o = bench.Huge
		}
		n, err := bench.Generate(dir, o)
		if err != nil {
			return err
		}
		fmt.Printf("wrote %.1f MB to %s\n", float64(n)/1e6, dir)
	case "parse":
		start := time.Now()
		n, err := bench.Parse(dir)
		if err != nil {
			return err
		}
		fmt.Printf("parsed %d objects in %s\n", n, time.Since(start).Round(time.Millisecond))
	case "snapshot":
		o, err := snapshotOptions(args[1:])
		if err != nil {
			return err
		}
		n, err := bench.GenerateSnapshot(dir, o)
		if err != nil {
			return err
		}
		fmt.Printf("wrote %.1f MB to %s (%d pods, %d nodes, %d NodePools)\n", float64(n)/1e6, dir, o.Pods, o.Nodes, o.NodePools)
	case "live":
		if len(args) < 2 {
			return errUsage
		}
		return runLive(args[0], args[1])
	case "static":
		if len(args) < 2 {
			return errUsage
		}
		return runStatic(args[0], args[1])
	case "cluster":
		o, err := snapshotOptions(args[1:])
		if err != nil {
			return err
		}
		return runCluster(args[0], o)
	case "churn":
		return runChurn(args[0], args[1:])
	case "hostile":
		return runHostile(args[0], args[1:])
	default:
		return errUsage
	}
	return nil
}

// snapshotOptions reads a snapshot's size (medium, the default, large or huge)
// and shape (uniform, the default, or shape words joined by "-", as
// SnapshotOptions.Shape reads them), in either order.
func snapshotOptions(args []string) (bench.SnapshotOptions, error) {
	o, shape := bench.SnapshotMedium, ""
	for _, a := range args {
		switch a {
		case "medium":
			o = bench.SnapshotMedium
		case "large":
			o = bench.SnapshotLarge
		case "huge":
			o = bench.SnapshotHuge
		default:
			if shape != "" {
				return o, errUsage
			}
			shape = a
		}
	}
	return o.Shape(shape)
}

// runHostile runs the binary on each case, once per output format, and prints the
// slowest and largest run of each beside a normal run.
func runHostile(bin string, names []string) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	examples, err := filepath.Abs("examples/broken")
	if err != nil {
		return err
	}
	normal, err := hostile.Run(bin, os.TempDir(), []string{"check", examples}, false, 2*time.Minute)
	if err != nil {
		return err
	}
	fmt.Printf("%-22s %8s %9s  %s\n", "case", "wall", "peak RSS", "exit")
	fmt.Printf("%-22s %8s %6d MiB  %d\n", "(examples/broken)", normal.Wall.Round(time.Millisecond), normal.MaxRSS>>20, normal.ExitCode)
	for _, c := range hostile.Cases() {
		if len(names) > 0 && !slices.Contains(names, c.Name) {
			continue
		}
		dir, err := hostile.Prepare(c)
		if err != nil {
			hostile.Cleanup(dir)
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		var worst hostile.Result
		for _, format := range c.Outputs() {
			r, err := hostile.Run(bin, dir, append(append([]string(nil), c.Args...), "-o", format), c.Unprivileged, 2*time.Minute)
			if err != nil {
				hostile.Cleanup(dir)
				return fmt.Errorf("%s: %w", c.Name, err)
			}
			if r.Wall > worst.Wall {
				worst.Wall = r.Wall
			}
			if r.MaxRSS > worst.MaxRSS {
				worst.MaxRSS = r.MaxRSS
			}
			if r.ExitCode > worst.ExitCode || r.Signaled {
				worst.ExitCode = r.ExitCode
			}
		}
		hostile.Cleanup(dir)
		fmt.Printf("%-22s %8s %6d MiB  %d   %+d MiB beside the normal run\n", c.Name, worst.Wall.Round(time.Millisecond), worst.MaxRSS>>20, worst.ExitCode, (worst.MaxRSS-normal.MaxRSS)>>20)
	}
	return nil
}

// runCluster fills a real API server with a generated cluster and times
// `BIN cluster` beside `BIN snapshot` on it.
func runCluster(bin string, o bench.SnapshotOptions) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	c, err := startCluster(o)
	if err != nil {
		return err
	}
	defer c.stop()
	out := filepath.Join(c.dir, "read.json")
	return pair(bin, []string{"cluster", "--kubeconfig", c.kubeconfig}, "eksdoctor cluster",
		bin, []string{"snapshot", "--kubeconfig", c.kubeconfig, "-o", out}, "floor: eksdoctor snapshot (reads)")
}

// benchCluster is a real API server holding a generated cluster.
type benchCluster struct {
	env        *testenv.Env
	dir        string
	kubeconfig string
}

func (c *benchCluster) stop() {
	c.env.Stop()
	os.RemoveAll(c.dir)
}

// startCluster starts a real API server and creates in it the objects of a
// snapshot generated with o.
func startCluster(o bench.SnapshotOptions) (*benchCluster, error) {
	dir, err := os.MkdirTemp("", "eksdoctor-bench-cluster-")
	if err != nil {
		return nil, err
	}
	snap := filepath.Join(dir, "generated.json")
	if _, err := bench.GenerateSnapshot(snap, o); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	env, err := testenv.Start(testenv.Options{})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	c := &benchCluster{env: env, dir: dir}
	began := time.Now()
	created, refused, firstErr, err := bench.Populate(context.Background(), env.Config, snap)
	if err != nil {
		c.stop()
		return nil, err
	}
	fmt.Printf("created %d objects in %s", created, time.Since(began).Round(time.Second))
	if refused > 0 {
		fmt.Printf("; the server refused %d (first: %v)", refused, firstErr)
	}
	fmt.Println()
	kc, err := testenv.Kubeconfig(env.Config, "bench")
	if err != nil {
		c.stop()
		return nil, err
	}
	c.kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(c.kubeconfig, kc, 0o600); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

// median returns the median wall time and peak RSS of runs.
func median(rs []hostile.Result) (time.Duration, int64) {
	walls := make([]time.Duration, len(rs))
	rss := make([]int64, len(rs))
	for i, r := range rs {
		walls[i], rss[i] = r.Wall, r.MaxRSS
	}
	slices.Sort(walls)
	slices.Sort(rss)
	return walls[len(walls)/2], rss[len(rss)/2]
}

// runStatic times `BIN check DIR` beside this program's parse of the same
// directory, five runs each, alternating, and prints the medians.
func runStatic(bin, dir string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	return pair(bin, []string{"check", dir}, "eksdoctor check", self, []string{"parse", dir}, "floor: eksdoctor-bench parse")
}

// pair runs two commands five times each, alternately, and prints their median
// wall time and peak RSS and the ratio of the first to the second.
func pair(bin string, args []string, name, floorBin string, floorArgs []string, floorName string) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	var runs, floor []hostile.Result
	for range 5 {
		f, err := hostile.Run(floorBin, os.TempDir(), floorArgs, false, 10*time.Minute)
		if err != nil {
			return err
		}
		if f.ExitCode != 0 {
			return fmt.Errorf("%s exited %d", floorName, f.ExitCode)
		}
		floor = append(floor, f)
		r, err := hostile.Run(bin, os.TempDir(), args, false, 10*time.Minute)
		if err != nil {
			return err
		}
		if r.ExitCode > 1 {
			return fmt.Errorf("%s exited %d", name, r.ExitCode)
		}
		runs = append(runs, r)
	}
	cw, cr := median(runs)
	fw, fr := median(floor)
	fmt.Printf("%-34s %9s %10s\n", "", "wall", "peak RSS")
	fmt.Printf("%-34s %9s %6d MiB\n", floorName, fw.Round(time.Millisecond), fr>>20)
	fmt.Printf("%-34s %9s %6d MiB\n", name, cw.Round(time.Millisecond), cr>>20)
	fmt.Printf("%-34s %8.2fx %9.2fx\n", "ratio", float64(cw)/float64(fw), float64(cr)/float64(fr))
	return nil
}

// runLive times `BIN check FILE` beside the parse-only floor of the same file
// (Python's json.load), five runs each, alternating, and prints the medians.
func runLive(bin, file string) error {
	file, err := filepath.Abs(file)
	if err != nil {
		return err
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		return fmt.Errorf("the floor needs python3: %w", err)
	}
	return pair(bin, []string{"check", file}, "eksdoctor check", python, []string{"-c", "import json,sys; json.load(open(sys.argv[1]))", file}, "floor: python3 json.load")
}
