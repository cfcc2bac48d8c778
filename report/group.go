package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
)

// Many objects with one cause (3,000 bare pods Pending on the same taint, 200
// Deployments selecting a label no capacity has) are one problem: reports group
// them into one entry with a count and examples instead of repeating it.

// GroupAt is how many findings with one cause make a group.
const GroupAt = 5

// Group is findings of one check, severity and cause about different objects.
type Group struct {
	// Cause is the summary with the object set aside ("…").
	Cause string
	// Label is what sets the group apart from the other groups whose cause
	// reads the same when shortened (ShortCause): the words of its fix and
	// explanation the others lack (the node group, NodePool or label value
	// its findings are about), a few at most; "" when its cause alone is
	// distinct.
	Label    string
	Findings []lint.Finding
	// key is what the group's findings share (causeOf).
	key string
}

// CauseWidth is how many characters of a group's cause its header shows.
const CauseWidth = 120

// ShortCause is a group's cause as its header shows it: CauseWidth
// characters at most, the tail cut ("…").
func ShortCause(cause string) string {
	r := []rune(cause)
	if len(r) <= CauseWidth {
		return cause
	}
	return strings.TrimRight(string(r[:CauseWidth-1]), " ,;:") + "…"
}

// causeOf is what findings of one cause share: the check, severity, cluster,
// kind of object, summary (every number set aside), explanation (times and
// counts set aside) and fix, each with the object's name set aside. The cause
// shown is the summary with the object set aside.
func causeOf(f lint.Finding) (key, cause string) {
	cause = f.Summary
	summary, detail, fix := f.Summary, f.Detail, ""
	if f.Fix != nil {
		fix = f.Fix.Summary
	}
	if f.Object != (cluster.ObjectRef{}) {
		ref := f.Object.String()
		cause = strings.ReplaceAll(cause, ref, "…")
		for _, s := range []*string{&summary, &detail, &fix} {
			*s = strings.ReplaceAll(*s, ref, "…")
			if len(f.Object.Name) >= 3 {
				// A pod's own name in its explanation ("Pending pods (1):
				// batch-x7k2p.") does not make another cause.
				*s = strings.ReplaceAll(*s, f.Object.Name, "…")
			}
		}
	}
	// The explanation must be the same too, times and counts aside (not the
	// numbers in names: node group "ng-03" is not "ng-07"), and the fix
	// exactly: a group shows the first finding's, for all.
	return strings.Join([]string{f.Cluster, f.Check, f.Severity.String(), f.Object.Kind, lint.WithoutNumbers(summary), countsAside(detail), fix}, "\x00"), cause
}

