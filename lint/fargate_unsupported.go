package lint

import (
	"fmt"
	"slices"
	"strings"

	goversion "github.com/hashicorp/go-version"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/write"
)

// fargate-unsupported: pods a Fargate profile takes that Fargate cannot run (DaemonSets, host ports, privileged containers, Karpenter without its cluster name or role).

var fargateUnsupported = &Check{
	ID:       "fargate-unsupported",
	Title:    "Fargate pod uses what Fargate lacks",
	Family:   "F2",
	Severity: Error,
	Doc: Doc{
		What: "A pod a Fargate profile selects uses what Fargate does not offer: hostNetwork, hostPort, privileged containers, EKS Pod Identity (a pod identity association for its service account; Fargate supports IRSA only), or the instance metadata service (the Karpenter controller without `settings.clusterName`). It also warns when such a pod tolerates `eks.amazonaws.com/compute-type=fargate` (the wrong fix for pods created before their profile was active, added to the terraform-aws-eks v20.8 example), when a pod no profile selects tolerates that taint, when a `helm_release` whose pods only Fargate can host does not depend on its Fargate profile (reading outputs of terraform-aws-modules/eks such as `cluster_name` or `cluster_endpoint` is not depending on it: each output waits only for what its expression refers to inside the module, the cluster and its access entries, not the Fargate profiles; `depends_on = [module.eks]` or the `fargate_profiles` output is), when a Fargate-only cluster has DaemonSets, and when a DaemonSet on a cluster that also has Fargate nodes tolerates the Fargate taint (a wildcard toleration included) with nothing in its node selection keeping it off Fargate nodes.",
		Why:  "Fargate refuses such pods or they fail at runtime: credentials from Pod Identity never arrive and Karpenter panics `failed to get region from metadata server`. A pod created before its profile is ACTIVE is never mutated for Fargate and stays Pending with `untolerated taint {eks.amazonaws.com/compute-type: fargate}`; tolerating that taint makes the default scheduler bind it to another pod's Fargate node, which holds one pod: `0/2 nodes are available: 2 Too many pods`.",
		Fix:  "Remove the toleration; make the Helm release depend on the Fargate profile (`depends_on`); switch the controller to IRSA (`enable_irsa = true`, `create_pod_identity_association = false` in the karpenter module, or eksctl `iam.serviceAccounts`); set `settings.clusterName`; run host-level pods on node groups.",
	},
	Run:        runFargateUnsupported,
	Supersedes: []*Check{bootstrapDeadlock, podUnschedulable},
}

func runFargateUnsupported(p *Pass) {
	m := p.Model
	for _, g := range liveTurnedAwayGroups(p) {
		e := tolerationEvidence{live: &g, tolerates: true, turnedAway: true}
		reportToleration(p, e, decideToleration(e), nil)
	}
	if len(m.FargateProfiles) == 0 {
		return
	}
	fargateOnly := len(m.NodeGroups) == 0 && len(m.NodePools) == 0 && len(m.Nodes) == 0
	for _, w := range m.Workloads {
		if w.Replicas == 0 || !judgedStatically(m, w) {
			continue
		}
		fp := sim.ProfileFor(m.FargateProfiles, w.Template.Namespace, templateLabels(w), w.Template.Annotations)
		ref := w.Ref()
		if w.IsDaemonSet() {
			// EKS add-ons and node agents (CNI, CSI node plugins, kube-proxy)
			// serve EC2 nodes only; their DaemonSets simply have no pods here.
			agent := w.Addon != nil || w.NodeCritical != "" || w.Component == "kube-proxy"
			if fp != nil && fargateOnly && !agent {
				p.Report(Finding{
					Severity: Warning,
					Object:   ref,
					Origin:   w.Object.Origin,
					Summary:  fmt.Sprintf("%s is a DaemonSet in a namespace Fargate profile %q selects, and the cluster has only Fargate capacity: Fargate runs no DaemonSet pods", ref, fp.Name),
					Detail:   "Fargate nodes run one pod each and never run DaemonSet pods; run the agent as a sidecar, or add a node group.",
				})
			}
			// A Fargate profile exists to run pods: its pods, seen in the
			// inputs or deployed elsewhere, each make a Fargate node.
			if !fargateOnly && !fargateAwareAgent(w) && sim.OnFargateNodes(w) && (fargateNodes(p) > 0 || len(m.FargateProfiles) > 0) {
				reportDaemonSetOnFargateNodes(p, w)
			}
			continue
		}
		if fp == nil {
			e := workloadTolerationEvidence(w, nil)
			reportToleration(p, e, decideToleration(e), nil)
			continue
		}
		checkFargatePod(p, w, fp)
	}
}

