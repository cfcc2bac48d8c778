package sim

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// sortVerdicts orders as a stable sort by kind, then name, does: for the runs
// placement appends (Fargate, node groups, nodes, unseen, NodePools), for many
// short runs and for names out of order, equal names keeping their order.
func TestSortVerdictsIsStableByKindAndName(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	kinds := []cluster.CapacityKind{cluster.KindFargate, cluster.KindNodeGroup, cluster.KindNode, cluster.KindUnseen, cluster.KindNodePool}
	for trial := range 300 {
		var vs []Verdict
		for _, k := range kinds {
			n := r.IntN(6)
			if trial%3 == 0 {
				n = r.IntN(40)
			}
			for i := range n {
				name := fmt.Sprintf("%s-%03d", k, i)
				if trial%2 == 1 {
					name = fmt.Sprintf("%s-%03d", k, r.IntN(5))
				}
				vs = append(vs, Verdict{Source: &Source{Kind: k, Name: name}, Result: Result(len(vs))})
			}
		}
		if trial%5 == 4 {
			// Many short runs: kinds interleaved.
			r.Shuffle(len(vs), func(i, j int) { vs[i], vs[j] = vs[j], vs[i] })
		}
		want := slices.Clone(vs)
		slices.SortStableFunc(want, func(a, b Verdict) int {
			return cmp.Or(cmp.Compare(a.Source.Kind, b.Source.Kind), strings.Compare(a.Source.Name, b.Source.Name))
		})
		sortVerdicts(vs)
		for i := range vs {
			if vs[i].Source != want[i].Source || vs[i].Result != want[i].Result {
				t.Fatalf("trial %d: at %d got %v %q (%d), want %v %q (%d)", trial, i, vs[i].Source.Kind, vs[i].Source.Name, vs[i].Result, want[i].Source.Kind, want[i].Source.Name, want[i].Result)
			}
		}
	}
}

// Nodes judged together give each the verdict it gets judged alone: the kinds
// nodes are sorted into for a pod (taints with their effects, cordon, the
// labels the pod's node selection reads) never share an answer between nodes
// that answer differently. Nodes and pods are drawn from few labels, values,
// taints and tolerations, so that many nodes are alike in part.
func TestNodeKindsShareOnlyEqualVerdicts(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	effects := []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}
	for trial := range 200 {
		var nodes []*cluster.Node
		for i := range 12 {
			n := liveNode(fmt.Sprintf("n%02d", i), allocatable("4", "8Gi", 110))
			for _, k := range []string{"pool", "zone", "team"} {
				if v := pick("", "a", "b"); v != "" {
					n.Labels[k] = v
				}
			}
			if r.IntN(3) == 0 {
				n.Taints = append(n.Taints, corev1.Taint{Key: "dedicated", Value: pick("x", "y"), Effect: effects[r.IntN(len(effects))]})
			}
			n.Unschedulable = r.IntN(8) == 0
			nodes = append(nodes, n)
		}
		spec := corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}, NodeSelector: map[string]string{}}
		if k := pick("", "pool", "zone"); k != "" {
			spec.NodeSelector[k] = pick("a", "b")
		}
		if r.IntN(2) == 0 {
			op := []corev1.NodeSelectorOperator{corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist}[r.IntN(4)]
			req := corev1.NodeSelectorRequirement{Key: pick("team", "zone"), Operator: op}
			if op == corev1.NodeSelectorOpIn || op == corev1.NodeSelectorOpNotIn {
				req.Values = []string{pick("a", "b")}
			}
			spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{req}}}}}}
		}
		if r.IntN(2) == 0 {
			spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: pick("x", "y"), Effect: effects[r.IntN(len(effects))]}}
		}
		pod := &cluster.Pod{Object: &cluster.Object{APIVersion: "v1", Kind: "Pod", Namespace: "default", Name: "p"}, Spec: spec}
		together := New(&cluster.Model{Nodes: nodes}).PlacePod(pod)
		for _, v := range together.Verdicts {
			alone := New(&cluster.Model{Nodes: []*cluster.Node{v.Source.Node}}).PlacePod(pod)
			if len(alone.Verdicts) != 1 {
				t.Fatalf("alone: %d verdicts", len(alone.Verdicts))
			}
			a := alone.Verdicts[0]
			if v.Result != a.Result || fmt.Sprint(v.Reasons) != fmt.Sprint(a.Reasons) {
				t.Fatalf("trial %d: node %s (labels %v, taints %v, cordoned %t) judged with the others: %v %v; alone: %v %v", trial, v.Source.Name, v.Source.Node.Labels, v.Source.Node.Taints, v.Source.Node.Unschedulable, v.Result, v.Reasons, a.Result, a.Reasons)
			}
		}
	}
}

