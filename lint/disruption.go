package lint

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/write"
)

var disruptionTolerationMissing = &Check{
	ID:       "disruption-toleration-missing",
	Title:    "Node-critical DaemonSet does not tolerate Karpenter's disruption taint",
	Family:   "F3",
	Severity: Error,
	Doc: Doc{
		What: "A DaemonSet that nodes need to drain correctly (a CSI node plugin such as ebs-csi-node, efs-csi-node, fsx-csi-node or s3-csi-node; a CNI agent such as aws-node, cilium or calico-node) can run on Karpenter nodes but does not tolerate the taint the Karpenter version in use puts on a node it disrupts: `karpenter.sh/disrupted:NoSchedule` in v1, `karpenter.sh/disruption=disrupting:NoSchedule` in v0.32 to v0.37. DaemonSets are recognized by their containers, host paths and chart, not by name. The check knows the aws-ebs-csi-driver chart history (`node.tolerateAllTaints` false in charts 1.0.0 to 2.10.x; with it false, the disruption tolerations are added only from chart 2.36.0), tolerations that name only the other generation's key, and `effect: NoExecute` tolerations (the chart's default `node.tolerations`) that do not match a NoSchedule taint. It also warns when the EBS driver's preStop hook predates the v1 taint (driver older than v1.36.0) and when Karpenter older than v1.0, which does not wait for volumes to detach, drains nodes with EBS volumes. Applications are never asked to tolerate the taint: Karpenter advises against it.",
		Why:  "Karpenter evicts every pod that does not tolerate its disruption taint, DaemonSet pods included, and the DaemonSet controller does not bring them back on the tainted node. A CSI node plugin evicted before the node's volumes are unmounted, unstaged and detached leaves them attached: the replacement pod on another node fails with `Multi-Attach error for volume \"pvc-...\" Volume is already exclusively attached to one node and can't be attached to another` until the attach/detach controller force-detaches after 6 minutes. A CNI agent evicted early cuts the network of pods that are still shutting down.",
		Fix:  "Tolerate the disruption taint where the DaemonSet is configured: `node.tolerateAllTaints: true` (or the `node.tolerations` list) in the aws-ebs-csi-driver Helm values or EKS add-on `configuration_values`, `tolerations` in the Cilium values, or the DaemonSet's own tolerations. The fix keeps every toleration the DaemonSet already has (lists are replaced whole) and is verified by re-running the analysis.",
	},
	Run: runDisruptionTolerations,
}

const ebsDriver = "ebs.csi.aws.com"

// preStopTaintVersion is the first EBS CSI driver whose preStop hook recognises
// karpenter.sh/disrupted (aws-ebs-csi-driver cmd/hooks/prestop.go, commit 361df2cb).
const preStopTaintVersion = "1.36.0"

func runDisruptionTolerations(p *Pass) {
	d := p.Sim.Disruption()
	installed := p.Model.Karpenter.Controller != nil || p.Model.Karpenter.Release != nil
	for _, w := range p.Model.Workloads {
		if !w.IsDaemonSet() || w.NodeCritical == "" || w.Replicas == 0 {
			continue
		}
		pools, unknown := karpenterPools(p, w)
		tolerated := d.ToleratedBy(sim.PodTolerations(w))
		switch {
		case len(pools) == 0 && !tolerated && (len(unknown) > 0 || installed && len(p.Model.NodePools) == 0):
			reportUnverifiedDisruption(p, w, d, unknown)
		case len(pools) == 0:
		case !tolerated:
			reportMissingToleration(p, w, d, pools)
		}
	}
	reportNoVolumeWait(p, d)
}

// karpenterPools returns the NodePools whose nodes would run the DaemonSet, and
// those for which that cannot be told before apply.
func karpenterPools(p *Pass, w *cluster.Workload) (fits, unknown []*cluster.NodePool) {
	for _, np := range p.Model.NodePools {
		switch p.Sim.RunsOn(w, np) {
		case sim.Fits:
			fits = append(fits, np)
		case sim.Unknown:
			unknown = append(unknown, np)
		}
	}
	return fits, unknown
}