func checkFargatePod(p *Pass, w *cluster.Workload, fp *cluster.FargateProfile) {
	m := p.Model
	ref := w.Ref()
	spec := &w.Template.Spec
	at := func(field string) cluster.Origin { return w.Object.At(podSpecPath(w) + "." + field) }
	report := func(f Finding) {
		f.Object, f.Summary = ref, ref.String()+" runs on Fargate (profile "+fmt.Sprintf("%q", fp.Name)+") but "+f.Summary
		p.Report(f)
	}
	if spec.HostNetwork {
		report(Finding{Origin: at("hostNetwork"), Summary: "uses hostNetwork, which Fargate does not support", Detail: "Fargate does not run pods with hostNetwork: the pods are never scheduled. Run them on a node group, or drop hostNetwork."})
	}
	if c, port, ok := hostPort(spec); ok {
		report(Finding{Origin: at("containers"), Summary: fmt.Sprintf("container %s uses hostPort %d, which Fargate does not support", c, port), Detail: "Fargate does not run pods with host ports. Use a Service instead, or run the pods on a node group."})
	}
	if c, ok := privileged(spec); ok {
		report(Finding{Origin: at("containers"), Summary: fmt.Sprintf("container %s is privileged, which Fargate does not support", c), Detail: "Fargate does not run privileged containers. Run the pods on a node group."})
	}
	sa := spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	for _, id := range m.Identity.ServiceAccounts {
		if id.Mechanism != "pod-identity" || id.Namespace != w.Template.Namespace || id.Name != sa {
			continue
		}
		report(Finding{
			Origin:  id.Origin,
			Summary: fmt.Sprintf("service account %s/%s gets its AWS credentials from EKS Pod Identity, which Fargate does not support", id.Namespace, id.Name),
			Detail:  "The EKS Pod Identity agent is a DaemonSet and Fargate runs none: the pods get no AWS credentials (and no region: Karpenter panics `failed to get region from metadata server`). Fargate pods use IRSA: the service account annotated with eks.amazonaws.com/role-arn, trusted through the cluster's OIDC provider.",
			Fix:     irsaFix(m, w, id),
		})
		break
	}
	if w.Component == "karpenter" && w.Object.Kind == "Deployment" {
		if missing, ok := karpenterClusterNameMissing(w); ok {
			report(Finding{
				Origin:  w.Object.Origin,
				Summary: "the Karpenter controller has no cluster name (" + missing + "), and Fargate has no instance metadata to discover it",
				Detail:  "Fargate pods cannot reach the instance metadata service (IMDS), so Karpenter must be told its cluster name (settings.clusterName, the CLUSTER_NAME environment variable); without it the controller exits at start.",
				Fix:     clusterNameFix(m, w),
			})
		}
	}
	e := workloadTolerationEvidence(w, fp)
	reportToleration(p, e, decideToleration(e), report)
	checkProfileDependency(p, w, fp, report)
}

func hostPort(spec *corev1.PodSpec) (string, int32, bool) {
	for _, c := range append(append([]corev1.Container(nil), spec.InitContainers...), spec.Containers...) {
		for _, p := range c.Ports {
			if p.HostPort != 0 {
				return c.Name, p.HostPort, true
			}
		}
	}
	return "", 0, false
}

func privileged(spec *corev1.PodSpec) (string, bool) {
	for _, c := range append(append([]corev1.Container(nil), spec.InitContainers...), spec.Containers...) {
		if sc := c.SecurityContext; sc != nil && sc.Privileged != nil && *sc.Privileged {
			return c.Name, true
		}
	}
	return "", false
}

// karpenterClusterNameMissing reports whether the Karpenter controller is given no
// cluster name: CLUSTER_NAME (or --cluster-name) in a container, or, for a chart
// release described from the knowledge base, the values key its version reads
// (clusterNameKey). Charts before 0.4.3 take the cluster from each Provisioner
// (spec.cluster): nothing is missing there.
func karpenterClusterNameMissing(w *cluster.Workload) (string, bool) {
	for _, c := range w.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == "CLUSTER_NAME" && (strings.TrimSpace(e.Value) != "" || e.ValueFrom != nil) {
				return "", false
			}
		}
		for _, a := range append(append([]string(nil), c.Args...), c.Command...) {
			if strings.HasPrefix(a, "--cluster-name") {
				return "", false
			}
		}
	}
	if r := w.Release; r != nil && !r.Rendered {
		key := "settings.clusterName"
		if kb, ok := releaseChart(r); ok {
			key = clusterNameKey(kb.Version)
		}
		if key == "" {
			return "", false
		}
		for _, k := range []string{key, "settings.clusterName", "settings.aws.clusterName"} {
			if v, ok := cluster.Lookup(r.Values, k).(string); ok && strings.TrimSpace(v) != "" {
				return "", false
			}
		}
		return key + " is not set", true
	}
	return "the container has no CLUSTER_NAME", true
}

