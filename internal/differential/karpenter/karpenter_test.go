package karpenter

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	"sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/test"
	"sigs.k8s.io/karpenter/pkg/utils/daemonset"
	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/differential"
	"github.com/eksdoctor/eksdoctor/internal/testenv"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/source"
)

var apiServer *testenv.Env

// The API server turns each Deployment's template into the pod Karpenter
// sees (defaulting: limits copied into requests, default tolerations), by a
// dry-run create.
func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{}, func(e *testenv.Env) { apiServer = e }))
}

// TestKarpenterScheduler generates NodePools, DaemonSets and Deployments,
// asks eksdoctor (the configuration read from YAML files, as `check` reads
// it) and Karpenter's provisioning scheduler (Solve, in-process) whether each
// Deployment's pod gets a node, from all NodePools together and from each
// NodePool alone, and compares the verdicts and the kind of the first reason.
func TestKarpenterScheduler(t *testing.T) {
	n, seed, only, err := differential.Settings(8)
	if err != nil {
		t.Fatal(err)
	}
	ctx := options.ToContext(injection.WithControllerName(t.Context(), "provisioner"), test.Options())
	cs := namespaces(t)
	// Scenarios are independent: they run side by side, one per processor,
	// and their results are gathered in scenario order. The queue is filled
	// at once: a worker stopped by a failure (t.Fatal ends its goroutine)
	// leaves the others to finish.
	results := make([][]string, n)
	counts := make([]stats, n)
	next := make(chan int, n)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				r := rand.New(rand.NewPCG(seed, uint64(i)))
				sc := generateScenario(r, i)
				if autoMode {
					sc = toAutoMode(r, sc)
				}
				results[i] = compareScenario(ctx, t, cs, sc, &counts[i])
			}
		})
	}
	for i := range n {
		if only == nil || only[i] {
			next <- i
		}
	}
	close(next)
	wg.Wait()
	var st stats
	var disagreements []string
	ran := 0
	for i := range n {
		if only == nil || only[i] {
			ran++
		}
		st.add(counts[i])
		for _, d := range results[i] {
			disagreements = append(disagreements, fmt.Sprintf("seed %d scenario %d: %s", seed, i, d))
		}
	}
	what := "self-managed"
	if autoMode {
		what = "EKS Auto Mode"
	}
	t.Logf("%s: %d scenarios (seed %d): %d workloads, %d Karpenter launches for, %d it cannot (%d messages compared); %d NodePool verdicts compared (%d eksdoctor cannot tell), %d NodePool reasons compared; of the messages and reasons, %d equal once what Karpenter words in map order is set aside; %d disagreements",
		what, ran, seed, st.workloads, st.launched, st.workloads-st.launched, st.messages, st.poolVerdicts, st.unknown, st.reasons, st.mapOrder, len(disagreements))
	if st.launched == 0 || st.launched == st.workloads {
		t.Errorf("the scenarios must exercise both verdicts: Karpenter launches for %d of %d workloads", st.launched, st.workloads)
	}
	for i, d := range disagreements {
		if i == maxShown {
			t.Errorf("and %d more disagreements", len(disagreements)-maxShown)
			break
		}
		t.Error(d)
	}
}

// maxShown is how many disagreements a failure lists in full
// (EKSDOCTOR_DIFF_SHOW raises it).
var maxShown = func() int {
	if n, err := strconv.Atoi(os.Getenv("EKSDOCTOR_DIFF_SHOW")); err == nil {
		return n
	}
	return 15
}()

