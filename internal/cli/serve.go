package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/report"
	"github.com/eksdoctor/eksdoctor/source"
	"github.com/eksdoctor/eksdoctor/source/live"
)

func newServeCmd(env *Env) *cobra.Command {
	// serve writes no report of its own: no -o, --fail-on or --min-severity.
	o := &reportOptions{formats: []string{"text"}, serve: true}
	lo := &liveOptions{}
	var listen string
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Keep analysing the running cluster; serve Prometheus metrics and the latest report",
		Long: `serve runs inside the cluster (or beside it) with the same read-only access as
'eksdoctor cluster', plus watch: it analyses the cluster, then again every --interval and
soon after a pod, node, NodePool or NodeClaim changes, and serves over HTTP

  /metrics       Prometheus metrics: eksdoctor_findings{check,severity,namespace},
                 eksdoctor_pending_pods{reason}, eksdoctor_last_run_timestamp_seconds,
                 eksdoctor_run_duration_seconds, eksdoctor_read_errors{resource}, and more
  /report        the latest report as HTML (/report.json: as 'eksdoctor cluster -o json')
  /healthz       200 while the server runs
  /readyz        200 once a first analysis is done

It never writes to the cluster and never reads Secrets. deploy/chart installs it with that
access (and a CronJob variant that writes the JSON report to its log).`,
		Example: `  eksdoctor serve --listen :8080 --interval 5m`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if interval < time.Second {
				return usagef("--interval %s: at least 1s", interval)
			}
			set, err := o.resolve(env)
			if err != nil {
				return err
			}
			// Without a cluster to read, serving would only ever fail.
			opts, err := lo.liveOptions(env)
			if err != nil {
				return err
			}
			if err := live.Configured(opts); err != nil {
				return usagef("%v", err)
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return usagef("--listen %s: %v", listen, err)
			}
			sv := &server{env: env, set: set, lo: lo, start: time.Now()}
			httpSrv := &http.Server{Handler: sv.routes(), ReadHeaderTimeout: 10 * time.Second}
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			go func() {
				<-ctx.Done()
				shutdown, done := context.WithTimeout(context.Background(), 5*time.Second)
				defer done()
				_ = httpSrv.Shutdown(shutdown)
			}()
			fmt.Fprintf(env.Stderr, "%s: serving on http://%s (analysing every %s and on change)\n", progName(env.prog), ln.Addr(), interval)
			go func() {
				if err := httpSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
					fmt.Fprintf(env.Stderr, "%s: %v\n", progName(env.prog), err)
					cancel()
				}
			}()
			sv.loop(ctx, interval)
			return nil
		},
	}
	o.addFlags(cmd)
	lo.addFlags(cmd.Flags())
	cmd.Flags().StringVar(&listen, "listen", ":8080", "address to serve metrics and reports on")
	cmd.Flags().DurationVar(&interval, "interval", 5*time.Minute, "how often to analyse the cluster again (changes are analysed sooner)")
	return cmd
}

// server holds the latest analysis.
type server struct {
	env   *Env
	set   *settings
	lo    *liveOptions
	start time.Time

	mu       sync.Mutex
	ready    bool
	metrics  []byte // the latest analysis's families, without the run counters
	html     []byte
	json     []byte
	runs     int
	failures int
}

// debounce is how long serve waits after a change for the ones that follow
// (a rollout changes many pods at once) before it analyses again.
const debounce = 2 * time.Second

func (sv *server) loop(ctx context.Context, interval time.Duration) {
	trigger := make(chan struct{}, 1)
	opts, err := sv.lo.liveOptions(sv.env)
	if err == nil {
		go func() {
			_ = live.Watch(ctx, opts, func() {
				select {
				case trigger <- struct{}{}:
				default:
				}
			})
		}()
	}
	for {
		sv.run(ctx)
		timer := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		case <-trigger:
			timer.Stop()
			select {
			case <-ctx.Done():
				return
			case <-time.After(debounce):
			}
			select {
			case <-trigger:
			default:
			}
		}
	}
}

// run analyses the cluster once and publishes the result.
func (sv *server) run(ctx context.Context) {
	began := time.Now()
	m, err := sv.lo.load(ctx, sv.env)
	if err != nil {
		sv.mu.Lock()
		sv.failures++
		sv.mu.Unlock()
		fmt.Fprintf(sv.env.Stderr, "%s: %v\n", progName(sv.env.prog), err)
		return
	}
	cs := []*source.Cluster{{Name: m.Live.Context, Model: m}}
	r := runChecks(sv.set, cs)
	findings, suppressed := r.findings, r.suppressed
	took := time.Since(began)
	var js, page bytes.Buffer
	_ = report.JSON(&js, findings, r.set.options(suppressed))
	_ = report.HTML(&page, htmlClusters(cs, r.sims, false), findings, r.set.options(suppressed))
	sv.mu.Lock()
	defer sv.mu.Unlock()
	sv.runs++
	sv.metrics = metricsText(m, findings, suppressed, time.Now(), took)
	sv.json, sv.html = js.Bytes(), page.Bytes()
	sv.ready = true
}

