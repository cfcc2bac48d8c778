package sim

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/schema"
)

// poolInfo is what a NodePool offers, computed once.
type poolInfo struct {
	reqs scheduling.Requirements
	// words are the requirements worded: the refusals of every pod that
	// selects another NodePool quote them.
	words requirementWords
	os    string
	// types are the instance types the NodePool's requirements allow, smallest
	// first, with whether one node of the type alone exceeds the NodePool's limits.
	types     []sizedType
	overLimit []bool
	// withinLimits counts the types a node of which the limits allow.
	withinLimits int
	// remaining is what the limits leave: the limits less what the
	// NodePool's nodes already hold, when that is known.
	remaining corev1.ResourceList
	// refusal is the reason it refuses every pod, before taints and
	// requirements (no instance type, or its limits allow no node): one
	// reason, cap 1, shared by the verdicts.
	refusal []Reason
	// notReady explains why Karpenter ignores the NodePool ("" when usable);
	// unknownClass is set when the node class is simply not in the inputs.
	notReady     string
	unknownClass bool
	// provider is the node class group of a provider eksdoctor does not
	// model ("" for AWS); unmodelled words why its instance types are
	// unknown then.
	provider   string
	unmodelled string
	// group is the node class's API group ("" for the AWS provider's), and
	// view the catalog as that provider labels it (none for another's).
	group string
	view  *catalogView
	// uncertainWords: Karpenter may word its refusals of this NodePool's
	// pods by its limits, which its instance types decide (another
	// provider's limits with room left).
	uncertainWords bool
}

// pool is what placements read of a NodePool, worked out once.
func (s *Simulator) pool(np *cluster.NodePool) *poolInfo {
	return s.pools.get(np, func() *poolInfo {
		p := s.newPool(np)
		p.refusal = poolRefusal(np, p)
		return p
	})
}

// poolRefusal is what Karpenter says of a NodePool before it looks at a pod:
// a NodePool whose requirements leave no instance type is skipped; then its
// limits (a node limit of zero, then every type a node of which would breach
// them). Nil when it looks at the pod.
func poolRefusal(np *cluster.NodePool, p *poolInfo) []Reason {
	if p.unmodelled != "" {
		return limitsReached(np, p.remaining)
	}
	if len(p.types) == 0 {
		return []Reason{{Code: CodeNoInstanceType, Message: msgFilteredOut}}
	}
	if q, ok := p.remaining[resourceNodes]; ok && q.IsZero() {
		return []Reason{{Code: CodeLimits, Message: "node limits have been exhausted for nodepool" + nodePoolField(np), Note: inUseNote(np)}}
	}
	if p.withinLimits == 0 {
		return []Reason{{Code: CodeLimits, Message: "all available instance types exceed limits for nodepool" + nodePoolField(np), Note: inUseNote(np)}}
	}
	return nil
}

// limitsReached is Karpenter's refusal of a NodePool of another provider whose
// limits are already reached, whatever its instance types: no node left
// under a node limit, or less left than the smallest node of any provider
// has (one CPU, 512 MiB of memory: every instance type of every cloud has at
// least that much, docs/facts.md). Nil when a node may still fit.
func limitsReached(np *cluster.NodePool, remaining corev1.ResourceList) []Reason {
	if q, ok := remaining[resourceNodes]; ok && q.IsZero() {
		return []Reason{{Code: CodeLimits, Message: "node limits have been exhausted for nodepool" + nodePoolField(np), Note: inUseNote(np)}}
	}
	for name, least := range smallestNode {
		if q, ok := remaining[name]; ok && q.Cmp(least) < 0 {
			return []Reason{{Code: CodeLimits, Message: "all available instance types exceed limits for nodepool" + nodePoolField(np), Note: inUseNote(np)}}
		}
	}
	return nil
}

// smallestNode is less than every instance type of any provider holds.
var smallestNode = map[corev1.ResourceName]resource.Quantity{
	resourceNodes:         resource.MustParse("1"),
	corev1.ResourceCPU:    resource.MustParse("1"),
	corev1.ResourceMemory: resource.MustParse("512Mi"),
	corev1.ResourcePods:   resource.MustParse("1"),
}

// limitsUnsettled reports whether a NodePool of another provider has limits
// with room left: whether an instance type fits in that room is its
// instance types' to say, so Karpenter may answer any pod with its limits.
func limitsUnsettled(remaining corev1.ResourceList) bool {
	for _, q := range remaining {
		if q.Sign() > 0 {
			return true
		}
	}
	return false
}

// remainingLimits is what a NodePool's limits leave for a new node: the
// limits less what its nodes hold (Karpenter subtracts each node's capacity;
// status.resources is their sum). A limit already passed leaves less than
// nothing, and no instance type fits in it.
func remainingLimits(np *cluster.NodePool) corev1.ResourceList {
	if np.InUse == nil || np.Limits == nil {
		return np.Limits
	}
	out := corev1.ResourceList{}
	for name, lim := range np.Limits {
		q := lim.DeepCopy()
		if used, ok := np.InUse[name]; ok {
			q.Sub(used)
		}
		out[name] = q
	}
	return out
}

