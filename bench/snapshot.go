package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/eksdoctor/eksdoctor/source/live"
)

// SnapshotOptions size a generated snapshot of a running cluster.
type SnapshotOptions struct {
	Nodes      int
	NodePools  int
	DaemonSets int
	// Pods is the total, DaemonSet pods (one per node each) included; the rest
	// belong to Deployments of Replicas pods.
	Pods     int
	Replicas int
	// PendingEvery makes one pod in PendingEvery Pending (about 2% at 50).
	PendingEvery int
	// PendingWorkloads, when set, spreads the Pending pods thinly: only
	// about this many Deployments have Pending pods (a third of their
	// replicas), each selecting its NodePool by karpenter.sh/nodepool and
	// requesting resources of its own, so that each is a scheduling class of
	// its own.
	PendingWorkloads int
	// UniqueNodes gives every node its own usage: instance types, zones and
	// the requests of the pods on it vary, so that no two nodes have the same
	// free resources.
	UniqueNodes bool
}

// Shape returns o in a snapshot shape beside its size: words joined by "-",
// each changing one thing. thin spreads Pending pods over a few hundred
// workloads (at 100,000 pods); unique makes every node differ; pools gives
// five times as many NodePools (1,000 at 100,000 pods, five nodes each);
// sparse twice as many nodes and half the DaemonSets (10,000 nodes at
// 100,000 pods, half the pods on each). "uniform" (or nothing) is none of them.
func (o SnapshotOptions) Shape(shape string) (SnapshotOptions, error) {
	if shape == "" || shape == "uniform" {
		return o, nil
	}
	// Spread thinly, as many pods are Pending as in the uniform shape, a
	// third of the replicas of each workload with Pending pods: about 300
	// workloads at 100,000 pods.
	thin := max(1, o.Pods/max(o.PendingEvery, 1)/7)
	seen := map[string]bool{}
	for _, word := range strings.Split(shape, "-") {
		if seen[word] {
			return o, fmt.Errorf("snapshot shape %q names %s twice", shape, word)
		}
		seen[word] = true
		switch word {
		case "thin":
			o.PendingWorkloads = thin
		case "unique":
			o.UniqueNodes = true
		case "pools":
			o.NodePools *= 5
		case "sparse":
			// The same DaemonSet pods on twice the nodes.
			o.Nodes, o.DaemonSets = o.Nodes*2, max(1, o.DaemonSets/2)
		default:
			return o, fmt.Errorf("unknown snapshot shape %q (uniform, or thin, unique, pools, sparse joined by -)", shape)
		}
	}
	return o, nil
}

// Snapshot sizes: 10k pods on 500 nodes and 20 NodePools, and ten times that.
var (
	SnapshotMedium = SnapshotOptions{Nodes: 500, NodePools: 20, DaemonSets: 10, Pods: 10_000, Replicas: 20, PendingEvery: 50}
	SnapshotLarge  = SnapshotOptions{Nodes: 5_000, NodePools: 200, DaemonSets: 10, Pods: 100_000, Replicas: 20, PendingEvery: 50}
	// SnapshotHuge is the largest cluster EKS runs: a million pods on
	// 100,000 nodes and 1,000 NodePools, four DaemonSets (network, proxy,
	// storage, monitoring) on every node and about 1% of pods Pending.
	SnapshotHuge = SnapshotOptions{Nodes: 100_000, NodePools: 1_000, DaemonSets: 4, Pods: 1_000_000, Replicas: 20, PendingEvery: 100}
)

// snapshotTypes are the instance types of unique nodes, with their
// allocatable CPU (millicores) and memory (MiB).
var snapshotTypes = []struct {
	name     string
	cpu, mem int
}{
	{"m5.xlarge", 3920, 14162}, {"m5.2xlarge", 7910, 29317}, {"m5.4xlarge", 15890, 58368},
	{"c5.2xlarge", 7910, 13940}, {"c5.4xlarge", 15890, 28700}, {"r5.2xlarge", 7910, 60000},
	{"r5.4xlarge", 15890, 121000}, {"m6i.8xlarge", 31850, 120000},
}

