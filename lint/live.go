package lint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/identity"
	"github.com/eksdoctor/eksdoctor/sim"
)

// The live checks read what only a running cluster shows: Pending pods with the
// scheduler's own words, NodeClaims that launched an instance that never joined,
// objects waiting on a finalizer no controller will remove, volumes left attached
// to nodes that are gone, and node-critical DaemonSet pods Karpenter evicted from
// a node it is draining. Every check here is silent on static inputs
// (Model.Live == nil) and judges time only by Model.Live.Now, the moment the
// cluster was read, so a snapshot analysed later gives the same findings.

const (
	// pendingGrace: a pod that fits capacity Karpenter can launch is Pending for
	// a minute or two while the node comes up; only longer is worth a finding.
	pendingGrace = 5 * time.Minute
	// registrationGrace: an instance registers as a node within a couple of
	// minutes of its launch; Karpenter gives up on the NodeClaim after 15.
	registrationGrace = 5 * time.Minute
)

var nodeClaimNotRegistered = &Check{
	ID:       "nodeclaim-not-registered",
	Title:    "NodeClaim launched an instance that never joined the cluster",
	Family:   "F4",
	Severity: Error,
	Live:     true,
	Doc: Doc{
		What: "A NodeClaim has been `Launched=True` for more than five minutes (by the cluster's clock when it was read) without becoming `Registered=True`: Karpenter launched an EC2 instance whose kubelet never registered a Node. NodeClaims are grouped by their EC2NodeClass, whose node role is then checked against the aws-auth ConfigMap of the cluster with the same rules as `node-role-unauthorized` (username `system:node:{{EC2PrivateDNSName}}`, groups `system:bootstrappers` and `system:nodes`, no IAM path in the rolearn). The finding quotes the NodeClaims' conditions and events and says whether the node role mapping explains the failure. Access entries are not visible from inside the cluster, so a missing aws-auth entry is the cause unless an `EC2_LINUX` access entry exists.",
		Why:  "The instance runs (and is billed) but never takes pods: the kubelet logs `Unable to register node with API server\" err=\"Unauthorized\"`, Karpenter deletes the NodeClaim after 15 minutes and launches another one that fails the same way, while the pods that needed the node stay Pending.",
		Fix:  "Authorize the EC2NodeClass node role as a node: an access entry of type `EC2_LINUX` (`aws eks create-access-entry --type EC2_LINUX`), or with authentication mode `CONFIG_MAP`/`API_AND_CONFIG_MAP` an aws-auth mapRoles entry (`eksctl create iamidentitymapping`), then correct the configuration that manages them so the next apply keeps it. When the mapping is correct, look at the instance: its console output or the kubelet log names the cause (security groups, subnets without a route to the API server, a custom AMI's user data).",
		Before: `apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata: {name: default-x7k2p}
spec:
  nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
status:
  providerID: aws:///eu-west-1a/i-0123456789abcdef0
  conditions:
  - {type: Launched, status: "True", lastTransitionTime: "2026-01-02T03:00:00Z"}
  - {type: Registered, status: Unknown, reason: AwaitingReconciliation}
---
# EC2NodeClass default has role KarpenterNodeRole-demo; aws-auth maps only the node group role
apiVersion: v1
kind: ConfigMap
metadata: {name: aws-auth, namespace: kube-system}
data:
  mapRoles: |
    - rolearn: arn:aws:iam::111122223333:role/system-ng
      username: system:node:{{EC2PrivateDNSName}}
      groups: [system:bootstrappers, system:nodes]`,
		After: `apiVersion: v1
kind: ConfigMap
metadata: {name: aws-auth, namespace: kube-system}
data:
  mapRoles: |
    - rolearn: arn:aws:iam::111122223333:role/system-ng
      username: system:node:{{EC2PrivateDNSName}}
      groups: [system:bootstrappers, system:nodes]
    - rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-demo
      username: system:node:{{EC2PrivateDNSName}}
      groups: [system:bootstrappers, system:nodes]`,
		Format: "yaml",
	},
	Run: runNodeClaimNotRegistered,
}

var finalizerStuck = &Check{
	ID:       "finalizer-stuck",
	Title:    "Karpenter object being deleted while no controller can finalize it",
	Family:   "F5",
	Severity: Error,
	Live:     true,
	Doc: Doc{
		What: "A NodePool, NodeClaim, EC2NodeClass or Node is being deleted (it has a deletionTimestamp) and still carries a Karpenter finalizer (`karpenter.sh/termination`, `karpenter.k8s.aws/termination`), while the Karpenter controller that removes it is absent from the cluster or has no ready pod. The finding names the EC2 instances at risk (from the NodeClaims' and Nodes' `providerID`) and how long the deletion has waited. A Node is reported with its NodeClaim. When the controller cannot be seen (Deployments not readable, or the read restricted to another namespace) the finding is `info`: it could not be verified.",
		Why:  "Only a running controller drains the node, waits for its volumes to detach, terminates the instance and then removes the finalizer. Without it the objects stay forever, `terraform destroy` and `kubectl delete` hang, and the instances keep running outside any state, billed, until someone terminates them by hand.",
		Fix:  "Bring the controller back: reinstall the Karpenter release that created the objects (same chart version and values), or make its pods schedulable and ready (see `pod-unschedulable` and `bootstrap-deadlock` for its Pending pods). It then finishes the deletions itself. Only as a last resort, terminate the instances yourself (`aws ec2 terminate-instances`) and remove the finalizer (`kubectl patch ... --type json` with a test of the finalizer's position, so no other finalizer is dropped).",
		Before: `# the Karpenter Deployment was uninstalled before the NodePool was deleted
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: default-x7k2p
  deletionTimestamp: "2026-01-02T02:00:00Z"
  finalizers: [karpenter.sh/termination]
status:
  providerID: aws:///eu-west-1a/i-0123456789abcdef0`,
		After: `# the controller runs again (helm upgrade --install karpenter ...); it terminates
# i-0123456789abcdef0 and removes the finalizer, and the NodeClaim is gone
apiVersion: apps/v1
kind: Deployment
metadata: {name: karpenter, namespace: kube-system}
status: {replicas: 2, readyReplicas: 2}`,
		Format: "yaml",
	},
	Run: runFinalizerStuck,
}

var volumeAttachmentStale = &Check{
	ID:       "volumeattachment-stale",
	Title:    "Volume still attached to a node that is gone or being disrupted",
	Family:   "F3",
	Severity: Error,
	Live:     true,
	Doc: Doc{
		What: "A VolumeAttachment keeps a persistent volume attached to a node that no longer exists, or that is being deleted or disrupted (it carries Karpenter's disruption taint) while no pod on it uses the volume any more. The finding names the PersistentVolume, its claim, the CSI driver, the EBS volume ID, and the pods waiting for the volume elsewhere, quoting their `Multi-Attach error` events.",
		Why:  "The volume cannot be attached to the node where its pod is rescheduled: the pod stays in ContainerCreating with `Multi-Attach error for volume \"pvc-...\" Volume is already exclusively attached to one node and can't be attached to another` until the attach/detach controller force-detaches it after six minutes, or forever when the CSI controller cannot process the detach. It usually means the CSI node plugin left the node before the volumes were unmounted (see `disruption-daemonset-evicted`).",
		Fix:  "Make the CSI node plugin tolerate Karpenter's disruption taint (`disruption-toleration-missing`) so it unmounts volumes before it leaves. For the attachment at hand: check the volume in EC2 (`aws ec2 describe-volumes`); check that the CSI controller runs; once the volume is detached in EC2 (or its instance is terminated), remove the VolumeAttachment's finalizer so the volume can attach elsewhere.",
		Before: `apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: csi-3f4e5d6c7b8a}
spec:
  attacher: ebs.csi.aws.com
  nodeName: ip-10-0-2-20.ec2.internal   # this Node no longer exists
  source: {persistentVolumeName: pvc-0a1b2c3d}
status: {attached: true}`,
		After: `# no VolumeAttachment for pvc-0a1b2c3d on a node that is gone: the volume is
# attached to the node its pod runs on
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: csi-9e8d7c6b5a4f}
spec:
  attacher: ebs.csi.aws.com
  nodeName: ip-10-0-3-30.ec2.internal
  source: {persistentVolumeName: pvc-0a1b2c3d}
status: {attached: true}`,
		Format: "yaml",
	},
	Run: runVolumeAttachmentStale,
}

