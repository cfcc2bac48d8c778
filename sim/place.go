package sim

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/parallel"
	"github.com/eksdoctor/eksdoctor/internal/textmatch"
)

// Simulator answers placement questions for one model. It caches what it learns
// about each capacity source; it is safe for concurrent use.
type Simulator struct {
	m *cluster.Model
	volumeState

	mu         sync.Mutex
	placements map[placementKey]*Placement
	results    map[placementKey]Result
	pools      memo[*cluster.NodePool, *poolInfo]
	poolOver   memo[*cluster.NodePool, poolOverheads]
	daemonOnce sync.Once
	daemons    []daemonPod
	groups     map[*cluster.NodeGroup][]candidate
	overhead   map[string]corev1.ResourceList
	overVec    map[string]vec
	static     memo[staticKey, *static]
	// poolStatic holds, for each node selection (a constraints' sig), what
	// each NodePool answers it (karpenterVerdict): looked up once per
	// placement, then by NodePool, not by the long signature hundreds of
	// times.
	poolStatic memo[string, *memo[*cluster.NodePool, *poolStatic]]
	// sources holds one Source per capacity source (keyed by its pointer):
	// every verdict about it points to it.
	sources sync.Map

	// Live clusters: each node's kind and free resources, once; the part of a
	// node's verdict that depends on its labels and taints, once per kind of
	// node and kind of pod; placements shared by pods of one class.
	nodeOnce   sync.Once
	nodes      []nodeState
	nodeOrder  []int
	nodeStatic map[string]*staticTable
	// kindIndexes sorts nodes into kinds by the label keys pods read.
	kindIndexes memo[string, *kindIndex]
	// labelIndexes hold the nodes by their value of a label (nodesWithout).
	labelIndexes memo[string, *labelIndex]
	// poolTypes holds the instance types NodePools admit, by typesKey.
	poolTypes memo[string, []sizedType]
	podClass  classMemo
	// podClassFit shares the placements of PlacePodFitting as podClass
	// shares PlacePod's.
	podClassFit classMemo
	// spare holds verdict slices Release handed back.
	spare sync.Pool
	// tolerating holds a source's verdict on a class given more tolerations.
	tolerating memo[toleratingKey, *Verdict]
	// quick holds whether a scheduling class fits some source (quickFits).
	quick memo[string, bool]
	// nearest holds the refusing sources of a kind in order, for every
	// placement that refuses alike (nearestShared).
	nearest nearestShared
}

// staticKey identifies the part of a verdict that depends only on the source and
// the pod's node selection and tolerations, not on its resource requests: it is
// computed once for all the workloads that share a signature.
type staticKey struct {
	source any
	sig    string
}

// static is that part: the refusing reasons (taints, labels, requirements) and
// what is left to decide by resources.
type static struct {
	reasons    []Reason
	unknownAff bool
	// cands are the node group candidates whose labels fit (node groups).
	cands []int
	// termReqs is the first pod requirement term the NodePool is compatible with;
	// eligible are the indexes of the NodePool's instance types that also satisfy
	// the pod's own instance requirements (nil: all of them).
	eligible []int
	// attempts are the requirement sets Karpenter tries the pod with on a
	// NodePool, in order (NodePools).
	attempts []attempt

	// short holds, for nodes, the reasons with each set of resources nodes
	// lack (see withShortfall).
	mu    sync.Mutex
	short map[string][]Reason
}

// memo remembers computed values by key; it is safe for concurrent use (two
// callers may compute the same value; one is kept).
type memo[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

func (c *memo[K, V]) get(k K, compute func() V) V {
	c.mu.Lock()
	v, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return v
	}
	v = compute()
	c.mu.Lock()
	if c.m == nil {
		c.m = map[K]V{}
	}
	c.m[k] = v
	c.mu.Unlock()
	return v
}

// classMemo shares placements between the pods of a class. A placement holds
// a verdict for every node, so classes times nodes is what keeping them all
// costs: tens of millions of verdicts in a large cluster scaling up, where
// most classes are asked for once. Placements are kept while the verdicts
// kept stay within keptVerdicts; beyond it, a class is kept only once it
// has been asked for a second time. The answers are the same either way: a
// placement not kept is worked out again.
type classMemo struct {
	mu    sync.Mutex
	m     map[string]*Placement
	asked map[string]struct{}
	kept  int
}

// keptVerdicts bounds the verdicts classMemo keeps of classes asked for once
// (about 16 MiB).
const keptVerdicts = 1 << 18

func (c *classMemo) get(k string, compute func() *Placement) *Placement {
	c.mu.Lock()
	p, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return p
	}
	p = compute()
	c.mu.Lock()
	defer c.mu.Unlock()
	if q, ok := c.m[k]; ok {
		return q
	}
	_, again := c.asked[k]
	if !again && c.kept+len(p.Verdicts) > keptVerdicts {
		if c.asked == nil {
			c.asked = map[string]struct{}{}
		}
		c.asked[k] = struct{}{}
		p.own = true
		return p
	}
	if c.m == nil {
		c.m = map[string]*Placement{}
	}
	c.m[k] = p
	c.kept += len(p.Verdicts)
	return p
}

type placementKey struct {
	w     *cluster.Workload
	phase cluster.Phase
}

// New returns a simulator for m. The model must not change afterwards.
func New(m *cluster.Model) *Simulator {
	return &Simulator{
		m:          m,
		placements: map[placementKey]*Placement{},
		results:    map[placementKey]Result{},
		groups:     map[*cluster.NodeGroup][]candidate{},
		overhead:   map[string]corev1.ResourceList{},
		overVec:    map[string]vec{},
		nodeStatic: map[string]*staticTable{},
	}
}

// sourceOf is the one Source of the capacity source key (its pointer in the
// model), src the first time.
func (s *Simulator) sourceOf(key any, src Source) *Source {
	if v, ok := s.sources.Load(key); ok {
		return v.(*Source)
	}
	p := new(Source) // on the heap only when first met
	*p = src
	v, _ := s.sources.LoadOrStore(key, p)
	return v.(*Source)
}

// Model returns the model the simulator answers for.
func (s *Simulator) Model() *cluster.Model { return s.m }

// Prepare computes the placements of many workloads in parallel, so that the
// checks that ask for them afterwards find them ready. It changes no answer.
func (s *Simulator) Prepare(ws []*cluster.Workload, phase cluster.Phase) {
	// What every placement reads of each NodePool (the instance types its
	// requirements allow), once each and side by side, rather than by every
	// worker that meets it first.
	if phase == cluster.Steady {
		parallel.Each(len(s.m.NodePools), func(i int) { s.pool(s.m.NodePools[i]) })
	}
	parallel.Each(len(ws), func(i int) {
		w := ws[i]
		s.mu.Lock()
		_, done := s.results[placementKey{w, phase}]
		s.mu.Unlock()
		if done || s.quickFits(w, phase) {
			return
		}
		s.Place(w, phase)
	})
	// What was learned of each NodePool for each kind of node selection,
	// and which classes fit somewhere, served the workloads placed together
	// here; the placements and results keep the answers. Let it go: on a
	// large input it is a sixth of the memory in use, and a later question
	// works it out again.
	s.poolStatic.reset()
	s.quick.reset()
}

// reset forgets every value.
func (c *memo[K, V]) reset() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}

// Place answers, for every capacity source present in the phase, whether it would
// run the workload's pods and why not.
func (s *Simulator) Place(w *cluster.Workload, phase cluster.Phase) *Placement {
	key := placementKey{w, phase}
	s.mu.Lock()
	if p, ok := s.placements[key]; ok {
		s.mu.Unlock()
		return p
	}
	s.mu.Unlock()
	p := s.placeClass(w, podOf(w), phase)
	s.mu.Lock()
	s.results[key] = p.Result()
	if keepPlacement(w, p) {
		p.own = false
		s.placements[key] = p
	}
	s.mu.Unlock()
	return p
}

