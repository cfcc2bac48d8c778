package lint

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/write"
)

var podUnschedulable = &Check{
	ID:       "pod-unschedulable",
	Title:    "Workload fits no capacity",
	Family:   "F1",
	Severity: Error,
	Doc: Doc{
		What: "A workload's pods fit no capacity source once the cluster is up: no node group, Fargate profile, Karpenter NodePool (or, live, node) accepts them. The detail lists every source and why it refuses, in the words kube-scheduler and Karpenter use. A node group offers an extended resource (`nvidia.com/gpu`, `aws.amazon.com/neuron`, `vpc.amazonaws.com/efa`) only where a device plugin for it runs: for the groups eksctl installs such a plugin for, its DaemonSet must tolerate the group's taints, or a plugin the inputs install must run there; otherwise the pods are refused with `Insufficient nvidia.com/gpu` and the reason (eksctl adds tolerations for the NVIDIA groups' taints only from 0.101.0, and no input states the eksctl version, so a taint only those versions tolerate leaves the pods not verified). In a live cluster the Pending pods themselves are judged, one finding per owner (a Deployment's pods together, not per ReplicaSet, with how many are Pending), with the scheduler's own FailedScheduling message quoted beside eksdoctor's source-by-source explanation over the real nodes (Fargate nodes included) and the NodePools, and Karpenter's FailedScheduling event as Karpenter words it (`Karpenter would say: \"Failed to schedule pod, ...\"`). Pods that fit only a NodePool are a warning when no Karpenter controller is ready to launch the node, or when no node has come for more than five minutes; pods that fit an existing node by every rule eksdoctor checks are an info that quotes what the scheduler objects to instead. When the inputs hold NodePools but no node group (a GitOps repository whose node groups live elsewhere), pods every NodePool refuses are a warning that says Karpenter will not launch a node for them and what a node group elsewhere would need — refused for what they require of the node, or for a NodePool's taints when they select a label only that NodePool sets; pods refused only by taints may be meant for the node groups, and stay not verified (info). A cluster entry of `.eksdoctor.yaml` with `capacity: complete` declares that the inputs hold all the cluster's capacity: then nothing is presumed elsewhere, and both are errors. Nodes are judged as kube-scheduler v1.37 judges them (the node-name PreFilter of DaemonSet pods, then its filters in order; the summary counts and words each reason as its FailedScheduling message does); NodePools as Karpenter v1.14's provisioning scheduler does (limits first, including `nodes` and memory capacity after the VM overhead, and in a running cluster less what the NodePool's nodes already hold, from its `status.resources`; DaemonSet overhead per instance type; required terms tried in turn with the heaviest preferred term, then the last term with each lighter preferred term in turn and then alone (a preference that contradicts the term may leave a custom label the pod selects no value at all, which Karpenter accepts where the NodePool does not define it); PreferNoSchedule taints held until its last relaxation). Both are checked against the real schedulers by differential tests.",
		Why:  "The pods stay Pending forever. kube-scheduler reports `0/N nodes are available: N node(s) had untolerated taint(s)`; Karpenter logs `incompatible requirements, label \"workload\" does not have known values` and launches nothing. Nothing in either message says which configuration to change.",
		Fix:  "Tolerate the taint of the capacity meant for the workload, make a NodePool provide the label the workload selects (template label or requirement), or relax the selector. The proposed fix is the smallest change that makes one source accept the pods; it is verified by re-running the analysis. A toleration is proposed only for a source that takes the pods once they tolerate its taints: Karpenter checks a NodePool's taints first and names only them, though its requirements may refuse the pods too.",
		Differences: "Each NodePool's reason is Karpenter's error for it word for word, and `explain` shows Karpenter's whole message for the pod (`Karpenter would log: ...`; `karpenter` in `explain -o json`): its errors for the NodePools that have instance types, in the order its provisioner tries them (by weight, then by name from the end of the alphabet), joined by `; `. Where eksdoctor says more or otherwise: " +
			"(1) Karpenter's errors for taints, requirements and resources do not name the NodePool, so eksdoctor's summary puts `nodepool \"NAME\": ` before each, and leads with the NodePool the pod names (or the one refusing for a reason of its own) instead of Karpenter's order. " +
			"(2) eksdoctor's notes follow Karpenter's words in parentheses: the largest instance type the NodePool allows, and, when Karpenter names only a label the NodePool lacks, the other requirements it fails too (`also key karpenter.sh/nodepool, ...`), without which the label alone would look like the fix. " +
			"(3) When a pod requires several custom labels a NodePool does not define, Karpenter names one of them in Go's map order, which changes from run to run, and guesses a typo the same way; eksdoctor names the first in key order, so the same input always gives the same report. Likewise when the values of several keys do not intersect, Karpenter lists them in map order and eksdoctor in key order. The differential test accepts any label the pod requires in the first case and compares the keys as a set in the second.",
	},
	Run:      runPodUnschedulable,
	Requires: []*Fact{podsFact, livePendingFact},
}

