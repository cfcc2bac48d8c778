package sim

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// Result is one capacity source's answer for one pod.
type Result int

const (
	_ Result = iota
	// Fits: the source would run the pod.
	Fits
	// Refuses: the source can never run the pod; Reasons say why.
	Refuses
	// Unknown: the answer depends on values that are not known before apply.
	Unknown
)

func (r Result) String() string {
	switch r {
	case Fits:
		return "fits"
	case Refuses:
		return "refuses"
	case Unknown:
		return "unknown"
	}
	return "invalid"
}

// Code classifies a reason, in the order kube-scheduler's filters and Karpenter's
// checks run.
type Code int

const (
	_                   Code = iota
	CodeFargateSelected      // the pod goes to Fargate; EC2 capacity is not considered
	CodeController           // the Karpenter controller cannot run
	CodeNodeClass            // the NodePool's node class is missing or not ready
	CodeNoNodes              // the node group has no nodes yet
	CodeUnschedulable        // the node is cordoned
	CodeFargateNotSelected
	CodeFargateDaemonSet
	CodeTaint
	CodeAffinity
	CodeRequirements
	CodeResources
	CodeNoInstanceType
	CodeLimits
	CodeUnknownValue
	// CodeVolume: the pod's persistent volumes (their zone, their binding)
	// keep it off the source.
	CodeVolume
)

// Reason explains why a source refuses a pod (or why the answer is unknown).
type Reason struct {
	Code Code
	// Message is worded the way kube-scheduler or Karpenter would report it.
	Message string
	// Note is eksdoctor's addition to the scheduler's words ("largest
	// allowed: m5.large"), shown after them in parentheses.
	Note string
	// Taint is the untolerated taint (CodeTaint).
	Taint *corev1.Taint
	// Key is the label key at fault (CodeAffinity, CodeRequirements).
	Key string
	// Resources are the resources that do not fit (CodeResources, CodeNoInstanceType).
	Resources []corev1.ResourceName
	// Uncertain: Karpenter may word it otherwise (its answer depends on what
	// eksdoctor does not know), though the result stands.
	Uncertain bool
	// TypesUnknown: the answer is the instance types' of a provider eksdoctor
	// does not model (CodeUnknownValue).
	TypesUnknown bool
	// PreFilter: kube-scheduler gives the reason before it looks at any node
	// (CodeVolume), so it words it once, without a count.
	PreFilter bool
}

// Text is the reason as eksdoctor shows it: the scheduler's words, then
// eksdoctor's note.
func (r Reason) Text() string {
	if r.Note == "" {
		return r.Message
	}
	return r.Message + " (" + r.Note + ")"
}

// Source is a capacity source.
type Source struct {
	Kind      cluster.CapacityKind
	Name      string
	NodeGroup *cluster.NodeGroup
	Fargate   *cluster.FargateProfile
	NodePool  *cluster.NodePool
	Node      *cluster.Node
	Unseen    *cluster.UnseenCapacity
}

// skips reports whether a placement asked for source s alone passes over the
// capacity source c (a node group, Fargate profile, NodePool, node or unseen
// capacity): never when s is nil.
func (s *Source) skips(c any) bool {
	if s == nil {
		return false
	}
	switch c := c.(type) {
	case *cluster.NodeGroup:
		return s.NodeGroup != c
	case *cluster.FargateProfile:
		return s.Fargate != c
	case *cluster.NodePool:
		return s.NodePool != c
	case *cluster.Node:
		return s.Node != c
	case *cluster.UnseenCapacity:
		return s.Unseen != c
	}
	return true
}

// Describe words the source as explanations name it: `node group "x"`,
// `nodepool "default"`, `provisioner "default"` for a v1alpha5 Provisioner.
func (s Source) Describe() string {
	kind := s.Kind.String()
	if s.NodePool != nil && s.NodePool.Object != nil && s.NodePool.Object.Kind == "Provisioner" {
		kind = "provisioner"
	}
	return fmt.Sprintf("%s %q", kind, s.Name)
}

// Origin is where the source is declared. (A placement has a verdict per
// source, thousands in a large cluster: the source's own origin is not copied
// into each.)
func (s Source) Origin() cluster.Origin {
	switch {
	case s.NodeGroup != nil:
		return s.NodeGroup.Origin
	case s.Fargate != nil:
		return s.Fargate.Origin
	case s.NodePool != nil && s.NodePool.Object != nil:
		return s.NodePool.Object.Origin
	case s.Node != nil && s.Node.Object != nil:
		return s.Node.Object.Origin
	case s.Unseen != nil:
		return s.Unseen.Origin
	}
	return cluster.Origin{}
}

// Verdict is one source's answer.
type Verdict struct {
	// Source is shared by every verdict about the same source.
	Source  *Source
	Result  Result
	Reasons []Reason
	// InstanceTypes names a few instance types that would take the pod (node
	// groups and NodePools), smallest first.
	InstanceTypes []string
}

