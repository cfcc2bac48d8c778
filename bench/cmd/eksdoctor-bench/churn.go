package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/eksdoctor/eksdoctor/bench"
)

// churnArgs splits churn's arguments: a duration ("30m"), a rate ("1000/min")
// and the snapshot's size and shape words.
func churnArgs(args []string) (bench.ChurnOptions, []string, error) {
	o := bench.ChurnOptions{PerMinute: 1000, Duration: 30 * time.Minute, Seed: 1}
	var rest []string
	for _, a := range args {
		if n, ok := strings.CutSuffix(a, "/min"); ok {
			v, err := strconv.Atoi(n)
			if err != nil || v <= 0 {
				return o, nil, errUsage
			}
			o.PerMinute = v
			continue
		}
		if d, err := time.ParseDuration(a); err == nil && d > 0 {
			o.Duration = d
			continue
		}
		rest = append(rest, a)
	}
	return o, rest, nil
}

// serveSample is one scrape of serve's metrics and of its memory.
type serveSample struct {
	at                                     time.Duration // since the churn began
	runs, fullReads, failures, watchErrors float64
	changes, duration                      float64
	readErrors                             int
	rss                                    int64
}

// runChurn fills a real API server with a generated cluster, starts `BIN
// serve` on it, changes its pods at the rate asked for as long as asked, and
// samples serve's metrics and resident memory every second: it prints the
// analyses that followed changes (their time: median, 95th percentile,
// most), memory after the first five minutes and at the end, and the read
// errors.
func runChurn(bin string, args []string) error {
	co, rest, err := churnArgs(args)
	if err != nil {
		return err
	}
	o, err := snapshotOptions(rest)
	if err != nil {
		return err
	}
	bin, err = filepath.Abs(bin)
	if err != nil {
		return err
	}
	c, err := startCluster(o)
	if err != nil {
		return err
	}
	defer c.stop()

	cmd := exec.Command(bin, "serve", "--kubeconfig", c.kubeconfig, "--listen", "127.0.0.1:0", "--interval", "10m")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	// serve names its address on its first line.
	lines := bufio.NewScanner(stderr)
	if !lines.Scan() {
		return fmt.Errorf("serve said nothing")
	}
	first := lines.Text()
	_, after, ok := strings.Cut(first, "http://")
	if !ok {
		return fmt.Errorf("serve: %s", first)
	}
	base := "http://" + strings.Fields(after)[0]
	go func() {
		for lines.Scan() {
			fmt.Fprintln(os.Stderr, "serve:", lines.Text())
		}
	}()
	began := time.Now()
	for {
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Since(began) > 15*time.Minute {
			return fmt.Errorf("serve is not ready after 15 minutes")
		}
		time.Sleep(200 * time.Millisecond)
	}
	fmt.Printf("serve ready after %s\n", time.Since(began).Round(100*time.Millisecond))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type churned struct {
		st  bench.ChurnStats
		err error
	}
	done := make(chan churned, 1)
	churnBegan := time.Now()
	go func() {
		st, err := bench.Churn(ctx, c.env.Config, co)
		done <- churned{st, err}
	}()
	var samples []serveSample
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var result churned
sampling:
	for {
		select {
		case result = <-done:
			break sampling
		case <-tick.C:
		}
		s, err := sampleServe(base, cmd.Process.Pid)
		if err != nil {
			fmt.Fprintln(os.Stderr, "sample:", err)
			continue
		}
		s.at = time.Since(churnBegan)
		samples = append(samples, s)
	}
	if result.err != nil {
		return result.err
	}
	fmt.Printf("churn: %d pods relabelled, %d replaced in %s (%d/min asked); %d refused",
		result.st.Relabelled, result.st.Replaced, co.Duration, co.PerMinute, result.st.Failed)
	if result.st.FirstErr != nil {
		fmt.Printf(" (first: %v)", result.st.FirstErr)
	}
	fmt.Println()
	printChurn(samples)
	return nil
}

// printChurn reports the analyses the samples saw and serve's memory.
func printChurn(samples []serveSample) {
	var took []float64
	missed := 0
	for i := 1; i < len(samples); i++ {
		prev, s := samples[i-1], samples[i]
		if s.runs == prev.runs || s.fullReads != prev.fullReads {
			continue // no analysis, or one that read the whole cluster
		}
		took = append(took, s.duration)
		missed += int(s.runs-prev.runs) - 1
	}
	if len(samples) == 0 || len(took) == 0 {
		fmt.Println("no analysis after a change was seen")
		return
	}
	slices.Sort(took)
	q := func(p float64) float64 { return took[min(len(took)-1, int(p*float64(len(took))))] }
	fmt.Printf("analyses after changes: %d seen (%d more ran between samples); time median %.3f s, 95th percentile %.3f s, most %.3f s\n",
		len(took), missed, q(0.5), q(0.95), took[len(took)-1])
	last := samples[len(samples)-1]
	var at5 *serveSample
	var most int64
	for i := range samples {
		if at5 == nil && samples[i].at >= 5*time.Minute {
			at5 = &samples[i]
		}
		if at5 != nil {
			most = max(most, samples[i].rss)
		}
	}
	if at5 != nil {
		fmt.Printf("memory: %d MiB after 5 minutes, %d MiB at the end (%+.1f%%), at most %d MiB after 5 minutes\n",
			at5.rss>>20, last.rss>>20, 100*float64(last.rss-at5.rss)/float64(at5.rss), most>>20)
	} else {
		fmt.Printf("memory: %d MiB at the end (the run was shorter than 5 minutes)\n", last.rss>>20)
	}
	fmt.Printf("watched changes %.0f, full reads %.0f, watch errors %.0f, failed analyses %.0f, resources not read %d\n",
		last.changes, last.fullReads, last.watchErrors, last.failures, last.readErrors)
}

// sampleServe scrapes serve's metrics and reads its resident memory.
func sampleServe(base string, pid int) (serveSample, error) {
	var s serveSample
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return s, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return s, err
	}
	for _, l := range strings.Split(string(body), "\n") {
		name, value, ok := strings.Cut(l, " ")
		if !ok || strings.HasPrefix(l, "#") {
			continue
		}
		v, _ := strconv.ParseFloat(value, 64)
		switch {
		case name == "eksdoctor_runs_total":
			s.runs = v
		case name == "eksdoctor_full_reads_total":
			s.fullReads = v
		case name == "eksdoctor_run_failures_total":
			s.failures = v
		case name == "eksdoctor_watch_errors_total":
			s.watchErrors = v
		case name == "eksdoctor_watched_changes_total":
			s.changes = v
		case name == "eksdoctor_run_duration_seconds":
			s.duration = v
		case strings.HasPrefix(name, "eksdoctor_read_errors{"):
			s.readErrors++
		}
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, err
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			s.rss = kb << 10
		}
	}
	return s, nil
}