// inUseNote says how much of its limits a NodePool's nodes hold ("" when
// not known): "in use: cpu 96 of 100, nodes 12 of 12".
func inUseNote(np *cluster.NodePool) string {
	if np.InUse == nil {
		return ""
	}
	var parts []string
	names := make([]corev1.ResourceName, 0, len(np.Limits))
	for name := range np.Limits {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		used := np.InUse[name]
		lim := np.Limits[name]
		parts = append(parts, fmt.Sprintf("%s %s of %s", name, used.String(), lim.String()))
	}
	if len(parts) == 0 {
		return ""
	}
	return "in use: " + strings.Join(parts, ", ")
}

// notServed says why the Karpenter the inputs install never sees a NodePool
// (or Provisioner) written in an API version it does not serve: applying it
// fails with "no matches for kind". "" when it is served, or when the version
// is not known from the inputs.
func (s *Simulator) notServed(np *cluster.NodePool) string {
	k := s.m.Karpenter
	if np.Object == nil || k.Version == "" || k.VersionFrom == "" || strings.HasPrefix(k.VersionFrom, "CRD ") || k.VersionFrom == "assumed" || s.m.Live != nil {
		return ""
	}
	served, known := schema.ServesAPI(np.Object.APIVersion, k.Version)
	if !known || served {
		return ""
	}
	return fmt.Sprintf("Karpenter %s (%s) does not serve %s, so %s %q is never created (no matches for kind %q)", k.Version, k.VersionFrom, np.Object.APIVersion, np.Object.Kind, np.Name, np.Object.Kind)
}

func (s *Simulator) newPool(np *cluster.NodePool) *poolInfo {
	p := &poolInfo{reqs: nodePoolRequirements(np), remaining: remainingLimits(np)}
	if _, ok := p.remaining[resourceNodes]; ok && s.preV1(np) {
		// Before v1 a node limit is no resource Karpenter counts: no
		// instance type has a "nodes" capacity, and the NodePool's
		// status.resources holds none, so the limit never stops a launch.
		p.remaining = p.remaining.DeepCopy()
		delete(p.remaining, resourceNodes)
	}
	p.words = wordsOf(p.reqs)
	if !np.InlineNodeClass {
		p.group = np.NodeClassRef.Group
	}
	p.view = viewOf(p.group)
	if p.provider = otherProvider(np); p.provider != "" {
		// Another provider's node class: neither it nor its instance
		// types are modelled; a running cluster says whether Karpenter
		// takes the NodePool.
		p.unmodelled = unmodelledTypes(np)
		p.notReady = notReadyCondition(np)
		p.uncertainWords = limitsReached(np, p.remaining) == nil && limitsUnsettled(p.remaining)
		return p
	}
	nc := s.nodeClass(np)
	switch {
	case np.InlineNodeClass:
		// A v1alpha5 Provisioner with its AWS settings inline: no node
		// class to be Ready.
	case nc == nil && !slices.ContainsFunc(s.m.NodeClasses, func(c *cluster.NodeClass) bool { return !c.Inline }):
		p.unknownClass = true
	case nc == nil:
		p.notReady = fmt.Sprintf("%s %q not found; Karpenter ignores NodePools whose node class is not Ready", kindOr(np.NodeClassRef.Kind), np.NodeClassRef.Name)
	default:
		p.notReady = nodeClassNotReady(nc)
		p.os = nodeClassOS(nc)
	}
	if live, ok := readiness(np); ok {
		// The NodePool's own conditions say what Karpenter decided.
		p.notReady = live
	}
	if why := s.notServed(np); why != "" {
		p.notReady = why
	}
	if offeringExcluded(p.reqs) {
		// Requirements that leave no zone or capacity type (two disjoint
		// zone sets) leave no offering of any type.
		return p
	}
	// NodePools that differ only in what instance types do not read (their
	// names, custom labels, limits) share the types they admit.
	p.types = s.poolTypes.get(typesKey(np, p, nc), func() []sizedType {
		var types []sizedType
		for _, st := range p.view.types {
			if instanceTypeFits(p.view, st.it, p.reqs, p.os) {
				if nc != nil {
					st = withNodeClassDisk(st, nc)
				}
				types = append(types, st)
			}
		}
		return slices.Clip(types)
	})
	for _, st := range p.types {
		over := st.exceedsLimits(p.remaining)
		p.overLimit = append(p.overLimit, over)
		if !over {
			p.withinLimits++
		}
	}
	return p
}