func poolNames(pools []*cluster.NodePool) string {
	var names []string
	for _, np := range pools {
		names = append(names, fmt.Sprintf("%q", np.Name))
	}
	if len(names) == 1 {
		return "NodePool " + names[0]
	}
	return "NodePools " + strings.Join(names, ", ")
}

func reportUnverifiedDisruption(p *Pass, w *cluster.Workload, d sim.Disruption, unknown []*cluster.NodePool) {
	why := "no NodePool is in the inputs"
	if len(unknown) > 0 {
		why = "whether it runs on the nodes of " + poolNames(unknown) + " is not known" + p.beforeApply()
	}
	p.Report(Finding{
		Severity: Info,
		Object:   w.Ref(),
		Origin:   w.Object.At(podSpecPath(w) + ".tolerations"),
		Summary:  fmt.Sprintf("%s does not tolerate %s; could not verify whether it runs on Karpenter nodes: %s", w.Ref(), sim.TaintText(d.Taint), why),
		Detail:   fmt.Sprintf("If it runs on Karpenter nodes, Karpenter evicts it when it drains them: %s.\n%s", w.NodeCritical, d.Describe()),
	})
}

func reportMissingToleration(p *Pass, w *cluster.Workload, d sim.Disruption, pools []*cluster.NodePool) {
	var b strings.Builder
	fmt.Fprintf(&b, "Karpenter puts %s on a node before draining it and evicts every pod that does not tolerate it, DaemonSet pods included. %s runs on the nodes of %s and is needed there: %s.",
		d.Describe(), w.Ref(), poolNames(pools), w.NodeCritical)
	if lines := tolerationMismatches(w.Template.Spec.Tolerations, d); len(lines) > 0 {
		b.WriteString("\nIts tolerations do not match the taint:")
		for _, l := range lines {
			b.WriteString("\n  - " + l)
		}
	} else if len(w.Template.Spec.Tolerations) == 0 {
		b.WriteString("\nIt has no tolerations of its own.")
	}
	if h := chartHistory(w); h != "" {
		b.WriteString("\n" + h)
	}
	for _, np := range pools {
		if s := drainStory(p.Sim.DrainNodePool(np), w); s != "" {
			b.WriteString("\n" + s)
			break
		}
	}
	if s := preStopStory(p.Sim, w, d); s != "" {
		b.WriteString("\n" + s)
	}
	sev := Error
	if inferredBeta(d) && sim.Tolerates(sim.PodTolerations(w), sim.DisruptedTaint) {
		// v1beta1 objects are served by v0.32-v0.37 and by v1.0.x: under v1.0.x
		// the DaemonSet, which tolerates the v1 taint, is fine.
		sev = Warning
		b.WriteString("\nThe version is inferred from the v1beta1 apiVersion, which Karpenter v1.0.x also serves; under v1.0.x the DaemonSet tolerates " + sim.TaintText(sim.DisruptedTaint) + " and is not evicted.")
	}
	p.Report(Finding{
		Severity: sev,
		Object:   w.Ref(),
		Origin:   w.Object.At(podSpecPath(w) + ".tolerations"),
		Summary:  fmt.Sprintf("%s does not tolerate %s, so Karpenter evicts it while draining a node of %s", w.Ref(), sim.TaintText(d.Taint), poolNames(pools)),
		Detail:   b.String(),
		Fix:      disruptionFix(p.Model, w, d),
	})
}