// keepPlacement decides which placements are worth keeping in memory: the ones
// checks look into (pods that do not fit, DaemonSets, components needed before
// Karpenter). For the thousands of ordinary workloads that fit, the result is
// enough, and a check that wants the details recomputes them.
func keepPlacement(w *cluster.Workload, p *Placement) bool {
	return p.Result() != Fits || w.IsDaemonSet() || w.Bootstrap != "" || w.Component != "" || p.Fargate != nil
}

// Result is Place(w, phase).Result(), remembered for every workload.
func (s *Simulator) Result(w *cluster.Workload, phase cluster.Phase) Result {
	key := placementKey{w, phase}
	s.mu.Lock()
	r, ok := s.results[key]
	s.mu.Unlock()
	if ok {
		return r
	}
	return s.Place(w, phase).Result()
}

// PlaceTolerating is Place as if the workload's pods also had the tolerations
// add: what a fix that adds them would give. Karpenter checks a NodePool's
// taints before its requirements and stops at the first refusal, so a
// NodePool that refuses only for a taint may still refuse once it is
// tolerated.
func (s *Simulator) PlaceTolerating(w *cluster.Workload, phase cluster.Phase, add []corev1.Toleration) *Placement {
	return s.placeClass(w, podTolerating(w, add), phase)
}

// podTolerating is a pod of w that also has the tolerations add.
func podTolerating(w *cluster.Workload, add []corev1.Toleration) *corev1.Pod {
	pod := podOf(w)
	pod.Spec.Tolerations = append(append([]corev1.Toleration(nil), pod.Spec.Tolerations...), add...)
	return pod
}

// VerdictTolerating is the verdict of source src (one of a placement's) on
// w's pods once they also tolerate add: what PlaceTolerating's verdict on src
// is, worked out for src alone. ok is false when the placement has no
// verdict on src.
func (s *Simulator) VerdictTolerating(w *cluster.Workload, phase cluster.Phase, add []corev1.Toleration, src *Source) (v Verdict, ok bool) {
	pod := podTolerating(w, add)
	vols := s.volumesOf(w, pod)
	// Shared by the pods of one class, as placements are.
	r := s.tolerating.get(toleratingKey{s.classKey(w, pod, phase, vols), src}, func() *Verdict {
		for _, u := range s.place(w, pod, phase, vols, src, false).Verdicts {
			if u.Source == src {
				return &u
			}
		}
		return nil
	})
	if r == nil {
		return Verdict{}, false
	}
	return *r, true
}

type toleratingKey struct {
	class string
	src   *Source
}

// Release hands the verdicts of a placement its caller is done with to the
// next placement, when nothing else holds them: a class placed once against
// thousands of nodes otherwise leaves a slice of thousands of verdicts for the
// collector, once per class. Neither pl nor anything read from its verdicts
// may be used afterwards (their reasons and sources may: they are not
// handed on).
func (s *Simulator) Release(pl *Placement) {
	if pl == nil || !pl.own || cap(pl.Verdicts) == 0 {
		return
	}
	vs := pl.Verdicts[:cap(pl.Verdicts)]
	clear(vs)
	vs = vs[:0]
	pl.Verdicts, pl.own = nil, false
	s.spare.Put(&vs)
}

// verdicts is an empty slice for at least n verdicts, one handed back by
// Release when there is one.
func (s *Simulator) verdicts(n int) []Verdict {
	if p, ok := s.spare.Get().(*[]Verdict); ok && cap(*p) >= n {
		return *p
	}
	return make([]Verdict, 0, n)
}

// PlacePod answers for a live pod (its own spec, which may differ from its
// workload's template).
func (s *Simulator) PlacePod(p *cluster.Pod) *Placement {
	w, pod := livePod(p)
	return s.placeClass(w, pod, cluster.Steady)
}

// livePod is a live pod as the workload of one pod placement reads.
func livePod(p *cluster.Pod) (*cluster.Workload, *corev1.Pod) {
	w := &cluster.Workload{Object: p.Object, Replicas: 1}
	w.Template.ObjectMeta.Labels = p.Object.Labels
	w.Template.ObjectMeta.Annotations = p.Object.Annotations
	w.Template.Namespace = p.Object.Namespace
	w.Template.Spec = p.Spec
	if p.Workload != nil {
		w.Component, w.Bootstrap, w.NodeCritical = p.Workload.Component, p.Workload.Bootstrap, p.Workload.NodeCritical
	}
	pod := &corev1.Pod{ObjectMeta: w.Template.ObjectMeta, Spec: *p.Spec.DeepCopy()}
	pod.Name, pod.Namespace = p.Object.Name, p.Object.Namespace
	return w, pod
}

// placeClass places a pod of w, sharing the answer with every pod of its
// scheduling class (podClassKey) in the phase: workloads whose pods schedule
// alike — thousands in a large input — are placed once.
func (s *Simulator) placeClass(w *cluster.Workload, pod *corev1.Pod, phase cluster.Phase) *Placement {
	vols := s.volumesOf(w, pod)
	shared := s.podClass.get(s.classKey(w, pod, phase, vols), func() *Placement { return s.place(w, pod, phase, vols, nil, false) })
	pl := *shared
	pl.Workload = w
	return &pl
}

// PlacePodFitting is PlacePod for a caller that needs only the sources that
// would take the pod: the NodePools and nodes whose labels certainly refuse
// its node selector (a selected label set to another known value) are passed
// over without a verdict. Every source that fits, in the same order, the
// Fargate profile, and so Result when it is Fits, are PlacePod's; a refusal
// is not explained (PlacePod explains it). Pending pods of a large cluster
// each select a few NodePools of hundreds, and most fit one.
func (s *Simulator) PlacePodFitting(p *cluster.Pod) *Placement {
	w, pod := livePod(p)
	vols := s.volumesOf(w, pod)
	shared := s.podClassFit.get(s.classKey(w, pod, cluster.Steady, vols), func() *Placement {
		return s.place(w, pod, cluster.Steady, vols, nil, true)
	})
	pl := *shared
	pl.Workload = w
	return &pl
}

// classKey is what placeClass shares placements by: the pod's class, whether
// it is a DaemonSet's, the phase and the pod's volumes.
func (s *Simulator) classKey(w *cluster.Workload, pod *corev1.Pod, phase cluster.Phase, vols *podVolumes) string {
	key := s.podClassKey(w, pod) + fmt.Sprintf("\x05%t\x05%d", w.IsDaemonSet(), phase)
	if vols != nil {
		key += "\x05" + vols.key
	}
	return key
}

// podClassKey is a pod's scheduling-equivalence class: everything placement
// reads of it — node selection, tolerations, node-name fields, requests, what
// component it is, and, where Fargate profiles select by them, its namespace
// and labels (placeClass adds whether it is a DaemonSet's, and the phase).
func (s *Simulator) podClassKey(w *cluster.Workload, pod *corev1.Pod) string {
	var b strings.Builder
	b.WriteString(signature(pod))
	b.WriteByte(4)
	b.WriteString(matchFields(pod))
	b.WriteByte(4)
	req := requests(pod)
	for _, name := range sortedResourceNames(req) {
		q := req[name]
		b.WriteString(string(name) + "=" + q.String() + ",")
	}
	b.WriteByte(4)
	b.WriteString(w.Component + "\x00" + w.Bootstrap + "\x00" + w.NodeCritical + "\x00" + w.Object.Unknown)
	if len(s.m.FargateProfiles) > 0 {
		b.WriteByte(4)
		b.WriteString(pod.Namespace)
		for _, k := range sortedKeys(pod.Labels) {
			b.WriteString("\x00" + k + "=" + pod.Labels[k])
		}
		b.WriteString("\x01" + pod.Annotations[ComputeTypeKey])
	}
	return b.String()
}

