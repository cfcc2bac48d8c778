package live

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// snapshotOf writes a snapshot holding objs, one per line.
func snapshotOf(objs []string) []byte {
	return []byte(`{"kind":"EKSDoctorSnapshot","version":1,"context":"c","server":"s","now":"2026-01-02T03:04:05Z","skipped":[],"objects":[` + "\n" + strings.Join(objs, ",\n") + "\n]}\n")
}

func pendingPod(ns, name, owner string) string {
	refs := ""
	if owner != "" {
		refs = `,"ownerReferences":[{"apiVersion":"apps/v1","controller":true,"kind":"ReplicaSet","name":"` + owner + `","uid":"u"}]`
	}
	return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `","namespace":"` + ns + `"` + refs + `},"spec":{"containers":[{"name":"c","image":"x"}]},"status":{"phase":"Pending"}}`
}

func boundPod(ns, name string) string {
	return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `","namespace":"` + ns + `"},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"x"}]},"status":{"phase":"Running"}}`
}

// Unscheduled pods beyond the budget are left out in the snapshot's order —
// more pods of a workload already kept are still kept, up to the pod budget —
// and what was left out is said once; scheduled pods and other objects are
// always kept.
func TestSnapshotBudget(t *testing.T) {
	var objs []string
	for i := 0; i < 40; i++ {
		objs = append(objs, pendingPod("a", fmt.Sprintf("solo-%02d", i), ""))
	}
	for i := 0; i < 30; i++ {
		objs = append(objs, pendingPod("b", fmt.Sprintf("web-%02d", i), "web"))
	}
	for i := 0; i < 10; i++ {
		objs = append(objs, boundPod("c", fmt.Sprintf("run-%02d", i)))
	}
	data := snapshotOf(objs)
	for _, tc := range []struct {
		budget    Budget
		kept      int // unscheduled pods kept
		workloads int
		said      string
	}{
		{budget: Budget{Pending: 1000, Workloads: 1000}, kept: 70, workloads: 41},
		// Ten workloads: the first ten solo pods; web is never reached.
		{budget: Budget{Pending: 1000, Workloads: 10}, kept: 10, workloads: 10,
			said: "holds 70 unscheduled Pending pods, more than eksdoctor analyses of one cluster (1000 pods of at most 10 workloads): 10 pods of 10 workloads are analysed (the first by namespace and name), the other 60 (30 in a, 30 in b) are left out"},
		// Twenty pods: the first twenty solo ones.
		{budget: Budget{Pending: 20, Workloads: 1000}, kept: 20, workloads: 20,
			said: "the other 50 (30 in b, 20 in a)"},
	} {
		m, err := ReadSnapshotWithin("s.json", data, tc.budget)
		if err != nil {
			t.Fatal(err)
		}
		unsched, running, owners := 0, 0, map[cluster.ObjectRef]bool{}
		for _, p := range m.Pods {
			if p.Spec.NodeName == "" {
				unsched++
				owners[p.Object.OwnerRef()] = true
			} else {
				running++
			}
		}
		if unsched != tc.kept || len(owners) != tc.workloads || running != 10 {
			t.Errorf("budget %+v: kept %d unscheduled pods of %d workloads and %d running, want %d of %d and 10", tc.budget, unsched, len(owners), running, tc.kept, tc.workloads)
		}
		var said []string
		for _, p := range m.Problems {
			said = append(said, p.Message)
			if !p.Unresolved {
				t.Errorf("what is left out is unknown, not wrong: %+v", p)
			}
		}
		switch {
		case tc.said == "" && len(said) > 0:
			t.Errorf("budget %+v: said %q within the budget", tc.budget, said)
		case tc.said != "" && (len(said) != 1 || !strings.Contains(said[0], tc.said)):
			t.Errorf("budget %+v: said %q, want one saying %q", tc.budget, said, tc.said)
		}
	}
}

// The model a live read builds spends the same budget, in the order a snapshot
// of it would be read.
func TestLiveReadBudget(t *testing.T) {
	s := &state{Context: "c", budget: Budget{Pending: 1000, Workloads: 3}}
	for _, raw := range []string{pendingPod("a", "p3", ""), pendingPod("a", "p1", ""), boundPod("a", "r"), pendingPod("a", "p2", ""), pendingPod("a", "p4", "")} {
		var obj map[string]any
		if err := json.Unmarshal([]byte(raw), &obj); err != nil {
			t.Fatal(err)
		}
		s.Objects = append(s.Objects, obj)
	}
	m := s.model()
	var names []string
	for _, o := range m.Objects {
		names = append(names, o.Name)
	}
	if got := strings.Join(names, " "); got != "p1 p2 p3 r" {
		t.Errorf("kept %s, want p1 p2 p3 r", got)
	}
	if len(m.Problems) != 1 || !strings.Contains(m.Problems[0].Message, "the cluster holds 4 unscheduled Pending pods") {
		t.Errorf("problems %+v", m.Problems)
	}
}

