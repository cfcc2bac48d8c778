package karpenterv1beta1

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	fakecr "sigs.k8s.io/controller-runtime/pkg/client/fake"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/karpenter/pkg/apis/v1beta1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/fake"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	"sigs.k8s.io/yaml"
)

// repoRoot is the eksdoctor repository this module sits in.
var repoRoot = func() string {
	dir, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		panic(err)
	}
	return dir
}()

// eksdoctor is the command built from the repository for the run.
var eksdoctor string

func TestMain(m *testing.M) {
	// Karpenter logs through controller-runtime; the verdicts are what count.
	ctrllog.SetLogger(logr.Discard())
	dir, err := os.MkdirTemp("", "eksdoctor-v1beta1-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	eksdoctor = filepath.Join(dir, "eksdoctor")
	build := exec.Command("go", "build", "-o", eksdoctor, "./cmd/eksdoctor")
	build.Dir = repoRoot
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	code := 1
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "build eksdoctor: %v\n", err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// settings reads a run's size and seed as internal/differential.Settings
// does (this module cannot import it): EKSDOCTOR_DIFF_SCENARIOS,
// EKSDOCTOR_DIFF_SEED, and EKSDOCTOR_DIFF_ONLY (scenario numbers,
// comma-separated).
func settings(short int) (n int, seed uint64, only map[int]bool, err error) {
	n, seed = short, 1
	if v := os.Getenv("EKSDOCTOR_DIFF_SCENARIOS"); v != "" {
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			return 0, 0, nil, fmt.Errorf("EKSDOCTOR_DIFF_SCENARIOS=%q: want a positive number", v)
		}
	}
	if v := os.Getenv("EKSDOCTOR_DIFF_SEED"); v != "" {
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			return 0, 0, nil, fmt.Errorf("EKSDOCTOR_DIFF_SEED=%q: want a number", v)
		}
	}
	if v := os.Getenv("EKSDOCTOR_DIFF_ONLY"); v != "" {
		only = map[int]bool{}
		for _, f := range strings.Split(v, ",") {
			x, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return 0, 0, nil, fmt.Errorf("EKSDOCTOR_DIFF_ONLY=%q: want scenario numbers separated by commas", v)
			}
			only[x] = true
		}
	}
	return n, seed, only, nil
}

// TestKarpenterV1beta1Scheduler generates v1beta1 NodePools, DaemonSets and
// Deployments, asks eksdoctor (`explain -o json` on the YAML files, as a user
// runs it) and Karpenter v0.37's provisioning scheduler (Solve, in-process)
// whether each Deployment's pod gets a node: from all NodePools together
// (and from which NodePool), and from each NodePool alone.
func TestKarpenterV1beta1Scheduler(t *testing.T) {
	n, seed, only, err := settings(8)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := instanceTypes(); err != nil {
		t.Fatal(err)
	}
	ctx := injection.WithControllerName(t.Context(), "provisioner")
	results := make([][]string, n)
	counts := make([]stats, n)
	next := make(chan int, n)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				sc := generateScenario(rand.New(rand.NewPCG(seed, uint64(i))), i)
				results[i] = compareScenario(ctx, t, sc, &counts[i])
			}
		})
	}
	ran := 0
	for i := range n {
		if only == nil || only[i] {
			next <- i
			ran++
		}
	}
	close(next)
	wg.Wait()
	var st stats
	var disagreements []string
	for i := range n {
		st.add(counts[i])
		for _, d := range results[i] {
			disagreements = append(disagreements, fmt.Sprintf("seed %d scenario %d: %s", seed, i, d))
		}
	}
	t.Logf("%d scenarios (seed %d): %d workloads, %d Karpenter launches for (%d of them without preferences or several required terms: its NodePool compared), %d it cannot; %d NodePool verdicts compared (%d eksdoctor cannot tell), %d with minValues; %d disagreements",
		ran, seed, st.workloads, st.launched, st.chosen, st.workloads-st.launched, st.poolVerdicts, st.unknown, st.minValues, len(disagreements))
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

type stats struct {
	workloads, launched, chosen, poolVerdicts, unknown, minValues int
}

func (s *stats) add(o stats) {
	s.workloads += o.workloads
	s.launched += o.launched
	s.chosen += o.chosen
	s.poolVerdicts += o.poolVerdicts
	s.unknown += o.unknown
	s.minValues += o.minValues
}

