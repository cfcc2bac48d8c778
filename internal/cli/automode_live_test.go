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
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/eksdoctor/eksdoctor/internal/testenv"
)

//go:embed testdata/automode-cluster.yaml
var autoModeClusterYAML []byte

// autoModeServer starts a kube-apiserver of its own holding the state of
// testdata/automode-cluster.yaml, with the statuses EKS's controllers give
// it, and returns a kubeconfig of a user bound only to the Helm chart's RBAC
// and the clock of the reads (ten minutes after the objects were created).
func autoModeServer(t *testing.T) (kubeconfig string, now time.Time) {
	t.Helper()
	env, err := testenv.Start(testenv.Options{CRDs: testenv.KarpenterV1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: []string{filepath.Join("testdata", "automode-nodeclass-crd.yaml")}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	created := time.Now().UTC().Truncate(time.Second)
	since := metav1.NewTime(created.Add(-time.Hour))
	if _, err := env.Apply(ctx, autoModeClusterYAML); err != nil {
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

	if err := readyNode(ctx, cs, "i-0123456789abcdef0", "4Gi", "3Gi", since); err != nil {
		t.Fatal(err)
	}

	p, err := cs.CoreV1().Pods("apps").Get(ctx, "m5-only-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Status.Phase = corev1.PodPending
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/1 nodes are available: 1 node(s) had untolerated taint(s).", LastTransitionTime: metav1.NewTime(created)}}
	if _, err := cs.CoreV1().Pods("apps").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev, err := cs.CoreV1().Events("apps").Get(ctx, "m5-only-1.1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev.FirstTimestamp, ev.LastTimestamp, ev.Count = metav1.NewTime(created), metav1.NewTime(created), 1
	if _, err := cs.CoreV1().Events("apps").Update(ctx, ev, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	ready := []any{map[string]any{"type": "Ready", "status": "True", "reason": "Ready", "message": "", "lastTransitionTime": since.UTC().Format(time.RFC3339)}}
	for _, o := range []struct {
		gvr  schema.GroupVersionResource
		name string
	}{
		{schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}, "general-purpose"},
		{schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"}, "system"},
		{schema.GroupVersionResource{Group: "eks.amazonaws.com", Version: "v1", Resource: "nodeclasses"}, "default"},
	} {
		u, err := dyn.Resource(o.gvr).Get(ctx, o.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		u.Object["status"] = map[string]any{"conditions": ready}
		if _, err := dyn.Resource(o.gvr).UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("%s %s status: %v", o.gvr.Resource, o.name, err)
		}
	}

	const user = "eksdoctor-automode"
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

// A running EKS Auto Mode cluster is read through the API like any other, as
// a user bound only to the chart's RBAC (the eks.amazonaws.com NodeClasses
// included): `cluster` judges the built-in NodePools as EKS runs them (the
// pod selecting a label of Karpenter's AWS provider, the in-tree gp2 class no
// Auto Mode node serves), `explain` shows both built-in pools, a snapshot of
// the same moment gives the same report, its HTML report maps the two pools,
// `teardown --live` says what EKS removes with the cluster, and serve's
// metrics count the Auto Mode findings with no read error.
func TestAutoModeLive(t *testing.T) {
	kc, now := autoModeServer(t)
	run := func(args ...string) liveRun { return runLiveAt(t, now, "eksdoctor", nil, false, args...) }

	r := run("cluster", "--kubeconfig", kc, "-o", "json")
	if r.code != ExitFindings {
		t.Fatalf("cluster: %s", r)
	}
	rep := parseReport(t, r)
	var serious []string
	for _, f := range rep.Findings {
		if f.Severity != "info" {
			serious = append(serious, f.Check+" "+f.Severity+" "+f.Object.Kind+"/"+strings.TrimPrefix(f.Object.Namespace+"/", "/")+f.Object.Name)
		}
	}
	want := []string{
		"pod-unschedulable error Pod/apps/m5-only-1",
		"storage-provisioner-missing error StorageClass/gp2",
	}
	if diff := cmp.Diff(want, serious); diff != "" {
		t.Errorf("errors and warnings (-want +got):\n%s\nall:\n%s", diff, strings.Join(findingKeys(rep), "\n"))
	}
	if keys := findingKeys(rep, "live-resource-skipped"); len(keys) > 0 {
		t.Errorf("the chart's RBAC does not let eksdoctor read an Auto Mode cluster: %v", keys)
	}
	for _, c := range []struct{ check, object, want string }{
		{"pod-unschedulable", "Pod/apps/m5-only-1", `label "karpenter.k8s.aws/instance-family" does not have known values (typo of "eks.amazonaws.com/instance-family"?)`},
		{"pod-unschedulable", "Pod/apps/m5-only-1", `nodepool "system"`},
		{"pod-unschedulable", "Pod/apps/m5-only-1", `kube-scheduler: "0/1 nodes are available: 1 node(s) had untolerated taint(s).`},
		{"storage-provisioner-missing", "StorageClass/gp2", "its only compute is EKS Auto Mode (the running cluster), whose block storage answers to ebs.csi.eks.amazonaws.com"},
	} {
		if text := findingText(rep, c.check, c.object); !strings.Contains(text, c.want) {
			t.Errorf("%s %s does not say %q:\n%s", c.check, c.object, c.want, text)
		}
	}
	for _, f := range rep.Findings {
		if strings.Contains(f.Summary+f.Detail, "cannot be seen") {
			t.Errorf("Auto Mode capacity reported unseen: %s %s: %s", f.Check, f.Object.Name, f.Summary)
		}
	}

	ex := run("explain", "pod/apps/m5-only-1", "--live", "--kubeconfig", kc)
	if ex.code != ExitOK {
		t.Fatalf("explain: %s", ex)
	}
	for _, w := range []string{`nodepool "general-purpose"`, `nodepool "system"`, "eks.amazonaws.com/instance-family", "in the cluster as it is: refuses"} {
		if !strings.Contains(ex.stdout, w) {
			t.Errorf("explain lacks %q:\n%s", w, ex.stdout)
		}
	}

	snap := filepath.Join(t.TempDir(), "automode.json")
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
	web := rows["Deployment/apps/web steady"]
	if gp, sys := col("nodepool general-purpose"), col("nodepool system"); len(web) <= max(gp, sys) ||
		web[gp] != "✓ fits" || !strings.HasPrefix(web[sys], "✗ refuses") || !strings.Contains(web[sys], "CriticalAddonsOnly") {
		t.Errorf("capacity map row of Deployment/apps/web: %q; want it to fit general-purpose and refuse system for its taint", web)
	}
	note := find(doc, func(n *html.Node) bool {
		return n.Data == "p" && attr(n, "class") == "teardown-note" && strings.Contains(text(n), "EKS Auto Mode's nodes (NodePools general-purpose, system) are terminated by EKS")
	})
	if note == nil {
		t.Errorf("the HTML teardown section does not say what EKS removes with an Auto Mode cluster")
	}

	td := run("teardown", "--live", "--kubeconfig", kc)
	for _, w := range []string{"EKS Auto Mode's nodes (NodePools general-purpose, system) are terminated by EKS when the cluster is deleted", "the EBS volumes Auto Mode provisioned are not"} {
		if !strings.Contains(td.stdout, w) {
			t.Errorf("teardown --live lacks %q:\n%s", w, td.stdout)
		}
	}

	_, get, stop := startServe(t, kc, time.Minute, now, nil)
	defer stop()
	_, metrics := get("/metrics")
	for _, w := range []string{
		`eksdoctor_findings{check="pod-unschedulable",namespace="apps",severity="error"} 1`,
		`eksdoctor_findings{check="storage-provisioner-missing",namespace="",severity="error"} 1`,
		`eksdoctor_pending_pods{reason="Unschedulable"} 1`,
	} {
		if !strings.Contains(metrics, w) {
			t.Errorf("metrics lack %q:\n%s", w, metrics)
		}
	}
	if strings.Contains(metrics, "eksdoctor_read_errors{") {
		t.Errorf("serve cannot read everything of an Auto Mode cluster with the chart's RBAC:\n%s", metrics)
	}
	if code, body := get("/report"); code != 200 || !strings.Contains(body, "nodepool general-purpose") {
		t.Errorf("/report: %d, no Auto Mode pool in its map", code)
	}
}