// matchFields renders a pod's required node affinity on node fields
// (metadata.name, as every DaemonSet pod has).
func matchFields(pod *corev1.Pod) string {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	var b strings.Builder
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range t.MatchFields {
			b.WriteString(f.Key + "\x00" + string(f.Operator) + "\x00" + strings.Join(f.Values, "\x00") + "\x02")
		}
		b.WriteByte(3)
	}
	return b.String()
}

// place places a pod of w against every source, or with only set, against
// that one source alone (the other sources' verdicts do not change its own).
func (s *Simulator) place(w *cluster.Workload, pod *corev1.Pod, phase cluster.Phase, vols *podVolumes, only *Source, fitOnly bool) *Placement {
	pl := &Placement{Workload: w, Phase: phase, Requests: requests(pod), memo: &summaryMemo{shared: &s.nearest}}
	daemon := w.IsDaemonSet()
	pc := constraintsOf(pod)
	pc.vols = vols
	if vols != nil {
		pl.Volumes = vols.claims
		pl.ImmediateClaims = vols.immediate
		pl.VolumesUnknown = vols.unknown
	}
	need := vecOf(pl.Requests)
	switch {
	case only != nil:
		pl.Verdicts = make([]Verdict, 0, 1)
	case fitOnly:
		// Few sources are left: the slice grows as they come.
	default:
		pl.Verdicts = s.verdicts(len(s.m.FargateProfiles) + len(s.m.NodeGroups) + len(s.m.Nodes) + len(s.m.NodePools))
	}

	pl.Fargate = ProfileFor(s.m.FargateProfiles, pod.Namespace, pod.Labels, pod.Annotations)
	if daemon {
		pl.Fargate = nil
	}
	for _, fp := range s.m.FargateProfiles {
		if only.skips(fp) {
			continue
		}
		pl.Verdicts = append(pl.Verdicts, conditionalVerdict(s.fargateVerdict(fp, pl, pod, daemon)))
	}
	s.ec2Verdicts(w, pod, pc, pl.Requests, need, phase, fitOnly, only, func(v Verdict) bool {
		s.demoteForFargate(&v, pl)
		pl.Verdicts = append(pl.Verdicts, v)
		return true
	})
	if u := w.Object.Unknown; u != "" {
		// The pod template is rendered from values not known before apply: they
		// may add the toleration, selector or request a refusal is about.
		for i := range pl.Verdicts {
			if v := &pl.Verdicts[i]; v.Result == Refuses {
				v.Result = Unknown
				v.Reasons = append(v.Reasons, Reason{Code: CodeUnknownValue, Message: fmt.Sprintf("the pods are rendered from %s, which is not known before apply", u)})
			}
		}
	}
	sortVerdicts(pl.Verdicts)
	return pl
}

// ec2Verdicts computes the verdicts of the EC2 capacity — node groups, nodes,
// and in the steady phase NodePools — in that order, handing each to yield until
// it returns false. With fitOnly, the caller wants a source that fits, not the
// refusals: nodes and NodePools that certainly refuse the pod's node selector
// are passed over without a verdict.
func (s *Simulator) ec2Verdicts(w *cluster.Workload, pod *corev1.Pod, pc *constraints, req corev1.ResourceList, need vec, phase cluster.Phase, fitOnly bool, only *Source, yield func(Verdict) bool) {
	for _, ng := range s.m.NodeGroups {
		if only.skips(ng) {
			continue
		}
		v := s.nodeGroupVerdict(ng, pc, req, need)
		if phase == cluster.Bootstrap && !w.IsDaemonSet() {
			// A DaemonSet runs on the nodes there are: none is none to run on.
			v = emptyAtBootstrap(v, ng)
		}
		if !yield(conditionalVerdict(v)) {
			return
		}
	}
	var sel []selected
	if fitOnly {
		sel = selectedLabels(pod.Spec.NodeSelector)
	}
	if len(s.m.Nodes) > 0 {
		nf := nodeFilterOf(pod)
		statics := s.nodeStatics(pc.sig+"\x04"+nf.fields, pod, nf.fields != "")
		order := s.nodeOrder
		if fitOnly && len(sel) > 0 {
			order = s.nodesWithout(sel[0])
		}
		for _, i := range order {
			if only.skips(s.m.Nodes[i]) || fitOnly && labelsConflict(s.m.Nodes[i].Labels, sel) {
				continue
			}
			if !yield(s.nodeVerdict(i, pod, pc, nf, statics, need)) {
				return
			}
		}
	}
	controllerDown := false
	if phase == cluster.Steady && w.Component != "karpenter" && (s.selfManagedPools() || s.unseenKarpenter()) {
		cp := s.ControllerPlacement()
		controllerDown = cp != nil && cp.Result() == Refuses
	}
	for i := range s.m.Unseen {
		u := &s.m.Unseen[i]
		if phase != cluster.Steady && u.SteadyOnly || u.Karpenter && w.Component == "karpenter" || only.skips(u) {
			continue
		}
		v := s.unseenVerdict(u)
		if u.Karpenter && controllerDown {
			v.Result = Refuses
			v.Reasons = []Reason{{Code: CodeController, Message: "the Karpenter controller cannot run in the bootstrap phase, so no NodePool launches nodes"}}
		}
		if !yield(v) {
			return
		}
	}
	for _, np := range s.m.NodePools {
		// EKS Auto Mode's NodePools launch nodes from the moment the cluster
		// exists: AWS runs their Karpenter, outside the cluster. The others
		// wait for a Karpenter controller of the cluster.
		auto := IsAutoMode(np)
		if phase != cluster.Steady && !auto {
			continue
		}
		if fitOnly && labelConflict(np, sel) || only.skips(np) {
			continue
		}
		if !yield(conditionalVerdict(s.nodePoolVerdict(np, pc, req, need, w, controllerDown && !auto))) {
			return
		}
	}
}

// selfManagedPools reports whether a NodePool needs the cluster's own
// Karpenter controller (every one but EKS Auto Mode's).
func (s *Simulator) selfManagedPools() bool {
	return slices.ContainsFunc(s.m.NodePools, func(np *cluster.NodePool) bool { return !IsAutoMode(np) })
}

// quickFits answers Result for an ordinary workload (not a DaemonSet, not a
// component, not selected by Fargate) by stopping at the first capacity source
// that takes it, and remembers the answer; it reports false when the full
// placement is needed. Most workloads of a large input fit early, and no check
// looks into the placement of an ordinary workload that fits.
func (s *Simulator) quickFits(w *cluster.Workload, phase cluster.Phase) bool {
	if w.IsDaemonSet() || w.Bootstrap != "" || w.Component != "" {
		return false
	}
	pod := podOf(w)
	if ProfileFor(s.m.FargateProfiles, pod.Namespace, pod.Labels, pod.Annotations) != nil {
		return false
	}
	if s.volumesOf(w, pod) != nil {
		// Volumes add to where the pods may run: placed in full.
		return false
	}
	// Workloads of one scheduling class fit alike: a monorepo's thousands of
	// workloads are a few hundred classes.
	fits := s.quick.get(s.podClassKey(w, pod)+fmt.Sprintf("\x05%d", phase), func() bool {
		req := requests(pod)
		fits := false
		s.ec2Verdicts(w, pod, constraintsOf(pod), req, vecOf(req), phase, true, nil, func(v Verdict) bool {
			fits = v.Result == Fits
			return !fits
		})
		return fits
	})
	if fits {
		s.mu.Lock()
		s.results[placementKey{w, phase}] = Fits
		s.mu.Unlock()
	}
	return fits
}

