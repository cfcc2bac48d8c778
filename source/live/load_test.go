package live

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/testenv"
)

func find(m *cluster.Model, kind, namespace, name string) *cluster.Object {
	for _, o := range m.Objects {
		if o.Kind == kind && o.Namespace == namespace && o.Name == name {
			return o
		}
	}
	return nil
}

func refs(m *cluster.Model) []string {
	var out []string
	for _, o := range m.Objects {
		out = append(out, o.APIVersion+" "+o.Ref().String())
	}
	return out
}

func kinds(m *cluster.Model) map[string]int {
	out := map[string]int{}
	for _, o := range m.Objects {
		out[o.Kind]++
	}
	return out
}

// checkFixture asserts that a model holds the state of testdata/cluster.yaml as the
// checks need it.
func checkFixture(t *testing.T, m *cluster.Model) {
	t.Helper()
	mustFind := func(kind, namespace, name string) *cluster.Object {
		t.Helper()
		o := find(m, kind, namespace, name)
		if o == nil {
			t.Fatalf("%s %s/%s not loaded; loaded %v", kind, namespace, name, refs(m))
		}
		return o
	}

	mng := mustFind("Node", "", "ip-10-0-1-10.ec2.internal")
	if got := mng.Get("spec.taints.0.key"); got != "CriticalAddonsOnly" {
		t.Errorf("node group node taint = %v, want CriticalAddonsOnly", got)
	}
	if got := mng.String("status.allocatable.cpu"); got != "1930m" {
		t.Errorf("node allocatable cpu = %q, want 1930m (status must be kept)", got)
	}
	kn := mustFind("Node", "", "ip-10-0-2-20.ec2.internal")
	if kn.Labels["karpenter.sh/nodepool"] != "general-purpose" {
		t.Errorf("Karpenter node labels = %v", kn.Labels)
	}
	if kn.Get("metadata.deletionTimestamp") == nil || kn.Get("metadata.finalizers.0") != "karpenter.sh/termination" {
		t.Errorf("Karpenter node should be deleting with its finalizer: %v", kn.Get("metadata"))
	}
	fg := mustFind("Node", "", "fargate-ip-10-0-3-30.ec2.internal")
	if fg.Labels["eks.amazonaws.com/compute-type"] != "fargate" {
		t.Errorf("Fargate node labels = %v", fg.Labels)
	}

	// Pods are decoded into their types as they are read (the model's pods),
	// the rest of each kept as it came; the whole pod is given again from both.
	pod := mustFind("Pod", "apps", "web-5d8f7c9b6-abcde")
	var typed *cluster.Pod
	for _, p := range m.Pods {
		if p.Object == pod {
			typed = p
		}
	}
	switch {
	case typed == nil:
		t.Errorf("pod %s is not among the model's pods", pod.Ref())
	case typed.Status.Phase != corev1.PodPending || len(typed.Status.Conditions) == 0 || typed.Status.Conditions[0].Reason != "Unschedulable":
		t.Errorf("pending pod status = %+v", typed.Status)
	case typed.Spec.NodeSelector["workload"] != "web":
		t.Errorf("pending pod spec = %+v", typed.Spec)
	}
	if whole := whole(pod); cluster.Lookup(whole, "status.phase") != "Pending" || cluster.Lookup(whole, "spec.nodeSelector.workload") != "web" || cluster.Lookup(whole, "metadata.name") != pod.Name {
		t.Errorf("the whole pod given again = %v", whole)
	}
	mustFind("Pod", "apps", "db-0")

	ev := mustFind("Event", "apps", "web-5d8f7c9b6-abcde.182a1b2c3d4e5f60")
	if ev.String("reason") != "FailedScheduling" || ev.String("involvedObject.name") != "web-5d8f7c9b6-abcde" || ev.String("involvedObject.kind") != "Pod" {
		t.Errorf("FailedScheduling event = %v", ev.Content)
	}
	if !strings.Contains(ev.String("message"), "untolerated taint {CriticalAddonsOnly: true}") {
		t.Errorf("FailedScheduling message = %q", ev.String("message"))
	}
	nce := mustFind("Event", "default", "general-purpose-x7k2p.182a1b2c3d4e5f62")
	if nce.String("involvedObject.kind") != "NodeClaim" {
		t.Errorf("NodeClaim event = %v", nce.Content)
	}
	if o := find(m, "Event", "apps", "db-0.182a1b2c3d4e5f61"); o != nil {
		t.Errorf("read an event that is neither FailedScheduling nor about a NodeClaim: %v", o.Content)
	}

	for _, k := range []struct{ kind, namespace, name string }{
		{"Deployment", "apps", "web"},
		{"ReplicaSet", "apps", "web-5d8f7c9b6"},
		{"StatefulSet", "apps", "db"},
		{"DaemonSet", "kube-system", "ebs-csi-node"},
		{"Job", "apps", "migrate"},
		{"CronJob", "apps", "report"},
		{"PriorityClass", "", "platform-critical"},
		{"CSIDriver", "", "ebs.csi.aws.com"},
	} {
		mustFind(k.kind, k.namespace, k.name)
	}

	np := mustFind("NodePool", "", "general-purpose")
	if np.APIVersion != "karpenter.sh/v1" || np.String("spec.template.spec.nodeClassRef.name") != "default" {
		t.Errorf("NodePool = %s %v", np.APIVersion, np.Get("spec"))
	}
	nclass := mustFind("EC2NodeClass", "", "default")
	if nclass.APIVersion != "karpenter.k8s.aws/v1" || nclass.String("spec.role") != "KarpenterNodeRole-demo" {
		t.Errorf("EC2NodeClass = %s %v", nclass.APIVersion, nclass.Get("spec"))
	}
	nc := mustFind("NodeClaim", "", "general-purpose-x7k2p")
	if nc.Get("metadata.deletionTimestamp") == nil || nc.Get("metadata.finalizers.0") != "karpenter.sh/termination" {
		t.Errorf("NodeClaim should be deleting with its finalizer: %v", nc.Get("metadata"))
	}
	if nc.String("status.conditions.1.type") != "Registered" || nc.String("status.conditions.1.status") != "Unknown" {
		t.Errorf("NodeClaim conditions = %v", nc.Get("status.conditions"))
	}

	for _, o := range m.Objects {
		if o.Kind == "Secret" {
			t.Errorf("read a Secret: %s", o.Ref())
		}
		if o.Kind == "ConfigMap" && (o.Namespace != "kube-system" || o.Name != "aws-auth") {
			t.Errorf("read a ConfigMap other than aws-auth: %s", o.Ref())
		}
		if o.Get("metadata.managedFields") != nil {
			t.Errorf("%s keeps metadata.managedFields", o.Ref())
		}
		if o.Via != "live" || o.Manager != "cluster" || o.Origin != (cluster.Origin{File: "cluster:" + m.Live.Context}) {
			t.Errorf("%s: Via %q, Manager %q, Origin %+v", o.Ref(), o.Via, o.Manager, o.Origin)
		}
		if o.APIVersion == "" || o.Kind == "" {
			t.Errorf("object without apiVersion or kind: %v", o.Content)
		}
	}

	if m.Live == nil {
		t.Fatal("Live is nil")
	}
	if m.Live.Now != "2026-01-02T03:04:05Z" {
		t.Errorf("Live.Now = %q, want the injected clock", m.Live.Now)
	}
	wantVA := []cluster.VolumeAttachment{{
		Name: "csi-3f4e5d6c7b8a", Attacher: "ebs.csi.aws.com", NodeName: "ip-10-0-2-20.ec2.internal", PV: "pvc-0b1c2d3e", Attached: true,
	}}
	var gotVA []cluster.VolumeAttachment
	for _, va := range m.Live.VolumeAttachments {
		if va.Object == nil || va.Object.Name != va.Name {
			t.Errorf("VolumeAttachment %s has no object", va.Name)
		}
		va.Object = nil
		gotVA = append(gotVA, va)
	}
	if diff := cmp.Diff(wantVA, gotVA); diff != "" {
		t.Errorf("VolumeAttachments (-want +got):\n%s", diff)
	}
	if len(m.Live.PVs) != 1 || m.Live.PVs[0].Name != "pvc-0b1c2d3e" {
		t.Errorf("PVs = %v", m.Live.PVs)
	}
	if len(m.Live.PVCs) != 1 || m.Live.PVCs[0].Name != "data-db-0" {
		t.Errorf("PVCs = %v", m.Live.PVCs)
	}
	if diff := cmp.Diff([]string{"ebs.csi.aws.com"}, m.Live.CSIDrivers); diff != "" {
		t.Errorf("CSIDrivers (-want +got):\n%s", diff)
	}

	if m.Identity.AwsAuth == nil {
		t.Fatal("Identity.AwsAuth is nil")
	}
	var roles []string
	for _, r := range m.Identity.AwsAuth.Roles {
		roles = append(roles, fmt.Sprintf("%s %s %v", r.RoleARN, r.Username, r.Groups))
	}
	wantRoles := []string{
		"arn:aws:iam::111122223333:role/system-node-group system:node:{{EC2PrivateDNSName}} [system:bootstrappers system:nodes]",
		"arn:aws:iam::111122223333:role/KarpenterNodeRole-demo system:node:{{EC2PrivateDNSName}} [system:bootstrappers system:nodes]",
	}
	if diff := cmp.Diff(wantRoles, roles); diff != "" {
		t.Errorf("aws-auth roles (-want +got):\n%s", diff)
	}
	if !m.Identity.AwsAuth.Complete {
		t.Error("aws-auth should be complete")
	}
	if len(m.Problems) != 0 {
		t.Errorf("problems: %v", m.Problems)
	}
	// Typed entries other than pods are derived from the objects by another
	// stage; pods are the model's as they are read, one for each Pod object.
	if len(m.Workloads)+len(m.Nodes)+len(m.NodeClaims) != 0 {
		t.Error("the live source must leave typed workloads, nodes and NodeClaims to the interpreter")
	}
	if want := kinds(m)["Pod"]; len(m.Pods) != want {
		t.Errorf("%d typed pods for %d Pod objects", len(m.Pods), want)
	}
}

