package report_test

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/report"
)

// hostile is a finding whose every field comes from a stranger's input: line
// breaks that would start workflow commands, terminal escapes, Markdown and
// HTML, XML-illegal control characters.
func hostile() lint.Finding {
	return lint.Finding{
		Check: "pod-unschedulable", Severity: lint.Error,
		Object:  cluster.ObjectRef{Kind: "Deployment", Namespace: "x", Name: "a,b:c"},
		Origin:  cluster.Origin{File: "evil,file=x:y.yaml", Line: 3},
		Summary: "fits no capacity <img src=x> **bold**\n::add-mask::secret\r\n::error file=/etc/passwd::pwned %0A\x1b[2J",
		Detail:  "<script>alert(1)</script> [link](http://evil) @team `code`\n```\n# heading\x00\x07",
	}
}

func TestGitHubAnnotations(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := report.GitHub(&b, append(findings(), hostile()), report.Options{Suppressed: []lint.Finding{{Suppressed: &lint.Suppressed{By: "comment"}}}}); err != nil {
		t.Fatal(err)
	}
	golden(t, "findings.github", b.Bytes())
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	// One command per finding, each on one line, then the count.
	if len(lines) != len(findings())+2 {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(findings())+2, b.String())
	}
	for _, l := range lines[:len(lines)-1] {
		if !strings.HasPrefix(l, "::error ") && !strings.HasPrefix(l, "::warning ") && !strings.HasPrefix(l, "::notice ") {
			t.Errorf("not an annotation: %q", l)
		}
		if strings.ContainsAny(l, "\r\x1b\x00") {
			t.Errorf("control characters reach the log: %q", l)
		}
	}
	if got := lines[len(lines)-1]; got != "eksdoctor: 3 errors, 1 warning, 1 info; 1 suppressed (--show-suppressed lists them)" {
		t.Errorf("last line: %q", got)
	}
	evil := lines[len(lines)-2]
	for _, want := range []string{
		"::error file=evil%2Cfile=x%3Ay.yaml,line=3,title=pod-unschedulable Deployment/x/a%2Cb%3Ac::",
		"fits no capacity <img src=x> **bold**%0A::add-mask::secret\\r%0A::error file=/etc/passwd::pwned %250A\\x1b[2J%0A",
	} {
		if !strings.Contains(evil, want) {
			t.Errorf("annotation of the hostile finding lacks %q:\n%s", want, evil)
		}
	}
	if !strings.Contains(b.String(), "::error file=infra/main.tf,line=42,title=bootstrap-deadlock Deployment/kube-system/karpenter::") {
		t.Errorf("no annotation on infra/main.tf:42:\n%s", b.String())
	}
	if strings.Contains(b.String(), "file=cluster:prod") {
		t.Errorf("a live finding names the cluster as a file:\n%s", b.String())
	}
}

func TestJUnit(t *testing.T) {
	t.Parallel()
	checks := []*lint.Check{}
	for _, id := range []string{"bootstrap-deadlock", "invalid-input", "pod-unschedulable", "teardown-orphans", "teardown-order"} {
		c, _ := lint.Lookup(id)
		checks = append(checks, c)
	}
	sup := findings()[0]
	sup.Suppressed = &lint.Suppressed{By: "annotation", Reason: "eksdoctor.io/ignore: bootstrap-deadlock"}
	var b bytes.Buffer
	if err := report.JUnit(&b, append(findings(), hostile()), checks, report.Options{FailOn: lint.Warning, Suppressed: []lint.Finding{sup}}); err != nil {
		t.Fatal(err)
	}
	golden(t, "findings.junit.xml", b.Bytes())
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Skipped  int `xml:"skipped,attr"`
		Suites   []struct {
			Name     string `xml:"name,attr"`
			Tests    int    `xml:"tests,attr"`
			Failures int    `xml:"failures,attr"`
			Cases    []struct {
				Name    string    `xml:"name,attr"`
				File    string    `xml:"file,attr"`
				Failure *struct{} `xml:"failure"`
				Skipped *struct{} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b.String())
	}
	var suites []string
	for _, s := range doc.Suites {
		suites = append(suites, s.Name)
	}
	if diff := cmp.Diff([]string{"bootstrap-deadlock", "invalid-input", "pod-unschedulable", "teardown-order", "teardown-orphans"}, suites); diff != "" {
		t.Errorf("one suite per check that ran (-want +got):\n%s", diff)
	}
	// Errors and warnings fail at --fail-on warning; the info passes; the
	// suppressed one is skipped; a check without findings has a passed case.
	if doc.Tests != 7 || doc.Failures != 4 || doc.Skipped != 1 {
		t.Errorf("tests %d, failures %d, skipped %d; want 7, 4, 1", doc.Tests, doc.Failures, doc.Skipped)
	}
	for _, s := range doc.Suites {
		if s.Name == "teardown-order" && (len(s.Cases) != 1 || s.Cases[0].Name != "no findings" || s.Cases[0].Failure != nil) {
			t.Errorf("teardown-order: %+v, want one passed case", s.Cases)
		}
	}
	if strings.ContainsAny(b.String(), "\x00\x07\x1b") {
		t.Error("XML carries characters XML 1.0 forbids")
	}
}

func TestMarkdown(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := report.Markdown(&b, append(findings(), hostile()), report.Options{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "findings.md", b.Bytes())
	out := b.String()
	for _, want := range []string{
		"## eksdoctor: 3 errors, 1 warning, 1 info\n",
		"| [`bootstrap-deadlock`](https://github.com/eksdoctor/eksdoctor/blob/main/docs/checks/bootstrap-deadlock.md) | error | 1 |",
		"<details><summary><b>error</b> <code>bootstrap-deadlock</code> Deployment/kube-system/karpenter — `infra/main.tf:42`</summary>",
		"**Fix:** tolerate karpenter.sh/controller:NoSchedule",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	// Text outside code is escaped; the detail is in a fence it cannot close.
	for _, bad := range []string{"<img", "**bold**", "\n```\n# heading", "\x1b", "\n::add-mask::"} {
		if strings.Contains(out, bad) {
			t.Errorf("input text reaches the markdown as markup: %q", bad)
		}
	}
	if !strings.Contains(out, "&lt;img src=x&gt; \\*\\*bold\\*\\*") {
		t.Errorf("the summary is not escaped:\n%s", out)
	}
	if !strings.Contains(out, "```text\n<script>alert(1)</script>") {
		t.Errorf("the detail is not in a code fence:\n%s", out)
	}
	var empty bytes.Buffer
	if err := report.Markdown(&empty, nil, report.Options{}); err != nil || empty.String() != "## eksdoctor: 0 errors, 0 warnings, 0 info\n\nNo findings.\n" {
		t.Errorf("no findings: %q, %v", empty.String(), err)
	}
}
