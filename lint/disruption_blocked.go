package lint

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/write"
)

// disruption-blocked: nodes Karpenter can never disrupt, because a pod on them
// may never be evicted (a PodDisruptionBudget that allows no eviction, the
// do-not-disrupt annotation) or because the NodePool's disruption budget never
// lets a node go.

var disruptionBlocked = &Check{
	ID:       "disruption-blocked",
	Title:    "Nodes Karpenter can never disrupt: consolidation, expiry, drift and destroy wait on a drain that cannot finish",
	Family:   "F8",
	Severity: Warning,
	Doc: Doc{
		What:        "Something that keeps Karpenter from ever disrupting the nodes of a NodePool, with the NodePools it pins: a PodDisruptionBudget (policy/v1 or v1beta1) that allows no eviction even with every pod healthy — `maxUnavailable: 0` or `\"0%\"`, or a `minAvailable` (a number, or a percentage rounded up) at or above the replicas of the Deployments, StatefulSets and ReplicaSets it selects in its namespace (spec.replicas, 1 when unset; an HorizontalPodAutoscaler's minReplicas when one scales the workload), `\"100%\"`, or `minAvailable: 1` over a single replica; in a running cluster, a budget whose status says it allows no disruption although every pod it expects is healthy (desiredHealthy equal to expectedPods), read on the nodes its pods run on. A pod template (or, in a running cluster, a running pod) annotated `karpenter.sh/do-not-disrupt: \"true\"` (Karpenter v0.32 and later; `karpenter.sh/do-not-evict: \"true\"` for v0.31 and earlier), or a NodePool template or Node annotated so. A NodePool disruption budget with `nodes: \"0\"` (or `\"0%\"`) with no schedule, for every reason (no `reasons`, or all of Underutilized, Empty and Drifted); with a schedule it is an info, since it opens at other times. The NodePools a workload pins are those its pods fit (as `explain` shows them), or in a running cluster those of the nodes they run on (the karpenter.sh/nodepool label). The detail says what the Karpenter version in use still does: in v1, expiry and deletion still start, but their drain waits for the pods — forever when the NodePool sets no `terminationGracePeriod`.",
		Why:         "Karpenter evicts pods through the Eviction API, which answers 429 `Cannot evict pod as it would violate the pod's disruption budget.` while the budget allows nothing, and never evicts a do-not-disrupt pod. Consolidation and drift skip such nodes (`Pdb prevents pod evictions (PodDisruptionBudget=[ns/name])`, `Pod has \"karpenter.sh/do-not-disrupt\" annotation (Pod=ns/name)` in the DisruptionBlocked events), so empty or underused nodes keep running and drifted ones keep an old AMI; a budget of zero nodes says `No allowed disruptions due to blocking budget`. Expiry, `kubectl delete nodepool` and `terraform destroy` delete the NodeClaims, whose karpenter.sh/termination finalizer waits for the drain: without a terminationGracePeriod it never ends, and the destroy hangs.",
		Fix:         "Let the budget allow one eviction: `maxUnavailable: 1`, or a `minAvailable` below the replicas (one replica cannot be protected by a budget: run two, or accept the restart). Give the NodePool's budget a share of nodes (`nodes: \"10%\"`) or a schedule. Keep do-not-disrupt for pods that finish (Jobs), and set `spec.template.spec.terminationGracePeriod` on NodePools (Karpenter v1) so that a drain ends: after it, Karpenter deletes the pods that still hold the node.",
		Differences: "A PodDisruptionBudget whose workloads' replicas are not known (rendered from values not known before apply) is not judged; an HorizontalPodAutoscaler's minReplicas is taken as the replicas at which the budget blocks. A do-not-disrupt annotation with a duration (`\"1h\"`) is not reported: it ends. Pods of Jobs and CronJobs, and bare pods that do not restart, are not reported: they finish, and then the node can go, which is what the annotation is for.",
	},
	Requires: []*Fact{disruptionBlocksFact},
	Run:      runDisruptionBlocked,
}

// disruptionBlocksFact is every disruption block, decided once for the check
// and for the teardown hazards.
var disruptionBlocksFact = &Fact{
	Name:    "disruption blocks",
	compute: func(fp *factPass) any { return DisruptionBlocks(fp.Sim) },
}

