package live

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// A snapshot comes from wherever the inputs come from — in CI, a pull request —
// and what a cluster read returns is as large as the cluster. Decoding is bounded
// by the size limits; the analysis is bounded here, in what it is measured in:
// objects kept, and unscheduled pods, each of which the checks judge against
// every capacity source. Beyond the budget the rest is left out and said, never
// analysed at any cost.

// Budget bounds what one cluster read or snapshot makes eksdoctor keep and
// analyse.
type Budget struct {
	// Objects is the most objects kept.
	Objects int
	// Pending is the most unscheduled pods (no node yet) kept.
	Pending int
	// Workloads is the most workloads (the owners of unscheduled pods, or
	// the pods themselves when they have none) whose pods are kept: each is
	// judged and reported on its own.
	Workloads int
	// Bytes is the most bytes of a snapshot read: of its file, compressed
	// or not, and of what a compressed one expands to.
	Bytes int64
}

// DefaultBudget is sized above the largest clusters EKS runs: a million pods on
// 100,000 nodes, with their workloads, NodeClaims and events, are within
// Objects; large clusters show about one pod in a hundred Pending, from a few
// hundred workloads, well within Pending and Workloads.
// A snapshot of such a cluster takes about 800 MB (1,000,000 pods with their
// nodes and workloads, managed fields left out), well within Bytes.
var DefaultBudget = Budget{Objects: 2_500_000, Pending: 25_000, Workloads: 5_000, Bytes: 2 << 30}

// orDefault fills what b leaves at zero from DefaultBudget.
func (b Budget) orDefault() Budget {
	if b.Objects <= 0 {
		b.Objects = DefaultBudget.Objects
	}
	if b.Pending <= 0 {
		b.Pending = DefaultBudget.Pending
	}
	if b.Workloads <= 0 {
		b.Workloads = DefaultBudget.Workloads
	}
	if b.Bytes <= 0 {
		b.Bytes = DefaultBudget.Bytes
	}
	return b
}

// SnapshotBytes is the most bytes of a snapshot read within b (the default
// when b leaves it at zero).
func (b Budget) SnapshotBytes() int64 { return b.orDefault().Bytes }

// spending counts what a read keeps against its budget, and what it leaves
// out.
type spending struct {
	b       Budget
	pending int
	owners  map[cluster.ObjectRef]bool
	// leftObjects and leftPending count what was left out; leftNS the
	// namespaces of the pods left out.
	leftObjects, leftPending int
	leftNS                   map[string]int
}

func newSpending(b Budget) *spending {
	return &spending{b: b.orDefault(), owners: map[cluster.ObjectRef]bool{}, leftNS: map[string]int{}}
}

// full reports whether no more unscheduled pods are kept, or only pods of the
// workloads already kept.
func (s *spending) full() bool {
	return s.pending >= s.b.Pending || len(s.owners) >= s.b.Workloads
}

// admitPending keeps an unscheduled pod owned by owner, or counts it as left
// out.
func (s *spending) admitPending(owner cluster.ObjectRef) bool {
	if s.pending < s.b.Pending && (s.owners[owner] || len(s.owners) < s.b.Workloads) {
		s.pending++
		s.owners[owner] = true
		return true
	}
	s.leftPending++
	s.leftNS[owner.Namespace]++
	return false
}

// keep returns the objects within the budget, in their order: the first
// Objects of them, and of the unscheduled pods the first within Pending and
// Workloads.
func (s *spending) keep(objs []*cluster.Object, podOf map[*cluster.Object]*cluster.Pod) []*cluster.Object {
	if len(objs) > s.b.Objects {
		s.leftObjects = len(objs) - s.b.Objects
		objs = objs[:s.b.Objects]
	}
	out := objs[:0:0]
	for _, o := range objs {
		waiting := unscheduled(o.Content)
		if p := podOf[o]; p != nil {
			waiting = p.Spec.NodeName == ""
		}
		if waiting && !s.admitPending(o.OwnerRef()) {
			continue
		}
		out = append(out, o)
	}
	return out
}