// VerdictTolerating gives, for each source, the verdict PlaceTolerating gives
// it: node groups, Fargate profiles, NodePools (one with the controller that
// cannot run in the steady phase), nodes and unseen capacity, in both phases,
// for a workload selected by Fargate and one that is not, tolerating or not
// the taints added.
func TestVerdictToleratingIsPlaceTolerating(t *testing.T) {
	t.Parallel()
	taint := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	group := &cluster.NodeGroup{Name: "system", Managed: true, InstanceTypes: []string{"m5.large"}, Taints: []corev1.Taint{controllerTaint}}
	gpu := &cluster.NodeGroup{Name: "gpu", Managed: true, InstanceTypes: []string{"g5.xlarge"}, Taints: []corev1.Taint{taint}}
	ctrl := deployment("karpenter", "kube-system", corev1.PodSpec{Containers: []corev1.Container{container("100m", "")}}, nil)
	ctrl.Component = "karpenter"
	m := &cluster.Model{
		NodeGroups:      []*cluster.NodeGroup{group, gpu},
		FargateProfiles: []*cluster.FargateProfile{{Name: "jobs", Selectors: []cluster.FargateSelector{{Namespace: "jobs"}}}},
		NodePools:       []*cluster.NodePool{nodePool("default", nil, nil), nodePool("tainted", map[string]string{"team": "a"}, []corev1.Taint{taint})},
		NodeClasses:     []*cluster.NodeClass{defaultClass},
		Nodes:           []*cluster.Node{liveNode("n1", allocatable("4", "8Gi", 110), taint), liveNode("n2", allocatable("1", "1Gi", 110))},
		Unseen:          []cluster.UnseenCapacity{{What: "a node group eksdoctor cannot read"}},
		Workloads:       []*cluster.Workload{ctrl},
	}
	m.Karpenter.Controller = ctrl
	s := New(m)
	add := []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	for _, ns := range []string{"default", "jobs"} {
		w := deployment("app", ns, corev1.PodSpec{Containers: []corev1.Container{container("2", "")}}, nil)
		for _, phase := range []cluster.Phase{cluster.Steady, cluster.Bootstrap} {
			for _, tol := range [][]corev1.Toleration{nil, add} {
				full := s.PlaceTolerating(w, phase, tol)
				if len(full.Verdicts) < 4 {
					t.Fatalf("%s %v: %d verdicts", ns, phase, len(full.Verdicts))
				}
				for _, want := range full.Verdicts {
					got, ok := s.VerdictTolerating(w, phase, tol, want.Source)
					if !ok || got.Result != want.Result || fmt.Sprint(got.Reasons) != fmt.Sprint(want.Reasons) || fmt.Sprint(got.InstanceTypes) != fmt.Sprint(want.InstanceTypes) {
						t.Errorf("%s %v %v: %s alone: %v %v %v (found %t); with the others: %v %v %v", ns, phase, tol, want.Source.Describe(), got.Result, got.Reasons, got.InstanceTypes, ok, want.Result, want.Reasons, want.InstanceTypes)
					}
				}
			}
		}
	}
}

// classMemo keeps placements while the verdicts it keeps stay within its
// bound; past it, a class asked for once is answered and let go, and kept
// from its second asking on. Whatever it keeps, a class's answer is the same.
func TestClassMemoKeepsWithinItsBound(t *testing.T) {
	t.Parallel()
	var c classMemo
	computed := map[string]int{}
	placement := func(k string, n int) func() *Placement {
		return func() *Placement {
			computed[k]++
			return &Placement{Verdicts: make([]Verdict, n)}
		}
	}
	big := keptVerdicts / 2
	for _, k := range []string{"a", "b"} {
		c.get(k, placement(k, big))
	}
	if c.kept != 2*big {
		t.Fatalf("kept %d verdicts, want %d", c.kept, 2*big)
	}
	// Beyond the bound: computed each time it is asked for once, then kept.
	first := c.get("c", placement("c", 10))
	if _, ok := c.m["c"]; ok {
		t.Fatal("a class asked for once past the bound was kept")
	}
	second := c.get("c", placement("c", 10))
	third := c.get("c", placement("c", 10))
	if computed["c"] != 2 || second != third || len(first.Verdicts) != len(third.Verdicts) {
		t.Fatalf("class c computed %d times (want 2), second and third answers shared: %t", computed["c"], second == third)
	}
	for _, k := range []string{"a", "b"} {
		c.get(k, placement(k, big))
		if computed[k] != 1 {
			t.Fatalf("kept class %s computed %d times", k, computed[k])
		}
	}
}

