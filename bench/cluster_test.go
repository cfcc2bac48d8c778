package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/testenv"
	"github.com/eksdoctor/eksdoctor/source/live"
	"github.com/eksdoctor/eksdoctor/source/manifest"
)

// Populate gives the real API server the cluster a generated snapshot
// describes: a live read of it finds every object of the snapshot, statuses
// included (Pending pods stay Pending, nodes keep their allocatable).
func TestPopulateReproducesTheSnapshot(t *testing.T) {
	t.Parallel()
	env, err := testenv.Start(testenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Stop() })
	dir := t.TempDir()
	snap := filepath.Join(dir, "generated.json")
	o := SnapshotOptions{Nodes: 6, NodePools: 2, DaemonSets: 2, Pods: 120, Replicas: 10, PendingEvery: 10}
	if _, err := GenerateSnapshot(snap, o); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	created, refused, firstErr, err := Populate(ctx, env.Config, snap)
	if err != nil {
		t.Fatal(err)
	}
	if refused > 0 {
		t.Fatalf("the server refused %d objects; first: %v", refused, firstErr)
	}

	data, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	want, err := live.ReadSnapshot(snap, data)
	if err != nil {
		t.Fatal(err)
	}
	if created != len(want.Objects) {
		t.Errorf("created %d objects, the snapshot has %d", created, len(want.Objects))
	}
	kc, err := testenv.Kubeconfig(env.Config, "bench")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := live.Load(ctx, live.Options{Kubeconfig: kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	manifest.Interpret(want)
	manifest.Interpret(got)
	if diff := cmp.Diff(census(want), census(got)); diff != "" {
		t.Errorf("objects by kind and state (-snapshot +live read):\n%s", diff)
	}
}

// census counts objects by kind, pods by phase and nodes by allocatable, in
// an interpreted model.
func census(m *cluster.Model) map[string]int {
	out := map[string]int{}
	for _, o := range m.Objects {
		switch o.Kind {
		case "Namespace", "PriorityClass", "Event", "Pod":
			// The server makes namespaces and priority classes of its own;
			// events a live read
			// selects by reason; pods are counted decoded, below.
			continue
		case "Node":
			out["Node allocatable "+o.String("status.allocatable.cpu")]++
		default:
			out[o.Kind]++
		}
	}
	for _, p := range m.Pods {
		out["Pod "+string(p.Status.Phase)]++
	}
	return out
}