// labelConflict reports whether a NodePool's nodes certainly fail a node
// selector: it selects another NodePool by name, or its template sets a
// selected label to another value (a known one:
// an unknown label may be anything). Most large configurations target their
// NodePools this way, and a pod then fits at most a few of hundreds.
// sel is selectedLabels of the pod's node selector, found once for every
// NodePool.
func labelConflict(np *cluster.NodePool, sel []selected) bool {
	// Its nodes carry its name (nodePoolRequirements).
	if key := poolNameLabelKey(np); !cluster.IsUnknown(np.Name) {
		for _, l := range sel {
			if l.key == key && l.value != np.Name {
				return true
			}
		}
	}
	return !slices.Contains(np.Unknown, "labels") && labelsConflict(np.Labels, sel)
}

// labelsConflict reports whether labels set a selected label to another
// known value: whatever has them fails the node selector.
func labelsConflict(labels map[string]string, sel []selected) bool {
	for _, l := range sel {
		if have, ok := labels[l.key]; ok && have != l.value && !cluster.IsUnknown(have) {
			return true
		}
	}
	return false
}

// nodesWithout returns the nodes, in their order, that do not set l's label
// to another known value: those with the value, without the label, or with
// a value not known.
func (s *Simulator) nodesWithout(l selected) []int {
	s.nodeStates() // the order
	ix := s.labelIndexes.get(l.key, func() *labelIndex {
		ix := &labelIndex{byValue: map[string][]int{}}
		for _, i := range s.nodeOrder {
			v, ok := s.m.Nodes[i].Labels[l.key]
			if !ok || cluster.IsUnknown(v) {
				ix.any = append(ix.any, i)
				continue
			}
			ix.byValue[v] = append(ix.byValue[v], i)
		}
		ix.pos = make(map[int]int, len(s.nodeOrder))
		for at, i := range s.nodeOrder {
			ix.pos[i] = at
		}
		return ix
	})
	with := ix.byValue[l.value]
	if len(ix.any) == 0 {
		return with
	}
	if len(with) == 0 {
		return ix.any
	}
	// Both, merged back into the nodes' order.
	out := make([]int, 0, len(with)+len(ix.any))
	a, b := with, ix.any
	for len(a) > 0 && len(b) > 0 {
		if ix.pos[a[0]] < ix.pos[b[0]] {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// labelIndex is the nodes by their value of one label, each list in the
// nodes' order; any are the nodes without it (or with a value not known),
// and pos each node's place in that order.
type labelIndex struct {
	byValue map[string][]int
	any     []int
	pos     map[int]int
}

// selected is a label a node selector asks for.
type selected struct{ key, value string }

// selectedLabels are the labels of a node selector whose values are known,
// in key order (an unknown value may be any).
func selectedLabels(sel map[string]string) []selected {
	var out []selected
	for _, k := range sortedKeys(sel) {
		if v := sel[k]; !cluster.IsUnknown(v) {
			out = append(out, selected{k, v})
		}
	}
	return out
}

// emptyAtBootstrap: a node group created with no node (desired size 0) has
// none while the cluster is bootstrapped — Karpenter never scales node groups,
// and a cluster autoscaler is not running yet — so it takes no pod then,
// whatever it would admit. (A maximum size of 0 is not a node group EKS
// creates: sizes left at zero are sizes not given.)
func emptyAtBootstrap(v Verdict, ng *cluster.NodeGroup) Verdict {
	if ng.DesiredSize != 0 || ng.MaxSize == 0 {
		return v
	}
	v.Reasons = append([]Reason{{Code: CodeNoNodes, Message: "had no nodes",
		Note: fmt.Sprintf("node group %q is created with desired size 0, and nothing scales it before Karpenter runs", ng.Name)}}, v.Reasons...)
	v.Result = Refuses
	v.InstanceTypes = nil
	return v
}

// conditionalVerdict: a source that exists only if a count or for_each not known
// before apply says so cannot be relied on to take the pod.
func conditionalVerdict(v Verdict) Verdict {
	var cond string
	switch s := v.Source; {
	case s.NodeGroup != nil:
		cond = s.NodeGroup.Conditional
	case s.Fargate != nil:
		cond = s.Fargate.Conditional
	case s.NodePool != nil && s.NodePool.Object != nil:
		cond = s.NodePool.Object.Conditional
	}
	if cond == "" || v.Result != Fits {
		return v
	}
	v.Result = Unknown
	v.Reasons = append(v.Reasons, Reason{Code: CodeUnknownValue, Message: fmt.Sprintf("it exists only if %s, which is not known before apply", cond)})
	return v
}

// unseenKarpenter reports whether the model has Karpenter NodePools it cannot
// see.
func (s *Simulator) unseenKarpenter() bool {
	for _, u := range s.m.Unseen {
		if u.Karpenter {
			return true
		}
	}
	return false
}

// unseenVerdict is the answer of capacity eksdoctor cannot see into: unknown.
func (s *Simulator) unseenVerdict(u *cluster.UnseenCapacity) Verdict {
	return Verdict{
		Source:  s.sourceOf(u, Source{Kind: cluster.KindUnseen, Name: u.What, Unseen: u}),
		Result:  Unknown,
		Reasons: []Reason{{Code: CodeUnknownValue, Message: fmt.Sprintf("%s cannot be seen: %s", u.What, u.Why)}},
	}
}

// demoteForFargate: a pod a Fargate profile selects is mutated to use
// fargate-scheduler and never considered for EC2 capacity.
func (s *Simulator) demoteForFargate(v *Verdict, pl *Placement) {
	if pl.Fargate == nil || v.Result != Fits {
		return
	}
	v.Result = Refuses
	v.Reasons = append([]Reason{{
		Code:    CodeFargateSelected,
		Message: fmt.Sprintf("the pod is selected by Fargate profile %q and scheduled by fargate-scheduler onto Fargate only", pl.Fargate.Name),
	}}, v.Reasons...)
}

// untolerated returns the first taint with a blocking effect (NoSchedule or
// NoExecute) that no toleration matches.
func untolerated(taints []corev1.Taint, tolerations []corev1.Toleration) (corev1.Taint, bool) {
	return corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), taints, tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, true)
}

// Tolerates reports whether tolerations match a taint (any effect).
func Tolerates(tolerations []corev1.Toleration, taint corev1.Taint) bool {
	return corev1helpers.TolerationsTolerateTaint(klog.Background(), tolerations, &taint, true)
}

// taintString renders a taint the way kube-scheduler does: {key: value}.
func taintString(t corev1.Taint) string {
	return fmt.Sprintf("{%s: %s}", t.Key, t.Value)
}

// TaintText renders key=value:Effect.
func TaintText(t corev1.Taint) string {
	if t.Value == "" {
		return fmt.Sprintf("%s:%s", t.Key, t.Effect)
	}
	return fmt.Sprintf("%s=%s:%s", t.Key, t.Value, t.Effect)
}

// ---- node groups ----

// candidate is one kind of node a node group can launch.
type candidate struct {
	instanceType string
	labels       map[string]string
	reqs         scheduling.Requirements
	unknownKeys  sets.Set[string]
	alloc        corev1.ResourceList
	allocVec     vec
}

// DefaultInstanceType is the instance type a node group launches when it names
// none: the EKS API's default for managed groups, eksctl's for eksctl groups, the
// terraform-aws-eks self-managed default otherwise.
func DefaultInstanceType(ng *cluster.NodeGroup) string {
	switch {
	case ng.CreatedBy == "eksctl":
		return "m5.large"
	case ng.Managed:
		return "t3.medium"
	}
	return "m6i.large"
}

func amiOS(amiType string) string {
	if strings.Contains(strings.ToUpper(amiType), "WINDOWS") {
		return "windows"
	}
	return "linux"
}

func (s *Simulator) candidates(ng *cluster.NodeGroup) []candidate {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.groups[ng]; ok {
		return c
	}
	types := ng.InstanceTypes
	if len(types) == 0 {
		types = []string{DefaultInstanceType(ng)}
	}
	var out []candidate
	for _, t := range types {
		c := candidate{instanceType: t, labels: map[string]string{}, unknownKeys: sets.New[string]()}
		if it, ok := catalog.InstanceTypeByName(t); ok {
			for _, k := range []string{corev1.LabelArchStable, corev1.LabelInstanceTypeStable} {
				c.labels[k] = it.Labels[k]
			}
			c.alloc = withEphemeral(it.Allocatable, ng.DiskBytes)
		} else {
			c.labels[corev1.LabelInstanceTypeStable] = t
			// The kubelet labels every node with its architecture; for a type
			// the catalog does not hold, which one is not known.
			c.unknownKeys.Insert(corev1.LabelArchStable)
			if cluster.IsUnknown(t) {
				c.unknownKeys.Insert(corev1.LabelInstanceTypeStable)
			}
		}
		c.labels[corev1.LabelOSStable] = amiOS(ng.AMIType)
		if ng.Managed {
			c.labels["eks.amazonaws.com/nodegroup"] = ng.Name
		}
		for k, v := range ng.Labels {
			if cluster.IsUnknown(v) || cluster.IsUnknown(k) {
				c.unknownKeys.Insert(k)
				continue
			}
			c.labels[k] = v
		}
		c.reqs = scheduling.NewLabelRequirements(c.labels)
		c.allocVec = vecOf(c.alloc)
		out = append(out, c)
	}
	s.groups[ng] = out
	return out
}

// groupUndefined are keys a node group's nodes carry with values no configuration
// states (zone, hostname, ...): requirements on them are assumed satisfiable.
var groupUndefined = sets.New(
	corev1.LabelTopologyZone, corev1.LabelTopologyRegion, corev1.LabelHostname,
	corev1.LabelFailureDomainBetaZone, corev1.LabelFailureDomainBetaRegion,
	"topology.k8s.aws/zone-id", "eks.amazonaws.com/capacityType", "eks.amazonaws.com/nodegroup-image",
	"eks.amazonaws.com/sourceLaunchTemplateId", "eks.amazonaws.com/sourceLaunchTemplateVersion",
	"node.kubernetes.io/lifecycle", "k8s.io/cloud-provider-aws",
)

func (s *Simulator) nodeGroupVerdict(ng *cluster.NodeGroup, pc *constraints, req corev1.ResourceList, need vec) Verdict {
	v := Verdict{Source: s.sourceOf(ng, Source{Kind: cluster.KindNodeGroup, Name: ng.Name, NodeGroup: ng})}
	unknownTaints := hasField(ng.Unknown, "taints")
	unknownLabels := hasField(ng.Unknown, "labels")
	cands := s.candidates(ng)
	st := s.static.get(staticKey{ng, pc.sig}, func() *static {
		st := &static{}
		if t, bad := untolerated(ng.Taints, pc.pod.Spec.Tolerations); bad {
			tt := t
			st.reasons = append(st.reasons, Reason{Code: CodeTaint, Taint: &tt, Message: "node(s) had untolerated taint " + taintString(t)})
		}
		var affinity *Reason
		for i, c := range cands {
			issues := compatibleTerms(c.reqs, pc.terms, groupUndefined)
			if len(issues) == 0 {
				st.cands = append(st.cands, i)
				continue
			}
			for _, is := range issues {
				if c.unknownKeys.Has(is.key) {
					st.unknownAff = true
				}
			}
			if affinity == nil {
				affinity = &Reason{Code: CodeAffinity, Key: issues[0].key, Message: "node(s) didn't match Pod's node affinity/selector: " + issues[0].message}
			}
		}
		if len(st.cands) == 0 && affinity != nil {
			st.reasons = append(st.reasons, *affinity)
		}
		return st
	})
	v.Reasons = withStatic(v.Reasons, st.reasons)
	var resReason *Reason
	var fitTypes []string
	var deviceUnknown *Reason
	if len(st.cands) > 0 {
		over := s.nodeGroupOverhead(ng, cands)
		refuse, unknown := s.deviceGap(ng, cands, req)
		deviceUnknown = unknown
		for _, i := range st.cands {
			if refuse != nil {
				resReason = refuse
				break
			}
			c := cands[i]
			if c.alloc == nil {
				fitTypes = append(fitTypes, c.instanceType)
				continue
			}
			if !need.plus(over.vec).within(c.allocVec) {
				if resReason == nil {
					short := shortfall(req, c.alloc, over.list)
					resReason = &Reason{Code: CodeResources, Resources: short, Message: insufficient(short, req, c)}
				}
				continue
			}
			fitTypes = append(fitTypes, c.instanceType)
		}
		if len(fitTypes) == 0 && resReason != nil {
			v.Reasons = append(v.Reasons, *resReason)
		}
	}
	v.InstanceTypes = fitTypes
	if len(v.Reasons) == 0 && len(st.cands) > 0 && pc.vols != nil && len(ng.Zones) > 0 {
		// The group's nodes run in its zones: its pods' volumes must be
		// usable in one of them.
		if r := s.groupVolumeReason(ng, cands[st.cands[0]].labels, pc.vols); r != nil {
			v.Reasons = append(v.Reasons, *r)
			v.InstanceTypes = nil
		}
	}
	switch {
	case len(v.Reasons) == 0 && deviceUnknown != nil:
		v.Result = Unknown
		v.Reasons = append(v.Reasons, *deviceUnknown)
	case len(v.Reasons) == 0:
		v.Result = Fits
	case (unknownTaints && v.Reasons[0].Code == CodeTaint) || st.unknownAff || (unknownLabels && OnlyCode(v.Reasons, CodeAffinity)):
		v.Result = Unknown
		v.Reasons = append(v.Reasons, Reason{Code: CodeUnknownValue, Message: "node group " + strings.Join(ng.Unknown, ", ") + " not known before apply"})
	default:
		v.Result = Refuses
	}
	if v.Result == Refuses && len(ng.Unknown) > 0 && !unknownTaints && !unknownLabels && hasField(ng.Unknown, "instance_types") && OnlyCode(v.Reasons, CodeResources) {
		v.Result = Unknown
	}
	return v
}

// overhead is the DaemonSet overhead on a source's nodes, in both forms.
type overhead struct {
	list corev1.ResourceList
	vec  vec
}

// nodeGroupOverhead is the DaemonSet overhead on a node group's nodes: the
// DaemonSets that tolerate its taints and match its labels.
func (s *Simulator) nodeGroupOverhead(ng *cluster.NodeGroup, cands []candidate) overhead {
	key := "ng:" + ng.Name
	list := s.overheadFor(key, func(d *corev1.Pod) bool {
		if _, bad := untolerated(ng.Taints, d.Spec.Tolerations); bad {
			return false
		}
		terms := podTerms(d)
		for _, c := range cands {
			if len(compatibleTerms(c.reqs, terms, groupUndefined)) == 0 {
				return true
			}
		}
		return false
	})
	return overhead{list: list, vec: s.overheadVec(key, list)}
}

func (s *Simulator) overheadVec(key string, list corev1.ResourceList) vec {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.overVec[key]; ok {
		return v
	}
	v := vecOf(list)
	s.overVec[key] = v
	return v
}

func insufficient(short []corev1.ResourceName, req corev1.ResourceList, c candidate) string {
	var parts []string
	for _, r := range short {
		a := c.alloc[r]
		q := req[r]
		parts = append(parts, fmt.Sprintf("Insufficient %s (requests %s, %s allocates %s)", r, q.String(), c.instanceType, a.String()))
	}
	return strings.Join(parts, ", ")
}

func hasField(list []string, f string) bool {
	for _, x := range list {
		if x == f {
			return true
		}
	}
	return false
}

// OnlyCode reports whether there are reasons and every one has code c.
func OnlyCode(rs []Reason, c Code) bool {
	for _, r := range rs {
		if r.Code != c {
			return false
		}
	}
	return len(rs) > 0
}

// compatibleTerms checks a pod's requirement terms (nodeSelector plus each
// required node affinity term; terms are ORed) against a node's label
// requirements; the issues of the first term are returned only when no term
// matches.
func compatibleTerms(node scheduling.Requirements, terms []scheduling.Requirements, undefined sets.Set[string]) []keyIssue {
	var first []keyIssue
	for i, term := range terms {
		issues := compatibleNode(node, term, undefined)
		if len(issues) == 0 {
			return nil
		}
		if i == 0 {
			first = issues
		}
	}
	return first
}

// compatibleWithLabels is compatibleTerms for a pod and a label set.
func compatibleWithLabels(labels map[string]string, pod *corev1.Pod, undefined sets.Set[string]) []keyIssue {
	return compatibleTerms(scheduling.NewLabelRequirements(labels), podTerms(pod), undefined)
}

// compatibleNode is compatible for a concrete node: a label the node lacks
// satisfies only NotIn and DoesNotExist, unless its value is simply not stated
// anywhere (undefined).
func compatibleNode(node, pod scheduling.Requirements, undefined sets.Set[string]) []keyIssue {
	var issues []keyIssue
	for _, key := range sortedKeys(pod) {
		incoming := pod.Get(key)
		op := incoming.Operator()
		if !node.Has(key) {
			if undefined.Has(key) && op != corev1.NodeSelectorOpDoesNotExist {
				continue
			}
			if op == corev1.NodeSelectorOpNotIn || op == corev1.NodeSelectorOpDoesNotExist {
				continue
			}
			issues = append(issues, keyIssue{key: key, message: fmt.Sprintf("label %q is not set on the nodes (pod requires %s)", key, incoming)})
			continue
		}
		if !node.Get(key).HasIntersection(incoming) {
			issues = append(issues, keyIssue{key: key, message: fmt.Sprintf("pod requires %s, nodes have %s", incoming, node.Get(key))})
		}
	}
	return issues
}

// overheadFor sums the requests of the DaemonSets whose pods would run on a
// source's nodes (matches decides), cached by the source key.
func (s *Simulator) overheadFor(key string, matches func(*corev1.Pod) bool) corev1.ResourceList {
	s.mu.Lock()
	if o, ok := s.overhead[key]; ok {
		s.mu.Unlock()
		return o
	}
	s.mu.Unlock()
	total := corev1.ResourceList{}
	for _, w := range s.m.Workloads {
		if !w.IsDaemonSet() {
			continue
		}
		d := podOf(w)
		if matches(d) {
			addTo(total, requests(d))
		}
	}
	s.mu.Lock()
	s.overhead[key] = total
	s.mu.Unlock()
	return total
}

// ---- live nodes ----

// nodeState is what a node's verdict reads besides the pod, computed once per
// node: its taints and cordon (as a kind: nodes of one kind are tolerated
// alike), what its allocatable leaves free after the requests of the pods
// bound to it, counted as kube-scheduler counts them (CPU in millicores,
// everything else in units, pod by pod), and its verdicts' source.
type nodeState struct {
	taints int
	free   vec
	src    *Source
}

// nodeStates returns the state of every node of the model, in its order.
func (s *Simulator) nodeStates() []nodeState {
	s.nodeOnce.Do(func() {
		used := map[string]vec{}
		var pod corev1.Pod // one, reused: a spec is large and there are many
		for _, p := range s.m.Pods {
			if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
				continue
			}
			pod.Spec = p.Spec
			used[p.Spec.NodeName] = used[p.Spec.NodeName].plus(vecOf(requests(&pod)))
		}
		kinds := map[string]int{}
		s.nodes = make([]nodeState, len(s.m.Nodes))
		for i, n := range s.m.Nodes {
			sig := taintSig(n)
			k, ok := kinds[sig]
			if !ok {
				k = len(kinds)
				kinds[sig] = k
			}
			s.nodes[i] = nodeState{taints: k, free: vecOf(n.Allocatable).minus(used[n.Name]), src: s.sourceOf(n, Source{Kind: cluster.KindNode, Name: n.Name, Node: n})}
		}
		// The nodes in the order their verdicts are sorted in (by name), so
		// that a placement's node verdicts need no sorting.
		s.nodeOrder = make([]int, len(s.m.Nodes))
		for i := range s.nodeOrder {
			s.nodeOrder[i] = i
		}
		slices.SortStableFunc(s.nodeOrder, func(a, b int) int { return strings.Compare(s.m.Nodes[a].Name, s.m.Nodes[b].Name) })
	})
	return s.nodes
}

