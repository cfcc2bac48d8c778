//go:build livecontrollers

package livecontrollers

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/internal/testenv"
)

// csiDriver is the driver of the scenario's volumes; ebsNode is the DaemonSet
// that plays its node plugin, shaped like the aws-ebs-csi-driver chart's with
// node.tolerateAllTaints false before chart 2.36.0: it tolerates NoExecute
// taints only, so not karpenter.sh/disrupted:NoSchedule.
const csiDriver = "ebs.csi.aws.com"

// volumeInUse is the scenario's volume as a node reports it in use.
const volumeInUse = "kubernetes.io/csi/" + csiDriver + "^vol-0f3a1b2c3d4e5f601"

const ebsNode = `apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata:
  name: ebs.csi.aws.com
spec:
  attachRequired: true
  podInfoOnMount: false
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: ebs-csi-node
  namespace: kube-system
  labels: {app.kubernetes.io/name: aws-ebs-csi-driver}
spec:
  selector:
    matchLabels: {app: ebs-csi-node}
  template:
    metadata:
      labels: {app: ebs-csi-node, app.kubernetes.io/name: aws-ebs-csi-driver}
    spec:
      priorityClassName: system-node-critical
      terminationGracePeriodSeconds: 0
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: workload, operator: In, values: [data, batch]}]
      tolerations:
      - {operator: Exists, effect: NoExecute, tolerationSeconds: 300}
      containers:
      - name: ebs-plugin
        image: public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.35.0
        args: [node, --endpoint=$(CSI_ENDPOINT)]
        resources:
          requests: {cpu: 10m, memory: 40Mi}
      - name: node-driver-registrar
        image: public.ecr.aws/eks-distro/kubernetes-csi/node-driver-registrar:v2.11.1-eks-1-31-4
        resources:
          requests: {cpu: 10m, memory: 40Mi}
`

// volumeStandIns plays the two parts of a CSI volume's life no controller of
// the cluster plays, in the simplest form that keeps the controllers' own
// behaviour: the driver's external-attacher (a VolumeAttachment the
// attach/detach controller creates is marked attached) and the kubelet's volume
// manager (a node reports a volume in use, status.volumesInUse, from the moment
// a pod using it runs there until the volume is unmounted; unmounting needs the
// driver's node plugin on the node). The unmount here waits three minutes after
// the pod is gone, far longer than Karpenter takes to evict a drained node's
// DaemonSet pods however loaded the machine (seconds alone, about a second
// after the workload's pod): the plugin that does not tolerate the disruption
// taint is always gone first, the race the scenario is about, won the same way
// every run. kube-controller-manager's attach/detach controller does not
// detach a volume a node reports in use, and Karpenter waits for the node's
// VolumeAttachments to go before it terminates the instance.
type volumeStandIns struct {
	cs     kubernetes.Interface
	driver string
	// pluginApp is the app label of the node plugin's pods.
	pluginApp string
	// unmountDelay is how long after its last pod left a volume unmounts.
	unmountDelay time.Duration

	mu sync.Mutex
	// inUse is what each node reports in use; lastUse when a pod last used it.
	inUse   map[string]map[string]bool
	lastUse map[string]time.Time
}

func startVolumeStandIns(t *testing.T, c *testenv.Cluster) *volumeStandIns {
	v := &volumeStandIns{cs: c.Client, driver: csiDriver, pluginApp: "ebs-csi-node", unmountDelay: 3 * time.Minute,
		inUse: map[string]map[string]bool{}, lastUse: map[string]time.Time{}}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for ctx.Err() == nil {
			v.step(ctx)
			time.Sleep(500 * time.Millisecond)
		}
	}()
	return v
}