func runPodUnschedulable(p *Pass) {
	// Live workloads are judged by their pods (Pending or not): podsFact
	// leaves them out.
	decided := resultOf[map[*cluster.Workload]*podsDecision](p, podsFact)
	ws := p.Model.Workloads
	p.each(len(ws), func(p *Pass, i int) {
		w := ws[i]
		d := decided[w]
		if d == nil || d.steady == nil {
			return
		}
		if w.IsDaemonSet() {
			reportDaemonSetTaints(p, w, d.steady)
			return
		}
		// A workload meant for Fargate (fargate-profile-mismatch) or needed
		// before Karpenter (bootstrap-deadlock) is explained by those checks
		// when they report it: see arbitrate.
		reportUnschedulable(p, w, d.steady, d.steadyOutcome, w.Object.Origin, w.Ref())
	})
	reportPendingPods(p, pendingUnschedulable)
}

// reportDaemonSetTaints: a DaemonSet only creates pods for the nodes it matches, so
// matching no capacity at all is normal (a Windows DaemonSet without Windows
// nodes). What is wrong is a node-critical DaemonSet (CNI, CSI node plugin) that
// selects a source's nodes but does not tolerate their taints: those nodes run
// without it.
func reportDaemonSetTaints(p *Pass, w *cluster.Workload, pl *sim.Placement) {
	if w.NodeCritical == "" {
		return
	}
	for _, v := range pl.Verdicts {
		if v.Source.Kind == cluster.KindFargate || !onlyTaints(v) ||
			!toleratingTakes(p.Sim, w, pl.Phase, v, blockingTaints(v.Source, w.Template.Spec.Tolerations)) {
			// A NodePool is refused for its taints before its requirements:
			// one whose nodes the DaemonSet would not select anyway is not
			// one it is missing from.
			continue
		}
		p.Report(Finding{
			Severity: Warning,
			Object:   w.Ref(),
			Origin:   w.Object.Origin,
			Summary:  fmt.Sprintf("%s does not run on the nodes of %s: %s", w.Ref(), describeSource(v.Source), v.Reasons[0].Text()),
			Detail:   fmt.Sprintf("%s is a %s.\n%s", w.Ref(), w.NodeCritical, v.Line()),
			Fix:      tolerationFixFor(p, w, pl.Phase, v),
		})
	}
}

func reportUnschedulable(p *Pass, w *cluster.Workload, pl *sim.Placement, outcome podsOutcome, origin cluster.Origin, ref cluster.ObjectRef) {
	if w.Replicas == 0 {
		return
	}
	var sev Severity
	var what string
	switch outcome {
	case podsFine:
		return
	case podsUnverified:
		p.Report(Finding{
			Severity: Info,
			Object:   ref,
			Origin:   origin,
			Summary:  fmt.Sprintf("%s: could not verify that its pods fit any capacity%s", ref, p.beforeApply()),
			Detail:   placementDetail(pl),
			causes:   []string{podsCause(ref)},
		})
		return
	case podsNoNodePool:
		reportNoNodePool(p, w, pl, origin, ref)
		return
	case podsNeedController:
		// Only the absent Karpenter controller stands between the pods and a
		// NodePool: the root cause is reported by bootstrap-deadlock.
		sev, what = Warning, "fits only NodePools, and the Karpenter controller cannot run to launch them"
	default:
		sev, what = Error, "fits no capacity"
	}
	f := Finding{
		Severity: sev,
		Object:   ref,
		Origin:   origin,
		Summary:  fmt.Sprintf("%s %s: %s", ref, what, firstClause(pl)),
		Detail:   placementDetail(pl),
		causes:   []string{podsCause(ref)},
	}
	if pl.Fargate == nil {
		f.Fix = autoModeFix(p.Model, w, pl)
		if f.Fix == nil {
			f.Fix = taintFix(p, w, pl, cluster.KindNodeGroup, cluster.KindNodePool, cluster.KindNode)
		}
		if f.Fix == nil {
			f.Fix = nodePoolLabelFix(p, w, pl)
		}
		if f.Fix == nil {
			f.Fix = fargateComputeTypeFix(p.Model, w)
		}
	}
	p.Report(f)
}

