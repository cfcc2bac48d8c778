package lint

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/identity"
	"github.com/eksdoctor/eksdoctor/internal/textmatch"
	"github.com/eksdoctor/eksdoctor/sim"
)

// The F2 checks. EKS runs a pod on Fargate only when a profile selects it at
// creation: its namespace matches a selector's and it carries every label of that
// selector (* and ? wildcards). Such pods are mutated to use fargate-scheduler and
// get a Fargate node each; every other pod sees Fargate nodes as tainted
// eks.amazonaws.com/compute-type=fargate:NoSchedule.

// fargateTaint is the taint of every Fargate node.
var fargateTaint = corev1.Taint{Key: "eks.amazonaws.com/compute-type", Value: "fargate", Effect: corev1.TaintEffectNoSchedule}

// maxFargateSelectors is the EKS limit on selectors per profile.
const maxFargateSelectors = 5

var fargateProfileMismatch = &Check{
	ID:       "fargate-profile-mismatch",
	Title:    "Pods meant for Fargate match no profile",
	Family:   "F2",
	Severity: Error,
	Doc: Doc{
		What: "Pods that can only run on Fargate match no Fargate profile selector: no node group exists for them (in the bootstrap phase for the Karpenter controller, chart hooks and other components needed before Karpenter launches nodes), or a profile was meant for them but misses: its namespace is the release's name while the release is installed elsewhere (a profile for `karpenter` while terraform-aws-eks v20's karpenter module and the release use `kube-system`), or it requires a label the pods never carry (the Karpenter v1.0.0 chart's `post-install-hook` Job has no podLabels). The detail quotes each selector and the pod's namespace and labels. It also reports profiles EKS rejects: more than five selectors, or a selector without a namespace.",
		Why:  "The pods are never mutated for Fargate, so the default scheduler sees only Fargate nodes and reports `0/N nodes are available: N node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}` (or `no nodes available to schedule pods`); the Karpenter controller never starts and no node is ever launched, and `helm install` waits for its hook until it times out.",
		Fix:  "Add a selector that matches the pods (the fix adds the pods' namespace and their `app.kubernetes.io/name` label to the profile the pods were meant for, in the Terraform `fargate_profiles` entry, the `aws_eks_fargate_profile`, or the eksctl `fargateProfiles` entry), or give the pods the labels the selector requires (`podLabels` in the Helm values, the pod template labels). For the Karpenter v1.0.0 hook, use chart 1.0.1 or later.",
		Before: `apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: demo, region: eu-west-1}
fargateProfiles:
- name: karpenter
  selectors:
  - namespace: karpenter
---
# Karpenter installed in kube-system
apiVersion: apps/v1
kind: Deployment
metadata: {name: karpenter, namespace: kube-system}`,
		After: `apiVersion: eksctl.io/v1alpha5
kind: ClusterConfig
metadata: {name: demo, region: eu-west-1}
fargateProfiles:
- name: karpenter
  selectors:
  - namespace: karpenter
  - namespace: kube-system
    labels: {app.kubernetes.io/name: karpenter}`,
		Format: "yaml",
	},
	Run: runFargateProfileMismatch,
}

var fargateUnsupported = &Check{
	ID:       "fargate-unsupported",
	Title:    "Fargate pod uses what Fargate lacks",
	Family:   "F2",
	Severity: Error,
	Doc: Doc{
		What: "A pod a Fargate profile selects uses what Fargate does not offer: hostNetwork, hostPort, privileged containers, EKS Pod Identity (a pod identity association for its service account; Fargate supports IRSA only), or the instance metadata service (the Karpenter controller without `settings.clusterName`). It also warns when such a pod tolerates `eks.amazonaws.com/compute-type=fargate` (the wrong fix for pods created before their profile was active, added to the terraform-aws-eks v20.8 example), when a pod no profile selects tolerates that taint, when a `helm_release` whose pods only Fargate can host does not depend on its Fargate profile, and when a Fargate-only cluster has DaemonSets.",
		Why:  "Fargate refuses such pods or they fail at runtime: credentials from Pod Identity never arrive and Karpenter panics `failed to get region from metadata server`. A pod created before its profile is ACTIVE is never mutated for Fargate and stays Pending with `untolerated taint {eks.amazonaws.com/compute-type: fargate}`; tolerating that taint makes the default scheduler bind it to another pod's Fargate node, which holds one pod: `0/2 nodes are available: 2 Too many pods`.",
		Fix:  "Remove the toleration; make the Helm release depend on the Fargate profile (`depends_on`); switch the controller to IRSA (`enable_irsa = true`, `create_pod_identity_association = false` in the karpenter module, or eksctl `iam.serviceAccounts`); set `settings.clusterName`; run host-level pods on node groups.",
		Before: `resource "helm_release" "karpenter" {
  namespace = "karpenter"
  chart     = "karpenter"
  values = [<<-EOT
    tolerations:
      - key: eks.amazonaws.com/compute-type
        operator: Equal
        value: fargate
        effect: NoSchedule
  EOT
  ]
}`,
		After: `resource "helm_release" "karpenter" {
  namespace  = "karpenter"
  chart      = "karpenter"
  depends_on = [module.eks]
}`,
		Format: "hcl",
	},
	Run: runFargateUnsupported,
}

var fargateRoleUnauthorized = &Check{
	ID:       "fargate-role-unauthorized",
	Title:    "Fargate pod execution role not authorized",
	Family:   "F2",
	Severity: Error,
	Doc: Doc{
		What: "A Fargate profile's pod execution role is not authorized for the cluster's authentication mode. In `API` and `API_AND_CONFIG_MAP` EKS creates its `FARGATE_LINUX` access entry itself; with `CONFIG_MAP` the role must be in aws-auth with username `system:node:{{SessionName}}` and groups `system:bootstrappers`, `system:nodes` and `system:node-proxier`. EKS adds that entry to the aws-auth it maintains, but a ConfigMap the configuration writes whole (kubectl apply, `kubernetes_config_map_v1_data` with `force = true`, terraform-aws-eks' aws-auth code) replaces it.",
		Why:  "Fargate stops launching pods for the profile: `Warning FailedScheduling fargate-scheduler Misconfigured Fargate Profile: fargate profile <name> blocked for new launches due to: Pod execution role is not found in auth config or does not have all required permissions for launching fargate pods.`",
		Fix:  "Add the mapRoles entry for the pod execution role in the format that writes aws-auth (the ConfigMap, `aws_auth_roles`, eksctl `iamIdentityMappings`), or move the cluster to `API_AND_CONFIG_MAP`.",
		Before: `apiVersion: v1
kind: ConfigMap
metadata: {name: aws-auth, namespace: kube-system}
data:
  mapRoles: |
    - rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-demo
      username: system:node:{{EC2PrivateDNSName}}
      groups: [system:bootstrappers, system:nodes]`,
		After: `apiVersion: v1
kind: ConfigMap
metadata: {name: aws-auth, namespace: kube-system}
data:
  mapRoles: |
    - rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-demo
      username: system:node:{{EC2PrivateDNSName}}
      groups: [system:bootstrappers, system:nodes]
    - rolearn: arn:aws:iam::111122223333:role/fargate-pods
      username: system:node:{{SessionName}}
      groups: [system:bootstrappers, system:nodes, system:node-proxier]`,
		Format: "yaml",
	},
	Run: runFargateRoleUnauthorized,
}