// typesKey is what decides the instance types a NodePool admits: its
// catalog view, the operating system and disk of its node class, and, in the
// order nodePoolRequirements adds them, the requirements and labels of the
// keys instance types define (with their operators and values as written:
// two NodePools of one key are the same requirements).
func typesKey(np *cluster.NodePool, p *poolInfo, nc *cluster.NodeClass) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%p\x00%s\x00%p", p.view, p.os, nc)
	add := func(kind byte, key, op string, values ...string) {
		if !p.view.isInstanceKey(key) {
			return
		}
		b.WriteByte(1)
		b.WriteByte(kind)
		b.WriteString(key)
		b.WriteByte(0)
		b.WriteString(op)
		for _, v := range values {
			b.WriteByte(0)
			b.WriteString(v)
		}
	}
	for _, req := range np.Requirements {
		add('r', req.Key, string(req.Operator), req.Values...)
	}
	for _, k := range sortedKeys(np.Labels) {
		add('l', k, "", np.Labels[k])
	}
	add('l', poolNameLabelKey(np), "", np.Name)
	add('l', nodeClassLabelKey(np.NodeClassRef), "", np.NodeClassRef.Name)
	add('l', karpv1.NodeRegisteredLabelKey, "", "true")
	add('l', karpv1.NodeInitializedLabelKey, "", "true")
	return b.String()
}

// withNodeClassDisk sizes an instance type's ephemeral storage as Karpenter does
// for a node class: the local NVMe disks under instanceStorePolicy RAID0 when the
// type has them, else the node class's volume.
func withNodeClassDisk(st sizedType, nc *cluster.NodeClass) sizedType {
	size := nc.DiskBytes
	if nc.InstanceStoreRAID0 {
		if gib, err := strconv.ParseInt(st.it.Labels["karpenter.k8s.aws/instance-local-nvme"], 10, 64); err == nil && gib > 0 {
			size = gib << 30
		}
	}
	if size == 0 {
		return st
	}
	st.allocList = withEphemeral(st.it.Allocatable, size)
	st.alloc = vecOf(st.allocList)
	return st
}

func kindOr(k string) string {
	if k == "" {
		return "EC2NodeClass"
	}
	return k
}

// NodeClassOf returns the node class a NodePool references, or nil.
func (s *Simulator) NodeClassOf(np *cluster.NodePool) *cluster.NodeClass { return s.nodeClass(np) }

func (s *Simulator) nodeClass(np *cluster.NodePool) *cluster.NodeClass {
	for _, nc := range s.m.NodeClasses {
		if nc.Name == np.NodeClassRef.Name && (np.NodeClassRef.Kind == "" || np.NodeClassRef.Kind == classKind(nc)) {
			return nc
		}
	}
	return nil
}

// classKind is a node class's kind: EC2NodeClass, or AWSNodeTemplate for the
// v1alpha1 ones v1alpha5 Provisioners use.
func classKind(nc *cluster.NodeClass) string {
	if nc.Object != nil && nc.Object.Kind != "" {
		return nc.Object.Kind
	}
	if strings.HasSuffix(nc.APIVersion, "/v1alpha1") {
		return "AWSNodeTemplate"
	}
	return "EC2NodeClass"
}

// nodeClassNotReady reports the readiness problems Karpenter itself would find in
// an EC2NodeClass, so that NodePools using it are left out of the steady phase.
func nodeClassNotReady(nc *cluster.NodeClass) string {
	if strings.HasPrefix(nc.APIVersion, autoModeGroup()+"/") {
		// An Auto Mode NodeClass: the one EKS provides needs nothing; one of
		// the user's names its role (subnets and security groups are
		// required by its schema).
		if nc.Object != nil && nc.Object.Manager != "eks" && strings.TrimSpace(nc.Role) == "" {
			return fmt.Sprintf("NodeClass %q sets no role", nc.Name)
		}
		return ""
	}
	if strings.HasSuffix(nc.APIVersion, "/v1alpha1") {
		// An AWSNodeTemplate (v1alpha5 Provisioners) needs neither: the
		// instance profile defaults to the chart's
		// aws.defaultInstanceProfile, the AMI to the family's.
		return ""
	}
	if strings.HasSuffix(nc.APIVersion, "/v1") && len(nc.AMISelectorTerms) == 0 {
		return fmt.Sprintf("EC2NodeClass %q has no amiSelectorTerms (required in v1), so it never becomes Ready", nc.Name)
	}
	if nc.Role == "" && nc.InstanceProfile == "" {
		return fmt.Sprintf("EC2NodeClass %q sets neither role nor instanceProfile", nc.Name)
	}
	return ""
}

// nodeClassOS is the operating system of the nodes an EC2NodeClass launches.
func nodeClassOS(nc *cluster.NodeClass) string {
	fam := strings.ToLower(nc.AMIFamily)
	for _, t := range nc.AMISelectorTerms {
		if a, ok := t["alias"].(string); ok {
			fam = strings.ToLower(a)
		}
	}
	if strings.HasPrefix(fam, "windows") {
		return "windows"
	}
	return "linux"
}

