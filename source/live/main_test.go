package live

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/eksdoctor/eksdoctor/internal/testenv"
)

// env is the API server shared by every test of the package. Tests do not run in
// parallel: they read the whole cluster and compare what they see.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{CRDs: testenv.KarpenterV1}, func(e *testenv.Env) { env = e }))
}

//go:embed testdata/cluster.yaml
var clusterYAML []byte

// fixedNow is the clock of every load in the tests.
var fixedNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func clock() time.Time { return fixedNow }

var (
	fixtureOnce sync.Once
	fixtureErr  error
)

// fixture creates the cluster state of testdata/cluster.yaml once, with the status
// the controllers of a real cluster would have written, and the deletions that
// leave a NodeClaim and a Node waiting on Karpenter's finalizer.
func fixture(t *testing.T) {
	t.Helper()
	fixtureOnce.Do(func() { fixtureErr = createFixture() })
	if fixtureErr != nil {
		t.Fatalf("create the test cluster state: %v", fixtureErr)
	}
}

func createFixture() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := env.Apply(ctx, clusterYAML); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		return err
	}
	now := metav1.NewTime(fixedNow.Add(-time.Hour))

	for _, name := range []string{"ip-10-0-1-10.ec2.internal", "ip-10-0-2-20.ec2.internal", "fargate-ip-10-0-3-30.ec2.internal"} {
		n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse("2"), corev1.ResourceMemory: apiresource.MustParse("8Gi"), corev1.ResourcePods: apiresource.MustParse("29")}
		n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse("1930m"), corev1.ResourceMemory: apiresource.MustParse("7Gi"), corev1.ResourcePods: apiresource.MustParse("29")}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: now, LastTransitionTime: now}}
		if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("node %s status: %w", name, err)
		}
	}

	pending, err := cs.CoreV1().Pods("apps").Get(ctx, "web-5d8f7c9b6-abcde", metav1.GetOptions{})
	if err != nil {
		return err
	}
	pending.Status.Phase = corev1.PodPending
	pending.Status.Conditions = []corev1.PodCondition{{
		Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, LastTransitionTime: now,
		Message: "0/3 nodes are available: 1 node(s) had untolerated taint {CriticalAddonsOnly: true}.",
	}}
	if _, err := cs.CoreV1().Pods("apps").UpdateStatus(ctx, pending, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("pod status: %w", err)
	}
	running, err := cs.CoreV1().Pods("apps").Get(ctx, "db-0", metav1.GetOptions{})
	if err != nil {
		return err
	}
	running.Status.Phase = corev1.PodRunning
	if _, err := cs.CoreV1().Pods("apps").UpdateStatus(ctx, running, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("pod status: %w", err)
	}

	va, err := cs.StorageV1().VolumeAttachments().Get(ctx, "csi-3f4e5d6c7b8a", metav1.GetOptions{})
	if err != nil {
		return err
	}
	va.Status = storagev1.VolumeAttachmentStatus{Attached: true}
	if _, err := cs.StorageV1().VolumeAttachments().UpdateStatus(ctx, va, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("volumeattachment status: %w", err)
	}

	nodeClaims := dyn.Resource(schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"})
	nc, err := nodeClaims.Get(ctx, "general-purpose-x7k2p", metav1.GetOptions{})
	if err != nil {
		return err
	}
	ts := now.UTC().Format(time.RFC3339)
	if err := unstructured.SetNestedField(nc.Object, map[string]any{
		"providerID": "aws:///us-east-1b/i-0fedcba9876543210",
		"nodeName":   "ip-10-0-2-20.ec2.internal",
		"conditions": []any{
			map[string]any{"type": "Launched", "status": "True", "reason": "Launched", "message": "", "lastTransitionTime": ts},
			map[string]any{"type": "Registered", "status": "Unknown", "reason": "AwaitingReconciliation", "message": "object is awaiting reconciliation", "lastTransitionTime": ts},
		},
	}, "status"); err != nil {
		return err
	}
	if _, err := nodeClaims.UpdateStatus(ctx, nc, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("nodeclaim status: %w", err)
	}
	// Deleting objects that carry a finalizer only marks them: they stay, with a
	// deletionTimestamp, until a controller removes the finalizer.
	if err := nodeClaims.Delete(ctx, "general-purpose-x7k2p", metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete nodeclaim: %w", err)
	}
	if err := cs.CoreV1().Nodes().Delete(ctx, "ip-10-0-2-20.ec2.internal", metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete node: %w", err)
	}
	return nil
}

// recorder is an HTTP transport wrapper that records every request eksdoctor makes,
// refuses (and reports) anything but GET, and can answer requests itself to
// simulate a failing API server.
type recorder struct {
	t    *testing.T
	next http.RoundTripper
	// fail, when set, may answer a request (or fail it) instead of the API
	// server; it returns nil, nil to let the request through.
	fail func(req *http.Request) (*http.Response, error)

	mu       sync.Mutex
	requests []string
}

func newRecorder(t *testing.T) *recorder { return &recorder{t: t} }

func (r *recorder) wrap(next http.RoundTripper) http.RoundTripper {
	r.next = next
	return r
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	line := req.Method + " " + req.URL.RequestURI()
	r.mu.Lock()
	r.requests = append(r.requests, line)
	r.mu.Unlock()
	if req.Method != http.MethodGet {
		r.t.Errorf("eksdoctor issued a request that is not a GET: %s", line)
		return nil, fmt.Errorf("refused in test: %s", line)
	}
	if r.fail != nil {
		if resp, err := r.fail(req); resp != nil || err != nil {
			return resp, err
		}
	}
	return r.next.RoundTrip(req)
}

// matching returns the recorded requests whose request line contains every part.
func (r *recorder) matching(parts ...string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
next:
	for _, l := range r.requests {
		for _, p := range parts {
			if !strings.Contains(l, p) {
				continue next
			}
		}
		out = append(out, l)
	}
	return out
}

// checkReadOnly fails the test if any recorded request touched Secrets, or read a
// ConfigMap other than kube-system/aws-auth.
func (r *recorder) checkReadOnly(t *testing.T) {
	t.Helper()
	if len(r.requests) == 0 {
		t.Fatal("no request was recorded")
	}
	for _, l := range r.matching("secrets") {
		t.Errorf("eksdoctor requested Secrets: %s", l)
	}
	for _, l := range r.matching("configmaps") {
		if !strings.HasPrefix(l, "GET /api/v1/namespaces/kube-system/configmaps/aws-auth") {
			t.Errorf("eksdoctor read ConfigMaps other than kube-system/aws-auth: %s", l)
		}
	}
}

// statusResponse is an API server answer with only a status code, like a load
// balancer or an overloaded server gives.
func statusResponse(req *http.Request, code int) *http.Response {
	return &http.Response{
		StatusCode: code,
		Status:     fmt.Sprintf("%d %s", code, http.StatusText(code)),
		Header:     http.Header{"Content-Type": {"text/plain"}},
		Body:       io.NopCloser(strings.NewReader(http.StatusText(code))),
		Request:    req,
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
	}
}

// kubeconfig writes a kubeconfig for cfg with one context and returns its path.
func kubeconfig(t *testing.T, cfg *rest.Config, context string) string {
	t.Helper()
	data, err := testenv.Kubeconfig(cfg, context)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