// Placement is the answer for one workload in one phase.
type Placement struct {
	Workload *cluster.Workload
	Phase    cluster.Phase
	Verdicts []Verdict
	// Fargate is the profile that selects the pod, if any: such a pod is scheduled
	// by fargate-scheduler onto Fargate only.
	Fargate *cluster.FargateProfile
	// Requests is what one pod asks of a node.
	Requests corev1.ResourceList
	// Volumes are the persistent volume claims the pod mounts, and where
	// each lets it run; ImmediateClaims those an Immediate StorageClass
	// provisions before the pod is scheduled (in files).
	Volumes         []VolumeClaim
	ImmediateClaims []ImmediateClaim
	// VolumesUnknown says which claim of the pod eksdoctor cannot see ("" when
	// it sees them all).
	VolumesUnknown string

	// memo holds Summary once worded: a finding words it more than once, and
	// a placement among hundreds of NodePools is not cheap to summarize.
	// Copies that share the verdicts share it.
	memo *summaryMemo
	// own: no memo holds the verdicts (the class was not kept), so Release
	// may hand them to the next placement.
	own bool
}

type summaryMemo struct {
	once    sync.Once
	summary string

	nearest memo[cluster.CapacityKind, nearestKind]
	texts   memo[string, string]
	// shared is the simulator's nearestShared (nil for a placement of its
	// own, as Without makes).
	shared *nearestShared
}

// Text returns the text f words from the placement, worded once for every
// copy of the placement that shares its verdicts (the workloads of one
// scheduling class): a large input has thousands of findings about a few
// placements, each explaining hundreds of sources. f must depend on the
// verdicts only, and name is what it words ("detail").
func (p *Placement) Text(name string, f func() string) string {
	if p.memo == nil {
		return f()
	}
	return p.memo.texts.get(name, f)
}

// Without returns the placement without the sources of one kind.
func (p *Placement) Without(k cluster.CapacityKind) *Placement {
	out := *p
	out.memo = &summaryMemo{}
	out.Verdicts = nil
	for _, v := range p.Verdicts {
		if v.Source.Kind != k {
			out.Verdicts = append(out.Verdicts, v)
		}
	}
	return &out
}

// Result combines the verdicts: Fits if any source fits; else Unknown if any answer
// is unknown; else Refuses (also when there is no capacity at all).
func (p *Placement) Result() Result {
	if p.Fargate != nil {
		for _, v := range p.Verdicts {
			if v.Source.Fargate == p.Fargate {
				return v.Result
			}
		}
	}
	res := Refuses
	for _, v := range p.Verdicts {
		switch v.Result {
		case Fits:
			return Fits
		case Unknown:
			res = Unknown
		}
	}
	return res
}

// Fitting returns the verdicts of the sources that would run the pod.
func (p *Placement) Fitting() []Verdict {
	var out []Verdict
	for _, v := range p.Verdicts {
		if v.Result == Fits && (p.Fargate == nil || v.Source.Fargate == p.Fargate) {
			out = append(out, v)
		}
	}
	return out
}

// FitsOnlyKind reports whether every fitting source is of the given kind (and at
// least one fits).
func (p *Placement) FitsOnlyKind(k cluster.CapacityKind) bool {
	f := p.Fitting()
	if len(f) == 0 {
		return false
	}
	for _, v := range f {
		if v.Source.Kind != k {
			return false
		}
	}
	return true
}

// sortVerdicts orders verdicts by kind of source, then by name, keeping the
// order of equals. Verdicts come in a few runs of one kind each, mostly in
// name order already (a cluster's nodes are met by name): the runs are moved
// into kind order in place, and only a run out of name order is sorted.
func sortVerdicts(vs []Verdict) {
	if len(vs) < 2 {
		return
	}
	byKind := func(a, b Verdict) int { return cmp.Compare(a.Source.Kind, b.Source.Kind) }
	byName := func(a, b Verdict) int { return strings.Compare(a.Source.Name, b.Source.Name) }
	if runs := kindRuns(vs); len(runs) > 16 {
		slices.SortStableFunc(vs, byKind)
	} else {
		// An insertion sort of the runs: each run moves before the runs of
		// later kinds ahead of it by one rotation.
		for i := 1; i < len(runs); i++ {
			j := i
			for j > 0 && vs[runs[j-1]].Source.Kind > vs[runs[i]].Source.Kind {
				j--
			}
			if j < i {
				end := len(vs)
				if i+1 < len(runs) {
					end = runs[i+1]
				}
				n := end - runs[i]
				rotate(vs[runs[j]:end], n)
				// Run i now starts where run j did; the runs from j on
				// moved n places right.
				copy(runs[j+1:i+1], runs[j:i])
				for k := j + 1; k <= i; k++ {
					runs[k] += n
				}
			}
		}
	}
	for start := 0; start < len(vs); {
		end := start + 1
		for end < len(vs) && vs[end].Source.Kind == vs[start].Source.Kind {
			end++
		}
		if run := vs[start:end]; !slices.IsSortedFunc(run, byName) {
			slices.SortStableFunc(run, byName)
		}
		start = end
	}
}

// kindRuns returns where each run of verdicts of one kind starts.
func kindRuns(vs []Verdict) []int {
	var runs []int
	for i := range vs {
		if i == 0 || vs[i].Source.Kind != vs[i-1].Source.Kind {
			runs = append(runs, i)
		}
	}
	return runs
}

// rotate moves the last n elements of vs to its front, in place.
func rotate(vs []Verdict, n int) {
	slices.Reverse(vs)
	slices.Reverse(vs[:n])
	slices.Reverse(vs[n:])
}
