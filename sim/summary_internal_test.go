package sim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// With hundreds of NodePools, the one the pods select (by a label only it
// gives) leads the summary, and the others, which refuse alike, are one line
// of the detail.
func TestNearestFirstAndGrouped(t *testing.T) {
	t.Parallel()
	var vs []Verdict
	for i := range 12 {
		name := fmt.Sprintf("np-%03d", i)
		msg := fmt.Sprintf("incompatible requirements, key team, team In [np-007] not in team In [%s]", name)
		if name == "np-007" {
			msg = `incompatible requirements, label "workload" does not have known values`
		}
		vs = append(vs, Verdict{Source: &Source{Kind: cluster.KindNodePool, Name: name}, Result: Refuses,
			Reasons: []Reason{{Code: CodeRequirements, Key: "team", Message: msg}}})
	}
	pl := &Placement{Phase: cluster.Steady, Verdicts: vs}
	if s := pl.Summary(); !strings.HasPrefix(s, `nodepool "np-007": incompatible requirements, label "workload"`) {
		t.Errorf("summary = %q, want it to lead with np-007", s)
	}
	got := pl.Grouped(8)
	want := []string{
		`nodepool "np-007": refuses: incompatible requirements, label "workload" does not have known values`,
		`11 nodepools (np-000, np-001, np-002 and 8 more): refuses: incompatible requirements, key team, team In [np-007] not in team In [its own name]`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Grouped:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Few sources: each on its line, in order, as before.
	few := &Placement{Phase: cluster.Steady, Verdicts: vs[:3]}
	if got := few.Grouped(8); len(got) != 3 || !strings.HasPrefix(got[0], `nodepool "np-000"`) {
		t.Errorf("Grouped of three = %q", got)
	}
}

func TestReplaceName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ text, want string }{
		{"did not tolerate taint dedicated=pool-04:NoSchedule", "did not tolerate taint dedicated=<its own name>:NoSchedule"},
		{"taint dedicated=pool-049:NoSchedule", "taint dedicated=pool-049:NoSchedule"},
		{"xpool-04 and pool-04", "xpool-04 and <its own name>"},
		{"pool-04", "<its own name>"},
		{"nothing here", "nothing here"},
	} {
		if got := replaceName(tc.text, "pool-04", "<its own name>"); got != tc.want {
			t.Errorf("replaceName(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// NodePools tainted with their own name refuse alike: one line. The name is
// replaced in taints only, never in other reasons' words.
func TestGroupedTaintsNamedAfterTheirSource(t *testing.T) {
	t.Parallel()
	var vs []Verdict
	for i := range 10 {
		name := fmt.Sprintf("np-%02d", i)
		vs = append(vs, Verdict{Source: &Source{Kind: cluster.KindNodePool, Name: name}, Result: Refuses,
			Reasons: []Reason{{Code: CodeTaint, Message: fmt.Sprintf("did not tolerate taint (taint=dedicated=%s:NoSchedule)", name)}}})
	}
	got := (&Placement{Phase: cluster.Steady, Verdicts: vs}).Grouped(8)
	want := `10 nodepools (np-00, np-01, np-02 and 7 more): refuses: did not tolerate taint (taint=dedicated=<its own name>:NoSchedule)`
	if len(got) != 1 || got[0] != want {
		t.Errorf("Grouped = %q, want [%q]", got, want)
	}
	spot := Verdict{Source: &Source{Kind: cluster.KindNodePool, Name: "spot"}, Result: Refuses,
		Reasons: []Reason{{Code: CodeController, Message: "no spot capacity"}}}
	if text, _ := spot.sharedParts(); text != "refuses: no spot capacity" {
		t.Errorf("sharedParts = %q: the name replaced outside a taint", text)
	}
}
