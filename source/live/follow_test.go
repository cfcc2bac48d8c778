package live

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// followPod is a pod of the follow namespace that no node can take.
func followPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "follow", Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"nowhere": "true"},
			Containers:   []corev1.Container{{Name: "c", Image: "x"}},
		},
	}
}

// followSetup creates the follow namespace with two pods, and removes what the
// test creates when it ends.
func followSetup(t *testing.T) *kubernetes.Clientset {
	t.Helper()
	fixture(t)
	ctx := testContext(t)
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "follow"}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, name := range []string{"kept", "deleted"} {
		if _, err := cs.CoreV1().Pods("follow").Create(ctx, followPod(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		ctx := context.Background()
		zero := int64(0)
		for _, name := range []string{"kept", "deleted", "added"} {
			_ = cs.CoreV1().Pods("follow").Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		}
		_ = cs.CoreV1().Nodes().Delete(ctx, "ip-10-0-9-90.ec2.internal", metav1.DeleteOptions{})
		for _, name := range []string{"added.failedscheduling", "added.pulled"} {
			_ = cs.CoreV1().Events("follow").Delete(ctx, name, metav1.DeleteOptions{})
		}
		// No controller removes the claim's protection finalizer here.
		unprotect := []byte(`{"metadata":{"finalizers":null}}`)
		_, _ = cs.CoreV1().PersistentVolumeClaims("follow").Patch(ctx, "data", types.MergePatchType, unprotect, metav1.PatchOptions{})
		_ = cs.CoreV1().PersistentVolumeClaims("follow").Delete(ctx, "data", metav1.DeleteOptions{GracePeriodSeconds: &zero})
		_ = cs.StorageV1().VolumeAttachments().Delete(ctx, "csi-follow", metav1.DeleteOptions{})
	})
	return cs
}

