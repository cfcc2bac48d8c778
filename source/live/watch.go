package live

import (
	"context"
	"errors"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Watched are the resources whose changes make `eksdoctor serve` analyse
// again: what a Pending pod, a node coming or going, or Karpenter's own
// objects change. Watching them needs only the watch verb beside get and list.
var Watched = []schema.GroupVersionResource{
	{Version: "v1", Resource: "pods"},
	{Version: "v1", Resource: "nodes"},
	{Group: "karpenter.sh", Version: "v1", Resource: "nodepools"},
	{Group: "karpenter.sh", Version: "v1", Resource: "nodeclaims"},
}

// Watch calls changed whenever an object of the Watched resources is added,
// changed or deleted (the namespace of the options only, for pods), until ctx
// ends. A resource the credentials may not watch, or the server does not
// serve, is left alone: a Pending pod then shows at the next interval. Watches
// that end are opened again.
func Watch(ctx context.Context, opts Options, changed func()) error {
	opts = opts.withDefaults()
	cfg, _, err := restConfig(opts)
	if err != nil {
		return err
	}
	cfg.Timeout = 0 // a watch stays open; the server ends it
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	for _, gvr := range Watched {
		wg.Add(1)
		go func() {
			defer wg.Done()
			watchOne(ctx, dyn, gvr, opts.Namespace, changed)
		}()
	}
	wg.Wait()
	if errors.Is(ctx.Err(), context.Canceled) {
		return nil
	}
	return ctx.Err()
}

func watchOne(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns string, changed func()) {
	for ctx.Err() == nil {
		var ri dynamic.ResourceInterface = dyn.Resource(gvr)
		if gvr.Resource == "pods" && ns != "" {
			ri = dyn.Resource(gvr).Namespace(ns)
		}
		w, err := ri.Watch(ctx, metav1.ListOptions{})
		if err != nil {
			// Not allowed, not served, or the server is away: try again
			// later, without a flood of requests.
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Minute):
			}
			continue
		}
		for range w.ResultChan() {
			changed()
		}
		w.Stop()
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}