// clusterNameKey is the values key a Karpenter chart version reads the cluster
// name from: settings.clusterName from 0.32, settings.aws.clusterName 0.19–0.31,
// the top-level clusterName 0.6.2–0.18, controller.clusterName 0.4.3–0.6.1, and
// none before (each Provisioner names its cluster). Chart templates by tag,
// aws/karpenter-provider-aws v0.4.3, v0.6.2, v0.19.0, v0.32.0.
func clusterNameKey(version string) string {
	switch {
	case versionBefore(version, "0.4.3"):
		return ""
	case versionBefore(version, "0.6.2"):
		return "controller.clusterName"
	case versionBefore(version, "0.19.0"):
		return "clusterName"
	case versionBefore(version, "0.32.0"):
		return "settings.aws.clusterName"
	}
	return "settings.clusterName"
}

// versionBefore reports whether version v is known and older than w.
func versionBefore(v, w string) bool {
	a, err := goversion.NewVersion(v)
	if err != nil {
		return false
	}
	b, err := goversion.NewVersion(w)
	return err == nil && a.LessThan(b)
}

// clusterNameValue is the cluster name to write into Karpenter's configuration:
// a reference to the cluster in Terraform, else its name; "" when unknown.
func clusterNameValue(m *cluster.Model, inTerraform bool) string {
	if e, ok := write.ClusterNameExpr(m.Cluster); ok && inTerraform {
		return cluster.Unknown(e)
	}
	if m.Cluster.Name != "" && !cluster.IsUnknown(m.Cluster.Name) {
		return m.Cluster.Name
	}
	if !inTerraform {
		// The shell variable the Karpenter getting-started guide uses.
		return "${CLUSTER_NAME}"
	}
	return ""
}

func clusterNameFix(m *cluster.Model, w *cluster.Workload) *Fix {
	if r := w.Release; r != nil {
		name := clusterNameValue(m, m.Terraform.InConfig(r.Origin.File))
		if name == "" {
			return nil
		}
		key := "settings.clusterName"
		if kb, ok := releaseChart(r); ok && clusterNameKey(kb.Version) != "" {
			key = clusterNameKey(kb.Version)
		}
		values := map[string]any{}
		setPath(values, key, name)
		return releaseValuesFix("set "+key+" in the Karpenter values", r, values)
	}
	containers := copyJSONList(w.Object.Get(podSpecPath(w) + ".containers"))
	if len(containers) == 0 {
		return nil
	}
	c, ok := containers[0].(map[string]any)
	if !ok {
		return nil
	}
	env := copyJSONList(c["env"])
	c["env"] = append(env, map[string]any{"name": "CLUSTER_NAME", "value": clusterNameValue(m, false)})
	e, ok := write.ObjectPatch(m, w.Object, nest(podSpecPath(w), map[string]any{"containers": containers}))
	if !ok {
		return nil
	}
	return &Fix{Summary: "give the Karpenter controller its cluster name (CLUSTER_NAME)", Edits: []Edit{e}}
}

// removeTolerationFix drops the Fargate toleration where the workload is
// configured.
func removeTolerationFix(m *cluster.Model, w *cluster.Workload) *Fix {
	summary := "remove the toleration of " + sim.TaintText(fargateTaint)
	if r := w.Release; r != nil {
		key, ok := chartValuesKey(r, w, podSpecPath(w)+".tolerations")
		if !ok {
			key, ok = chartValuesKey(r, w, "spec.template.spec.tolerations")
		}
		if !ok {
			return nil
		}
		var rest []any
		for _, it := range copyJSONList(cluster.Lookup(r.Values, key)) {
			if t, ok := it.(map[string]any); ok && t["key"] == fargateTaint.Key {
				continue
			}
			rest = append(rest, it)
		}
		if len(rest) == 0 {
			// Back to the chart's own tolerations: Helm's null would delete
			// those too.
			rest = chartDefaultList(r, w, key)
		}
		if rest == nil {
			rest = []any{}
		}
		values := map[string]any{}
		setPath(values, key, rest)
		return releaseValuesFix(summary, r, values)
	}
	if w.Addon != nil {
		return nil
	}
	var rest []corev1.Toleration
	for _, t := range w.Template.Spec.Tolerations {
		if t.Key != fargateTaint.Key {
			rest = append(rest, t)
		}
	}
	var value any = tolerationMaps(rest)
	if len(rest) == 0 {
		value = nil
	}
	e, ok := write.ObjectPatch(m, w.Object, nest(podSpecPath(w), map[string]any{"tolerations": value}))
	if !ok {
		return nil
	}
	return &Fix{Summary: summary, Edits: []Edit{e}}
}

