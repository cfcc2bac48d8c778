package sim

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"slices"
	"sort"
	"strings"
	"sync"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// Summary renders the placement the way the scheduler's FailedScheduling event and
// Karpenter's log do, one clause per kind of capacity:
//
//	0/1 node groups are available: 1 node group(s) had untolerated taint {karpenter.sh/controller: true}.
//	nodepool "default": incompatible requirements, label "workload" does not have known values.
func (p *Placement) Summary() string {
	if p.memo == nil {
		return p.summarize()
	}
	p.memo.once.Do(func() { p.memo.summary = p.summarize() })
	return p.memo.summary
}

func (p *Placement) summarize() string {
	var parts []string
	for _, k := range []cluster.CapacityKind{cluster.KindNode, cluster.KindNodeGroup, cluster.KindFargate, cluster.KindNodePool, cluster.KindUnseen} {
		if s := p.kindSummary(k); s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		if p.Phase == cluster.Bootstrap {
			return "no node group or Fargate profile exists before Karpenter runs"
		}
		return "no capacity is defined: no node group, Fargate profile, NodePool or node"
	}
	return strings.Join(parts, " ")
}

func (p *Placement) kindSummary(k cluster.CapacityKind) string {
	if k == cluster.KindNodePool {
		return p.nodePoolSummary()
	}
	var vs []Verdict
	for _, v := range p.Verdicts {
		if v.Source.Kind == k {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return ""
	}
	if k == cluster.KindNode {
		return nodeSummary(vs)
	}
	fits := 0
	counts := map[string]int{}
	for _, v := range vs {
		if v.Result == Fits {
			fits++
			continue
		}
		if i := slices.IndexFunc(v.Reasons, func(r Reason) bool { return r.Code == CodeUnknownValue }); v.Result == Unknown && i >= 0 {
			counts["could not be judged ("+v.Reasons[i].Message+")"]++
			continue
		}
		if len(v.Reasons) > 0 {
			counts[v.Reasons[0].short()]++
		}
	}
	switch k {
	case cluster.KindUnseen:
		var msgs []string
		for _, v := range vs {
			msgs = append(msgs, v.Reasons[0].Text())
		}
		return strings.Join(msgs, "; ") + "."
	case cluster.KindFargate:
		if p.Fargate != nil {
			return fmt.Sprintf("Fargate profile %q selects it.", p.Fargate.Name)
		}
		var msgs []string
		for _, v := range vs {
			if len(v.Reasons) > 0 {
				msgs = append(msgs, v.Reasons[0].Text())
			}
		}
		return fmt.Sprintf("0/%d Fargate profiles select it: %s.", len(vs), strings.Join(msgs, "; "))
	}
	noun, unit := "node groups", "node group(s)"
	var reasons []string
	for msg, n := range counts {
		msg = strings.TrimPrefix(msg, "node(s) ")
		if strings.HasPrefix(msg, "Insufficient") || strings.HasPrefix(msg, "the pod is selected") {
			reasons = append(reasons, fmt.Sprintf("%d %s", n, msg))
		} else {
			reasons = append(reasons, fmt.Sprintf("%d %s %s", n, unit, msg))
		}
	}
	sort.Strings(reasons)
	if len(reasons) == 0 {
		return fmt.Sprintf("%d/%d %s are available.", fits, len(vs), noun)
	}
	return fmt.Sprintf("%d/%d %s are available: %s.", fits, len(vs), noun, strings.Join(reasons, ", "))
}

// nodePoolSummary: how many NodePools launch a node for the pod, or the
// nearest refusals (the NodePool the pod names, then those that refuse for a
// reason of their own and for the fewest reasons), each with its NodePool's
// name, which Karpenter's errors leave out.
func (p *Placement) nodePoolSummary() string {
	n, fits := 0, 0
	for i := range p.Verdicts {
		if v := &p.Verdicts[i]; v.Source.Kind == cluster.KindNodePool {
			n++
			if v.Result == Fits {
				fits++
			}
		}
	}
	switch {
	case n == 0:
		return ""
	case fits > 0:
		return fmt.Sprintf("%d/%d nodepools can launch a node for it.", fits, n)
	}
	var msgs []string
	order := p.nearest(cluster.KindNodePool).order
	for _, i := range order {
		if len(msgs) == maxSummarized {
			msgs = append(msgs, fmt.Sprintf("and %d more nodepools refuse it", len(order)-maxSummarized))
			break
		}
		if v := &p.Verdicts[i]; len(v.Reasons) > 0 {
			msgs = append(msgs, fmt.Sprintf("%s: %s", v.Source.Describe(), v.Reasons[0].Text()))
		}
	}
	return strings.Join(msgs, "; ") + "."
}

// nodeSummary words the verdicts of nodes exactly as kube-scheduler's
// FailedScheduling message does: every node counted under the reasons of the
// first filter that rejects it (one per resource it lacks), the counts sorted
// as text; a conflict of node-name terms is the one reason.
func nodeSummary(vs []Verdict) string {
	fits := 0
	counts := map[string]int{}
	for _, v := range vs {
		switch {
		case v.Result == Fits:
			fits++
			continue
		case len(v.Reasons) == 0:
			continue
		}
		r := v.Reasons[0]
		switch r.Code {
		case CodeResources:
			for _, name := range r.Resources {
				counts[insufficientText(name)]++
			}
		case CodeTaint:
			counts["node(s) had untolerated taint(s)"]++
		case CodeAffinity:
			if r.Message == reasonTermsConflict[0].Message {
				return fmt.Sprintf("%d/%d nodes are available: %s.", fits, len(vs), r.Message)
			}
			counts[r.Message]++
		case CodeVolume:
			if r.PreFilter {
				return fmt.Sprintf("%d/%d nodes are available: %s.", fits, len(vs), r.Message)
			}
			// VolumeBinding gives every reason it has for the node.
			for _, r := range v.Reasons {
				if r.Code != CodeVolume {
					break
				}
				counts[r.Message]++
			}
		default:
			counts[r.Message]++
		}
	}
	var reasons []string
	for msg, n := range counts {
		reasons = append(reasons, fmt.Sprintf("%d %s", n, msg))
	}
	sort.Strings(reasons)
	if len(reasons) == 0 {
		return fmt.Sprintf("%d/%d nodes are available.", fits, len(vs))
	}
	return fmt.Sprintf("%d/%d nodes are available: %s.", fits, len(vs), strings.Join(reasons, ", "))
}

// NodeSummary is the placement's answer about the cluster's nodes as
// kube-scheduler words it ("0/3 nodes are available: 3 Too many pods."); ""
// when the model has no nodes.
func (p *Placement) NodeSummary() string {
	return p.kindSummary(cluster.KindNode)
}

// nearest returns the refusing sources of a kind, nearest first (indexes of
// the verdicts), and their lines for a detail (groupLines), worked out once
// per placement.
func (p *Placement) nearest(k cluster.CapacityKind) nearestKind {
	if p.memo == nil {
		return p.nearestOrder(k)
	}
	return p.memo.nearest.get(k, func() nearestKind {
		if p.memo.shared == nil {
			return p.nearestOrder(k)
		}
		return p.memo.shared.get(k, p.Verdicts, p.own, p.nearestOrder)
	})
}

// nearestShared holds nearestKind answers by the refusals they are worked
// out from, for the placements of one simulator. Pods of different
// scheduling classes (one node selection, other requests) are refused alike
// by most sources of a large input, with the same Reason slices (a
// NodePool's answer to a node selection is worked out once): the order and
// the lines of hundreds of NodePools are then worked out once, not once per
// class.
type nearestShared struct {
	mu sync.Mutex
	m  map[uint64][]nearestSeen
}

// nearestSeen is one answer and the verdicts it was worked out from (a
// placement's, which keeps them).
type nearestSeen struct {
	k  cluster.CapacityKind
	vs []Verdict
	nk nearestKind
}

func (n *nearestShared) get(k cluster.CapacityKind, vs []Verdict, own bool, compute func(cluster.CapacityKind) nearestKind) nearestKind {
	h := refusalsHash(k, vs)
	n.mu.Lock()
	for _, e := range n.m[h] {
		if e.k == k && sameRefusals(k, e.vs, vs) {
			n.mu.Unlock()
			return e.nk
		}
	}
	n.mu.Unlock()
	nk := compute(k)
	n.mu.Lock()
	if n.m == nil {
		n.m = map[uint64][]nearestSeen{}
	}
	if own {
		// The placement's verdicts may be handed on (Release): keep a copy.
		vs = slices.Clone(vs)
	}
	n.m[h] = append(n.m[h], nearestSeen{k: k, vs: vs, nk: nk})
	n.mu.Unlock()
	return nk
}

// refusing reports whether a verdict is one of kind k that nearestOrder
// ranks.
func refusing(v *Verdict, k cluster.CapacityKind) bool {
	return v.Source.Kind == k && v.Result != Fits
}

// refusal is what nearestOrder reads of a refusing verdict at index i, by
// identity: verdicts share their sources, and reasons worked out once.
type refusal struct {
	i       int
	source  *Source
	result  Result
	reasons *Reason
	n       int
	types   *string
	nTypes  int
}

func refusalAt(vs []Verdict, i int) refusal {
	v := &vs[i]
	return refusal{i: i, source: v.Source, result: v.Result, reasons: first(v.Reasons), n: len(v.Reasons), types: first(v.InstanceTypes), nTypes: len(v.InstanceTypes)}
}

func first[T any](s []T) *T {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

var refusalSeed = maphash.MakeSeed()

func refusalsHash(k cluster.CapacityKind, vs []Verdict) uint64 {
	var h maphash.Hash
	h.SetSeed(refusalSeed)
	maphash.WriteComparable(&h, len(vs))
	for i := range vs {
		if refusing(&vs[i], k) {
			maphash.WriteComparable(&h, refusalAt(vs, i))
		}
	}
	return h.Sum64()
}

// sameRefusals reports whether two placements' verdicts refuse alike for
// kind k: at the same indexes, the same sources, results, and the same
// reasons and instance types (read-only slices, compared by identity).
func sameRefusals(k cluster.CapacityKind, a, b []Verdict) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		ra, rb := refusing(&a[i], k), refusing(&b[i], k)
		if ra != rb || ra && refusalAt(a, i) != refusalAt(b, i) {
			return false
		}
	}
	return true
}

