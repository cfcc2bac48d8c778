//go:build livecontrollers

package livecontrollers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/eksdoctor/eksdoctor/internal/cli"
	"github.com/eksdoctor/eksdoctor/internal/testenv"
	"github.com/eksdoctor/eksdoctor/report"
)

// F5: the controller goes first. The namespace holding the Karpenter release is
// deleted (kube-controller-manager's namespace controller removes the
// Deployment and its pods) while NodePools and their nodes remain; then a
// NodePool is deleted: the garbage collector deletes its NodeClaims, whose
// karpenter.sh/termination finalizer no controller removes, and the nodes stay.
// `eksdoctor teardown --live` plans against that state.
func TestTeardownWithoutTheController(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	c, err := testenv.StartCluster(ctx, testenv.ClusterOptions{KarpenterNamespace: "karpenter"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
	})
	obs := observe(t, c.Config)
	apply(t, c, nodeClass, namespace("f5"),
		nodePool("f5-batch", "default", "workload: batch", "", ""),
		deployment("f5", "batch", 2, "500m", "nodeSelector: {workload: batch}"),
	)
	var nodes []string
	waitFor(t, c, "Karpenter launches the nodes of f5-batch", 4*time.Minute, func(ctx context.Context) (bool, string) {
		claims := claimsOf(ctx, c, "f5-batch")
		if len(claims) == 0 {
			return false, "no NodeClaim"
		}
		nodes = nodes[:0]
		for _, nc := range claims {
			if s, _ := condition(nc, "Initialized"); s != "True" {
				return false, nc.GetName() + " not initialized"
			}
			n, _, _ := unstructuredString(nc.Object, "status", "nodeName")
			nodes = append(nodes, n)
		}
		return running(podsOf(ctx, c, "f5", "batch"), 2), "pods not running"
	})
	// terraform destroy removes the namespace of the release first.
	c.KillKarpenter()
	if err := c.Client.CoreV1().Namespaces().Delete(ctx, c.KarpenterNamespace(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "kube-controller-manager finalizes namespace karpenter", 3*time.Minute, func(ctx context.Context) (bool, string) {
		_, err := c.Client.CoreV1().Namespaces().Get(ctx, c.KarpenterNamespace(), metav1.GetOptions{})
		return err != nil, "namespace still there"
	})
	if err := dynamicClient(t, c).Resource(nodePools).Delete(ctx, "f5-batch", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "the garbage collector deletes the NodeClaims of f5-batch, held by their finalizer", 3*time.Minute, func(ctx context.Context) (bool, string) {
		claims := claimsOf(ctx, c, "f5-batch")
		if len(claims) == 0 {
			return false, "the NodeClaims are gone"
		}
		for _, nc := range claims {
			if nc.GetDeletionTimestamp() == nil {
				return false, nc.GetName() + " not being deleted"
			}
		}
		return true, ""
	})
	d := diagnose(t, c.Kubeconfig)
	sideBySide(t, obs.about(func(f fact) bool {
		return strings.HasPrefix(f.Object, "NodeClaim/") || strings.HasPrefix(f.Object, "Node/") || strings.HasPrefix(f.Object, "Pod/karpenter/")
	}), d.live)
	d.sameKeys(t, func(finding) bool { return true })
	claims := claimsOf(ctx, c, "f5-batch")
	var want []string
	for _, nc := range claims {
		want = append(want, "finalizer-stuck error NodeClaim/"+nc.GetName())
	}
	if diff := cmp.Diff(want, d.live.keys(func(f finding) bool { return f.Severity != "info" })); diff != "" {
		t.Errorf("findings once the controller is gone (-want +got):\n%s", diff)
	}
	for _, nc := range claims {
		stuck := d.live.of(t, "finalizer-stuck", "NodeClaim/"+nc.GetName())
		node, _, _ := unstructuredString(nc.Object, "status", "nodeName")
		for _, part := range []string{
			"held by karpenter.sh/termination, and the Karpenter controller that removes it is absent",
			"Its Node " + node + " is still there (finalizers karpenter.sh/termination): it goes when the NodeClaim is finalized.",
		} {
			if !strings.Contains(stuck.text(), part) {
				t.Errorf("finalizer-stuck lacks %q:\n%s", part, stuck.text())
			}
		}
	}
	// The Nodes were not deleted: their NodeClaims are, and wait.
	for _, f := range obs.about(func(f fact) bool { return f.Kind == "deleting" && strings.HasPrefix(f.Object, "Node/") }) {
		t.Errorf("a node is being deleted, which eksdoctor does not say: %s", f)
	}

	out, errOut, code := eksdoctor(t, "teardown", "--live", "--kubeconfig", c.Kubeconfig, "-o", "json")
	if code != cli.ExitOK && code != cli.ExitFindings {
		t.Fatalf("eksdoctor teardown --live exited %d:\n%s", code, errOut)
	}
	var plan report.TeardownPlan
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatalf("teardown plan: %v\n%s", err, out)
	}
	t.Logf("teardown --live:\n%s", out)
	// Its first step is the NodeClaims left by the deleted NodePool, blocked
	// by the absent controller.
	if len(plan.Steps) == 0 || plan.Steps[0].Stage != "nodepools" {
		t.Fatalf("the plan does not begin with the NodeClaims left behind:\n%s", out)
	}
	first := plan.Steps[0]
	for _, nc := range claims {
		found := false
		for _, it := range first.Items {
			if it.Name == "NodeClaim "+nc.GetName() && strings.Contains(strings.Join(it.Live, "; "), "its NodePool f5-batch is gone") {
				found = true
			}
		}
		if !found {
			t.Errorf("step %q does not name NodeClaim %s and its gone NodePool: %+v", first.Title, nc.GetName(), first.Items)
		}
	}
	if !strings.Contains(strings.Join(first.Blockers, "\n"), "the Karpenter controller is absent") {
		t.Errorf("step %q: the absent controller does not block it: %v", first.Title, first.Blockers)
	}
}

func unstructuredString(obj map[string]any, fields ...string) (string, bool, error) {
	cur := any(obj)
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false, nil
		}
		cur = m[f]
	}
	s, ok := cur.(string)
	return s, ok, nil
}