// countsAside sets aside times and the numbers that stand alone (counts,
// ages: "Pending for 12m", "(3)", "10:05:00"), keeping those inside names
// ("ng-03", "m5.large", "pool_2").
func countsAside(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c >= '0' && c <= '9' {
			inName := i > 0 && (isWord(s[i-1]) || s[i-1] == '-' || s[i-1] == '.' || s[i-1] == '_')
			if !inName && isTimestamp(s[i:]) {
				j := i
				for j < len(s) && strings.IndexByte("0123456789-:T.Z+", s[j]) >= 0 {
					j++
				}
				b.WriteString("<time>")
				i = j
				continue
			}
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if inName {
				b.WriteString(s[i:j])
			} else {
				b.WriteByte('#')
			}
			i = j
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// isTimestamp reports whether s starts with an RFC 3339 date and time
// (2026-11-24T10:05:00Z).
func isTimestamp(s string) bool {
	const shape = "dddd-dd-ddTdd:dd"
	if len(s) < len(shape) {
		return false
	}
	for i := range len(shape) {
		if c := s[i]; shape[i] == 'd' && (c < '0' || c > '9') || shape[i] != 'd' && c != shape[i] {
			return false
		}
	}
	return true
}

func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// Groups splits findings into groups of at least min findings with one cause
// (largest first, then in the order of their first finding) and the rest, in
// their order.
func Groups(findings []lint.Finding, min int) (groups []Group, rest []lint.Finding) {
	if min <= 0 {
		return nil, findings
	}
	index := map[string]int{}
	var all []Group
	of := make([]int, len(findings))
	for i, f := range findings {
		key, cause := causeOf(f)
		g, ok := index[key]
		if !ok {
			g = len(all)
			index[key] = g
			all = append(all, Group{Cause: cause, key: key})
		}
		all[g].Findings = append(all[g].Findings, f)
		of[i] = g
	}
	for _, g := range all {
		if len(g.Findings) >= min {
			groups = append(groups, g)
		}
	}
	sort.SliceStable(groups, func(i, j int) bool { return len(groups[i].Findings) > len(groups[j].Findings) })
	label(groups)
	for i, f := range findings {
		if len(all[of[i]].Findings) < min {
			rest = append(rest, f)
		}
	}
	return groups, rest
}

// labelWords is how many words a label quotes where a facet starts to
// differ from another group's.
const labelWords = 3

// label sets the Label of every group whose header (kind and shortened
// cause) reads as another's: for each, the words of its fix, explanation,
// summary or cluster (in that order: the fix names the capacity it targets)
// where it first differs from the others of the set, the words around them
// that all share left out.
func label(groups []Group) {
	same := map[string][]int{}
	var order []string
	for i, g := range groups {
		h := g.Findings[0].Object.Kind + "\x00" + ShortCause(g.Cause)
		if _, ok := same[h]; !ok {
			order = append(order, h)
		}
		same[h] = append(same[h], i)
	}
	for _, h := range order {
		idx := same[h]
		if len(idx) < 2 {
			continue
		}
		facets := make([][]string, len(idx))
		for k, i := range idx {
			facets[k] = facetsOf(groups[i].key)
		}
		for k, i := range idx {
			groups[i].Label = distinction(facets, k)
		}
		// What no facet tells apart (the same words in another order
		// of lines) is numbered, so that no two headers read alike.
		count := map[string]int{}
		for _, i := range idx {
			count[groups[i].Label]++
		}
		n := map[string]int{}
		for _, i := range idx {
			if l := groups[i].Label; count[l] > 1 {
				n[l]++
				groups[i].Label = strings.TrimSpace(fmt.Sprintf("%s variant %d", l, n[l]))
			}
		}
	}
}

// facetsOf are the parts of a group's key a label may quote: the fix, each
// line of the explanation, the summary, the cluster.
func facetsOf(key string) []string {
	parts := strings.Split(key, "\x00")
	if len(parts) != 7 {
		return parts
	}
	// key: cluster, check, severity, kind, summary, detail, fix.
	out := []string{parts[6]}
	out = append(out, strings.Split(parts[5], "\n")...)
	return append(out, parts[4], parts[0])
}

// distinction is what sets group k of a set apart from the others: in the
// first facet where some differ, the words of k's where each of theirs starts
// to differ (a few, with the two words before a lone one); then the same for those
// still alike, and so on.
func distinction(facets [][]string, k int) string {
	left := map[int]bool{}
	for j := range facets {
		if j != k {
			left[j] = true
		}
	}
	var parts []string
	for p := 0; len(left) > 0 && p < len(facets[k]); p++ {
		mine := strings.Fields(facets[k][p])
		keep := make([]bool, len(mine))
		differ := false
		for j := range facets {
			if !left[j] {
				continue
			}
			theirs := ""
			if p < len(facets[j]) {
				theirs = facets[j][p]
			}
			if theirs == facets[k][p] {
				continue
			}
			delete(left, j)
			differ = true
			other := strings.Fields(theirs)
			pre := 0
			for pre < len(mine) && pre < len(other) && mine[pre] == other[pre] {
				pre++
			}
			suf := 0
			for suf < len(mine)-pre && suf < len(other)-pre && mine[len(mine)-1-suf] == other[len(other)-1-suf] {
				suf++
			}
			start, end := pre, min(len(mine)-suf, pre+labelWords)
			if start >= end {
				// Theirs has words where mine has none: the word there.
				start, end = max(0, min(pre, len(mine)-1)), min(len(mine), pre+1)
			}
			if end-start == 1 {
				start = max(0, start-2) // a lone word, with the two before it
			}
			for i := start; i < end; i++ {
				keep[i] = true
			}
		}
		if !differ || len(mine) == 0 {
			continue
		}
		var runs []string
		for i := 0; i < len(mine); {
			if !keep[i] {
				i++
				continue
			}
			j := i
			for j < len(mine) && keep[j] {
				j++
			}
			runs = append(runs, strings.Join(mine[i:j], " "))
			i = j
		}
		parts = append(parts, strings.Join(runs, " … "))
	}
	return strings.Join(parts, "; ")
}

// Header is the cause a group's header shows: shortened, after its label
// when it has one ("[node group "ng-07"] … fits no capacity: …").
func (g Group) Header() string {
	if g.Label == "" {
		return ShortCause(g.Cause)
	}
	return "[" + g.Label + "] " + ShortCause(g.Cause)
}

// examples names the first few objects of a group.
func examples(g Group, n int) string {
	var names []string
	seen := map[string]bool{}
	more := false
	for _, f := range g.Findings {
		name := objectOrFile(f)
		if seen[name] {
			continue
		}
		if len(names) == n {
			more = true
			break
		}
		seen[name] = true
		names = append(names, name)
	}
	s := strings.Join(names, ", ")
	if more {
		s += ", …"
	}
	return s
}

// Summary writes the short view of a run (--summary): a line per check and
// object kind with how many findings, then the causes that account for the
// most findings, then the counts.
func Summary(w io.Writer, findings []lint.Finding, opts Options) error {
	p := painter(opts.Color)
	var b strings.Builder
	type row struct {
		check, kind string
		sev         lint.Severity
		n           int
		objects     map[cluster.ObjectRef]bool
	}
	index := map[string]*row{}
	var rows []*row
	for _, f := range findings {
		kind := f.Object.Kind
		if kind == "" {
			kind = "(file)"
		}
		key := f.Check + "\x00" + kind + "\x00" + f.Severity.String()
		r, ok := index[key]
		if !ok {
			r = &row{check: f.Check, kind: kind, sev: f.Severity, objects: map[cluster.ObjectRef]bool{}}
			index[key] = r
			rows = append(rows, r)
		}
		r.n++
		r.objects[f.Object] = true
	}
	sort.SliceStable(rows, func(i, j int) bool {
		a, c := rows[i], rows[j]
		if a.sev != c.sev {
			return a.sev > c.sev
		}
		if a.n != c.n {
			return a.n > c.n
		}
		if a.check != c.check {
			return a.check < c.check
		}
		return a.kind < c.kind
	})
	if len(rows) > 0 {
		fmt.Fprintf(&b, "%-7s  %-30s  %-22s  %8s  %8s\n", "SEVERITY", "CHECK", "KIND", "FINDINGS", "OBJECTS")
		for _, r := range rows {
			fmt.Fprintf(&b, "%s  %-30s  %-22s  %8d  %8d\n", p.paint(severityColor(r.sev), fmt.Sprintf("%-8s", r.sev)), r.check, Line(r.kind), r.n, len(r.objects))
		}
		groups, _ := Groups(findings, 2)
		// The most severe causes first, then the most frequent.
		sort.SliceStable(groups, func(i, j int) bool {
			return groups[i].Findings[0].Severity > groups[j].Findings[0].Severity
		})
		if len(groups) > 0 {
			b.WriteString("\n" + p.paint(ansiBold, "Top causes:") + "\n")
		}
		for i, g := range groups {
			if i == 5 {
				break
			}
			f := g.Findings[0]
			fmt.Fprintf(&b, "  %5d × %s %s  %s\n", len(g.Findings), p.paint(severityColor(f.Severity), f.Severity.String()), f.Check, Line(g.Header()))
			fmt.Fprintf(&b, "          e.g. %s\n", Line(examples(g, 3)))
		}
		b.WriteString("\n")
	}
	writeNarrowed(&b, opts)
	fmt.Fprintf(&b, "%s%s\n",
		countsOf(findings), suppressedCounts(opts))
	_, err := io.WriteString(w, Guard(b.String()))
	return err
}