func sortedProfiles(m *cluster.Model) []*cluster.FargateProfile {
	out := append([]*cluster.FargateProfile(nil), m.FargateProfiles...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func profileRef(fp *cluster.FargateProfile) cluster.ObjectRef {
	return cluster.ObjectRef{Kind: "FargateProfile", Name: fp.Name}
}

// judgedStatically reports whether the static checks should judge a workload's pods: live
// workloads are judged by their pods.
func judgedStatically(m *cluster.Model, w *cluster.Workload) bool {
	return !(m.Live != nil && w.Object.Manager == "cluster")
}

// isHelmHook reports whether the workload is a Helm hook (run while helm waits).
func isHelmHook(w *cluster.Workload) bool {
	_, ok := w.Object.Annotations["helm.sh/hook"]
	return ok
}

// requiredPhase is the phase a workload must be schedulable in: components needed
// before Karpenter capacity exists, and Helm hooks, in the bootstrap phase.
func requiredPhase(w *cluster.Workload) cluster.Phase {
	if w.Bootstrap != "" || isHelmHook(w) {
		return cluster.Bootstrap
	}
	return cluster.Steady
}

func templateLabels(w *cluster.Workload) map[string]string {
	if w.TemplatePath == "" {
		return w.Object.Labels
	}
	return w.Template.Labels
}

func labelSetText(m map[string]string) string {
	if len(m) == 0 {
		return "no labels"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return "labels {" + strings.Join(parts, ", ") + "}"
}

func selectorText(s cluster.FargateSelector) string {
	if len(s.Labels) == 0 {
		return fmt.Sprintf("{namespace: %s}", s.Namespace)
	}
	return fmt.Sprintf("{namespace: %s, %s}", s.Namespace, labelSetText(s.Labels))
}

// fargateNodes estimates how many Fargate nodes exist: one per pod a profile
// selects.
func fargateNodes(p *Pass) int {
	n := 0
	for _, w := range p.Model.Workloads {
		if w.IsDaemonSet() || w.Replicas <= 0 {
			continue
		}
		if sim.SelectingProfile(p.Model.FargateProfiles, w.Template.Namespace, templateLabels(w)) != nil {
			n += int(w.Replicas)
		}
	}
	return n
}

func untoleratedMessage(n int) string {
	if n == 0 {
		return "kube-scheduler reports `no nodes available to schedule pods` (and `0/N nodes are available: N node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}` once other pods run on Fargate)"
	}
	return fmt.Sprintf("kube-scheduler reports `0/%d nodes are available: %d node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}` (one Fargate node per pod a profile selects)", n, n)
}

// ---- fargate-profile-mismatch ----

// nearMiss is a selector that was meant for a pod and misses it.
type nearMiss struct {
	profile *cluster.FargateProfile
	index   int
	// missing lists the selector labels the pod lacks (namespace matches);
	// empty when the namespace is what differs.
	missing []string
	why     string
}

func runFargateProfileMismatch(p *Pass) {
	m := p.Model
	reportLiveMismatch(p)
	if len(m.FargateProfiles) == 0 {
		return
	}
	for _, fp := range sortedProfiles(m) {
		reportRejectedProfile(p, fp)
	}
	nodes := fargateNodes(p)
	for _, w := range m.Workloads {
		miss, ok := fargateMismatch(p, w)
		switch {
		case !ok:
		case miss.unverified:
			reportUnverifiedSelection(p, w, miss.pl)
		default:
			reportMismatch(p, w, miss.pl, miss.near, miss.sev, nodes)
		}
	}
}

// fargateMiss is what fargate-profile-mismatch says about a workload.
type fargateMiss struct {
	pl   *sim.Placement
	near []nearMiss
	sev  Severity
	// unverified: only Fargate can run the pods, and whether a profile selects
	// them is not known before apply.
	unverified bool
}

// fargateMismatch decides whether a workload's pods were meant for Fargate and
// no profile selects them, judged in the phase the workload must run in.
func fargateMismatch(p *Pass, w *cluster.Workload) (fargateMiss, bool) {
	m := p.Model
	if len(m.FargateProfiles) == 0 || w.IsDaemonSet() || w.Replicas == 0 || !judgedStatically(m, w) {
		return fargateMiss{}, false
	}
	pl := p.Sim.Place(w, requiredPhase(w))
	if pl.Fargate != nil {
		return fargateMiss{}, false
	}
	ec2 := ec2Result(pl)
	if fargateUnknown(pl) {
		if ec2 == sim.Refuses && !hasEC2Capacity(pl) {
			return fargateMiss{pl: pl, sev: Info, unverified: true}, true
		}
		return fargateMiss{}, false
	}
	near := nearMisses(m, w)
	switch {
	case ec2 == sim.Fits && len(near) > 0:
		return fargateMiss{pl: pl, near: near, sev: Warning}, true
	case ec2 == sim.Refuses && (len(near) > 0 || !hasEC2Capacity(pl)):
		return fargateMiss{pl: pl, near: near, sev: Error}, true
	}
	return fargateMiss{}, false
}

// leftToFargateCheck reports whether the Fargate check explains the workload's
// placement in this run: its pods were meant for Fargate and no profile selects
// them. One root cause, one finding; with that check disabled (or ignored by the
// object), the scheduling checks report the workload themselves.
func leftToFargateCheck(p *Pass, w *cluster.Workload) bool {
	return p.covers(fargateProfileMismatch.ID, w.Ref()) && missesFargateProfile(p, w)
}

// missesFargateProfile reports whether a workload fits nothing because its pods
// were meant for Fargate and no profile selects them: fargate-profile-mismatch
// reports that root cause, and the scheduling checks, which would report the
// same pods as unschedulable, leave the workload to it.
func missesFargateProfile(p *Pass, w *cluster.Workload) bool {
	m := p.Model
	if len(m.FargateProfiles) == 0 || w.IsDaemonSet() || w.Replicas == 0 || !judgedStatically(m, w) {
		return false
	}
	// The error case of fargateMismatch, without looking for near misses
	// unless it depends on them: this runs for every workload.
	pl := p.Sim.Place(w, requiredPhase(w))
	if pl.Fargate != nil || fargateUnknown(pl) || ec2Result(pl) != sim.Refuses {
		return false
	}
	return !hasEC2Capacity(pl) || len(nearMisses(m, w)) > 0
}

// reportUnverifiedSelection: only Fargate can run the pods, and whether a
// profile selects them depends on values unknown before apply.
func reportUnverifiedSelection(p *Pass, w *cluster.Workload, pl *sim.Placement) {
	var unknown []string
	for _, v := range pl.Verdicts {
		if v.Source.Kind == cluster.KindFargate && v.Result == sim.Unknown && len(v.Reasons) > 0 {
			unknown = append(unknown, v.Reasons[0].Message)
		}
	}
	ref := w.Ref()
	p.Report(Finding{
		Severity: Info,
		Object:   ref,
		Origin:   w.Object.Origin,
		Summary:  fmt.Sprintf("%s: could not verify%s that a Fargate profile selects its pods, and only Fargate can run them", ref, p.beforeApply()),
		Detail:   strings.Join(unknown, "\n"),
	})
}

// fargateUnknown reports whether a profile whose selectors are not known before
// apply may select the pod.
func fargateUnknown(pl *sim.Placement) bool {
	for _, v := range pl.Verdicts {
		if v.Source.Kind == cluster.KindFargate && v.Result == sim.Unknown {
			return true
		}
	}
	return false
}

// ec2Result combines the verdicts of the capacity that is not Fargate.
func ec2Result(pl *sim.Placement) sim.Result {
	res := sim.Refuses
	for _, v := range pl.Verdicts {
		if v.Source.Kind == cluster.KindFargate {
			continue
		}
		switch v.Result {
		case sim.Fits:
			return sim.Fits
		case sim.Unknown:
			res = sim.Unknown
		}
	}
	return res
}

func hasEC2Capacity(pl *sim.Placement) bool {
	for _, v := range pl.Verdicts {
		if v.Source.Kind != cluster.KindFargate {
			return true
		}
	}
	return false
}

// nearMisses finds the selectors meant for the workload: its namespace with
// labels it lacks, or labels it has (or none) with a namespace named after the
// workload, its release or its component, or one typo away from its own.
func nearMisses(m *cluster.Model, w *cluster.Workload) []nearMiss {
	ns := w.Template.Namespace
	labels := templateLabels(w)
	var names []string
	for _, n := range []string{w.Component, w.Object.Name} {
		if n != "" {
			names = append(names, strings.ToLower(n))
		}
	}
	if w.Release != nil && w.Release.Name != "" {
		names = append(names, strings.ToLower(w.Release.Name))
	}
	var out []nearMiss
	for _, fp := range sortedProfiles(m) {
		for i, sel := range fp.Selectors {
			if sel.Namespace == "" || cluster.IsUnknown(sel.Namespace) {
				continue
			}
			var missing []string
			for _, k := range labelKeys(sel.Labels) {
				ok := false
				for lk, lv := range labels {
					if sim.Glob(k, lk) && sim.Glob(sel.Labels[k], lv) {
						ok = true
						break
					}
				}
				if !ok {
					missing = append(missing, k+"="+sel.Labels[k])
				}
			}
			if sim.Glob(sel.Namespace, ns) {
				if len(missing) > 0 {
					out = append(out, nearMiss{profile: fp, index: i, missing: missing, why: fmt.Sprintf("profile %q selects namespace %q with labels the pods lack: %s", fp.Name, sel.Namespace, strings.Join(missing, ", "))})
				}
				continue
			}
			if len(missing) > 0 {
				continue
			}
			related := ""
			for _, target := range []string{strings.ToLower(sel.Namespace), strings.ToLower(fp.Name)} {
				for _, n := range names {
					if n == target || strings.HasPrefix(n, target+"-") {
						related = "named after " + n
						break
					}
				}
				if related != "" {
					break
				}
			}
			selNS := strings.ToLower(sel.Namespace)
			if related == "" && similarName(selNS, strings.ToLower(ns)) {
				related = fmt.Sprintf("one typo away from %q", ns)
			}
			if related == "" {
				continue
			}
			out = append(out, nearMiss{profile: fp, index: i, why: fmt.Sprintf("profile %q selects namespace %q (%s), the pods are in %q", fp.Name, sel.Namespace, related, ns)})
		}
	}
	return out
}

// similarName reports names within a small edit distance of each other.
func similarName(a, b string) bool {
	if a == b {
		return false
	}
	limit := 1
	if len(a) > 6 && len(b) > 6 {
		limit = 2
	}
	return textmatch.Distance(a, b) <= limit
}

func labelKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func reportMismatch(p *Pass, w *cluster.Workload, pl *sim.Placement, near []nearMiss, sev Severity, nodes int) {
	ref := w.Ref()
	var b strings.Builder
	fmt.Fprintf(&b, "The pods are in namespace %q with %s.\n", w.Template.Namespace, labelSetText(templateLabels(w)))
	for _, fp := range sortedProfiles(p.Model) {
		var sels []string
		for _, s := range fp.Selectors {
			sels = append(sels, selectorText(s))
		}
		fmt.Fprintf(&b, "Fargate profile %q selects %s.\n", fp.Name, strings.Join(sels, ", "))
	}
	for _, n := range near {
		fmt.Fprintf(&b, "It was meant for them: %s.\n", n.why)
	}
	switch {
	case sev == Warning:
		b.WriteString("They run on EC2 capacity instead.\n")
	case !hasEC2Capacity(pl):
		fmt.Fprintf(&b, "No node group exists in the %s phase, so only Fargate could run them", pl.Phase)
		if w.Bootstrap != "" {
			fmt.Fprintf(&b, " (%s)", w.Bootstrap)
		} else if isHelmHook(w) {
			b.WriteString(" (Helm waits for its hooks while it installs the release)")
		}
		b.WriteString(".\n")
	default:
		b.WriteString(placementDetail(pl) + "\n")
	}
	fmt.Fprintf(&b, "Pods no profile selects are never mutated for Fargate: %s.", untoleratedMessage(nodes))
	what := "match no Fargate profile"
	if len(near) > 0 {
		what += ": " + near[0].why
	} else {
		what += fmt.Sprintf(" (namespace %q, %s), and no node group can run them", w.Template.Namespace, labelSetText(templateLabels(w)))
	}
	p.Report(Finding{
		Severity: sev,
		Object:   ref,
		Origin:   w.Object.Origin,
		Summary:  fmt.Sprintf("%s pods %s", ref, what),
		Detail:   b.String(),
		Fix:      mismatchFix(p.Model, w, near),
	})
}

// reportRejectedProfile reports profiles EKS refuses to create.
func reportRejectedProfile(p *Pass, fp *cluster.FargateProfile) {
	if len(fp.Selectors) > maxFargateSelectors {
		f := Finding{
			Object:  profileRef(fp),
			Origin:  fp.Origin,
			Summary: fmt.Sprintf("Fargate profile %q has %d selectors; EKS accepts at most %d, so the profile is never created", fp.Name, len(fp.Selectors), maxFargateSelectors),
			Detail:  "CreateFargateProfile rejects more than five selectors; none of the profile's pods run on Fargate. Profiles are immutable, so split the selectors across profiles.",
		}
		if e, ok := splitProfileEdit(p.Model, fp); ok {
			f.Fix = &Fix{Summary: fmt.Sprintf("move the selectors beyond the fifth to a new profile %q", fp.Name+"-2"), Edits: []Edit{e}}
		}
		p.Report(f)
	}
	for _, s := range fp.Selectors {
		if strings.TrimSpace(s.Namespace) == "" {
			p.Report(Finding{
				Object:  profileRef(fp),
				Origin:  s.Origin,
				Summary: fmt.Sprintf("Fargate profile %q has a selector without a namespace; EKS requires one, so the profile is never created", fp.Name),
				Detail:  "Every Fargate selector needs a namespace (wildcards * and ? are allowed); labels are optional.",
			})
			break
		}
	}
}

// mismatchFix proposes the change that makes a profile select the pods.
func mismatchFix(m *cluster.Model, w *cluster.Workload, near []nearMiss) *Fix {
	// Labels the selector wants and the pods lack: give the pods the labels when
	// the selector asks for plain values.
	for _, n := range near {
		if len(n.missing) == 0 {
			continue
		}
		sel := n.profile.Selectors[n.index]
		if f := hookUpgradeFix(m, w); f != nil {
			return f
		}
		if hasLabelWildcard(sel.Labels) {
			continue
		}
		if f := podLabelsFix(m, w, sel.Labels); f != nil {
			return f
		}
	}
	// Otherwise add a selector to the profile the pods were meant for, or declare
	// a profile for their namespace.
	if len(near) == 0 {
		sel := cluster.FargateSelector{Namespace: w.Template.Namespace}
		if e, ok := newProfileEdit(m, w.Template.Namespace, sel); ok {
			return &Fix{Summary: fmt.Sprintf("declare a Fargate profile %q that selects namespace %q", w.Template.Namespace, w.Template.Namespace), Edits: []Edit{e}}
		}
	}
	fp := sortedProfiles(m)[0]
	if len(near) > 0 {
		fp = near[0].profile
	}
	sel := cluster.FargateSelector{Namespace: w.Template.Namespace}
	labels := templateLabels(w)
	for _, k := range []string{"app.kubernetes.io/name", "app", "k8s-app"} {
		if v, ok := labels[k]; ok && v != "" && !cluster.IsUnknown(v) {
			sel.Labels = map[string]string{k: v}
			break
		}
	}
	e, ok := addSelectorEdit(m, fp, sel)
	if !ok {
		return nil
	}
	return &Fix{Summary: fmt.Sprintf("add the selector %s to Fargate profile %q", selectorText(sel), fp.Name), Edits: []Edit{e}}
}

func hasLabelWildcard(labels map[string]string) bool {
	for k, v := range labels {
		if strings.ContainsAny(k+v, "*?") {
			return true
		}
	}
	return false
}

// hookUpgradeFix: the Karpenter v1.0.0 chart's post-install hook has no pod
// labels; v1.0.1 removed the hook.
func hookUpgradeFix(m *cluster.Model, w *cluster.Workload) *Fix {
	r := w.Release
	if r == nil || w.Object.Annotations["eksdoctor.io/component"] != "karpenter-post-install-hook" {
		return nil
	}
	e, ok := blockEdit(m, r.Address, `version = "1.0.1"`+"\n")
	if !ok {
		return nil
	}
	return &Fix{Summary: "use Karpenter chart 1.0.1: its post-install hook, which carries no pod labels, was removed", Edits: []Edit{e}}
}

// podLabelsFix adds labels to the pods: in the chart values when a release
// installs them, else in the pod template.
func podLabelsFix(m *cluster.Model, w *cluster.Workload, want map[string]string) *Fix {
	summary := fmt.Sprintf("label the pods %s so the selector matches", strings.TrimPrefix(labelSetText(want), "labels "))
	if r := w.Release; r != nil {
		key, ok := chartValuesKey(r, w, "spec.template.metadata.labels")
		if !ok {
			return nil
		}
		labels := map[string]any{}
		if cur, ok := cluster.Lookup(r.Values, key).(map[string]any); ok {
			labels = copyJSON(cur).(map[string]any)
		}
		for k, v := range want {
			labels[k] = v
		}
		values := map[string]any{}
		setPath(values, key, labels)
		return &Fix{Summary: summary, Edits: []Edit{releaseValuesEdit(r, values)}}
	}
	if w.Addon != nil {
		return nil
	}
	labels := map[string]any{}
	for k, v := range templateLabels(w) {
		labels[k] = v
	}
	for k, v := range want {
		labels[k] = v
	}
	path := "metadata"
	if w.TemplatePath != "" {
		path = w.TemplatePath + ".metadata"
	}
	e, ok := objectPatch(m, w.Object, nest(path, map[string]any{"labels": labels}))
	if !ok {
		return nil
	}
	return &Fix{Summary: summary, Edits: []Edit{e}}
}

// chartValuesKey finds the values key that sets an object field of a chart
// component, from the knowledge base.
func chartValuesKey(r *cluster.HelmRelease, w *cluster.Workload, field string) (string, bool) {
	version := w.Object.Annotations["eksdoctor.io/chart-version"]
	if version == "" {
		version = r.Version
	}
	kb, ok := catalog.ChartFor(r.Chart, version)
	if !ok {
		return "", false
	}
	comp, ok := kb.Component(w.Component)
	if !ok {
		comp, ok = kb.Component(w.Object.Annotations["eksdoctor.io/component"])
	}
	if !ok {
		return "", false
	}
	keys := make([]string, 0, len(comp.Fields))
	for k := range comp.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if comp.Fields[k] == field {
			if comp.ValuesPrefix != "" {
				return comp.ValuesPrefix + "." + k, true
			}
			return k, true
		}
	}
	return "", false
}

// chartDefaultList returns a chart's default list at a values key.
func chartDefaultList(r *cluster.HelmRelease, w *cluster.Workload, key string) []any {
	version := w.Object.Annotations["eksdoctor.io/chart-version"]
	if version == "" {
		version = r.Version
	}
	kb, ok := catalog.ChartFor(r.Chart, version)
	if !ok {
		return nil
	}
	return copyJSONList(cluster.Lookup(kb.DefaultValues(), key))
}

// releaseValuesEdit merges values into a Helm release where it is declared.
func releaseValuesEdit(r *cluster.HelmRelease, values map[string]any) Edit {
	return valuesEdit(r, values)
}

// ---- Fargate profile edits ----

func selectorMap(s cluster.FargateSelector) map[string]any {
	out := map[string]any{"namespace": s.Namespace}
	if len(s.Labels) > 0 {
		labels := map[string]any{}
		for k, v := range s.Labels {
			labels[k] = v
		}
		out["labels"] = labels
	}
	return out
}

func hclSelector(s cluster.FargateSelector) string {
	if len(s.Labels) == 0 {
		return "{ namespace = " + hclStringExpr(s.Namespace) + " }"
	}
	var labels []string
	for _, k := range labelKeys(s.Labels) {
		labels = append(labels, hclStringExpr(k)+" = "+hclStringExpr(s.Labels[k]))
	}
	return "{ namespace = " + hclStringExpr(s.Namespace) + ", labels = { " + strings.Join(labels, ", ") + " } }"
}

func hclSelectors(sels []cluster.FargateSelector) string {
	var b strings.Builder
	b.WriteString("[\n")
	for _, s := range sels {
		b.WriteString("  " + hclSelector(s) + ",\n")
	}
	b.WriteString("]")
	return b.String()
}

// profileKind tells how a Fargate profile is declared.
type profileDecl int

const (
	declUnknown     profileDecl = iota
	declEksctl                  // an eksctl fargateProfiles entry
	declModuleEntry             // a fargate_profiles entry of the terraform-aws-eks module
	declResource                // an aws_eks_fargate_profile resource
	declSubmodule               // a call of the fargate-profile sub-module
)

func profileDeclaration(m *cluster.Model, fp *cluster.FargateProfile) (profileDecl, string) {
	switch {
	case strings.HasPrefix(fp.Address, "fargateProfiles."):
		return declEksctl, ""
	case m.Terraform == nil:
		return declUnknown, ""
	}
	if n, ok := m.Terraform.Nodes[fp.Address]; ok && n.Type == "aws_eks_fargate_profile" {
		return declResource, fp.Address
	}
	call, ok := moduleCallOf(fp.Address)
	if !ok {
		return declUnknown, ""
	}
	if strings.HasPrefix(fp.Address, call+".module.fargate_profile[") {
		return declModuleEntry, call
	}
	if n, ok := m.Terraform.Nodes[call]; ok && n.Type == "module" {
		return declSubmodule, call
	}
	return declUnknown, ""
}

// addSelectorEdit adds a selector to a profile, or, when the profile already has
// five, declares a second profile with it.
func addSelectorEdit(m *cluster.Model, fp *cluster.FargateProfile, sel cluster.FargateSelector) (Edit, bool) {
	full := len(fp.Selectors) >= maxFargateSelectors
	sels := append(append([]cluster.FargateSelector(nil), fp.Selectors...), sel)
	decl, addr := profileDeclaration(m, fp)
	switch decl {
	case declEksctl:
		return eksctlProfiles(m, fp, func(list []any, i int) []any {
			if full {
				np := map[string]any{"name": fp.Name + "-2", "selectors": []any{selectorMap(sel)}}
				if item, ok := list[i].(map[string]any); ok && item["podExecutionRoleARN"] != nil {
					np["podExecutionRoleARN"] = item["podExecutionRoleARN"]
				}
				return append(list, np)
			}
			item, ok := list[i].(map[string]any)
			if !ok {
				return nil
			}
			cur, _ := item["selectors"].([]any)
			item["selectors"] = append(cur, selectorMap(sel))
			return list
		})
	case declModuleEntry:
		if full {
			return blockEdit(m, addr, fmt.Sprintf("fargate_profiles = {\n  %s = {\n    selectors = [%s]\n  }\n}\n", hclMapKey(fp.Name+"-2"), hclSelector(sel)))
		}
		if fp.Origin.Line <= 0 {
			return Edit{}, false
		}
		return Edit{File: fp.Origin.File, Line: fp.Origin.Line, Format: FormatHCL, Text: "selectors = " + hclSelectors(sels) + "\n"}, true
	case declResource:
		if full {
			return Edit{}, false
		}
		text := "selector {\n  namespace = " + hclStringExpr(sel.Namespace) + "\n"
		if len(sel.Labels) > 0 {
			var labels []string
			for _, k := range labelKeys(sel.Labels) {
				labels = append(labels, hclStringExpr(k)+" = "+hclStringExpr(sel.Labels[k]))
			}
			text += "  labels = { " + strings.Join(labels, ", ") + " }\n"
		}
		return blockEdit(m, addr, text+"}\n")
	case declSubmodule:
		if full {
			return Edit{}, false
		}
		return blockEdit(m, addr, "selectors = "+hclSelectors(sels)+"\n")
	}
	return Edit{}, false
}

// newProfileEdit declares a Fargate profile next to the existing ones: an eksctl
// fargateProfiles entry, or a fargate_profiles entry of the terraform-aws-eks
// module.
func newProfileEdit(m *cluster.Model, name string, sel cluster.FargateSelector) (Edit, bool) {
	for _, fp := range m.FargateProfiles {
		if fp.Name == name {
			return Edit{}, false
		}
	}
	fps := sortedProfiles(m)
	if len(fps) == 0 {
		return Edit{}, false
	}
	decl, addr := profileDeclaration(m, fps[0])
	switch decl {
	case declEksctl:
		return eksctlProfiles(m, fps[0], func(list []any, _ int) []any {
			return append(list, map[string]any{"name": name, "selectors": []any{selectorMap(sel)}})
		})
	case declModuleEntry:
		return blockEdit(m, addr, fmt.Sprintf("fargate_profiles = {\n  %s = {\n    selectors = [%s]\n  }\n}\n", hclMapKey(name), hclSelector(sel)))
	}
	return Edit{}, false
}

// splitProfileEdit moves the selectors beyond the fifth to a new profile.
func splitProfileEdit(m *cluster.Model, fp *cluster.FargateProfile) (Edit, bool) {
	keep, move := fp.Selectors[:maxFargateSelectors], fp.Selectors[maxFargateSelectors:]
	if len(move) > maxFargateSelectors {
		return Edit{}, false
	}
	decl, addr := profileDeclaration(m, fp)
	switch decl {
	case declEksctl:
		return eksctlProfiles(m, fp, func(list []any, i int) []any {
			item, ok := list[i].(map[string]any)
			if !ok {
				return nil
			}
			var k, mv []any
			for _, s := range keep {
				k = append(k, selectorMap(s))
			}
			for _, s := range move {
				mv = append(mv, selectorMap(s))
			}
			item["selectors"] = k
			np := map[string]any{"name": fp.Name + "-2", "selectors": mv}
			if item["podExecutionRoleARN"] != nil {
				np["podExecutionRoleARN"] = item["podExecutionRoleARN"]
			}
			return append(list, np)
		})
	case declModuleEntry:
		return blockEdit(m, addr, fmt.Sprintf("fargate_profiles = {\n  %s = {\n    selectors = %s\n  }\n  %s = {\n    selectors = %s\n  }\n}\n", hclMapKey(fp.Name), hclSelectors(keep), hclMapKey(fp.Name+"-2"), hclSelectors(move)))
	}
	return Edit{}, false
}

// eksctlProfiles rewrites the fargateProfiles list of an eksctl ClusterConfig.
func eksctlProfiles(m *cluster.Model, fp *cluster.FargateProfile, change func(list []any, i int) []any) (Edit, bool) {
	var idx int
	if _, err := fmt.Sscanf(fp.Address, "fargateProfiles.%d", &idx); err != nil {
		return Edit{}, false
	}
	o := eksctlObject(m)
	if o == nil {
		return Edit{}, false
	}
	list := copyJSONList(o.Get("fargateProfiles"))
	if idx < 0 || idx >= len(list) {
		return Edit{}, false
	}
	out := change(list, idx)
	if out == nil {
		return Edit{}, false
	}
	return objectPatch(m, o, map[string]any{"fargateProfiles": out})
}

// ---- fargate-unsupported ----

func runFargateUnsupported(p *Pass) {
	m := p.Model
	reportLiveTooManyPods(p)
	if len(m.FargateProfiles) == 0 {
		return
	}
	fargateOnly := len(m.NodeGroups) == 0 && len(m.NodePools) == 0 && len(m.Nodes) == 0
	for _, w := range m.Workloads {
		if w.Replicas == 0 || !judgedStatically(m, w) {
			continue
		}
		fp := sim.SelectingProfile(m.FargateProfiles, w.Template.Namespace, templateLabels(w))
		ref := w.Ref()
		spec := &w.Template.Spec
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
			continue
		}
		if fp == nil {
			if t, ok := toleratesFargate(spec.Tolerations); ok {
				f := Finding{
					Object:  ref,
					Origin:  w.Object.At(podSpecPath(w) + ".tolerations"),
					Summary: fmt.Sprintf("%s tolerates %s but no Fargate profile selects it: the default scheduler binds it to another pod's Fargate node (`Too many pods`)", ref, sim.TaintText(fargateTaint)),
					Detail:  fmt.Sprintf("Toleration %s lets kube-scheduler place the pods on existing Fargate nodes, which hold exactly one pod each: the pods stay Pending with `0/N nodes are available: N Too many pods`. A profile must select the pods instead (fargate-profile-mismatch says which).", fargateTolerationText(t)),
					Fix:     removeTolerationFix(m, w),
				}
				p.Report(f)
			}
			continue
		}
		checkFargatePod(p, w, fp)
	}
}

// toleratesFargate finds an explicit toleration of the Fargate taint (an empty key
// with Exists tolerates every taint, which is not a Fargate-specific choice).
func toleratesFargate(ts []corev1.Toleration) (corev1.Toleration, bool) {
	for _, t := range ts {
		if t.Key == fargateTaint.Key && sim.Tolerates([]corev1.Toleration{t}, fargateTaint) {
			return t, true
		}
	}
	return corev1.Toleration{}, false
}

func fargateTolerationText(t corev1.Toleration) string {
	s := "{key: " + t.Key + ", operator: " + string(t.Operator)
	if t.Value != "" {
		s += ", value: " + t.Value
	}
	if t.Effect != "" {
		s += ", effect: " + string(t.Effect)
	}
	return s + "}"
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
	if t, ok := toleratesFargate(spec.Tolerations); ok {
		report(Finding{
			Severity: Warning,
			Origin:   at("tolerations"),
			Summary:  fmt.Sprintf("also tolerates %s", sim.TaintText(fargateTaint)),
			Detail:   fmt.Sprintf("Toleration %s is the wrong fix for pods created before their Fargate profile was active: such pods are scheduled by the default scheduler, which then binds them to other pods' Fargate nodes (`0/2 nodes are available: 2 Too many pods`). Create the pods after the profile instead (depends_on).", fargateTolerationText(t)),
			Fix:      removeTolerationFix(m, w),
		})
	}
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
// cluster name: settings.clusterName (settings.aws.clusterName before v0.32) in
// the release values, or CLUSTER_NAME in the container environment.
func karpenterClusterNameMissing(w *cluster.Workload) (string, bool) {
	if r := w.Release; r != nil && !r.Rendered {
		for _, k := range []string{"settings.clusterName", "settings.aws.clusterName"} {
			if v, ok := cluster.Lookup(r.Values, k).(string); ok && strings.TrimSpace(v) != "" {
				return "", false
			}
		}
		return "settings.clusterName is not set", true
	}
	for _, c := range w.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == "CLUSTER_NAME" && (e.Value != "" || e.ValueFrom != nil) {
				return "", false
			}
		}
		for _, a := range append(append([]string(nil), c.Args...), c.Command...) {
			if strings.HasPrefix(a, "--cluster-name") {
				return "", false
			}
		}
	}
	return "the container has no CLUSTER_NAME", true
}

