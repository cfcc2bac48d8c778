package cli

import (
	"bytes"
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

// apiServer is the kube-apiserver shared by every test of the package. The
// live tests read the whole cluster and compare what they see, so they do not
// run in parallel.
var apiServer *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{CRDs: testenv.KarpenterV1}, func(e *testenv.Env) { apiServer = e }))
}

//go:embed testdata/cluster.yaml
var clusterYAML []byte

var (
	fixtureOnce sync.Once
	fixtureErr  error
	// fixtureNow is the clock of every live read: half an hour after the
	// fixture was created, so the Pending pods and the unregistered NodeClaim
	// have waited long enough to be reported. The API server stamps creation
	// and deletion with the real time, so the clock follows it.
	fixtureNow time.Time
)

// readyNode gives a node of the fixture 2 CPUs and the memory given (capacity,
// allocatable) and the Ready condition since then, as its kubelet would, and
// lifts the not-ready taint the API server puts on new nodes, as the node
// lifecycle controller (which does not run here) would.
func readyNode(ctx context.Context, cs kubernetes.Interface, name, memory, allocatable string, since metav1.Time) error {
	n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	n.Status.Capacity = corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse("2"), corev1.ResourceMemory: apiresource.MustParse(memory), corev1.ResourcePods: apiresource.MustParse("29")}
	n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: apiresource.MustParse("1930m"), corev1.ResourceMemory: apiresource.MustParse(allocatable), corev1.ResourcePods: apiresource.MustParse("29")}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", LastHeartbeatTime: since, LastTransitionTime: since}}
	if n, err = cs.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("node %s status: %w", name, err)
	}
	var taints []corev1.Taint
	for _, t := range n.Spec.Taints {
		if t.Key != corev1.TaintNodeNotReady {
			taints = append(taints, t)
		}
	}
	n.Spec.Taints = taints
	if _, err := cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("node %s taints: %w", name, err)
	}
	return nil
}

// liveFixture creates the state of testdata/cluster.yaml once, with the status
// and deletions the controllers of a real cluster would have produced.
func liveFixture(t *testing.T) {
	t.Helper()
	fixtureOnce.Do(func() { fixtureErr = createLiveFixture() })
	if fixtureErr != nil {
		t.Fatalf("create the test cluster state: %v", fixtureErr)
	}
}