func (v *volumeStandIns) step(ctx context.Context) {
	vas, err := v.cs.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, va := range vas.Items {
			if va.Spec.Attacher == v.driver && !va.Status.Attached && va.DeletionTimestamp == nil {
				va.Status.Attached = true
				_, _ = v.cs.StorageV1().VolumeAttachments().UpdateStatus(ctx, &va, metav1.UpdateOptions{})
			}
		}
	}
	pods, err := v.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	pvs, err := v.cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	// The unique name the attach/detach controller gives a CSI volume.
	volumeOfClaim := map[string]string{}
	for _, pv := range pvs.Items {
		if pv.Spec.CSI != nil && pv.Spec.CSI.Driver == v.driver && pv.Spec.ClaimRef != nil {
			volumeOfClaim[pv.Spec.ClaimRef.Namespace+"/"+pv.Spec.ClaimRef.Name] = fmt.Sprintf("kubernetes.io/csi/%s^%s", v.driver, pv.Spec.CSI.VolumeHandle)
		}
	}
	plugin := map[string]bool{}
	used := map[string]map[string]bool{}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" {
			continue
		}
		if p.Labels["app"] == v.pluginApp && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			plugin[p.Spec.NodeName] = true
		}
		if p.Status.Phase != corev1.PodRunning {
			continue
		}
		for _, vol := range p.Spec.Volumes {
			if vol.PersistentVolumeClaim == nil {
				continue
			}
			if name := volumeOfClaim[p.Namespace+"/"+vol.PersistentVolumeClaim.ClaimName]; name != "" {
				if used[p.Spec.NodeName] == nil {
					used[p.Spec.NodeName] = map[string]bool{}
				}
				used[p.Spec.NodeName][name] = true
			}
		}
	}
	v.mu.Lock()
	now := time.Now()
	changed := map[string]bool{}
	for node, vols := range used {
		for vol := range vols {
			if v.inUse[node] == nil {
				v.inUse[node] = map[string]bool{}
			}
			if !v.inUse[node][vol] {
				v.inUse[node][vol] = true
				changed[node] = true
			}
			v.lastUse[node+"|"+vol] = now
		}
	}
	for node, vols := range v.inUse {
		for vol := range vols {
			if used[node][vol] {
				continue
			}
			// No pod uses it any more: it unmounts once the delay has
			// passed, if the node plugin is there to do it.
			if plugin[node] && now.Sub(v.lastUse[node+"|"+vol]) >= v.unmountDelay {
				delete(vols, vol)
				changed[node] = true
			}
		}
	}
	patches := map[string][]string{}
	for node := range changed {
		var list []string
		for vol := range v.inUse[node] {
			list = append(list, vol)
		}
		sort.Strings(list)
		patches[node] = list
	}
	v.mu.Unlock()
	for node, list := range patches {
		if list == nil {
			list = []string{}
		}
		body, _ := json.Marshal(map[string]any{"status": map[string]any{"volumesInUse": list}})
		_, _ = v.cs.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, body, metav1.PatchOptions{}, "status")
	}
}