// irsaFix moves a service account from EKS Pod Identity to IRSA.
func irsaFix(m *cluster.Model, w *cluster.Workload, id cluster.ServiceAccountIdentity) *Fix {
	summary := fmt.Sprintf("give %s/%s its role through IRSA instead of EKS Pod Identity", id.Namespace, id.Name)
	edits, how, ok := write.IRSA(m, w.Release, id)
	if !ok {
		return nil
	}
	return &Fix{Summary: summary + " (" + how + ")", Edits: edits}
}

// checkProfileDependency warns when Terraform may install a release before the
// Fargate profile that must host its pods is active.
func checkProfileDependency(p *Pass, w *cluster.Workload, fp *cluster.FargateProfile, report func(Finding)) {
	m := p.Model
	r := w.Release
	if r == nil || r.Address == "" || m.Terraform == nil {
		return
	}
	if _, ok := m.Terraform.Nodes[r.Address]; !ok {
		return
	}
	node := m.Terraform.NodeOf(fp.Address)
	if node == "" {
		return
	}
	// The profile inside a modelled module (terraform-aws-modules/eks) is a
	// part of it: reading module.eks.cluster_name does not wait for it.
	part := m.Terraform.PartOf(fp.Address)
	if part == "" || m.Terraform.Reaches(r.Address, part) {
		return
	}
	if ec2Fallback(p.Sim.Place(w, requiredPhase(w))) {
		return
	}
	deps := append([]string(nil), m.Terraform.Nodes[r.Address].DependsOn...)
	deps = append(deps, node)
	e, ok := write.DependsOn(m, r.Address, deps)
	f := Finding{
		Severity: Warning,
		Origin:   r.Origin,
		Summary:  fmt.Sprintf("%s does not depend on %s, so Terraform may create the pods before the profile is active", r.Address, node),
		Detail:   fmt.Sprintf("Pods created before Fargate profile %q is ACTIVE are not mutated for Fargate: they keep the default scheduler and stay Pending with `untolerated taint {eks.amazonaws.com/compute-type: fargate}` until deleted. Terraform creates %s and the profile in parallel unless one depends on the other.", fp.Name, r.Address),
	}
	if part != node {
		f.Summary = fmt.Sprintf("%s does not depend on the Fargate profiles of %s, so Terraform may create the pods before the profile is active", r.Address, node)
		read := ""
		if outs := moduleOutputsRead(m.Terraform, r.Address, node); len(outs) > 0 {
			read = " (" + strings.Join(outs, ", ") + ")"
		}
		f.Detail += fmt.Sprintf(" Referring to outputs of %s%s waits only for what those outputs refer to inside the module (the cluster, not its Fargate profiles); depends_on = [%s] waits for the whole module.", node, read, node)
	}
	if ok {
		f.Fix = &Fix{Summary: "create the release after its Fargate profile: depends_on = [" + node + "]", Edits: []Edit{e}}
	}
	report(f)
}

// ec2Fallback reports whether EC2 capacity would take the pods if Fargate did
// not select them.
func ec2Fallback(pl *sim.Placement) bool {
	for _, v := range pl.Verdicts {
		if v.Source.Kind == cluster.KindFargate || v.Result != sim.Refuses {
			continue
		}
		if len(v.Reasons) == 1 && v.Reasons[0].Code == sim.CodeFargateSelected {
			return true
		}
	}
	return false
}

