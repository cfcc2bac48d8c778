//go:build livecontrollers

package livecontrollers

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/eksdoctor/eksdoctor/internal/testenv"
)

var (
	nodePools  = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
	nodeClaims = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}
)

// nodeClass is the KWOKNodeClass most scenarios' NodePools use.
const nodeClass = `apiVersion: karpenter.kwok.sh/v1alpha1
kind: KWOKNodeClass
metadata:
  name: default
`

// nodePool renders a NodePool of the kwok provider: template labels and spec
// lines (indented for spec.template.spec) and the rest of spec (disruption,
// limits).
func nodePool(name, class, labels, templateSpec, rest string) string {
	return fmt.Sprintf(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: %s
spec:
  template:
    metadata:
      labels:
%s
    spec:
      nodeClassRef:
        group: karpenter.kwok.sh
        kind: KWOKNodeClass
        name: %s
      expireAfter: Never
      requirements:
      - key: kubernetes.io/os
        operator: In
        values: [linux]
%s
%s
`, name, indent(labels, 8), class, indent(templateSpec, 6), indent(rest, 2))
}

func indent(s string, n int) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	pad := strings.Repeat(" ", n)
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pad + l
	}
	return strings.Join(lines, "\n")
}

// deployment renders a Deployment whose pods ask for cpu, select nodes and
// tolerate what the extra pod spec lines say.
func deployment(ns, name string, replicas int, cpu, podSpec string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %[2]s
  namespace: %[1]s
spec:
  replicas: %[3]d
  selector:
    matchLabels: {app: %[2]s}
  template:
    metadata:
      labels: {app: %[2]s}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: app
        image: registry.example/app:1
        resources:
          requests: {cpu: %[4]s, memory: 64Mi}
%[5]s
`, ns, name, replicas, cpu, indent(podSpec, 6))
}

func namespace(name string) string {
	return fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", name)
}

func apply(t *testing.T, c *testenv.Cluster, docs ...string) {
	t.Helper()
	if _, err := c.Apply(context.Background(), []byte(strings.Join(docs, "\n---\n"))); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls until done says so, failing the test with what it last said
// after timeout, or when a program of the cluster exits.
func waitFor(t *testing.T, c *testenv.Cluster, what string, timeout time.Duration, done func(ctx context.Context) (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Running(); err != nil {
			return false, err
		}
		ok, why := done(ctx)
		last = why
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: %v (last: %s)\nkarpenter's log ends:\n%s", what, err, last, lastLines(c.Log("karpenter"), 20))
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func dynamicClient(t *testing.T, c *testenv.Cluster) dynamic.Interface {
	t.Helper()
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	return dyn
}

// claimsOf lists the NodeClaims of a NodePool.
func claimsOf(ctx context.Context, c *testenv.Cluster, pool string) []unstructured.Unstructured {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return nil
	}
	l, err := dyn.Resource(nodeClaims).List(ctx, metav1.ListOptions{LabelSelector: "karpenter.sh/nodepool=" + pool})
	if err != nil {
		return nil
	}
	return l.Items
}

// condition returns a condition of an object's status: status and reason.
func condition(u unstructured.Unstructured, typ string) (string, string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["status"].(string)
			r, _ := m["reason"].(string)
			return s, r
		}
	}
	return "", ""
}

// podsOf lists the pods of a namespace with a label app=name.
func podsOf(ctx context.Context, c *testenv.Cluster, ns, app string) []corev1.Pod {
	l, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return nil
	}
	return l.Items
}

// unschedulable reports whether every pod of app is Pending and marked
// Unschedulable by kube-scheduler.
func unschedulable(pods []corev1.Pod) bool {
	if len(pods) == 0 {
		return false
	}
	for _, p := range pods {
		marked := false
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
				marked = true
			}
		}
		if !marked {
			return false
		}
	}
	return true
}

func running(pods []corev1.Pod, n int) bool {
	ready := 0
	for _, p := range pods {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			ready++
		}
	}
	return ready >= n
}

// conditionTime returns when a condition of an object's status last changed.
func conditionTime(u unstructured.Unstructured, typ string) (time.Time, bool) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			s, _ := m["lastTransitionTime"].(string)
			at, err := time.Parse(time.RFC3339, s)
			return at, err == nil
		}
	}
	return time.Time{}, false
}
