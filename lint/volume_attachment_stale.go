package lint

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/shell"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/write"
)

// volume-attachment-stale: VolumeAttachments left on nodes that are gone or being drained, which keep volumes from attaching elsewhere.

var volumeAttachmentStale = &Check{
	ID:       "volumeattachment-stale",
	Title:    "Volume still attached to a node that is gone or being disrupted",
	Family:   "F3",
	Severity: Error,
	Live:     true,
	Doc: Doc{
		What: "A VolumeAttachment keeps a persistent volume attached to a node that no longer exists, or that is being deleted or disrupted (it carries Karpenter's disruption taint) while no pod on it uses the volume any more. The finding names the PersistentVolume, its claim, the CSI driver, the EBS volume ID, and the pods waiting for the volume elsewhere, quoting the attach/detach controller's `FailedAttachVolume` events about them (`Multi-Attach error`, `Waiting for detach`).",
		Why:  "The volume cannot be attached to the node where its pod is rescheduled: the pod stays in ContainerCreating with `Multi-Attach error for volume \"pvc-...\" Volume is already exclusively attached to one node and can't be attached to another` (or, once no pod uses it on the old node, `Waiting for detach for volume \"...\" Volume is already exclusively attached to one node, waiting on detach before it can be attached to another node`) until the attach/detach controller force-detaches it after six minutes, or forever when the CSI controller cannot process the detach. It usually means the CSI node plugin left the node before the volumes were unmounted (see `disruption-daemonset-evicted`).",
		Fix:  "Make the CSI node plugin tolerate Karpenter's disruption taint (`disruption-toleration-missing`) so it unmounts volumes before it leaves. For the attachment at hand: check the volume in EC2 (`aws ec2 describe-volumes`); check that the CSI controller runs; once the volume is detached in EC2 (or its instance is terminated), remove the VolumeAttachment's finalizer so the volume can attach elsewhere.",
	},
	Run: runVolumeAttachmentStale,
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

// multiAttach returns a pod's newest FailedAttachVolume event that says its
// volume is attached to another node, if read: "Multi-Attach error for
// volume ... Volume is already exclusively attached to one node and can't be
// attached to another" while a pod there uses it, "Waiting for detach for
// volume ... Volume is already exclusively attached to one node, waiting on
// detach before it can be attached to another node" once none does
// (kube-controller-manager v1.37's attach/detach controller, observed).
func multiAttach(p *cluster.Pod) (string, bool) {
	for i := len(p.Events) - 1; i >= 0; i-- {
		msg := p.Events[i].Message
		if strings.Contains(msg, "Multi-Attach error") || strings.Contains(msg, "is already exclusively attached to one node") {
			return msg, true
		}
	}
	return "", false
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
			if !usesClaim(pod, vol.claim) || pod.Spec.NodeName == va.NodeName {
				continue
			}
			if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
				continue
			}
			// Waiting: not ready, or told by the attach/detach controller
			// that the volume is attached elsewhere (while this attachment
			// stays, it still is).
			msg, told := multiAttach(pod)
			if pod.Ready() && !told {
				continue
			}
			waiting = append(waiting, pod.Object.Namespace+"/"+pod.Object.Name)
			if told {
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
		b.WriteString("\nThe attach/detach controller (FailedAttachVolume) on " + q)
	}
	b.WriteString("\nA volume attached to one node cannot attach to another: the pods that need it stay in ContainerCreating until the attach/detach controller force-detaches it (after six minutes), or until the CSI controller processes the detach. A CSI node plugin evicted before it unmounted the volume is the usual cause (see disruption-daemonset-evicted).")

	var edits []Edit
	edits = append(edits, Edit{Format: FormatShell, Text: "kubectl describe volumeattachment " + shell.Quote(va.Name)})
	if vol.handle != "" && strings.HasPrefix(vol.handle, "vol-") {
		edits = append(edits, Edit{Format: FormatShell, Text: fmt.Sprintf("aws ec2 describe-volumes --volume-ids %s --query 'Volumes[0].Attachments'", shell.Quote(vol.handle))})
	}
	for i, f := range va.Object.Finalizers() {
		path := fmt.Sprintf("/metadata/finalizers/%d", i)
		patch := []any{map[string]any{"op": "test", "path": path, "value": f}, map[string]any{"op": "remove", "path": path}}
		edits = append(edits, write.JSONPatchCommand("volumeattachment", va.Name, patch, "only once EC2 shows the volume detached"))
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