// disruptionDaemonSetEvicted is the live evidence of F3. It has its own ID rather
// than adding to disruption-toleration-missing: that check judges a DaemonSet's
// configuration (one finding per DaemonSet, static and live alike, fixed in its
// chart or add-on), while this one reports an incident on one node now, which
// matters even once the configuration is fixed (the volumes on that node are
// still attached) and can be silenced separately.
var disruptionDaemonSetEvicted = &Check{
	ID:       "disruption-daemonset-evicted",
	Title:    "Node-critical DaemonSet pod gone from a node Karpenter is draining",
	Family:   "F3",
	Severity: Error,
	Live:     true,
	Doc: Doc{
		What: "A node carries Karpenter's disruption taint (`karpenter.sh/disrupted:NoSchedule`, or `karpenter.sh/disruption=disrupting:NoSchedule` before v1) and a node-critical DaemonSet that would otherwise run there (a CSI node plugin, a CNI agent) has no pod on it, or only a terminating one, while workload pods with persistent volumes of that plugin's driver are still on the node or their volumes are still attached to it. The DaemonSet does not tolerate the taint, so Karpenter evicted its pod with the others. This is the live evidence of what `disruption-toleration-missing` predicts from the configuration; it is reported per node and DaemonSet.",
		Why:  "Without its CSI node plugin the node cannot unmount, unstage and detach the volumes of the pods still leaving it: the VolumeAttachments stay, and the pods' replacements on other nodes fail with `Multi-Attach error` until the attach/detach controller force-detaches after six minutes. Without the CNI agent, pods still shutting down lose their network.",
		Fix:  "Make the DaemonSet tolerate the disruption taint where it is configured (`disruption-toleration-missing` gives the fix in the chart's values or the add-on's configuration); the patch in the finding adds the toleration to the live object, which the next Helm upgrade or add-on update replaces. Then check the VolumeAttachments left on the node (`volumeattachment-stale`).",
		Before: `apiVersion: v1
kind: Node
metadata: {name: ip-10-0-2-20.ec2.internal}
spec:
  taints: [{key: karpenter.sh/disrupted, effect: NoSchedule}]
# pods on it: apps/db-0 (PVC data-db-0, ebs.csi.aws.com); no ebs-csi-node pod`,
		After: `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ebs-csi-node, namespace: kube-system}
spec:
  template:
    spec:
      tolerations:
      - {operator: Exists, effect: NoExecute}
      - {key: karpenter.sh/disrupted, operator: Exists, effect: NoSchedule}`,
		Format: "yaml",
	},
	Run: runDisruptionDaemonSetEvicted,
}

var liveResourceSkipped = &Check{
	ID:       "live-resource-skipped",
	Title:    "Cluster resource could not be read",
	Family:   "input",
	Severity: Info,
	Live:     true,
	Doc: Doc{
		What: "eksdoctor could not read a resource of the cluster: the credentials may not list it (Forbidden), the API server does not serve it (the Karpenter CRDs are not installed, or only another API version is), or the server kept failing on it. The finding says which checks it leaves incomplete; everything else was read and analysed.",
		Why:  "What eksdoctor cannot read it cannot judge: without pods there is no Pending pod to explain, without Deployments the Karpenter controller's state is unknown. A report without this note would look cleaner than the cluster is.",
		Fix:  "Bind the credentials to the read-only roles of deploy/rbac.yaml (they grant exactly what eksdoctor reads, and no Secrets), or run with credentials that may list the resource. Nothing is needed when the resource is simply not installed.",
		Before: `# the user may not list pods
$ kubectl auth can-i list pods --all-namespaces
no`,
		After: `$ kubectl apply -f deploy/rbac.yaml   # and bind eksdoctor-reader to the user
$ kubectl auth can-i list pods --all-namespaces
yes`,
		Format: "shell",
	},
	Run: runLiveResourceSkipped,
}

// ---- time ----

// ageAt is how long before now a timestamp was; ok is false when either is
// unknown.
func ageAt(now time.Time, haveNow bool, ts string) (time.Duration, bool) {
	if !haveNow || ts == "" {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return 0, false
	}
	return now.Sub(t), true
}

// ageText renders a duration the way kubectl prints ages: 45s, 12m, 3h12m, 2d4h.
func ageText(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%dm", h, m)
	}
	days, h := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
	if h == 0 {
		return fmt.Sprintf("%dd", days)
	}
	return fmt.Sprintf("%dd%dh", days, h)
}

// ---- what was read ----

// liveReadNamespace reports whether objects of a namespace were read.
func liveReadNamespace(m *cluster.Model, ns string) bool {
	return m.Live == nil || m.Live.Namespace == "" || m.Live.Namespace == ns
}

func deletionTimestamp(o *cluster.Object) string { return o.String("metadata.deletionTimestamp") }

func creationTimestamp(o *cluster.Object) string { return o.String("metadata.creationTimestamp") }