// nearestKind is the order of nearest, as indexes of the verdicts (the memo
// keeps them, not copies of the verdicts), and the lines that group them.
type nearestKind struct {
	order []int32
	lines []string
}

// sharedPart is a verdict's sharedParts.
type sharedPart struct{ text, theirs string }

func (p *Placement) nearestOrder(k cluster.CapacityKind) nearestKind {
	var idx []int32
	for i := range p.Verdicts {
		if refusing(&p.Verdicts[i], k) {
			idx = append(idx, int32(i))
		}
	}
	order, parts := nearestFirst(p.Verdicts, idx)
	return nearestKind{order: order, lines: groupLines(k, p.Verdicts, order, parts)}
}

// nearestFirst orders refusing sources by how near they come to taking the
// pod: a NodePool the pod names (its refusal is not about the
// karpenter.sh/nodepool label) before the others; then a refusal few sources
// share (the one the pod selects, by name or by a label only it gives, fails
// for a reason of its own, where the rest fail alike for not being selected);
// then fewer reasons.
func nearestFirst(all []Verdict, idx []int32) ([]int32, []sharedPart) {
	type ranked struct {
		i       int32
		part    sharedPart
		shared  int
		other   bool // refuses because the pod names another NodePool
		reasons int
	}
	rs := make([]ranked, len(idx))
	count := map[string]int{}
	for n, i := range idx {
		text, theirs := all[i].sharedParts()
		rs[n] = ranked{i: i, part: sharedPart{text, theirs}, other: namesOther(all[i]), reasons: len(all[i].Reasons)}
		count[text]++
	}
	for n := range rs {
		rs[n].shared = count[rs[n].part.text]
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		if a.other != b.other {
			if a.other {
				return 1
			}
			return -1
		}
		if a.shared != b.shared {
			return cmp.Compare(a.shared, b.shared)
		}
		return cmp.Compare(a.reasons, b.reasons)
	})
	order, parts := make([]int32, len(rs)), make([]sharedPart, len(rs))
	for n, r := range rs {
		order[n], parts[n] = r.i, r.part
	}
	return order, parts
}

