package cli

import (
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
)

// metricsModel has pods Pending for different reasons, pods that are not
// pending, and resources the live read skipped.
func metricsModel() *cluster.Model {
	unschedulable := corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable},
	}}
	return &cluster.Model{
		Pods: []*cluster.Pod{
			{Status: unschedulable},
			{Status: unschedulable},
			// No PodScheduled condition yet.
			{Status: corev1.PodStatus{Phase: corev1.PodPending}},
			// A condition without a reason, and another condition's reason.
			{Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionFalse},
				{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady"},
			}}},
			// Bound to a node, its containers still starting: not pending a node.
			{Spec: corev1.PodSpec{NodeName: "n1"}, Status: unschedulable},
			{Status: corev1.PodStatus{Phase: corev1.PodRunning}},
		},
		Live: &cluster.Live{Skipped: []cluster.Skipped{
			{Resource: "nodeclaims", Reason: "forbidden"},
			{Resource: "nodeclaims", Reason: "forbidden again"},
			{Resource: "pods", Reason: "timeout"},
		}},
	}
}

func metricsFindings() (findings, suppressed []lint.Finding) {
	f := func(check string, sev lint.Severity, ns string) lint.Finding {
		return lint.Finding{Check: check, Severity: sev, Object: cluster.ObjectRef{Namespace: ns, Name: "x"}}
	}
	findings = []lint.Finding{
		f("pod-pending", lint.Error, "apps"),
		f("pod-pending", lint.Error, "apps"),
		f("pod-pending", lint.Error, "web"),
		f("pod-pending", lint.Warning, "apps"),
		f("finalizer-stuck", lint.Error, ""),
	}
	suppressed = []lint.Finding{f("pod-pending", lint.Error, "batch")}
	return findings, suppressed
}

func TestMeasureAnalysis(t *testing.T) {
	findings, suppressed := metricsFindings()
	ended := time.Date(2026, 11, 27, 12, 0, 0, 123_456_789, time.UTC)
	a := measureAnalysis(metricsModel(), findings, suppressed, ended, 1234567*time.Microsecond)
	if want := map[findingSeries]int{
		{"pod-pending", "error", "apps"}:   2,
		{"pod-pending", "error", "web"}:    1,
		{"pod-pending", "warning", "apps"}: 1,
		{"finalizer-stuck", "error", ""}:   1,
	}; !reflect.DeepEqual(a.findings, want) {
		t.Errorf("findings = %v, want %v", a.findings, want)
	}
	if a.suppressed != 1 {
		t.Errorf("suppressed = %d, want 1", a.suppressed)
	}
	if want := map[string]int{"Unschedulable": 2, "NotYetScheduled": 2}; !reflect.DeepEqual(a.pending, want) {
		t.Errorf("pending = %v, want %v", a.pending, want)
	}
	if want := map[string]bool{"nodeclaims": true, "pods": true}; !reflect.DeepEqual(a.readErrors, want) {
		t.Errorf("read errors = %v, want %v", a.readErrors, want)
	}
	if got, want := a.endedSeconds(), 1795780800.123; got != want {
		t.Errorf("ended = %v, want %v", got, want)
	}
	if got, want := a.tookSeconds(), 1.235; got != want {
		t.Errorf("took = %v, want %v", got, want)
	}

	// A snapshot (no live read) has no read errors and no pods.
	if a := measureAnalysis(&cluster.Model{}, nil, nil, ended, 0); len(a.findings)+len(a.pending)+len(a.readErrors)+a.suppressed != 0 {
		t.Errorf("empty model: %+v", a)
	}
}