// fargateNodeFull reports whether a Fargate node of the cluster turns the pod
// away for holding its one pod already: "Too many pods" from ordinary nodes
// that are full is not this.
func fargateNodeFull(s *sim.Simulator, pod *cluster.Pod) bool {
	for _, v := range s.PlacePod(pod).Verdicts {
		n := v.Source.Node
		if v.Source.Kind != cluster.KindNode || n == nil || n.Labels[fargateTaint.Key] != fargateTaint.Value || len(v.Reasons) == 0 {
			continue
		}
		if r := v.Reasons[0]; r.Code == sim.CodeResources && slices.Contains(r.Resources, corev1.ResourcePods) {
			return true
		}
	}
	return false
}

// Whether pods tolerate the Fargate taint to their loss is decided once, by
// decideToleration, for the configuration and for a running cluster alike:
// pods no profile takes that tolerate it are bound by the default scheduler
// to Fargate nodes, which hold one pod each. A running cluster adds that it
// happened: Fargate nodes turned the Pending pods away (`Too many pods`).

// tolerationEvidence is what is known about pods and the Fargate taint.
type tolerationEvidence struct {
	// tolerates: the pods tolerate the Fargate taint (toleration, when read
	// from the configuration).
	tolerates  bool
	toleration corev1.Toleration
	// profile is the Fargate profile that takes the pods (in a running
	// cluster, none: the pods are the default scheduler's).
	profile *cluster.FargateProfile
	// turnedAway: in a running cluster, Fargate nodes that hold their one
	// pod already turned the Pending pods away.
	turnedAway bool

	// Where the evidence comes from: a workload of the configuration, or
	// Pending pods of a running cluster.
	w    *cluster.Workload
	live *turnedAwayGroup
}

// tolerationOutcome is what the evidence says.
type tolerationOutcome int

const (
	tolerationFine tolerationOutcome = iota
	// tolerationStrands: no profile takes the pods, and the default
	// scheduler binds them to Fargate nodes that hold another pod.
	tolerationStrands
	// tolerationWrongFix: a profile takes the pods; the toleration is the
	// wrong fix for pods created before their profile was active.
	tolerationWrongFix
)

// decideToleration decides what tolerating the Fargate taint does to pods.
func decideToleration(e tolerationEvidence) tolerationOutcome {
	switch {
	case !e.tolerates:
		return tolerationFine
	case e.profile != nil:
		return tolerationWrongFix
	case e.live != nil && !e.turnedAway:
		// Not (yet) bound to a full Fargate node.
		return tolerationFine
	}
	return tolerationStrands
}

// workloadTolerationEvidence gathers the evidence of a workload of the
// configuration, with the profile that takes its pods (nil for none).
func workloadTolerationEvidence(w *cluster.Workload, fp *cluster.FargateProfile) tolerationEvidence {
	t, ok := toleratesFargate(w.Template.Spec.Tolerations)
	return tolerationEvidence{w: w, tolerates: ok, toleration: t, profile: fp}
}

// turnedAwayGroup is the Pending pods of one owner that tolerate the Fargate
// taint and that Fargate nodes turned away.
type turnedAwayGroup struct {
	owner cluster.ObjectRef
	pods  []*cluster.Pod
	event cluster.Event
}

// liveTurnedAwayGroups returns the Pending pods of a running cluster,
// tolerating the Fargate taint, that the default scheduler tried on Fargate
// nodes which already hold their one pod.
func liveTurnedAwayGroups(p *Pass) []turnedAwayGroup {
	groups := pendingPods(p.Model, func(pod *cluster.Pod) bool {
		_, tol := toleratesFargate(pod.Spec.Tolerations)
		_, ev := schedulingEvent(pod, "Too many pods")
		return tol && ev && pod.Spec.SchedulerName != "fargate-scheduler" && fargateNodeFull(p.Sim, pod)
	})
	var out []turnedAwayGroup
	for _, ref := range sortedOwners(groups) {
		pods := groups[ref]
		ev, _ := schedulingEvent(pods[0], "Too many pods")
		out = append(out, turnedAwayGroup{owner: ref, pods: pods, event: ev})
	}
	return out
}