// chartHistory explains how the aws-ebs-csi-driver chart version the DaemonSet
// comes from decides its tolerations.
func chartHistory(w *cluster.Workload) string {
	var version string
	switch {
	case w.Release != nil && chartBase(w.Release.Chart) == "aws-ebs-csi-driver":
		version = w.Object.Annotations[chartVersionAnnotation]
		if version == "" {
			version = w.Release.Version
		}
		if version == "" {
			return ""
		}
		all, set := lookupBool(w.Release.Values, "node.tolerateAllTaints")
		setBy := "the chart default"
		if set {
			setBy = "set in the values"
		}
		if all {
			return ""
		}
		s := fmt.Sprintf("aws-ebs-csi-driver chart %s renders node.tolerateAllTaints: false (%s).", version, setBy)
		if !set {
			s += " The chart defaulted it to false from 1.0.0 to 2.10.x and to true again since 2.11.0."
		}
		if catalog.ChartVersionLess(version, "2.36.0") {
			s += " With it false, charts before 2.36.0 add no toleration for Karpenter's disruption taints (2.36.0 appends karpenter.sh/disrupted and karpenter.sh/disruption)."
		}
		return s
	case w.Addon != nil && w.Addon.Name == "aws-ebs-csi-driver":
		if all, set := lookupBool(w.Addon.ConfigurationValues, "node.tolerateAllTaints"); set && !all {
			return "The EKS add-on's configuration_values set node.tolerateAllTaints: false (the add-on default is true)."
		}
	}
	return ""
}

// drainStory tells what the drain of one node does to the DaemonSet and to the
// volumes it serves.
func drainStory(dr *sim.Drain, w *cluster.Workload) string {
	self, ok := dr.Find(w)
	if !ok || self.Group == sim.NotEvicted {
		return ""
	}
	var users []string
	var when sim.VolumeTiming
	for _, v := range dr.Volumes {
		if v.Plugin.Workload != w {
			continue
		}
		name := v.User.Ref().String()
		if v.Assumed {
			name += " (driver of its claims assumed)"
		}
		users = append(users, name)
		if when == 0 || v.When < when {
			when = v.When
		}
	}
	s := fmt.Sprintf("Draining a node of NodePool %q evicts it in eviction group %s", dr.NodePool.Name, self.Group)
	if len(users) == 0 {
		return s + "."
	}
	sort.Strings(users)
	if len(users) > 5 {
		users = append(users[:5], fmt.Sprintf("and %d more", len(users)-5))
	}
	return fmt.Sprintf("%s, %s: %s. Volumes it has not unmounted, unstaged and detached stay attached to the old node until the attach/detach controller force-detaches them after 6 minutes (Multi-Attach errors meanwhile).", s, when, strings.Join(users, ", "))
}

var imageTagRE = regexp.MustCompile(`:v?(\d+\.\d+\.\d+)`)

// ebsDriverVersion returns the driver version of an EBS CSI node plugin from its
// ebs-plugin container image; ok is false when the image does not say.
func ebsDriverVersion(w *cluster.Workload) (string, bool) {
	for _, c := range w.Template.Spec.Containers {
		if c.Name != "ebs-plugin" && !strings.Contains(c.Image, "aws-ebs-csi-driver:") {
			continue
		}
		if cluster.IsUnknown(c.Image) {
			return "", false
		}
		if m := imageTagRE.FindStringSubmatch(c.Image); m != nil {
			return m[1], true
		}
	}
	return "", false
}

// preStopStory explains what the EBS driver's preStop hook does under the
// Karpenter version in use: since driver v1.36.0 it waits for the node's
// VolumeAttachments to go when the node carries karpenter.sh/disrupted; older
// hooks only know the v1beta1 taint, the cordon and the cluster-autoscaler taint.
func preStopStory(s *sim.Simulator, w *cluster.Workload, d sim.Disruption) string {
	if s.PluginDriver(w) != ebsDriver || d.Generation != sim.GenV1 {
		return ""
	}
	v, ok := ebsDriverVersion(w)
	if !ok {
		return ""
	}
	if !catalog.ChartVersionLess(v, preStopTaintVersion) {
		return fmt.Sprintf("Its preStop hook (driver v%s) waits for the node's VolumeAttachments to be removed once it sees %s, which delays its exit but does not stop the eviction.", v, sim.DisruptedTaint.Key)
	}
	return fmt.Sprintf("Its preStop hook (driver v%s) does not recognise %s (driver v%s added it), so when the node plugin is stopped on a node Karpenter disrupts it exits at once instead of waiting for the node's VolumeAttachments to be removed.", v, sim.DisruptedTaint.Key, preStopTaintVersion)
}