// ControllerPlacement is where the Karpenter controller can run in the bootstrap
// phase; nil when the inputs do not install Karpenter.
func (s *Simulator) ControllerPlacement() *Placement {
	c := s.m.Karpenter.Controller
	if c == nil {
		return nil
	}
	return s.Place(c, cluster.Bootstrap)
}

func (s *Simulator) nodePoolVerdict(np *cluster.NodePool, pc *constraints, req corev1.ResourceList, need vec, w *cluster.Workload, controllerDown bool) Verdict {
	v := Verdict{Source: s.sourceOf(np, Source{Kind: cluster.KindNodePool, Name: np.Name, NodePool: np})}
	info := s.pool(np)

	if w.Component != "karpenter" && controllerDown {
		msg := "the Karpenter controller cannot run in the bootstrap phase, so no NodePool launches nodes"
		if s.m.Live != nil {
			msg = "the Karpenter controller fits no node the cluster has, so no NodePool launches nodes"
		}
		v.Reasons = append(v.Reasons, Reason{Code: CodeController, Message: msg})
	}
	if info.notReady != "" {
		v.Reasons = append(v.Reasons, Reason{Code: CodeNodeClass, Message: info.notReady})
	}
	if pc.vols != nil && pc.vols.karpenterSkip != "" {
		// Karpenter leaves a pod whose claims it cannot use alone.
		v.Reasons = append(v.Reasons, Reason{Code: CodeVolume, Message: "ignoring pod, " + pc.vols.karpenterSkip})
		return finish(v)
	}
	fit, rs := s.karpenterVerdict(np, info, pc, req, need)
	if info.uncertainWords && len(rs) > 0 {
		rs = uncertain(np, rs, info.remaining, req)
	}
	v.InstanceTypes = fit
	if len(rs) > 0 {
		v.Reasons = withStatic(v.Reasons, rs)
	}
	return finish(v)
}

// karpenterVerdict answers as Karpenter's provisioning scheduler does for one
// NodePool: the instance types that would take the pod, or the one reason it
// gives (one reason, often shared by many verdicts: read only).
func (s *Simulator) karpenterVerdict(np *cluster.NodePool, info *poolInfo, pc *constraints, req corev1.ResourceList, need vec) ([]string, []Reason) {
	// Karpenter's order: what it says of the NodePool before it looks at the
	// pod (poolRefusal); then its taints; then, for each set of requirements
	// the pod is tried with, requirements and resources.
	if info.refusal != nil {
		return nil, info.refusal
	}
	if pc.pools == nil {
		pc.pools = s.poolStatic.get(pc.sig, func() *memo[*cluster.NodePool, *poolStatic] { return &memo[*cluster.NodePool, *poolStatic]{} })
	}
	st := pc.pools.get(np, func() *poolStatic {
		st := &poolStatic{}
		if ts := untoleratedAll(np.Taints, pc.pod.Spec.Tolerations, hardEffect); len(ts) > 0 {
			st.reasons = []Reason{taintReason(ts)}
			return st
		}
		// Karpenter holds a PreferNoSchedule taint against a pod until its
		// last relaxation, which tolerates such taints and retries the last
		// requirements.
		attempts := pc.attempts
		var soft []Reason
		if ts := untoleratedAll(np.Taints, pc.pod.Spec.Tolerations, softEffect); len(ts) > 0 {
			soft = []Reason{taintReason(ts)}
			attempts = append(slices.Clip(attempts), nil)
		}
		for i, a := range attempts {
			var at attempt
			tried := i // which of the pod's attempts a is
			if a == nil {
				tried = i - 1
				a = attempts[tried]
			} else if soft != nil {
				st.attempts = append(st.attempts, attempt{issue: soft})
				continue
			}
			issues, unknown := splitUnknown(compatible(info.reqs, a, info.words, pc.wordsAt(tried), info.group))
			switch {
			case len(issues) > 0:
				at.issue = []Reason{requirementsReason(issues)}
			case unknown != nil:
				at.unknown = []Reason{*unknown}
			case info.unmodelled != "":
				at.unknown = []Reason{{Code: CodeUnknownValue, Message: info.unmodelled, TypesUnknown: true}}
			default:
				at.reqs = a
				if offeringExcluded(a) {
					// No instance type has an offering without a zone or a
					// capacity type: none is eligible.
				} else if podInstance := instanceRequirements(info.view, a); podInstance == nil {
					at.allTypes = true
				} else {
					at.eligible = s.eligibleTypes(np, info, podInstance)
				}
			}
			st.attempts = append(st.attempts, at)
		}
		return st
	})
	if len(st.reasons) > 0 {
		return nil, st.reasons[:1:1]
	}
	// Each set of requirements in turn (Karpenter relaxes to the next when
	// one cannot be met): the reason is the last one's.
	// A set of requirements that could not be judged (another provider's
	// labels or instance types) makes the answer unknown unless every set is
	// refused for certain.
	var unknown []Reason
	for _, at := range st.attempts {
		if at.unknown != nil && unknown == nil {
			unknown = at.unknown
		}
	}
	if unknown != nil {
		return nil, unknown
	}
	over := s.nodePoolOverheads(np, info)
	var last []Reason
	for _, at := range st.attempts {
		if at.issue != nil {
			last = at.issue
			continue
		}
		fit, r := s.volumeFit(np, info, over, at, req, need, pc.vols)
		if len(fit) > 0 {
			return fit, nil
		}
		last = []Reason{r}
	}
	return nil, last
}

