//go:build livecontrollers

package livecontrollers

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// fact is one thing a controller did, as the API server recorded it.
type fact struct {
	At     time.Time
	Kind   string // event, bound, deleting, deleted, taint, untaint, condition, created
	Object string // Kind/namespace/name, Kind/name for cluster-scoped objects
	// By is the controller: an event's source component, or who a change is
	// known to come from.
	By   string
	Text string
	// Seen is when the watch delivered it (At, the API's own time, is to
	// the second for events).
	Seen time.Time
}

func (f fact) String() string {
	by := ""
	if f.By != "" {
		by = " [" + f.By + "]"
	}
	return fmt.Sprintf("%s %-9s %s%s: %s", f.At.UTC().Format("15:04:05.000"), f.Kind, f.Object, by, f.Text)
}

// observer watches a cluster and records what its controllers do: events,
// bindings, deletions, taints, NodeClaim conditions, VolumeAttachments.
type observer struct {
	mu    sync.Mutex
	facts []fact
	// seen remembers the last state of each object, to record changes.
	seen map[string]string
}

func observe(t *testing.T, cfg *rest.Config) *observer {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o := &observer{seen: map[string]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() {
		cancel()
		if t.Failed() {
			var b strings.Builder
			for _, f := range o.all() {
				fmt.Fprintf(&b, "  %s\n", f)
			}
			t.Logf("everything the controllers did while the test ran:\n%s", b.String())
		}
	})
	go o.follow(ctx, func(ctx context.Context) (watch.Interface, error) {
		return cs.CoreV1().Events("").Watch(ctx, metav1.ListOptions{})
	}, o.event)
	go o.follow(ctx, func(ctx context.Context) (watch.Interface, error) {
		return cs.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{})
	}, o.pod)
	go o.follow(ctx, func(ctx context.Context) (watch.Interface, error) {
		return cs.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{})
	}, o.node)
	go o.follow(ctx, func(ctx context.Context) (watch.Interface, error) {
		return cs.StorageV1().VolumeAttachments().Watch(ctx, metav1.ListOptions{})
	}, o.volumeAttachment)
	nodeClaims := schema.GroupVersionResource{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"}
	go o.follow(ctx, func(ctx context.Context) (watch.Interface, error) {
		return dyn.Resource(nodeClaims).Watch(ctx, metav1.ListOptions{})
	}, o.nodeClaim)
	return o
}

// follow keeps a watch open until ctx ends, reopening it when the server
// closes it.
func (o *observer) follow(ctx context.Context, open func(context.Context) (watch.Interface, error), handle func(watch.Event)) {
	for ctx.Err() == nil {
		w, err := open(ctx)
		if err != nil {
			time.Sleep(time.Second)
			continue
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				break
			}
			handle(ev)
		}
		w.Stop()
	}
}

func (o *observer) add(f fact) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f.Seen = time.Now()
	if f.At.IsZero() {
		f.At = f.Seen
	}
	o.facts = append(o.facts, f)
}

// changed reports whether the state of key differs from the last one seen,
// and remembers it.
func (o *observer) changed(key, state string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seen[key] == state {
		return false
	}
	o.seen[key] = state
	return true
}

func ref(kind, ns, name string) string {
	if ns == "" {
		return kind + "/" + name
	}
	return kind + "/" + ns + "/" + name
}

func (o *observer) event(ev watch.Event) {
	e, ok := ev.Object.(*corev1.Event)
	if !ok || ev.Type == watch.Deleted {
		return
	}
	key := "event/" + string(e.UID)
	if !o.changed(key, fmt.Sprint(e.Count, e.Series != nil && e.Series.Count > 0)) {
		return
	}
	at := e.LastTimestamp.Time
	if at.IsZero() {
		at = e.EventTime.Time
	}
	by := e.Source.Component
	if by == "" {
		by = e.ReportingController
	}
	o.add(fact{At: at, Kind: "event", By: by, Object: ref(e.InvolvedObject.Kind, e.InvolvedObject.Namespace, e.InvolvedObject.Name),
		Text: e.Reason + ": " + e.Message})
}

