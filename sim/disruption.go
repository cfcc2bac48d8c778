package sim

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// Disruption taints. Karpenter taints a node before it drains it; pods that tolerate
// the taint are neither evicted nor waited for (kubernetes-sigs/karpenter
// pkg/utils/pod/scheduling.go IsEvictable/IsDrainable). The key and value changed
// between API generations, so which taint matters depends on the version in use.
var (
	// DisruptedTaint is set by Karpenter v1.0 and later.
	DisruptedTaint = corev1.Taint{Key: "karpenter.sh/disrupted", Effect: corev1.TaintEffectNoSchedule}
	// DisruptingTaint is set by Karpenter v0.32 to v0.37 (the v1beta1 API).
	DisruptingTaint = corev1.Taint{Key: "karpenter.sh/disruption", Value: "disrupting", Effect: corev1.TaintEffectNoSchedule}
	// CordonTaint is what a cordon (spec.unschedulable) means to the scheduler;
	// Karpenter v0.31 and earlier cordoned the node and skipped the pods that
	// tolerate it, which every DaemonSet pod does.
	CordonTaint = corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}
)

// Generation is the Karpenter API generation, which decides how a node is drained.
type Generation int

const (
	_ Generation = iota
	// GenAlpha is v0.31 and earlier (v1alpha5 Provisioners): drain after a cordon.
	GenAlpha
	// GenBeta is v0.32 to v0.37 (v1beta1 NodePools): karpenter.sh/disruption=disrupting.
	GenBeta
	// GenV1 is v1.0 and later: karpenter.sh/disrupted.
	GenV1
)

func (g Generation) String() string {
	switch g {
	case GenAlpha:
		return "v1alpha5 (Karpenter v0.31 and earlier)"
	case GenBeta:
		return "v1beta1 (Karpenter v0.32 to v0.37)"
	case GenV1:
		return "v1 (Karpenter v1.0 and later)"
	}
	return "unknown"
}

// Disruption is how the Karpenter version in use drains a node.
type Disruption struct {
	Generation Generation
	// Version is the Karpenter version as the configuration states it; "" when the
	// configuration does not say.
	Version string
	// VersionFrom says where Version came from.
	VersionFrom string
	// Assumed is set when the version is unknown and the current generation is
	// assumed.
	Assumed bool
	// Taint is the taint Karpenter puts on the node before draining it.
	Taint corev1.Taint
	// WaitsForVolumes: Karpenter waits until the VolumeAttachments of drained pods
	// are gone before terminating the instance (v1.0 and later).
	WaitsForVolumes bool
	// WaitsBetweenGroups: Karpenter evicts the next eviction group only after the
	// pods of the previous one have terminated. Earlier versions moved on as soon
	// as the evictions were accepted (kubernetes-sigs/karpenter#1478, first
	// released after v1.0.0; v1.1.0 is assumed).
	WaitsBetweenGroups bool
}

// DisruptionOf returns how the Karpenter installation described by k drains nodes.
// An unknown or unreadable version is taken to be the current generation, and the
// result says so.
func DisruptionOf(k cluster.Karpenter) Disruption {
	d, ok := DisruptionFor(k.Version)
	d.VersionFrom = k.VersionFrom
	if !ok {
		d = DisruptionFor1()
		d.Assumed = true
		d.VersionFrom = "not stated in the inputs"
	}
	return d
}

// DisruptionFor1 is the current generation, assumed when nothing says otherwise.
func DisruptionFor1() Disruption {
	return Disruption{Generation: GenV1, Taint: DisruptedTaint, WaitsForVolumes: true, WaitsBetweenGroups: true}
}

// DisruptionFor returns how a Karpenter version drains nodes; ok is false when the
// version cannot be read.
func DisruptionFor(version string) (Disruption, bool) {
	major, minor, exact, ok := majorMinor(version)
	if !ok {
		return Disruption{}, false
	}
	d := Disruption{Version: version}
	switch {
	case major >= 1:
		d.Generation, d.Taint, d.WaitsForVolumes = GenV1, DisruptedTaint, true
		// A bare "1" (read from an apiVersion) is taken as a current 1.x.
		d.WaitsBetweenGroups = major > 1 || minor >= 1 || !exact
	case minor >= 32:
		d.Generation, d.Taint = GenBeta, DisruptingTaint
	default:
		d.Generation, d.Taint = GenAlpha, CordonTaint
	}
	return d, true
}

var versionRE = regexp.MustCompile(`^v?(\d+)(?:\.(\d+))?`)