// poolStatic is the part of a NodePool's verdict that depends only on the
// pod's node selection and tolerations: the taint reason, or the attempts.
type poolStatic struct {
	reasons  []Reason
	attempts []attempt
}

// attempt is one set of requirements Karpenter tries a pod with on a
// NodePool: its requirement issue, or the instance types left to judge by
// resources.
type attempt struct {
	issue []Reason // one reason, cap 1
	// unknown: the requirements could not be judged, or the instance types
	// (another provider's) are not known; one reason, cap 1.
	unknown  []Reason
	reqs     scheduling.Requirements
	eligible []int
	allTypes bool
}

// fitTypes returns the NodePool's instance types (within its limits) whose
// allocatable holds the pod and the DaemonSets that would run beside it on
// that type, up to maxExamples; or, when there are none, the reason, worded
// as Karpenter words it from what the types lack: the requirements, the
// resources, an offering, or each type one of them.
func (s *Simulator) fitTypes(np *cluster.NodePool, info *poolInfo, over poolOverheads, at attempt, req corev1.ResourceList, need vec) ([]string, Reason) {
	var fit []string
	eligible := make([]bool, len(info.types))
	if at.allTypes {
		for i := range eligible {
			eligible[i] = true
		}
	} else {
		for _, i := range at.eligible {
			eligible[i] = true
		}
	}
	offering := !offeringExcluded(at.reqs) && s.zonesOffered(np, at.reqs)
	// minValues: the types that take the pod must hold that many values of
	// the key, so every fitting type counts before the verdict.
	minKeys := minValuesKeys(info.reqs)
	var fitIdx []int
	var met, fits, metAndFits bool
	largest := -1
	for i := range info.types {
		if info.overLimit[i] {
			continue
		}
		t := &info.types[i]
		// A type fits on the allocatable of an offering the requirements
		// admit: with none, no type fits.
		ok := offering && need.plus(over.groups[over.ofType[i]].vec).within(t.alloc)
		met, fits = met || eligible[i], fits || ok
		metAndFits = metAndFits || (eligible[i] && ok)
		if !eligible[i] {
			continue
		}
		largest = i // types are sorted smallest first
		if ok {
			fitIdx = append(fitIdx, i)
			if len(fit) < maxExamples {
				fit = append(fit, t.it.Name)
			}
			if len(fit) == maxExamples && len(minKeys) == 0 {
				// Enough to show; the full list is not needed to decide.
				return fit, Reason{}
			}
		}
	}
	if len(fit) > 0 {
		if short := unmetMinValues(info, minKeys, fitIdx); len(short) > 0 {
			return nil, Reason{Code: CodeNoInstanceType, Key: short[0],
				Message: fmt.Sprintf("minValues requirement is not met for label(s) (label(s)=[%s]), requirements=%s, resources=%s", strings.Join(short, " "), joinRequirements(info.reqs, at.reqs), over.resources(req))}
		}
		return fit, Reason{}
	}
	ds := corev1.ResourceList{}
	if largest >= 0 {
		ds = over.groups[over.ofType[largest]].list
	}
	msg := fmt.Sprintf("%s, requirements=%s, resources=%s", noInstanceType(met, fits, offering, metAndFits), joinRequirements(info.reqs, at.reqs), over.resources(req))
	if !fits && req.Cpu().Cmp(millionCPU) >= 0 {
		// Karpenter's own hint for a request of a million CPUs.
		msg += " (CPU request >= 1 Million, m vs M typo?)"
	}
	r := Reason{Code: CodeNoInstanceType, Message: msg}
	if largest >= 0 {
		total := corev1.ResourceList{}
		addTo(total, req)
		addTo(total, ds)
		r.Resources = shortfall(total, info.types[largest].allocatable(), nil)
		r.Note = "largest allowed: " + info.types[largest].it.Name
	}
	return nil, r
}

