package differential

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/testenv"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/source"
	"github.com/eksdoctor/eksdoctor/source/live"
)

var apiServer *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{}, func(e *testenv.Env) { apiServer = e }))
}

// TestKubeScheduler creates generated nodes and pods in the test API server,
// lets the real kube-scheduler place each pod, and asks eksdoctor, reading
// the same cluster through its live source, for its answer: every pod must
// get the same verdict, and every pod the scheduler cannot place the same
// "0/N nodes are available" message, word for word.
func TestKubeScheduler(t *testing.T) {
	n, seed, only, err := Settings(40)
	if err != nil {
		t.Fatal(err)
	}
	cs, kubeconfig := startScheduler(t)

	var compared, unschedulable, gated int
	var disagreements []string
	for i := range n {
		if only != nil && !only[i] {
			continue
		}
		sc := generateScenario(rand.New(rand.NewPCG(seed, uint64(i))), i)
		outs := runScenario(t, cs, kubeconfig, sc)
		for _, o := range outs {
			switch {
			case o.gated:
				gated++
			case !o.bound:
				unschedulable++
			}
			compared++
			if o.disagreement != "" {
				disagreements = append(disagreements, fmt.Sprintf("seed %d scenario %d, pod %s: %s\n%s", seed, i, o.pod, o.disagreement, sc.describe(o.pod)))
			}
		}
	}
	t.Logf("%d scenarios (seed %d): %d pods compared, %d the scheduler could not place, %d gated; %d disagreements",
		n, seed, compared, unschedulable, gated, len(disagreements))
	if compared == 0 {
		t.Fatal("no pod was compared")
	}
	if unschedulable == 0 || unschedulable == compared-gated {
		t.Errorf("the scenarios must exercise both verdicts: %d of %d pods unschedulable", unschedulable, compared-gated)
	}
	for i, d := range disagreements {
		if i == 10 {
			t.Errorf("and %d more disagreements", len(disagreements)-10)
			break
		}
		t.Error(d)
	}
}

// startScheduler runs kube-scheduler against the test API server, with the
// default profile, and returns an admin client and the kubeconfig both use.
func startScheduler(t *testing.T) (*kubernetes.Clientset, string) {
	t.Helper()
	bin, err := testenv.SchedulerPath(os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kc, err := testenv.Kubeconfig(apiServer.Config, "diff")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "kube-scheduler.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--kubeconfig="+kubeconfig, "--leader-elect=false", "--secure-port=0", "--v=1")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = log.Close()
		if t.Failed() {
			if data, err := os.ReadFile(log.Name()); err == nil && len(data) > 0 {
				t.Logf("kube-scheduler's log, last lines:\n%s", tail(string(data), 20))
			}
		}
	})
	cs, err := kubernetes.NewForConfig(apiServer.Config)
	if err != nil {
		t.Fatal(err)
	}
	// What every scenario's pods may name: their namespace, a RuntimeClass
	// with overhead.
	ctx := t.Context()
	if _, err := cs.NodeV1().RuntimeClasses().Create(ctx, &nodev1.RuntimeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "with-overhead"},
		Handler:    "runc",
		Overhead:   &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")}},
	}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "diff"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return cs, kubeconfig
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// scenario is one cluster state: nodes, pods already bound to them, and the
// pods to place, one after the other.
type scenario struct {
	index    int
	nodes    []*corev1.Node
	existing []*corev1.Pod
	pods     []*corev1.Pod
}

// describe renders what a disagreement needs to be reproduced and read.
func (sc *scenario) describe(pod string) string {
	var b strings.Builder
	for _, n := range sc.nodes {
		fmt.Fprintf(&b, "  node %s labels=%v taints=%v unschedulable=%t allocatable=%v\n", n.Name, n.Labels, n.Spec.Taints, n.Spec.Unschedulable, n.Status.Allocatable)
	}
	for _, p := range sc.existing {
		fmt.Fprintf(&b, "  bound pod %s on %s requests %v\n", p.Name, p.Spec.NodeName, p.Spec.Containers[0].Resources.Requests)
	}
	for _, p := range sc.pods {
		if p.Name == pod {
			data, _ := yaml.Marshal(p.Spec)
			b.WriteString("  spec:\n" + Indent(string(data), "    "))
		}
	}
	return b.String()
}

