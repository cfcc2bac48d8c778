package cli

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/eksdoctor/eksdoctor/source/live"
)

// The metrics serve exposes. Their names, labels and help texts are part of
// the interface: dashboards and alerts query them.
var (
	findingsDesc = prometheus.NewDesc("eksdoctor_findings",
		"Findings of the latest analysis, by check, severity and namespace of the object.",
		[]string{"check", "severity", "namespace"}, nil)
	suppressedDesc = prometheus.NewDesc("eksdoctor_findings_suppressed",
		"Findings of the latest analysis that ignore annotations silenced.", nil, nil)
	pendingDesc = prometheus.NewDesc("eksdoctor_pending_pods",
		"Pods not bound to a node, by the reason their PodScheduled condition gives.",
		[]string{"reason"}, nil)
	readErrorsDesc = prometheus.NewDesc("eksdoctor_read_errors",
		"Resources the latest analysis could not read (1 each).",
		[]string{"resource"}, nil)
	lastRunDesc = prometheus.NewDesc("eksdoctor_last_run_timestamp_seconds",
		"When the latest analysis ended, in seconds since 1970.", nil, nil)
	durationDesc = prometheus.NewDesc("eksdoctor_run_duration_seconds",
		"How long the latest analysis took, reading included.", nil, nil)
	runsDesc = prometheus.NewDesc("eksdoctor_runs_total",
		"Analyses completed.", nil, nil)
	failuresDesc = prometheus.NewDesc("eksdoctor_run_failures_total",
		"Analyses that could not read the cluster.", nil, nil)
	fullReadsDesc = prometheus.NewDesc("eksdoctor_full_reads_total",
		"Reads of the whole cluster (the first included); between them, watches keep every list read current.", nil, nil)
	changesDesc = prometheus.NewDesc("eksdoctor_watched_changes_total",
		"Changes to the objects read (pods, nodes, events, workloads, volumes, Karpenter's objects...) the watches delivered and applied.", nil, nil)
	watchErrorsDesc = prometheus.NewDesc("eksdoctor_watch_errors_total",
		"Watches that could not be opened or ended in an error (each opened again after a pause).", nil, nil)
	unwatchedDesc = prometheus.NewDesc("eksdoctor_unwatched_lists",
		"Lists the credentials may not watch (1 each): while there are any, a change makes serve read the whole cluster again.",
		[]string{"list"}, nil)
)

// serverCollector exposes the server's latest analysis (none before the
// first) and its run counters as they are at the scrape, all read at once.
type serverCollector struct{ sv *server }

func (serverCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{findingsDesc, suppressedDesc, pendingDesc, readErrorsDesc, lastRunDesc, durationDesc, runsDesc, failuresDesc, fullReadsDesc, changesDesc, watchErrorsDesc, unwatchedDesc} {
		ch <- d
	}
}

func (c serverCollector) Collect(ch chan<- prometheus.Metric) {
	c.sv.mu.Lock()
	latest, runs, failures, f := c.sv.latest, c.sv.runs, c.sv.failures, c.sv.follower
	c.sv.mu.Unlock()
	var follow live.FollowCounts
	var unwatched []string
	if f != nil {
		follow = f.Counts()
		unwatched = f.Unfollowed()
	}
	metric := func(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		m, err := prometheus.NewConstMetric(d, t, v, labels...)
		if err != nil {
			m = prometheus.NewInvalidMetric(d, err)
		}
		ch <- m
	}
	metric(runsDesc, prometheus.CounterValue, float64(runs))
	metric(failuresDesc, prometheus.CounterValue, float64(failures))
	metric(fullReadsDesc, prometheus.CounterValue, float64(follow.Reads))
	metric(changesDesc, prometheus.CounterValue, float64(follow.Changes))
	metric(watchErrorsDesc, prometheus.CounterValue, float64(follow.WatchErrors))
	for _, l := range unwatched {
		metric(unwatchedDesc, prometheus.GaugeValue, 1, l)
	}
	if latest == nil {
		return
	}
	for s, n := range latest.findings {
		metric(findingsDesc, prometheus.GaugeValue, float64(n), s.check, s.severity, s.namespace)
	}
	metric(suppressedDesc, prometheus.GaugeValue, float64(latest.suppressed))
	for reason, n := range latest.pending {
		metric(pendingDesc, prometheus.GaugeValue, float64(n), reason)
	}
	for resource := range latest.readErrors {
		metric(readErrorsDesc, prometheus.GaugeValue, 1, resource)
	}
	metric(lastRunDesc, prometheus.GaugeValue, latest.endedSeconds())
	metric(durationDesc, prometheus.GaugeValue, latest.tookSeconds())
}

// metricsHandler serves the server's metrics from a registry of their own
// (no Go or process metrics), in an order the registry fixes: families by
// name, series by their labels.
func (sv *server) metricsHandler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(serverCollector{sv})
	// A series whose labels the registry refuses is left out; the others
	// are still served.
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
