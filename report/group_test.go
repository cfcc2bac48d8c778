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

// pending is n bare pods Pending for one cause, and one for another.
func pending(n int) []lint.Finding {
	var fs []lint.Finding
	for i := range n {
		ref := cluster.ObjectRef{Kind: "Pod", Namespace: "batch", Name: fmt.Sprintf("job-%04d", i)}
		fs = append(fs, lint.Finding{Check: "pod-unschedulable", Severity: lint.Error, Object: ref,
			Origin:  cluster.Origin{File: "cluster:prod"},
			Summary: ref.String() + " is Pending: 0/12 nodes are available: 12 node(s) had untolerated taint {gpu: true}.",
			// Each pod's own age, time and name in its explanation.
			Detail: fmt.Sprintf("Pending for %dm, since 2026-11-%02dT%02d:%02d:00Z. %s tolerates nothing.\nPending pods (1): %s.", i%60, 1+i%28, i%24, i%60, ref, ref.Name)})
	}
	other := cluster.ObjectRef{Kind: "Pod", Namespace: "batch", Name: "odd-one"}
	fs = append(fs, lint.Finding{Check: "pod-unschedulable", Severity: lint.Error, Object: other,
		Origin: cluster.Origin{File: "cluster:prod"}, Summary: other.String() + " is Pending: 0/12 nodes are available: 12 Insufficient memory."})
	return fs
}

func TestGroups(t *testing.T) {
	t.Parallel()
	groups, rest := report.Groups(pending(3000), report.GroupAt)
	if len(groups) != 1 || len(groups[0].Findings) != 3000 || len(rest) != 1 || rest[0].Object.Name != "odd-one" {
		t.Fatalf("groups %d (first %d findings), rest %d; want one group of 3000 and the odd one", len(groups), len(groups[0].Findings), len(rest))
	}
	if want := "… is Pending: 0/12 nodes are available: 12 node(s) had untolerated taint {gpu: true}."; groups[0].Cause != want {
		t.Errorf("cause %q, want %q", groups[0].Cause, want)
	}
	// Below the threshold nothing is grouped; a different explanation or fix
	// is another cause.
	if g, rest := report.Groups(pending(4), report.GroupAt); len(g) != 0 || len(rest) != 5 {
		t.Errorf("4 alike: %d groups, %d rest", len(g), len(rest))
	}
	// Numbers in names are not counts: fixes for node group ng-03 and ng-07
	// are two causes, however alike their summaries.
	var ngs []lint.Finding
	for i := range 10 {
		ref := cluster.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: fmt.Sprintf("svc-%d", i)}
		ng := []string{"ng-03", "ng-07"}[i%2]
		ngs = append(ngs, lint.Finding{Check: "pod-unschedulable", Severity: lint.Error, Object: ref,
			Summary: ref.String() + " fits no capacity: 0/20 node groups are available",
			Detail:  "node group \"" + ng + "\": refuses",
			Fix:     &lint.Fix{Summary: "tolerate dedicated:NoSchedule so the pods can run on node group \"" + ng + "\""}})
	}
	if g, _ := report.Groups(ngs, report.GroupAt); len(g) != 2 || len(g[0].Findings) != 5 {
		t.Errorf("ng-03 and ng-07: %d groups, want 2 of 5", len(g))
	}
	fs := pending(6)
	fs[2].Detail = "another explanation"
	if g, rest := report.Groups(fs, report.GroupAt); len(g) != 1 || len(g[0].Findings) != 5 || len(rest) != 2 {
		t.Errorf("different detail grouped with the rest: %d groups, %d rest", len(g), len(rest))
	}
}

func TestTextGroupsOneCause(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := report.Text(&b, pending(3000), report.Options{Group: report.GroupAt}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"3000 × Pod  one cause: … is Pending: 0/12 nodes are available: 12 node(s) had untolerated taint {gpu: true}.\n",
		"  error   pod-unschedulable  Pod/batch/job-0000 is Pending",
		"the same for 3000 objects: Pod/batch/job-0000, Pod/batch/job-0001, Pod/batch/job-0002, Pod/batch/job-0003, Pod/batch/job-0004, …\n",
		"Pod/batch/odd-one  cluster:prod\n",
		"\n3001 errors, 0 warnings, 0 info\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n"); n > 20 {
		t.Errorf("%d lines for two causes", n)
	}
	var all bytes.Buffer
	if err := report.Text(&all, pending(3000), report.Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Count(all.String(), "pod-unschedulable") != 3001 {
		t.Error("without Group every finding is listed")
	}
}

func TestSummary(t *testing.T) {
	t.Parallel()
	fs := append(pending(30), findings()...)
	var b bytes.Buffer
	if err := report.Summary(&b, fs, report.Options{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "summary.txt", b.Bytes())
	out := b.String()
	for _, want := range []string{
		"error     pod-unschedulable               Pod                           31        31\n",
		"Top causes:\n     30 × error pod-unschedulable  … is Pending: 0/12 nodes are available: 12 node(s) had untolerated taint {gpu: true}.\n          e.g. Pod/batch/job-0000, Pod/batch/job-0001, Pod/batch/job-0002, …\n",
		"\n33 errors, 1 warning, 1 info\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}