// clusterNameValue is the cluster name to write into Karpenter's configuration:
// a reference to the cluster in Terraform, else its name; "" when unknown.
func clusterNameValue(m *cluster.Model, terraform bool) string {
	a := m.Cluster.Address
	if terraform && (strings.HasPrefix(a, "module.") || strings.HasPrefix(a, "aws_eks_cluster.")) {
		return cluster.Unknown(clusterNameExpr(m))
	}
	if m.Cluster.Name != "" && !cluster.IsUnknown(m.Cluster.Name) {
		return m.Cluster.Name
	}
	if !terraform {
		// The shell variable the Karpenter getting-started guide uses.
		return "${CLUSTER_NAME}"
	}
	return ""
}

func clusterNameFix(m *cluster.Model, w *cluster.Workload) *Fix {
	if r := w.Release; r != nil {
		name := clusterNameValue(m, strings.HasSuffix(r.Origin.File, ".tf"))
		if name == "" {
			return nil
		}
		values := map[string]any{"settings": map[string]any{"clusterName": name}}
		return &Fix{Summary: "set settings.clusterName in the Karpenter values", Edits: []Edit{releaseValuesEdit(r, values)}}
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
	e, ok := objectPatch(m, w.Object, nest(podSpecPath(w), map[string]any{"containers": containers}))
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
		return &Fix{Summary: summary, Edits: []Edit{releaseValuesEdit(r, values)}}
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
	e, ok := objectPatch(m, w.Object, nest(podSpecPath(w), map[string]any{"tolerations": value}))
	if !ok {
		return nil
	}
	return &Fix{Summary: summary, Edits: []Edit{e}}
}

// irsaFix moves a service account from EKS Pod Identity to IRSA.
func irsaFix(m *cluster.Model, w *cluster.Workload, id cluster.ServiceAccountIdentity) *Fix {
	summary := fmt.Sprintf("give %s/%s its role through IRSA instead of EKS Pod Identity", id.Namespace, id.Name)
	if o := eksctlObject(m); o != nil && strings.HasPrefix(id.Origin.Path, "iam.podIdentityAssociations.") {
		assocs := copyJSONList(o.Get("iam.podIdentityAssociations"))
		sas := copyJSONList(o.Get("iam.serviceAccounts"))
		var kept []any
		for _, it := range assocs {
			a, ok := it.(map[string]any)
			if !ok || a["namespace"] != id.Namespace || a["serviceAccountName"] != id.Name {
				kept = append(kept, it)
				continue
			}
			sa := map[string]any{"metadata": map[string]any{"name": id.Name, "namespace": id.Namespace}}
			for from, to := range map[string]string{"roleARN": "attachRoleARN", "roleName": "roleName", "permissionPolicyARNs": "attachPolicyARNs", "permissionPolicy": "attachPolicy", "wellKnownPolicies": "wellKnownPolicies"} {
				if v, ok := a[from]; ok {
					sa[to] = v
				}
			}
			sas = append(sas, sa)
		}
		iam := map[string]any{"withOIDC": true, "serviceAccounts": sas, "podIdentityAssociations": kept}
		if len(kept) == 0 {
			iam["podIdentityAssociations"] = nil
		}
		e, ok := objectPatch(m, o, map[string]any{"iam": iam})
		if !ok {
			return nil
		}
		return &Fix{Summary: summary + " (eksctl iam.serviceAccounts; eksctl annotates the service account)", Edits: []Edit{e}}
	}
	k := m.Karpenter
	if m.Terraform == nil || k.Address == "" || !strings.HasPrefix(k.Address, "module.") {
		return nil
	}
	mod, ok := blockEdit(m, k.Address, fmt.Sprintf("create_pod_identity_association = false\nenable_irsa = true\nirsa_oidc_provider_arn = %s\nirsa_namespace_service_accounts = [%q]\n", oidcProviderExpr(m), id.Namespace+":"+id.Name))
	if !ok {
		return nil
	}
	edits := []Edit{mod}
	if r := w.Release; r != nil {
		values := map[string]any{"serviceAccount": map[string]any{"annotations": map[string]any{identity.IRSAAnnotation: cluster.Unknown(k.Address + ".iam_role_arn")}}}
		edits = append(edits, releaseValuesEdit(r, values))
	}
	return &Fix{Summary: summary + " (enable_irsa in the karpenter module, and the role annotation on the service account)", Edits: edits}
}

func oidcProviderExpr(m *cluster.Model) string {
	if strings.HasPrefix(m.Cluster.Address, "module.") {
		return m.Cluster.Address + ".oidc_provider_arn"
	}
	return "aws_iam_openid_connect_provider.this.arn"
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
	node := profileNode(m, fp)
	if node == "" || m.Terraform.DependsOn(r.Address, node) {
		return
	}
	if ec2Fallback(p.Sim.Place(w, requiredPhase(w))) {
		return
	}
	deps := append([]string(nil), m.Terraform.Nodes[r.Address].DependsOn...)
	deps = append(deps, node)
	e, ok := blockEdit(m, r.Address, "depends_on = ["+strings.Join(deps, ", ")+"]\n")
	f := Finding{
		Severity: Warning,
		Origin:   r.Origin,
		Summary:  fmt.Sprintf("%s does not depend on %s, so Terraform may create the pods before the profile is active", r.Address, node),
		Detail:   fmt.Sprintf("Pods created before Fargate profile %q is ACTIVE are not mutated for Fargate: they keep the default scheduler and stay Pending with `untolerated taint {eks.amazonaws.com/compute-type: fargate}` until deleted. Terraform creates %s and the profile in parallel unless one depends on the other.", fp.Name, r.Address),
	}
	if ok {
		f.Fix = &Fix{Summary: "create the release after its Fargate profile: depends_on = [" + node + "]", Edits: []Edit{e}}
	}
	report(f)
}

// profileNode is the graph node that creates a Fargate profile: its resource, or
// the module call that contains it.
func profileNode(m *cluster.Model, fp *cluster.FargateProfile) string {
	if _, ok := m.Terraform.Nodes[fp.Address]; ok {
		return fp.Address
	}
	if call, ok := moduleCallOf(fp.Address); ok {
		if _, ok := m.Terraform.Nodes[call]; ok {
			return call
		}
	}
	return ""
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

// ---- fargate-role-unauthorized ----

func runFargateRoleUnauthorized(p *Pass) {
	m := p.Model
	reportLiveBlockedProfiles(p)
	if len(m.FargateProfiles) == 0 {
		return
	}
	res := identity.New(m)
	for _, fp := range sortedProfiles(m) {
		if strings.TrimSpace(fp.PodExecutionRole) == "" {
			continue
		}
		role := res.Resolve(fp.PodExecutionRole)
		a := res.Authorize(role, identity.FargatePods)
		signature := fmt.Sprintf("`Warning FailedScheduling fargate-scheduler Misconfigured Fargate Profile: fargate profile %s blocked for new launches due to: Pod execution role is not found in auth config or does not have all required permissions for launching fargate pods.`", fp.Name)
		switch a.Outcome {
		case identity.Unauthorized:
			f := Finding{
				Object:  profileRef(fp),
				Origin:  fp.Origin,
				Summary: fmt.Sprintf("Fargate profile %q: pod execution role %s is not authorized: %s", fp.Name, role, fargateReason(a)),
				Detail:  strings.Join(a.Explain(), "\n") + "\nFargate refuses to launch the profile's pods: " + signature,
			}
			f.Fix = fargateRoleFix(m, a)
			p.Report(f)
		case identity.Unverified:
			if !identity.AwsAuthReplaced(m.Identity.AwsAuth) {
				continue
			}
			p.Report(Finding{
				Severity: Info,
				Object:   profileRef(fp),
				Origin:   fp.Origin,
				Summary:  fmt.Sprintf("Fargate profile %q: could not verify that pod execution role %s is authorized%s", fp.Name, role, p.beforeApply()),
				Detail:   strings.Join(a.Explain(), "\n"),
			})
		}
	}
}

func fargateReason(a identity.Authorization) string {
	if probs := a.Problems(); len(probs) > 0 {
		return probs[0]
	}
	return "aws-auth, which the configuration writes whole, has no entry for it"
}

func fargateRoleFix(m *cluster.Model, a identity.Authorization) *Fix {
	for _, f := range explicitMappings(a.AwsAuth.Found) {
		if len(f.Problems) == 0 || f.Mapping == nil {
			continue
		}
		fixed := *f.Mapping
		if arn, ok := identity.ParseRoleARN(fixed.RoleARN); ok && arn.HasPath() {
			fixed.RoleARN = arn.WithoutPath()
		}
		fixed.Username = identity.FargateUsername
		fixed.Groups = unionGroups(fixed.Groups, identity.FargatePods.Groups())
		if e, ok := rewriteAwsAuth(m, f.Mapping, &fixed); ok {
			return &Fix{Summary: "correct the aws-auth entry of the pod execution role", Edits: []Edit{e}}
		}
	}
	rm, ok := newNodeMapping(m, a.Role, identity.FargatePods)
	if !ok {
		return nil
	}
	e, ok := rewriteAwsAuth(m, nil, &rm)
	if !ok {
		return nil
	}
	return &Fix{Summary: fmt.Sprintf("map the pod execution role in aws-auth: username %s, groups %s", identity.FargateUsername, strings.Join(identity.FargatePods.Groups(), ", ")), Edits: []Edit{e}}
}

// ---- live clusters: Pending pods explained by their scheduling events ----

// pendingPods groups the unscheduled Pending pods of a live cluster by the
// workload that owns them, in a stable order.
func pendingPods(m *cluster.Model, match func(*cluster.Pod) bool) map[cluster.ObjectRef][]*cluster.Pod {
	out := map[cluster.ObjectRef][]*cluster.Pod{}
	for _, p := range m.Pods {
		if p.Status.Phase != corev1.PodPending || p.Spec.NodeName != "" || !match(p) {
			continue
		}
		out[p.Owner] = append(out[p.Owner], p)
	}
	return out
}

func sortedOwners(m map[cluster.ObjectRef][]*cluster.Pod) []cluster.ObjectRef {
	refs := make([]cluster.ObjectRef, 0, len(m))
	for r := range m {
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].Less(refs[j]) })
	return refs
}