func objectFinalizers(o *cluster.Object) []string {
	l, _ := o.Get("metadata.finalizers").([]any)
	var out []string
	for _, it := range l {
		if s, ok := it.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// podRunsOn reports whether a pod still occupies a node (bound, not finished).
func podRunsOn(p *cluster.Pod, node string) bool {
	return p.Spec.NodeName == node && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// helmRelease returns the Helm release that owns an object, from the annotations
// Helm 3 writes on everything it installs.
func helmRelease(o *cluster.Object) (name, namespace string, ok bool) {
	name = o.Annotations["meta.helm.sh/release-name"]
	namespace = o.Annotations["meta.helm.sh/release-namespace"]
	if namespace == "" {
		namespace = o.Namespace
	}
	return name, namespace, name != ""
}

// ---- commands ----

// shellQuote quotes a word for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`{}[]*?!;&|<>()#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// compactJSON renders a patch without HTML escaping, keys sorted.
func compactJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "{}"
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// kubectlResource names an object's resource for kubectl: the lowercase kind,
// qualified by its API group unless the group is a core one.
func kubectlResource(o *cluster.Object) string {
	kind := strings.ToLower(o.Kind)
	g := ""
	if i := strings.IndexByte(o.APIVersion, '/'); i >= 0 {
		g = o.APIVersion[:i]
	}
	switch g {
	case "", "apps", "batch":
		return kind
	}
	return kind + "." + g
}

// kubectlTarget is "deployment web -n apps".
func kubectlTarget(o *cluster.Object) string {
	s := kubectlResource(o) + " " + shellQuote(o.Name)
	if o.Namespace != "" {
		s += " -n " + shellQuote(o.Namespace)
	}
	return s
}

// livePatch is a command that merges patch into a live object.
func livePatch(o *cluster.Object, patch map[string]any) Edit {
	return Edit{Format: FormatShell, Text: fmt.Sprintf("kubectl patch %s --type merge -p %s", kubectlTarget(o), shellQuote(compactJSON(patch)))}
}

// removeFinalizer is a JSON patch command that removes one finalizer by its
// position, with a test that the position still holds it, so that no other
// finalizer is dropped if the list changed in between.
func removeFinalizer(o *cluster.Object, finalizer string) (string, bool) {
	for i, f := range objectFinalizers(o) {
		if f != finalizer {
			continue
		}
		path := fmt.Sprintf("/metadata/finalizers/%d", i)
		patch := []any{
			map[string]any{"op": "test", "path": path, "value": f},
			map[string]any{"op": "remove", "path": path},
		}
		return fmt.Sprintf("kubectl patch %s --type json -p %s", kubectlTarget(o), shellQuote(compactJSON(patch))), true
	}
	return "", false
}

// helmNote warns that a patch of an object a Helm release manages is undone by
// the release's next upgrade.
func helmNote(o *cluster.Object) string {
	if name, ns, ok := helmRelease(o); ok {
		return fmt.Sprintf("; %s belongs to Helm release %s (namespace %s): set the same in the release's values, or its next upgrade reverts the patch", o.Ref(), name, ns)
	}
	return ""
}

// ---- cluster identity ----

// ---- Pending pods ----

// pendingGroup is the unscheduled Pending pods of one owner.
type pendingGroup struct {
	owner    cluster.ObjectRef
	workload *cluster.Workload
	pods     []*cluster.Pod
}

// pendingGroups returns the Pending pods of a live cluster that kube-scheduler
// has not placed, grouped by owner (a Deployment's pods together), in a stable
// order. Pods of other schedulers (fargate-scheduler, custom ones) are left out:
// eksdoctor judges placement as kube-scheduler does. So are pods held by
// scheduling gates, and pods the live Fargate checks explain, which report them
// under their own IDs.
func pendingGroups(p *Pass) []pendingGroup {
	m := p.Model
	by := map[cluster.ObjectRef]*pendingGroup{}
	var order []cluster.ObjectRef
	for _, pod := range m.Pods {
		if pod.Status.Phase != corev1.PodPending || pod.Spec.NodeName != "" || deletionTimestamp(pod.Object) != "" {
			continue
		}
		if len(pod.Spec.SchedulingGates) > 0 {
			// Held back on purpose until its gates are removed.
			continue
		}
		if s := pod.Spec.SchedulerName; s != "" && s != corev1.DefaultSchedulerName {
			continue
		}
		if explainedByFargate(p, pod) {
			continue
		}
		g, ok := by[pod.Owner]
		if !ok {
			g = &pendingGroup{owner: pod.Owner, workload: pod.Workload}
			by[pod.Owner] = g
			order = append(order, pod.Owner)
		}
		g.pods = append(g.pods, pod)
	}
	sort.Slice(order, func(i, j int) bool { return order[i].Less(order[j]) })
	out := make([]pendingGroup, 0, len(order))
	for _, ref := range order {
		g := by[ref]
		sort.Slice(g.pods, func(i, j int) bool { return g.pods[i].Object.Name < g.pods[j].Object.Name })
		out = append(out, *g)
	}
	return out
}

// explainedByFargate reports whether a Pending pod is one the live Fargate
// checks explain and report under their own IDs in this run: fargate-scheduler
// refusing a blocked profile (fargate-role-unauthorized), a pod tolerating the
// Fargate taint bound to a full Fargate node (fargate-unsupported), and a pod
// that only Fargate nodes could take but that was never handed to
// fargate-scheduler (fargate-profile-mismatch). A pod that also had EC2 nodes to
// choose from is judged here, whatever its message says about Fargate nodes; so
// is every pod whose Fargate check does not run.
func explainedByFargate(p *Pass, pod *cluster.Pod) bool {
	m := p.Model
	if ev, ok := schedulingEvent(pod, "Misconfigured Fargate Profile: fargate profile "); ok {
		rest := ev.Message[strings.Index(ev.Message, "Misconfigured Fargate Profile: fargate profile ")+len("Misconfigured Fargate Profile: fargate profile "):]
		name, _, _ := strings.Cut(rest, " ")
		return p.covers(fargateRoleUnauthorized.ID, cluster.ObjectRef{Kind: "FargateProfile", Name: name})
	}
	_, tolerates := toleratesFargate(pod.Spec.Tolerations)
	if _, tooMany := schedulingEvent(pod, "Too many pods"); tolerates && tooMany {
		return p.covers(fargateUnsupported.ID, pod.Owner)
	}
	if _, ok := schedulingEvent(pod, fargateTaintEvent); !ok || len(m.Nodes) == 0 {
		return false
	}
	for _, n := range m.Nodes {
		if n.Labels["eks.amazonaws.com/compute-type"] != "fargate" {
			return false
		}
	}
	return p.covers(fargateProfileMismatch.ID, pod.Owner)
}

// pendingDetail renders the scheduler's words beside eksdoctor's explanation.
func pendingDetail(g pendingGroup, pl *sim.Placement, extra ...string) string {
	var b strings.Builder
	if q := cluster.SchedulerMessage(g.pods); q.Message != "" {
		fmt.Fprintf(&b, "kube-scheduler: %q (%s).\n", q.Message, q.From)
	} else {
		b.WriteString("kube-scheduler: no FailedScheduling event or PodScheduled message was read (events expire after an hour).\n")
	}
	b.WriteString("eksdoctor: " + pl.Summary())
	if lines := pl.Explain(); len(lines) > 0 {
		b.WriteString("\nSource by source, in the cluster as it is:")
		for _, l := range lines {
			b.WriteString("\n  - " + l)
		}
	}
	for _, e := range extra {
		if e != "" {
			b.WriteString("\n" + e)
		}
	}
	fmt.Fprintf(&b, "\nPending pods (%d): %s.", len(g.pods), podNames(g.pods))
	return b.String()
}

func podNames(pods []*cluster.Pod) string {
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Object.Name
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// oldestPending is how long the longest-waiting pod of a group has existed.
func oldestPending(m *cluster.Model, g pendingGroup) (time.Duration, bool) {
	now, ok := m.NowTime()
	var oldest time.Duration
	known := false
	for _, p := range g.pods {
		if age, ok := ageAt(now, ok, creationTimestamp(p.Object)); ok && age > oldest {
			oldest, known = age, true
		}
	}
	return oldest, known
}

// fitsExisting returns the fitting sources that exist now (nodes; node groups and
// Fargate profiles when static inputs are read with the cluster).
func fitsExisting(pl *sim.Placement) []sim.Verdict {
	var out []sim.Verdict
	for _, v := range pl.Fitting() {
		if v.Source.Kind != cluster.KindNodePool {
			out = append(out, v)
		}
	}
	return out
}

func sourceNames(vs []sim.Verdict) string {
	var names []string
	for _, v := range vs {
		names = append(names, describeSource(v.Source))
	}
	if len(names) > 4 {
		names = append(names[:4], fmt.Sprintf("and %d more", len(names)-4))
	}
	return strings.Join(names, ", ")
}

// reportPendingPods explains the Pending pods of a live cluster, as
// pod-unschedulable or bootstrap-deadlock depending on the check running; the
// static variants of both checks leave live workloads to this function, so each
// group of pods is reported once, under one ID.
func reportPendingPods(p *Pass) {
	m := p.Model
	if m.Live == nil {
		return
	}
	ctrl := sim.KarpenterController(m)
	for _, g := range pendingGroups(p) {
		pl := p.Sim.PlacePod(g.pods[0])
		if g.owner.Kind == "DaemonSet" {
			pl = withoutNodePools(pl)
		}
		if f, ok := judgePending(m, g, pl, ctrl); ok && f.Check == p.check.ID {
			f.Check = ""
			p.Report(f)
		}
	}
}

// withoutNodePools leaves NodePools out of a placement: Karpenter launches no
// node for a DaemonSet's pod, which is bound to the node it was created for.
func withoutNodePools(pl *sim.Placement) *sim.Placement {
	out := *pl
	out.Verdicts = nil
	for _, v := range pl.Verdicts {
		if v.Source.Kind != cluster.KindNodePool {
			out.Verdicts = append(out.Verdicts, v)
		}
	}
	return &out
}

// judgePending decides what a group of Pending pods is, and under which check it
// is reported. ok is false when the pods are not (yet) a problem.
func judgePending(m *cluster.Model, g pendingGroup, pl *sim.Placement, ctrl sim.Controller) (Finding, bool) {
	f := Finding{Object: g.owner, Origin: g.pods[0].Object.Origin}
	if w := g.workload; w != nil {
		f.Origin = w.Object.Origin
	}
	n := len(g.pods)
	existing := fitsExisting(pl)
	pools, blocked := launchable(pl)
	age, known := oldestPending(m, g)
	waited := !known || age >= pendingGrace
	waitedText := ""
	if known {
		waitedText = " for " + ageText(age)
	}
	w := g.workload
	clause := firstClause(pl)
	noController := blocked || ctrl.State == sim.ControllerNotReady || ctrl.State == sim.ControllerAbsent

	switch {
	case w != nil && w.Bootstrap != "" && len(existing) == 0:
		f.Check, f.Severity = "bootstrap-deadlock", Error
		what := "fit no node that exists"
		if len(pools) > 0 {
			what = "fit only Karpenter capacity (" + sourceNames(pools) + ")"
		}
		f.Summary = fmt.Sprintf("%s: %d pod(s) Pending%s: they %s, and %s: %s", g.owner, n, waitedText, what, lowerFirst(w.Bootstrap), clause)
		f.Detail = pendingDetail(g, pl, "It must run before Karpenter can launch nodes: "+w.Bootstrap+". "+ctrl.Sentence())
		f.Fix = livePendingFix(w, pl, true)
		return f, true
	case len(existing) == 0 && len(pools) == 0 && pl.Result() == sim.Unknown:
		f.Check, f.Severity = "pod-unschedulable", Info
		f.Summary = fmt.Sprintf("%s: %d pod(s) Pending%s; could not verify whether they fit any capacity", g.owner, n, waitedText)
		f.Detail = pendingDetail(g, pl)
		return f, true
	case len(existing) == 0 && len(pools) == 0:
		f.Check, f.Severity = "pod-unschedulable", Error
		f.Summary = fmt.Sprintf("%s: %d pod(s) Pending%s fit no capacity: %s", g.owner, n, waitedText, clause)
		f.Detail = pendingDetail(g, pl)
		if w != nil {
			f.Fix = livePendingFix(w, pl, false)
		}
		return f, true
	case len(existing) == 0 && noController:
		// The root cause, the controller, is reported on its own pods
		// (bootstrap-deadlock) or its deletion (finalizer-stuck).
		f.Check, f.Severity = "pod-unschedulable", Warning
		why := ctrl.Why
		if blocked {
			why = "the Karpenter controller fits no node that exists"
		}
		f.Summary = fmt.Sprintf("%s: %d pod(s) Pending%s fit only %s, and no Karpenter controller is ready to launch a node: %s", g.owner, n, waitedText, sourceNames(pools), why)
		f.Detail = pendingDetail(g, pl, ctrl.Sentence())
		return f, true
	case len(existing) == 0 && waited:
		f.Check, f.Severity = "pod-unschedulable", Warning
		f.Summary = fmt.Sprintf("%s: %d pod(s) Pending%s fit only %s, yet no node has come for them", g.owner, n, waitedText, sourceNames(pools))
		f.Detail = pendingDetail(g, pl, ctrl.Sentence(), launchHint(m, pools))
		return f, true
	case len(existing) > 0 && waited:
		f.Check, f.Severity = "pod-unschedulable", Info
		f.Summary = fmt.Sprintf("%s: %d pod(s) Pending%s although %s fits what eksdoctor checks (taints, node selection, resources)", g.owner, n, waitedText, sourceNames(existing))
		f.Detail = pendingDetail(g, pl, "The scheduler refuses for a reason eksdoctor does not model: inter-pod affinity or anti-affinity, topology spread, a volume's zone, host ports, or requests that changed since the pods were listed.")
		return f, true
	}
	return Finding{}, false
}

// launchable returns the NodePools that could launch a node for the pods: those
// that fit, and those that refuse only because the Karpenter controller cannot
// run (blocked is then set).
func launchable(pl *sim.Placement) (pools []sim.Verdict, blocked bool) {
	for _, v := range pl.Verdicts {
		if v.Source.Kind != cluster.KindNodePool {
			continue
		}
		switch {
		case v.Result == sim.Fits && pl.Fargate == nil:
			pools = append(pools, v)
		case v.Result == sim.Refuses && len(v.Reasons) == 1 && v.Reasons[0].Code == sim.CodeController:
			pools = append(pools, v)
			blocked = true
		}
	}
	return pools, blocked
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// launchHint points at what keeps Karpenter from launching for NodePools that
// fit: NodeClaims of those pools that never registered.
func launchHint(m *cluster.Model, pools []sim.Verdict) string {
	names := map[string]bool{}
	for _, v := range pools {
		if v.Source.NodePool != nil {
			names[v.Source.NodePool.Name] = true
		}
	}
	var claims []string
	for _, nc := range m.NodeClaims {
		if !names[nc.NodePool] {
			continue
		}
		if reg := conditionOf(nc.Conditions, "Registered"); reg == nil || reg.Status != "True" {
			claims = append(claims, nc.Name)
		}
	}
	sort.Strings(claims)
	if len(claims) == 0 {
		return "No NodeClaim of those NodePools exists: the Karpenter controller's log says why it does not launch (limits, instance type availability, the EC2NodeClass not Ready)."
	}
	return fmt.Sprintf("NodeClaims of those NodePools that have not registered a node: %s (see nodeclaim-not-registered).", strings.Join(claims, ", "))
}

// lastingTaint reports whether a node taint describes the capacity rather than a
// passing state of one node: tolerating a disruption, readiness or Fargate taint
// is never the fix.
func lastingTaint(t corev1.Taint) bool {
	switch {
	case t.Key == sim.DisruptedTaint.Key, t.Key == sim.DisruptingTaint.Key,
		t.Key == "karpenter.sh/unregistered",
		strings.HasPrefix(t.Key, "node.kubernetes.io/"),
		strings.HasPrefix(t.Key, "node.cloudprovider.kubernetes.io/"),
		t.Key == fargateTaint.Key,
		t.Key == "ToBeDeletedByClusterAutoscaler", t.Key == "DeletionCandidateOfClusterAutoscaler":
		return false
	}
	return true
}

// livePendingFix proposes, for Pending pods of a live workload, the smallest
// change that lets one source take them, as commands against the cluster: the
// tolerations for a NodePool's taints (or, for components that must run before
// Karpenter, a node's that is not Karpenter's), or a NodePool label the pods
// select.
func livePendingFix(w *cluster.Workload, pl *sim.Placement, bootstrap bool) *Fix {
	if w.Object.Kind == "Job" || w.Object.Manager != "cluster" {
		// A Job's pod template cannot be changed once created.
		return nil
	}
	kinds := []cluster.CapacityKind{cluster.KindNodePool, cluster.KindNode}
	if bootstrap {
		kinds = []cluster.CapacityKind{cluster.KindNode}
	}
	for _, k := range kinds {
		for _, v := range pl.Verdicts {
			if v.Source.Kind != k || !onlyTaints(v) {
				continue
			}
			if n := v.Source.Node; n != nil && (n.Labels["karpenter.sh/nodepool"] != "" && bootstrap || n.Deleting) {
				continue
			}
			taints := blockingTaints(v.Source, w.Template.Spec.Tolerations)
			lasting := len(taints) > 0
			for _, t := range taints {
				lasting = lasting && lastingTaint(t)
			}
			if !lasting {
				continue
			}
			all, added := withTolerations(w.Template.Spec.Tolerations, taints)
			if len(added) == 0 {
				continue
			}
			var names []string
			for _, t := range added {
				names = append(names, fmt.Sprintf("%s:%s", t.Key, t.Effect))
			}
			patch := nest(podSpecPath(w), map[string]any{"tolerations": tolerationMaps(all)})
			return &Fix{
				Summary: fmt.Sprintf("tolerate %s so the pods can run on %s%s", strings.Join(names, ", "), describeSource(v.Source), helmNote(w.Object)),
				Edits:   []Edit{livePatch(w.Object, patch)},
			}
		}
	}
	if bootstrap {
		return nil
	}
	for _, v := range pl.Verdicts {
		np := v.Source.NodePool
		if np == nil || v.Result != sim.Refuses || len(v.Reasons) != 1 || v.Reasons[0].Code != sim.CodeRequirements || np.Object.Manager != "cluster" {
			continue
		}
		key := v.Reasons[0].Key
		value, ok := selectedValue(w, key)
		if !ok || !strings.Contains(v.Reasons[0].Message, "does not have known values") {
			continue
		}
		patch := nest("spec.template.metadata", map[string]any{"labels": map[string]any{key: value}})
		return &Fix{
			Summary: fmt.Sprintf("label the nodes of nodepool %q with %s=%s, the label the pods select (Karpenter replaces the NodePool's existing nodes, which drifted)%s", np.Name, key, value, helmNote(np.Object)),
			Edits:   []Edit{livePatch(np.Object, patch)},
		}
	}
	return nil
}

// ---- nodeclaim-not-registered ----

func conditionOf(cs []cluster.Condition, typ string) *cluster.Condition {
	for i := range cs {
		if cs[i].Type == typ {
			return &cs[i]
		}
	}
	return nil
}

func conditionText(c *cluster.Condition) string {
	if c == nil {
		return "absent"
	}
	s := c.Status
	if c.Reason != "" {
		s += " (" + c.Reason + ")"
	}
	if c.Message != "" {
		s += fmt.Sprintf(" %q", c.Message)
	}
	return s
}

// nodeClaimEvents returns the events recorded for a NodeClaim, as
// "Reason: message" lines in the order they were read.
func nodeClaimEvents(m *cluster.Model, name string) []string {
	var out []string
	for _, o := range m.Objects {
		if o.Kind != "Event" || o.String("involvedObject.kind") != "NodeClaim" || o.String("involvedObject.name") != name {
			continue
		}
		if msg := o.String("message"); msg != "" {
			out = append(out, fmt.Sprintf("%s: %s", orText(o.String("reason"), "Event"), msg))
		}
	}
	return out
}

type unregistered struct {
	claim *cluster.NodeClaim
	age   time.Duration
}

func runNodeClaimNotRegistered(p *Pass) {
	m := p.Model
	if m.Live == nil {
		return
	}
	now, haveNow := m.NowTime()
	byClass := map[string][]unregistered{}
	for _, nc := range m.NodeClaims {
		launched := conditionOf(nc.Conditions, "Launched")
		if launched == nil || launched.Status != "True" {
			continue
		}
		if reg := conditionOf(nc.Conditions, "Registered"); reg != nil && reg.Status == "True" {
			continue
		}
		since := launched.LastTransitionTime
		if since == "" {
			since = creationTimestamp(nc.Object)
		}
		age, ok := ageAt(now, haveNow, since)
		if !ok || age < registrationGrace {
			continue
		}
		byClass[nc.NodeClassRef.Name] = append(byClass[nc.NodeClassRef.Name], unregistered{claim: nc, age: age})
	}
	classes := make([]string, 0, len(byClass))
	for c := range byClass {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	for _, class := range classes {
		claims := byClass[class]
		sort.Slice(claims, func(i, j int) bool { return claims[i].claim.Name < claims[j].claim.Name })
		reportUnregistered(p, class, claims)
	}
}

func reportUnregistered(p *Pass, class string, claims []unregistered) {
	m := p.Model
	var oldest time.Duration
	var b strings.Builder
	for _, u := range claims {
		nc := u.claim
		if u.age > oldest {
			oldest = u.age
		}
		line := fmt.Sprintf("NodeClaim %s", nc.Name)
		var facts []string
		if nc.NodePool != "" {
			facts = append(facts, "nodepool "+nc.NodePool)
		}
		if id := cluster.InstanceID(nc.ProviderID); id != "" {
			facts = append(facts, "instance "+id)
		}
		facts = append(facts, "launched "+ageText(u.age)+" ago")
		if nc.Deleting {
			facts = append(facts, "being deleted")
		}
		fmt.Fprintf(&b, "%s (%s): Registered %s", line, strings.Join(facts, ", "), conditionText(conditionOf(nc.Conditions, "Registered")))
		if ini := conditionOf(nc.Conditions, "Initialized"); ini != nil && ini.Status != "True" {
			fmt.Fprintf(&b, ", Initialized %s", conditionText(ini))
		}
		b.WriteString(".\n")
		for _, e := range nodeClaimEvents(m, nc.Name) {
			fmt.Fprintf(&b, "  event %s\n", e)
		}
	}
	cause, lines, fix := registrationCause(m, class)
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	b.WriteString(nodeJoinSymptom)

	obj := cluster.ObjectRef{Kind: "EC2NodeClass", Name: class}
	origin := claims[0].claim.Object.Origin
	if nc := liveNodeClass(m, class); nc != nil {
		obj, origin = nc.Object.Ref(), nc.Object.Origin
	}
	subject := fmt.Sprintf("NodeClaim %s", claims[0].claim.Name)
	if len(claims) > 1 {
		subject = fmt.Sprintf("%d NodeClaims", len(claims))
	}
	p.Report(Finding{
		Object:  obj,
		Origin:  origin,
		Summary: fmt.Sprintf("%s of EC2NodeClass %s launched an instance that has not registered as a node for %s: %s", subject, class, ageText(oldest), cause),
		Detail:  b.String(),
		Fix:     fix,
	})
}

func liveNodeClass(m *cluster.Model, name string) *cluster.NodeClass {
	for _, nc := range m.NodeClasses {
		if nc.Name == name {
			return nc
		}
	}
	return nil
}

// registrationCause checks the node role of an EC2NodeClass against the aws-auth
// mappings of the cluster, the F4 causes a cluster can show: it returns the gist
// for the summary, the evidence, and the commands that authorize the role.
func registrationCause(m *cluster.Model, class string) (string, []string, *Fix) {
	nc := liveNodeClass(m, class)
	if nc == nil {
		if reason, skipped := m.SkippedReason("ec2nodeclasses.karpenter.k8s.aws"); skipped {
			return "the EC2NodeClass could not be read to check its node role", []string{"EC2NodeClasses could not be read: " + reason + "."}, nil
		}
		return fmt.Sprintf("its EC2NodeClass %q is not in the cluster", class), nil, nil
	}
	res := identity.New(m)
	ncr, ok := res.NodeClassRole(nc)
	switch {
	case !ok:
		return fmt.Sprintf("EC2NodeClass %q names neither a role nor an instance profile", class), nil, nil
	case ncr.Unresolved != "" || ncr.Role.IsZero():
		return fmt.Sprintf("its node role is inside instance profile %q, which cannot be resolved from the cluster", nc.InstanceProfile),
			[]string{fmt.Sprintf("Find the role with `aws iam get-instance-profile --instance-profile-name %s` and check that it is authorized as a node (an EC2_LINUX access entry, or aws-auth).", shellQuote(nc.InstanceProfile))}, nil
	}
	role := ncr.Role
	purpose := identity.LinuxNode
	if ncr.Windows {
		purpose = identity.WindowsNode
	}
	entries := "Access entries are not visible from inside the cluster: `aws eks list-access-entries` shows them."
	if reason, skipped := m.SkippedReason("configmaps kube-system/aws-auth"); skipped {
		return fmt.Sprintf("aws-auth could not be read to check node role %s", role), []string{"kube-system/aws-auth could not be read: " + reason + ".", entries}, nil
	}
	fix := authorizeNodeFix(m, role, purpose)
	if m.Identity.AwsAuth == nil {
		return fmt.Sprintf("the cluster has no aws-auth ConfigMap, so node role %s joins only through an %s access entry; unless one exists, that is why", role, purpose.EntryType()),
			[]string{"The cluster has no kube-system/aws-auth ConfigMap.", entries}, fix
	}
	a := res.Authorize(role, purpose)
	var lines []string
	for _, f := range a.AwsAuth.Found {
		if f.Implicit {
			continue
		}
		l := "Found " + f.What
		if len(f.Problems) > 0 {
			l += ": " + strings.Join(f.Problems, "; ")
		} else {
			l += ": correct"
		}
		lines = append(lines, l+".")
	}
	switch a.AwsAuth.State {
	case identity.Valid:
		lines = append(lines, "With authentication mode API, EKS ignores aws-auth and the role needs an "+purpose.EntryType()+" access entry. "+entries)
		return fmt.Sprintf("aws-auth maps node role %s correctly, so the cause is elsewhere: authentication mode API (which ignores aws-auth), or the instance itself (security groups, subnets, user data)", role), lines, nil
	case identity.Invalid:
		probs := a.Problems()
		if len(probs) == 0 {
			for _, f := range a.AwsAuth.Found {
				probs = append(probs, f.Problems...)
			}
		}
		lines = append(lines, entries)
		gist := "its aws-auth entry is wrong"
		if len(probs) > 0 {
			gist = probs[0]
		}
		return fmt.Sprintf("aws-auth maps node role %s wrongly: %s", role, gist), lines, fix
	case identity.Missing:
		lines = append(lines, fmt.Sprintf("aws-auth has no entry for node role %s.", role), entries)
		return fmt.Sprintf("aws-auth does not map node role %s; unless an %s access entry does, that is why", role, purpose.EntryType()), lines, fix
	}
	lines = append(lines, entries)
	return fmt.Sprintf("could not tell whether aws-auth maps node role %s", role), lines, nil
}

// authorizeNodeFix gives the two ways to authorize a node role as commands: an
// access entry, or an aws-auth mapping with eksctl.
func authorizeNodeFix(m *cluster.Model, role identity.Role, purpose identity.Purpose) *Fix {
	if !role.Known() {
		return nil
	}
	partition, account := m.Account()
	arn := fmt.Sprintf("arn:%s:iam::%s:role/%s", partition, orText(account, "<account-id>"), role.Name)
	name := orText(m.ClusterName(), "<cluster-name>")
	groups := ""
	for _, g := range purpose.Groups() {
		groups += " --group " + g
	}
	return &Fix{
		Summary: fmt.Sprintf("authorize node role %s as a node: an %s access entry (first command), or, with authentication mode CONFIG_MAP or API_AND_CONFIG_MAP, an aws-auth mapping (second); then make the configuration that manages them say the same", role, purpose.EntryType()),
		Edits: []Edit{
			{Format: FormatShell, Text: fmt.Sprintf("aws eks create-access-entry --cluster-name %s --principal-arn %s --type %s", shellQuote(name), arn, purpose.EntryType())},
			{Format: FormatShell, Text: fmt.Sprintf("eksctl create iamidentitymapping --cluster %s --arn %s --username %s%s", shellQuote(name), arn, shellQuote(purpose.Username()), groups)},
		},
	}
}

// ---- finalizer-stuck ----

// isKarpenterFinalizer reports finalizers only the Karpenter controller removes.
func isKarpenterFinalizer(f string) bool {
	return strings.HasPrefix(f, "karpenter.sh/") || strings.HasPrefix(f, "karpenter.k8s.aws/")
}

func karpenterFinalizersOf(o *cluster.Object) []string {
	var out []string
	for _, f := range objectFinalizers(o) {
		if isKarpenterFinalizer(f) {
			out = append(out, f)
		}
	}
	return out
}

// stuckKinds are the kinds Karpenter finalizes.
func stuckKind(o *cluster.Object) bool {
	switch {
	case o.Kind == "Node" && o.APIVersion == "v1":
		return true
	case (o.Kind == "NodePool" || o.Kind == "NodeClaim") && strings.HasPrefix(o.APIVersion, "karpenter.sh/"):
		return true
	case o.Kind == "EC2NodeClass" && strings.HasPrefix(o.APIVersion, "karpenter.k8s.aws/"):
		return true
	}
	return false
}

func runFinalizerStuck(p *Pass) {
	m := p.Model
	if m.Live == nil {
		return
	}
	var stuck []*cluster.Object
	for _, o := range m.Objects {
		if o.Manager == "cluster" && stuckKind(o) && deletionTimestamp(o) != "" && len(karpenterFinalizersOf(o)) > 0 {
			stuck = append(stuck, o)
		}
	}
	if len(stuck) == 0 {
		return
	}
	ctrl := sim.KarpenterController(m)
	if ctrl.State == sim.ControllerReady {
		return
	}
	now, haveNow := m.NowTime()
	claimOfNode := map[string]*cluster.NodeClaim{}
	for _, nc := range m.NodeClaims {
		if nc.NodeName != "" {
			claimOfNode[nc.NodeName] = nc
		}
	}
	stuckRef := map[cluster.ObjectRef]bool{}
	for _, o := range stuck {
		stuckRef[o.Ref()] = true
	}
	for _, o := range stuck {
		if o.Kind == "Node" {
			if nc := claimOfNode[o.Name]; nc != nil && stuckRef[nc.Object.Ref()] {
				// Reported with its NodeClaim: one instance, one finding.
				continue
			}
		}
		reportStuck(p, o, ctrl, now, haveNow)
	}
}

// atRisk lists the instances a stuck object stands for: its own, or those of
// the NodeClaims it owns (NodePool) or that use it (EC2NodeClass).
func atRisk(m *cluster.Model, o *cluster.Object) (instances []string, claims []*cluster.NodeClaim) {
	add := func(pid string) {
		if id := cluster.InstanceID(pid); id != "" {
			instances = append(instances, id)
		}
	}
	switch o.Kind {
	case "Node":
		add(o.String("spec.providerID"))
	case "NodeClaim":
		add(o.String("status.providerID"))
	case "NodePool", "EC2NodeClass":
		for _, nc := range m.NodeClaims {
			if o.Kind == "NodePool" && nc.NodePool == o.Name || o.Kind == "EC2NodeClass" && nc.NodeClassRef.Name == o.Name {
				claims = append(claims, nc)
				add(nc.ProviderID)
			}
		}
	}
	sort.Strings(instances)
	sort.Slice(claims, func(i, j int) bool { return claims[i].Name < claims[j].Name })
	return instances, claims
}

func reportStuck(p *Pass, o *cluster.Object, ctrl sim.Controller, now time.Time, haveNow bool) {
	m := p.Model
	fins := karpenterFinalizersOf(o)
	instances, claims := atRisk(m, o)
	waited := ""
	if age, ok := ageAt(now, haveNow, deletionTimestamp(o)); ok {
		waited = " for " + ageText(age)
	}
	var node *cluster.Node
	if o.Kind == "NodeClaim" {
		for _, n := range m.Nodes {
			if n.Name == o.String("status.nodeName") {
				node = n
			}
		}
	}
	risk := "no EC2 instance is named"
	if len(instances) > 0 {
		risk = "instance(s) " + strings.Join(instances, ", ") + " keep running"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s has been deleting%s, held by finalizer(s) %s.\n", o.Ref(), waited, strings.Join(fins, ", "))
	fmt.Fprintf(&b, "%s\n", ctrl.Sentence())
	if node != nil {
		fmt.Fprintf(&b, "Its Node %s is in the same state (finalizers %s).\n", node.Name, strings.Join(node.Finalizers, ", "))
	}
	if len(claims) > 0 {
		var names []string
		for _, nc := range claims {
			names = append(names, nc.Name)
		}
		fmt.Fprintf(&b, "NodeClaims that must go first: %s.\n", strings.Join(names, ", "))
	}
	b.WriteString("Only a running Karpenter controller drains the node, waits for its volumes to detach, terminates the instance and then removes the finalizer; until it does, the object stays and the instance is billed outside any state.")

	sev := Error
	summary := fmt.Sprintf("%s has been deleting%s, held by %s, and the Karpenter controller that removes it is %s: %s", o.Ref(), waited, strings.Join(fins, ", "), stateWord(ctrl.State), risk)
	if ctrl.State == sim.ControllerUnknown {
		sev = Info
		summary = fmt.Sprintf("%s has been deleting%s, held by %s; could not verify that the Karpenter controller runs: %s", o.Ref(), waited, strings.Join(fins, ", "), ctrl.Why)
	}
	p.Report(Finding{
		Severity: sev,
		Object:   o.Ref(),
		Origin:   o.Origin,
		Summary:  summary,
		Detail:   b.String(),
		Fix:      stuckFix(m, o, ctrl, instances, node),
	})
}

func stateWord(s sim.ControllerState) string {
	switch s {
	case sim.ControllerNotReady:
		return "not ready"
	case sim.ControllerAbsent:
		return "absent"
	}
	return "unknown"
}

// stuckFix: first the controller, then, as a last resort, the instances and the
// finalizers by hand.
func stuckFix(m *cluster.Model, o *cluster.Object, ctrl sim.Controller, instances []string, node *cluster.Node) *Fix {
	var edits []Edit
	summary := "bring the Karpenter controller back so it finishes the deletion; only as a last resort terminate the instances yourself and remove the finalizer"
	switch ctrl.State {
	case sim.ControllerAbsent:
		ns := orText(m.Karpenter.Namespace, "kube-system")
		cmd := fmt.Sprintf("helm upgrade --install karpenter oci://public.ecr.aws/karpenter/karpenter --namespace %s --version %s --set settings.clusterName=%s  # the chart version and values that created these objects",
			shellQuote(ns), shellQuote(orText(exactVersion(m.Karpenter.Version), "<version>")), shellQuote(orText(m.ClusterName(), "<cluster-name>")))
		edits = append(edits, Edit{Format: FormatShell, Text: cmd})
	case sim.ControllerNotReady:
		for _, w := range ctrl.Deployments {
			edits = append(edits,
				Edit{Format: FormatShell, Text: fmt.Sprintf("kubectl describe deployment %s -n %s", shellQuote(w.Object.Name), shellQuote(w.Object.Namespace))},
				Edit{Format: FormatShell, Text: fmt.Sprintf("kubectl logs deployment/%s -n %s --all-containers", w.Object.Name, shellQuote(w.Object.Namespace))},
			)
		}
	}
	if len(instances) > 0 && (o.Kind == "NodeClaim" || o.Kind == "Node") {
		edits = append(edits, Edit{Format: FormatShell, Text: "aws ec2 terminate-instances --instance-ids " + strings.Join(instances, " ") + "  # last resort, once the controller cannot come back"})
	}
	if o.Kind == "NodeClaim" || o.Kind == "Node" || o.Kind == "EC2NodeClass" {
		for _, f := range karpenterFinalizersOf(o) {
			if cmd, ok := removeFinalizer(o, f); ok {
				edits = append(edits, Edit{Format: FormatShell, Text: cmd + "  # last resort"})
			}
		}
		if node != nil {
			for _, f := range node.Finalizers {
				if !isKarpenterFinalizer(f) {
					continue
				}
				if cmd, ok := removeFinalizer(node.Object, f); ok {
					edits = append(edits, Edit{Format: FormatShell, Text: cmd + "  # last resort"})
				}
			}
		}
	}
	if len(edits) == 0 {
		return nil
	}
	return &Fix{Summary: summary, Edits: edits}
}

// exactVersion returns a version only when it names a release ("1.0.8"), not a
// generation ("1", inferred from an apiVersion).
func exactVersion(v string) string {
	if strings.Count(v, ".") >= 2 {
		return v
	}
	return ""
}

// ---- volumes ----

// liveVolume is what the cluster says about one persistent volume.
type liveVolume struct {
	pv     *cluster.Object
	claim  cluster.ObjectRef // PersistentVolumeClaim namespace/name
	driver string
	handle string
}

func pvInfo(m *cluster.Model, name string) liveVolume {
	v := liveVolume{}
	for _, o := range m.Live.PVs {
		if o.Name != name {
			continue
		}
		v.pv = o
		v.driver = o.String("spec.csi.driver")
		v.handle = o.String("spec.csi.volumeHandle")
		if v.handle == "" {
			v.handle = o.String("spec.awsElasticBlockStore.volumeID")
		}
		if ns, n := o.String("spec.claimRef.namespace"), o.String("spec.claimRef.name"); n != "" {
			v.claim = cluster.ObjectRef{Kind: "PersistentVolumeClaim", Namespace: ns, Name: n}
		}
	}
	return v
}

// claimNames lists the PersistentVolumeClaims a pod mounts.
func claimNames(p *cluster.Pod) []string {
	var out []string
	for _, v := range p.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			out = append(out, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			// A generic ephemeral volume's claim is named <pod>-<volume>.
			out = append(out, p.Object.Name+"-"+v.Name)
		}
	}
	return out
}

func usesClaim(p *cluster.Pod, claim cluster.ObjectRef) bool {
	if p.Object.Namespace != claim.Namespace {
		return false
	}
	for _, c := range claimNames(p) {
		if c == claim.Name {
			return true
		}
	}
	return false
}

// claimDriver returns the CSI driver of a PersistentVolumeClaim: its bound
// volume's, else the provisioner annotation. "" when unknown.
func claimDriver(m *cluster.Model, ns, name string) string {
	for _, o := range m.Live.PVCs {
		if o.Namespace != ns || o.Name != name {
			continue
		}
		if vol := o.String("spec.volumeName"); vol != "" {
			if d := pvInfo(m, vol).driver; d != "" {
				return d
			}
		}
		for _, a := range []string{"volume.kubernetes.io/storage-provisioner", "volume.beta.kubernetes.io/storage-provisioner"} {
			if d := o.Annotations[a]; d != "" {
				if d == "kubernetes.io/aws-ebs" {
					return "ebs.csi.aws.com"
				}
				return d
			}
		}
	}
	return ""
}

// multiAttach returns a pod's newest Multi-Attach error, if read.
func multiAttach(p *cluster.Pod) (string, bool) {
	for i := len(p.Events) - 1; i >= 0; i-- {
		if strings.Contains(p.Events[i].Message, "Multi-Attach error") {
			return p.Events[i].Message, true
		}
	}
	return "", false
}

// disruptionTaintOn returns the Karpenter disruption taint a node carries.
func disruptionTaintOn(n *cluster.Node) (corev1.Taint, bool) {
	for _, t := range n.Taints {
		if t.Key == sim.DisruptedTaint.Key || t.Key == sim.DisruptingTaint.Key {
			return t, true
		}
	}
	return corev1.Taint{}, false
}

func runVolumeAttachmentStale(p *Pass) {
	m := p.Model
	if m.Live == nil {
		return
	}
	_, nodesSkipped := m.SkippedReason("nodes")
	_, podsSkipped := m.SkippedReason("pods")
	nodes := map[string]*cluster.Node{}
	for _, n := range m.Nodes {
		nodes[n.Name] = n
	}
	vas := append([]cluster.VolumeAttachment(nil), m.Live.VolumeAttachments...)
	sort.Slice(vas, func(i, j int) bool { return vas[i].Name < vas[j].Name })
	for _, va := range vas {
		if va.NodeName == "" {
			continue
		}
		vol := pvInfo(m, va.PV)
		n := nodes[va.NodeName]
		var why string
		switch {
		case n == nil && !nodesSkipped:
			why = fmt.Sprintf("node %s, which no longer exists", va.NodeName)
		case n == nil:
			continue
		case n.Deleting || hasDisruptionTaint(n):
			// While a pod on the node still uses the volume, the drain is in
			// progress and the attachment is expected.
			if podsSkipped || vol.claim.Name == "" || !liveReadNamespace(m, vol.claim.Namespace) {
				continue
			}
			if usedOnNode(m, vol.claim, n.Name) {
				continue
			}
			state := "being deleted"
			if t, ok := disruptionTaintOn(n); ok && !n.Deleting {
				state = "being disrupted (" + sim.TaintText(t) + ")"
			}
			why = fmt.Sprintf("node %s, which is %s and has no pod using the volume any more", n.Name, state)
		default:
			continue
		}
		reportStaleAttachment(p, va, vol, why)
	}
}

func hasDisruptionTaint(n *cluster.Node) bool {
	_, ok := disruptionTaintOn(n)
	return ok
}

func usedOnNode(m *cluster.Model, claim cluster.ObjectRef, node string) bool {
	for _, p := range m.Pods {
		if podRunsOn(p, node) && usesClaim(p, claim) {
			return true
		}
	}
	return false
}

func reportStaleAttachment(p *Pass, va cluster.VolumeAttachment, vol liveVolume, why string) {
	m := p.Model
	driver := orText(va.Attacher, vol.driver)
	var facts []string
	if vol.claim.Name != "" {
		facts = append(facts, "claim "+vol.claim.Namespace+"/"+vol.claim.Name)
	}
	if driver != "" {
		facts = append(facts, driver)
	}
	if vol.handle != "" {
		facts = append(facts, "volume "+vol.handle)
	}
	pv := orText(va.PV, "(inline volume)")
	what := "PV " + pv
	if len(facts) > 0 {
		what += " (" + strings.Join(facts, ", ") + ")"
	}
	var waiting []string
	var quotes []string
	if vol.claim.Name != "" {
		for _, pod := range m.Pods {
			if !usesClaim(pod, vol.claim) || pod.Spec.NodeName == va.NodeName || pod.Ready() {
				continue
			}
			if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
				continue
			}
			waiting = append(waiting, pod.Object.Namespace+"/"+pod.Object.Name)
			if msg, ok := multiAttach(pod); ok {
				quotes = append(quotes, fmt.Sprintf("%s/%s: %q", pod.Object.Namespace, pod.Object.Name, msg))
			}
		}
	}
	sort.Strings(waiting)
	sort.Strings(quotes)
	summary := fmt.Sprintf("%s keeps %s attached to %s", va.Object.Ref(), what, why)
	if len(waiting) > 0 {
		summary += "; waiting for it: " + strings.Join(waiting, ", ")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The attachment is %s.", map[bool]string{true: "reported attached", false: "not reported attached, but not removed either"}[va.Attached])
	for _, q := range quotes {
		b.WriteString("\nMulti-Attach error on " + q)
	}
	b.WriteString("\nA volume attached to one node cannot attach to another: the pods that need it stay in ContainerCreating until the attach/detach controller force-detaches it (after six minutes), or until the CSI controller processes the detach. A CSI node plugin evicted before it unmounted the volume is the usual cause (see disruption-daemonset-evicted).")

	var edits []Edit
	edits = append(edits, Edit{Format: FormatShell, Text: "kubectl describe volumeattachment " + shellQuote(va.Name)})
	if vol.handle != "" && strings.HasPrefix(vol.handle, "vol-") {
		edits = append(edits, Edit{Format: FormatShell, Text: fmt.Sprintf("aws ec2 describe-volumes --volume-ids %s --query 'Volumes[0].Attachments'", vol.handle)})
	}
	for i, f := range objectFinalizers(va.Object) {
		path := fmt.Sprintf("/metadata/finalizers/%d", i)
		patch := []any{map[string]any{"op": "test", "path": path, "value": f}, map[string]any{"op": "remove", "path": path}}
		edits = append(edits, Edit{Format: FormatShell, Text: fmt.Sprintf("kubectl patch volumeattachment %s --type json -p %s  # only once EC2 shows the volume detached", shellQuote(va.Name), shellQuote(compactJSON(patch)))})
		break
	}
	p.Report(Finding{
		Object:  va.Object.Ref(),
		Origin:  va.Object.Origin,
		Summary: summary,
		Detail:  b.String(),
		Fix:     &Fix{Summary: "check the volume in EC2 and the CSI controller; once EC2 shows the volume detached, release the attachment", Edits: edits},
	})
}

// ---- disruption-daemonset-evicted ----

// volumeUser is a pod on a node with a persistent volume of a driver.
type volumeUser struct {
	pod    *cluster.Pod
	claim  string
	driver string
}

func runDisruptionDaemonSetEvicted(p *Pass) {
	m := p.Model
	if m.Live == nil {
		return
	}
	if _, skipped := m.SkippedReason("pods"); skipped {
		return
	}
	var daemons []*cluster.Workload
	for _, w := range m.Workloads {
		if w.IsDaemonSet() && w.NodeCritical != "" && w.Object.Manager == "cluster" {
			daemons = append(daemons, w)
		}
	}
	sort.Slice(daemons, func(i, j int) bool { return daemons[i].Ref().Less(daemons[j].Ref()) })
	nodes := append([]*cluster.Node(nil), m.Nodes...)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	for _, n := range nodes {
		taint, ok := disruptionTaintOn(n)
		if !ok || n.Labels["eks.amazonaws.com/compute-type"] == "fargate" {
			continue
		}
		users := volumeUsers(m, n)
		attached := map[string][]string{} // driver → VolumeAttachments
		for _, va := range m.Live.VolumeAttachments {
			if va.NodeName == n.Name {
				attached[va.Attacher] = append(attached[va.Attacher], va.Name)
			}
		}
		for _, w := range daemons {
			if !liveReadNamespace(m, w.Object.Namespace) || sim.Tolerates(sim.PodTolerations(w), taint) || !wouldRunOn(w, n) {
				continue
			}
			driver := p.Sim.PluginDriver(w)
			var mine []volumeUser
			for _, u := range users {
				if driver == "" || u.driver == driver || u.driver == "" {
					mine = append(mine, u)
				}
			}
			vas := attached[driver]
			if driver == "" {
				vas = nil
			}
			if len(mine) == 0 && len(vas) == 0 {
				continue
			}
			state, present := daemonPodState(m, w, n)
			if present {
				continue
			}
			reportEvictedDaemon(p, w, n, taint, state, driver, mine, vas)
		}
	}
}

// volumeUsers lists the pods on a node (other than DaemonSet pods) that mount
// persistent volumes.
func volumeUsers(m *cluster.Model, n *cluster.Node) []volumeUser {
	var out []volumeUser
	for _, p := range m.Pods {
		if !podRunsOn(p, n.Name) || p.Owner.Kind == "DaemonSet" {
			continue
		}
		for _, c := range claimNames(p) {
			out = append(out, volumeUser{pod: p, claim: c, driver: claimDriver(m, p.Object.Namespace, c)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.pod.Object.Ref() != b.pod.Object.Ref() {
			return a.pod.Object.Ref().Less(b.pod.Object.Ref())
		}
		return a.claim < b.claim
	})
	return out
}

// wouldRunOn reports whether a DaemonSet places a pod on the node, leaving
// Karpenter's disruption taint and the node's passing conditions aside: its
// tolerations (with those the DaemonSet controller adds) match every other
// taint, and its node affinity matches.
func wouldRunOn(w *cluster.Workload, n *cluster.Node) bool {
	tols := sim.PodTolerations(w)
	for _, t := range n.Taints {
		// The pod was placed while the node was healthy: conditions of the
		// moment (not-ready, unreachable, the disruption itself) do not say
		// whether it belongs there.
		if !lastingTaint(t) || t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !sim.Tolerates(tols, t) {
			return false
		}
	}
	pod := &corev1.Pod{Spec: w.Template.Spec}
	node := &corev1.Node{}
	node.Name = n.Name
	node.Labels = n.Labels
	ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)
	return err == nil && ok
}

// daemonPodState says whether the DaemonSet's pod is on the node and serving.
func daemonPodState(m *cluster.Model, w *cluster.Workload, n *cluster.Node) (string, bool) {
	for _, p := range m.Pods {
		if p.Owner != w.Ref() || p.Spec.NodeName != n.Name {
			continue
		}
		if deletionTimestamp(p.Object) != "" {
			return "has only a terminating pod (" + p.Object.Name + ") on", false
		}
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		return "", true
	}
	return "has no pod on", false
}

func reportEvictedDaemon(p *Pass, w *cluster.Workload, n *cluster.Node, taint corev1.Taint, state, driver string, users []volumeUser, vas []string) {
	var uses []string
	for _, u := range users {
		s := fmt.Sprintf("%s/%s (claim %s", u.pod.Object.Namespace, u.pod.Object.Name, u.claim)
		if u.driver != "" && driver == "" {
			s += ", " + u.driver
		}
		uses = append(uses, s+")")
	}
	sort.Strings(vas)
	var what []string
	if len(uses) > 0 {
		what = append(what, "pods still use volumes there: "+strings.Join(uses, ", "))
	}
	if len(vas) > 0 {
		what = append(what, "VolumeAttachments still attach volumes to it: "+strings.Join(vas, ", "))
	}
	plugin := "its network agent"
	if driver != "" {
		plugin = "the " + driver + " node plugin"
	}
	summary := fmt.Sprintf("%s %s node %s, which Karpenter is draining (%s), while %s", w.Ref(), state, n.Name, sim.TaintText(taint), strings.Join(what, "; "))
	var b strings.Builder
	fmt.Fprintf(&b, "%s is a %s. It does not tolerate %s, so Karpenter evicted it with the other pods; the DaemonSet controller does not bring it back on the tainted node.", w.Ref(), w.NodeCritical, sim.TaintText(taint))
	if driver != "" {
		b.WriteString("\nWithout " + plugin + " the node cannot unmount, unstage and detach these volumes: their VolumeAttachments stay and the pods' replacements fail with `Multi-Attach error` until the attach/detach controller force-detaches them after six minutes.")
	} else {
		b.WriteString("\nPods still shutting down on the node have lost their network; their volumes may not be released cleanly.")
	}
	if mism := tolerationMismatches(w.Template.Spec.Tolerations, sim.Disruption{Taint: taint}); len(mism) > 0 {
		b.WriteString("\nIts tolerations do not match the taint:")
		for _, l := range mism {
			b.WriteString("\n  - " + l)
		}
	}
	b.WriteString("\nFix the DaemonSet's configuration as disruption-toleration-missing says; the patch below fixes the live object only.")
	var fix *Fix
	all, added := withTolerations(w.Template.Spec.Tolerations, []corev1.Taint{taint})
	if len(added) > 0 {
		patch := nest(podSpecPath(w), map[string]any{"tolerations": tolerationMaps(all)})
		fix = &Fix{
			Summary: fmt.Sprintf("tolerate %s so Karpenter leaves %s on the nodes it drains%s", sim.TaintText(taint), w.Ref(), helmNote(w.Object)),
			Edits:   []Edit{livePatch(w.Object, patch)},
		}
	}
	p.Report(Finding{
		Object:  w.Ref(),
		Origin:  w.Object.Origin,
		Summary: summary,
		Detail:  b.String(),
		Fix:     fix,
	})
}

// ---- live-resource-skipped ----

// skippedImpact says what a resource that could not be read leaves out.
var skippedImpact = map[string]string{
	"pods":                                   "Pending pods (pod-unschedulable, bootstrap-deadlock), the Karpenter controller's pods, drains and the users of volumes are not analysed",
	"nodes":                                  "placement on the existing nodes, drains and attachments to nodes that are gone are not analysed",
	"events":                                 "the scheduler's and Karpenter's own messages are not quoted",
	"persistentvolumes":                      "volumes are not tied to their claims and EBS volume IDs",
	"persistentvolumeclaims":                 "the CSI driver of pods' volumes is not known",
	"deployments.apps":                       "the Karpenter controller cannot be found, so finalizer-stuck is not verified",
	"daemonsets.apps":                        "node-critical DaemonSets (CSI node plugins, CNI agents) are not checked",
	"volumeattachments.storage.k8s.io":       "volumes left attached (volumeattachment-stale) are not checked",
	"nodepools.karpenter.sh":                 "Karpenter capacity is not considered for Pending pods",
	"nodeclaims.karpenter.sh":                "NodeClaims that never registered and stuck finalizers on NodeClaims are not checked",
	"ec2nodeclasses.karpenter.k8s.aws":       "node roles (nodeclaim-not-registered, node-role-unauthorized) are not checked",
	"configmaps kube-system/aws-auth":        "the node role mappings of aws-auth are not checked",
	"priorityclasses.scheduling.k8s.io":      "eviction order by priority is approximate",
	"csidrivers.storage.k8s.io":              "the CSI drivers of the cluster are not listed",
	"replicasets.apps":                       "pods of Deployments are grouped by ReplicaSet rather than by Deployment",
	"jobs.batch":                             "pods of CronJobs are grouped by Job rather than by CronJob",
	"statefulsets.apps":                      "StatefulSets are not checked",
	"cronjobs.batch":                         "CronJobs are not checked",
	"events (reason=FailedAttachVolume)":     "Multi-Attach errors are not quoted",
	"events (reason=FailedScheduling)":       "the scheduler's FailedScheduling messages are not quoted",
	"events (involvedObject.kind=NodeClaim)": "Karpenter's events about NodeClaims are not quoted",
}

func runLiveResourceSkipped(p *Pass) {
	m := p.Model
	if m.Live == nil {
		return
	}
	for _, s := range m.Live.Skipped {
		impact := skippedImpact[s.Resource]
		if impact == "" {
			base, _, _ := strings.Cut(s.Resource, "/")
			base, _, _ = strings.Cut(base, " (")
			impact = skippedImpact[base]
		}
		detail := "What could be read was analysed."
		if impact != "" {
			detail = "Consequence: " + impact + ". " + detail
		}
		var fix *Fix
		if strings.HasPrefix(s.Reason, "forbidden") {
			fix = &Fix{
				Summary: "grant the read-only roles of deploy/rbac.yaml to the credentials eksdoctor uses",
				Edits:   []Edit{{Format: FormatShell, Text: "kubectl apply -f deploy/rbac.yaml  # then bind eksdoctor-reader and eksdoctor-aws-auth-reader to your user or group"}},
			}
		}
		p.Report(Finding{
			Object:  cluster.ObjectRef{Kind: "Resource", Name: s.Resource},
			Origin:  cluster.Origin{File: "cluster:" + m.Live.Context},
			Summary: fmt.Sprintf("could not read %s: %s", s.Resource, s.Reason),
			Detail:  detail,
			Fix:     fix,
		})
	}
}
