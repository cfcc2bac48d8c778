package lint_test

import (
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/source"
	"github.com/eksdoctor/eksdoctor/source/live"
)

// A live fixture is a txtar archive whose cluster.yaml holds the objects of a
// cluster as the API server returns them (status and deletion included), read
// through a snapshot exactly as `eksdoctor check snapshot.json` reads one. Its
// comment says what the read saw and what the checks must report:
//
//	context <name>             the kubeconfig context (default "test")
//	now <RFC 3339>             when the cluster was read
//	namespace <ns>             the read was restricted to a namespace
//	skipped <resource>: <why>  a resource that could not be read
//	want <check> <severity> <object>   one finding, exactly (all findings are listed)
//	has <check> <text>         a finding of the check mentions text (summary, detail or fix)
//	lacks <check> <text>       no finding of the check mentions text
type liveFixture struct {
	name  string
	model *cluster.Model
	wants []string
	has   [][2]string
	lacks [][2]string
}

func readLiveFixture(t *testing.T, path string) liveFixture {
	t.Helper()
	a, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fx := liveFixture{name: strings.TrimSuffix(filepath.Base(path), ".txtar")}
	doc := map[string]any{"kind": live.SnapshotKind, "version": live.SnapshotVersion, "context": "test", "server": "https://test", "skipped": []any{}}
	for _, line := range strings.Split(string(a.Comment), "\n") {
		word, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch word {
		case "context", "now", "namespace":
			doc[word] = rest
		case "skipped":
			res, why, _ := strings.Cut(rest, ": ")
			doc["skipped"] = append(doc["skipped"].([]any), map[string]any{"resource": res, "reason": why})
		case "want":
			fx.wants = append(fx.wants, rest)
		case "has", "lacks":
			id, text, _ := strings.Cut(rest, " ")
			if word == "has" {
				fx.has = append(fx.has, [2]string{id, text})
			} else {
				fx.lacks = append(fx.lacks, [2]string{id, text})
			}
		}
	}
	var objects []any
	for _, f := range a.Files {
		if f.Name != "cluster.yaml" {
			t.Fatalf("%s: unexpected file %s", path, f.Name)
		}
		for i, d := range strings.Split("\n"+string(f.Data), "\n---\n") {
			if strings.TrimSpace(d) == "" {
				continue
			}
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(d), &obj); err != nil {
				t.Fatalf("%s: document %d: %v", path, i, err)
			}
			if obj != nil {
				objects = append(objects, obj)
			}
		}
	}
	doc["objects"] = objects
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	m, err := live.ReadSnapshot("snapshot.json", data)
	if err != nil {
		t.Fatal(err)
	}
	fx.model = source.Build(m)
	sort.Strings(fx.wants)
	return fx
}

func describeFinding(f lint.Finding) string {
	s := f.Summary + "\n" + f.Detail
	if f.Fix != nil {
		s += "\n" + f.Fix.Summary
		for _, e := range f.Fix.Edits {
			s += "\n" + e.Text
		}
	}
	return s
}

func TestLiveFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "live", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no live fixtures: %v", err)
	}
	for _, file := range files {
		fx := readLiveFixture(t, file)
		t.Run(fx.name, func(t *testing.T) {
			fs := lint.Run(fx.model, sim.New(fx.model), lint.Checks())
			if testing.Verbose() {
				for _, f := range fs {
					t.Logf("%s %s %s\n%s", f.Severity, f.Check, f.Object, describeFinding(f))
				}
			}
			var got []string
			for _, f := range fs {
				got = append(got, f.Check+" "+f.Severity.String()+" "+f.Object.String())
			}
			sort.Strings(got)
			if diff := cmp.Diff(fx.wants, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s\nall findings:%s", diff, describeAll(fs))
			}
			for _, h := range fx.has {
				found := false
				for _, f := range fs {
					if f.Check == h[0] && strings.Contains(describeFinding(f), h[1]) {
						found = true
					}
				}
				if !found {
					t.Errorf("no %s finding mentions %q; findings:%s", h[0], h[1], describeAll(fs))
				}
			}
			// A running cluster is not before apply and has no bootstrap phase
			// to wait for: its findings speak of what is there.
			for _, f := range fs {
				for _, static := range []string{"before apply", "bootstrap phase"} {
					if strings.Contains(describeFinding(f), static) {
						t.Errorf("a %s finding about a running cluster says %q:\n%s", f.Check, static, describeFinding(f))
					}
				}
			}
			for _, l := range fx.lacks {
				for _, f := range fs {
					if f.Check == l[0] && strings.Contains(describeFinding(f), l[1]) {
						t.Errorf("a %s finding mentions %q:\n%s", l[0], l[1], describeFinding(f))
					}
				}
			}
		})
	}
}

func describeAll(fs []lint.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("\n  " + f.Severity.String() + " " + f.Check + " " + f.Object.String() + ": " + f.Summary)
	}
	if b.Len() == 0 {
		return " (none)"
	}
	return b.String()
}

// With fargate-profile-mismatch disabled, the Pending pods it would explain are
// judged by the scheduling checks: no Pending pod goes unreported.
func TestLiveFargateDeferral(t *testing.T) {
	fx := readLiveFixture(t, filepath.Join("testdata", "live", "fargate-only.txtar"))
	var checks []*lint.Check
	for _, c := range lint.Checks() {
		if c.ID != "fargate-profile-mismatch" {
			checks = append(checks, c)
		}
	}
	fs := lint.Run(fx.model, sim.New(fx.model), checks)
	var got []string
	for _, f := range fs {
		got = append(got, f.Check+" "+f.Severity.String()+" "+f.Object.String())
	}
	want := []string{"bootstrap-deadlock error Deployment/karpenter/karpenter"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings without fargate-profile-mismatch (-want +got):\n%s\n%s", diff, describeAll(fs))
	}
}