// schedulingEvent returns the newest scheduling event whose message contains text.
func schedulingEvent(p *cluster.Pod, text string) (cluster.Event, bool) {
	for i := len(p.Events) - 1; i >= 0; i-- {
		if strings.Contains(p.Events[i].Message, text) {
			return p.Events[i], true
		}
	}
	return cluster.Event{}, false
}

func podNameList(pods []*cluster.Pod) string {
	var names []string
	for _, p := range pods {
		names = append(names, p.Object.Name)
	}
	sort.Strings(names)
	return strings.Join(names, " ")
}

const fargateTaintEvent = "untolerated taint {eks.amazonaws.com/compute-type: fargate}"

// reportLiveMismatch: pods the default scheduler could only place on Fargate
// nodes were never handed to fargate-scheduler.
func reportLiveMismatch(p *Pass) {
	m := p.Model
	groups := pendingPods(m, func(pod *cluster.Pod) bool {
		_, ok := schedulingEvent(pod, fargateTaintEvent)
		return ok && pod.Spec.SchedulerName != "fargate-scheduler"
	})
	// The scheduler names the Fargate taint whenever Fargate nodes exist; the pods
	// were meant for Fargate only when a profile selects them now, or when Fargate
	// is all the cluster has. Otherwise their problem is EC2 capacity, which
	// pod-unschedulable explains.
	allFargate := len(m.Nodes) > 0
	for _, n := range m.Nodes {
		if n.Labels["eks.amazonaws.com/compute-type"] != "fargate" {
			allFargate = false
		}
	}
	for _, ref := range sortedOwners(groups) {
		pods := groups[ref]
		pod := pods[0]
		if !allFargate && sim.SelectingProfile(m.FargateProfiles, pod.Object.Namespace, pod.Object.Labels) == nil {
			continue
		}
		ev, _ := schedulingEvent(pod, fargateTaintEvent)
		why := fmt.Sprintf("no Fargate profile selected them when they were created (namespace %q, %s), or they were created before their profile was ACTIVE", pod.Object.Namespace, labelSetText(pod.Object.Labels))
		if len(m.FargateProfiles) > 0 {
			if fp := sim.SelectingProfile(m.FargateProfiles, pod.Object.Namespace, pod.Object.Labels); fp != nil {
				why = fmt.Sprintf("Fargate profile %q selects them now, so they were created before it was ACTIVE", fp.Name)
			} else {
				why = fmt.Sprintf("no Fargate profile selects them (namespace %q, %s)", pod.Object.Namespace, labelSetText(pod.Object.Labels))
			}
		}
		p.Report(Finding{
			Object:  ref,
			Origin:  pod.Object.Origin,
			Summary: fmt.Sprintf("%s: %d pod(s) Pending with %q: %s", ref, len(pods), ev.Message, why),
			Detail:  fmt.Sprintf("The pods use %s, not fargate-scheduler: the Fargate admission webhook did not mutate them at creation, so the default scheduler sees only Fargate nodes, which it may not use. Pods: %s.", orDefaultName(pod.Spec.SchedulerName, "default-scheduler"), podNameList(pods)),
			Fix: &Fix{
				Summary: "once a profile selects them, delete the pods so that their owner re-creates them and Fargate mutates the new ones",
				Edits:   []Edit{{Format: FormatShell, Text: fmt.Sprintf("kubectl delete pod -n %s %s", pod.Object.Namespace, podNameList(pods))}},
			},
		})
	}
}