// The follower's model is the model a read of the cluster gives, at first and
// after pods and nodes were added, changed and deleted, and events (of a list
// with a field selector, and of none), a claim and a volume attachment added,
// which it learns from its watches, with no list asked for after the first read.
func TestFollowerKeepsTheReadCurrent(t *testing.T) {
	cs := followSetup(t)
	ctx := testContext(t)
	rec := newRecorder(t)
	opts := Options{Kubeconfig: kubeconfig(t, env.Config, "admin@test"), Namespace: "follow", Clock: clock}
	fopts := opts
	fopts.WrapTransport = rec.wrap
	f, err := Follow(ctx, fopts)
	if err != nil {
		t.Fatal(err)
	}
	sameAsRead := func(when string) {
		t.Helper()
		want, err := Load(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, f.Model(), modelOptions); diff != "" {
			t.Errorf("%s: the follower's model differs from a read (-read +follower):\n%s", when, diff)
		}
	}
	sameAsRead("after the first read")
	// A second model of the same read is the same: building one changes
	// nothing the next is built from.
	if diff := cmp.Diff(f.Model(), f.Model(), modelOptions); diff != "" {
		t.Errorf("two models of one read differ:\n%s", diff)
	}
	lists := len(rec.matching("GET /api"))

	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var changes atomic.Int64
	done := make(chan struct{})
	go func() {
		f.Watch(wctx, func() { changes.Add(1) })
		close(done)
	}()
	// The watches are open once the server has answered each (the test
	// server runs no controller: nothing else changes).
	f.mu.Lock()
	read := len(f.lists)
	f.mu.Unlock()
	if read < 15 {
		t.Fatalf("the follower holds %d lists, want every list the read made", read)
	}
	waitFor(t, "the watches to open", func() bool { return len(rec.matching("watch=true")) >= read })

	zero := int64(0)
	if _, err := cs.CoreV1().Pods("follow").Create(ctx, followPod("added"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kept, err := cs.CoreV1().Pods("follow").Get(ctx, "kept", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kept.Labels["changed"] = "yes"
	if _, err := cs.CoreV1().Pods("follow").Update(ctx, kept, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Pods("follow").Delete(ctx, "deleted", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-9-90.ec2.internal", Labels: map[string]string{"karpenter.sh/nodepool": "default"}}}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Events: one the read lists (by its reason), one it does not.
	for _, reason := range []string{"FailedScheduling", "Pulled"} {
		ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "added." + strings.ToLower(reason), Namespace: "follow"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "follow", Name: "added"},
			Reason:         reason, Message: "0/3 nodes are available", Type: corev1.EventTypeWarning, Source: corev1.EventSource{Component: "default-scheduler"}}
		if _, err := cs.CoreV1().Events("follow").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "follow"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: ptr(""), VolumeName: "follow-data",
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: apiresource.MustParse("1Gi")}}}}
	if _, err := cs.CoreV1().PersistentVolumeClaims("follow").Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "csi-follow"},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: "ebs.csi.aws.com", NodeName: "ip-10-0-9-90.ec2.internal", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr("follow-data")}}}
	if _, err := cs.StorageV1().VolumeAttachments().Create(ctx, va, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Added, changed, deleted (a deletion with no grace period is one
	// event), the node, the event the read lists, the claim and the
	// attachment.
	waitFor(t, "the changes to arrive", func() bool { return f.Counts().Changes >= 7 })
	sameAsRead("after the changes")
	if c := f.Counts(); c.Reads != 1 || c.WatchErrors != 0 || int64(c.Changes) != changes.Load() {
		t.Errorf("counts %+v, %d changes reported: want one read, no watch error, every change reported", c, changes.Load())
	}
	if u := f.Unfollowed(); len(u) != 0 {
		t.Errorf("lists not followed with watch allowed: %v", u)
	}
	if n := len(rec.matching("GET /api")) - len(rec.matching("watch=true")); n != lists {
		t.Errorf("%d requests that are not watches after the first read's %d: %v", n-lists, lists, rec.matching("GET /api"))
	}
	for _, w := range rec.matching("watch=true") {
		if !strings.Contains(w, "resourceVersion=") || strings.Contains(w, "resourceVersion=&") {
			t.Errorf("a watch not opened at its list's resourceVersion: %s", w)
		}
	}
	stop()
	<-done
}

// A watch whose resourceVersion the server no longer has (410 Gone) makes the
// follower read the cluster again, and it goes on from that read.
func TestFollowerReadsAgainWhenItsWatchExpires(t *testing.T) {
	followSetup(t)
	ctx := testContext(t)
	rec := newRecorder(t)
	var expired atomic.Bool
	rec.fail = func(req *http.Request) (*http.Response, error) {
		if strings.Contains(req.URL.RawQuery, "watch=true") && strings.HasSuffix(req.URL.Path, "/pods") && expired.CompareAndSwap(false, true) {
			body := `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version","reason":"Expired","code":410}}` + "\n"
			return watchAnswer(req, strings.NewReader(body)), nil
		}
		return nil, nil
	}
	f, err := Follow(ctx, Options{Kubeconfig: kubeconfig(t, env.Config, "admin@test"), Namespace: "follow", Clock: clock, WrapTransport: rec.wrap})
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var changes atomic.Int64
	go f.Watch(wctx, func() { changes.Add(1) })
	waitFor(t, "a second read", func() bool { return f.Counts().Reads == 2 })
	if changes.Load() == 0 {
		t.Error("the read made again was not reported as a change")
	}
	// And the watch of pods is open again, from the new read.
	waitFor(t, "the pods' watch to open again", func() bool { return len(rec.matching("/pods?", "watch=true")) >= 2 })
	if c := f.Counts(); c.WatchErrors != 0 {
		t.Errorf("an expired watch counted as an error: %+v", c)
	}
}

// A watch event larger than any object is refused before it is held whole:
// the watch fails, is counted, and is opened again.
func TestFollowerRefusesAnEventLargerThanAnyObject(t *testing.T) {
	followSetup(t)
	ctx := testContext(t)
	rec := newRecorder(t)
	var served atomic.Int64
	big := &endless{}
	rec.fail = func(req *http.Request) (*http.Response, error) {
		if strings.Contains(req.URL.RawQuery, "watch=true") && strings.HasSuffix(req.URL.Path, "/nodes") && served.Add(1) == 1 {
			head := strings.NewReader(`{"type":"ADDED","object":{"apiVersion":"v1","kind":"Node","metadata":{"name":"`)
			body := io.MultiReader(head, big)
			return watchAnswer(req, body), nil
		}
		return nil, nil
	}
	f, err := Follow(ctx, Options{Kubeconfig: kubeconfig(t, env.Config, "admin@test"), Namespace: "follow", Clock: clock, WrapTransport: rec.wrap})
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go f.Watch(wctx, func() {})
	waitFor(t, "the watch error", func() bool { return f.Counts().WatchErrors == 1 })
	waitFor(t, "the nodes' watch to open again", func() bool { return len(rec.matching("/nodes?", "watch=true")) >= 2 })
	if n := big.read.Load(); n > 2*maxEventBytes {
		t.Errorf("%d bytes of the event read before it was refused; the bound is %d", n, maxEventBytes)
	}
	if c := f.Counts(); c.Changes != 0 || c.Reads != 1 {
		t.Errorf("counts %+v: want no change applied and no read again", c)
	}
}

// watchAnswer is the answer of a watch whose events are body.
func watchAnswer(req *http.Request, body io.Reader) *http.Response {
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(body), Request: req}
}