func createLiveFixture() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	created := time.Now().UTC().Truncate(time.Second)
	fixtureNow = created.Add(30 * time.Minute)
	if _, err := apiServer.Apply(ctx, clusterYAML); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(apiServer.Config)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(apiServer.Config)
	if err != nil {
		return err
	}
	since := metav1.NewTime(created.Add(-time.Hour))

	for _, name := range []string{"ip-10-0-1-10.ec2.internal", "ip-10-0-2-20.ec2.internal", "fargate-ip-10-0-3-30.ec2.internal"} {
		if err := readyNode(ctx, cs, name, "8Gi", "7Gi", since); err != nil {
			return err
		}
	}

	podStatus := func(ns, name string, set func(*corev1.PodStatus)) error {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		set(&p.Status)
		if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("pod %s/%s status: %w", ns, name, err)
		}
		return nil
	}
	unschedulable := func(msg string) func(*corev1.PodStatus) {
		return func(s *corev1.PodStatus) {
			s.Phase = corev1.PodPending
			s.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: msg, LastTransitionTime: since}}
		}
	}
	for _, p := range []struct {
		ns, name string
		set      func(*corev1.PodStatus)
	}{
		// The controller crash-loops on the node group: it runs, but is never ready.
		{"kube-system", "karpenter-6b7f9d8c5-k8r2p", func(s *corev1.PodStatus) {
			s.Phase = corev1.PodRunning
			s.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: since}}
			s.ContainerStatuses = []corev1.ContainerStatus{{Name: "controller", Image: "public.ecr.aws/karpenter/controller:1.1.1", RestartCount: 9, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}
		}},
		{"kube-system", "coredns-5d78c9869d-x4t7z", unschedulable("0/3 nodes are available: 1 node(s) had untolerated taint {karpenter.sh/controller: true}.")},
		{"apps", "web-5d8f7c9b6-abcde", unschedulable("0/3 nodes are available: 1 node(s) had untolerated taint {karpenter.sh/controller: true}.")},
		{"apps", "web-5d8f7c9b6-fghij", unschedulable("0/3 nodes are available: 1 node(s) had untolerated taint {karpenter.sh/controller: true}.")},
		{"apps", "db-0", func(s *corev1.PodStatus) {
			s.Phase = corev1.PodRunning
			s.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: since}}
		}},
		{"apps", "cache-0", func(s *corev1.PodStatus) {
			s.Phase = corev1.PodPending
			s.ContainerStatuses = []corev1.ContainerStatus{{Name: "cache", Image: "redis:7", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}
		}},
	} {
		if err := podStatus(p.ns, p.name, p.set); err != nil {
			return err
		}
	}

	for _, name := range []string{"csi-1a2b3c4d5e6f", "csi-2b3c4d5e6f7a"} {
		va, err := cs.StorageV1().VolumeAttachments().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		va.Status = storagev1.VolumeAttachmentStatus{Attached: true}
		if _, err := cs.StorageV1().VolumeAttachments().UpdateStatus(ctx, va, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("volumeattachment %s status: %w", name, err)
		}
	}

	nodeClaims := dyn.Resource(schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"})
	ts := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	for name, status := range map[string]map[string]any{
		// Registered long ago, deleted with its NodePool's node below.
		"default-x7k2p": {
			"providerID": "aws:///us-east-1b/i-0fedcba9876543210",
			"nodeName":   "ip-10-0-2-20.ec2.internal",
			"conditions": []any{
				map[string]any{"type": "Launched", "status": "True", "reason": "Launched", "message": "", "lastTransitionTime": ts(created.Add(-2 * time.Hour))},
				map[string]any{"type": "Registered", "status": "True", "reason": "Registered", "message": "", "lastTransitionTime": ts(created.Add(-2 * time.Hour))},
				map[string]any{"type": "Initialized", "status": "True", "reason": "Initialized", "message": "", "lastTransitionTime": ts(created.Add(-2 * time.Hour))},
			},
		},
		// Launched twenty minutes before the read; its instance never joined.
		"default-q9w8e": {
			"providerID": "aws:///us-east-1a/i-0abcdef0123456789",
			"conditions": []any{
				map[string]any{"type": "Launched", "status": "True", "reason": "Launched", "message": "", "lastTransitionTime": ts(fixtureNow.Add(-20 * time.Minute))},
				// As Karpenter 1.14 gives them (observed with the real controllers).
				map[string]any{"type": "Registered", "status": "Unknown", "reason": "NodeNotFound", "message": "Node not registered with cluster", "lastTransitionTime": ts(fixtureNow.Add(-20 * time.Minute))},
				map[string]any{"type": "Initialized", "status": "Unknown", "reason": "AwaitingReconciliation", "message": "object is awaiting reconciliation", "lastTransitionTime": ts(fixtureNow.Add(-20 * time.Minute))},
			},
		},
	} {
		nc, err := nodeClaims.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if err := unstructured.SetNestedField(nc.Object, status, "status"); err != nil {
			return err
		}
		if _, err := nodeClaims.UpdateStatus(ctx, nc, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("nodeclaim %s status: %w", name, err)
		}
	}
	// Deleting an object that carries a finalizer only marks it: it stays, with
	// a deletionTimestamp, until a controller removes the finalizer, and no
	// Karpenter controller runs here.
	if err := nodeClaims.Delete(ctx, "default-x7k2p", metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete nodeclaim: %w", err)
	}
	if err := cs.CoreV1().Nodes().Delete(ctx, "ip-10-0-2-20.ec2.internal", metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("delete node: %w", err)
	}
	return nil
}

// kubeconfigFor writes a kubeconfig for cfg with one context, named "test" so
// that reports read with different credentials compare byte for byte.
func kubeconfigFor(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	data, err := testenv.Kubeconfig(cfg, "test")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// requestLog records every request the command line makes to the API server
// and refuses anything but a GET.
type requestLog struct {
	t    *testing.T
	mu   sync.Mutex
	seen []string
}

func (l *requestLog) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		line := req.Method + " " + req.URL.RequestURI()
		l.mu.Lock()
		l.seen = append(l.seen, line)
		l.mu.Unlock()
		if req.Method != http.MethodGet {
			l.t.Errorf("eksdoctor sent a request that is not a GET: %s", line)
			return nil, fmt.Errorf("refused by the test: %s", line)
		}
		return next.RoundTrip(req)
	})
}

func (l *requestLog) requests() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.seen...)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// liveRun is one in-process run of the command line against the test API
// server.
type liveRun struct {
	stdout, stderr string
	code           int
}

// runLive runs the command line as prog with the fixture's clock; log, when set,
// observes every request.
func runLive(t *testing.T, prog string, log *requestLog, terminal bool, args ...string) liveRun {
	t.Helper()
	return runLiveAt(t, fixtureNow, prog, log, terminal, args...)
}

// runLiveAt is runLive with the clock at now.
func runLiveAt(t *testing.T, now time.Time, prog string, log *requestLog, terminal bool, args ...string) liveRun {
	t.Helper()
	var stdout, stderr bytes.Buffer
	wd := t.TempDir()
	env := Env{
		Stdout: &stdout, Stderr: &stderr,
		Getenv:     func(string) string { return "" },
		Getwd:      func() (string, error) { return wd, nil },
		IsTerminal: func(w io.Writer) bool { return terminal && w == io.Writer(&stderr) },
		Now:        func() time.Time { return now },
	}
	if log != nil {
		env.WrapTransport = log.wrap
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code := Run(ctx, prog, args, env)
	return liveRun{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

func (r liveRun) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, strings.TrimSpace(r.stderr))
}