func orDefaultName(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// reportLiveTooManyPods: pods tolerating the Fargate taint were bound by the
// default scheduler to Fargate nodes that already hold their one pod.
func reportLiveTooManyPods(p *Pass) {
	groups := pendingPods(p.Model, func(pod *cluster.Pod) bool {
		_, tol := toleratesFargate(pod.Spec.Tolerations)
		_, ev := schedulingEvent(pod, "Too many pods")
		return tol && ev && pod.Spec.SchedulerName != "fargate-scheduler"
	})
	for _, ref := range sortedOwners(groups) {
		pods := groups[ref]
		ev, _ := schedulingEvent(pods[0], "Too many pods")
		p.Report(Finding{
			Object:  ref,
			Origin:  pods[0].Object.Origin,
			Summary: fmt.Sprintf("%s: %d pod(s) Pending with %q: they tolerate %s, so the default scheduler tries Fargate nodes, which hold one pod each", ref, len(pods), ev.Message, sim.TaintText(fargateTaint)),
			Detail:  fmt.Sprintf("Remove the toleration and let a Fargate profile select the pods (fargate-scheduler gives each its own node). Pods: %s.", podNameList(pods)),
		})
	}
}

// reportLiveBlockedProfiles: fargate-scheduler refuses to launch pods for a
// profile whose pod execution role the cluster does not authorize.
func reportLiveBlockedProfiles(p *Pass) {
	const marker = "Misconfigured Fargate Profile: fargate profile "
	blocked := map[string][]*cluster.Pod{}
	events := map[string]string{}
	for _, pod := range p.Model.Pods {
		if pod.Status.Phase != corev1.PodPending || pod.Spec.NodeName != "" {
			continue
		}
		ev, ok := schedulingEvent(pod, marker)
		if !ok {
			continue
		}
		rest := ev.Message[strings.Index(ev.Message, marker)+len(marker):]
		name, _, _ := strings.Cut(rest, " ")
		blocked[name] = append(blocked[name], pod)
		events[name] = ev.Message
	}
	names := make([]string, 0, len(blocked))
	for n := range blocked {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		pods := blocked[name]
		p.Report(Finding{
			Object:  cluster.ObjectRef{Kind: "FargateProfile", Name: name},
			Origin:  pods[0].Object.Origin,
			Summary: fmt.Sprintf("Fargate profile %q is blocked for new launches: %s", name, events[name]),
			Detail:  fmt.Sprintf("fargate-scheduler does not find the profile's pod execution role in the cluster's authentication configuration. With authentication mode CONFIG_MAP, aws-auth must map it with username %s and groups %s; a ConfigMap written whole by kubectl or Terraform drops the entry EKS added. Pending pods: %s.", identity.FargateUsername, strings.Join(identity.FargatePods.Groups(), ", "), podNameList(pods)),
		})
	}
}