func TestLoadReadsTheCluster(t *testing.T) {
	fixture(t)
	rec := newRecorder(t)
	var progress bytes.Buffer
	m, err := Load(testContext(t), Options{
		Kubeconfig:    kubeconfig(t, env.Config, "admin@test"),
		Clock:         clock,
		WrapTransport: rec.wrap,
		Progress:      &progress,
	})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	checkFixture(t, m)
	rec.checkReadOnly(t)
	if m.Live.Context != "admin@test" || m.Live.Server != env.Config.Host {
		t.Errorf("Live context %q server %q, want admin@test %s", m.Live.Context, m.Live.Server, env.Config.Host)
	}
	if len(m.Live.Skipped) != 0 {
		t.Errorf("admin load skipped %v", m.Live.Skipped)
	}
	if got := rec.matching("/events?", "fieldSelector=reason%3DFailedScheduling"); len(got) == 0 {
		t.Errorf("events were not listed with the FailedScheduling field selector: %v", rec.matching("events"))
	}
	for _, l := range rec.matching("/events") {
		if !strings.Contains(l, "fieldSelector=") {
			t.Errorf("events listed without a field selector: %s", l)
		}
	}
	if !strings.Contains(progress.String(), "reading cluster:") || !strings.HasSuffix(progress.String(), "objects\n") {
		t.Errorf("progress output = %q", progress.String())
	}
}

