package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/eksdoctor/eksdoctor/internal/parallel"
)

// Populate creates the objects of a generated snapshot in a real API server (one
// with nothing but etcd behind it: no controller changes them), statuses
// included, so that `eksdoctor cluster` reads the cluster the snapshot
// describes. Objects the server refuses are counted, not fatal: it returns how
// many were created and how many were refused, with the first refusal.
func Populate(ctx context.Context, cfg *rest.Config, snapshotFile string) (created, refused int, firstErr error, err error) {
	data, err := os.ReadFile(snapshotFile)
	if err != nil {
		return 0, 0, nil, err
	}
	var doc struct {
		Objects []map[string]any `json:"objects"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return 0, 0, nil, fmt.Errorf("%s: %w", snapshotFile, err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 2000, 4000
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return 0, 0, nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return 0, 0, nil, err
	}

	// Namespaces first, then cluster-scoped objects, then the rest: what
	// objects live in must exist before them.
	namespaces := map[string]bool{}
	for _, o := range doc.Objects {
		if ns, _ := o["metadata"].(map[string]any)["namespace"].(string); ns != "" && ns != "default" {
			namespaces[ns] = true
		}
	}
	var ok, bad atomic.Int64
	var once sync.Once
	fail := func(e error) {
		bad.Add(1)
		once.Do(func() { firstErr = e })
	}
	for ns := range namespaces {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if _, err := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			fail(fmt.Errorf("namespace %s: %w", ns, err))
		}
	}
	create := func(o map[string]any) {
		u := &unstructured.Unstructured{Object: o}
		gvk := u.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			fail(fmt.Errorf("%s: %w", gvk, err))
			return
		}
		var r dynamic.ResourceInterface = client.Resource(m.Resource)
		if ns := u.GetNamespace(); ns != "" {
			r = client.Resource(m.Resource).Namespace(ns)
		}
		status, hasStatus := o["status"]
		got, err := r.Create(ctx, u, metav1.CreateOptions{})
		if err != nil {
			fail(fmt.Errorf("%s %s/%s: %w", gvk.Kind, u.GetNamespace(), u.GetName(), err))
			return
		}
		if hasStatus && u.GetKind() != "Event" {
			got.Object["status"] = status
			if _, err := r.UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
				fail(fmt.Errorf("%s %s/%s status: %w", gvk.Kind, u.GetNamespace(), u.GetName(), err))
				return
			}
		}
		ok.Add(1)
	}
	var first, rest []map[string]any
	for _, o := range doc.Objects {
		if ns, _ := o["metadata"].(map[string]any)["namespace"].(string); ns == "" {
			first = append(first, o)
		} else {
			rest = append(rest, o)
		}
	}
	// The API server is on the same machine: a few requests in flight at once.
	const inFlight = 8
	for _, batch := range [][]map[string]any{first, rest} {
		parallel.EachOf(len(batch), inFlight, func(i int) { create(batch[i]) })
	}
	return int(ok.Load()), int(bad.Load()), firstErr, nil
}