// namesOther reports whether a NodePool refuses only because the pod names
// another NodePool.
func namesOther(v Verdict) bool {
	if v.Source.Kind != cluster.KindNodePool || len(v.Reasons) == 0 {
		return false
	}
	r := v.Reasons[0]
	return r.Key == karpv1.NodePoolLabelKey || strings.Contains(r.Note, "key "+karpv1.NodePoolLabelKey+", ")
}

// Grouped renders the verdicts for a finding's detail: every source that fits,
// and for each kind the refusing sources nearest first; when a kind has more
// than max refusing sources, they are nearest first and those that refuse
// for the same reason are one line ("198 nodepools (np-000, np-001, np-002
// and 195 more): refuses: ...").
func (p *Placement) Grouped(max int) []string {
	refusing := map[cluster.CapacityKind]int{}
	for _, v := range p.Verdicts {
		if v.Result != Fits {
			refusing[v.Source.Kind]++
		}
	}
	var out []string
	grouped := map[cluster.CapacityKind]bool{}
	for _, v := range p.Verdicts {
		k := v.Source.Kind
		if v.Result == Fits || refusing[k] <= max {
			out = append(out, v.Line())
			continue
		}
		if grouped[k] {
			continue
		}
		// Where the kind's first refusing source stands: all of them, grouped.
		grouped[k] = true
		out = append(out, p.nearest(k).lines...)
	}
	return out
}