// majorMinor reads "1", "0.37", "v1.0.8", "1.0.0-rc.1"; exact is false when the
// minor version is not given.
func majorMinor(v string) (major, minor int, exact, ok bool) {
	if cluster.IsUnknown(v) {
		return 0, 0, false, false
	}
	m := versionRE.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		return 0, 0, false, false
	}
	major, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, 0, false, false
	}
	if m[2] != "" {
		if minor, err = strconv.Atoi(m[2]); err != nil {
			return 0, 0, false, false
		}
		exact = true
	}
	return major, minor, exact, true
}

// Describe renders the taint with the version it comes from:
// "karpenter.sh/disrupted:NoSchedule (Karpenter 1.0.0, from chart version of helm_release.karpenter)".
func (d Disruption) Describe() string {
	what := TaintText(d.Taint)
	if d.Generation == GenAlpha {
		what = "the cordon (" + TaintText(d.Taint) + ")"
	}
	switch {
	case d.Assumed:
		return what + " (the Karpenter version is not stated in the inputs; v1 is assumed)"
	case d.VersionFrom != "":
		return fmt.Sprintf("%s (Karpenter v%s, from %s)", what, strings.TrimPrefix(d.Version, "v"), d.VersionFrom)
	}
	return fmt.Sprintf("%s (Karpenter v%s)", what, strings.TrimPrefix(d.Version, "v"))
}

// ToleratedBy reports whether pods with these tolerations tolerate the disruption
// taint, and so are neither evicted nor waited for.
func (d Disruption) ToleratedBy(tolerations []corev1.Toleration) bool {
	return Tolerates(tolerations, d.Taint)
}

// ---- eviction ----

// EvictionGroup is Karpenter's eviction order on a node being drained: a group is
// evicted only after the previous one (kubernetes-sigs/karpenter
// pkg/controllers/node/termination/terminator/terminator.go groupPodsByPriority).
type EvictionGroup int

const (
	// NotEvicted: the pod tolerates the disruption taint or is a static pod.
	NotEvicted EvictionGroup = iota
	NonCriticalPods
	NonCriticalDaemonPods
	CriticalPods
	CriticalDaemonPods
)

func (g EvictionGroup) String() string {
	switch g {
	case NotEvicted:
		return "not evicted"
	case NonCriticalPods:
		return "1 (non-critical pods)"
	case NonCriticalDaemonPods:
		return "2 (non-critical DaemonSet pods)"
	case CriticalPods:
		return "3 (critical pods)"
	case CriticalDaemonPods:
		return "4 (critical DaemonSet pods)"
	}
	return "invalid"
}

// IsCritical reports whether a priority class makes a pod critical for Karpenter's
// eviction order.
func IsCritical(priorityClassName string) bool {
	return priorityClassName == "system-cluster-critical" || priorityClassName == "system-node-critical"
}

// GroupOf returns the eviction group of a pod on a node drained under d, and why
// it is not evicted when it is not. daemon tells whether a DaemonSet owns the pod;
// static whether the kubelet does (mirror pods cannot be evicted).
func GroupOf(spec *corev1.PodSpec, daemon, static bool, d Disruption) (EvictionGroup, string) {
	if static {
		return NotEvicted, "static pod: the kubelet owns it, it cannot be evicted"
	}
	if d.ToleratedBy(spec.Tolerations) {
		return NotEvicted, "tolerates " + TaintText(d.Taint)
	}
	switch critical := IsCritical(spec.PriorityClassName); {
	case critical && daemon:
		return CriticalDaemonPods, ""
	case critical:
		return CriticalPods, ""
	case daemon:
		return NonCriticalDaemonPods, ""
	}
	return NonCriticalPods, ""
}

// PodDrain is what a drain does to the pods of one workload (or one live pod).
type PodDrain struct {
	Workload *cluster.Workload
	// Pod is set for a live pod; Workload is then its owner when known.
	Pod   *cluster.Pod
	Group EvictionGroup
	// Stays says why the pods are not evicted (Group is NotEvicted).
	Stays    string
	Critical bool
	Daemon   bool
	// Claims are the persistent volumes the pods mount.
	Claims []Claim
}

// Ref names the pod's workload (or the live pod).
func (p PodDrain) Ref() cluster.ObjectRef {
	if p.Pod != nil {
		return p.Pod.Object.Ref()
	}
	return p.Workload.Ref()
}

