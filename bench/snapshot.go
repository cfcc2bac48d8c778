package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
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
}

// Snapshot sizes: 10k pods on 500 nodes and 20 NodePools, and ten times that.
var (
	SnapshotMedium = SnapshotOptions{Nodes: 500, NodePools: 20, DaemonSets: 10, Pods: 10_000, Replicas: 20, PendingEvery: 50}
	SnapshotLarge  = SnapshotOptions{Nodes: 5_000, NodePools: 200, DaemonSets: 10, Pods: 100_000, Replicas: 20, PendingEvery: 50}
)

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
	s := obj{"containers": []any{obj{"name": "main", "image": image, "resources": obj{"requests": obj{"cpu": "100m", "memory": "128Mi"}}}}}
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
		pid := fmt.Sprintf("aws:///eu-west-1a/i-%017x", i)
		if err := s.emit(obj{"apiVersion": "v1", "kind": "Node",
			"metadata": snapshotMeta(snapshotNode(i), "", obj{"labels": obj{"karpenter.sh/nodepool": p, "team": p, "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
				"node.kubernetes.io/instance-type": "m5.4xlarge", "karpenter.k8s.aws/instance-category": "m"}}),
			"spec":   obj{"providerID": pid},
			"status": obj{"allocatable": obj{"cpu": "15890m", "memory": "57Gi", "pods": "234"}, "conditions": []any{obj{"type": "Ready", "status": "True"}}}}); err != nil {
			return err
		}
		if err := s.emit(obj{"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
			"metadata": snapshotMeta(claim, "", obj{"labels": obj{"karpenter.sh/nodepool": p}, "finalizers": []any{"karpenter.sh/termination"}}),
			"spec": obj{"nodeClassRef": obj{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
				"requirements": []any{
					obj{"key": "karpenter.sh/nodepool", "operator": "In", "values": []any{p}},
					obj{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": []any{"m5.4xlarge"}}}},
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
	for d := 0; s.pods < o.Pods; d++ {
		ns := fmt.Sprintf("team-%03d", d%max(o.NodePools, 1))
		name := fmt.Sprintf("svc-%05d", d)
		rs := name + "-5d8f7c"
		selector := obj{"team": snapshotPool(d % max(o.NodePools, 1))}
		kind := d % 40
		switch {
		case kind == 7:
			// A real defect: it selects a label no NodePool gives.
			selector = obj{"team": snapshotPool(d % max(o.NodePools, 1)), "workload": "gpu"}
		case kind == 13:
			// It selects one NodePool by name.
			selector = obj{"karpenter.sh/nodepool": snapshotPool(d % max(o.NodePools, 1))}
		}
		spec := snapshotPodSpec("public.ecr.aws/bench/svc:1", obj{"nodeSelector": selector})
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
			if err := s.replica(d, r, kind, ns, rs, labels, selector); err != nil {
				return err
			}
		}
	}
	return nil
}

// replica writes replica r of Deployment d: Running on a node, or Pending
// with the scheduler's FailedScheduling event (one pod in PendingEvery, and
// every pod of a Deployment whose selector no NodePool satisfies).
func (s *snapshotWriter) replica(d, r, kind int, ns, rs string, labels, selector obj) error {
	o := s.o
	pname := fmt.Sprintf("%s-%05d", rs, r)
	ps := snapshotPodSpec("public.ecr.aws/bench/svc:1", obj{"nodeSelector": selector})
	status := obj{"phase": "Running", "conditions": []any{obj{"type": "Ready", "status": "True"}}}
	pending := o.PendingEvery > 0 && (s.pods%o.PendingEvery == 0 || kind == 7)
	created := snapshotTime(47 * time.Hour)
	if pending {
		status = obj{"phase": "Pending", "conditions": []any{obj{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}}}
		created = snapshotTime(2 * time.Minute)
		if kind == 7 {
			created = snapshotTime(3 * time.Hour)
		}
	} else {
		ps["nodeName"] = snapshotNode((d*o.Replicas + r) % max(o.Nodes, 1))
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