// groupLines renders refusing sources of one kind nearest first (the
// verdicts at order, with their parts), those that refuse for the same
// reason on one line.
func groupLines(k cluster.CapacityKind, all []Verdict, order []int32, parts []sharedPart) []string {
	type group struct {
		text   string
		names  []string // the first three
		n      int
		first  *Verdict
		theirs distinctValues
	}
	var groups []*group
	index := map[string]*group{}
	for i, j := range order {
		v := &all[j]
		text, theirs := parts[i].text, parts[i].theirs
		g, ok := index[text]
		if !ok {
			g = &group{text: text, first: v}
			index[text] = g
			groups = append(groups, g)
		}
		if g.n++; len(g.names) < 3 {
			g.names = append(g.names, v.Source.Name)
		}
		g.theirs.add(theirs)
	}
	var out []string
	for _, g := range groups {
		if g.n == 1 {
			out = append(out, g.first.Line())
			continue
		}
		more := ""
		if g.n > len(g.names) {
			more = fmt.Sprintf(" and %d more", g.n-len(g.names))
		}
		text := strings.Replace(g.text, theirsMark, g.theirs.text(), 1)
		out = append(out, fmt.Sprintf("%d %ss (%s%s): %s", g.n, k, strings.Join(g.names, ", "), more, text))
	}
	return out
}

// theirsMark stands, in a shared text, for the part of a requirement refusal
// that is the source's own requirement ("team In [team-00]"), which differs
// from source to source while the refusal is the same.
const theirsMark = "\x00theirs\x00"