// Claim is a persistent volume claim a pod mounts, with the CSI driver that serves
// it when the inputs say.
type Claim struct {
	Name string
	// Driver is the CSI driver ("ebs.csi.aws.com"); "" when the inputs do not say.
	Driver string
	// From explains how Driver was worked out ("StorageClass gp3", "default StorageClass").
	From string
}

// VolumeTiming tells when a node's CSI plugin is evicted relative to a workload
// whose volumes it serves.
type VolumeTiming int

const (
	_ VolumeTiming = iota
	// PluginFirst: the plugin is evicted in an earlier group than the workload.
	PluginFirst
	// PluginTogether: the plugin and the workload are evicted in the same group.
	PluginTogether
	// PluginWhileTerminating: the plugin is in a later group, but this Karpenter
	// version moves to the next group as soon as evictions are accepted, while the
	// workload's pods are still terminating.
	PluginWhileTerminating
	// PluginAfter: the plugin is evicted after the workload's pods are gone, while
	// the volumes may still be staged and attached: unstaging needs the plugin.
	PluginAfter
)

func (t VolumeTiming) String() string {
	switch t {
	case PluginFirst:
		return "before the pods that use the volumes"
	case PluginTogether:
		return "together with the pods that use the volumes"
	case PluginWhileTerminating:
		return "while the pods that use the volumes are still terminating"
	case PluginAfter:
		return "after the pods that use the volumes, before the volumes are unstaged and detached"
	}
	return "invalid"
}

// VolumeRisk is a workload whose volumes are served by a CSI node plugin that the
// drain evicts.
type VolumeRisk struct {
	User   PodDrain
	Plugin PodDrain
	Driver string
	When   VolumeTiming
	// Assumed is set when the claims' driver is not known and the plugin is
	// assumed to serve them.
	Assumed bool
}

// Drain is the simulation of Karpenter draining one node: which pods are evicted in
// which order, which stay, and what that means for volumes.
type Drain struct {
	Disruption Disruption
	// NodePool is the NodePool whose nodes are drained (static inputs); Node the
	// live node.
	NodePool *cluster.NodePool
	Node     *cluster.Node
	// Groups holds the evicted pods by eviction group, index 0 = group 1.
	Groups [4][]PodDrain
	// Stays lists the pods that are not evicted.
	Stays   []PodDrain
	Volumes []VolumeRisk
}

// Evicted returns every evicted pod in eviction order.
func (d *Drain) Evicted() []PodDrain {
	var out []PodDrain
	for _, g := range d.Groups {
		out = append(out, g...)
	}
	return out
}

// Find returns the drain entry of a workload, if it runs on the node.
func (d *Drain) Find(w *cluster.Workload) (PodDrain, bool) {
	for _, p := range append(d.Evicted(), d.Stays...) {
		if p.Workload == w && p.Pod == nil {
			return p, true
		}
	}
	return PodDrain{}, false
}

// Disruption returns how the model's Karpenter version drains nodes.
func (s *Simulator) Disruption() Disruption { return DisruptionOf(s.m.Karpenter) }

// RunsOn reports whether the workload's pods can run on the NodePool's nodes in
// the steady phase: the NodePool's verdict fits, or refuses only because the
// Karpenter controller cannot run (a separate problem, reported on its own).
func (s *Simulator) RunsOn(w *cluster.Workload, np *cluster.NodePool) Result {
	for _, v := range s.Place(w, cluster.Steady).Verdicts {
		if v.Source.NodePool != np {
			continue
		}
		if v.Result == Refuses && OnlyCode(v.Reasons, CodeController) {
			return Fits
		}
		if v.Result == Unknown && !slices.ContainsFunc(v.Reasons, func(r Reason) bool { return !r.TypesUnknown }) {
			// Another provider's NodePool whose nodes the DaemonSet's
			// selection and tolerations admit: the DaemonSet controller
			// places a pod on each of them, whatever their instance types.
			return Fits
		}
		return v.Result
	}
	return Refuses
}

// DrainNodePool simulates Karpenter draining a node of a NodePool: every workload
// whose pods can run there is assumed to have a pod on the node.
func (s *Simulator) DrainNodePool(np *cluster.NodePool) *Drain {
	d := &Drain{Disruption: s.Disruption(), NodePool: np}
	for _, w := range s.m.Workloads {
		if w.Replicas == 0 || s.RunsOn(w, np) != Fits {
			continue
		}
		pod := podOf(w)
		pd := PodDrain{Workload: w, Daemon: w.IsDaemonSet(), Critical: IsCritical(pod.Spec.PriorityClassName), Claims: s.claims(w.Template.Namespace, &pod.Spec, w)}
		pd.Group, pd.Stays = GroupOf(&pod.Spec, pd.Daemon, false, d.Disruption)
		d.add(pd)
	}
	s.finishDrain(d)
	return d
}

