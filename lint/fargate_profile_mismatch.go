package lint

import (
	"fmt"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/shell"
	"github.com/eksdoctor/eksdoctor/internal/textmatch"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/write"
)

// fargate-profile-mismatch: workloads meant for Fargate that no Fargate profile selects, and profiles EKS rejects.

var fargateProfileMismatch = &Check{
	ID:       "fargate-profile-mismatch",
	Title:    "Pods meant for Fargate match no profile",
	Family:   "F2",
	Severity: Error,
	Doc: Doc{
		What: "Pods that can only run on Fargate match no Fargate profile selector: no node group exists for them (in the bootstrap phase for the Karpenter controller, chart hooks and other components needed before Karpenter launches nodes), or a profile was meant for them but misses: its namespace is the release's name while the release is installed elsewhere (a profile for `karpenter` while terraform-aws-eks v20's karpenter module and the release use `kube-system`), or it requires a label the pods never carry (the Karpenter v1.0.0 chart's `post-install-hook` Job has no podLabels). The detail quotes each selector and the pod's namespace and labels. It also reports profiles EKS rejects: more than five selectors, or a selector without a namespace.",
		Why:  "The pods are never mutated for Fargate, so the default scheduler sees only Fargate nodes and reports `0/N nodes are available: N node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}` (or `no nodes available to schedule pods`); the Karpenter controller never starts and no node is ever launched, and `helm install` waits for its hook until it times out.",
		Fix:  "Add a selector that matches the pods (the fix adds the pods' namespace and their `app.kubernetes.io/name` label to the profile the pods were meant for, in the Terraform `fargate_profiles` entry, the `aws_eks_fargate_profile`, or the eksctl `fargateProfiles` entry), or give the pods the labels the selector requires (`podLabels` in the Helm values, the pod template labels). For the Karpenter v1.0.0 hook, use chart 1.0.1 or later.",
	},
	Run:        runFargateProfileMismatch,
	Supersedes: []*Check{bootstrapDeadlock, podUnschedulable, addonTolerationUnsupported},
}

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
	for _, g := range liveMissedGroups(m) {
		e := liveSelectionEvidence(m, g)
		reportSelection(p, e, decideSelection(e), 0)
	}
	if len(m.FargateProfiles) == 0 {
		return
	}
	for _, fp := range sortedProfiles(m) {
		reportRejectedProfile(p, fp)
	}
	nodes := fargateNodes(p)
	for _, w := range m.Workloads {
		if e, ok := selectionEvidenceOf(p, w); ok {
			reportSelection(p, e, decideSelection(e), nodes)
		}
	}
}

// Whether pods meant for Fargate were handed to it is decided once, by
// decideSelection, for the configuration and for a running cluster alike.
// From the configuration the evidence is the pods' placement in the phase
// they must run in; in a running cluster, Pending pods the default scheduler
// refused for the Fargate taint: they were never mutated for Fargate. What a
// running cluster adds (which pods, the scheduler's words) words the outcome.

// selectionEvidence is what is known about whether a Fargate profile took
// pods meant for Fargate.
type selectionEvidence struct {
	// missed: no Fargate profile took the pods (the configuration: none
	// selects them in the phase they must run in; a running cluster: the
	// default scheduler refused them for the Fargate taint).
	missed bool
	// selecting is the profile that selects the pods now, by namespace and
	// labels, whatever their annotations say.
	selecting *cluster.FargateProfile
	// keptOff: their annotation eks.amazonaws.com/compute-type: ec2 keeps
	// them off Fargate.
	keptOff bool
	// profilesUnknown: a profile whose selectors are not known before apply
	// may select them.
	profilesUnknown bool
	// ec2 is what capacity other than Fargate says of the pods (Unknown in a
	// running cluster with other nodes: pod-unschedulable judges those), and
	// noEC2 that there is none.
	ec2   sim.Result
	noEC2 bool
	// near are the selectors meant for the pods that miss them (from the
	// configuration).
	near []nearMiss

	// Where the evidence comes from: a workload of the configuration and
	// its placement, or the Pending pods of a running cluster.
	w    *cluster.Workload
	pl   *sim.Placement
	live *missedGroup
}

// selectionOutcome is what the evidence says.
type selectionOutcome int

const (
	selectionFine selectionOutcome = iota
	// selectionUnverified: only Fargate can run the pods, and whether a
	// profile selects them is not known before apply.
	selectionUnverified
	// selectionElsewhere: a selector meant for the pods misses them, and
	// EC2 capacity runs them instead.
	selectionElsewhere
	// selectionNone: no profile took the pods, and nothing else runs them
	// or a selector meant for them misses them.
	selectionNone
	// selectionKeptOff: a profile selects the Pending pods, and their
	// annotation keeps them off Fargate.
	selectionKeptOff
	// selectionTooEarly: a profile selects the Pending pods now, so they were
	// created before it was ACTIVE.
	selectionTooEarly
)