// A compressed snapshot whose objects take fewer bytes than any cluster's
// could (each has a uid and a name of its own) is refused before it is decoded.
func TestSnapshotOutOfProportion(t *testing.T) {
	var objs []string
	for i := 0; i < 20000; i++ {
		objs = append(objs, pendingPod("a", fmt.Sprintf("p%06d", i), ""))
	}
	var zipped bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&zipped, gzip.BestCompression)
	zw.Write(snapshotOf(objs))
	zw.Close()
	_, err := ReadSnapshot("s.json.gz", zipped.Bytes())
	if err == nil || !strings.Contains(err.Error(), "out of proportion") {
		t.Errorf("err = %v, want the snapshot refused as out of proportion", err)
	}
	// The same objects with random uids, as a cluster's have, are read.
	objs = objs[:0]
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		objs = append(objs, strings.Replace(pendingPod("a", fmt.Sprintf("p%06d", i), ""), `"namespace"`, fmt.Sprintf(`"uid":"%08x-%04x-%04x-%04x-%012x","namespace"`, r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff), 1))
	}
	zipped.Reset()
	zw = gzip.NewWriter(&zipped)
	zw.Write(snapshotOf(objs))
	zw.Close()
	if _, err := ReadSnapshot("s.json.gz", zipped.Bytes()); err != nil {
		t.Errorf("a snapshot with a cluster's uids was refused: %v", err)
	}
}

// FuzzQuickUnscheduled: whatever the quick reader recognises as an unscheduled
// v1 Pod, the decoder decodes as one, with the same owner.
func FuzzQuickUnscheduled(f *testing.F) {
	for _, s := range []string{
		pendingPod("a", "p", ""), pendingPod("a", "p", "web"), boundPod("a", "r"),
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"a","ownerReferences":[{"kind":"Job","name":"j"},{"kind":"ReplicaSet","name":"rs","controller":true}]},"spec":{"nodeName":""}}`,
		`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p\u00e9","namespace":"a"},"spec":{"nodeName":null}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p"},"data":{"kind":"Pod"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var dec jsontext.Decoder
		owner, ok := quickUnscheduled(&dec, raw)
		if !ok {
			return
		}
		var d objectDecoder
		obj, pod, err := d.decode(raw)
		if err != nil {
			return // not an object the snapshot reader keeps either way
		}
		waiting := unscheduled(obj)
		if pod != nil {
			waiting = pod.Spec.NodeName == ""
		}
		if !waiting {
			t.Fatalf("quick reader says unscheduled pod, decoder says %v: %s", obj["kind"], raw)
		}
		if got := ownerOf(obj); got != owner {
			t.Fatalf("owner %v, decoder's %v: %s", owner, got, raw)
		}
	})
}

// Past the first wave of objects, pods beyond the budget are recognised
// without being decoded; pods of the workloads kept are still decoded and
// kept, and the counts are those a full decode gives.
func TestSnapshotBudgetAcrossWaves(t *testing.T) {
	var objs []string
	for i := 0; i < 40000; i++ {
		owner := ""
		if i%2 == 0 {
			owner = fmt.Sprintf("rs-%d", i%6)
		}
		objs = append(objs, pendingPod(fmt.Sprintf("ns-%d", i/10000), fmt.Sprintf("p%06d", i), owner))
	}
	m, err := ReadSnapshotWithin("s.json", snapshotOf(objs), Budget{Pending: 30000, Workloads: 8})
	if err != nil {
		t.Fatal(err)
	}
	owners := map[cluster.ObjectRef]int{}
	for _, p := range m.Pods {
		owners[p.Object.OwnerRef()]++
	}
	// The first eight workloads, in order: rs-0, p000001, rs-2, p000003,
	// rs-4, p000005, p000007, p000009 — the three ReplicaSets of ns-0 keep
	// all their pods (every even one of ns-0), the five pods themselves.
	if len(owners) != 8 {
		t.Errorf("%d workloads kept, want 8: %v", len(owners), owners)
	}
	total := 0
	for _, n := range owners {
		total += n
	}
	want := 0
	for i := 0; i < 40000; i++ {
		if i%2 == 0 && (i%6 == 0 || i%6 == 2 || i%6 == 4) && i/10000 == 0 {
			want++
		}
	}
	if total != want+5 {
		t.Errorf("kept %d pods, want %d", total, want+5)
	}
	if len(m.Problems) != 1 || !strings.Contains(m.Problems[0].Message, fmt.Sprintf("the other %d", 40000-total)) {
		t.Errorf("problems %+v", m.Problems)
	}
}