// distinctValues keeps the first few distinct values of a group's own
// requirements, and how many distinct there are.
type distinctValues struct {
	first []string
	seen  map[string]bool
}

func (d *distinctValues) add(v string) {
	if v == "" || d.seen[v] {
		return
	}
	if d.seen == nil {
		d.seen = map[string]bool{}
	}
	d.seen[v] = true
	if len(d.first) < 3 {
		d.first = append(d.first, v)
	}
}

// text is the one value all share, or a few of theirs: "their own (team In
// [team-00], team In [team-01], team In [team-02] and 497 more)".
func (d *distinctValues) text() string {
	if len(d.seen) == 1 {
		return d.first[0]
	}
	more := ""
	if n := len(d.seen) - len(d.first); n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	return "their own (" + strings.Join(d.first, ", ") + more + ")"
}

// sharedParts is a verdict's line without its source's name, so that sources
// that refuse for the same reason read the same, whatever their own
// requirement the pod's is not in: theirsMark stands for the source's own
// requirement in a requirement refusal, returned beside ("" when none).
func (v Verdict) sharedParts() (string, string) {
	if v.Result == Fits {
		return "fits", ""
	}
	var b strings.Builder
	n := len("cannot tell: ")
	for _, r := range v.Reasons {
		n += len(r.Message) + len(r.Note) + len(" (); ") + len(theirsMark)
	}
	b.Grow(n)
	switch v.Result {
	case Unknown:
		b.WriteString("cannot tell: ")
	default:
		b.WriteString("refuses: ")
	}
	theirs := ""
	for i, r := range v.Reasons {
		if i > 0 {
			b.WriteString("; ")
		}
		msg := r.Text()
		// (The names are looked for before the needles are made: most
		// reasons do not hold them.)
		if strings.Contains(msg, v.Source.Name) {
			if own := "(NodePool=" + v.Source.Name + ")"; v.Source.Kind == cluster.KindNodePool && strings.Contains(msg, own) {
				// Karpenter's structured field names the NodePool.
				msg = strings.ReplaceAll(msg, own, "(NodePool=<its own name>)")
			}
			if strings.Contains(msg, "["+v.Source.Name+"]") {
				msg = strings.ReplaceAll(msg, "["+v.Source.Name+"]", "[its own name]")
			}
		}
		if r.Code == CodeTaint {
			// A taint named after its source: "dedicated=pool-04:NoSchedule".
			msg = replaceName(msg, v.Source.Name, "<its own name>")
		}
		if r.Code == CodeRequirements && theirs == "" && r.Key != "" {
			if at := strings.Index(msg, "key "+r.Key+", "); at >= 0 {
				if cut := strings.Index(msg[at:], " not in "); cut >= 0 {
					cut += at + len(" not in ")
					b.WriteString(msg[:cut])
					b.WriteString(theirsMark)
					theirs = msg[cut:]
					continue
				}
			}
		}
		b.WriteString(msg)
	}
	return b.String(), theirs
}

// replaceName replaces name where it stands as a whole name in text (a
// taint's value "dedicated=pool-04:NoSchedule"), not inside a longer one
// ("pool-049").
func replaceName(text, name, with string) string {
	if name == "" || !strings.Contains(text, name) {
		return text
	}
	var b strings.Builder
	for {
		i := strings.Index(text, name)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		end := i + len(name)
		if (i > 0 && nameByte(text[i-1])) || (end < len(text) && nameByte(text[end])) {
			b.WriteString(text[:end])
		} else {
			b.WriteString(text[:i])
			b.WriteString(with)
		}
		text = text[end:]
	}
}

// nameByte reports whether c can be part of a Kubernetes object name.
func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_'
}

// maxSummarized is how many NodePools a summary quotes; the verdicts list them all.
const maxSummarized = 3