// BlockCause tells the causes of a disruption block apart.
type BlockCause int

const (
	_ BlockCause = iota
	// BlockPDB: a PodDisruptionBudget allows no eviction.
	BlockPDB
	// BlockDoNotDisrupt: pods (or nodes) carry the do-not-disrupt annotation.
	BlockDoNotDisrupt
	// BlockBudget: a NodePool's disruption budget allows no node.
	BlockBudget
)

func (c BlockCause) String() string {
	switch c {
	case BlockPDB:
		return "pod-disruption-budget"
	case BlockDoNotDisrupt:
		return "do-not-disrupt"
	case BlockBudget:
		return "nodepool-budget"
	}
	return "invalid"
}

// DisruptionBlock is one thing that keeps Karpenter from disrupting nodes.
type DisruptionBlock struct {
	Cause BlockCause
	// Object blocks: the PodDisruptionBudget, the annotated workload, pod,
	// NodePool or Node, the NodePool of a budget.
	Object *cluster.Object
	// Path is the field that blocks.
	Path string
	// Why says why it blocks, in eksdoctor's words; Karpenter what Karpenter
	// says of it.
	Why       string
	Karpenter string
	// Workloads are what owns the pods it protects.
	Workloads []cluster.ObjectRef
	// NodePools are the NodePools whose nodes it pins, sorted; Nodes, in a
	// running cluster, the nodes.
	NodePools []string
	Nodes     []string
	// Forever are those of NodePools whose drain never ends: no
	// terminationGracePeriod (or a Karpenter version without it).
	Forever []string
	// Long are those whose drain ends after a terminationGracePeriod of more
	// than a day, with it ("default: 48h").
	Long []string
	// Scheduled marks a budget that applies on a schedule only.
	Scheduled bool
	// Blocks says what Karpenter still does and does not, for the version in use.
	Blocks string

	// For the fixes.
	pdbField string // "maxUnavailable" or "minAvailable"
	replicas int
	budget   int  // index of the budget among spec.disruption.budgets
	v1       bool // the Karpenter version in use is v1 or later
}

// Ref is the blocking object's reference.
func (b DisruptionBlock) Ref() cluster.ObjectRef { return b.Object.Ref() }

// Pins reports whether the block pins nodes of a NodePool.
func (b DisruptionBlock) Pins(pool string) bool { return slices.Contains(b.NodePools, pool) }

// Protects reports whether the block protects the pods of a workload (or is
// the workload's own annotation).
func (b DisruptionBlock) Protects(ref cluster.ObjectRef) bool {
	return b.Ref() == ref || slices.Contains(b.Workloads, ref)
}

// DrainWaits says how long a drain of a NodePool's nodes waits on the block:
// "forever", a duration, or "" when it is not a pod-level block.
func (b DisruptionBlock) DrainWaits(pool string) string {
	if b.Cause == BlockBudget {
		return ""
	}
	if slices.Contains(b.Forever, pool) {
		return "forever"
	}
	for _, l := range b.Long {
		if name, d, ok := strings.Cut(l, ": "); ok && name == pool {
			return d
		}
	}
	return ""
}

// blockIndex is what deciding the blocks looks up many times: a running
// cluster's nodes by name and pods by namespace, the HorizontalPodAutoscalers
// by what they scale.
type blockIndex struct {
	nodes map[string]*cluster.Node
	pods  map[string][]*cluster.Pod
	hpas  map[cluster.ObjectRef]*cluster.Object
}

func newBlockIndex(m *cluster.Model) *blockIndex {
	ix := &blockIndex{nodes: map[string]*cluster.Node{}, pods: map[string][]*cluster.Pod{}, hpas: map[cluster.ObjectRef]*cluster.Object{}}
	for _, n := range m.Nodes {
		ix.nodes[n.Name] = n
	}
	for _, p := range m.Pods {
		ix.pods[p.Object.Namespace] = append(ix.pods[p.Object.Namespace], p)
	}
	for _, h := range m.Objects {
		// autoscaling/v2beta1 and v2beta2 are served by no Kubernetes
		// version EKS supports: such an object is never created.
		if h.Kind != "HorizontalPodAutoscaler" || (h.APIVersion != "autoscaling/v2" && h.APIVersion != "autoscaling/v1") {
			continue
		}
		ref := cluster.ObjectRef{Kind: h.String("spec.scaleTargetRef.kind"), Namespace: namespaceOf(h), Name: h.String("spec.scaleTargetRef.name")}
		if _, ok := ix.hpas[ref]; !ok {
			ix.hpas[ref] = h
		}
	}
	return ix
}