func (o *observer) pod(ev watch.Event) {
	p, ok := ev.Object.(*corev1.Pod)
	if !ok {
		return
	}
	r := ref("Pod", p.Namespace, p.Name)
	if ev.Type == watch.Deleted {
		o.add(fact{Kind: "deleted", Object: r, Text: "gone from node " + orNone(p.Spec.NodeName)})
		return
	}
	if p.Spec.NodeName != "" && o.changed(r+"/node", p.Spec.NodeName) {
		o.add(fact{Kind: "bound", Object: r, By: "kube-scheduler", Text: "to node " + p.Spec.NodeName})
	}
	if p.DeletionTimestamp != nil && o.changed(r+"/deleting", "yes") {
		o.add(fact{Kind: "deleting", Object: r, Text: "on node " + orNone(p.Spec.NodeName)})
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func (o *observer) node(ev watch.Event) {
	n, ok := ev.Object.(*corev1.Node)
	if !ok {
		return
	}
	r := ref("Node", "", n.Name)
	switch {
	case ev.Type == watch.Deleted:
		o.add(fact{Kind: "deleted", Object: r, Text: "node gone"})
		return
	case ev.Type == watch.Added:
		o.add(fact{Kind: "created", Object: r, Text: "nodepool " + orNone(n.Labels["karpenter.sh/nodepool"])})
	}
	var taints []string
	for _, tn := range n.Spec.Taints {
		taints = append(taints, tn.ToString())
	}
	sort.Strings(taints)
	if o.changed(r+"/taints", strings.Join(taints, ",")) {
		o.add(fact{Kind: "taints", Object: r, Text: "[" + strings.Join(taints, ", ") + "]"})
	}
	ready := "absent"
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = string(c.Status)
		}
	}
	if o.changed(r+"/ready", ready) {
		o.add(fact{Kind: "condition", Object: r, Text: "Ready " + ready})
	}
	if n.DeletionTimestamp != nil && o.changed(r+"/deleting", "yes") {
		o.add(fact{Kind: "deleting", Object: r, Text: "finalizers " + strings.Join(n.Finalizers, ",")})
	}
}

func (o *observer) volumeAttachment(ev watch.Event) {
	va, ok := ev.Object.(*storagev1.VolumeAttachment)
	if !ok {
		return
	}
	r := ref("VolumeAttachment", "", va.Name)
	pv := ""
	if va.Spec.Source.PersistentVolumeName != nil {
		pv = *va.Spec.Source.PersistentVolumeName
	}
	switch ev.Type {
	case watch.Added:
		o.add(fact{Kind: "created", Object: r, By: "attachdetach-controller", Text: fmt.Sprintf("PV %s to node %s", pv, va.Spec.NodeName)})
	case watch.Deleted:
		o.add(fact{Kind: "deleted", Object: r, Text: fmt.Sprintf("PV %s detached from node %s", pv, va.Spec.NodeName)})
	default:
		if va.DeletionTimestamp != nil && o.changed(r+"/deleting", "yes") {
			o.add(fact{Kind: "deleting", Object: r, Text: "node " + va.Spec.NodeName})
		}
	}
}

func (o *observer) nodeClaim(ev watch.Event) {
	u, ok := ev.Object.(*unstructured.Unstructured)
	if !ok {
		return
	}
	r := ref("NodeClaim", "", u.GetName())
	switch ev.Type {
	case watch.Added:
		o.add(fact{Kind: "created", Object: r, By: "karpenter", Text: "nodepool " + u.GetLabels()["karpenter.sh/nodepool"]})
	case watch.Deleted:
		o.add(fact{Kind: "deleted", Object: r, Text: "nodeclaim gone"})
		return
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		typ, _ := m["type"].(string)
		st := fmt.Sprintf("%v %v %v", m["status"], m["reason"], m["message"])
		if o.changed(r+"/"+typ, st) {
			o.add(fact{Kind: "condition", Object: r, By: "karpenter", Text: fmt.Sprintf("%s=%v (%v) %v", typ, m["status"], m["reason"], m["message"])})
		}
	}
	if u.GetDeletionTimestamp() != nil && o.changed(r+"/deleting", "yes") {
		o.add(fact{Kind: "deleting", Object: r, Text: "finalizers " + strings.Join(u.GetFinalizers(), ",")})
	}
}

// all returns the facts recorded so far, in the order they happened.
func (o *observer) all() []fact {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := append([]fact(nil), o.facts...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// about returns the facts whose object is one of objects or begins with one
// of prefixes ("Pod/f1/", "Node/kwok-f1-"), in order.
func (o *observer) about(match func(fact) bool) []fact {
	var out []fact
	for _, f := range o.all() {
		if match(f) {
			out = append(out, f)
		}
	}
	return out
}

// eventsOf returns the messages of the events a component recorded with a
// reason about objects matching prefix.
func (o *observer) eventsOf(component, reason, prefix string) []string {
	var out []string
	for _, f := range o.all() {
		if f.Kind == "event" && f.By == component && strings.HasPrefix(f.Text, reason+": ") && strings.HasPrefix(f.Object, prefix) {
			out = append(out, strings.TrimPrefix(f.Text, reason+": "))
		}
	}
	return out
}