// ec2NodeClass is the one node class every NodePool uses, as Karpenter
// v0.37 has it.
const ec2NodeClass = `apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiFamily: AL2
  role: KarpenterNodeRole-demo
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

// answer is eksdoctor's steady-phase verdict for one Deployment: the result
// from all sources, and each NodePool's.
type answer struct {
	result string
	pools  map[string]string
	text   []string
}

// explainAll runs `eksdoctor explain deployment/app DIR -o json`: every
// Deployment of the scenario, by namespace.
func explainAll(t *testing.T, dir string) map[string]*answer {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(eksdoctor, "explain", "deployment/app", dir, "-o", "json")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("eksdoctor explain: %v\n%s", err, stderr.String())
	}
	var doc struct {
		Explanations []struct {
			Object string `json:"object"`
			Phases []struct {
				Phase   string `json:"phase"`
				Result  string `json:"result"`
				Sources []struct {
					Kind    string   `json:"kind"`
					Name    string   `json:"name"`
					Result  string   `json:"result"`
					Reasons []string `json:"reasons"`
				} `json:"sources"`
			} `json:"phases"`
		} `json:"explanations"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("eksdoctor explain -o json: %v", err)
	}
	out := map[string]*answer{}
	for _, e := range doc.Explanations {
		parts := strings.Split(e.Object, "/")
		if len(parts) != 3 {
			t.Fatalf("eksdoctor explained %q, want Deployment/NAMESPACE/app", e.Object)
		}
		for _, ph := range e.Phases {
			if ph.Phase != "steady" {
				continue
			}
			a := &answer{result: ph.Result, pools: map[string]string{}}
			for _, s := range ph.Sources {
				if s.Kind == "nodepool" {
					a.pools[s.Name] = s.Result
					a.text = append(a.text, fmt.Sprintf("%s %s: %s", s.Name, s.Result, strings.Join(s.Reasons, "; ")))
				}
			}
			out[parts[1]] = a
		}
	}
	return out
}

func compareScenario(ctx context.Context, t *testing.T, sc *scenario, st *stats) []string {
	t.Helper()
	for _, np := range sc.nodePools {
		if err := np.RuntimeValidate(); err != nil {
			t.Fatalf("scenario %d: generated NodePool %s is not valid: %v", sc.index, np.Name, err)
		}
	}
	answers := explainAll(t, writeScenario(t, sc))
	var dsPods []*corev1.Pod
	for _, ds := range sc.daemonSets {
		// What Karpenter v0.37's provisioner makes of a DaemonSet with no pod yet.
		dsPods = append(dsPods, &corev1.Pod{Spec: *ds.Spec.Template.Spec.DeepCopy()})
	}
	// The provisioner's order: by weight, then by name from the end.
	list := &v1beta1.NodePoolList{}
	for _, np := range sc.nodePools {
		list.Items = append(list.Items, *np)
	}
	list.OrderByWeight()
	var ordered []*v1beta1.NodePool
	for i := range list.Items {
		ordered = append(ordered, &list.Items[i])
	}
	var out []string
	for _, d := range sc.deployments {
		a := answers[d.Namespace]
		if a == nil {
			t.Fatalf("scenario %d: eksdoctor explained no Deployment %s/app", sc.index, d.Namespace)
		}
		pod := defaultedPod(d)
		st.workloads++
		launched, chosen, kerr := solve(ctx, t, ordered, dsPods, pod)
		if launched {
			st.launched++
			if !prefers(d, sc.nodePools) {
				st.chosen++
			}
		}
		// eksdoctor's answer from the NodePools (the configuration declares
		// no other capacity), and the NodePool Karpenter tries first of
		// those it says fit.
		fits, unknown, first := false, false, ""
		for _, np := range ordered {
			switch a.pools[np.Name] {
			case "fits":
				if !fits && !unknown {
					first = np.Name
				}
				fits = true
			case "unknown":
				unknown = true
			}
		}
		switch {
		case fits != launched && !(unknown && !fits):
			out = append(out, fmt.Sprintf("%s: Karpenter launches a node: %t (%v); eksdoctor: %s\n%s", d.Namespace, launched, kerr, strings.Join(a.text, "\n    "), describe(sc, d)))
			continue
		case launched && !prefers(d, sc.nodePools) && first != chosen:
			// Karpenter first holds a pod to its preferences (preferred
			// terms, PreferNoSchedule taints), which may pass over a
			// heavier NodePool that fits: without them, it launches from
			// the first NodePool in its order that fits.
			out = append(out, fmt.Sprintf("%s: Karpenter launches from NodePool %s; eksdoctor's first fitting NodePool is %s: %s\n%s", d.Namespace, chosen, first, strings.Join(a.text, "\n    "), describe(sc, d)))
		}
		for _, np := range sc.nodePools {
			v, ok := a.pools[np.Name]
			if !ok {
				out = append(out, fmt.Sprintf("%s: eksdoctor gives no verdict for NodePool %s", d.Namespace, np.Name))
				continue
			}
			st.poolVerdicts++
			if slices.ContainsFunc(np.Spec.Template.Spec.Requirements, func(r v1beta1.NodeSelectorRequirementWithMinValues) bool { return r.MinValues != nil }) {
				st.minValues++
			}
			if v == "unknown" {
				st.unknown++
				continue
			}
			ok, _, kerr := solve(ctx, t, []*v1beta1.NodePool{np}, dsPods, pod)
			if (v == "fits") != ok {
				out = append(out, fmt.Sprintf("%s, NodePool %s alone: Karpenter launches a node: %t (%v); eksdoctor: %s\n%s", d.Namespace, np.Name, ok, kerr, strings.Join(a.text, "\n    "), describe(sc, d)))
			}
		}
	}
	return out
}

