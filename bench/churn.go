package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// ChurnOptions say how fast and how long Churn changes a cluster's pods.
type ChurnOptions struct {
	// PerMinute is how many pod changes Churn makes a minute.
	PerMinute int
	// Duration is how long it goes on.
	Duration time.Duration
	// Seed picks the pods changed.
	Seed uint64
}

// ChurnStats are what Churn did.
type ChurnStats struct {
	// Relabelled are the pods whose labels changed; Replaced, the pods
	// deleted and created again under a new name.
	Relabelled, Replaced int
	// Failed are the changes the server refused, with the first refusal.
	Failed   int
	FirstErr error
}

// Every replaceEvery-th change replaces a pod; the others relabel one.
const replaceEvery = 10

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// Churn changes the pods of the cluster cfg points at, at an even pace, until
// the duration has passed or ctx ends: most changes set a label of a pod (as
// a rollout or a controller's bookkeeping does), every tenth deletes a pod
// and creates one like it, status included, under a new name (as a
// ReplicaSet replaces one), so that pods come and go and their number stays.
// Which pods change is random, from the seed.
func Churn(ctx context.Context, cfg *rest.Config, o ChurnOptions) (ChurnStats, error) {
	var st ChurnStats
	if o.PerMinute <= 0 {
		return st, fmt.Errorf("churn: %d changes a minute", o.PerMinute)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 1000, 2000
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return st, err
	}
	type podName struct{ namespace, name string }
	var pods []podName
	cont := ""
	for {
		l, err := client.Resource(podsGVR).List(ctx, metav1.ListOptions{Limit: 500, Continue: cont})
		if err != nil {
			return st, err
		}
		for _, p := range l.Items {
			pods = append(pods, podName{p.GetNamespace(), p.GetName()})
		}
		if cont = l.GetContinue(); cont == "" {
			break
		}
	}
	if len(pods) == 0 {
		return st, fmt.Errorf("churn: the cluster has no pods")
	}
	rnd := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	fail := func(err error) {
		st.Failed++
		if st.FirstErr == nil {
			st.FirstErr = err
		}
	}
	tick := time.NewTicker(time.Minute / time.Duration(o.PerMinute))
	defer tick.Stop()
	end := time.After(o.Duration)
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return st, nil
		case <-end:
			return st, nil
		case <-tick.C:
		}
		i := rnd.IntN(len(pods))
		p := pods[i]
		ri := client.Resource(podsGVR).Namespace(p.namespace)
		if n%replaceEvery != 0 {
			patch := []byte(`{"metadata":{"labels":{"eksdoctor.bench/churn":"` + strconv.Itoa(n) + `"}}}`)
			if _, err := ri.Patch(ctx, p.name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				fail(fmt.Errorf("relabel %s/%s: %w", p.namespace, p.name, err))
				continue
			}
			st.Relabelled++
			continue
		}
		name, err := replacePod(ctx, ri, p.name, n)
		if err != nil {
			fail(fmt.Errorf("replace %s/%s: %w", p.namespace, p.name, err))
			continue
		}
		pods[i].name = name
		st.Replaced++
	}
}

// replacePod deletes the pod named name and creates one like it, status
// included, named after it and n; it returns the new name.
func replacePod(ctx context.Context, ri dynamic.ResourceInterface, name string, n int) (string, error) {
	old, err := ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	zero := int64(0)
	if err := ri.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		return "", err
	}
	base := name
	if j := strings.LastIndex(name, "-c"); j > 0 {
		base = name[:j]
	}
	fresh := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata": map[string]any{
			"name":        base + "-c" + strconv.Itoa(n),
			"namespace":   old.GetNamespace(),
			"labels":      toAny(old.GetLabels()),
			"annotations": toAny(old.GetAnnotations()),
		},
		"spec": old.Object["spec"],
	}}
	if refs := old.GetOwnerReferences(); len(refs) > 0 {
		fresh.SetOwnerReferences(refs)
	}
	got, err := ri.Create(ctx, fresh, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	if status, ok := old.Object["status"]; ok {
		got.Object["status"] = status
		if _, err := ri.UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
			return "", err
		}
	}
	return got.GetName(), nil
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