func (sv *server) routes() http.Handler {
	mux := http.NewServeMux()
	serve := func(body func() ([]byte, bool), contentType string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				http.Error(w, "read-only", http.StatusMethodNotAllowed)
				return
			}
			b, ok := body()
			if !ok {
				http.Error(w, "no analysis yet", http.StatusServiceUnavailable)
				return
			}
			w.Header().Set("Content-Type", contentType)
			_, _ = w.Write(b)
		}
	}
	latest := func(pick func() []byte) func() ([]byte, bool) {
		return func() ([]byte, bool) {
			sv.mu.Lock()
			defer sv.mu.Unlock()
			return pick(), sv.ready
		}
	}
	mux.HandleFunc("/metrics", serve(func() ([]byte, bool) {
		sv.mu.Lock()
		defer sv.mu.Unlock()
		// The latest analysis (none before the first), then the counters
		// as they are now: a failed run since shows at once.
		return append(slices.Clip(sv.metrics), runCounters(sv.runs, sv.failures)...), true
	}, "text/plain; version=0.0.4; charset=utf-8"))
	mux.HandleFunc("/report", serve(latest(func() []byte { return sv.html }), "text/html; charset=utf-8"))
	mux.HandleFunc("/report.json", serve(latest(func() []byte { return sv.json }), "application/json"))
	mux.HandleFunc("/healthz", serve(func() ([]byte, bool) { return []byte("ok\n"), true }, "text/plain; charset=utf-8"))
	mux.HandleFunc("/readyz", serve(latest(func() []byte { return []byte("ok\n") }), "text/plain; charset=utf-8"))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>eksdoctor</title></head><body><h1>eksdoctor</h1><ul><li><a href="report">report</a></li><li><a href="report.json">report.json</a></li><li><a href="metrics">metrics</a></li></ul></body></html>`))
	})
	return mux
}

// metricsText writes the metrics in Prometheus' text exposition format,
// every series sorted so that the same state gives the same text.
func metricsText(m *cluster.Model, findings, suppressed []lint.Finding, now time.Time, took time.Duration) []byte {
	var b strings.Builder
	family := func(name, kind, help string) { writeFamily(&b, name, kind, help) }
	counts := map[string]int{}
	for _, f := range findings {
		counts[labels("check", f.Check, "severity", f.Severity.String(), "namespace", f.Object.Namespace)]++
	}
	family("eksdoctor_findings", "gauge", "Findings of the latest analysis, by check, severity and namespace of the object.")
	writeSeries(&b, "eksdoctor_findings", counts)
	family("eksdoctor_findings_suppressed", "gauge", "Findings of the latest analysis that ignore annotations silenced.")
	fmt.Fprintf(&b, "eksdoctor_findings_suppressed %d\n", len(suppressed))
	pending := map[string]int{}
	for _, p := range m.Pods {
		if p.Status.Phase != corev1.PodPending || p.Spec.NodeName != "" {
			continue
		}
		reason := "NotYetScheduled"
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason != "" {
				reason = c.Reason
			}
		}
		pending[labels("reason", reason)]++
	}
	family("eksdoctor_pending_pods", "gauge", "Pods not bound to a node, by the reason their PodScheduled condition gives.")
	writeSeries(&b, "eksdoctor_pending_pods", pending)
	skipped := map[string]int{}
	if m.Live != nil {
		for _, s := range m.Live.Skipped {
			skipped[labels("resource", s.Resource)] = 1
		}
	}
	family("eksdoctor_read_errors", "gauge", "Resources the latest analysis could not read (1 each).")
	writeSeries(&b, "eksdoctor_read_errors", skipped)
	family("eksdoctor_last_run_timestamp_seconds", "gauge", "When the latest analysis ended, in seconds since 1970.")
	fmt.Fprintf(&b, "eksdoctor_last_run_timestamp_seconds %s\n", strconv.FormatFloat(float64(now.UnixMilli())/1000, 'f', 3, 64))
	family("eksdoctor_run_duration_seconds", "gauge", "How long the latest analysis took, reading included.")
	fmt.Fprintf(&b, "eksdoctor_run_duration_seconds %s\n", strconv.FormatFloat(took.Seconds(), 'f', 3, 64))
	return []byte(b.String())
}

// runCounters are the counters of the analyses so far.
func runCounters(runs, failures int) []byte {
	var b strings.Builder
	writeFamily(&b, "eksdoctor_runs_total", "counter", "Analyses completed.")
	fmt.Fprintf(&b, "eksdoctor_runs_total %d\n", runs)
	writeFamily(&b, "eksdoctor_run_failures_total", "counter", "Analyses that could not read the cluster.")
	fmt.Fprintf(&b, "eksdoctor_run_failures_total %d\n", failures)
	return []byte(b.String())
}

func writeFamily(b *strings.Builder, name, kind, help string) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, kind)
}

// labels renders label pairs as Prometheus writes them, values escaped.
func labels(kv ...string) string {
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		v := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(kv[i+1])
		parts = append(parts, kv[i]+`="`+v+`"`)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func writeSeries(b *strings.Builder, name string, series map[string]int) {
	keys := make([]string, 0, len(series))
	for k := range series {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "%s%s %d\n", name, k, series[k])
	}
}
