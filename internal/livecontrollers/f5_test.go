//go:build livecontrollers

package livecontrollers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

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

	out, errOut, code := eksdoctor(t, "teardown", "--live", "--kubeconfig", c.Kubeconfig, "-o", "json")
	if code != cli.ExitOK && code != cli.ExitFindings {
		t.Fatalf("eksdoctor teardown --live exited %d:\n%s", code, errOut)
	}
	var plan report.TeardownPlan
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatalf("teardown plan: %v\n%s", err, out)
	}
	t.Logf("teardown --live:\n%s", out)
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