// fargateComputeTypeFix configures an EKS add-on whose pods a Fargate profile
// selects but whose annotation eks.amazonaws.com/compute-type: ec2 keeps off
// Fargate (CoreDNS as EKS creates it) for Fargate: computeType "Fargate" in
// its configuration drops the annotation.
func fargateComputeTypeFix(m *cluster.Model, w *cluster.Workload) *Fix {
	a := w.Addon
	if a == nil || !sim.KeptOffFargate(w.Template.Annotations) || slices.Contains(a.Unknown, "configuration_values") ||
		sim.SelectingProfile(m.FargateProfiles, w.Template.Namespace, templateLabels(w)) == nil {
		return nil
	}
	kb, ok := catalog.AddonFor(a.Name, addonVersion(a))
	if !ok || kb.Accepts("computeType") != catalog.AddonAccepted {
		return nil
	}
	config := addonConfig(a)
	config["computeType"] = "Fargate"
	// An add-on declared anew is created after the profiles that take its pods.
	var deps []string
	for _, fp := range m.FargateProfiles {
		if _, selects := sim.MatchingSelector(fp, w.Template.Namespace, templateLabels(w)); selects {
			if n := m.Terraform.NodeOf(fp.Address); n != "" && !slices.Contains(deps, n) {
				deps = append(deps, n)
			}
		}
	}
	sort.Strings(deps)
	e, ok := write.AddonAfter(m, a, config, deps)
	if !ok {
		return nil
	}
	return &Fix{
		Summary: fmt.Sprintf("configure the %s add-on for Fargate (computeType: Fargate), which drops the annotation %s: ec2 from its pods", a.Name, sim.ComputeTypeKey),
		Edits:   []Edit{e},
	}
}

// reportNoNodePool: the inputs hold the cluster's NodePools and none takes the
// pods, so Karpenter will never launch a node for them; the node groups are
// elsewhere (another repository, the console), and whether one takes them is
// not known. A warning: the NodePools are certain, the rest is not seen.
func reportNoNodePool(p *Pass, w *cluster.Workload, pl *sim.Placement, origin cluster.Origin, ref cluster.ObjectRef) {
	var b strings.Builder
	b.WriteString("Karpenter launches no node for them: every NodePool refuses.\n")
	b.WriteString(placementDetail(pl))
	if need := nodeGroupNeeds(w); need != "" {
		fmt.Fprintf(&b, "\nThey run only if a node group outside these inputs %s.", need)
	}
	f := Finding{
		Severity: Warning,
		Object:   ref,
		Origin:   origin,
		Summary:  fmt.Sprintf("%s fits no NodePool, so Karpenter will not launch a node for it: %s", ref, firstClause(pl)),
		Detail:   b.String(),
		causes:   []string{podsCause(ref)},
	}
	f.Fix = autoModeFix(p.Model, w, pl)
	if f.Fix == nil {
		f.Fix = taintFix(p, w, pl, cluster.KindNodePool)
	}
	if f.Fix == nil {
		f.Fix = nodePoolLabelFix(p, w, pl)
	}
	p.Report(f)
}

// nodeGroupNeeds says what a node group needs to take a workload's pods: the
// labels it selects, the taints it may have (those the pods tolerate).
func nodeGroupNeeds(w *cluster.Workload) string {
	var parts []string
	if sel := w.Template.Spec.NodeSelector; len(sel) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(sel)) {
			kv = append(kv, k+"="+sel[k])
		}
		parts = append(parts, "carries the labels "+strings.Join(kv, ", "))
	}
	var tol []string
	for _, t := range w.Template.Spec.Tolerations {
		if t.Key != "" {
			tol = append(tol, t.Key)
		}
	}
	if len(tol) > 0 {
		parts = append(parts, "has no taint but those the pods tolerate ("+strings.Join(tol, ", ")+")")
	} else {
		parts = append(parts, "has no taint")
	}
	return strings.Join(parts, " and ")
}

// nodePoolLabelFix: when a NodePool refuses the workload only because it does not
// provide a label the workload selects with a single value, add that label to the
// NodePool's template.
func nodePoolLabelFix(p *Pass, w *cluster.Workload, pl *sim.Placement) *Fix {
	for _, v := range pl.Verdicts {
		np, key, value, ok := missingLabelOnly(w, v)
		if !ok {
			continue
		}
		labels := map[string]any{}
		for k, val := range np.Labels {
			labels[k] = val
		}
		labels[key] = value
		patch := nest(poolLabelsParent(np), map[string]any{"labels": labels})
		e, ok := write.ObjectPatch(p.Model, np.Object, patch)
		if !ok {
			return nil
		}
		return &Fix{
			Summary: fmt.Sprintf("label the nodes of %s with %s=%s, the label the pods select", poolWord(np), key, value),
			Edits:   []Edit{e},
		}
	}
	return nil
}