// reportToleration words an outcome: for a workload of the configuration
// (through report, checkFargatePod's, when a profile takes its pods), or for
// Pending pods of a running cluster.
func reportToleration(p *Pass, e tolerationEvidence, o tolerationOutcome, report func(Finding)) {
	switch {
	case o == tolerationFine:
	case e.live != nil:
		g := e.live
		p.Report(Finding{
			Object:  g.owner,
			Origin:  g.pods[0].Object.Origin,
			Summary: fmt.Sprintf("%s: %d pod(s) Pending with %q: they tolerate %s, so the default scheduler tries Fargate nodes, which hold one pod each", g.owner, len(g.pods), g.event.Message, sim.TaintText(fargateTaint)),
			causes:  podCauses(g.pods),
			Detail:  fmt.Sprintf("Remove the toleration and let a Fargate profile select the pods (fargate-scheduler gives each its own node). Pods: %s.", podNameList(g.pods)),
		})
	case o == tolerationStrands:
		w := e.w
		ref := w.Ref()
		p.Report(Finding{
			Object:  ref,
			Origin:  w.Object.At(podSpecPath(w) + ".tolerations"),
			Summary: fmt.Sprintf("%s tolerates %s but no Fargate profile selects it: the default scheduler binds it to another pod's Fargate node (`Too many pods`)", ref, sim.TaintText(fargateTaint)),
			Detail:  fmt.Sprintf("Toleration %s lets kube-scheduler place the pods on existing Fargate nodes, which hold exactly one pod each: the pods stay Pending with `0/N nodes are available: N Too many pods`. A profile must select the pods instead (fargate-profile-mismatch says which).", fargateTolerationText(e.toleration)),
			Fix:     removeTolerationFix(p.Model, w),
		})
	case o == tolerationWrongFix:
		report(Finding{
			Severity: Warning,
			Origin:   e.w.Object.At(podSpecPath(e.w) + ".tolerations"),
			Summary:  fmt.Sprintf("also tolerates %s", sim.TaintText(fargateTaint)),
			Detail:   fmt.Sprintf("Toleration %s is the wrong fix for pods created before their Fargate profile was active: such pods are scheduled by the default scheduler, which then binds them to other pods' Fargate nodes (`0/2 nodes are available: 2 Too many pods`). Create the pods after the profile instead (depends_on).", fargateTolerationText(e.toleration)),
			Fix:      removeTolerationFix(p.Model, e.w),
		})
	}
}

// fargateAwareAgents are the EKS add-ons whose DaemonSets keep off Fargate
// nodes with a required affinity on eks.amazonaws.com/compute-type NotIn
// [fargate] (their published manifests), which the knowledge base's reduced
// templates may leave out.
var fargateAwareAgents = []string{"vpc-cni", "kube-proxy", "eks-pod-identity-agent", "aws-ebs-csi-driver", "aws-efs-csi-driver", "aws-mountpoint-s3-csi-driver"}

func fargateAwareAgent(w *cluster.Workload) bool {
	return w.Component == "kube-proxy" || w.Addon != nil && slices.Contains(fargateAwareAgents, w.Addon.Name)
}

// reportDaemonSetOnFargateNodes: a DaemonSet that tolerates the Fargate taint
// and whose node selection admits Fargate nodes gets a pod for every Fargate
// node, and Fargate nodes hold one pod each.
func reportDaemonSetOnFargateNodes(p *Pass, w *cluster.Workload) {
	ref := w.Ref()
	f := Finding{
		Severity: Warning,
		Object:   ref,
		Origin:   w.Object.At(podSpecPath(w) + ".tolerations"),
		Summary:  fmt.Sprintf("%s tolerates %s and nothing keeps it off Fargate nodes: the DaemonSet gets a pod for every Fargate node, and each stays Pending (`Too many pods`)", ref, sim.TaintText(fargateTaint)),
		Detail:   "The DaemonSet controller makes a pod for every node whose taints the pods tolerate and whose labels their node selection admits; Fargate nodes (label eks.amazonaws.com/compute-type=fargate) run exactly one pod each, so these pods never start, the rollout never completes, and an add-on that waits for it stays DEGRADED. Keep the DaemonSet off Fargate with a required node affinity on eks.amazonaws.com/compute-type NotIn [fargate], as the EKS add-ons' own agents do.",
	}
	if a := w.Template.Spec.Affinity; a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		affinity := map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
			"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{
				"key": sim.ComputeTypeKey, "operator": "NotIn", "values": []any{"fargate"},
			}}}},
		}}}
		f.Fix = podFix(p.Model, w, PodChange{Field: "affinity", Value: affinity}, "keep the DaemonSet off Fargate nodes with a required node affinity eks.amazonaws.com/compute-type NotIn [fargate]")
	}
	p.Report(f)
}

// moduleOutputsRead lists the outputs of a module call a resource reads
// ("module.eks.cluster_name").
func moduleOutputsRead(g *cluster.Graph, addr, call string) []string {
	var out []string
	for _, o := range g.Nodes[addr].RefOutputs[call] {
		if o != "" {
			out = append(out, call+"."+o)
		}
	}
	return out
}
