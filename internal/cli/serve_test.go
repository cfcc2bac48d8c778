package cli

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/eksdoctor/eksdoctor/internal/testenv"
)

// TestServeFollowsTheCluster runs `eksdoctor serve` against the test API
// server as a user bound only to the Helm chart's RBAC: it becomes ready,
// serves metrics and the report, and a Pending pod created afterwards shows in
// the metrics within one interval (sooner, since serve watches pods); the API
// server's audit log holds no request of that user but get, list and watch.
func TestServeFollowsTheCluster(t *testing.T) {
	liveFixture(t)
	const user = "eksdoctor-serve"
	userCfg := chartUser(t, user)
	log := &requestLog{t: t}
	const interval = 20 * time.Second
	base, get, stop := startServe(t, kubeconfigFor(t, userCfg), interval, fixtureNow, log)
	defer stop()
	if code, body := get("/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	_, metrics := get("/metrics")
	for _, want := range []string{
		"# TYPE eksdoctor_findings gauge\n",
		// The exposition orders labels by name.
		`eksdoctor_findings{check="finalizer-stuck",namespace="",severity="error"} 1`,
		"# TYPE eksdoctor_pending_pods gauge\n",
		"eksdoctor_runs_total 1\n",
		"eksdoctor_full_reads_total 1\n",
		"eksdoctor_last_run_timestamp_seconds ",
		"eksdoctor_run_duration_seconds ",
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q:\n%s", want, metrics)
		}
	}
	if code, body := get("/report"); code != http.StatusOK || !strings.Contains(body, "<h1>eksdoctor report</h1>") || !strings.Contains(body, "Capacity map") {
		t.Errorf("/report: %d, %.200s", code, body)
	}
	if code, body := get("/report.json"); code != http.StatusOK || !strings.Contains(body, `"check": "finalizer-stuck"`) {
		t.Errorf("/report.json: %d, %.200s", code, body)
	}
	if resp, err := http.Post(base+"/report", "text/plain", nil); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /report: %v %v, want 405", resp, err)
	}

	// A new Pending pod.
	before := pendingCount(metrics)
	cs, err := kubernetes.NewForConfig(apiServer.Config)
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "serve-pending", Namespace: "apps"},
		Spec: corev1.PodSpec{NodeSelector: map[string]string{"nowhere": "true"}, Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	if _, err := cs.CoreV1().Pods("apps").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		zero := int64(0)
		_ = cs.CoreV1().Pods("apps").Delete(context.Background(), "serve-pending", metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
	created := time.Now()
	for {
		_, metrics = get("/metrics")
		if pendingCount(metrics) == before+1 {
			break
		}
		if time.Since(created) > interval {
			t.Fatalf("the new Pending pod is not in the metrics after one interval (%s): %d pending before, %d now", interval, before, pendingCount(metrics))
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("the new Pending pod showed in the metrics %s after it was created (interval %s)", time.Since(created).Round(100*time.Millisecond), interval)
	// It came from the watches, not from reading the cluster again.
	for _, want := range []string{"eksdoctor_full_reads_total 1\n", "eksdoctor_watch_errors_total 0\n"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %q:\n%s", want, metrics)
		}
	}
	if strings.Contains(metrics, "eksdoctor_watched_changes_total 0\n") {
		t.Errorf("no watched change counted:\n%s", metrics)
	}

	if strings.Contains(metrics, "eksdoctor_read_errors{") {
		t.Errorf("the chart's RBAC does not let serve read everything:\n%s", metrics)
	}
	checkReadOnly(t, log.requests())

	// The server's side: the audit log records each request of the user once
	// its response is complete (a watch when serve stops).
	stop()
	var verbs map[string]int
	for wait := time.Now(); ; time.Sleep(200 * time.Millisecond) {
		events, err := apiServer.Audit()
		if err != nil {
			t.Fatal(err)
		}
		verbs = map[string]int{}
		for _, ev := range events {
			if ev.User.Username != user {
				continue
			}
			verbs[ev.Verb]++
			if ev.Verb != "get" && ev.Verb != "list" && ev.Verb != "watch" {
				t.Errorf("audit log: %s %s by %s", ev.Verb, ev.RequestURI, user)
			}
		}
		if verbs["watch"] > 0 || time.Since(wait) > 10*time.Second {
			break
		}
	}
	if verbs["list"] == 0 || verbs["watch"] == 0 {
		t.Errorf("audit log of %s: %v; want lists and watches", user, verbs)
	}
	t.Logf("audit log of %s: %v", user, verbs)
}

// A list serve may read but not watch (here the volume attachments) would
// stay as the last full read found it: serve says so in its metrics and,
// while it lasts, answers a change by reading the whole cluster again.
func TestServeReadsAgainWhatItMayNotWatch(t *testing.T) {
	liveFixture(t)
	const user = "eksdoctor-serve-no-va-watch"
	userCfg := chartUser(t, user, schema.GroupResource{Group: "storage.k8s.io", Resource: "volumeattachments"})
	ctx := testContext(t)
	listOnly := `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: list-volumeattachments}
rules:
- apiGroups: [storage.k8s.io]
  resources: [volumeattachments]
  verbs: [get, list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: list-volumeattachments}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: list-volumeattachments}
subjects: []
`
	if err := apiServer.Grant(ctx, user, []byte(listOnly)); err != nil {
		t.Fatal(err)
	}
	const interval = 5 * time.Minute
	_, get, stop := startServe(t, kubeconfigFor(t, userCfg), interval, fixtureNow, nil)
	defer stop()
	unwatched := `eksdoctor_unwatched_lists{list="volumeattachments.storage.k8s.io"} 1` + "\n"
	var metrics string
	for began := time.Now(); !strings.Contains(metrics, unwatched); time.Sleep(100 * time.Millisecond) {
		if time.Since(began) > 30*time.Second {
			t.Fatalf("metrics never named the list serve may not watch:\n%s", metrics)
		}
		_, metrics = get("/metrics")
	}
	if n := strings.Count(metrics, "eksdoctor_unwatched_lists{"); n != 1 {
		t.Errorf("%d lists named as not watched, want the volume attachments only:\n%s", n, metrics)
	}
	before := pendingCount(metrics)
	cs, err := kubernetes.NewForConfig(apiServer.Config)
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "serve-pending-unwatched", Namespace: "apps"},
		Spec: corev1.PodSpec{NodeSelector: map[string]string{"nowhere": "true"}, Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	if _, err := cs.CoreV1().Pods("apps").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		zero := int64(0)
		_ = cs.CoreV1().Pods("apps").Delete(context.Background(), pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})
	for began := time.Now(); pendingCount(metrics) != before+1; time.Sleep(200 * time.Millisecond) {
		if time.Since(began) > 30*time.Second {
			t.Fatalf("the new Pending pod is not in the metrics 30 s after it was created:\n%s", metrics)
		}
		_, metrics = get("/metrics")
	}
	if strings.Contains(metrics, "eksdoctor_full_reads_total 1\n") || !strings.Contains(metrics, "eksdoctor_watch_errors_total 0\n") {
		t.Errorf("the change was not answered by a full read, without a watch error:\n%s", metrics)
	}
}

// chartUser adds a user to the test API server bound to the Helm chart's
// RBAC, without the resources named.
func chartUser(t *testing.T, user string, without ...schema.GroupResource) *rest.Config {
	t.Helper()
	cfg, err := apiServer.AddUser(user)
	if err != nil {
		t.Fatal(err)
	}
	rbac, err := testenv.ChartRBAC()
	if err != nil {
		t.Fatal(err)
	}
	if err := apiServer.Grant(testContext(t), user, rbac, without...); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// startServe runs serve against kubeconfig with the clock at now, and returns
// once it is ready: base is its URL, get fetches a path of it, stop ends it (at most once;
// deferred stops after an explicit one do nothing) and fails the test unless
// it exited cleanly.
func startServe(t *testing.T, kubeconfig string, interval time.Duration, now time.Time, log *requestLog) (base string, get func(path string) (int, string), stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	base = "http://" + addr
	var stdout, stderr bytes.Buffer
	env := Env{Stdout: &stdout, Stderr: &lockedWriter{w: &stderr}, Getenv: func(string) string { return "" },
		Getwd: func() (string, error) { return t.TempDir(), nil }, IsTerminal: func(io.Writer) bool { return false },
		Now: func() time.Time { return now }}
	if log != nil {
		env.WrapTransport = log.wrap
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() {
		done <- Run(ctx, "eksdoctor", []string{"serve", "--kubeconfig", kubeconfig, "--listen", addr, "--interval", interval.String()}, env)
	}()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if code := <-done; code != ExitOK {
			t.Errorf("serve exited %d: %s", code, stderr.String())
		}
	}
	get = func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if code, _ := get("/readyz"); code == http.StatusOK {
			return base, get, stop
		}
		if time.Now().After(deadline) {
			stop()
			t.Fatalf("serve never became ready: %s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var pendingSeries = regexp.MustCompile(`(?m)^eksdoctor_pending_pods\{[^}]*\} (\d+)$`)

// pendingCount sums eksdoctor_pending_pods over its reasons.
func pendingCount(metrics string) int {
	n := 0
	for _, m := range pendingSeries.FindAllStringSubmatch(metrics, -1) {
		v, _ := strconv.Atoi(m[1])
		n += v
	}
	return n
}

// lockedWriter lets goroutines write to one buffer.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// An analysis's HTML page is written once, when first asked for; the next
// analysis drops what an unwritten page is written from, and a written page
// stays.
func TestLazyPage(t *testing.T) {
	var analysing sync.Mutex
	writes := 0
	page := func() *lazyPage {
		return &lazyPage{analysing: &analysing, write: func() []byte { writes++; return []byte("page") }}
	}
	p := page()
	for range 2 {
		if b, ok := p.get(); !ok || string(b) != "page" {
			t.Fatalf("get = %q, %v", b, ok)
		}
	}
	p.drop()
	if b, ok := p.get(); !ok || string(b) != "page" || writes != 1 {
		t.Errorf("a written page after drop: %q, %v, %d writes", b, ok, writes)
	}
	q := page()
	q.drop()
	if b, ok := q.get(); ok || b != nil || writes != 1 {
		t.Errorf("a page dropped unwritten: %q, %v, %d writes", b, ok, writes)
	}
}

// Under changes that never stop, serve still reads the whole cluster every
// interval (counted from the last full read, not from the last change), and
// analyses after changes in between.
func TestScheduleReadsFullyEveryIntervalUnderChurn(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var fulls, changes int
	done := make(chan struct{})
	go func() {
		defer close(done)
		schedule(ctx, 300*time.Millisecond, 10*time.Millisecond, func(full bool, changed func()) {
			mu.Lock()
			if full {
				fulls++
			} else {
				changes++
			}
			mu.Unlock()
			go changed() // a change always follows
		})
	}()
	time.Sleep(1500 * time.Millisecond)
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	// About five full reads in 1.5 s; at least three however slow the machine.
	if fulls < 3 || changes == 0 {
		t.Errorf("%d full reads and %d analyses after changes in 1.5 s (interval 300 ms, changes always pending): want a full read every interval", fulls, changes)
	}
}