// nodeStatics returns the table of static node verdicts for one kind of pod
// (its node selection, tolerations and the node names it asks for by field),
// shared by the placements of every pod of that kind.
func (s *Simulator) nodeStatics(sig string, pod *corev1.Pod, byNode bool) *staticTable {
	s.nodeStates() // the nodes' states and order, which the verdicts read
	s.mu.Lock()
	t, ok := s.nodeStatic[sig]
	if !ok {
		t = &staticTable{}
		s.nodeStatic[sig] = t
	}
	s.mu.Unlock()
	t.once.Do(func() { t.index(s, pod, byNode) })
	return t
}

// staticTable holds static verdicts by the kind of node for one kind of pod:
// nodes alike in their taints, cordon and the labels the pod's node selection
// reads are one kind (a pod that names nodes by field: each node its own).
// Slots are read without a lock by every node's verdict; two callers may
// compute the same slot, one is kept.
type staticTable struct {
	once sync.Once
	// kindOf is each node's kind (nil: each node is its own).
	kindOf []int32
	slots  []atomic.Pointer[static]
	// aff is the pod's required node affinity, parsed once for every kind.
	affOnce sync.Once
	aff     nodeaffinity.RequiredNodeAffinity
}

// index sorts the nodes into the kinds the pod tells apart: a thousand
// nodes of one NodePool, each with its own hostname, are one kind to a pod
// that selects by NodePool, zone or instance type, so their taints and labels
// are judged once. The sorting depends only on the label keys the pod reads,
// and is shared by every table that reads the same keys.
func (t *staticTable) index(s *Simulator, pod *corev1.Pod, byNode bool) {
	if byNode {
		t.slots = make([]atomic.Pointer[static], len(s.m.Nodes))
		return
	}
	keys := selectedKeys(pod)
	ki := s.kindIndexes.get(strings.Join(keys, "\x00"), func() *kindIndex { return newKindIndex(s.m.Nodes, s.nodeStates(), keys) })
	t.kindOf = ki.kindOf
	t.slots = make([]atomic.Pointer[static], ki.kinds)
}

