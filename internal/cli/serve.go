package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/spf13/cobra"

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

	// follower holds the cluster between reads; nil until a read succeeds.
	// The loop sets it (under mu) and uses it.
	follower *live.Follower

	// analysing is held while an analysis runs and while the HTML report of
	// the latest one is written: both read the pods the follower holds.
	analysing sync.Mutex

	mu     sync.Mutex
	ready  bool
	latest *analysisMetrics // nil before the first analysis
	// html is the latest analysis's HTML report, written when first asked for.
	html     *lazyPage
	json     []byte
	runs     int
	failures int
}

// debounce is how long serve waits after a change for the ones that follow
// (a rollout changes many pods at once) before it analyses again.
const debounce = 2 * time.Second

// loop reads the cluster, then analyses it again soon after each change its
// watches apply (reading nothing: the follower holds the cluster as it is)
// and reads it all again every interval.
func (sv *server) loop(ctx context.Context, interval time.Duration) {
	schedule(ctx, interval, debounce, func(full bool, changed func()) { sv.run(ctx, full, changed) })
}

// schedule calls run with full set first, then interval after the start of
// each call with full set (however many changes came between), and settle
// after a change that changed reported (the changes that follow it within
// settle fold into it), until ctx ends.
func schedule(ctx context.Context, interval, settle time.Duration, run func(full bool, changed func())) {
	trigger := make(chan struct{}, 1)
	changed := func() {
		select {
		case trigger <- struct{}{}:
		default:
		}
	}
	full := true
	var nextFull time.Time
	for {
		if full {
			nextFull = time.Now().Add(interval)
		}
		run(full, changed)
		full = false
		timer := time.NewTimer(time.Until(nextFull))
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
			full = true
		case <-trigger:
			timer.Stop()
			select {
			case <-ctx.Done():
				return
			case <-time.After(settle):
			}
			select {
			case <-trigger:
			default:
			}
			full = !time.Now().Before(nextFull)
		}
	}
}

// run analyses the cluster once and publishes the result: read whole when
// full (or when no read has succeeded yet), as the follower holds it
// otherwise.
func (sv *server) run(ctx context.Context, full bool, changed func()) {
	began := time.Now()
	err := sv.read(ctx, full, changed)
	if err != nil {
		sv.mu.Lock()
		sv.failures++
		sv.mu.Unlock()
		fmt.Fprintf(sv.env.Stderr, "%s: %v\n", progName(sv.env.prog), err)
		return
	}
	sv.analysing.Lock()
	defer sv.analysing.Unlock()
	// The previous analysis's model goes before this one is made: its HTML
	// report, if never asked for, is written from this one.
	sv.mu.Lock()
	if sv.html != nil {
		sv.html.drop()
	}
	sv.mu.Unlock()
	m := source.Build(sv.follower.Model())
	cs := []*source.Cluster{{Name: m.Live.Context, Model: m}}
	r := runChecks(sv.set, cs)
	findings, suppressed := r.findings, r.suppressed
	var js bytes.Buffer
	_ = report.JSON(&js, findings, r.set.options(suppressed))
	took := time.Since(began)
	// The HTML report of a large cluster takes longer to write than the
	// analysis: it is written when first asked for, once per analysis.
	html := &lazyPage{analysing: &sv.analysing, write: func() []byte {
		var page bytes.Buffer
		_ = report.HTML(&page, htmlClusters(cs, r.sims, false), findings, r.set.options(suppressed))
		return page.Bytes()
	}}
	sv.mu.Lock()
	defer sv.mu.Unlock()
	sv.runs++
	a := measureAnalysis(m, findings, suppressed, time.Now(), took)
	sv.latest = &a
	sv.json, sv.html = js.Bytes(), html
	sv.ready = true
	roomToAnalyseAgain()
}

// read brings the follower up to date: the first read starts it and its
// watches, a full one reads everything again.
func (sv *server) read(ctx context.Context, full bool, changed func()) error {
	if sv.follower != nil {
		// Between full reads the follower's watches keep the model current,
		// unless some list may not be watched: then it is read again.
		if !full && len(sv.follower.Unfollowed()) == 0 {
			return nil
		}
		if err := sv.follower.Refresh(ctx); err != nil {
			return fmt.Errorf("read the cluster: %w", err)
		}
		return nil
	}
	opts, err := sv.lo.liveOptions(sv.env)
	if err != nil {
		return err
	}
	f, err := live.Follow(ctx, opts)
	if err != nil {
		return fmt.Errorf("read the cluster: %w", err)
	}
	sv.mu.Lock()
	sv.follower = f
	sv.mu.Unlock()
	go f.Watch(ctx, changed)
	return nil
}

func (sv *server) routes() http.Handler {
	mux := http.NewServeMux()
	readOnly := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				http.Error(w, "read-only", http.StatusMethodNotAllowed)
				return
			}
			h(w, r)
		}
	}
	serve := func(body func() ([]byte, bool), contentType string) http.HandlerFunc {
		return readOnly(func(w http.ResponseWriter, _ *http.Request) {
			b, ok := body()
			if !ok {
				http.Error(w, "no analysis yet", http.StatusServiceUnavailable)
				return
			}
			w.Header().Set("Content-Type", contentType)
			_, _ = w.Write(b)
		})
	}
	latest := func(pick func() []byte) func() ([]byte, bool) {
		return func() ([]byte, bool) {
			sv.mu.Lock()
			defer sv.mu.Unlock()
			return pick(), sv.ready
		}
	}
	// The latest analysis (none before the first), then the counters as
	// they are now: a failed run since shows at once.
	mux.HandleFunc("/metrics", readOnly(sv.metricsHandler().ServeHTTP))
	mux.HandleFunc("/report", serve(func() ([]byte, bool) {
		for {
			sv.mu.Lock()
			html, ready := sv.html, sv.ready
			sv.mu.Unlock()
			if !ready {
				return nil, false
			}
			if page, ok := html.get(); ok {
				return page, true
			}
			// Dropped unwritten by the analysis under way: the next
			// page is the one to write.
		}
	}, "text/html; charset=utf-8"))
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

// lazyPage is an analysis's HTML report, written once when first asked for,
// while no other analysis runs (both read the pods the follower holds). The
// next analysis drops what it is written from; a page dropped unwritten is
// not written.
type lazyPage struct {
	analysing *sync.Mutex
	mu        sync.Mutex
	write     func() []byte // nil once written or dropped
	page      []byte
}

// get returns the page, writing it first if need be; false when it was
// dropped unwritten (after waiting for the analysis that dropped it).
func (p *lazyPage) get() ([]byte, bool) {
	p.analysing.Lock()
	defer p.analysing.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.write != nil {
		p.page, p.write = p.write(), nil
	}
	return p.page, p.page != nil
}

// drop lets go of what the page is written from.
func (p *lazyPage) drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.write = nil
}