// short is a reason as kube-scheduler counts it in "0/N nodes are available":
// the kind of refusal without the node-specific detail, so that identical
// refusals add up.
func (r Reason) short() string {
	switch r.Code {
	case CodeAffinity:
		return "node(s) didn't match Pod's node affinity/selector"
	case CodeResources:
		var parts []string
		for _, name := range r.Resources {
			parts = append(parts, "Insufficient "+string(name))
		}
		if len(parts) > 0 {
			return strings.Join(parts, ", ")
		}
	}
	return r.Message
}

// Explain renders every verdict, one line per source, for `explain` and finding
// details.
func (p *Placement) Explain() []string {
	var out []string
	for _, v := range p.Verdicts {
		out = append(out, v.Line())
	}
	return out
}

// Line renders one verdict: `node group "karpenter": refuses: node(s) had untolerated taint {...}`.
func (v Verdict) Line() string {
	if v.Source.Kind == cluster.KindUnseen {
		return reasonList(v.Reasons)
	}
	name := v.Source.Describe()
	switch v.Result {
	case Fits:
		if len(v.InstanceTypes) > 0 {
			return fmt.Sprintf("%s: fits (e.g. %s)", name, strings.Join(v.InstanceTypes, ", "))
		}
		return name + ": fits"
	case Unknown:
		return fmt.Sprintf("%s: cannot tell: %s", name, reasonList(v.Reasons))
	}
	return fmt.Sprintf("%s: refuses: %s", name, reasonList(v.Reasons))
}

func reasonList(rs []Reason) string {
	var parts []string
	for _, r := range rs {
		parts = append(parts, r.Text())
	}
	return strings.Join(parts, "; ")
}

// KarpenterMessage is the placement's answer about the NodePools in the words
// of Karpenter's provisioning scheduler for the pod (what it logs and puts in
// its FailedScheduling event after "Failed to schedule pod, "): each NodePool
// that has instance types, by weight and then by name from the end of the
// alphabet as Karpenter orders them, its error, joined by "; ". It is "" when
// a NodePool launches a node for the pod, when a NodePool cannot be judged,
// when Karpenter cannot run (always in the bootstrap phase), or when there is
// no NodePool; NodePools whose node class is not ready are left out, as
// Karpenter leaves them out.
func (p *Placement) KarpenterMessage() string {
	if p.Phase != cluster.Steady {
		return ""
	}
	var vs []Verdict
	for _, v := range p.Verdicts {
		if v.Source.Kind != cluster.KindNodePool {
			continue
		}
		if v.Result != Refuses {
			return ""
		}
		if slices.ContainsFunc(v.Reasons, func(r Reason) bool { return r.Code == CodeController }) {
			return ""
		}
		if slices.ContainsFunc(v.Reasons, func(r Reason) bool { return r.Code == CodeNodeClass }) {
			continue
		}
		vs = append(vs, v)
	}
	if len(vs) == 0 {
		return ""
	}
	sort.SliceStable(vs, func(i, j int) bool {
		a, b := vs[i].Source.NodePool, vs[j].Source.NodePool
		if a.Weight != b.Weight {
			return a.Weight > b.Weight
		}
		return a.Name > b.Name
	})
	var errs []string
	for _, v := range vs {
		i := slices.IndexFunc(v.Reasons, func(r Reason) bool {
			switch r.Code {
			case CodeTaint, CodeRequirements, CodeNoInstanceType, CodeLimits:
				return true
			}
			return false
		})
		if i < 0 || v.Reasons[i].Message == msgFilteredOut {
			// Karpenter skips a NodePool without instance types.
			continue
		}
		if v.Reasons[i].Uncertain {
			// Its words are not known: neither is Karpenter's message.
			return ""
		}
		errs = append(errs, v.Reasons[i].Message)
	}
	if len(errs) == 0 {
		return msgFilteredOut
	}
	return strings.Join(errs, "; ")
}