// namespaces makes the namespaces the scenarios use and returns a client.
func namespaces(t *testing.T) *kubernetes.Clientset {
	t.Helper()
	cs, err := kubernetes.NewForConfig(apiServer.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"apps", "kube-system"} {
		if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	return cs
}

type stats struct {
	workloads, launched, poolVerdicts, unknown, reasons, messages int
	// mapOrder counts the messages equal only once what Karpenter words in
	// map order is set aside.
	mapOrder int
}

func (s *stats) add(o stats) {
	s.workloads += o.workloads
	s.launched += o.launched
	s.poolVerdicts += o.poolVerdicts
	s.unknown += o.unknown
	s.reasons += o.reasons
	s.messages += o.messages
	s.mapOrder += o.mapOrder
}

// ec2NodeClass is the one node class every NodePool uses; it is ready.
const ec2NodeClass = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms:
  - alias: al2023@latest
  subnetSelectorTerms:
  - tags:
      karpenter.sh/discovery: demo
  securityGroupSelectorTerms:
  - tags:
      karpenter.sh/discovery: demo
`

// writeScenario writes the scenario as the manifests a user keeps.
func writeScenario(t *testing.T, sc *scenario) string {
	t.Helper()
	dir := t.TempDir()
	docs := []string{ec2NodeClass}
	if autoMode {
		docs = []string{autoModeNodeClass}
	}
	add := func(o any) {
		data, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(data))
	}
	for _, np := range sc.nodePools {
		add(np)
	}
	for _, ds := range sc.daemonSets {
		add(ds)
	}
	for _, d := range sc.deployments {
		add(d)
	}
	if err := os.WriteFile(filepath.Join(dir, "cluster.yaml"), []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func compareScenario(ctx context.Context, t *testing.T, cs *kubernetes.Clientset, sc *scenario, st *stats) []string {
	t.Helper()
	dir := writeScenario(t, sc)
	clusters, err := source.Load([]string{dir}, source.Options{})
	if err != nil || len(clusters) != 1 {
		t.Fatalf("scenario %d: load: %v (%d clusters)", sc.index, err, len(clusters))
	}
	m := clusters[0].Model
	s := sim.New(m)
	workloads := map[string]*cluster.Workload{}
	for _, w := range m.Workloads {
		workloads[w.Object.Kind+"/"+w.Object.Name] = w
	}
	var dsPods []*corev1.Pod
	for _, ds := range sc.daemonSets {
		dsPods = append(dsPods, daemonset.PodForDaemonSet(ds))
	}
	pools := slices.Clone(sc.nodePools)
	var out []string
	for _, d := range sc.deployments {
		w := workloads["Deployment/"+d.Name]
		if w == nil {
			t.Fatalf("scenario %d: eksdoctor read no Deployment %s", sc.index, d.Name)
		}
		pod := createdPod(ctx, t, cs, d)
		pl := s.Place(w, cluster.Steady)
		st.workloads++
		launched, kerr := solve(ctx, t, pools, dsPods, pod)
		if launched {
			st.launched++
		}
		// eksdoctor's answer from the NodePools (the configuration declares
		// no other capacity).
		fits, unknown := false, false
		for _, v := range pl.Verdicts {
			if v.Source.Kind == cluster.KindNodePool {
				fits = fits || v.Result == sim.Fits
				unknown = unknown || v.Result == sim.Unknown
			}
		}
		if fits != launched && !(unknown && !fits) {
			var alone []string
			for _, np := range pools {
				ok, e := solve(ctx, t, []*karpv1.NodePool{np}, dsPods, pod)
				alone = append(alone, fmt.Sprintf("%s alone: %t (%v)", np.Name, ok, e))
			}
			out = append(out, fmt.Sprintf("%s: Karpenter launches a node: %t (%v); eksdoctor: %s\n  %s\n%s", d.Name, launched, kerr, strings.Join(pl.Explain(), "; "), strings.Join(alone, "\n  "), describe(sc, d)))
			continue
		}
		// Karpenter's message for the pod, word for word.
		if !launched && !unknown {
			st.messages++
			if !sameWords(kerr.Error(), pl.KarpenterMessage(), d, st) {
				out = append(out, fmt.Sprintf("%s: messages differ:\n  Karpenter: %v\n  eksdoctor: %s\n%s", d.Name, kerr, pl.KarpenterMessage(), describe(sc, d)))
			}
		}
		for _, np := range pools {
			v := verdictOf(pl, np.Name)
			if v == nil {
				out = append(out, fmt.Sprintf("%s: eksdoctor gives no verdict for NodePool %s", d.Name, np.Name))
				continue
			}
			st.poolVerdicts++
			ok, kerr := solve(ctx, t, []*karpv1.NodePool{np}, dsPods, pod)
			if v.Result == sim.Unknown {
				st.unknown++
				continue
			}
			if (v.Result == sim.Fits) != ok {
				out = append(out, fmt.Sprintf("%s, NodePool %s alone: Karpenter launches a node: %t (%v); eksdoctor: %s\n%s", d.Name, np.Name, ok, kerr, v.Line(), describe(sc, d)))
				continue
			}
			if ok {
				continue
			}
			// The NodePool's reason, in Karpenter's words.
			st.reasons++
			alone := &sim.Placement{Phase: cluster.Steady, Verdicts: []sim.Verdict{*v}}
			if !sameWords(kerr.Error(), alone.KarpenterMessage(), d, st) {
				out = append(out, fmt.Sprintf("%s, NodePool %s alone: reasons differ:\n  Karpenter: %v\n  eksdoctor: %s\n%s", d.Name, np.Name, kerr, alone.KarpenterMessage(), describe(sc, d)))
			}
		}
	}
	return out
}

func verdictOf(pl *sim.Placement, pool string) *sim.Verdict {
	for i := range pl.Verdicts {
		if v := &pl.Verdicts[i]; v.Source.Kind == cluster.KindNodePool && v.Source.Name == pool {
			return v
		}
	}
	return nil
}

// createdPod is the pod the API server makes of the Deployment's template.
func createdPod(ctx context.Context, t *testing.T, cs *kubernetes.Clientset, d *appsv1.Deployment) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: d.Spec.Template.ObjectMeta, Spec: d.Spec.Template.Spec}
	pod.Name, pod.Namespace = d.Name+"-0", d.Namespace
	created, err := cs.CoreV1().Pods(d.Namespace).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("dry-run create of %s's pod: %v", d.Name, err)
	}
	created.UID = types.UID(d.Namespace + "/" + d.Name)
	return created
}

// solve runs Karpenter's scheduler on one pod, with the NodePools ordered
// as the provisioner orders them (by weight, then by name from the end), and reports whether it would launch
// a node for it (and else the pod's error).
func solve(ctx context.Context, t *testing.T, pools []*karpv1.NodePool, dsPods []*corev1.Pod, pod *corev1.Pod) (bool, error) {
	t.Helper()
	return solveWithVolumes(ctx, t, pools, dsPods, pod, nil)
}

// undefinedLabel is Karpenter's error for a custom label a NodePool does not
// define, with its guess at a typo.
var undefinedLabel = regexp.MustCompile(`label "([^"]+)" does not have known values( \(typo of "[^"]+"\?\))?`)

// normalize takes out of a message what Karpenter words in Go's map order
// (see "Deliberate differences" in docs/checks/pod-unschedulable.md): which
// of several undefined custom labels it names (and so its typo guess), and
// the order of the keys whose values do not intersect. A label named must
// still be one the pod requires; else it stays in the text, to differ.
func normalize(msg string, d *appsv1.Deployment) string {
	required := podLabelKeys(d)
	msg = undefinedLabel.ReplaceAllStringFunc(msg, func(m string) string {
		if key := undefinedLabel.FindStringSubmatch(m)[1]; required[key] {
			return `label <a custom label the pod requires> does not have known values`
		}
		return m
	})
	// "incompatible requirements, key a, ...; key b, ..." with the keys sorted.
	parts := strings.Split(msg, "; ")
	for i := 0; i < len(parts); i++ {
		head := "incompatible requirements, "
		if strings.HasPrefix(parts[i], "incompatible volume requirements, ") {
			head = "incompatible volume requirements, "
		}
		if !strings.HasPrefix(parts[i], head+"key ") {
			continue
		}
		j := i + 1
		for j < len(parts) && strings.HasPrefix(parts[j], "key ") {
			j++
		}
		parts[i] = strings.TrimPrefix(parts[i], head)
		slices.Sort(parts[i:j])
		parts[i] = head + parts[i]
		i = j - 1
	}
	return strings.Join(parts, "; ")
}

// sameWords reports whether eksdoctor's message is Karpenter's: word for
// word, or else once what Karpenter words in map order is set aside.
func sameWords(karpenter, eksdoctor string, d *appsv1.Deployment, st *stats) bool {
	if karpenter == eksdoctor {
		return true
	}
	// Where both name the same label, its typo guess must be the same.
	k, e := undefinedLabel.FindAllStringSubmatch(karpenter, -1), undefinedLabel.FindAllStringSubmatch(eksdoctor, -1)
	for i := range min(len(k), len(e)) {
		if k[i][1] == e[i][1] && k[i][2] != e[i][2] {
			return false
		}
	}
	if normalize(karpenter, d) == normalize(eksdoctor, d) {
		st.mapOrder++
		return true
	}
	return false
}

// podLabelKeys are the node labels a Deployment's pods select on.
func podLabelKeys(d *appsv1.Deployment) map[string]bool {
	keys := map[string]bool{}
	for k := range d.Spec.Template.Spec.NodeSelector {
		keys[k] = true
	}
	if a := d.Spec.Template.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		if req := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
			for _, t := range req.NodeSelectorTerms {
				for _, e := range t.MatchExpressions {
					keys[e.Key] = true
				}
			}
		}
		for _, p := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			for _, e := range p.Preference.MatchExpressions {
				keys[e.Key] = true
			}
		}
	}
	return keys
}

func describe(sc *scenario, d *appsv1.Deployment) string {
	var b strings.Builder
	for _, np := range sc.nodePools {
		data, _ := yaml.Marshal(np.Spec)
		fmt.Fprintf(&b, "  NodePool %s:\n%s", np.Name, differential.Indent(string(data), "    "))
	}
	for _, ds := range sc.daemonSets {
		data, _ := yaml.Marshal(ds.Spec.Template.Spec)
		fmt.Fprintf(&b, "  DaemonSet %s:\n%s", ds.Name, differential.Indent(string(data), "    "))
	}
	data, _ := yaml.Marshal(d.Spec.Template.Spec)
	fmt.Fprintf(&b, "  pod:\n%s", differential.Indent(string(data), "    "))
	return b.String()
}
