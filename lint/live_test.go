package lint_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/bench"
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/lint/linttest"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/source"
)

func TestLiveFixtures(t *testing.T) {
	linttest.RunFixtures(t, filepath.Join("testdata", "live"), nil)
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
	data, err := os.ReadFile(filepath.Join("testdata", "live", "fargate-only.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	fx, err := linttest.ParseFixture("fargate-only", data)
	if err != nil {
		t.Fatal(err)
	}
	model := fx.LiveModel(t)
	var checks []*lint.Check
	for _, c := range lint.Checks() {
		if c.ID != "fargate-profile-mismatch" {
			checks = append(checks, c)
		}
	}
	fs := lint.Run(model, sim.New(model), checks)
	var got []string
	for _, f := range fs {
		got = append(got, f.Check+" "+f.Severity.String()+" "+f.Object.String())
	}
	want := []string{"bootstrap-deadlock error Deployment/karpenter/karpenter"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings without fargate-profile-mismatch (-want +got):\n%s\n%s", diff, describeAll(fs))
	}
}

// Pending pods are first judged from the sources that take them, their
// refusals worked out only for the pods reported: the findings are those of
// judging every group on its whole placement, for every live fixture and for
// generated clusters whose Pending pods select one NodePool of many by label
// or by name (most fit it, some select a label no NodePool gives).
func TestPendingJudgedAlikeFromTheFittingSources(t *testing.T) {
	models := map[string]*cluster.Model{}
	var names []string
	for _, fx := range linttest.ReadFixtures(t, filepath.Join("testdata", "live")) {
		models[fx.Name] = fx.LiveModel(t)
		names = append(names, fx.Name)
	}
	small := bench.SnapshotOptions{Nodes: 60, NodePools: 6, DaemonSets: 2, Pods: 3_000, Replicas: 10, PendingEvery: 20}
	for _, shape := range []string{"unique-pools", "thin-unique-pools"} {
		o, err := small.Shape(shape)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), shape+".json")
		if _, err := bench.GenerateSnapshot(file, o); err != nil {
			t.Fatal(err)
		}
		cs, err := source.Load([]string{file}, source.Options{})
		if err != nil || len(cs) != 1 {
			t.Fatalf("%s: %v (%d clusters)", shape, err, len(cs))
		}
		models[shape] = cs[0].Model
		names = append(names, shape)
	}
	everything := cmp.Exporter(func(reflect.Type) bool { return true })
	for _, name := range names {
		m := models[name]
		quick := lint.Run(m, sim.New(m), lint.Checks())
		var whole []lint.Finding
		t.Run(name, func(t *testing.T) {
			lint.JudgeWholePlacements(t)
			whole = lint.Run(m, sim.New(m), lint.Checks())
		})
		if diff := cmp.Diff(whole, quick, everything); diff != "" {
			t.Errorf("%s: findings from the fitting sources first (-whole placements +fitting first):\n%s", name, diff)
		}
		if strings.HasSuffix(name, "pools") {
			// The generated clusters have Pending pods that fit (not
			// reported) and pods that fit nothing (reported).
			pending, reported := 0, 0
			for _, p := range m.Pods {
				if p.Status.Phase == "Pending" {
					pending++
				}
			}
			for _, f := range quick {
				if f.Check == "pod-unschedulable" {
					reported++
				}
			}
			if reported == 0 || pending <= 3*reported {
				t.Errorf("%s: %d Pending pods, %d pod-unschedulable findings: want some, for a few of the pods", name, pending, reported)
			}
		}
	}
}