// reportNoVolumeWait warns when a Karpenter version that does not wait for
// VolumeAttachments drains nodes where pods use EBS volumes.
func reportNoVolumeWait(p *Pass, d sim.Disruption) {
	if d.Assumed || d.WaitsForVolumes {
		return
	}
	ebsPlugin := false
	for _, w := range p.Model.Workloads {
		if p.Sim.PluginDriver(w) == ebsDriver {
			ebsPlugin = true
		}
	}
	users := map[string]bool{}
	var pools []*cluster.NodePool
	for _, np := range p.Model.NodePools {
		dr := p.Sim.DrainNodePool(np)
		found := false
		for _, pd := range append(dr.Evicted(), dr.Stays...) {
			for _, c := range pd.Claims {
				if c.Driver == ebsDriver || c.Driver == "" && ebsPlugin {
					users[pd.Ref().String()] = true
					found = true
				}
			}
		}
		if found {
			pools = append(pools, np)
		}
	}
	if len(users) == 0 {
		return
	}
	names := make([]string, 0, len(users))
	for n := range users {
		names = append(names, n)
	}
	sort.Strings(names)
	ref, origin := pools[0].Object.Ref(), pools[0].Object.Origin
	if c := p.Model.Karpenter.Controller; c != nil {
		ref, origin = c.Ref(), c.Object.Origin
	}
	sev := Warning
	if inferredBeta(d) {
		// v1.0.x also serves v1beta1 objects and does wait for volumes.
		sev = Info
	}
	p.Report(Finding{
		Severity: sev,
		Object:   ref,
		Origin:   origin,
		Summary:  fmt.Sprintf("Karpenter v%s terminates drained nodes without waiting for their EBS volumes to detach; %s mount EBS volumes on the nodes of %s", strings.TrimPrefix(d.Version, "v"), strings.Join(names, ", "), poolNames(pools)),
		Detail:   fmt.Sprintf("Karpenter before v1.0 terminates the instance as soon as the node is drained; v1.0 and later wait until the VolumeAttachments of the drained pods are deleted. A volume still attached to the terminated instance is detached only by the attach/detach controller's 6-minute force-detach, and the pod that needs it on another node reports a Multi-Attach error meanwhile.\n%s\nUpgrade Karpenter to v1 (see the v1 migration guide), or keep stateful workloads off Karpenter nodes.", d.Describe()),
	})
}

// inferredBeta reports whether the v1beta1 generation was only inferred from the
// apiVersion of NodePools, which Karpenter v1.0.x serves as well.
func inferredBeta(d sim.Disruption) bool {
	return d.Generation == sim.GenBeta && strings.HasPrefix(d.VersionFrom, "apiVersion ")
}

// ---- fixes ----

// disruptionTolerations are the tolerations a fix adds: the taint of the
// generation in use, and for v1beta1 also the v1 key so the upgrade keeps working.
func disruptionTolerations(d sim.Disruption) []corev1.Toleration {
	tol := func(t corev1.Taint) corev1.Toleration {
		return corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpExists, Effect: t.Effect}
	}
	switch d.Generation {
	case sim.GenBeta:
		return []corev1.Toleration{tol(sim.DisruptingTaint), tol(sim.DisruptedTaint)}
	case sim.GenAlpha:
		return []corev1.Toleration{tol(sim.CordonTaint)}
	}
	return []corev1.Toleration{tol(sim.DisruptedTaint)}
}

func tolerationKeys(ts []corev1.Toleration) string {
	var out []string
	for _, t := range ts {
		out = append(out, fmt.Sprintf("%s:%s", t.Key, t.Effect))
	}
	return strings.Join(out, " and ")
}