// problems says what was left out, if anything: what eksdoctor did not
// analyse is unknown, not wrong.
func (s *spending) problems(org cluster.Origin, what string) []cluster.Problem {
	var out []cluster.Problem
	if s.leftObjects > 0 {
		out = append(out, cluster.Problem{Origin: org, Unresolved: true, Message: fmt.Sprintf(
			"%s holds %d objects, more than the %d eksdoctor analyses of one cluster: the last %d (in its order) are left out and not analysed; --max-objects raises the budget",
			what, s.b.Objects+s.leftObjects, s.b.Objects, s.leftObjects)})
	}
	if s.leftPending > 0 {
		out = append(out, cluster.Problem{Origin: org, Unresolved: true, Message: fmt.Sprintf(
			"%s holds %d unscheduled Pending pods, more than eksdoctor analyses of one cluster (%d pods of at most %d workloads): %d pods of %d workloads are analysed (the first by namespace and name), the other %d (%s) are left out and not analysed; --max-pending and --max-pending-workloads raise the budget",
			what, s.pending+s.leftPending, s.b.Pending, s.b.Workloads, s.pending, len(s.owners), s.leftPending, namespaceCounts(s.leftNS))})
	}
	return out
}

// namespaceCounts words the namespaces of the pods left out, the largest first.
func namespaceCounts(ns map[string]int) string {
	names := make([]string, 0, len(ns))
	for n := range ns {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if ns[names[i]] != ns[names[j]] {
			return ns[names[i]] > ns[names[j]]
		}
		return names[i] < names[j]
	})
	var parts []string
	for i, n := range names {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("%d more namespaces", len(names)-5))
			break
		}
		parts = append(parts, fmt.Sprintf("%d in %s", ns[n], n))
	}
	return strings.Join(parts, ", ")
}

// unscheduled reports whether a pod waits for a node, from its generic form.
func unscheduled(obj map[string]any) bool {
	if k, _ := obj["kind"].(string); k != "Pod" {
		return false
	}
	if v, _ := obj["apiVersion"].(string); v != "v1" {
		return false
	}
	spec, _ := obj["spec"].(map[string]any)
	node, _ := spec["nodeName"].(string)
	return node == ""
}

// ownerOf is a pod's controlling owner, or the pod itself, from its generic
// form (as cluster.Object.OwnerRef).
func ownerOf(obj map[string]any) cluster.ObjectRef {
	md, _ := obj["metadata"].(map[string]any)
	ns, _ := md["namespace"].(string)
	refs, _ := md["ownerReferences"].([]any)
	for _, r := range refs {
		if m, _ := r.(map[string]any); m["controller"] == true {
			kind, _ := m["kind"].(string)
			name, _ := m["name"].(string)
			return cluster.ObjectRef{Kind: kind, Namespace: ns, Name: name}
		}
	}
	kind, _ := obj["kind"].(string)
	name, _ := md["name"].(string)
	return cluster.ObjectRef{Kind: kind, Namespace: ns, Name: name}
}

// quickUnscheduled tells, without decoding it, whether a snapshot's object is a
// v1 Pod with no node, and its owner (as ownerOf). It reads only the members it
// needs, skips the rest and keeps only the owner's strings, so that a snapshot
// of half a million pods beyond the budget costs little; ok is false whenever
// it cannot tell (the object is then decoded as any other).
func quickUnscheduled(dec *jsontext.Decoder, raw []byte) (owner cluster.ObjectRef, ok bool) {
	dec.Reset(bytes.NewReader(raw))
	if !open(dec, '{') {
		return owner, false
	}
	var meta podMeta
	pod, v1, bound := false, false, false
	for dec.PeekKind() == '"' {
		name, err := dec.ReadValue()
		if err != nil {
			return owner, false
		}
		switch string(name) {
		case `"kind"`, `"apiVersion"`:
			field := string(name)
			v, err := dec.ReadValue()
			if err != nil {
				return owner, false
			}
			if field == `"kind"` {
				pod = string(v) == `"Pod"`
			} else {
				v1 = string(v) == `"v1"`
			}
			if !pod && field == `"kind"` || !v1 && field == `"apiVersion"` {
				return owner, false
			}
		case `"metadata"`:
			if !meta.read(dec) {
				return owner, false
			}
		case `"spec"`:
			node, ok := member(dec, `"nodeName"`)
			if !ok {
				return owner, false
			}
			bound = node != ""
		default:
			if dec.SkipValue() != nil {
				return owner, false
			}
		}
	}
	if !pod || !v1 || bound {
		return owner, false
	}
	if meta.owned {
		return cluster.ObjectRef{Kind: meta.ownerKind, Namespace: meta.namespace, Name: meta.ownerName}, true
	}
	return cluster.ObjectRef{Kind: "Pod", Namespace: meta.namespace, Name: meta.name}, true
}