// kindIndex is each node's kind for pods that read the same label keys.
type kindIndex struct {
	kindOf []int32
	kinds  int
}

func newKindIndex(nodes []*cluster.Node, states []nodeState, keys []string) *kindIndex {
	ki := &kindIndex{kindOf: make([]int32, len(nodes))}
	kinds := map[string]int32{}
	var b []byte
	for i, n := range nodes {
		b = strconv.AppendInt(b[:0], int64(states[i].taints), 10)
		for _, k := range keys {
			v, ok := n.Labels[k]
			b = append(b, 0)
			if ok {
				b = append(append(b, 1), v...)
			}
		}
		k, ok := kinds[string(b)]
		if !ok {
			k = int32(len(kinds))
			kinds[string(b)] = k
		}
		ki.kindOf[i] = k
	}
	ki.kinds = len(kinds)
	return ki
}

// selectedKeys are the node labels a pod's required node selection reads:
// its nodeSelector's and its required node affinity's matchExpressions' keys,
// sorted, once each.
func selectedKeys(pod *corev1.Pod) []string {
	var keys []string
	for k := range pod.Spec.NodeSelector {
		keys = append(keys, k)
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, r := range term.MatchExpressions {
				keys = append(keys, r.Key)
			}
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

func (t *staticTable) affinity(pod *corev1.Pod) nodeaffinity.RequiredNodeAffinity {
	t.affOnce.Do(func() { t.aff = nodeaffinity.GetRequiredNodeAffinity(pod) })
	return t.aff
}

func (t *staticTable) get(k int, compute func() *static) *static {
	if st := t.slots[k].Load(); st != nil {
		return st
	}
	t.slots[k].CompareAndSwap(nil, compute())
	return t.slots[k].Load()
}

// nodeFilter is what kube-scheduler's NodeAffinity PreFilter makes of a pod's
// required node affinity on node names (matchFields on metadata.name, which
// every DaemonSet pod has): the nodes it narrows the search to, or that its
// terms conflict.
type nodeFilter struct {
	fields string
	// names: nil when the pod does not narrow the nodes by name.
	names    sets.Set[string]
	conflict bool
}

// The reasons of nodes the PreFilter set aside, as kube-scheduler words them.
var (
	reasonTermsConflict = []Reason{{Code: CodeAffinity, Key: metav1.ObjectNameField, Message: "pod affinity terms conflict"}}
	reasonNotNamed      = []Reason{{Code: CodeAffinity, Key: metav1.ObjectNameField, Message: "node(s) didn't satisfy plugin(s) [NodeAffinity]"}}
)

// nodeFilterOf follows the NodeAffinity PreFilter: every required term that
// names nodes (metadata.name In) narrows to the intersection of its names,
// the terms (ORed) to the union; a term that names no node leaves every node
// eligible; names that no term can meet at once are a conflict.
func nodeFilterOf(pod *corev1.Pod) nodeFilter {
	nf := nodeFilter{fields: matchFields(pod)}
	if nf.fields == "" {
		return nf
	}
	terms := pod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		return nf
	}
	var names sets.Set[string]
	for _, t := range terms {
		var termNames sets.Set[string]
		for _, r := range t.MatchFields {
			if r.Key == metav1.ObjectNameField && r.Operator == corev1.NodeSelectorOpIn {
				if termNames == nil {
					termNames = sets.New(r.Values...)
				} else {
					termNames = termNames.Intersection(sets.New(r.Values...))
				}
			}
		}
		if termNames == nil {
			return nf
		}
		names = names.Union(termNames)
	}
	nf.names = names
	nf.conflict = names != nil && names.Len() == 0
	return nf
}

// nodeVerdict answers for the i-th node of the model the way kube-scheduler's
// filters do: the NodeAffinity PreFilter first, then NodeUnschedulable,
// TaintToleration, NodeAffinity and NodeResourcesFit in that order. Every
// failing filter is listed; a scheduler summary counts the first.
func (s *Simulator) nodeVerdict(i int, pod *corev1.Pod, pc *constraints, nf nodeFilter, statics *staticTable, need vec) Verdict {
	n := s.m.Nodes[i]
	ns := &s.nodes[i]
	v := Verdict{Source: ns.src, Result: Refuses}
	switch {
	case nf.conflict:
		v.Reasons = reasonTermsConflict
		return v
	case pc.vols != nil && pc.vols.preFilter != "":
		v.Reasons = []Reason{{Code: CodeVolume, Message: pc.vols.preFilter, PreFilter: true}}
		return v
	case nf.names != nil && !nf.names.Has(n.Name):
		v.Reasons = reasonNotNamed
		return v
	}
	// Taints, unschedulable and node affinity depend on the node's labels and
	// taints (and its name, for a pod that names nodes), not on the node itself:
	// answered once per kind of node and kind of pod.
	k := i
	if statics.kindOf != nil {
		k = int(statics.kindOf[i])
	}
	st := statics.get(k, func() *static {
		st := &static{}
		if n.Unschedulable {
			if !Tolerates(pod.Spec.Tolerations, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}) {
				st.reasons = append(st.reasons, Reason{Code: CodeUnschedulable, Message: "node(s) were unschedulable"})
			}
		}
		if t, bad := untolerated(n.Taints, pod.Spec.Tolerations); bad {
			tt := t
			st.reasons = append(st.reasons, Reason{Code: CodeTaint, Taint: &tt, Message: "node(s) had untolerated taint " + taintString(t)})
		}
		node := &corev1.Node{}
		node.Name = n.Name
		node.Labels = n.Labels
		if ok, _ := statics.affinity(pod).Match(node); !ok {
			st.reasons = append(st.reasons, Reason{Code: CodeAffinity, Message: "node(s) didn't match Pod's node affinity/selector"})
		}
		return st
	})
	// The reasons are shared by every node that refuses alike; an append to a
	// verdict's reasons copies.
	v.Reasons = st.reasons[:len(st.reasons):len(st.reasons)]
	// A node without allocatable (its kubelet has not reported it yet) has
	// room for nothing, as kube-scheduler counts it.
	if short := need.beyond(ns.free); len(short) > 0 {
		v.Reasons = st.withShortfall(short)
	}
	if pc.vols != nil {
		// VolumeBinding and VolumeZone run after the filters above.
		if rs := pc.vols.volumeReasons(s.volumeIndex(), n.Name, n.Labels); len(rs) > 0 {
			v.Reasons = append(slices.Clip(v.Reasons), rs...)
		}
	}
	if len(v.Reasons) == 0 {
		v.Reasons = nil
		v.Result = Fits
	}
	return v
}

