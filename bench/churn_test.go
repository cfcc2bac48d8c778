package bench

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/eksdoctor/eksdoctor/internal/testenv"
)

// Churn relabels pods and replaces every tenth change's pod with one like it
// under a new name: the pods change, their number stays, and nothing is
// refused.
func TestChurnChangesPodsAndKeepsTheirNumber(t *testing.T) {
	t.Parallel()
	env, err := testenv.Start(testenv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Stop() })
	snap := filepath.Join(t.TempDir(), "generated.json")
	o := SnapshotOptions{Nodes: 4, NodePools: 2, DaemonSets: 1, Pods: 60, Replicas: 10, PendingEvery: 10}
	if _, err := GenerateSnapshot(snap, o); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, refused, firstErr, err := Populate(ctx, env.Config, snap); err != nil || refused > 0 {
		t.Fatalf("populate: %v; %d refused (first: %v)", err, refused, firstErr)
	}
	client, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	count := func() (pods, relabelled, replaced int) {
		l, err := client.Resource(podsGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range l.Items {
			if p.GetLabels()["eksdoctor.bench/churn"] != "" {
				relabelled++
			}
			if i := strings.LastIndex(p.GetName(), "-c"); i > 0 && p.GetName()[i+2:] != "" && strings.Trim(p.GetName()[i+2:], "0123456789") == "" {
				replaced++
				if _, ok := p.Object["status"].(map[string]any)["phase"]; !ok {
					t.Errorf("replaced pod %s has no status", p.GetName())
				}
			}
		}
		return len(l.Items), relabelled, replaced
	}
	before, _, _ := count()
	st, err := Churn(ctx, env.Config, ChurnOptions{PerMinute: 6000, Duration: 2 * time.Second, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if st.Failed > 0 {
		t.Fatalf("%d changes refused; first: %v", st.Failed, st.FirstErr)
	}
	// The rate is a most (a busy machine makes fewer changes); one change
	// in replaceEvery is a replacement.
	total := st.Relabelled + st.Replaced
	if total < 20 || total > 201 || st.Replaced != total/replaceEvery {
		t.Errorf("in 2 s at 100 a second: %+v; want 20 to 200 changes, one in %d a replacement", st, replaceEvery)
	}
	after, relabelled, replaced := count()
	if after != before {
		t.Errorf("%d pods before the churn, %d after", before, after)
	}
	if relabelled == 0 || replaced == 0 {
		t.Errorf("after the churn %d pods carry its label and %d replaced ones exist", relabelled, replaced)
	}
}