// decideSelection decides whether pods meant for Fargate were left without a
// profile.
func decideSelection(e selectionEvidence) selectionOutcome {
	switch {
	case !e.missed:
		return selectionFine
	case e.selecting != nil && e.keptOff:
		if e.live != nil {
			return selectionKeptOff
		}
		// From the configuration, pod-unschedulable says what they need
		// (configuring the add-on for Fargate).
		return selectionFine
	case e.selecting != nil && e.live != nil:
		// (From the configuration, a profile that selects the pods takes
		// them.)
		return selectionTooEarly
	case e.profilesUnknown:
		if e.noEC2 {
			return selectionUnverified
		}
		return selectionFine
	case e.ec2 == sim.Fits && len(e.near) > 0:
		return selectionElsewhere
	case e.ec2 == sim.Refuses && (len(e.near) > 0 || e.noEC2):
		return selectionNone
	}
	return selectionFine
}

// severity is how grave an outcome is.
func (o selectionOutcome) severity() Severity {
	switch o {
	case selectionUnverified:
		return Info
	case selectionElsewhere:
		return Warning
	}
	return Error
}

// explainsPods reports whether the finding of an outcome is the root cause of
// the pods fitting no capacity: nothing else runs them.
func (e selectionEvidence) explainsPods(o selectionOutcome) bool {
	return o.severity() == Error && e.ec2 == sim.Refuses
}

// selectionEvidenceOf gathers the evidence of a workload of the
// configuration, judged in the phase it must run in; ok is false when the
// check does not judge it.
func selectionEvidenceOf(p *Pass, w *cluster.Workload) (selectionEvidence, bool) {
	m := p.Model
	if len(m.FargateProfiles) == 0 || w.IsDaemonSet() || w.Replicas == 0 || !judgedStatically(m, w) {
		return selectionEvidence{}, false
	}
	e := selectionEvidence{
		w:         w,
		selecting: sim.SelectingProfile(m.FargateProfiles, w.Template.Namespace, templateLabels(w)),
		keptOff:   sim.KeptOffFargate(w.Template.Annotations),
	}
	if e.selecting != nil && e.keptOff {
		return e, true
	}
	e.pl = p.Sim.Place(w, requiredPhase(w))
	e.missed = e.pl.Fargate == nil
	if !e.missed {
		return e, true
	}
	e.profilesUnknown = fargateUnknown(e.pl)
	e.ec2 = ec2Result(e.pl)
	e.noEC2 = !hasEC2Capacity(e.pl)
	if !e.profilesUnknown {
		e.near = nearMisses(m, w)
	}
	return e, true
}

// missedGroup is the Pending pods of one owner the default scheduler refused
// for the Fargate taint.
type missedGroup struct {
	owner cluster.ObjectRef
	pods  []*cluster.Pod
	event cluster.Event
}

// liveMissedGroups returns the Pending pods of a running cluster that no
// Fargate profile took: the default scheduler names the Fargate taint in
// refusing them.
func liveMissedGroups(m *cluster.Model) []missedGroup {
	groups := pendingPods(m, func(pod *cluster.Pod) bool {
		_, ok := schedulingEvent(pod, fargateTaintEvent)
		return ok && pod.Spec.SchedulerName != "fargate-scheduler"
	})
	var out []missedGroup
	for _, ref := range sortedOwners(groups) {
		pods := groups[ref]
		ev, _ := schedulingEvent(pods[0], fargateTaintEvent)
		out = append(out, missedGroup{owner: ref, pods: pods, event: ev})
	}
	return out
}

// liveSelectionEvidence gathers the evidence of Pending pods no profile took.
// The scheduler names the Fargate taint whenever Fargate nodes exist: other
// capacity refused them too only when Fargate is all the cluster has;
// otherwise whether it can take them is pod-unschedulable's to say.
func liveSelectionEvidence(m *cluster.Model, g missedGroup) selectionEvidence {
	pod := g.pods[0]
	allFargate := len(m.Nodes) > 0
	for _, n := range m.Nodes {
		if n.Labels["eks.amazonaws.com/compute-type"] != "fargate" {
			allFargate = false
		}
	}
	e := selectionEvidence{
		live:      &g,
		missed:    true,
		selecting: sim.SelectingProfile(m.FargateProfiles, pod.Object.Namespace, pod.Object.Labels),
		keptOff:   sim.KeptOffFargate(pod.Object.Annotations),
		ec2:       sim.Unknown,
		noEC2:     allFargate,
	}
	if allFargate {
		e.ec2 = sim.Refuses
	}
	return e
}