// TestServeMetricsExposition reads /metrics before the first analysis (the run
// counters alone) and after one: every family with its help text, in the same
// order whatever the order of the findings.
func TestServeMetricsExposition(t *testing.T) {
	sv := &server{}
	get := func() string {
		t.Helper()
		w := httptest.NewRecorder()
		sv.routes().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain; version=0.0.4") {
			t.Fatalf("/metrics: %d %q", w.Code, w.Header().Get("Content-Type"))
		}
		b, _ := io.ReadAll(w.Body)
		return string(b)
	}
	counters := `# HELP eksdoctor_full_reads_total Reads of the whole cluster (the first included); between them, watches keep every list read current.
# TYPE eksdoctor_full_reads_total counter
eksdoctor_full_reads_total 0
# HELP eksdoctor_run_failures_total Analyses that could not read the cluster.
# TYPE eksdoctor_run_failures_total counter
eksdoctor_run_failures_total 1
# HELP eksdoctor_runs_total Analyses completed.
# TYPE eksdoctor_runs_total counter
eksdoctor_runs_total 0
# HELP eksdoctor_watch_errors_total Watches that could not be opened or ended in an error (each opened again after a pause).
# TYPE eksdoctor_watch_errors_total counter
eksdoctor_watch_errors_total 0
# HELP eksdoctor_watched_changes_total Changes to the objects read (pods, nodes, events, workloads, volumes, Karpenter's objects...) the watches delivered and applied.
# TYPE eksdoctor_watched_changes_total counter
eksdoctor_watched_changes_total 0
`
	sv.failures = 1
	if got := get(); got != counters {
		t.Errorf("before the first analysis:\n%s\nwant:\n%s", got, counters)
	}

	findings, suppressed := metricsFindings()
	ended := time.Date(2026, 11, 27, 12, 0, 0, 123_456_789, time.UTC)
	a := measureAnalysis(metricsModel(), findings, suppressed, ended, 1234567*time.Microsecond)
	sv.latest, sv.runs = &a, 2
	want := `# HELP eksdoctor_findings Findings of the latest analysis, by check, severity and namespace of the object.
# TYPE eksdoctor_findings gauge
eksdoctor_findings{check="finalizer-stuck",namespace="",severity="error"} 1
eksdoctor_findings{check="pod-pending",namespace="apps",severity="error"} 2
eksdoctor_findings{check="pod-pending",namespace="apps",severity="warning"} 1
eksdoctor_findings{check="pod-pending",namespace="web",severity="error"} 1
# HELP eksdoctor_findings_suppressed Findings of the latest analysis that ignore annotations silenced.
# TYPE eksdoctor_findings_suppressed gauge
eksdoctor_findings_suppressed 1
# HELP eksdoctor_full_reads_total Reads of the whole cluster (the first included); between them, watches keep every list read current.
# TYPE eksdoctor_full_reads_total counter
eksdoctor_full_reads_total 0
# HELP eksdoctor_last_run_timestamp_seconds When the latest analysis ended, in seconds since 1970.
# TYPE eksdoctor_last_run_timestamp_seconds gauge
eksdoctor_last_run_timestamp_seconds 1.795780800123e+09
# HELP eksdoctor_pending_pods Pods not bound to a node, by the reason their PodScheduled condition gives.
# TYPE eksdoctor_pending_pods gauge
eksdoctor_pending_pods{reason="NotYetScheduled"} 2
eksdoctor_pending_pods{reason="Unschedulable"} 2
# HELP eksdoctor_read_errors Resources the latest analysis could not read (1 each).
# TYPE eksdoctor_read_errors gauge
eksdoctor_read_errors{resource="nodeclaims"} 1
eksdoctor_read_errors{resource="pods"} 1
# HELP eksdoctor_run_duration_seconds How long the latest analysis took, reading included.
# TYPE eksdoctor_run_duration_seconds gauge
eksdoctor_run_duration_seconds 1.235
# HELP eksdoctor_run_failures_total Analyses that could not read the cluster.
# TYPE eksdoctor_run_failures_total counter
eksdoctor_run_failures_total 1
# HELP eksdoctor_runs_total Analyses completed.
# TYPE eksdoctor_runs_total counter
eksdoctor_runs_total 2
# HELP eksdoctor_watch_errors_total Watches that could not be opened or ended in an error (each opened again after a pause).
# TYPE eksdoctor_watch_errors_total counter
eksdoctor_watch_errors_total 0
# HELP eksdoctor_watched_changes_total Changes to the objects read (pods, nodes, events, workloads, volumes, Karpenter's objects...) the watches delivered and applied.
# TYPE eksdoctor_watched_changes_total counter
eksdoctor_watched_changes_total 0
`
	for range 5 { // map order differs from one scrape to the next
		if got := get(); got != want {
			t.Fatalf("after an analysis:\n%s\nwant:\n%s", got, want)
		}
	}

	// A label value the exposition cannot hold (not UTF-8) loses its series,
	// not the others.
	a.pending["\xff"] = 1
	if got := get(); got != want {
		t.Errorf("with an invalid label value:\n%s\nwant:\n%s", got, want)
	}

	w := httptest.NewRecorder()
	sv.routes().ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/metrics", nil))
	if w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %d, want 405", w.Code)
	}
}