// minValuesKeys are the keys of a NodePool's requirements that carry
// minValues, sorted.
func minValuesKeys(r scheduling.Requirements) []string {
	var keys []string
	for _, k := range r.Keys().UnsortedList() {
		if r.Get(k).MinValues != nil {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// unmetMinValues returns the minValues keys for which the instance types that
// take the pod hold fewer values than the NodePool requires: Karpenter
// launches nothing then (the Strict minValuesPolicy, the only one before
// v1.6 and the default since).
func unmetMinValues(info *poolInfo, keys []string, fit []int) []string {
	var short []string
	for _, k := range keys {
		values := map[string]bool{}
		for _, i := range fit {
			if v, ok := info.types[i].it.Labels[k]; ok {
				values[v] = true
			}
		}
		if len(values) < *info.reqs.Get(k).MinValues {
			short = append(short, k)
		}
	}
	return short
}

// noInstanceType words why no instance type takes a pod, as Karpenter's
// scheduler does: from whether any type meets the requirements, has the
// resources, has an offering (every type has one unless the requirements
// exclude all zones or capacity types), and meets the requirements with the
// resources.
func noInstanceType(met, fits, offering, metAndFits bool) string {
	switch {
	case !met && !fits && !offering:
		return "no instance type met the scheduling requirements or had enough resources or had a required offering"
	case !met && !fits:
		return "no instance type met the scheduling requirements or had enough resources"
	case !met && !offering:
		return "no instance type met the scheduling requirements or had a required offering"
	case !fits && !offering:
		return "no instance type had enough resources or had a required offering"
	case !met:
		return "no instance type met all requirements"
	case !fits:
		return "no instance type has enough resources"
	case !offering:
		return "no instance type has the required offering"
	case metAndFits:
		return "no instance type which met the scheduling requirements and had enough resources, had a required offering"
	case fits:
		return "no instance type which had enough resources and the required offering met the scheduling requirements"
	}
	return "no instance type which met the scheduling requirements and the required offering had the required resources"
}

// untoleratedAll returns the taints of the effects asked that the
// tolerations do not match, in the NodePool's order.
func untoleratedAll(taints []corev1.Taint, tolerations []corev1.Toleration, effect func(corev1.TaintEffect) bool) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range taints {
		if effect(t.Effect) && !Tolerates(tolerations, t) {
			out = append(out, t)
		}
	}
	return out
}

func hardEffect(e corev1.TaintEffect) bool {
	return e == corev1.TaintEffectNoSchedule || e == corev1.TaintEffectNoExecute
}

func softEffect(e corev1.TaintEffect) bool { return e == corev1.TaintEffectPreferNoSchedule }

// taintReason words untolerated taints as Karpenter does, one error per
// taint: "did not tolerate taint (taint=dedicated=gpu:NoSchedule)".
func taintReason(ts []corev1.Taint) Reason {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = "did not tolerate taint (taint=" + TaintText(t) + ")"
	}
	t := ts[0]
	return Reason{Code: CodeTaint, Taint: &t, Message: strings.Join(parts, "; ")}
}

// requirementsReason words a NodePool's requirements a pod cannot meet as
// Karpenter does: a custom label the NodePool does not define is the one
// error (Karpenter stops at the first); otherwise every key whose values do
// not intersect.
func requirementsReason(issues []keyIssue) Reason {
	for _, is := range issues {
		if is.undefined {
			// The keys whose values do not intersect go in eksdoctor's note:
			// a pod that names another NodePool is refused for that too.
			var also []string
			for _, o := range issues {
				if !o.undefined {
					also = append(also, o.message)
				}
			}
			r := Reason{Code: CodeRequirements, Key: is.key, Message: "incompatible requirements, " + is.message}
			if len(also) > 0 {
				r.Note = "also " + strings.Join(also, "; ")
			}
			return r
		}
	}
	parts := make([]string, len(issues))
	for i, is := range issues {
		parts[i] = is.message
	}
	return Reason{Code: CodeRequirements, Key: issues[0].key, Message: "incompatible requirements, " + strings.Join(parts, "; ")}
}

// msgFilteredOut is Karpenter's answer when no NodePool has an instance type
// its requirements allow: it skips such a NodePool.
const msgFilteredOut = "nodepool requirements filtered out all available instance types"

// nodePoolField is how Karpenter's structured errors name the NodePool.
func nodePoolField(np *cluster.NodePool) string { return " (NodePool=" + np.Name + ")" }

// millionCPU is where Karpenter suspects "m" was meant for "M".
var millionCPU = resource.MustParse("1M")

// offeringExcluded reports whether requirements rule out every offering: a
// node Karpenter launches always has a zone, a region and a capacity type, so
// requiring one not to exist (or an empty set of them, as two different In
// values intersect to) leaves no instance type.
func offeringExcluded(r scheduling.Requirements) bool {
	for _, key := range []string{corev1.LabelTopologyZone, corev1.LabelTopologyRegion, karpv1.CapacityTypeLabelKey} {
		if r.Has(key) && r.Get(key).Operator() == corev1.NodeSelectorOpDoesNotExist {
			return true
		}
	}
	return false
}

// resourceNodes is the NodePool limit on the number of nodes.
const resourceNodes = corev1.ResourceName("nodes")

// eligibleTypes returns the indexes of a NodePool's instance types that satisfy a
// pod's own instance requirements, computed once per distinct requirement set
// (many pods share "arm64 only" while differing in everything else).
func (s *Simulator) eligibleTypes(np *cluster.NodePool, info *poolInfo, podInstance scheduling.Requirements) []int {
	key := staticKey{np, "instance:" + requirementsKey(podInstance)}
	return s.static.get(key, func() *static {
		st := &static{}
		for i := range info.types {
			if instanceTypeFits(info.view, info.types[i].it, podInstance, info.os) {
				st.eligible = append(st.eligible, i)
			}
		}
		return st
	}).eligible
}

// requirementsKey renders requirements in full, to key a cache: their
// String leaves out restricted labels and all but five values of a key.
func requirementsKey(r scheduling.Requirements) string {
	var b strings.Builder
	for _, k := range sortedKeys(r) {
		req := r.Get(k)
		vs := req.Values()
		slices.Sort(vs)
		b.WriteString(req.String())
		b.WriteByte(0)
		b.WriteString(strings.Join(vs, "\x00"))
		b.WriteByte(1)
	}
	return b.String()
}

// poolOverheads is the DaemonSet overhead Karpenter counts on a NodePool's
// nodes, which depends on the instance type: a DaemonSet counts on the types
// whose labels it admits (an arm64-only agent not on amd64 types), when it
// tolerates the NodePool's taints. Types that run the same DaemonSets share a
// group.
type poolOverheads struct {
	groups []overhead
	ofType []int // the group of each of the NodePool's instance types
}

// resources renders the pod's requests with the DaemonSet overhead, as
// Karpenter's message does: one list when every group of types runs the same
// overhead, else the least and the most ("min=..., max=...").
func (o poolOverheads) resources(req corev1.ResourceList) string {
	var lo, hi corev1.ResourceList
	for _, g := range o.groups {
		if len(g.list) == 0 {
			continue
		}
		if lo == nil {
			lo, hi = g.list.DeepCopy(), g.list.DeepCopy()
			continue
		}
		for name, q := range g.list {
			if l, ok := lo[name]; !ok || q.Cmp(l) < 0 {
				lo[name] = q
			}
			if h, ok := hi[name]; !ok || q.Cmp(h) > 0 {
				hi[name] = q
			}
		}
	}
	total := func(ds corev1.ResourceList) string {
		t := corev1.ResourceList{}
		addTo(t, req)
		addTo(t, ds)
		return resourceJSON(t)
	}
	if lo == nil {
		return resourceJSON(req)
	}
	if a, b := total(lo), total(hi); a != b {
		return "min=" + a + ", max=" + b
	}
	return total(lo)
}

func (s *Simulator) nodePoolOverheads(np *cluster.NodePool, info *poolInfo) poolOverheads {
	return s.poolOver.get(np, func() poolOverheads {
		type daemon struct {
			req   corev1.ResourceList
			terms []scheduling.Requirements
			// any: a term without instance requirements (every type runs it).
			any bool
		}
		var ds []daemon
		perType := false
		perPool := s.overheadPerNodePool(np)
		for _, d := range s.daemonPods() {
			// A DaemonSet pod does not heed PreferNoSchedule.
			if _, bad := untolerated(np.Taints, d.pod.Spec.Tolerations); bad {
				continue
			}
			dm := daemon{req: d.req}
			for _, t := range d.terms {
				if len(compatible(info.reqs, t, info.words, wordsOf(t), info.group)) > 0 {
					continue
				}
				r := instanceRequirements(info.view, t)
				dm.any = dm.any || r == nil || perPool
				dm.terms = append(dm.terms, r)
			}
			if len(dm.terms) > 0 {
				perType = perType || !dm.any
				ds = append(ds, dm)
			}
		}
		out := poolOverheads{ofType: make([]int, len(info.types))}
		group := func(runs func(j int) bool) overhead {
			list := corev1.ResourceList{}
			for j, d := range ds {
				if runs(j) {
					addTo(list, d.req)
				}
			}
			return overhead{list: list, vec: vecOf(list)}
		}
		if !perType {
			// Every DaemonSet runs on every type: one group.
			out.groups = []overhead{group(func(int) bool { return true })}
			return out
		}
		index := map[string]int{}
		key := make([]byte, len(ds))
		for i := range info.types {
			t := &info.types[i]
			for j, d := range ds {
				key[j] = 0
				if d.any || slices.ContainsFunc(d.terms, func(r scheduling.Requirements) bool { return r != nil && instanceTypeFits(info.view, t.it, r, info.os) }) {
					key[j] = 1
				}
			}
			g, ok := index[string(key)]
			if !ok {
				g = len(out.groups)
				index[string(key)] = g
				out.groups = append(out.groups, group(func(j int) bool { return key[j] == 1 }))
			}
			out.ofType[i] = g
		}
		return out
	})
}

// overheadPerNodePool reports whether the Karpenter that judges a NodePool
// counts the DaemonSet overhead once for the NodePool rather than per
// instance type: up to v1.1 (so every v1beta1 NodePool and v1alpha5
// Provisioner), a DaemonSet whose selection the NodePool's requirements allow
// counts on every instance type, an arm64-only agent on amd64 types too.
// Karpenter v1.2 counts it only on the types it selects.
func (s *Simulator) overheadPerNodePool(np *cluster.NodePool) bool {
	if s.preV1(np) {
		return true
	}
	major, minor, ok := karpenterVersion(s.m.Karpenter.Version)
	return ok && major == 1 && minor < 2
}

// preV1 reports whether the Karpenter that judges a NodePool is older than
// v1: a v1beta1 NodePool or a v1alpha5 Provisioner, or a Karpenter version
// before 1.
func (s *Simulator) preV1(np *cluster.NodePool) bool {
	if strings.HasSuffix(np.APIVersion, "/v1beta1") || strings.HasSuffix(np.APIVersion, "/v1alpha5") {
		return true
	}
	major, _, ok := karpenterVersion(s.m.Karpenter.Version)
	return ok && major == 0
}

// karpenterVersion is the major and minor of a Karpenter version ("0.37",
// "v1.2.3"); ok is false when it is not one.
func karpenterVersion(v string) (major, minor int, ok bool) {
	majorText, rest, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(v), "v"), ".")
	minorText, _, _ := strings.Cut(rest, ".")
	major, err1 := strconv.Atoi(majorText)
	minor, err2 := strconv.Atoi(minorText)
	return major, minor, err1 == nil && err2 == nil
}