// outcome is one pod's comparison.
type outcome struct {
	pod          string
	bound, gated bool
	disagreement string
}

const markerResource = corev1.ResourceName("diff.eksdoctor.io/marker")

// runScenario creates the scenario's nodes, waits until the scheduler has
// seen all of them as they end up, creates the bound pods, then each pod to
// place in turn: the scheduler's answer is read from the pod, eksdoctor's from
// the cluster as its live source reads it at that moment. Pods placed stay
// (later pods are judged with them, by both). Everything is deleted at the end.
func runScenario(t *testing.T, cs *kubernetes.Clientset, kubeconfig string, sc *scenario) []outcome {
	t.Helper()
	defer cleanup(t, cs)
	createNodes(t, cs, sc)
	return placeAll(t, cs, kubeconfig, sc, waitForVerdict)
}

// createNodes creates the scenario's nodes as they end up and waits until
// the scheduler has seen them.
func createNodes(t *testing.T, cs *kubernetes.Clientset, sc *scenario) {
	t.Helper()
	ctx := t.Context()
	for _, n := range sc.nodes {
		status := n.Status
		created, err := cs.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("scenario %d: create node %s: %v", sc.index, n.Name, err)
		}
		// The API server's admission taints a new node not-ready; the
		// scenario's taints replace that, as the node lifecycle controller
		// would once the node is ready.
		created.Spec.Taints = n.Spec.Taints
		if created, err = cs.CoreV1().Nodes().Update(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("scenario %d: taint node %s: %v", sc.index, n.Name, err)
		}
		created.Status = status
		if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("scenario %d: node %s status: %v", sc.index, n.Name, err)
		}
	}
	waitForNodes(t, cs, sc)
}

// placeAll creates the bound pods, then each pod to place in turn, and
// compares the answers.
func placeAll(t *testing.T, cs *kubernetes.Clientset, kubeconfig string, sc *scenario, wait func(*testing.T, *kubernetes.Clientset, string) verdict) []outcome {
	t.Helper()
	ctx := t.Context()
	for _, p := range sc.existing {
		if _, err := cs.CoreV1().Pods("diff").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("scenario %d: create bound pod %s: %v", sc.index, p.Name, err)
		}
	}
	var outs []outcome
	for _, p := range sc.pods {
		if _, err := cs.CoreV1().Pods("diff").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("scenario %d: create pod %s: %v", sc.index, p.Name, err)
		}
		got := wait(t, cs, p.Name)
		outs = append(outs, compare(t, kubeconfig, p.Name, got))
	}
	return outs
}

// waitForNodes makes sure kube-scheduler's cache holds the scenario's nodes
// as they end up before any pod is placed: a probe pod that only the last
// node's last update can take (it names the node and asks for the marker
// resource that update gives) is bound once the scheduler has seen every
// earlier node event, which its node watch delivers in order. The probe is
// deleted before the scenario's pods are created, and the scheduler sees that
// deletion first on its pod watch.
func waitForNodes(t *testing.T, cs *kubernetes.Clientset, sc *scenario) {
	t.Helper()
	last := sc.nodes[len(sc.nodes)-1]
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%03d-probe", sc.index), Namespace: "diff"},
		Spec: corev1.PodSpec{
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{last.Name}}}}},
			}}},
			Containers: []corev1.Container{{Name: "c", Image: "probe", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{markerResource: resource.MustParse("1")},
				Limits:   corev1.ResourceList{markerResource: resource.MustParse("1")},
			}}},
		},
	}
	ctx := t.Context()
	if _, err := cs.CoreV1().Pods("diff").Create(ctx, probe, metav1.CreateOptions{}); err != nil {
		t.Fatalf("scenario %d: create probe: %v", sc.index, err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		p, err := cs.CoreV1().Pods("diff").Get(ctx, probe.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.NodeName != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("scenario %d: kube-scheduler did not bind the probe pod to %s within a minute: %v", sc.index, last.Name, p.Status.Conditions)
		}
		time.Sleep(20 * time.Millisecond)
	}
	deletePod(t, cs, probe.Name)
}