// The live source reads nothing beyond what deploy/rbac.yaml grants: a user bound
// to exactly those roles loads the same objects as an admin, with nothing skipped.
func TestLoadWithOnlyTheDeployedRole(t *testing.T) {
	fixture(t)
	ctx := testContext(t)
	manifest := readRBAC(t)
	cfg, err := env.AddUser("eksdoctor-reader")
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Grant(ctx, "eksdoctor-reader", manifest); err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Secrets("").List(ctx, metav1.ListOptions{Limit: 1}); !apierrors.IsForbidden(err) {
		t.Errorf("the deployed role lets its user list Secrets: %v", err)
	}
	if _, err := cs.CoreV1().ConfigMaps("kube-system").Get(ctx, "coredns", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the deployed role lets its user read ConfigMaps other than aws-auth: %v", err)
	}

	rec := newRecorder(t)
	m, err := Load(ctx, Options{Kubeconfig: kubeconfig(t, cfg, "reader@test"), Clock: clock, WrapTransport: rec.wrap})
	if err != nil {
		t.Fatalf("Load as a user bound to deploy/rbac.yaml: %v", err)
	}
	if len(m.Live.Skipped) != 0 {
		t.Errorf("deploy/rbac.yaml does not grant everything the live source reads; skipped %v", m.Live.Skipped)
	}
	checkFixture(t, m)
	rec.checkReadOnly(t)

	admin, err := Load(ctx, Options{Kubeconfig: kubeconfig(t, env.Config, "admin@test"), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(refs(admin), refs(m)); diff != "" {
		t.Errorf("objects loaded by admin (-) and by the deployed role (+):\n%s", diff)
	}
}

// The ServiceAccount and bindings of deploy/rbac.yaml, applied as they are, let
// eksdoctor run in the cluster with the ServiceAccount's token.
func TestDeployManifestAppliesAndServesItsServiceAccount(t *testing.T) {
	fixture(t)
	ctx := testContext(t)
	if _, err := env.Apply(ctx, readRBAC(t)); err != nil {
		t.Fatalf("apply deploy/rbac.yaml: %v", err)
	}
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := cs.CoreV1().ServiceAccounts("eksdoctor").CreateToken(ctx, "eksdoctor", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(600))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for the eksdoctor ServiceAccount: %v", err)
	}
	cfg := &rest.Config{Host: env.Config.Host, BearerToken: tok.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: env.Config.CAData}}
	rec := newRecorder(t)
	m, err := Load(ctx, Options{Kubeconfig: kubeconfig(t, cfg, "eksdoctor-sa"), Clock: clock, WrapTransport: rec.wrap})
	if err != nil {
		t.Fatalf("Load as the eksdoctor ServiceAccount: %v", err)
	}
	if len(m.Live.Skipped) != 0 {
		t.Errorf("skipped %v", m.Live.Skipped)
	}
	checkFixture(t, m)
	rec.checkReadOnly(t)
}

