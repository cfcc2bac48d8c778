//go:build livecontrollers

package livecontrollers

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/eksdoctor/eksdoctor/internal/testenv"
)

// dataPool is the NodePool of the disruption scenario: its nodes hold
// volumes (the attach/detach controller manages their attachments).
const dataPool = "f3-data"

// sharedPools are the node classes and NodePools of every scenario on the
// shared cluster. They are created before any workload, so that Karpenter's
// message about a pod names the same NodePools whenever it judges it, and
// eksdoctor's reading of any moment sees them all.
var sharedPools = []string{
	nodeClass,
	`apiVersion: karpenter.kwok.sh/v1alpha1
kind: KWOKNodeClass
metadata:
  name: f4-unregistered
spec:
  nodeRegistrationDelay: 2h`,
	// F1
	nodePool("f1-gpu", "default", "workload: gpu", "taints:\n- {key: nvidia.com/gpu, value: \"true\", effect: NoSchedule}", ""),
	nodePool("f1-small", "default", "workload: small", "", "limits:\n  cpu: \"2\""),
	nodePool("f1-spot", "default", "workload: spot", "- {key: karpenter.sh/capacity-type, operator: In, values: [spot]}", ""),
	nodePool("f1-startup", "default", "workload: startup", "startupTaints:\n- {key: example.com/agent-not-ready, effect: NoSchedule}", ""),
	// Its node class does not exist: Karpenter calls it not Ready and
	// ignores it.
	nodePool("f1-lost", "absent", "workload: lost", "", ""),
	// F3
	strings.Replace(nodePool(dataPool, "default", "workload: data\nrev: \"1\"", "", `disruption:
  consolidationPolicy: WhenEmpty
  consolidateAfter: 1h`), "  template:\n    metadata:\n", "  template:\n    metadata:\n      annotations:\n        volumes.kubernetes.io/controller-managed-attach-detach: \"true\"\n", 1),
	nodePool("f3-batch", "default", "workload: batch", "", `disruption:
  consolidationPolicy: WhenEmpty
  consolidateAfter: 10s`),
	// F4
	nodePool("f4-unregistered", "f4-unregistered", "workload: unregistered", "", ""),
	nodePool("f4-notready", "default", "workload: notready\n"+neverReady+": \"true\"", "", ""),
}

// notReadyPools are the shared NodePools Karpenter must call not Ready.
var notReadyPools = map[string]bool{"f1-lost": true}

// createSharedPools creates the shared NodePools and waits until Karpenter
// has judged each (Ready, or not Ready for those meant to be).
func createSharedPools(c *testenv.Cluster) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.Apply(ctx, []byte(strings.Join(sharedPools, "\n---\n"))); err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := dyn.Resource(nodePools).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, np := range l.Items {
			st, _ := condition(np, "Ready")
			want := "True"
			if notReadyPools[np.GetName()] {
				want = "False"
			}
			if st != want {
				last = fmt.Sprintf("NodePool %s Ready=%q, want %s", np.GetName(), st, want)
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("the shared NodePools: %w (%s)", err, last)
	}
	return nil
}