// endless is a name that never ends.
type endless struct{ read atomic.Int64 }

func (e *endless) Read(p []byte) (int, error) {
	if e.read.Load() > 64<<20 {
		// Far past the bound: the follower should have stopped long before.
		return 0, io.ErrUnexpectedEOF
	}
	n := copy(p, bytes.Repeat([]byte("x"), len(p)))
	e.read.Add(int64(n))
	return n, nil
}

// waitFor waits up to 30 s for cond.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for began := time.Now(); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Since(began) > 30*time.Second {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A user who may list but not watch (deploy/rbac.yaml grants no watch): every
// list the follower read is named as not followed, which is not counted as a
// watch error, and no watch is asked for again before the next read.
func TestFollowerNamesTheListsItMayNotWatch(t *testing.T) {
	followSetup(t)
	ctx := testContext(t)
	cfg, err := env.AddUser("list-no-watch")
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Grant(ctx, "list-no-watch", readRBAC(t)); err != nil {
		t.Fatal(err)
	}
	rec := newRecorder(t)
	f, err := Follow(ctx, Options{Kubeconfig: kubeconfig(t, cfg, "limited"), Namespace: "follow", Clock: clock, WrapTransport: rec.wrap})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	f.mu.Lock()
	for k := range f.lists {
		want = append(want, k.String())
	}
	f.mu.Unlock()
	sort.Strings(want)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	go f.Watch(wctx, func() { t.Error("a change reported with no watch allowed") })
	waitFor(t, "every watch refused", func() bool { return len(f.Unfollowed()) == len(want) })
	if diff := cmp.Diff(want, f.Unfollowed()); diff != "" {
		t.Errorf("not followed (-lists read +named):\n%s", diff)
	}
	if !slices.Contains(want, "events (reason=FailedScheduling)") || !slices.Contains(want, "pods") {
		t.Errorf("lists read: %v", want)
	}
	time.Sleep(2 * firstWatchPause)
	if n := len(rec.matching("watch=true")); n != len(want) {
		t.Errorf("%d watches asked for, want one per list (%d) until the next read", n, len(want))
	}
	if c := f.Counts(); c.WatchErrors != 0 || c.Reads != 1 {
		t.Errorf("counts %+v: a refused watch is not an error", c)
	}
}