func ptr[T any](v T) *T { return &v }

func readRBAC(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A resource the user may not list is reported as skipped, and everything else is
// still read.
func TestLoadSkipsForbiddenResources(t *testing.T) {
	fixture(t)
	ctx := testContext(t)
	cfg, err := env.AddUser("no-volumeattachments")
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Grant(ctx, "no-volumeattachments", readRBAC(t),
		schema.GroupResource{Group: "storage.k8s.io", Resource: "volumeattachments"},
		schema.GroupResource{Group: "karpenter.sh", Resource: "nodeclaims"},
		schema.GroupResource{Group: "", Resource: "configmaps"},
	); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(t)
	m, err := Load(ctx, Options{Kubeconfig: kubeconfig(t, cfg, "limited"), Clock: clock, WrapTransport: rec.wrap})
	if err != nil {
		t.Fatalf("Load with some resources forbidden: %v", err)
	}
	var got []string
	for _, s := range m.Live.Skipped {
		got = append(got, s.Resource)
		if !strings.HasPrefix(s.Reason, "forbidden: ") || !strings.Contains(s.Reason, "no-volumeattachments") {
			t.Errorf("skip reason for %s = %q, want the API server's Forbidden message", s.Resource, s.Reason)
		}
	}
	want := []string{"configmaps kube-system/aws-auth", "nodeclaims.karpenter.sh", "volumeattachments.storage.k8s.io"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if len(m.Live.VolumeAttachments) != 0 || m.Identity.AwsAuth != nil {
		t.Errorf("forbidden resources were loaded: %v %v", m.Live.VolumeAttachments, m.Identity.AwsAuth)
	}
	k := kinds(m)
	if k["Node"] < 3 || k["Pod"] < 2 || k["NodePool"] != 1 || k["EC2NodeClass"] != 1 || k["NodeClaim"] != 0 {
		t.Errorf("the rest of the cluster was not read: %v", k)
	}
	// A forbidden Karpenter v1 list must not be retried at v1beta1: RBAC does not
	// depend on the version.
	if l := rec.matching("/apis/karpenter.sh/v1beta1"); len(l) != 0 {
		t.Errorf("retried a forbidden resource at another version: %v", l)
	}
}

// Lists are paginated with limit and continue.
func TestLoadPaginates(t *testing.T) {
	fixture(t)
	ctx := testContext(t)
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "paging"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const pods, pageSize = 25, 10
	for i := range pods {
		if _, err := cs.CoreV1().Pods("paging").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("batch-%02d", i)},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1.37"}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	rec := newRecorder(t)
	m, err := Load(ctx, Options{Kubeconfig: kubeconfig(t, env.Config, "admin@test"), Namespace: "paging", PageSize: pageSize, Clock: clock, WrapTransport: rec.wrap})
	if err != nil {
		t.Fatal(err)
	}
	if got := kinds(m)["Pod"]; got != pods {
		t.Errorf("loaded %d pods, want %d", got, pods)
	}
	podLists := rec.matching("GET /api/v1/namespaces/paging/pods?")
	continued := rec.matching("GET /api/v1/namespaces/paging/pods?", "continue=")
	if len(podLists) != 3 || len(continued) != 2 {
		t.Errorf("pod list requests = %v, want 3 pages of %d, two of them continued", podLists, pageSize)
	}
	for _, l := range podLists {
		if !strings.Contains(l, fmt.Sprintf("limit=%d", pageSize)) {
			t.Errorf("list without limit=%d: %s", pageSize, l)
		}
	}
	// Namespace narrows namespaced lists only.
	for _, k := range []string{"Deployment", "Event"} {
		if kinds(m)[k] != 0 {
			t.Errorf("Namespace=paging still read %d %s objects from other namespaces", kinds(m)[k], k)
		}
	}
	if kinds(m)["Node"] < 3 || m.Identity.AwsAuth == nil {
		t.Errorf("cluster-scoped objects and aws-auth must be read whatever the namespace: %v", kinds(m))
	}
	// The restriction is part of what was read: checks must not take objects
	// outside the namespace for absent.
	if m.Live.Namespace != "paging" {
		t.Errorf("Live.Namespace = %q, want paging", m.Live.Namespace)
	}
	rec.checkReadOnly(t)
}

// Transient failures (503, 429 without Retry-After) are retried with backoff.
func TestLoadRetriesTransientFailures(t *testing.T) {
	fixture(t)
	rec := newRecorder(t)
	failures := map[string]int{"/api/v1/pods": 2, "/api/v1/nodes": 1, "/apis/karpenter.sh/v1/nodepools": 3}
	codes := map[string]int{"/api/v1/pods": http.StatusServiceUnavailable, "/api/v1/nodes": http.StatusTooManyRequests, "/apis/karpenter.sh/v1/nodepools": http.StatusBadGateway}
	rec.fail = func(req *http.Request) (*http.Response, error) {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if failures[req.URL.Path] > 0 {
			failures[req.URL.Path]--
			return statusResponse(req, codes[req.URL.Path]), nil
		}
		return nil, nil
	}
	m, err := Load(testContext(t), Options{Kubeconfig: kubeconfig(t, env.Config, "admin@test"), Clock: clock, WrapTransport: rec.wrap})
	if err != nil {
		t.Fatalf("Load through transient failures: %v", err)
	}
	if len(m.Live.Skipped) != 0 {
		t.Errorf("skipped %v", m.Live.Skipped)
	}
	checkFixture(t, m)
	for path, want := range map[string]int{"/api/v1/pods": 3, "/api/v1/nodes": 2, "/apis/karpenter.sh/v1/nodepools": 4} {
		if got := len(rec.matching("GET " + path + "?")); got != want {
			t.Errorf("%s requested %d times, want %d (failures, then success)", path, got, want)
		}
	}
}

// A server that asks to wait longer than the request timeout is not waited for: the
// list is skipped at once with what the server asked, and the rest is read.
func TestLoadGivesUpOnLongRetryAfter(t *testing.T) {
	fixture(t)
	rec := newRecorder(t)
	rec.fail = func(req *http.Request) (*http.Response, error) {
		if req.URL.Path != "/api/v1/nodes" {
			return nil, nil
		}
		resp := statusResponse(req, http.StatusTooManyRequests)
		resp.Header.Set("Retry-After", "94")
		return resp, nil
	}
	const timeout = 5 * time.Second
	began := time.Now()
	m, err := Load(testContext(t), Options{Kubeconfig: kubeconfig(t, env.Config, "admin@test"), Clock: clock, WrapTransport: rec.wrap, Timeout: timeout})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if took := time.Since(began); took > 30*time.Second {
		t.Errorf("Load took %s: it waited for the server's Retry-After", took)
	}
	if got := len(rec.matching("GET /api/v1/nodes?")); got != 1 {
		t.Errorf("nodes requested %d times, want 1", got)
	}
	var reason string
	for _, s := range m.Live.Skipped {
		if strings.HasPrefix(s.Resource, "nodes") {
			reason = s.Reason
		}
	}
	for _, want := range []string{"429 Too Many Requests", "asked to wait 1m34s", "request timeout of 5s", "--request-timeout"} {
		if !strings.Contains(reason, want) {
			t.Errorf("skip reason %q does not say %q", reason, want)
		}
	}
	if find(m, "Deployment", "apps", "web") == nil {
		t.Error("the other resources were not read")
	}
}

// Each request has its own deadline: a request that hangs is abandoned when its
// deadline passes and tried again.
func TestLoadAbandonsHungRequests(t *testing.T) {
	fixture(t)
	rec := newRecorder(t)
	hung := 0
	rec.fail = func(req *http.Request) (*http.Response, error) {
		rec.mu.Lock()
		first := req.URL.Path == "/apis/apps/v1/deployments" && hung == 0
		if first {
			hung++
		}
		rec.mu.Unlock()
		if !first {
			return nil, nil
		}
		<-req.Context().Done() // the server never answers
		return nil, req.Context().Err()
	}
	const timeout = 2 * time.Second
	began := time.Now()
	m, err := Load(testContext(t), Options{Kubeconfig: kubeconfig(t, env.Config, "admin@test"), Clock: clock, WrapTransport: rec.wrap, Timeout: timeout})
	if err != nil {
		t.Fatalf("Load with a hung request: %v", err)
	}
	if took := time.Since(began); took < timeout {
		t.Errorf("Load took %s, less than the deadline of the request that hung", took)
	}
	if got := len(rec.matching("GET /apis/apps/v1/deployments?")); got != 2 {
		t.Errorf("deployments requested %d times, want 2 (hung, then answered)", got)
	}
	if find(m, "Deployment", "apps", "web") == nil || len(m.Live.Skipped) != 0 {
		t.Errorf("deployments not read after the retry; skipped %v", m.Live.Skipped)
	}
}

// Requests go no faster than the client-side rate limit, whatever client makes them.
func TestLoadRespectsTheRateLimit(t *testing.T) {
	fixture(t)
	rec := newRecorder(t)
	const qps, burst = 20, 1
	began := time.Now()
	if _, err := Load(testContext(t), Options{Kubeconfig: kubeconfig(t, env.Config, "admin@test"), Clock: clock, WrapTransport: rec.wrap, QPS: qps, Burst: burst, PageSize: 5}); err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	n := len(rec.matching("GET "))
	// A token bucket lets burst requests through at once, then one per 1/qps.
	if least := time.Duration(n-burst) * time.Second / qps; took < least*9/10 {
		t.Errorf("%d requests took %s; at %d per second they need at least %s", n, took, qps, least)
	}
}

// A resource the server keeps failing on is skipped with the reason once the
// retries are used up; the rest is read.
func TestLoadSkipsAResourceThatKeepsFailing(t *testing.T) {
	fixture(t)
	rec := newRecorder(t)
	rec.fail = func(req *http.Request) (*http.Response, error) {
		if req.URL.Path == "/apis/batch/v1/cronjobs" {
			return statusResponse(req, http.StatusServiceUnavailable), nil
		}
		return nil, nil
	}
	m, err := Load(testContext(t), Options{Kubeconfig: kubeconfig(t, env.Config, "admin@test"), Clock: clock, WrapTransport: rec.wrap})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := []cluster.Skipped{{Resource: "cronjobs.batch", Reason: "HTTP 503 Service Unavailable: the server is currently unable to handle the request"}}
	if diff := cmp.Diff(want, m.Live.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if got := len(rec.matching("GET /apis/batch/v1/cronjobs?")); got != attempts {
		t.Errorf("cronjobs requested %d times, want %d", got, attempts)
	}
	if kinds(m)["Job"] == 0 {
		t.Error("the other resources were not read")
	}
}

// A page of a list that does not decode (an item without a name) skips that
// list, saying why; the others are still read.
func TestLoadSkipsAListWhosePageDoesNotDecode(t *testing.T) {
	fixture(t)
	rec := newRecorder(t)
	rec.fail = func(req *http.Request) (*http.Response, error) {
		if req.URL.Path != "/apis/batch/v1/cronjobs" {
			return nil, nil
		}
		resp := statusResponse(req, http.StatusOK)
		resp.Header.Set("Content-Type", "application/json")
		resp.Body = io.NopCloser(strings.NewReader(`{"apiVersion":"batch/v1","kind":"CronJobList","metadata":{},"items":[{"metadata":{"namespace":"apps"}}]}`))
		return resp, nil
	}
	m, err := Load(testContext(t), Options{Kubeconfig: kubeconfig(t, env.Config, "admin@test"), Clock: clock, WrapTransport: rec.wrap})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := []cluster.Skipped{{Resource: "cronjobs.batch", Reason: "a page of the list does not decode: item 0: no metadata.name"}}
	if diff := cmp.Diff(want, m.Live.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if kinds(m)["Job"] == 0 || kinds(m)["Pod"] == 0 {
		t.Error("the other resources were not read")
	}
}

// An API server that cannot be reached fails the load (after retrying) instead of
// producing an empty model.
func TestLoadFailsWhenTheServerIsUnreachable(t *testing.T) {
	cfg := rest.CopyConfig(env.Config)
	cfg.Host = "https://127.0.0.1:1"
	_, err := Load(testContext(t), Options{Kubeconfig: kubeconfig(t, cfg, "gone"), Clock: clock})
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("Load from an unreachable server: err = %v, want an error naming the server", err)
	}
}

// The kubeconfig is found and the context chosen the way kubectl does it.
func TestLoadFollowsKubeconfigRules(t *testing.T) {
	fixture(t)
	ctx := testContext(t)
	admin, err := testenv.Kubeconfig(env.Config, "admin@test")
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load(admin)
	if err != nil {
		t.Fatal(err)
	}
	// A second context, current, pointing at a server that does not exist.
	kc.Clusters["elsewhere"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:1", CertificateAuthorityData: env.Config.CAData}
	kc.Contexts["elsewhere"] = &clientcmdapi.Context{Cluster: "elsewhere", AuthInfo: "admin@test"}
	kc.CurrentContext = "elsewhere"
	path := filepath.Join(t.TempDir(), "config")
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}

	t.Setenv("KUBECONFIG", path)
	m, err := Load(ctx, Options{Context: "admin@test", Clock: clock})
	if err != nil {
		t.Fatalf("Load with KUBECONFIG and --context: %v", err)
	}
	if m.Live.Context != "admin@test" || find(m, "Node", "", "ip-10-0-1-10.ec2.internal") == nil {
		t.Errorf("context %q, objects %v", m.Live.Context, kinds(m))
	}
	if _, err := Load(ctx, Options{Clock: clock}); err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("Load with the current context pointing nowhere: err = %v", err)
	}
	if _, err := Load(ctx, Options{Context: "missing", Clock: clock}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("Load with an unknown context: err = %v", err)
	}
}

// The state read is deterministic: two loads of the same cluster give the same
// model, objects sorted.
func TestLoadIsDeterministic(t *testing.T) {
	fixture(t)
	ctx := testContext(t)
	opts := Options{Kubeconfig: kubeconfig(t, env.Config, "admin@test"), Clock: clock, PageSize: 3}
	a, err := Load(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b, modelOptions); diff != "" {
		t.Errorf("two loads differ (-first +second):\n%s", diff)
	}
	if !sort.SliceIsSorted(a.Objects, func(i, j int) bool { return a.Objects[i].Ref().Less(a.Objects[j].Ref()) }) {
		t.Error("objects are not sorted")
	}
}
