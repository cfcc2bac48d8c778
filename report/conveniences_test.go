package report_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/report"
)

// sameSummary is n Deployments per node group that fit no capacity, with one
// long summary for all: only the explanation and fix name the node group.
func sameSummary(n int, groups ...string) []lint.Finding {
	long := " fits no capacity: 0/20 node groups are available: " + strings.Repeat("1 node group(s) had untolerated taint {dedicated: ng-03}, ", 6)
	var fs []lint.Finding
	for _, ng := range groups {
		for i := range n {
			ref := cluster.ObjectRef{Kind: "Deployment", Namespace: "apps", Name: fmt.Sprintf("%s-svc-%d", ng, i)}
			fs = append(fs, lint.Finding{Check: "pod-unschedulable", Severity: lint.Error, Object: ref,
				Origin:  cluster.Origin{File: "apps.yaml", Line: i + 1},
				Summary: ref.String() + long,
				Detail:  "In the steady phase:\n  - node group \"" + ng + "\": refuses: pod requires pool In [" + ng + "]",
				Fix:     &lint.Fix{Summary: "tolerate dedicated:NoSchedule so the pods can run on node group \"" + ng + "\""}})
		}
	}
	return fs
}

// TestGroupHeadersTellGroupsApart: groups whose causes read alike name, in
// their header, the node group that sets them apart, before the cause cut
// short.
func TestGroupHeadersTellGroupsApart(t *testing.T) {
	t.Parallel()
	groups, _ := report.Groups(sameSummary(6, "ng-03", "ng-07", "ng-11"), report.GroupAt)
	if len(groups) != 3 {
		t.Fatalf("%d groups, want 3", len(groups))
	}
	seen := map[string]bool{}
	for _, g := range groups {
		h := g.Header()
		if seen[h] {
			t.Errorf("two groups with the header %q", h)
		}
		seen[h] = true
		ng := strings.SplitN(g.Findings[0].Object.Name, "-svc", 2)[0]
		if !strings.HasPrefix(h, "[node group \""+ng+"\"]") {
			t.Errorf("header %q does not start with node group %q", h, ng)
		}
		if len([]rune(h)) > report.CauseWidth+40 {
			t.Errorf("header of %d characters", len([]rune(h)))
		}
	}
	// A group alone with its cause needs no label.
	single, _ := report.Groups(sameSummary(6, "ng-03"), report.GroupAt)
	if single[0].Label != "" {
		t.Errorf("label %q on a group no other reads like", single[0].Label)
	}
	var b bytes.Buffer
	if err := report.Text(&b, sameSummary(6, "ng-03", "ng-07"), report.Options{Group: report.GroupAt}); err != nil {
		t.Fatal(err)
	}
	for _, ng := range []string{"ng-03", "ng-07"} {
		if !strings.Contains(b.String(), "× Deployment  one cause: [node group \""+ng+"\"] …") {
			t.Errorf("text report lacks the header of %s:\n%s", ng, b.String())
		}
	}
}

// TestSummaryTopCausesBySeverity: --summary's top causes are the most severe
// first, the most frequent within a severity.
func TestSummaryTopCausesBySeverity(t *testing.T) {
	t.Parallel()
	mk := func(n int, sev lint.Severity, check, cause string) []lint.Finding {
		var fs []lint.Finding
		for i := range n {
			ref := cluster.ObjectRef{Kind: "Pod", Namespace: "x", Name: fmt.Sprintf("%s-%d", check, i)}
			fs = append(fs, lint.Finding{Check: check, Severity: sev, Object: ref, Summary: ref.String() + " " + cause})
		}
		return fs
	}
	var fs []lint.Finding
	fs = append(fs, mk(50, lint.Info, "info-check", "is informative")...)
	fs = append(fs, mk(40, lint.Warning, "warn-many", "warns a lot")...)
	fs = append(fs, mk(3, lint.Error, "err-few", "fails rarely")...)
	fs = append(fs, mk(9, lint.Error, "err-more", "fails more")...)
	fs = append(fs, mk(2, lint.Warning, "warn-few", "warns little")...)
	var b bytes.Buffer
	if err := report.Summary(&b, fs, report.Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	_, top, _ := strings.Cut(out, "Top causes:")
	var order []string
	for _, l := range strings.Split(top, "\n") {
		if f := strings.Fields(l); len(f) > 3 && f[1] == "×" {
			order = append(order, f[3])
		}
	}
	want := []string{"err-more", "err-few", "warn-many", "warn-few", "info-check"}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Errorf("top causes %q, want %q\n%s", order, want, out)
	}
}

// TestCompact: one line per finding, file:line: severity check: summary, in
// the text report's order, escaped, colored only when asked.
func TestCompact(t *testing.T) {
	t.Parallel()
	fs := []lint.Finding{
		{Check: "b-check", Severity: lint.Warning, Object: cluster.ObjectRef{Kind: "Pod", Namespace: "a", Name: "p"}, Origin: cluster.Origin{File: "a.yaml", Line: 3}, Summary: "warned"},
		{Check: "a-check", Severity: lint.Error, Object: cluster.ObjectRef{Kind: "Pod", Namespace: "a", Name: "p"}, Origin: cluster.Origin{File: "a.yaml", Line: 3}, Summary: "failed \x1b[31mred\n::error::x"},
		{Check: "c-check", Severity: lint.Info, Object: cluster.ObjectRef{Kind: "Pod", Namespace: "a", Name: "q"}, Origin: cluster.Origin{File: "cluster:prod"}, Summary: "live"},
		{Check: "d-check", Severity: lint.Info, Origin: cluster.Origin{File: "b.tf"}, Summary: "no line"},
	}
	var b bytes.Buffer
	if err := report.Compact(&b, fs, report.Options{}); err != nil {
		t.Fatal(err)
	}
	want := `a.yaml:3: error a-check: failed \x1b[31mred\n::error::x
a.yaml:3: warning b-check: warned
Pod/a/q: info c-check: live
b.tf: info d-check: no line
`
	if b.String() != want {
		t.Errorf("compact:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := report.Compact(&b, fs[:1], report.Options{Color: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\x1b[33mwarning\x1b[0m") {
		t.Errorf("no color with Color: %q", b.String())
	}
}