func deletePod(t *testing.T, cs *kubernetes.Clientset, name string) {
	t.Helper()
	zero := int64(0)
	if err := cs.CoreV1().Pods("diff").Delete(t.Context(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
}

// cleanup deletes every pod and node the scenario made.
func cleanup(t *testing.T, cs *kubernetes.Clientset) {
	t.Helper()
	ctx := t.Context()
	zero := int64(0)
	if err := cs.CoreV1().Pods("diff").DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
}

// verdict is the scheduler's answer for one pod.
type verdict struct {
	bound   bool
	gated   bool
	message string
}

// waitForVerdict waits until the scheduler has bound the pod, or marked it
// unschedulable (or gated) with its message.
func waitForVerdict(t *testing.T, cs *kubernetes.Clientset, name string) verdict {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		p, err := cs.CoreV1().Pods("diff").Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.NodeName != "" {
			return verdict{bound: true}
		}
		for _, c := range p.Status.Conditions {
			if c.Type != corev1.PodScheduled || c.Status != corev1.ConditionFalse {
				continue
			}
			switch c.Reason {
			case corev1.PodReasonUnschedulable:
				return verdict{message: c.Message}
			case corev1.PodReasonSchedulingGated:
				return verdict{gated: true, message: c.Message}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("kube-scheduler gave no verdict for pod %s within a minute: %v", name, p.Status.Conditions)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// compare reads the cluster through eksdoctor's live source and asks the
// simulator about the pod as the API server stored it.
func compare(t *testing.T, kubeconfig, name string, got verdict) outcome {
	t.Helper()
	o := outcome{pod: name, bound: got.bound, gated: got.gated}
	read, err := live.Load(t.Context(), live.Options{Kubeconfig: kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	m := source.Build(read)
	var pod *cluster.Pod
	for _, p := range m.Pods {
		if p.Object.Namespace == "diff" && p.Object.Name == name {
			pod = p
		}
	}
	if pod == nil {
		t.Fatalf("eksdoctor's live source did not read pod %s", name)
	}
	s := sim.New(m)
	if got.gated {
		// A gated pod is not the scheduler's to place: eksdoctor must not
		// call it unschedulable either.
		for _, f := range lint.Run(m, s, lint.Checks()) {
			if f.Object.Name == name || strings.Contains(f.Summary, name) {
				o.disagreement = fmt.Sprintf("the pod is gated (%q) but eksdoctor reports %s: %s", got.message, f.Check, f.Summary)
			}
		}
		return o
	}
	if pod.Spec.NodeName != "" {
		// Bound: eksdoctor judges it as it was before, against the nodes
		// without its own requests.
		pod.Spec.NodeName = ""
		m.Pods = without(m.Pods, pod)
		s = sim.New(m)
	}
	pl := s.PlacePod(pod)
	fits := false
	for _, v := range pl.Verdicts {
		if v.Source.Kind == cluster.KindNode && v.Result == sim.Fits {
			fits = true
		}
	}
	// "0/N nodes are available: <reasons>. <what preemption found>": the
	// reasons contain no ". ".
	want := got.message
	if i := strings.Index(want, ". "); i >= 0 {
		want = want[:i+1]
	}
	switch {
	case got.bound && !fits:
		o.disagreement = fmt.Sprintf("kube-scheduler bound the pod; eksdoctor says %s", pl.NodeSummary())
	case !got.bound && fits:
		o.disagreement = fmt.Sprintf("kube-scheduler: %s; eksdoctor says it fits", want)
	case !got.bound && pl.NodeSummary() != want:
		o.disagreement = fmt.Sprintf("reasons differ:\n  kube-scheduler: %s\n  eksdoctor:      %s", want, pl.NodeSummary())
	}
	return o
}

func without(ps []*cluster.Pod, p *cluster.Pod) []*cluster.Pod {
	var out []*cluster.Pod
	for _, q := range ps {
		if q != p {
			out = append(out, q)
		}
	}
	return out
}
