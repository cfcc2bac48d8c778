//go:build livecontrollers

package livecontrollers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/eksdoctor/eksdoctor/internal/cli"
	"github.com/eksdoctor/eksdoctor/report"
)

// finding is a finding of eksdoctor's JSON report.
type finding struct {
	Check    string `json:"check"`
	Severity string `json:"severity"`
	Object   struct {
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"object"`
	Summary string `json:"summary"`
	Detail  string `json:"detail"`
	Fix     *struct {
		Summary string `json:"summary"`
		Edits   []struct {
			Format string `json:"format"`
			Text   string `json:"text"`
		} `json:"edits"`
	} `json:"fix"`
}

func (f finding) ref() string { return ref(f.Object.Kind, f.Object.Namespace, f.Object.Name) }

// key is "check severity Kind/namespace/name".
func (f finding) key() string { return f.Check + " " + f.Severity + " " + f.ref() }

// text is everything the finding says.
func (f finding) text() string {
	s := f.Summary + "\n" + f.Detail
	if f.Fix != nil {
		s += "\n" + f.Fix.Summary
		for _, e := range f.Fix.Edits {
			s += "\n" + e.Text
		}
	}
	return s
}

type findings []finding

// keys returns the sorted keys of the findings that match.
func (fs findings) keys(match func(finding) bool) []string {
	var out []string
	for _, f := range fs {
		if match(f) {
			out = append(out, f.key())
		}
	}
	sort.Strings(out)
	return out
}

// of returns the finding of a check about an object, or fails.
func (fs findings) of(t *testing.T, check, object string) finding {
	t.Helper()
	for _, f := range fs {
		if f.Check == check && f.ref() == object {
			return f
		}
	}
	var all []string
	for _, f := range fs {
		all = append(all, f.key())
	}
	t.Fatalf("no %s finding for %s; eksdoctor found:\n%s", check, object, strings.Join(all, "\n"))
	return finding{}
}

// eksdoctor runs the command line in-process with the real clock (a live read
// records the moment it saw the cluster, which age-based checks judge by).
func eksdoctor(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	wd := t.TempDir()
	env := cli.Env{
		Stdout: &out, Stderr: &errOut,
		Getenv:     func(string) string { return "" },
		Getwd:      func() (string, error) { return wd, nil },
		IsTerminal: func(io.Writer) bool { return false },
		Now:        time.Now,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code = cli.Run(ctx, "eksdoctor", args, env)
	return out.String(), errOut.String(), code
}

func parseFindings(t *testing.T, stdout, stderr string) findings {
	t.Helper()
	var rep struct {
		Findings findings `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("the JSON report does not parse: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	return rep.Findings
}

// diagnosis is what eksdoctor says of one moment of a cluster, read live and
// from a snapshot taken at once after.
type diagnosis struct {
	live, snapshot findings
}

// diagnose runs `eksdoctor cluster` and `eksdoctor snapshot` + `eksdoctor check`
// on the snapshot, one right after the other.
func diagnose(t *testing.T, kubeconfig string) diagnosis {
	t.Helper()
	out, errOut, code := eksdoctor(t, "cluster", "--kubeconfig", kubeconfig, "-o", "json", "--fail-on", "never")
	if code != cli.ExitOK {
		t.Fatalf("eksdoctor cluster exited %d:\n%s", code, errOut)
	}
	d := diagnosis{live: parseFindings(t, out, errOut)}
	snap := filepath.Join(t.TempDir(), "snapshot.json")
	if _, errOut, code := eksdoctor(t, "snapshot", "--kubeconfig", kubeconfig, "-o", snap); code != cli.ExitOK {
		t.Fatalf("eksdoctor snapshot exited %d:\n%s", code, errOut)
	}
	out, errOut, code = eksdoctor(t, "check", snap, "-o", "json", "--fail-on", "never")
	if code != cli.ExitOK {
		t.Fatalf("eksdoctor check on the snapshot exited %d:\n%s", code, errOut)
	}
	d.snapshot = parseFindings(t, out, errOut)
	return d
}

// explain returns `eksdoctor explain -o json` of a workload of the cluster.
func explain(t *testing.T, kubeconfig, workload string) report.Explanation {
	t.Helper()
	out, errOut, code := eksdoctor(t, "explain", workload, "--kubeconfig", kubeconfig, "-o", "json")
	if code != cli.ExitOK && code != cli.ExitFindings {
		t.Fatalf("eksdoctor explain %s exited %d:\n%s", workload, code, errOut)
	}
	var doc struct {
		Explanations []report.Explanation `json:"explanations"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Explanations) != 1 {
		t.Fatalf("explain %s: %v\n%s\n%s", workload, err, out, errOut)
	}
	return doc.Explanations[0]
}

// sideBySide logs what the controllers did beside what eksdoctor said, the
// record each scenario leaves in the test log.
func sideBySide(t *testing.T, observed []fact, fs findings) {
	t.Helper()
	var b strings.Builder
	b.WriteString("what the controllers did:\n")
	for _, f := range observed {
		fmt.Fprintf(&b, "  %s\n", f)
	}
	b.WriteString("what eksdoctor reported:\n")
	if len(fs) == 0 {
		b.WriteString("  (nothing)\n")
	}
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s\n    %s\n", f.key(), strings.ReplaceAll(strings.TrimSpace(f.Summary), "\n", "\n    "))
	}
	t.Log(b.String())
}

// mine returns the live findings that match.
func (d diagnosis) mine(match func(finding) bool) findings {
	var out findings
	for _, f := range d.live {
		if match(f) {
			out = append(out, f)
		}
	}
	return out
}

// sameKeys fails when the snapshot's findings differ from the live read's
// (by check, severity and object: ages move between the two reads).
func (d diagnosis) sameKeys(t *testing.T, match func(finding) bool) {
	t.Helper()
	live, snap := d.live.keys(match), d.snapshot.keys(match)
	if strings.Join(live, "\n") != strings.Join(snap, "\n") {
		t.Errorf("a snapshot of the same moment says otherwise:\nlive:\n  %s\nsnapshot:\n  %s", strings.Join(live, "\n  "), strings.Join(snap, "\n  "))
	}
}
