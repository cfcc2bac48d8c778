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
	Cause    string
	Findings []lint.Finding
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
			all = append(all, Group{Cause: cause})
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
	for i, f := range findings {
		if len(all[of[i]].Findings) < min {
			rest = append(rest, f)
		}
	}
	return groups, rest
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
		if len(groups) > 0 {
			b.WriteString("\n" + p.paint(ansiBold, "Top causes:") + "\n")
		}
		for i, g := range groups {
			if i == 5 {
				break
			}
			f := g.Findings[0]
			fmt.Fprintf(&b, "  %5d × %s %s  %s\n", len(g.Findings), p.paint(severityColor(f.Severity), f.Severity.String()), f.Check, Line(g.Cause))
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
