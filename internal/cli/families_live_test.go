package cli

import (
	"context"
	_ "embed"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/eksdoctor/eksdoctor/internal/testenv"
)

//go:embed testdata/families-cluster.yaml
var familiesClusterYAML []byte

// familiesServer starts a kube-apiserver of its own holding
// testdata/families-cluster.yaml, with the statuses the controllers give it
// (the StatefulSet's pod Pending with kube-scheduler's message, the node
// class's SubnetsReady False, the budget's status from the disruption
// controller), and returns a kubeconfig of a user bound only to the Helm
// chart's RBAC and the clock of the reads.
func familiesServer(t *testing.T) (kubeconfig string, now time.Time) {
	t.Helper()
	env, err := testenv.Start(testenv.Options{CRDs: testenv.KarpenterV1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	created := time.Now().UTC().Truncate(time.Second)
	since := metav1.NewTime(created.Add(-time.Hour))
	if _, err := env.Apply(ctx, familiesClusterYAML); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if err := readyNode(ctx, cs, "ip-10-0-2-10.eu-west-1.compute.internal", "8Gi", "7Gi", since); err != nil {
		t.Fatal(err)
	}
	db, err := cs.CoreV1().Pods("apps").Get(ctx, "db-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	db.Status.Phase = corev1.PodPending
	db.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/1 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.", LastTransitionTime: metav1.NewTime(created)}}
	if _, err := cs.CoreV1().Pods("apps").UpdateStatus(ctx, db, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	web, err := cs.CoreV1().Pods("apps").Get(ctx, "web-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	web.Status.Phase = corev1.PodRunning
	web.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: since}}
	if _, err := cs.CoreV1().Pods("apps").UpdateStatus(ctx, web, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	pdb, err := cs.PolicyV1().PodDisruptionBudgets("apps").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pdb.Status.ObservedGeneration = pdb.Generation
	pdb.Status.CurrentHealthy, pdb.Status.DesiredHealthy, pdb.Status.ExpectedPods, pdb.Status.DisruptionsAllowed = 1, 1, 1, 0
	if _, err := cs.PolicyV1().PodDisruptionBudgets("apps").UpdateStatus(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cond := func(typ, status, reason, message string) map[string]any {
		return map[string]any{"type": typ, "status": status, "reason": reason, "message": message, "lastTransitionTime": since.UTC().Format(time.RFC3339)}
	}
	for _, o := range []struct {
		gvr    schema.GroupVersionResource
		name   string
		status map[string]any
	}{
		{nodePoolsGVR, "zonal", map[string]any{"conditions": []any{cond("Ready", "True", "Ready", "")}}},
		{nodePoolsGVR, "batch", map[string]any{"conditions": []any{cond("Ready", "False", "NodeClassNotReady", "NodeClass not ready")}}},
		{nodeClassesGVR, "default", map[string]any{
			"conditions":     []any{cond("Ready", "True", "Ready", ""), cond("SubnetsReady", "True", "SubnetsReady", "")},
			"subnets":        []any{map[string]any{"id": "subnet-0b11", "zone": "eu-west-1b", "zoneID": "euw1-az2"}},
			"securityGroups": []any{map[string]any{"id": "sg-0c33", "name": "demo-node"}},
		}},
		{nodeClassesGVR, "batch", map[string]any{"conditions": []any{
			cond("Ready", "False", "SubnetsNotReady", "SubnetSelector did not match any Subnets"),
			cond("SubnetsReady", "False", "SubnetsNotFound", "SubnetSelector did not match any Subnets"),
		}}},
	} {
		u, err := dyn.Resource(o.gvr).Get(ctx, o.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		u.Object["status"] = o.status
		if _, err := dyn.Resource(o.gvr).UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("%s %s status: %v", o.gvr.Resource, o.name, err)
		}
	}
	const user = "eksdoctor-families"
	cfg, err := env.AddUser(user)
	if err != nil {
		t.Fatal(err)
	}
	rbac, err := testenv.ChartRBAC()
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Grant(ctx, user, rbac); err != nil {
		t.Fatal(err)
	}
	return kubeconfigFor(t, cfg), created.Add(10 * time.Minute)
}

var (
	nodePoolsGVR   = schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}
	nodeClassesGVR = schema.GroupVersionResource{Group: "karpenter.k8s.aws", Version: "v1", Resource: "ec2nodeclasses"}
)

// The three families in a running cluster, read as a user bound only to the
// chart's RBAC: `cluster` reports the volume in the wrong zone, the node
// class that found no subnet and the budget that lets no pod go; a snapshot
// of the same moment gives the same report; its HTML capacity map shows the
// volume's refusal; `explain` of the NodePool says what pins its nodes; and
// serve's metrics count each finding with no read error.
func TestThreeFamiliesLive(t *testing.T) {
	kc, now := familiesServer(t)
	run := func(args ...string) liveRun { return runLiveAt(t, now, "eksdoctor", nil, false, args...) }

	r := run("cluster", "--kubeconfig", kc, "-o", "json")
	if r.code != ExitFindings {
		t.Fatalf("cluster: %s", r)
	}
	rep := parseReport(t, r)
	got := findingKeys(rep, "volume-zone-conflict", "nodeclass-discovery-empty", "disruption-blocked", "pod-unschedulable")
	want := []string{
		"disruption-blocked warning PodDisruptionBudget/apps/web",
		"nodeclass-discovery-empty error EC2NodeClass/batch",
		"volume-zone-conflict error Pod/apps/db-0",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s\nall:\n%s", diff, strings.Join(findingKeys(rep), "\n"))
	}
	if keys := findingKeys(rep, "live-resource-skipped"); len(keys) > 0 {
		t.Errorf("the chart's RBAC does not let eksdoctor read what the checks need: %v", keys)
	}
	for _, c := range []struct{ check, object, want string }{
		{"volume-zone-conflict", "Pod/apps/db-0", `kube-scheduler: "0/1 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity.`},
		{"volume-zone-conflict", "Pod/apps/db-0", "incompatible volume requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [eu-west-1a] not in topology.kubernetes.io/zone In [eu-west-1b]"},
		{"volume-zone-conflict", "Pod/apps/db-0", "claim data-db-0 (PersistentVolume pvc-7f3c): topology.kubernetes.io/zone In [eu-west-1a]"},
		{"nodeclass-discovery-empty", "EC2NodeClass/batch", "SubnetSelector did not match any Subnets"},
		{"nodeclass-discovery-empty", "EC2NodeClass/batch", "batch"},
		{"disruption-blocked", "PodDisruptionBudget/apps/web", "zonal"},
	} {
		if text := findingText(rep, c.check, c.object); !strings.Contains(text, c.want) {
			t.Errorf("%s %s does not say %q:\n%s", c.check, c.object, c.want, text)
		}
	}

	snap := filepath.Join(t.TempDir(), "families.json")
	if s := run("snapshot", "-o", snap, "--kubeconfig", kc); s.code != ExitOK {
		t.Fatalf("snapshot: %s", s)
	}
	if off := run("check", snap, "-o", "json"); off.code != r.code || off.stdout != r.stdout {
		t.Errorf("cluster (-) and check on its snapshot (+) differ, exit %d and %d:\n%s", r.code, off.code, cmp.Diff(r.stdout, off.stdout))
	}
	page := run("report", snap)
	doc, err := html.Parse(strings.NewReader(page.stdout))
	if err != nil {
		t.Fatal(err)
	}
	rows, col := capacityMapCells(t, doc)
	db := rows["StatefulSet/apps/db steady"]
	if zonal := col("nodepool zonal"); len(db) <= zonal || !strings.Contains(db[zonal], "incompatible volume requirements") {
		t.Errorf("capacity map row of db-0: %q; want nodepool zonal to refuse it for its volume (rows: %v)", db, keysOf(rows))
	}

	ex := run("explain", "nodepool/zonal", "--live", "--kubeconfig", kc)
	if ex.code != ExitOK || !strings.Contains(ex.stdout, "PodDisruptionBudget") || !strings.Contains(ex.stdout, "apps/web") {
		t.Errorf("explain nodepool/zonal does not say what pins its nodes:\n%s", ex)
	}

	_, get, stop := startServe(t, kc, time.Minute, now, nil)
	defer stop()
	_, metrics := get("/metrics")
	for _, w := range []string{
		`eksdoctor_findings{check="volume-zone-conflict",namespace="apps",severity="error"} 1`,
		`eksdoctor_findings{check="nodeclass-discovery-empty",namespace="",severity="error"} 1`,
		`eksdoctor_findings{check="disruption-blocked",namespace="apps",severity="warning"} 1`,
	} {
		if !strings.Contains(metrics, w) {
			t.Errorf("metrics lack %q:\n%s", w, metrics)
		}
	}
	if strings.Contains(metrics, "eksdoctor_read_errors{") {
		t.Errorf("serve cannot read everything with the chart's RBAC:\n%s", metrics)
	}
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