// Placements of classes the memo lets go hand their verdicts on once
// released, and what is placed, summarized and compared afterwards is what a
// simulator that keeps every class answers: released slices are reused, and
// the rankings that later placements refused alike share hold their own copy
// of the verdicts. A class asked for again is kept, and keeps its verdicts.
func TestReleasedVerdictsAreReusedWithoutChangingAnswers(t *testing.T) {
	t.Parallel()
	var nodes []*cluster.Node
	for i := range 40 {
		n := liveNode(fmt.Sprintf("n%02d", i), allocatable(fmt.Sprint(1+i%4), "8Gi", 110))
		n.Labels["team"] = []string{"a", "b", "c"}[i%3]
		nodes = append(nodes, n)
	}
	// Pods of one round differ from the other round's in a request no node
	// lacks: other classes, refused alike.
	pods := func(mem string) []*cluster.Pod {
		var out []*cluster.Pod
		for _, cpu := range []string{"500m", "1500m", "2500m", "3500m", "6"} {
			for _, team := range []string{"a", "b", "z"} {
				spec := corev1.PodSpec{Containers: []corev1.Container{container(cpu, mem)}, NodeSelector: map[string]string{"team": team}}
				out = append(out, &cluster.Pod{Object: &cluster.Object{APIVersion: "v1", Kind: "Pod", Namespace: "default", Name: "p-" + cpu + team + mem}, Spec: spec})
			}
		}
		return out
	}
	keeping := New(&cluster.Model{Nodes: nodes})
	releasing := New(&cluster.Model{Nodes: nodes})
	releasing.podClass.kept = keptVerdicts // every class from here on is past the bound
	check := func(p *cluster.Pod) *Placement {
		want := keeping.PlacePod(p)
		got := releasing.PlacePod(p)
		if got.Summary() != want.Summary() || got.NodeSummary() != want.NodeSummary() || fmt.Sprint(got.Grouped(5)) != fmt.Sprint(want.Grouped(5)) {
			t.Fatalf("pod %s: released placements answer\n%s\nwhere a kept one answers\n%s", p.Object.Name, got.Summary(), want.Summary())
		}
		for i := range want.Verdicts {
			g, w := got.Verdicts[i], want.Verdicts[i]
			if g.Source.Name != w.Source.Name || g.Result != w.Result || fmt.Sprint(g.Reasons) != fmt.Sprint(w.Reasons) {
				t.Fatalf("pod %s: verdict %d differs", p.Object.Name, i)
			}
		}
		return got
	}
	firsts := map[*Verdict]bool{}
	for _, mem := range []string{"", "1Mi", "2Mi"} {
		var placed []*Placement
		for _, p := range pods(mem) {
			got := check(p)
			if !got.own {
				t.Fatalf("pod %s: a class past the bound is not its caller's own", p.Object.Name)
			}
			placed = append(placed, got)
		}
		// Released together, once all are summarized: most released slices
		// are not reused by the next round before it ranks its refusals.
		for _, pl := range placed {
			firsts[&pl.Verdicts[:1][0]] = true
			releasing.Release(pl)
			if pl.Verdicts != nil {
				t.Fatal("a released placement keeps its verdicts")
			}
		}
	}
	next := releasing.verdicts(len(nodes))
	if cap(next) == 0 || !firsts[&next[:1][0]] {
		t.Fatal("no released slice was handed to a later placement")
	}
	again := check(pods("")[0])
	if again.own {
		t.Fatal("a class asked for a second time is not kept")
	}
	releasing.Release(again)
	if again.Verdicts == nil {
		t.Fatal("a kept class's verdicts were handed on")
	}
}