// DrainNode simulates Karpenter draining a live node with the pods bound to it.
func (s *Simulator) DrainNode(n *cluster.Node) *Drain {
	d := &Drain{Disruption: s.Disruption(), Node: n}
	for _, p := range s.m.Pods {
		if p.Spec.NodeName != n.Name || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		daemon := ownerKind(p.Object) == "DaemonSet" || (p.Workload != nil && p.Workload.IsDaemonSet())
		static := ownerKind(p.Object) == "Node" || p.Object.Annotations[corev1.MirrorPodAnnotationKey] != ""
		pd := PodDrain{Workload: p.Workload, Pod: p, Daemon: daemon, Critical: IsCritical(p.Spec.PriorityClassName), Claims: s.claims(p.Object.Namespace, &p.Spec, nil)}
		pd.Group, pd.Stays = GroupOf(&p.Spec, daemon, static, d.Disruption)
		d.add(pd)
	}
	s.finishDrain(d)
	return d
}

func ownerKind(o *cluster.Object) string {
	ref, _ := o.Controller()
	return ref.Kind
}

func (d *Drain) add(p PodDrain) {
	if p.Group == NotEvicted {
		d.Stays = append(d.Stays, p)
		return
	}
	d.Groups[p.Group-1] = append(d.Groups[p.Group-1], p)
}

// finishDrain sorts the pods and works out the volume risks.
func (s *Simulator) finishDrain(d *Drain) {
	less := func(list []PodDrain) {
		sort.SliceStable(list, func(i, j int) bool { return list[i].Ref().Less(list[j].Ref()) })
	}
	for i := range d.Groups {
		less(d.Groups[i])
	}
	less(d.Stays)
	var plugins []PodDrain
	for _, p := range d.Evicted() {
		if p.Workload != nil && s.PluginDriver(p.Workload) != "" {
			plugins = append(plugins, p)
		}
	}
	for _, u := range append(d.Evicted(), d.Stays...) {
		for _, pl := range plugins {
			driver := s.PluginDriver(pl.Workload)
			served, assumed := serves(u.Claims, driver)
			if !served || pl.Workload == u.Workload {
				continue
			}
			r := VolumeRisk{User: u, Plugin: pl, Driver: driver, Assumed: assumed}
			switch {
			case u.Group == NotEvicted || pl.Group > u.Group:
				// The user's pods stay or leave first; the plugin still leaves
				// while their volumes may be staged and attached.
				r.When = PluginAfter
				if u.Group != NotEvicted && !d.Disruption.WaitsBetweenGroups {
					r.When = PluginWhileTerminating
				}
			case pl.Group == u.Group:
				r.When = PluginTogether
			default:
				r.When = PluginFirst
			}
			d.Volumes = append(d.Volumes, r)
		}
	}
}

// serves reports whether a driver serves any of the claims; assumed is set when
// it is only assumed because a claim's driver is unknown.
func serves(claims []Claim, driver string) (served, assumed bool) {
	for _, c := range claims {
		switch c.Driver {
		case driver:
			return true, false
		case "":
			served, assumed = true, true
		}
	}
	return served, assumed
}

// ---- volumes ----

var pluginDirRE = regexp.MustCompile(`/plugins/([a-z0-9][a-z0-9.-]*[a-z0-9])/?$`)

// componentDrivers maps well-known CSI node plugins to their drivers, for plugins
// whose host paths do not name them (Windows, custom kubelet paths).
var componentDrivers = map[string]string{
	"ebs-csi-node":         "ebs.csi.aws.com",
	"ebs-csi-node-windows": "ebs.csi.aws.com",
	"efs-csi-node":         "efs.csi.aws.com",
	"fsx-csi-node":         "fsx.csi.aws.com",
	"fsx-openzfs-csi-node": "fsx.openzfs.csi.aws.com",
	"s3-csi-node":          "s3.csi.aws.com",
}

// PluginDriver returns the CSI driver a DaemonSet is the node plugin of, "" when it
// is not a CSI node plugin. The kubelet plugin directory it mounts
// (/var/lib/kubelet/plugins/<driver>/) names the driver.
func (s *Simulator) PluginDriver(w *cluster.Workload) string {
	if !w.IsDaemonSet() || !strings.Contains(w.NodeCritical, "CSI") && !strings.Contains(w.Component, "csi") {
		return ""
	}
	for _, v := range w.Template.Spec.Volumes {
		if v.HostPath == nil {
			continue
		}
		if m := pluginDirRE.FindStringSubmatch(v.HostPath.Path); m != nil && strings.Contains(m[1], ".") {
			return m[1]
		}
	}
	if d, ok := componentDrivers[w.Component]; ok {
		return d
	}
	return strings.TrimSuffix(w.Component, "-node")
}