// reportSelection words an outcome: for a workload of the configuration, or
// for Pending pods of a running cluster. nodes is the estimate of Fargate
// nodes (fargateNodes) for the configuration.
func reportSelection(p *Pass, e selectionEvidence, o selectionOutcome, nodes int) {
	switch {
	case o == selectionFine:
	case e.live != nil:
		reportLiveMismatch(p, e, o)
	case o == selectionUnverified:
		reportUnverifiedSelection(p, e.w, e.pl)
	default:
		reportMismatch(p, e, o, nodes)
	}
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
				// A selector that selects another workload of the namespace
				// whole was written for that one, not for this.
				if len(missing) > 0 && !selectsOther(m, w, sel) {
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

// selectsOther reports whether a selector with labels selects the pods of a
// workload other than w.
func selectsOther(m *cluster.Model, w *cluster.Workload, sel cluster.FargateSelector) bool {
	if len(sel.Labels) == 0 {
		return false
	}
	for _, o := range m.Workloads {
		if o == w || !sim.Glob(sel.Namespace, o.Template.Namespace) {
			continue
		}
		labels := templateLabels(o)
		all := true
		for k, v := range sel.Labels {
			ok := false
			for lk, lv := range labels {
				if sim.Glob(k, lk) && sim.Glob(v, lv) {
					ok = true
					break
				}
			}
			all = all && ok
		}
		if all {
			return true
		}
	}
	return false
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

func reportMismatch(p *Pass, e selectionEvidence, o selectionOutcome, nodes int) {
	w, pl, near, sev := e.w, e.pl, e.near, o.severity()
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
	// Pods that fit nothing because no profile selects them: this is the root
	// cause the scheduling checks would report as unschedulable.
	var causes []string
	if e.explainsPods(o) {
		causes = []string{podsCause(ref)}
	}
	p.Report(Finding{
		Severity: sev,
		Object:   ref,
		Origin:   w.Object.Origin,
		Summary:  fmt.Sprintf("%s pods %s", ref, what),
		Detail:   b.String(),
		Fix:      mismatchFix(p.Model, w, near),
		causes:   causes,
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
		if e, ok := write.SplitFargateProfile(p.Model, fp); ok {
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
	e, ok := write.AddFargateSelector(m, fp, sel)
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
	e, ok := write.ReleaseChartVersion(m, r, "1.0.1")
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
			labels = cluster.CopyJSON(cur).(map[string]any)
		}
		for k, v := range want {
			labels[k] = v
		}
		values := map[string]any{}
		setPath(values, key, labels)
		return releaseValuesFix(summary, r, values)
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
	e, ok := write.ObjectPatch(m, w.Object, nest(path, map[string]any{"labels": labels}))
	if !ok {
		return nil
	}
	return &Fix{Summary: summary, Edits: []Edit{e}}
}

// releaseValuesEdit merges values into a Helm release where it is declared.
func releaseValuesEdit(r *cluster.HelmRelease, values map[string]any) (Edit, bool) {
	return write.ReleaseValues(r, values)
}

// releaseValuesFix is a fix made of one change of a release's values; nil
// when the values are not the user's to write (a tool installs the release).
func releaseValuesFix(summary string, r *cluster.HelmRelease, values map[string]any) *Fix {
	e, ok := write.ReleaseValues(r, values)
	if !ok {
		return nil
	}
	return &Fix{Summary: summary, Edits: []Edit{e}}
}

// reportLiveMismatch words the outcome for Pending pods of a running cluster:
// the default scheduler could only place them on Fargate nodes, and they were
// never handed to fargate-scheduler.
func reportLiveMismatch(p *Pass, e selectionEvidence, o selectionOutcome) {
	m := p.Model
	g := e.live
	ref, pods, pod := g.owner, g.pods, g.pods[0]
	why := fmt.Sprintf("no Fargate profile selected them when they were created (namespace %q, %s), or they were created before their profile was ACTIVE", pod.Object.Namespace, labelSetText(pod.Object.Labels))
	switch {
	case o == selectionKeptOff:
		why = fmt.Sprintf("Fargate profile %q selects them, but their annotation %s: ec2 keeps them off Fargate", e.selecting.Name, sim.ComputeTypeKey)
	case o == selectionTooEarly:
		why = fmt.Sprintf("Fargate profile %q selects them now, so they were created before it was ACTIVE", e.selecting.Name)
	case len(m.FargateProfiles) > 0:
		why = fmt.Sprintf("no Fargate profile selects them (namespace %q, %s)", pod.Object.Namespace, labelSetText(pod.Object.Labels))
	}
	// With only Fargate nodes, the pods fit nothing else: their placement is
	// this check's to explain.
	var causes []string
	if e.explainsPods(o) {
		causes = podCauses(pods)
	}
	p.Report(Finding{
		Severity: o.severity(),
		causes:   causes,
		Object:   ref,
		Origin:   pod.Object.Origin,
		Summary:  fmt.Sprintf("%s: %d pod(s) Pending with %q: %s", ref, len(pods), g.event.Message, why),
		Detail:   fmt.Sprintf("The pods use %s, not fargate-scheduler: the Fargate admission webhook did not mutate them at creation, so the default scheduler sees only Fargate nodes, which it may not use. Pods: %s.", orDefaultName(pod.Spec.SchedulerName, "default-scheduler"), podNameList(pods)),
		Fix: &Fix{
			Summary: "once a profile selects them, delete the pods so that their owner re-creates them and Fargate mutates the new ones",
			Edits:   []Edit{{Format: FormatShell, Text: "kubectl delete pod -n " + shell.Quote(pod.Object.Namespace) + " " + shell.Join(sortedPodNames(pods)...)}},
		},
	})
}
