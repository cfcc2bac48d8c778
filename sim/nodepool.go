package sim

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// poolInfo is what a NodePool offers, computed once.
type poolInfo struct {
	reqs scheduling.Requirements
	os   string
	// types are the instance types the NodePool's requirements allow, smallest
	// first, with whether one node of the type alone exceeds the NodePool's limits.
	types     []sizedType
	overLimit []bool
	// notReady explains why Karpenter ignores the NodePool ("" when usable);
	// unknownClass is set when the node class is simply not in the inputs.
	notReady     string
	unknownClass bool
}

// pool is what placements read of a NodePool, worked out once.
func (s *Simulator) pool(np *cluster.NodePool) *poolInfo {
	return s.pools.get(np, func() *poolInfo { return s.newPool(np) })
}

func (s *Simulator) newPool(np *cluster.NodePool) *poolInfo {
	p := &poolInfo{reqs: nodePoolRequirements(np)}
	nc := s.nodeClass(np)
	switch {
	case nc == nil && len(s.m.NodeClasses) == 0:
		p.unknownClass = true
	case nc == nil:
		p.notReady = fmt.Sprintf("%s %q not found; Karpenter ignores NodePools whose node class is not Ready", kindOr(np.NodeClassRef.Kind), np.NodeClassRef.Name)
	default:
		p.notReady = nodeClassNotReady(nc)
		p.os = nodeClassOS(nc)
	}
	for _, st := range sizedCatalog() {
		if instanceTypeFits(st.it, p.reqs, p.os) {
			if nc != nil {
				st = withNodeClassDisk(st, nc)
			}
			p.types = append(p.types, st)
			p.overLimit = append(p.overLimit, st.exceedsLimits(np.Limits))
		}
	}
	return p
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
		if nc.Name == np.NodeClassRef.Name {
			return nc
		}
	}
	return nil
}

// nodeClassNotReady reports the readiness problems Karpenter itself would find in
// an EC2NodeClass, so that NodePools using it are left out of the steady phase.
func nodeClassNotReady(nc *cluster.NodeClass) string {
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
	st := s.static.get(staticKey{np, pc.sig}, func() *static {
		prefix := fmt.Sprintf("incompatible with nodepool %q", np.Name)
		st := &static{}
		if t, bad := untolerated(np.Taints, pc.pod.Spec.Tolerations); bad {
			tt := t
			st.reasons = append(st.reasons, Reason{Code: CodeTaint, Taint: &tt, Message: prefix + ", did not tolerate taint " + TaintText(t)})
		}
		var firstIssues []keyIssue
		for i, t := range pc.terms {
			issues := compatible(info.reqs, t, wellKnownLabels())
			if len(issues) == 0 {
				st.termReqs = t
				break
			}
			if i == 0 {
				firstIssues = issues
			}
		}
		if st.termReqs == nil {
			st.reasons = append(st.reasons, Reason{Code: CodeRequirements, Key: firstIssues[0].key, Message: prefix + ", incompatible requirements, " + firstIssues[0].message})
			return st
		}
		podInstance := instanceRequirements(st.termReqs)
		if podInstance == nil {
			st.allTypes = true
			return st
		}
		st.eligible = s.eligibleTypes(np, info, podInstance)
		return st
	})
	v.Reasons = withStatic(v.Reasons, st.reasons)
	if st.termReqs == nil {
		return finish(v)
	}
	over := s.nodePoolOverhead(np, info)
	total := need.plus(over.vec)
	var fit []string
	var largest *sizedType
	limited := 0
	consider := func(i int) bool {
		t := &info.types[i]
		largest = t // types are sorted smallest first
		if !total.within(t.alloc) {
			return true
		}
		if info.overLimit[i] {
			limited++
			return true
		}
		fit = append(fit, t.it.Name)
		// Enough to show; the full list is not needed to decide.
		return len(fit) < maxExamples
	}
	if st.allTypes {
		for i := range info.types {
			if !consider(i) {
				break
			}
		}
	} else {
		for _, i := range st.eligible {
			if !consider(i) {
				break
			}
		}
	}
	v.InstanceTypes = fit
	if len(fit) == 0 {
		switch {
		case limited > 0:
			v.Reasons = append(v.Reasons, Reason{Code: CodeLimits, Message: fmt.Sprintf("all available instance types exceed limits for nodepool: %q", np.Name)})
		default:
			msg := fmt.Sprintf("incompatible with nodepool %q, daemonset overhead=%s, no instance type satisfied resources %s and requirements %s", np.Name, resourceJSON(over.list), resourceJSON(req), joinRequirements(info.reqs, st.termReqs))
			var short []corev1.ResourceName
			if largest != nil {
				total := corev1.ResourceList{}
				addTo(total, req)
				addTo(total, over.list)
				short = shortfall(total, largest.allocatable(), nil)
				msg += fmt.Sprintf(" (largest allowed: %s)", largest.it.Name)
			}
			v.Reasons = append(v.Reasons, Reason{Code: CodeNoInstanceType, Resources: short, Message: msg})
		}
	}
	return finish(v)
}

// eligibleTypes returns the indexes of a NodePool's instance types that satisfy a
// pod's own instance requirements, computed once per distinct requirement set
// (many pods share "arm64 only" while differing in everything else).
func (s *Simulator) eligibleTypes(np *cluster.NodePool, info *poolInfo, podInstance scheduling.Requirements) []int {
	key := staticKey{np, "instance:" + podInstance.String()}
	return s.static.get(key, func() *static {
		st := &static{}
		for i := range info.types {
			if instanceTypeFits(info.types[i].it, podInstance, info.os) {
				st.eligible = append(st.eligible, i)
			}
		}
		return st
	}).eligible
}

// nodePoolOverhead is the DaemonSet overhead Karpenter counts on a NodePool's
// nodes: the DaemonSets that tolerate its taints and are compatible with it.
func (s *Simulator) nodePoolOverhead(np *cluster.NodePool, info *poolInfo) overhead {
	key := "np:" + np.Name
	list := s.overheadFor(key, func(d *corev1.Pod) bool {
		if _, bad := untolerated(np.Taints, d.Spec.Tolerations); bad {
			return false
		}
		for _, t := range podTerms(d) {
			if len(compatible(info.reqs, t, wellKnownLabels())) == 0 {
				return true
			}
		}
		return false
	})
	return overhead{list: list, vec: s.overheadVec(key, list)}
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
func instanceRequirements(r scheduling.Requirements) scheduling.Requirements {
	var out scheduling.Requirements
	for key, req := range r {
		if !isInstanceKey(key) {
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