// inTreeDrivers maps in-tree provisioners to the CSI driver that serves them after
// CSI migration (on by default for EBS since Kubernetes 1.23 on EKS).
var inTreeDrivers = map[string]string{
	"kubernetes.io/aws-ebs": "ebs.csi.aws.com",
}

// Claims lists the persistent volume claims a workload's pods mount, each
// with the CSI driver that serves it when the inputs say.
func (s *Simulator) Claims(w *cluster.Workload) []Claim {
	return s.claims(w.Template.Namespace, &w.Template.Spec, w)
}

// NormalizeDriver is the CSI driver that serves a provisioner: the in-tree
// kubernetes.io/aws-ebs is served by ebs.csi.aws.com.
func NormalizeDriver(provisioner string) string { return normalizeDriver(provisioner) }

// claims lists the persistent volume claims a pod mounts: PVC volumes, generic
// ephemeral volumes, and a StatefulSet's volumeClaimTemplates.
func (s *Simulator) claims(ns string, spec *corev1.PodSpec, owner *cluster.Workload) []Claim {
	var out []Claim
	for _, v := range spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			c := Claim{Name: v.PersistentVolumeClaim.ClaimName}
			c.Driver, c.From = s.claimDriver(ns, c.Name)
			out = append(out, c)
		case v.Ephemeral != nil && v.Ephemeral.VolumeClaimTemplate != nil:
			c := Claim{Name: v.Name + " (ephemeral)"}
			c.Driver, c.From = s.classDriver(v.Ephemeral.VolumeClaimTemplate.Spec.StorageClassName)
			out = append(out, c)
		}
	}
	if owner != nil && owner.Object.Kind == "StatefulSet" {
		tmpls, _ := owner.ClaimTemplates().([]any)
		for i, t := range tmpls {
			name, _ := cluster.Lookup(t, "metadata.name").(string)
			if name == "" {
				name = fmt.Sprintf("volumeClaimTemplates[%d]", i)
			}
			var class *string
			if sc, ok := cluster.Lookup(t, "spec.storageClassName").(string); ok {
				class = &sc
			}
			c := Claim{Name: name}
			c.Driver, c.From = s.classDriver(class)
			out = append(out, c)
		}
	}
	return out
}

// claimDriver resolves a named PVC to its driver through its StorageClass.
func (s *Simulator) claimDriver(ns, name string) (string, string) {
	for _, o := range s.pvcObjects() {
		if o.Namespace != ns || o.Name != name {
			continue
		}
		if drv := o.Annotations["volume.kubernetes.io/storage-provisioner"]; drv != "" {
			return normalizeDriver(drv), "PersistentVolumeClaim " + name
		}
		var class *string
		if sc, ok := o.Get("spec.storageClassName").(string); ok {
			class = &sc
		}
		return s.classDriver(class)
	}
	return "", ""
}

func (s *Simulator) pvcObjects() []*cluster.Object {
	var out []*cluster.Object
	for _, o := range s.m.Objects {
		if o.Kind == "PersistentVolumeClaim" {
			out = append(out, o)
		}
	}
	if s.m.Live != nil {
		out = append(out, s.m.Live.PVCs...)
	}
	return out
}

// classDriver resolves a storage class name (nil = the default class) to the
// provisioner's CSI driver.
func (s *Simulator) classDriver(class *string) (string, string) {
	for _, o := range s.m.Objects {
		if o.Kind != "StorageClass" {
			continue
		}
		prov, _ := o.Get("provisioner").(string)
		if class == nil && o.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
			return normalizeDriver(prov), "default StorageClass " + o.Name
		}
		if class != nil && o.Name == *class {
			return normalizeDriver(prov), "StorageClass " + o.Name
		}
	}
	return "", ""
}

func normalizeDriver(p string) string {
	if d, ok := inTreeDrivers[p]; ok {
		return d
	}
	return p
}

// PodTolerations returns the tolerations a workload's pods run with, including
// those the DaemonSet controller adds to DaemonSet pods.
func PodTolerations(w *cluster.Workload) []corev1.Toleration {
	return podOf(w).Spec.Tolerations
}