// F3: drift replaces a node that holds a volume; Karpenter taints it
// karpenter.sh/disrupted, evicts the workload, then the CSI node plugin that
// does not tolerate the taint, before the volume is unmounted; the
// VolumeAttachment stays, Karpenter waits on it, and the workload's new pod
// meets the volume still attached to the old node. Consolidation of an empty
// node evicts the same DaemonSet's pod.
func TestDisruptionEvictsTheCSINodePlugin(t *testing.T) {
	t.Parallel()
	c := shared
	obs := observe(t, c.Config)
	startVolumeStandIns(t, c)
	apply(t, c, namespace("f3"), ebsNode,
		`apiVersion: v1
kind: PersistentVolume
metadata:
  name: f3-data-db-0
spec:
  capacity: {storage: 10Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  claimRef: {namespace: f3, name: data-db-0}
  csi:
    driver: ebs.csi.aws.com
    volumeHandle: vol-0f3a1b2c3d4e5f601
    fsType: ext4`,
		// The claim the StatefulSet adopts, made beforehand and bound before
		// its pod is: the pod's first scheduling attempt then meets a bound
		// claim, and no requeue after the binding is needed (a pod the
		// scheduler set aside for an unbound claim may wait minutes on a
		// loaded machine).
		`apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data-db-0
  namespace: f3
  labels: {app: db}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: ""
  volumeName: f3-data-db-0
  resources:
    requests: {storage: 10Gi}`,
	)
	waitFor(t, c, "the claim f3/data-db-0 is bound to its volume", time.Minute, func(ctx context.Context) (bool, string) {
		pvc, err := c.Client.CoreV1().PersistentVolumeClaims("f3").Get(ctx, "data-db-0", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return pvc.Status.Phase == corev1.ClaimBound, "phase " + string(pvc.Status.Phase)
	})
	apply(t, c,
		`apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
  namespace: f3
spec:
  serviceName: db
  replicas: 1
  selector:
    matchLabels: {app: db}
  template:
    metadata:
      labels: {app: db}
    spec:
      terminationGracePeriodSeconds: 0
      nodeSelector: {workload: data}
      containers:
      - name: db
        image: registry.example/db:1
        resources:
          requests: {cpu: 500m, memory: 256Mi}
        volumeMounts:
        - {name: data, mountPath: /var/lib/db}
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      storageClassName: ""
      resources:
        requests: {storage: 10Gi}`,
	)
	var oldNode string
	waitFor(t, c, "db-0 runs on a node of f3-data with its volume attached", 4*time.Minute, func(ctx context.Context) (bool, string) {
		pods := podsOf(ctx, c, "f3", "db")
		if !running(pods, 1) {
			return false, "db-0 not running"
		}
		oldNode = pods[0].Spec.NodeName
		vas, err := c.Client.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		attached := false
		for _, va := range vas.Items {
			attached = attached || va.Spec.NodeName == oldNode && va.Status.Attached
		}
		if !attached {
			return false, "no attached VolumeAttachment on " + oldNode
		}
		// The node reports the volume in use (the kubelet's part, played
		// above) before the drift: the attach/detach controller then never
		// detaches it while the pod is gone and the volume not unmounted.
		node, err := c.Client.CoreV1().Nodes().Get(ctx, oldNode, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if !slices.Contains(node.Status.VolumesInUse, corev1.UniqueVolumeName(volumeInUse)) {
			return false, oldNode + " does not report " + volumeInUse + " in use"
		}
		return true, ""
	})
	// Drift: a new template label changes the NodePool's hash.
	patch := []byte(`{"spec":{"template":{"metadata":{"labels":{"rev":"2"}}}}}`)
	if _, err := dynamicClient(t, c).Resource(nodePools).Patch(context.Background(), dataPool, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "Karpenter drains the drifted node and waits on its VolumeAttachment", 5*time.Minute, func(ctx context.Context) (bool, string) {
		if len(obs.eventsOf("karpenter", "AwaitingVolumeDetachment", "Node/"+oldNode)) > 0 {
			return true, ""
		}
		return false, "no AwaitingVolumeDetachment event on " + oldNode
	})
	d := diagnose(t, c.Kubeconfig)
	mine := func(f finding) bool {
		return f.Object.Namespace == "f3" || strings.HasPrefix(f.Object.Name, "f3-") || f.Object.Name == "ebs-csi-node" ||
			f.Object.Name == oldNode || f.Object.Kind == "VolumeAttachment"
	}
	facts := func() []fact {
		return obs.about(func(f fact) bool {
			return strings.HasPrefix(f.Object, "Pod/f3/") || strings.HasPrefix(f.Object, "Pod/kube-system/ebs-csi-node") ||
				strings.Contains(f.Object, "f3-") || strings.HasPrefix(f.Object, "VolumeAttachment/")
		})
	}
	sideBySide(t, facts(), d.mine(mine))
	d.sameKeys(t, mine)
	var va string
	for _, f := range facts() {
		if f.Kind == "created" && strings.HasPrefix(f.Object, "VolumeAttachment/") && strings.HasSuffix(f.Text, "to node "+oldNode) {
			va = strings.TrimPrefix(f.Object, "VolumeAttachment/")
		}
	}
	want := []string{
		"disruption-daemonset-evicted error DaemonSet/kube-system/ebs-csi-node",
		"disruption-toleration-missing error DaemonSet/kube-system/ebs-csi-node",
		"volumeattachment-stale error VolumeAttachment/" + va,
	}
	if diff := cmp.Diff(want, d.live.keys(func(f finding) bool { return mine(f) && f.Severity != "info" })); diff != "" {
		t.Errorf("findings while Karpenter waits on the volume (-want +got):\n%s", diff)
	}
	// What eksdoctor reports happened: Karpenter tainted the node, evicted
	// the plugin's pod, and waits on the attachment.
	if len(obs.about(func(f fact) bool {
		return f.Kind == "taints" && f.Object == "Node/"+oldNode && strings.Contains(f.Text, "karpenter.sh/disrupted:NoSchedule")
	})) == 0 {
		t.Errorf("Karpenter never tainted %s karpenter.sh/disrupted:NoSchedule", oldNode)
	}
	evicted := obs.about(func(f fact) bool {
		return f.Kind == "event" && f.By == "karpenter" && strings.HasPrefix(f.Object, "Pod/kube-system/ebs-csi-node-") && f.Text == "Evicted: Evicted pod: Drifted"
	})
	if len(evicted) == 0 {
		t.Error("Karpenter did not evict the CSI node plugin's pod")
	}
	if left := obs.about(func(f fact) bool {
		return f.Kind == "deleted" && strings.HasPrefix(f.Object, "Pod/kube-system/ebs-csi-node-") && f.Text == "gone from node "+oldNode
	}); len(left) > 0 {
		serving.followed(t, left[0], `check="disruption-daemonset-evicted"`)
	} else {
		t.Error("the CSI node plugin's pod never left the drained node")
	}
	gone := d.live.of(t, "disruption-daemonset-evicted", "DaemonSet/kube-system/ebs-csi-node")
	for _, part := range []string{oldNode, "karpenter.sh/disrupted:NoSchedule", va} {
		if !strings.Contains(gone.text(), part) {
			t.Errorf("disruption-daemonset-evicted lacks %q:\n%s", part, gone.text())
		}
	}
	stale := d.live.of(t, "volumeattachment-stale", "VolumeAttachment/"+va)
	for _, part := range []string{"f3-data-db-0", "vol-0f3a1b2c3d4e5f601", "f3/data-db-0"} {
		if !strings.Contains(stale.text(), part) {
			t.Errorf("volumeattachment-stale lacks %q:\n%s", part, stale.text())
		}
	}
	// The attach/detach controller's own words for the new pod that waits.
	if waits := obs.eventsOf("attachdetach-controller", "FailedAttachVolume", "Pod/f3/db-0"); len(waits) == 0 {
		t.Error("the attach/detach controller reported no FailedAttachVolume for the new db-0")
	} else if !strings.Contains(stale.text(), strconv.Quote(waits[0])) {
		t.Errorf("volumeattachment-stale does not quote the attach/detach controller's %q:\n%s", waits[0], stale.text())
	}

	// Consolidation: an empty node of f3-batch is deleted, and Karpenter
	// evicts the same DaemonSet's pod from it.
	apply(t, c, deployment("f3", "batch", 1, "500m", "nodeSelector: {workload: batch}"))
	var batchNode string
	waitFor(t, c, "Karpenter launches a node for f3/batch", 3*time.Minute, func(ctx context.Context) (bool, string) {
		pods := podsOf(ctx, c, "f3", "batch")
		if !running(pods, 1) {
			return false, "f3/batch not running"
		}
		batchNode = pods[0].Spec.NodeName
		return true, ""
	})
	scale := []byte(`{"spec":{"replicas":0}}`)
	if _, err := c.Client.AppsV1().Deployments("f3").Patch(context.Background(), "batch", types.MergePatchType, scale, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, "Karpenter consolidates the empty node and evicts the plugin from it", 3*time.Minute, func(ctx context.Context) (bool, string) {
		for _, f := range obs.about(func(f fact) bool {
			return f.Kind == "event" && f.By == "karpenter" && f.Text == "Evicted: Evicted pod: Empty"
		}) {
			if strings.HasPrefix(f.Object, "Pod/kube-system/ebs-csi-node-") {
				return true, ""
			}
		}
		return false, "no eviction of ebs-csi-node by consolidation on " + batchNode
	})
	d = diagnose(t, c.Kubeconfig)
	sideBySide(t, facts(), d.mine(mine))
	missing := d.live.of(t, "disruption-toleration-missing", "DaemonSet/kube-system/ebs-csi-node")
	for _, part := range []string{`NodePools "f3-batch", "f3-data"`, "does not tolerate karpenter.sh/disrupted:NoSchedule"} {
		if !strings.Contains(missing.text(), part) {
			t.Errorf("disruption-toleration-missing lacks %q:\n%s", part, missing.text())
		}
	}
}