// open reads the opening delimiter of an object or array.
func open(dec *jsontext.Decoder, kind jsontext.Kind) bool {
	tok, err := dec.ReadToken()
	return err == nil && tok.Kind() == kind
}

// stringValue reads a string value; ok is false for any other value.
func stringValue(dec *jsontext.Decoder) (string, bool) {
	v, err := dec.ReadValue()
	if err != nil || v.Kind() != '"' {
		return "", false
	}
	u, err := jsontext.AppendUnquote(nil, v)
	return string(u), err == nil
}

// podMeta is what quickUnscheduled reads of a pod's metadata.
type podMeta struct {
	namespace, name, ownerKind, ownerName string
	// owned: an ownerReference is marked controller (its kind and name may
	// be absent: the model then groups the pod under an empty reference).
	owned bool
}

func (p *podMeta) read(dec *jsontext.Decoder) bool {
	if !open(dec, '{') {
		return false
	}
	for dec.PeekKind() == '"' {
		name, err := dec.ReadValue()
		if err != nil {
			return false
		}
		ok := true
		switch string(name) {
		case `"namespace"`:
			p.namespace, ok = stringValue(dec)
		case `"name"`:
			p.name, ok = stringValue(dec)
		case `"ownerReferences"`:
			ok = p.readOwners(dec)
		default:
			ok = dec.SkipValue() == nil
		}
		if !ok {
			return false
		}
	}
	_, err := dec.ReadToken()
	return err == nil
}

// readOwners reads ownerReferences, keeping the controller's kind and name.
func (p *podMeta) readOwners(dec *jsontext.Decoder) bool {
	if !open(dec, '[') {
		return false
	}
	for dec.PeekKind() == '{' {
		dec.ReadToken()
		var kind, name jsontext.Value
		controller := false
		for dec.PeekKind() == '"' {
			field, err := dec.ReadValue()
			if err != nil {
				return false
			}
			switch string(field) {
			case `"kind"`, `"name"`:
				isKind := string(field) == `"kind"`
				v, err := dec.ReadValue()
				if err != nil || v.Kind() != '"' {
					return false
				}
				if isKind {
					kind = v.Clone()
				} else {
					name = v.Clone()
				}
			case `"controller"`:
				v, err := dec.ReadValue()
				if err != nil {
					return false
				}
				controller = string(v) == "true"
			default:
				if dec.SkipValue() != nil {
					return false
				}
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return false
		}
		if controller && !p.owned {
			// The first controller, as ownerOf and the model take it.
			var k, n []byte
			var err1, err2 error
			if kind != nil {
				k, err1 = jsontext.AppendUnquote(nil, kind)
			}
			if name != nil {
				n, err2 = jsontext.AppendUnquote(nil, name)
			}
			if err1 != nil || err2 != nil {
				return false
			}
			p.ownerKind, p.ownerName, p.owned = string(k), string(n), true
		}
	}
	_, err := dec.ReadToken()
	return err == nil
}

// member reads an object and returns the string value of its member named
// (quoted) name, "" if absent; ok is false if the value is not an object or the
// member not a string.
func member(dec *jsontext.Decoder, name string) (string, bool) {
	if !open(dec, '{') {
		return "", false
	}
	var out string
	for dec.PeekKind() == '"' {
		field, err := dec.ReadValue()
		if err != nil {
			return "", false
		}
		if string(field) != name {
			if dec.SkipValue() != nil {
				return "", false
			}
			continue
		}
		var ok bool
		if out, ok = stringValue(dec); !ok {
			return "", false
		}
	}
	_, err := dec.ReadToken()
	return out, err == nil
}