// disruptionFix proposes the tolerations in the format the DaemonSet is configured
// in: Helm values, EKS add-on configuration, or the manifest itself. Where the
// chart or add-on can make the node plugin tolerate every taint, that is the
// fix; a user who turned it off gets the tolerations list instead.
func disruptionFix(m *cluster.Model, w *cluster.Workload, d sim.Disruption) *Fix {
	add := disruptionTolerations(d)
	if f := tolerateAllFix(m, w, false); f != nil {
		return f
	}
	all := append(append([]corev1.Toleration(nil), w.Template.Spec.Tolerations...), add...)
	c := PodChange{Field: "tolerations", Value: tolerationMaps(all), Added: tolerationMaps(add)}
	if e, where, ok := sourceFix(m, w, c); ok {
		return &Fix{Summary: fmt.Sprintf("add %s to %s", tolerationKeys(add), where), Edits: []Edit{e}}
	}
	if f := tolerateAllFix(m, w, true); f != nil {
		return f
	}
	if w.Release != nil || w.Addon != nil {
		return nil
	}
	return podFix(m, w, c, fmt.Sprintf("tolerate %s so Karpenter leaves %s running while it drains the node", tolerationKeys(add), w.Object.Name))
}

// tolerateAllFix sets the node plugin's tolerateAllTaints switch of the chart or
// add-on that installs it: unless the user turned it off, or, with force, when
// the tolerations list cannot be set (add-on versions that accept only the
// switch).
func tolerateAllFix(m *cluster.Model, w *cluster.Workload, force bool) *Fix {
	switch {
	case w.Release != nil:
		r := w.Release
		kb, ok := releaseChart(r)
		if !ok {
			return nil
		}
		if v := w.Object.Annotations[chartVersionAnnotation]; v != "" && v != kb.Version {
			if k, ok := catalog.ChartFor(kb.Name, v); ok {
				kb = k
			}
		}
		comp, ok := componentOf(kb.Component, w)
		if !ok {
			return nil
		}
		if _, isKey := comp.Fields["tolerateAllTaints"]; !isKey {
			return nil
		}
		key := joinKey(comp.ValuesPrefix, "tolerateAllTaints")
		if all, set := lookupBool(r.Values, key); set && !all && !force {
			return nil
		}
		values := map[string]any{}
		setPath(values, key, true)
		e, ok := write.ReleaseValues(r, values)
		if !ok {
			return nil
		}
		return &Fix{
			Summary: fmt.Sprintf("set %s: true in the %s values (the chart default since 2.11.0): the node plugin then tolerates every taint, Karpenter's disruption taint included", key, kb.Name),
			Edits:   []Edit{e},
		}
	case w.Addon != nil:
		a := w.Addon
		if slices.Contains(a.Unknown, "configuration_values") {
			return nil
		}
		kb, ok := catalog.AddonFor(a.Name, addonVersion(a))
		if !ok {
			return nil
		}
		comp, ok := componentOf(kb.Component, w)
		if !ok {
			return nil
		}
		key := joinKey(comp.ValuesPrefix, "tolerateAllTaints")
		if kb.Accepts(key) != catalog.AddonAccepted {
			return nil
		}
		config := addonConfig(a)
		if all, set := lookupBool(config, key); set && !all && !force {
			return nil
		}
		setPath(config, key, true)
		e, ok := write.Addon(m, a, "", config)
		if !ok {
			return nil
		}
		summary := fmt.Sprintf("set %s: true in the add-on configuration: the node plugin then tolerates every taint, Karpenter's disruption taint included", key)
		if force {
			summary = fmt.Sprintf("set %s: true in the add-on configuration (add-on %s accepts no %s)", key, kb.Version, componentKey(comp, "tolerations"))
		}
		return &Fix{Summary: summary, Edits: []Edit{e}}
	}
	return nil
}

func chartBase(ref string) string {
	ref = strings.TrimRight(ref, "/")
	if i := strings.LastIndexByte(ref, '/'); i >= 0 {
		ref = ref[i+1:]
	}
	return ref
}

// ---- JSON-like values ----
