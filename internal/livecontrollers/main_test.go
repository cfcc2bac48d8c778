//go:build livecontrollers

package livecontrollers

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/eksdoctor/eksdoctor/internal/testenv"
)

// shared is the cluster the scenarios that keep Karpenter running share (each
// in its own namespace, with its own NodePools); scenarios that stop the
// controller start a cluster of their own.
var shared *testenv.Cluster

// serving is `eksdoctor serve` on the shared cluster, as the chart's RBAC
// allows, for the whole run.
var serving *server

// neverReady is the node label the node agent ignores: nodes of NodePools whose
// template carries it register but never become Ready.
const neverReady = "eksdoctor.test/never-ready"

func TestMain(m *testing.M) {
	flag.Parse()
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	c, err := testenv.StartCluster(ctx, testenv.ClusterOptions{NeverReady: neverReady})
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "livecontrollers: the cluster with the real controllers could not be started: %v\n", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "livecontrollers: cluster with kube-controller-manager, kube-scheduler, Karpenter %s (kwok provider) and kwok ready in %s (%s)\n",
		testenv.KarpenterVersion, time.Since(began).Round(time.Second), c.Assets.Versions)
	shared = c
	if err := createSharedPools(c); err != nil {
		fmt.Fprintf(os.Stderr, "livecontrollers: %v\n", err)
		_ = c.Stop()
		os.Exit(1)
	}
	if serving, err = startServe(c); err != nil {
		fmt.Fprintf(os.Stderr, "livecontrollers: start eksdoctor serve: %v\n", err)
		_ = c.Stop()
		os.Exit(1)
	}
	code := m.Run()
	// serve read the cluster all along with the chart's RBAC: it never
	// failed a read.
	last := serving.latest()
	serveCode, serveLog := serving.stop()
	if serveCode != 0 || !strings.Contains(last, "eksdoctor_runs_total") || readErrors(last) != "" {
		fmt.Fprintf(os.Stderr, "livecontrollers: eksdoctor serve exited %d, read errors %q; its log:\n%s\nits last metrics:\n%s\n", serveCode, readErrors(last), serveLog, last)
		if code == 0 {
			code = 1
		}
	}
	if err := c.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "livecontrollers: stop the cluster: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// readErrors returns the eksdoctor_read_errors series of the metrics that are
// not zero.
func readErrors(metrics string) string {
	var out []string
	for _, l := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(l, "eksdoctor_read_errors{") && !strings.HasSuffix(l, " 0") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "; ")
}