// prefers reports whether Karpenter tries the pod with preferences first:
// preferred node-affinity terms, the first of several required terms (it
// moves to the next only when the first cannot be met), or a
// PreferNoSchedule taint of a NodePool.
func prefers(d *appsv1.Deployment, pools []*v1beta1.NodePool) bool {
	if a := d.Spec.Template.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		if len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0 {
			return true
		}
		if r := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution; r != nil && len(r.NodeSelectorTerms) > 1 {
			return true
		}
	}
	return slices.ContainsFunc(pools, func(np *v1beta1.NodePool) bool {
		return slices.ContainsFunc(np.Spec.Template.Spec.Taints, func(t corev1.Taint) bool { return t.Effect == corev1.TaintEffectPreferNoSchedule })
	})
}

// defaultedPod is the pod the API server makes of the Deployment's template:
// a container's limits stand for the requests it does not write.
func defaultedPod(d *appsv1.Deployment) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: *d.Spec.Template.ObjectMeta.DeepCopy(), Spec: *d.Spec.Template.Spec.DeepCopy()}
	pod.Name, pod.Namespace = "app-0", d.Namespace
	pod.UID = types.UID(d.Namespace + "/app")
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			res := &cs[i].Resources
			for name, q := range res.Limits {
				if _, ok := res.Requests[name]; !ok {
					if res.Requests == nil {
						res.Requests = corev1.ResourceList{}
					}
					res.Requests[name] = q.DeepCopy()
				}
			}
		}
	}
	return pod
}

// solve runs Karpenter v0.37's scheduler on one pod over NodePools in the
// order given, and reports whether it would launch a node for it and from
// which NodePool (else the pod's error).
func solve(ctx context.Context, t *testing.T, pools []*v1beta1.NodePool, dsPods []*corev1.Pod, pod *corev1.Pod) (bool, string, error) {
	t.Helper()
	its, _ := instanceTypes()
	byPool := map[string][]*cloudprovider.InstanceType{}
	for _, np := range pools {
		byPool[np.Name] = its
	}
	kube := fakecr.NewFakeClient()
	clk := &clock.RealClock{}
	cp := fake.NewCloudProvider()
	cp.InstanceTypes = its
	cl := state.NewCluster(clk, kube, cp)
	pods := []*corev1.Pod{pod.DeepCopy()}
	topology, err := scheduling.NewTopology(ctx, kube, cl, nil, pods)
	if err != nil {
		t.Fatal(err)
	}
	var ds []*corev1.Pod
	for _, p := range dsPods {
		ds = append(ds, p.DeepCopy())
	}
	s := scheduling.NewScheduler(ctx, kube, pools, cl, nil, topology, byPool, ds, events.NewRecorder(&record.FakeRecorder{}))
	res := s.Solve(ctx, pods)
	for p, e := range res.PodErrors {
		if p.UID == pod.UID {
			return false, "", e
		}
	}
	for _, nc := range res.NewNodeClaims {
		if slices.ContainsFunc(nc.Pods, func(p *corev1.Pod) bool { return p.UID == pod.UID }) {
			return true, nc.NodePoolName, nil
		}
	}
	t.Fatalf("Karpenter neither placed pod %s nor gave an error for it", pod.Name)
	return false, "", nil
}

func describe(sc *scenario, d *appsv1.Deployment) string {
	var b strings.Builder
	for _, np := range sc.nodePools {
		data, _ := yaml.Marshal(np.Spec)
		fmt.Fprintf(&b, "  NodePool %s:\n%s", np.Name, indent(string(data), "    "))
	}
	for _, ds := range sc.daemonSets {
		data, _ := yaml.Marshal(ds.Spec.Template.Spec)
		fmt.Fprintf(&b, "  DaemonSet %s:\n%s", ds.Name, indent(string(data), "    "))
	}
	data, _ := yaml.Marshal(d.Spec.Template.Spec)
	fmt.Fprintf(&b, "  pod:\n%s", indent(string(data), "    "))
	return b.String()
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}