// DisruptionBlocks decides every disruption block of the simulator's model:
// the one decision for inputs and for a running cluster, whose status and
// pods are the evidence there.
func DisruptionBlocks(s *sim.Simulator) []DisruptionBlock {
	m := s.Model()
	if len(m.NodePools) == 0 && len(m.Nodes) == 0 {
		return nil
	}
	d := s.Disruption()
	ix := newBlockIndex(m)
	var out []DisruptionBlock
	for _, o := range m.Objects {
		if o.Kind == "PodDisruptionBudget" && (o.APIVersion == "policy/v1" || o.APIVersion == "policy/v1beta1") {
			if b, ok := pdbBlock(s, ix, o); ok {
				out = append(out, b)
			}
		}
	}
	out = append(out, doNotDisruptBlocks(s, ix, d)...)
	out = append(out, budgetBlocks(m, d)...)
	for i := range out {
		finishBlock(m, d, &out[i])
	}
	sort.SliceStable(out, func(i, j int) bool {
		if c := out[i].Ref().Compare(out[j].Ref()); c != 0 {
			return c < 0
		}
		return out[i].Path < out[j].Path
	})
	return out
}

// pdbSelects decodes a budget's selector; nil when it selects nothing (no
// selector, or an empty one in policy/v1beta1).
func pdbSelects(o *cluster.Object) labels.Selector {
	raw, ok := o.Get("spec.selector").(map[string]any)
	if !ok {
		return nil
	}
	if len(raw) == 0 && o.APIVersion == "policy/v1beta1" {
		return nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	var ls metav1.LabelSelector
	if json.Unmarshal(b, &ls) != nil {
		return nil
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return nil
	}
	return sel
}

// intOrPercent reads a budget's minAvailable or maxUnavailable; ok is false
// when it is unset or not known.
func intOrPercent(v any) (intstr.IntOrString, bool) {
	switch t := v.(type) {
	case int64:
		return intstr.FromInt32(int32(t)), true
	case float64:
		return intstr.FromInt32(int32(t)), true
	case string:
		if t == "" || cluster.IsUnknown(t) {
			return intstr.IntOrString{}, false
		}
		return intstr.Parse(t), true
	}
	return intstr.IntOrString{}, false
}

func namespaceOf(o *cluster.Object) string {
	if o.Namespace == "" {
		return "default"
	}
	return o.Namespace
}

// pdbBlock decides whether a PodDisruptionBudget allows no eviction with all
// its pods healthy: from its status in a running cluster (desiredHealthy at
// or above expectedPods), else from its spec and the replicas of what it
// selects.
func pdbBlock(s *sim.Simulator, ix *blockIndex, o *cluster.Object) (DisruptionBlock, bool) {
	m := s.Model()
	sel := pdbSelects(o)
	if sel == nil || o.Unknown != "" {
		return DisruptionBlock{}, false
	}
	ns := namespaceOf(o)
	b := DisruptionBlock{Cause: BlockPDB, Object: o, Karpenter: fmt.Sprintf("Pdb prevents pod evictions (PodDisruptionBudget=[%s/%s])", ns, o.Name)}
	minA, hasMin := intOrPercent(o.Get("spec.minAvailable"))
	maxU, hasMax := intOrPercent(o.Get("spec.maxUnavailable"))
	switch {
	case hasMax:
		b.pdbField, b.Path = "maxUnavailable", "spec.maxUnavailable"
	case hasMin:
		b.pdbField, b.Path = "minAvailable", "spec.minAvailable"
	default:
		return DisruptionBlock{}, false
	}
	if m.Live != nil {
		expected, ok1 := o.Get("status.expectedPods").(int64)
		desired, ok2 := o.Get("status.desiredHealthy").(int64)
		if ok1 && ok2 {
			if expected == 0 || desired < expected {
				return DisruptionBlock{}, false
			}
			allowed, _ := o.Get("status.disruptionsAllowed").(int64)
			if allowed > 0 {
				return DisruptionBlock{}, false
			}
			b.replicas = int(expected)
			b.Why = fmt.Sprintf("it allows no disruption with all %d of its pods healthy (status: expectedPods %d, desiredHealthy %d, disruptionsAllowed %d; %s %s)", expected, expected, desired, allowed, b.pdbField, describeIntOrPercent(o.Get(b.Path)))
			for _, p := range ix.pods[ns] {
				if sel.Matches(labels.Set(p.Object.Labels)) {
					addPod(ix, &b, p)
				}
			}
			return b, len(b.NodePools) > 0
		}
	}
	// The pods it selects, by their controllers' replicas.
	var ws []*cluster.Workload
	total := 0
	var counts []string
	for _, w := range m.Workloads {
		switch w.Object.Kind {
		case "Deployment", "StatefulSet", "ReplicaSet", "ReplicationController", "Pod":
		default:
			continue
		}
		if w.Template.Namespace != ns || !sel.Matches(labels.Set(w.Template.Labels)) {
			continue
		}
		if _, owned := w.Object.Controller(); owned {
			continue // counted through its owner
		}
		n, from, ok := replicasOf(ix, w)
		if !ok {
			return DisruptionBlock{}, false // not known: not judged
		}
		if n == 0 {
			continue
		}
		ws = append(ws, w)
		total += n
		counts = append(counts, fmt.Sprintf("%s: %d %s", w.Ref(), n, from))
	}
	if total == 0 {
		return DisruptionBlock{}, false
	}
	var why string
	if hasMax {
		n, err := intstr.GetScaledValueFromIntOrPercent(&maxU, total, true)
		if err != nil || n > 0 {
			return DisruptionBlock{}, false
		}
		why = fmt.Sprintf("maxUnavailable %s lets no pod go", describeIntOrPercent(o.Get(b.Path)))
	} else {
		n, err := intstr.GetScaledValueFromIntOrPercent(&minA, total, true)
		if err != nil || n < total {
			return DisruptionBlock{}, false
		}
		why = fmt.Sprintf("minAvailable %s of %d pods keeps all %d (%s)", describeIntOrPercent(o.Get(b.Path)), total, n, strings.Join(counts, ", "))
		if total == 1 {
			why = fmt.Sprintf("minAvailable %s over a single replica keeps it (%s): one replica cannot be protected and evicted both", describeIntOrPercent(o.Get(b.Path)), strings.Join(counts, ", "))
		}
	}
	b.Why, b.replicas = why, total
	for _, w := range ws {
		b.Workloads = append(b.Workloads, w.Ref())
		pinPools(s, &b, w)
	}
	return b, len(b.NodePools) > 0
}

func describeIntOrPercent(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}

// replicasOf is how many pods a workload runs, with where the number comes
// from; ok is false when it is not known (rendered from values not known,
// spec.replicas not a number).
func replicasOf(ix *blockIndex, w *cluster.Workload) (int, string, bool) {
	if w.Object.Unknown != "" {
		return 0, "", false
	}
	if w.Object.Kind == "Pod" {
		return 1, "bare pod", true
	}
	if h := ix.hpas[cluster.ObjectRef{Kind: w.Object.Kind, Namespace: w.Template.Namespace, Name: w.Object.Name}]; h != nil {
		switch v := h.Get("spec.minReplicas").(type) {
		case nil:
			return 1, "at the minReplicas of " + h.Ref().String() + " (default 1)", true
		case int64:
			return int(v), "at the minReplicas of " + h.Ref().String(), true
		case float64:
			return int(v), "at the minReplicas of " + h.Ref().String(), true
		}
		return 0, "", false
	}
	switch v := w.Object.Get("spec.replicas").(type) {
	case nil:
		return 1, "replica (spec.replicas unset)", true
	case int64:
		return int(v), plural(int(v), "replica"), true
	case float64:
		return int(v), plural(int(v), "replica"), true
	}
	return 0, "", false
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// pinPools adds the NodePools a workload's pods fit to a block.
func pinPools(s *sim.Simulator, b *DisruptionBlock, w *cluster.Workload) {
	for _, np := range s.Model().NodePools {
		if sim.IsAutoMode(np) && np.Object != nil && np.Object.Manager == cluster.ManagerEKS {
			// EKS's own NodePools: their budgets and drains are EKS's.
			continue
		}
		if s.RunsOn(w, np) == sim.Fits && !slices.Contains(b.NodePools, np.Name) {
			b.NodePools = append(b.NodePools, np.Name)
		}
	}
}

// addPod adds the node a running pod is on, its NodePool and its owner to a
// block; a pod that is done, or on a node Karpenter did not launch, adds
// nothing.
func addPod(ix *blockIndex, b *DisruptionBlock, p *cluster.Pod) {
	if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return
	}
	pool := nodePoolOf(ix.nodes[p.Spec.NodeName])
	if pool == "" {
		return
	}
	if !slices.Contains(b.Nodes, p.Spec.NodeName) {
		b.Nodes = append(b.Nodes, p.Spec.NodeName)
	}
	if !slices.Contains(b.NodePools, pool) {
		b.NodePools = append(b.NodePools, pool)
	}
	if !slices.Contains(b.Workloads, p.Owner) {
		b.Workloads = append(b.Workloads, p.Owner)
	}
}

// nodePoolOf is the NodePool (or v1alpha5 Provisioner) that launched a node;
// "" for a node Karpenter did not launch.
func nodePoolOf(n *cluster.Node) string {
	if n == nil {
		return ""
	}
	if p := n.Labels["karpenter.sh/nodepool"]; p != "" {
		return p
	}
	return n.Labels["karpenter.sh/provisioner-name"]
}

// doNotDisruptKey is the annotation the Karpenter generation honours.
func doNotDisruptKey(d sim.Disruption) string {
	if d.Generation == sim.GenAlpha {
		return "karpenter.sh/do-not-evict"
	}
	return "karpenter.sh/do-not-disrupt"
}

// finishes reports whether a workload's pods end on their own (Jobs, CronJobs,
// pods that do not restart): a node they hold goes once they are done, which
// is what the annotation is for.
func finishes(kind string, spec *corev1.PodSpec) bool {
	switch kind {
	case "Job", "CronJob":
		return true
	}
	return spec.RestartPolicy == corev1.RestartPolicyNever || spec.RestartPolicy == corev1.RestartPolicyOnFailure
}

// doNotDisruptBlocks finds the pods (pod templates, in the inputs), NodePool
// templates and nodes annotated do-not-disrupt.
func doNotDisruptBlocks(s *sim.Simulator, ix *blockIndex, d sim.Disruption) []DisruptionBlock {
	m := s.Model()
	key := doNotDisruptKey(d)
	var out []DisruptionBlock
	podWords := func(ref string) string {
		return fmt.Sprintf("Pod has %q annotation (Pod=%s)", key, ref)
	}
	if m.Live != nil {
		byOwner := map[cluster.ObjectRef]*DisruptionBlock{}
		var owners []cluster.ObjectRef
		workloads := map[cluster.ObjectRef]*cluster.Object{}
		for _, w := range m.Workloads {
			workloads[w.Ref()] = w.Object
		}
		for _, p := range m.Pods {
			if p.Object.Annotations[key] != "true" || finishes(p.Owner.Kind, &p.Spec) {
				continue
			}
			if byOwner[p.Owner] == nil {
				o := p.Object
				if wo := workloads[p.Owner]; wo != nil {
					o = wo
				}
				byOwner[p.Owner] = &DisruptionBlock{Cause: BlockDoNotDisrupt, Object: o, Path: "metadata.annotations", Karpenter: podWords(p.Object.Namespace + "/" + p.Object.Name),
					Why: fmt.Sprintf("its pods are annotated %s: \"true\": Karpenter never evicts them", key)}
				owners = append(owners, p.Owner)
			}
			addPod(ix, byOwner[p.Owner], p)
		}
		for _, ref := range owners {
			if b := byOwner[ref]; len(b.NodePools) > 0 {
				out = append(out, *b)
			}
		}
		for _, n := range m.Nodes {
			if n.Object == nil || n.Object.Annotations["karpenter.sh/do-not-disrupt"] != "true" || nodePoolOf(n) == "" {
				continue
			}
			out = append(out, DisruptionBlock{Cause: BlockDoNotDisrupt, Object: n.Object, Path: "metadata.annotations", NodePools: []string{nodePoolOf(n)}, Nodes: []string{n.Name},
				Why: "the node is annotated karpenter.sh/do-not-disrupt: \"true\"", Karpenter: `Disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation`})
		}
	} else {
		for _, w := range m.Workloads {
			if w.Template.Annotations[key] != "true" || w.Replicas == 0 || finishes(w.Object.Kind, &w.Template.Spec) {
				continue
			}
			path := "metadata.annotations"
			if w.TemplatePath != "" {
				path = w.TemplatePath + ".metadata.annotations"
			}
			ref := w.Template.Namespace + "/" + w.Object.Name + "-…"
			if w.Object.Kind == "Pod" {
				ref = w.Template.Namespace + "/" + w.Object.Name
			}
			b := DisruptionBlock{Cause: BlockDoNotDisrupt, Object: w.Object, Path: path, Workloads: []cluster.ObjectRef{w.Ref()}, Karpenter: podWords(ref),
				Why: fmt.Sprintf("its pod template is annotated %s: \"true\": Karpenter never evicts its pods", key)}
			pinPools(s, &b, w)
			if len(b.NodePools) > 0 {
				out = append(out, b)
			}
		}
	}
	for _, np := range m.NodePools {
		if np.Object == nil {
			continue
		}
		ann, _ := np.Object.Get("spec.template.metadata.annotations").(map[string]any)
		if ann["karpenter.sh/do-not-disrupt"] != "true" || d.Generation == sim.GenAlpha {
			continue
		}
		out = append(out, DisruptionBlock{Cause: BlockDoNotDisrupt, Object: np.Object, Path: "spec.template.metadata.annotations", NodePools: []string{np.Name},
			Why: "its template annotates every node karpenter.sh/do-not-disrupt: \"true\"", Karpenter: `Disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation`})
	}
	return out
}

// allReasons are the disruption reasons of Karpenter v1's budgets.
var allReasons = []string{"Drifted", "Empty", "Underutilized"}

// budgetBlocks finds NodePool budgets that allow no node: always (no
// schedule) for every reason, or on a schedule (an info).
func budgetBlocks(m *cluster.Model, d sim.Disruption) []DisruptionBlock {
	var out []DisruptionBlock
	for _, np := range m.NodePools {
		if np.Object == nil || np.Object.Kind != "NodePool" || (np.Object.Manager == cluster.ManagerEKS) {
			continue
		}
		budgets, _ := np.Object.Get("spec.disruption.budgets").([]any)
		for i, raw := range budgets {
			bm, _ := raw.(map[string]any)
			nodes, _ := bm["nodes"].(string)
			if nodes != "0" && nodes != "0%" {
				continue
			}
			if rs, ok := bm["reasons"].([]any); ok {
				var got []string
				for _, r := range rs {
					if s, ok := r.(string); ok {
						got = append(got, s)
					}
				}
				if !containsAll(got, allReasons) {
					continue
				}
			}
			b := DisruptionBlock{Cause: BlockBudget, Object: np.Object, Path: fmt.Sprintf("spec.disruption.budgets.%d.nodes", i), NodePools: []string{np.Name}, budget: i,
				Karpenter: "No allowed disruptions due to blocking budget"}
			if sch, _ := bm["schedule"].(string); sch != "" {
				b.Scheduled = true
				dur, _ := bm["duration"].(string)
				b.Why = fmt.Sprintf("its disruption budget nodes: %q applies on the schedule %q for %s: no node may be disrupted then", nodes, sch, dur)
			} else {
				b.Why = fmt.Sprintf("its disruption budget nodes: %q has no schedule and covers every reason: no node may ever be disrupted voluntarily", nodes)
			}
			out = append(out, b)
		}
	}
	return out
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// longDrain is how long a terminationGracePeriod may be before a drain that
// waits on it is worth saying: a day outlasts any maintenance window, and is
// what an expired or deleted node then costs, running idle.
const longDrain = 24 * time.Hour

// finishBlock says what the block stops, for the Karpenter version in use,
// and how long the drain of each NodePool it pins waits.
func finishBlock(m *cluster.Model, d sim.Disruption, b *DisruptionBlock) {
	sort.Strings(b.NodePools)
	sort.Strings(b.Nodes)
	sort.Slice(b.Workloads, func(i, j int) bool { return b.Workloads[i].Less(b.Workloads[j]) })
	b.v1 = d.Generation == sim.GenV1
	switch {
	case b.Cause == BlockBudget && d.Generation == sim.GenV1:
		b.Blocks = "consolidation and drift of its nodes; expiry, interruption and deletion are forceful in Karpenter v1 and do not wait on budgets"
	case b.Cause == BlockBudget:
		b.Blocks = "consolidation, drift and expiry of its nodes"
	case d.Generation == sim.GenV1:
		b.Blocks = "consolidation and drift of the nodes; expiry and deletion (kubectl delete, terraform destroy) still start, and their drain waits for the pods up to the NodePool's terminationGracePeriod"
	default:
		b.Blocks = fmt.Sprintf("consolidation, drift and expiry of the nodes under %s; deletion (kubectl delete, terraform destroy) drains them and waits for the pods: this version has no terminationGracePeriod", d.Generation)
	}
	if b.Cause == BlockBudget {
		return
	}
	for _, name := range b.NodePools {
		np := nodePoolNamed(m, name)
		if d.Generation != sim.GenV1 {
			b.Forever = append(b.Forever, name)
			continue
		}
		if np == nil || np.Object == nil {
			continue // not seen: not judged
		}
		tgp := np.Object.String("spec.template.spec.terminationGracePeriod")
		if tgp == "" {
			b.Forever = append(b.Forever, name)
			continue
		}
		if dur, err := time.ParseDuration(tgp); err == nil && dur > longDrain {
			b.Long = append(b.Long, name+": "+tgp)
		}
	}
}

func nodePoolNamed(m *cluster.Model, name string) *cluster.NodePool {
	for _, np := range m.NodePools {
		if np.Name == name {
			return np
		}
	}
	return nil
}

func runDisruptionBlocked(p *Pass) {
	for _, b := range resultOf[[]DisruptionBlock](p, disruptionBlocksFact) {
		f := Finding{
			Object:  b.Ref(),
			Origin:  b.Object.At(b.Path),
			Summary: blockSummary(b),
			Detail:  blockDetail(p.Model, b),
			Fix:     blockFix(p.Model, b),
		}
		if b.Scheduled {
			f.Severity = Info
		}
		p.Report(f)
	}
}

func blockSummary(b DisruptionBlock) string {
	pools := "NodePool " + strings.Join(b.NodePools, ", ")
	if len(b.NodePools) > 1 {
		pools = "NodePools " + strings.Join(b.NodePools, ", ")
	}
	switch b.Cause {
	case BlockPDB:
		return fmt.Sprintf("%s allows no eviction: Karpenter can never disrupt the nodes of %s its pods run on (%s)", b.Ref(), pools, b.Why)
	case BlockDoNotDisrupt:
		return fmt.Sprintf("%s: Karpenter can never disrupt the nodes of %s it runs on (%s)", b.Ref(), pools, b.Why)
	}
	if b.Scheduled {
		return fmt.Sprintf("%s: %s", b.Ref(), b.Why)
	}
	return fmt.Sprintf("%s: Karpenter can never disrupt its nodes (%s)", b.Ref(), b.Why)
}

func blockDetail(m *cluster.Model, b DisruptionBlock) string {
	var d strings.Builder
	fmt.Fprintf(&d, "Karpenter reports the node as DisruptionBlocked: `%s`.", b.Karpenter)
	if !b.v1 {
		d.WriteString(" (Karpenter v1's words; earlier versions word it otherwise.)")
	}
	if b.Cause == BlockPDB {
		d.WriteString(" The Eviction API answers 429: `Cannot evict pod as it would violate the pod's disruption budget.`")
	}
	fmt.Fprintf(&d, "\nThis blocks %s.", b.Blocks)
	if len(b.Workloads) > 0 && b.Cause == BlockPDB {
		var refs []string
		for _, w := range b.Workloads {
			refs = append(refs, w.String())
		}
		fmt.Fprintf(&d, "\nIts pods are those of %s.", strings.Join(refs, ", "))
	}
	if len(b.Nodes) > 0 {
		fmt.Fprintf(&d, "\nNodes pinned now: %s.", strings.Join(b.Nodes, ", "))
	}
	for _, name := range b.Forever {
		np := nodePoolNamed(m, name)
		if b.v1 {
			fmt.Fprintf(&d, "\nNodePool %s sets no terminationGracePeriod: a drain of its nodes (expiry, kubectl delete, terraform destroy) waits forever, held by the karpenter.sh/termination finalizer.", name)
		} else {
			kind := "NodePool"
			if np != nil && np.Object != nil {
				kind = np.Object.Kind
			}
			fmt.Fprintf(&d, "\nA drain of the nodes of %s %s (kubectl delete, terraform destroy) waits forever: no terminationGracePeriod ends it in this version.", kind, name)
		}
		if np != nil && np.Object != nil && np.Object.String("spec.template.spec.expireAfter") == "Never" {
			d.WriteString(" With expireAfter: Never no expiry replaces them either: they run until deleted by hand.")
		}
	}
	for _, l := range b.Long {
		name, dur, _ := strings.Cut(l, ": ")
		fmt.Fprintf(&d, "\nNodePool %s's terminationGracePeriod is %s: a drain of its nodes waits that long before Karpenter deletes the pods still there.", name, dur)
	}
	return d.String()
}

// blockFix lets the budget allow one eviction, or gives the NodePool budget
// a share of nodes, in the file that declares it (a kubectl command in a
// running cluster).
func blockFix(m *cluster.Model, b DisruptionBlock) *Fix {
	var patch map[string]any
	var summary string
	switch b.Cause {
	case BlockPDB:
		switch {
		case b.pdbField == "maxUnavailable":
			patch = map[string]any{"spec": map[string]any{"maxUnavailable": int64(1)}}
			summary = "allow one eviction at a time: maxUnavailable: 1"
		case b.replicas >= 2:
			patch = map[string]any{"spec": map[string]any{"minAvailable": int64(b.replicas - 1)}}
			summary = fmt.Sprintf("keep all but one of the %d pods: minAvailable: %d", b.replicas, b.replicas-1)
		default:
			patch = map[string]any{"spec": map[string]any{"minAvailable": nil, "maxUnavailable": int64(1)}}
			summary = "a single replica cannot be protected and evicted both: allow its eviction with maxUnavailable: 1 (or run two replicas and keep minAvailable: 1)"
		}
	case BlockBudget:
		if b.Scheduled {
			return nil
		}
		budgets, _ := b.Object.Get("spec.disruption.budgets").([]any)
		var list []any
		for i, raw := range budgets {
			bm, _ := raw.(map[string]any)
			c := map[string]any{}
			for k, v := range bm {
				c[k] = v
			}
			if i == b.budget {
				c["nodes"] = "10%"
			}
			list = append(list, c)
		}
		patch = map[string]any{"spec": map[string]any{"disruption": map[string]any{"budgets": list}}}
		summary = "let Karpenter disrupt a tenth of the nodes at a time (nodes: \"10%\"), or give the zero budget a schedule and duration so that it opens at other times"
	default:
		return nil
	}
	if m.Live != nil {
		return &Fix{Summary: summary, Edits: []Edit{write.LivePatch(b.Object, patch)}}
	}
	e, ok := write.ObjectPatch(m, b.Object, patch)
	if !ok {
		return nil
	}
	return &Fix{Summary: summary, Edits: []Edit{e}}
}

// drainBlockedHazards are the NodePools of a teardown whose nodes' drain
// waits forever on a pod that may never be evicted, with the blocks that
// hold each.
func drainBlocked(blocks []DisruptionBlock) map[string][]DisruptionBlock {
	out := map[string][]DisruptionBlock{}
	for _, b := range blocks {
		for _, name := range b.Forever {
			out[name] = append(out[name], b)
		}
	}
	return out
}