// snapshotNow is the moment the generated cluster was read.
var snapshotNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// GenerateSnapshot writes a snapshot of a large running cluster, as
// `eksdoctor snapshot` writes one: NodePools and their EC2NodeClass, nodes with
// their NodeClaims, DaemonSets with a pod on every node, and Deployments whose
// pods run on the nodes; about one pod in PendingEvery is Pending with the
// scheduler's FailedScheduling event: most only wait for the node Karpenter is
// launching, some select a label no NodePool gives (a real defect), some select
// one NodePool by name. It returns the bytes written.
func GenerateSnapshot(file string, o SnapshotOptions) (int64, error) {
	f, err := os.Create(file)
	if err != nil {
		return 0, err
	}
	cw := &countWriter{w: bufio.NewWriterSize(f, 1<<20)}
	err = writeSnapshot(cw, o)
	if ferr := cw.w.(*bufio.Writer).Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return cw.n, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

type obj = map[string]any

func writeSnapshot(w io.Writer, o SnapshotOptions) error {
	fmt.Fprintf(w, "{\n \"kind\": %q,\n \"version\": %d,\n \"context\": \"arn:aws:eks:eu-west-1:111122223333:cluster/bench\",\n \"server\": \"https://bench\",\n \"now\": %q,\n \"skipped\": [],\n \"objects\": [\n",
		live.SnapshotKind, live.SnapshotVersion, snapshotNow.Format(time.RFC3339))
	s := &snapshotWriter{w: w, o: o, first: true}
	for _, part := range []func() error{s.karpenter, s.nodes, s.daemonSets, s.deployments} {
		if err := part(); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "\n ]\n}\n")
	return err
}

// snapshotWriter writes the objects of a snapshot as a JSON array's elements,
// counting the pods written so far.
type snapshotWriter struct {
	w     io.Writer
	o     SnapshotOptions
	first bool
	pods  int
}

func (s *snapshotWriter) emit(v obj) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if !s.first {
		if _, err := io.WriteString(s.w, ",\n"); err != nil {
			return err
		}
	}
	s.first = false
	_, err = s.w.Write(b)
	return err
}

// snapshotTime is a timestamp ago before the snapshot was read.
func snapshotTime(ago time.Duration) string { return snapshotNow.Add(-ago).Format(time.RFC3339) }

