package karpenter

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/differential"
	"github.com/eksdoctor/eksdoctor/internal/testenv"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/source"
	"github.com/eksdoctor/eksdoctor/source/live"
)

// TestStaticAndLiveAgree applies generated scenarios to the test API server
// and asks eksdoctor twice, from the files (`check`) and from the running
// cluster (`cluster`): every Deployment gets the same verdict from every
// NodePool both ways.
func TestStaticAndLiveAgree(t *testing.T) {
	n, seed, only, err := differential.Settings(8)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	namespaces(t)
	kc, err := testenv.Kubeconfig(apiServer.Config, "diff")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(apiServer.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	byResult := map[sim.Result]int{}
	for i := range n {
		if only != nil && !only[i] {
			continue
		}
		sc := generateScenario(rand.New(rand.NewPCG(seed, uint64(i))), i)
		dir := writeScenario(t, sc)
		manifest, err := os.ReadFile(filepath.Join(dir, "cluster.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		clusters, err := source.Load([]string{dir}, source.Options{})
		if err != nil {
			t.Fatal(err)
		}
		static := verdicts(clusters[0].Model)
		objs, err := apiServer.Apply(ctx, manifest)
		if err != nil {
			t.Fatalf("scenario %d: %v", i, err)
		}
		read, err := live.Load(ctx, live.Options{Kubeconfig: kubeconfig})
		if err != nil {
			t.Fatal(err)
		}
		running := verdicts(source.Build(read))
		for _, o := range objs {
			if err := c.Delete(ctx, o); err != nil {
				t.Fatalf("scenario %d: delete %s %s: %v", i, o.GetKind(), o.GetName(), err)
			}
		}
		if len(static) == 0 {
			t.Fatalf("scenario %d: no verdict from the files", i)
		}
		for k, want := range static {
			compared++
			byResult[want]++
			if got, ok := running[k]; !ok || got != want {
				t.Errorf("seed %d scenario %d, %s: from the files %v, from the running cluster %v", seed, i, k, want, got)
			}
		}
	}
	t.Logf("%d NodePool verdicts compared between files and the running cluster: %d fit, %d refuse, %d unknown", compared, byResult[sim.Fits], byResult[sim.Refuses], byResult[sim.Unknown])
	if byResult[sim.Fits] == 0 || byResult[sim.Refuses] == 0 {
		t.Error("the scenarios must exercise both verdicts")
	}
}

// verdicts are each Deployment's verdicts from each NodePool in the steady
// phase.
func verdicts(m *cluster.Model) map[string]sim.Result {
	s := sim.New(m)
	out := map[string]sim.Result{}
	for _, w := range m.Workloads {
		if w.Object.Kind != "Deployment" {
			continue
		}
		for _, v := range s.Place(w, cluster.Steady).Verdicts {
			if v.Source.Kind == cluster.KindNodePool {
				out[fmt.Sprintf("%s from NodePool %s", w.Object.Name, v.Source.Name)] = v.Result
			}
		}
	}
	return out
}