// daemonPod is a DaemonSet's pod as overheads read it: its requests and its
// required node-affinity terms.
type daemonPod struct {
	pod   *corev1.Pod
	req   corev1.ResourceList
	terms []scheduling.Requirements
}

// daemonPods are the model's DaemonSet pods, worked out once.
func (s *Simulator) daemonPods() []daemonPod {
	s.daemonOnce.Do(func() {
		for _, w := range s.m.Workloads {
			if w.IsDaemonSet() {
				d := podOf(w)
				s.daemons = append(s.daemons, daemonPod{pod: d, req: requests(d), terms: podTerms(d)})
			}
		}
	})
	return s.daemons
}

// withStatic adds the cached reasons to a verdict's; the cached slice is shared
// (capacity clipped, so a later append copies it) when there are no others.
func withStatic(reasons, cached []Reason) []Reason {
	if len(reasons) == 0 {
		return cached[:len(cached):len(cached)]
	}
	return append(reasons, cached...)
}

func finish(v Verdict) Verdict {
	if len(v.Reasons) == 0 {
		v.Result = Fits
		return v
	}
	v.Result = Refuses
	ignored := slices.ContainsFunc(v.Reasons, func(r Reason) bool { return r.Code == CodeController || r.Code == CodeNodeClass })
	if !ignored && slices.ContainsFunc(v.Reasons, func(r Reason) bool { return r.Code == CodeUnknownValue }) {
		// What another provider's instance types or labels decide.
		v.Result = Unknown
		return v
	}
	if np := v.Source.NodePool; np != nil && len(np.Unknown) > 0 && !slices.ContainsFunc(v.Reasons, func(r Reason) bool { return r.Code == CodeController }) {
		// What is refused may be what the unknown fields allow.
		v.Result = Unknown
		v.Reasons = append(v.Reasons, Reason{Code: CodeUnknownValue, Message: fmt.Sprintf("nodepool %q %s not known before apply", np.Name, strings.Join(np.Unknown, ", "))})
	}
	return v
}

// resourceJSON renders a resource list like Karpenter's log lines: {"cpu":"1","pods":"1"}.
func resourceJSON(rl corev1.ResourceList) string {
	m := map[string]string{}
	for k, v := range rl {
		m[string(k)] = v.String()
	}
	b, _ := json.Marshal(m) // map[string]string always marshals
	return string(b)
}

func sortedResourceNames(rl corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(rl))
	for k := range rl {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// maxExamples is how many fitting instance types a verdict names.
const maxExamples = 5

// instanceRequirements keeps the requirements on keys whose values come from the
// instance type; nil when there are none (most pods), so scans skip the check.
func instanceRequirements(view *catalogView, r scheduling.Requirements) scheduling.Requirements {
	var out scheduling.Requirements
	for key, req := range r {
		if !view.isInstanceKey(key) {
			continue
		}
		if out == nil {
			out = scheduling.NewRequirements()
		}
		out.Add(req)
	}
	return out
}

// joinRequirements renders the NodePool's and the pod's requirements together, as
// Karpenter's "no instance type satisfied" message does.
func joinRequirements(pool, pod scheduling.Requirements) string {
	all := scheduling.NewRequirements(pool.Values()...)
	all.Add(pod.Values()...)
	return all.String()
}