func snapshotMeta(name, ns string, extra obj) obj {
	m := obj{"name": name, "uid": "uid-" + ns + "-" + name, "creationTimestamp": snapshotTime(48 * time.Hour)}
	if ns != "" {
		m["namespace"] = ns
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func snapshotOwner(kind, name string) []any {
	return []any{obj{"apiVersion": "apps/v1", "kind": kind, "name": name, "controller": true, "uid": "uid-" + name}}
}

func snapshotPool(i int) string { return fmt.Sprintf("np-%03d", i) }

func snapshotNode(i int) string {
	return fmt.Sprintf("ip-10-%d-%d-%d.eu-west-1.compute.internal", i/65536%256, i/256%256, i%256)
}

// snapshotPodSpec is a one-container pod spec requesting 100m and 128Mi, with
// the extra fields.
func snapshotPodSpec(image string, extra obj) obj {
	return snapshotPodSpecRequesting(image, "100m", "128Mi", extra)
}

// snapshotPodSpecRequesting is snapshotPodSpec with other requests.
func snapshotPodSpecRequesting(image, cpu, memory string, extra obj) obj {
	s := obj{"containers": []any{obj{"name": "main", "image": image, "resources": obj{"requests": obj{"cpu": cpu, "memory": memory}}}}}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

// karpenter writes Karpenter, its NodePools and EC2NodeClass.
func (s *snapshotWriter) karpenter() error {
	if err := s.emit(obj{"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": snapshotMeta("default", "", nil),
		"spec": obj{"role": "KarpenterNodeRole-bench", "amiSelectorTerms": []any{obj{"alias": "al2023@latest"}},
			"subnetSelectorTerms":        []any{obj{"tags": obj{"karpenter.sh/discovery": "bench"}}},
			"securityGroupSelectorTerms": []any{obj{"tags": obj{"karpenter.sh/discovery": "bench"}}}}}); err != nil {
		return err
	}
	for i := range s.o.NodePools {
		if err := s.emit(obj{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": snapshotMeta(snapshotPool(i), "", nil),
			"spec": obj{"template": obj{
				"metadata": obj{"labels": obj{"team": snapshotPool(i)}},
				"spec": obj{
					"nodeClassRef": obj{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
					"requirements": []any{
						obj{"key": "kubernetes.io/arch", "operator": "In", "values": []any{"amd64"}},
						obj{"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": []any{"c", "m", "r"}},
					}}}}}); err != nil {
			return err
		}
	}
	ctrl := "karpenter"
	return s.emit(obj{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": snapshotMeta(ctrl, "kube-system", nil),
		"spec": obj{"replicas": 2, "selector": obj{"matchLabels": obj{"app.kubernetes.io/name": "karpenter"}},
			"template": obj{"metadata": obj{"labels": obj{"app.kubernetes.io/name": "karpenter"}},
				"spec": obj{"containers": []any{obj{"name": "controller", "image": "public.ecr.aws/karpenter/controller:1.6.0",
					"env": []any{obj{"name": "CLUSTER_NAME", "value": "bench"}}}}}}},
		"status": obj{"replicas": 2, "readyReplicas": 2}})
}

// nodes writes the nodes and their NodeClaims.
func (s *snapshotWriter) nodes() error {
	for i := range s.o.Nodes {
		p := snapshotPool(i % max(s.o.NodePools, 1))
		claim := fmt.Sprintf("%s-%05d", p, i)
		zone, typ, alloc := "eu-west-1a", "m5.4xlarge", obj{"cpu": "15890m", "memory": "57Gi", "pods": "234"}
		if s.o.UniqueNodes {
			t := snapshotTypes[(i*7+i/len(snapshotTypes))%len(snapshotTypes)]
			zone, typ = "eu-west-1"+string(rune('a'+i%3)), t.name
			alloc = obj{"cpu": fmt.Sprintf("%dm", t.cpu-i%50), "memory": fmt.Sprintf("%dMi", t.mem-i%97), "pods": "110"}
		}
		labels := obj{"karpenter.sh/nodepool": p, "team": p, "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
			"kubernetes.io/hostname": snapshotNode(i), "node.kubernetes.io/instance-type": typ, "karpenter.k8s.aws/instance-category": typ[:1],
			"topology.kubernetes.io/zone": zone}
		pid := fmt.Sprintf("aws:///%s/i-%017x", zone, i)
		if err := s.emit(obj{"apiVersion": "v1", "kind": "Node",
			"metadata": snapshotMeta(snapshotNode(i), "", obj{"labels": labels}),
			"spec":     obj{"providerID": pid},
			"status":   obj{"allocatable": alloc, "conditions": []any{obj{"type": "Ready", "status": "True"}}}}); err != nil {
			return err
		}
		if err := s.emit(obj{"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
			"metadata": snapshotMeta(claim, "", obj{"labels": obj{"karpenter.sh/nodepool": p}, "finalizers": []any{"karpenter.sh/termination"}}),
			"spec": obj{"nodeClassRef": obj{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
				"requirements": []any{
					obj{"key": "karpenter.sh/nodepool", "operator": "In", "values": []any{p}},
					obj{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": []any{typ}}}},
			"status": obj{"providerID": pid, "nodeName": snapshotNode(i), "conditions": []any{
				obj{"type": "Launched", "status": "True", "lastTransitionTime": snapshotTime(47 * time.Hour)},
				obj{"type": "Registered", "status": "True", "lastTransitionTime": snapshotTime(47 * time.Hour)}}}}); err != nil {
			return err
		}
	}
	return nil
}

// daemonSets writes the DaemonSets and their pod on every node.
func (s *snapshotWriter) daemonSets() error {
	for d := range s.o.DaemonSets {
		name := fmt.Sprintf("agent-%02d", d)
		spec := snapshotPodSpec("public.ecr.aws/bench/agent:1", obj{"tolerations": []any{obj{"operator": "Exists"}}, "priorityClassName": "system-node-critical"})
		if err := s.emit(obj{"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": snapshotMeta(name, "kube-system", nil),
			"spec": obj{"selector": obj{"matchLabels": obj{"app": name}}, "template": obj{"metadata": obj{"labels": obj{"app": name}}, "spec": spec}}}); err != nil {
			return err
		}
		for i := range s.o.Nodes {
			ps := snapshotPodSpec("public.ecr.aws/bench/agent:1", obj{"tolerations": []any{obj{"operator": "Exists"}}, "nodeName": snapshotNode(i),
				"affinity": obj{"nodeAffinity": obj{"requiredDuringSchedulingIgnoredDuringExecution": obj{"nodeSelectorTerms": []any{
					obj{"matchFields": []any{obj{"key": "metadata.name", "operator": "In", "values": []any{snapshotNode(i)}}}}}}}}})
			if err := s.emit(obj{"apiVersion": "v1", "kind": "Pod",
				"metadata": snapshotMeta(fmt.Sprintf("%s-%05d", name, i), "kube-system", obj{"labels": obj{"app": name}, "ownerReferences": snapshotOwner("DaemonSet", name)}),
				"spec":     ps, "status": obj{"phase": "Running", "conditions": []any{obj{"type": "Ready", "status": "True"}}}}); err != nil {
				return err
			}
			s.pods++
		}
	}
	return nil
}

// deployments writes Deployments, their ReplicaSets and pods until the
// snapshot holds o.Pods pods.
func (s *snapshotWriter) deployments() error {
	o := s.o
	// every is how many Deployments there are to one with Pending pods when
	// they are spread thinly.
	every := 1
	if o.PendingWorkloads > 0 {
		every = max(1, (o.Pods-o.Nodes*o.DaemonSets)/max(o.Replicas, 1)/o.PendingWorkloads)
	}
	for d := 0; s.pods < o.Pods; d++ {
		ns := fmt.Sprintf("team-%03d", d%max(o.NodePools, 1))
		name := fmt.Sprintf("svc-%05d", d)
		rs := name + "-5d8f7c"
		pool := snapshotPool(d % max(o.NodePools, 1))
		selector := obj{"team": pool}
		kind := d % 40
		cpu, memory := "100m", "128Mi"
		if o.UniqueNodes {
			cpu, memory = fmt.Sprintf("%dm", 50+d%37*10), fmt.Sprintf("%dMi", 64+d%29*32)
		}
		w := workloadShape{kind: kind}
		switch {
		case o.PendingWorkloads > 0:
			// Thinly spread: only one Deployment in every has Pending
			// pods; each selects its NodePool by name and requests
			// resources of its own (one in ten a label no NodePool
			// gives: a real defect).
			w.kind = -1
			if d%every == 0 {
				idx := d / every
				w.pending = true
				selector = obj{"karpenter.sh/nodepool": pool}
				if idx%10 == 7 {
					selector["workload"] = "gpu"
					w.kind = 7
				}
				cpu, memory = fmt.Sprintf("%dm", 100+idx%40*25), fmt.Sprintf("%dMi", 128+idx/40*64)
			}
		case kind == 7:
			// A real defect: it selects a label no NodePool gives.
			selector = obj{"team": pool, "workload": "gpu"}
		case kind == 13:
			// It selects one NodePool by name.
			selector = obj{"karpenter.sh/nodepool": pool}
		}
		spec := snapshotPodSpecRequesting("public.ecr.aws/bench/svc:1", cpu, memory, obj{"nodeSelector": selector})
		labels := obj{"app": name}
		if err := s.emit(obj{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": snapshotMeta(name, ns, nil),
			"spec": obj{"replicas": o.Replicas, "selector": obj{"matchLabels": labels}, "template": obj{"metadata": obj{"labels": labels}, "spec": spec}}}); err != nil {
			return err
		}
		if err := s.emit(obj{"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": snapshotMeta(rs, ns, obj{"ownerReferences": snapshotOwner("Deployment", name)}),
			"spec": obj{"replicas": o.Replicas, "selector": obj{"matchLabels": labels}, "template": obj{"metadata": obj{"labels": labels}, "spec": spec}}}); err != nil {
			return err
		}
		for r := 0; r < o.Replicas && s.pods < o.Pods; r++ {
			if err := s.replica(d, r, w, ns, rs, labels, spec); err != nil {
				return err
			}
		}
	}
	return nil
}

// workloadShape is what decides which of a Deployment's replicas are Pending:
// kind 7 is a real defect (all Pending); pending marks a Deployment with
// Pending pods when they are spread thinly (kind -1 then, unless a defect).
type workloadShape struct {
	kind    int
	pending bool
}

// replica writes replica r of Deployment d: Running on a node, or Pending
// with the scheduler's FailedScheduling event (one pod in PendingEvery, and
// every pod of a Deployment whose selector no NodePool satisfies; spread
// thinly, a third of the replicas of the Deployments with Pending pods).
func (s *snapshotWriter) replica(d, r int, w workloadShape, ns, rs string, labels, spec obj) error {
	o := s.o
	pname := fmt.Sprintf("%s-%05d", rs, r)
	ps := obj{}
	for k, v := range spec {
		ps[k] = v
	}
	status := obj{"phase": "Running", "conditions": []any{obj{"type": "Ready", "status": "True"}}}
	pending := o.PendingEvery > 0 && (s.pods%o.PendingEvery == 0 || w.kind == 7)
	if o.PendingWorkloads > 0 {
		pending = w.kind == 7 || w.pending && r%3 == 0
	}
	created := snapshotTime(47 * time.Hour)
	if pending {
		status = obj{"phase": "Pending", "conditions": []any{obj{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}}}
		created = snapshotTime(2 * time.Minute)
		if w.kind == 7 {
			created = snapshotTime(3 * time.Hour)
		}
	} else {
		node := (d*o.Replicas + r) % max(o.Nodes, 1)
		if o.UniqueNodes {
			// Scattered, so that every node holds pods of its own mix.
			node = int(uint64(d*o.Replicas+r) * 2654435761 % uint64(max(o.Nodes, 1)))
		}
		ps["nodeName"] = snapshotNode(node)
	}
	m := snapshotMeta(pname, ns, obj{"labels": labels, "ownerReferences": snapshotOwner("ReplicaSet", rs)})
	m["creationTimestamp"] = created
	if err := s.emit(obj{"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": ps, "status": status}); err != nil {
		return err
	}
	if pending {
		msg := fmt.Sprintf("0/%d nodes are available: %d node(s) didn't match Pod's node affinity/selector. preemption: 0/%d nodes are available: %d Preemption is not helpful for scheduling.", o.Nodes, o.Nodes, o.Nodes, o.Nodes)
		if err := s.emit(obj{"apiVersion": "v1", "kind": "Event", "metadata": snapshotMeta(pname+".18a1b2c3d4e5f6a7", ns, nil),
			"involvedObject": obj{"apiVersion": "v1", "kind": "Pod", "namespace": ns, "name": pname},
			"reason":         "FailedScheduling", "message": msg, "type": "Warning", "count": 3,
			"source": obj{"component": "default-scheduler"}, "lastTimestamp": snapshotTime(time.Minute)}); err != nil {
			return err
		}
	}
	s.pods++
	return nil
}