// withShortfall returns the static reasons followed by the resources a node
// lacks, made once for each set of lacking resources.
func (st *static) withShortfall(short []corev1.ResourceName) []Reason {
	key := string(short[0])
	for _, r := range short[1:] {
		key += "," + string(r)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if rs, ok := st.short[key]; ok {
		return rs
	}
	parts := make([]string, len(short))
	for i, r := range short {
		parts[i] = insufficientText(r)
	}
	rs := append(slices.Clip(st.reasons), Reason{Code: CodeResources, Resources: short, Message: strings.Join(parts, ", ")})
	rs = slices.Clip(rs)
	if st.short == nil {
		st.short = map[string][]Reason{}
	}
	st.short[key] = rs
	return rs
}

// taintSig identifies what a node's verdict reads of it besides its labels
// and resources: its taints and whether it is cordoned.
func taintSig(n *cluster.Node) string {
	var b strings.Builder
	for _, t := range n.Taints {
		// With its effect: a PreferNoSchedule taint refuses nothing.
		b.WriteString(TaintText(t) + "\x00")
	}
	if n.Unschedulable {
		b.WriteString("\x01cordoned")
	}
	return b.String()
}

// ---- Fargate ----

// Fargate limits per pod (EKS Fargate pod configuration: up to 16 vCPU, 120 GiB).
var (
	fargateMaxCPU    = resource.MustParse("16")
	fargateMaxMemory = resource.MustParse("120Gi")
)

// fargateNodeLabels are the labels a Fargate node carries that pods select on.
var fargateNodeLabels = map[string]string{
	"eks.amazonaws.com/compute-type": "fargate",
	corev1.LabelOSStable:             "linux",
	corev1.LabelArchStable:           "amd64",
}

func (s *Simulator) fargateVerdict(fp *cluster.FargateProfile, pl *Placement, pod *corev1.Pod, daemon bool) Verdict {
	v := Verdict{Source: s.sourceOf(fp, Source{Kind: cluster.KindFargate, Name: fp.Name, Fargate: fp})}
	switch {
	case daemon:
		v.Result = Refuses
		v.Reasons = []Reason{{Code: CodeFargateDaemonSet, Message: "Fargate does not run DaemonSet pods"}}
		return v
	case pl.Fargate != fp:
		v.Result = Refuses
		_, selects := MatchingSelector(fp, pod.Namespace, pod.Labels)
		if selects && pl.Fargate != nil {
			v.Reasons = []Reason{{Code: CodeFargateNotSelected, Message: fmt.Sprintf("profile %q also selects the pod, but %q comes first by name", fp.Name, pl.Fargate.Name)}}
			return v
		}
		if selects && KeptOffFargate(pod.Annotations) {
			v.Reasons = []Reason{{Code: CodeFargateNotSelected, Key: ComputeTypeKey, Message: fmt.Sprintf("profile %q selects the pod's namespace and labels, but the pod's annotation %s: ec2 keeps it off Fargate: the Fargate webhook leaves it to the default scheduler, which needs an EC2 node", fp.Name, ComputeTypeKey)}}
			return v
		}
		msg, unknown := whyNotSelected(fp, pod.Namespace, pod.Labels)
		v.Reasons = []Reason{{Code: CodeFargateNotSelected, Message: msg}}
		if unknown {
			v.Result = Unknown
		}
		return v
	}
	if issues := compatibleWithLabels(fargateNodeLabels, pod, groupUndefined); len(issues) > 0 {
		v.Reasons = append(v.Reasons, Reason{Code: CodeAffinity, Key: issues[0].key, Message: "Fargate node(s) didn't match Pod's node affinity/selector: " + issues[0].message})
	}
	var short []corev1.ResourceName
	if c, ok := pl.Requests[corev1.ResourceCPU]; ok && c.Cmp(fargateMaxCPU) > 0 {
		short = append(short, corev1.ResourceCPU)
	}
	if m, ok := pl.Requests[corev1.ResourceMemory]; ok && m.Cmp(fargateMaxMemory) > 0 {
		short = append(short, corev1.ResourceMemory)
	}
	if len(short) > 0 {
		v.Reasons = append(v.Reasons, Reason{Code: CodeResources, Resources: short, Message: "requests exceed the largest Fargate pod (16 vCPU, 120 GiB)"})
	}
	if len(v.Reasons) == 0 {
		v.Result = Fits
	} else {
		v.Result = Refuses
	}
	return v
}

// OnFargateNodes reports whether a DaemonSet gets a pod for every Fargate
// node: it tolerates the Fargate taint (eks.amazonaws.com/compute-type=
// fargate:NoSchedule, a wildcard toleration included) and nothing in its node
// selection keeps it off Fargate nodes' labels. Fargate nodes hold one pod
// each, so those pods stay Pending (`Too many pods`).
func OnFargateNodes(w *cluster.Workload) bool {
	if !w.IsDaemonSet() {
		return false
	}
	pod := podOf(w)
	taint := corev1.Taint{Key: ComputeTypeKey, Value: "fargate", Effect: corev1.TaintEffectNoSchedule}
	return Tolerates(pod.Spec.Tolerations, taint) && len(compatibleWithLabels(fargateNodeLabels, pod, groupUndefined)) == 0
}

// ComputeTypeKey is the label Fargate nodes carry and the pod annotation that
// keeps a pod off Fargate (eks.amazonaws.com/compute-type: ec2, which the CoreDNS
// EKS creates with a cluster carries).
const ComputeTypeKey = "eks.amazonaws.com/compute-type"

// KeptOffFargate reports whether a pod's annotations keep it off Fargate: the
// Fargate admission webhook does not mutate a pod annotated
// eks.amazonaws.com/compute-type: ec2, whatever the profiles select.
func KeptOffFargate(annotations map[string]string) bool {
	return annotations[ComputeTypeKey] == "ec2"
}

// ProfileFor returns the Fargate profile that takes a pod: the one that
// selects it (SelectingProfile), unless its annotations keep it off Fargate.
func ProfileFor(profiles []*cluster.FargateProfile, namespace string, labels, annotations map[string]string) *cluster.FargateProfile {
	if KeptOffFargate(annotations) {
		return nil
	}
	return SelectingProfile(profiles, namespace, labels)
}

// SelectingProfile returns the Fargate profile that selects a pod with these
// namespace and labels: among the profiles with a matching selector, the first by
// name. Selectors with values unknown before apply never match.
func SelectingProfile(profiles []*cluster.FargateProfile, namespace string, labels map[string]string) *cluster.FargateProfile {
	var best *cluster.FargateProfile
	for _, fp := range profiles {
		if _, ok := MatchingSelector(fp, namespace, labels); ok && (best == nil || fp.Name < best.Name) {
			best = fp
		}
	}
	return best
}

// MatchingSelector returns the first selector of a profile that selects the pod.
func MatchingSelector(fp *cluster.FargateProfile, namespace string, labels map[string]string) (int, bool) {
	for i, sel := range fp.Selectors {
		if selectorMatches(sel, namespace, labels) {
			return i, true
		}
	}
	return -1, false
}

func selectorMatches(sel cluster.FargateSelector, namespace string, labels map[string]string) bool {
	if cluster.IsUnknown(sel.Namespace) || !Glob(sel.Namespace, namespace) {
		return false
	}
	for k, want := range sel.Labels {
		matched := false
		for lk, lv := range labels {
			if Glob(k, lk) && Glob(want, lv) {
				matched = true
				break
			}
		}
		if !matched {
			return false
		}
	}
	return true
}

// whyNotSelected explains the closest selector's mismatch. unknown is set when a
// selector's namespace or labels are not known before apply.
func whyNotSelected(fp *cluster.FargateProfile, namespace string, labels map[string]string) (string, bool) {
	if len(fp.Selectors) == 0 {
		return fmt.Sprintf("profile %q has no selectors", fp.Name), hasField(fp.Unknown, "selectors")
	}
	var parts []string
	unknown := false
	for _, sel := range fp.Selectors {
		if cluster.IsUnknown(sel.Namespace) {
			unknown = true
			parts = append(parts, fmt.Sprintf("namespace %s is not known before apply", sel.Namespace))
			continue
		}
		if !Glob(sel.Namespace, namespace) {
			parts = append(parts, fmt.Sprintf("selects namespace %q, the pod is in %q", sel.Namespace, namespace))
			continue
		}
		var missing []string
		for _, k := range sortedKeys(sel.Labels) {
			if cluster.IsUnknown(sel.Labels[k]) {
				unknown = true
			}
			ok := false
			for lk, lv := range labels {
				if Glob(k, lk) && Glob(sel.Labels[k], lv) {
					ok = true
				}
			}
			if !ok {
				missing = append(missing, fmt.Sprintf("%s=%s", k, sel.Labels[k]))
			}
		}
		parts = append(parts, fmt.Sprintf("selects namespace %q with labels %s, the pod lacks %s", sel.Namespace, labelString(sel.Labels), strings.Join(missing, ", ")))
	}
	sort.Strings(parts)
	return fmt.Sprintf("profile %q does not select the pod: %s", fp.Name, strings.Join(parts, "; ")), unknown
}

func labelString(m map[string]string) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+"="+m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// Glob matches Fargate selector patterns: * is any run of characters, ? exactly one.
func Glob(pattern, s string) bool { return textmatch.Wildcard(pattern, s, true) }
