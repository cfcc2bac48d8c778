package sim

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-helpers/storage/volume"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// Volume topology: where a pod's persistent volumes let it run. An EBS volume
// lives in one Availability Zone; the PersistentVolume says so in its node
// affinity (and, for volumes of the in-tree plugin, in zone labels), and a
// StorageClass may restrict where it provisions (allowedTopologies) and when
// (volumeBindingMode). kube-scheduler reads them with its VolumeRestrictions,
// VolumeBinding and VolumeZone plugins; Karpenter with its volume topology,
// which turns them into requirements a new node must meet.

// The reasons kube-scheduler's volume plugins give, word for word.
const (
	msgUnboundImmediate = "pod has unbound immediate PersistentVolumeClaims"
	msgNodeConflict     = "node(s) didn't match PersistentVolume's node affinity"
	msgBindConflict     = "node(s) didn't find available persistent volumes to bind"
	msgZoneConflict     = "node(s) had no available volume zone"
)

// noProvisioner is the provisioner of StorageClasses for volumes made by hand.
const noProvisioner = "kubernetes.io/no-provisioner"

// volumeIndex is the model's claims, volumes and StorageClasses, decoded once.
type volumeIndex struct {
	claims  map[string]*corev1.PersistentVolumeClaim // namespace/name
	volumes map[string]*corev1.PersistentVolume
	classes map[string]*storagev1.StorageClass
	// byClass are the volumes of each StorageClass, by name.
	byClass map[string][]*corev1.PersistentVolume
	// defaultClass is the StorageClass a claim without storageClassName gets.
	defaultClass string
	// undecodable names objects whose content is not known (a value not
	// known before apply where a type is expected).
	undecodable map[string]bool
}

// decodeInto decodes an object's content, with the metadata the object
// keeps apart.
func decodeInto(o *cluster.Object, into metav1.Object) bool {
	if runtime.DefaultUnstructuredConverter.FromUnstructured(o.Data(), into) != nil {
		return false
	}
	into.SetName(o.Name)
	into.SetNamespace(o.Namespace)
	into.SetLabels(o.Labels)
	into.SetAnnotations(o.Annotations)
	if o.Terminating() {
		now := metav1.Now()
		into.SetDeletionTimestamp(&now)
	}
	return true
}

func (s *Simulator) volumeIndex() *volumeIndex {
	s.volOnce.Do(func() {
		ix := &volumeIndex{
			claims:      map[string]*corev1.PersistentVolumeClaim{},
			volumes:     map[string]*corev1.PersistentVolume{},
			classes:     map[string]*storagev1.StorageClass{},
			byClass:     map[string][]*corev1.PersistentVolume{},
			undecodable: map[string]bool{},
		}
		var defaults []*storagev1.StorageClass
		for _, o := range s.m.Objects {
			switch {
			case o.Kind == "PersistentVolumeClaim" && o.APIVersion == "v1":
				pvc := &corev1.PersistentVolumeClaim{}
				key := o.Namespace + "/" + o.Name
				if !decodeInto(o, pvc) {
					ix.undecodable["PersistentVolumeClaim "+key] = true
					continue
				}
				pvc.Namespace = o.Namespace
				ix.claims[key] = pvc
			case o.Kind == "PersistentVolume" && o.APIVersion == "v1":
				pv := &corev1.PersistentVolume{}
				if !decodeInto(o, pv) {
					ix.undecodable["PersistentVolume "+o.Name] = true
					continue
				}
				ix.volumes[o.Name] = pv
			case o.Kind == "StorageClass" && strings.HasPrefix(o.APIVersion, "storage.k8s.io/"):
				sc := &storagev1.StorageClass{}
				if !decodeInto(o, sc) {
					ix.undecodable["StorageClass "+o.Name] = true
					continue
				}
				if sc.VolumeBindingMode == nil {
					// The API server's default.
					mode := storagev1.VolumeBindingImmediate
					sc.VolumeBindingMode = &mode
				}
				ix.classes[o.Name] = sc
				if o.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
					defaults = append(defaults, sc)
				}
			}
		}
		for _, pv := range ix.volumes {
			c := volume.GetPersistentVolumeClass(pv)
			ix.byClass[c] = append(ix.byClass[c], pv)
		}
		for _, pvs := range ix.byClass {
			sort.Slice(pvs, func(i, j int) bool { return pvs[i].Name < pvs[j].Name })
		}
		// Several defaults: the newest wins (the admission plugin's choice);
		// in files, which has no creation time, the last by name.
		sort.Slice(defaults, func(i, j int) bool {
			a, b := defaults[i], defaults[j]
			if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
				return a.CreationTimestamp.Before(&b.CreationTimestamp)
			}
			return a.Name < b.Name
		})
		if len(defaults) > 0 {
			ix.defaultClass = defaults[len(defaults)-1].Name
		}
		s.vols = ix
	})
	return s.vols
}

// podVolumes is what the volume plugins and Karpenter read of one pod's
// claims.
type podVolumes struct {
	// key identifies the volumes for the pod's scheduling class.
	key string
	// preFilter is kube-scheduler's answer before it looks at any node (a
	// claim that does not exist, an unbound claim of an Immediate class):
	// every node refuses the pod with it.
	preFilter string
	// bound are the volumes of the pod's bound claims.
	bound []*corev1.PersistentVolume
	// delayed are the unbound claims of WaitForFirstConsumer classes, each
	// bound or provisioned for the node the pod is scheduled to.
	delayed []*corev1.PersistentVolumeClaim
	// selectedNode is set when a delayed claim names the node it is
	// provisioned for: the answer then depends on the node's name.
	selectedNode bool
	// karpenter are Karpenter's alternatives of requirements a new node
	// must meet for the volumes (GetRequirements), nil when none;
	// karpenterSkip is why Karpenter leaves the pod alone (its
	// ValidatePersistentVolumeClaims), "" when it does not.
	karpenter     []scheduling.Requirements
	karpenterSkip string
	// unknown says which claim of the inputs eksdoctor cannot see.
	unknown string
	// immediate names a claim (a StatefulSet's template, a claim of the
	// inputs) that an Immediate StorageClass provisions before the pod is
	// scheduled: its zone is chosen without the pod's constraints.
	immediate []ImmediateClaim
	// claims are the claims, for the words of a finding.
	claims []VolumeClaim
}

// ImmediateClaim is a claim provisioned as soon as it exists, in a zone the
// provisioner picks without regard to the pod that mounts it.
type ImmediateClaim struct {
	Claim, Class string
}

// VolumeClaim is one claim a pod mounts, and what decides where the pod runs.
type VolumeClaim struct {
	Name   string
	Volume string // the bound PersistentVolume, "" when unbound
	Class  string
	// Topology says where the volume is or may be provisioned, worded:
	// "topology.kubernetes.io/zone In [us-east-1a]"; "" anywhere.
	Topology string
}

func (pv *podVolumes) none() bool {
	return pv == nil || pv.key == ""
}

// ClaimsVolumes reports whether a pod's spec claims persistent volumes (a
// claim or an ephemeral volume): without them, and outside a StatefulSet,
// placement has no volume to answer for.
func ClaimsVolumes(spec *corev1.PodSpec) bool {
	return slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool {
		return v.PersistentVolumeClaim != nil || v.Ephemeral != nil
	})
}

// volumesOf works out the pod's volumes. The claims a StatefulSet's
// volumeClaimTemplates make are the owner's (in files, where no pod exists).
func (s *Simulator) volumesOf(w *cluster.Workload, pod *corev1.Pod) *podVolumes {
	hasClaims := ClaimsVolumes(&pod.Spec)
	templates := w != nil && w.Object != nil && w.Object.Kind == "StatefulSet"
	if !hasClaims && !templates {
		return nil
	}
	ix := s.volumeIndex()
	live := s.m.Live != nil
	pv := &podVolumes{}
	var key strings.Builder
	var karpAlts []scheduling.Requirements
	karpAlts = []scheduling.Requirements{nil}
	addAlts := func(alts []scheduling.Requirements) {
		if len(alts) > 0 {
			karpAlts = mergeAlternatives(karpAlts, alts)
		}
	}
	skip := func(msg string) {
		if pv.karpenterSkip == "" {
			pv.karpenterSkip = msg
		}
	}
	// kube-scheduler's PreFilters, in the order its plugins run:
	// VolumeRestrictions (a claim that does not exist), VolumeBinding (a
	// claim being deleted, then unbound claims of Immediate classes),
	// VolumeZone (a bound claim's volume that does not exist).
	var preRestrict, preBinding, preZone string
	immediateUnbound := false
	first := func(at *string, msg string) {
		if *at == "" {
			*at = msg
		}
	}
	// unbound handles a claim with no volume yet, of StorageClass class.
	unbound := func(pvc *corev1.PersistentVolumeClaim, what string) {
		class := volume.GetPersistentVolumeClaimClass(pvc)
		if pvc.Spec.StorageClassName == nil && !live {
			// In files, the default StorageClass admission gives the claim
			// its class when it is created.
			class = ix.defaultClass
		}
		sc := ix.classes[class]
		vc := VolumeClaim{Name: what, Class: class}
		if sc != nil {
			vc.Topology = topologyText(sc.AllowedTopologies)
		}
		pv.claims = append(pv.claims, vc)
		switch {
		case sc == nil && !live:
			if class == "" {
				pv.unknown = fmt.Sprintf("claim %s names no StorageClass and the inputs declare no default one", what)
			} else if ix.undecodable["StorageClass "+class] {
				pv.unknown = fmt.Sprintf("StorageClass %s of claim %s is not known before apply", class, what)
			} else {
				pv.unknown = fmt.Sprintf("StorageClass %s of claim %s is not in the inputs", class, what)
			}
			fmt.Fprintf(&key, "?%s\x00", class)
			return
		case sc == nil || *sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer:
			if live {
				immediateUnbound = true
				if class == "" {
					skip(fmt.Sprintf("unbound pvc must define a storage class (PersistentVolumeClaim %s)", what))
				} else if sc == nil {
					skip(fmt.Sprintf("failed to validate pvc, failed to get storage class, storageclasses.storage.k8s.io %q not found (PersistentVolumeClaim %s)", class, what))
				} else {
					skip(fmt.Sprintf("failed to validate pvc, pvc with immediate volume binding mode must be bound (PersistentVolumeClaim %s, StorageClass %s)", what, class))
				}
				fmt.Fprintf(&key, "I%s\x00", class)
				return
			}
			// In files the claim is created, and its volume provisioned,
			// before any pod runs: where is the provisioner's choice.
			pv.immediate = append(pv.immediate, ImmediateClaim{Claim: what, Class: class})
			fmt.Fprintf(&key, "i%s\x00", class)
			return
		}
		c := pvc.DeepCopy()
		if c.Spec.StorageClassName == nil {
			c.Spec.StorageClassName = &class
		}
		pv.delayed = append(pv.delayed, c)
		if _, ok := c.Annotations[volume.AnnSelectedNode]; ok {
			pv.selectedNode = true
		}
		fmt.Fprintf(&key, "D%s\x00%s\x00%s\x00%v\x00%v\x00", class, c.Annotations[volume.AnnSelectedNode], c.Spec.Resources.Requests.Storage().String(), c.Spec.AccessModes, c.Spec.VolumeMode)
		addAlts(classAlternatives(sc))
	}
	// use handles a claim that exists (or that a template makes).
	use := func(pvc *corev1.PersistentVolumeClaim, name string) {
		if !pvc.DeletionTimestamp.IsZero() {
			first(&preBinding, fmt.Sprintf("persistentvolumeclaim %q is being deleted", name))
			skip(fmt.Sprintf("persistentvolumeclaim is being deleted (PersistentVolumeClaim %s)", name))
			fmt.Fprintf(&key, "X%s\x00", name)
			return
		}
		_, complete := pvc.Annotations[volume.AnnBindCompleted]
		if pvc.Spec.VolumeName == "" || (live && !complete) {
			if pvc.Spec.VolumeName != "" {
				skip(fmt.Sprintf("pvc is considered unbound because it does not contain annotation (PersistentVolumeClaim %s)", name))
			}
			unbound(pvc, name)
			return
		}
		vol := ix.volumes[pvc.Spec.VolumeName]
		if vol == nil {
			if !live {
				pv.unknown = fmt.Sprintf("volume %s of claim %s is not in the inputs", pvc.Spec.VolumeName, name)
				fmt.Fprintf(&key, "?%s\x00", pvc.Spec.VolumeName)
				return
			}
			first(&preZone, fmt.Sprintf("persistentvolume %q not found", pvc.Spec.VolumeName))
			skip(fmt.Sprintf("failed to validate pvc, persistentvolumes %q not found (PersistentVolumeClaim %s)", pvc.Spec.VolumeName, name))
			fmt.Fprintf(&key, "P%s\x00", pvc.Spec.VolumeName)
			return
		}
		if !vol.DeletionTimestamp.IsZero() {
			skip(fmt.Sprintf("failed to validate pvc, persistentvolume is being deleted (PersistentVolumeClaim %s)", name))
		}
		pv.bound = append(pv.bound, vol)
		pv.claims = append(pv.claims, VolumeClaim{Name: name, Volume: vol.Name, Class: volume.GetPersistentVolumeClass(vol), Topology: volumeTopologyText(vol)})
		fmt.Fprintf(&key, "B%s\x00", vol.Name)
		addAlts(volumeAlternatives(vol))
	}
	for _, v := range pod.Spec.Volumes {
		var pvc *corev1.PersistentVolumeClaim
		var name string
		switch {
		case v.PersistentVolumeClaim != nil:
			name = v.PersistentVolumeClaim.ClaimName
			pvc = ix.claims[pod.Namespace+"/"+name]
			if pvc == nil {
				if !live {
					if ix.undecodable["PersistentVolumeClaim "+pod.Namespace+"/"+name] {
						pv.unknown = fmt.Sprintf("claim %s is not known before apply", name)
					} else {
						pv.unknown = fmt.Sprintf("claim %s is not in the inputs", name)
					}
					fmt.Fprintf(&key, "?%s\x00", name)
					continue
				}
				first(&preRestrict, fmt.Sprintf("persistentvolumeclaim %q not found", name))
				skip(fmt.Sprintf("failed to get persistent volume claim %q", name))
				fmt.Fprintf(&key, "M%s\x00", name)
				continue
			}
		case v.Ephemeral != nil:
			// A generic ephemeral volume's claim is <pod>-<volume>, made by
			// the ephemeral volume controller from the template.
			name = pod.Name + "-" + v.Name
			pvc = ix.claims[pod.Namespace+"/"+name]
			if pvc == nil {
				if v.Ephemeral.VolumeClaimTemplate == nil {
					continue
				}
				if live {
					first(&preBinding, fmt.Sprintf("waiting for ephemeral volume controller to create the persistentvolumeclaim %q", name))
					skip(fmt.Sprintf("failed to get persistent volume claim %q", name))
					fmt.Fprintf(&key, "E%s\x00", name)
					continue
				}
				pvc = &corev1.PersistentVolumeClaim{Spec: v.Ephemeral.VolumeClaimTemplate.Spec}
				pvc.Name, pvc.Namespace = name, pod.Namespace
			}
		default:
			continue
		}
		use(pvc, name)
	}
	if templates {
		tmpls, _ := w.ClaimTemplates().([]any)
		for i, t := range tmpls {
			m, _ := t.(map[string]any)
			pvc := &corev1.PersistentVolumeClaim{}
			if m == nil || runtime.DefaultUnstructuredConverter.FromUnstructured(m, pvc) != nil {
				pv.unknown = fmt.Sprintf("volumeClaimTemplates[%d] of %s is not known before apply", i, w.Object.Ref())
				fmt.Fprintf(&key, "?t%d\x00", i)
				continue
			}
			if live {
				// The claims of a running StatefulSet's first pod stand for
				// its pods'.
				name := pvc.Name + "-" + w.Object.Name + "-0"
				if c := ix.claims[w.Template.Namespace+"/"+name]; c != nil {
					use(c, name)
					continue
				}
			}
			unbound(pvc, pvc.Name+"-"+w.Object.Name+"-<ordinal>")
		}
	}
	if immediateUnbound {
		first(&preBinding, msgUnboundImmediate)
	}
	for _, p := range []string{preRestrict, preBinding, preZone} {
		first(&pv.preFilter, p)
	}
	if !(len(karpAlts) == 1 && karpAlts[0] == nil) {
		pv.karpenter = karpAlts
	}
	pv.key = key.String()
	if pv.key == "" {
		return nil
	}
	return pv
}

// volumeAlternatives are Karpenter's requirements for a bound volume: each
// node affinity term (ORed) one alternative; the hostname of a local or
// hostPath volume is not required (a new node cannot have it).
func volumeAlternatives(pv *corev1.PersistentVolume) []scheduling.Requirements {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return nil
	}
	var out []scheduling.Requirements
	for _, term := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		reqs := term.MatchExpressions
		if pv.Spec.Local != nil || pv.Spec.HostPath != nil {
			reqs = slices.DeleteFunc(slices.Clone(reqs), func(r corev1.NodeSelectorRequirement) bool { return r.Key == corev1.LabelHostname })
			if len(term.MatchExpressions) > 0 && len(reqs) == 0 {
				out = append(out, scheduling.NewRequirements())
				continue
			}
		}
		if len(reqs) > 0 {
			out = append(out, scheduling.NewNodeSelectorRequirements(normalizedVolumeKeys(reqs)...))
		}
	}
	return out
}

// classAlternatives are Karpenter's requirements for a claim a StorageClass
// provisions: each allowed topology term one alternative.
func classAlternatives(sc *storagev1.StorageClass) []scheduling.Requirements {
	var out []scheduling.Requirements
	for _, t := range sc.AllowedTopologies {
		var reqs []corev1.NodeSelectorRequirement
		for _, e := range t.MatchLabelExpressions {
			reqs = append(reqs, corev1.NodeSelectorRequirement{Key: e.Key, Operator: corev1.NodeSelectorOpIn, Values: e.Values})
		}
		if len(reqs) > 0 {
			out = append(out, scheduling.NewNodeSelectorRequirements(normalizedVolumeKeys(reqs)...))
		}
	}
	return out
}

// ebsZoneKey is the zone key the EBS CSI driver wrote in the node affinity of
// its volumes before it wrote topology.kubernetes.io/zone; Karpenter's AWS
// provider reads it as the zone (docs/facts.md).
const ebsZoneKey = "topology.ebs.csi.aws.com/zone"

func normalizedVolumeKeys(reqs []corev1.NodeSelectorRequirement) []corev1.NodeSelectorRequirement {
	if !slices.ContainsFunc(reqs, func(r corev1.NodeSelectorRequirement) bool { return r.Key == ebsZoneKey }) {
		return reqs
	}
	out := slices.Clone(reqs)
	for i := range out {
		if out[i].Key == ebsZoneKey {
			out[i].Key = corev1.LabelTopologyZone
		}
	}
	return out
}

// mergeAlternatives is Karpenter's cross product of the alternatives so far
// with a volume's, keeping the branches whose requirements intersect (all of
// them when none does).
func mergeAlternatives(have, add []scheduling.Requirements) []scheduling.Requirements {
	merge := func(a, b scheduling.Requirements) scheduling.Requirements {
		m := scheduling.NewRequirements()
		if a != nil {
			m.Add(a.Values()...)
		}
		m.Add(b.Values()...)
		return m
	}
	var out []scheduling.Requirements
	for _, a := range have {
		for _, b := range add {
			if a == nil || b == nil || a.Intersects(b) == nil {
				out = append(out, merge(a, b))
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, a := range have {
		for _, b := range add {
			out = append(out, merge(a, b))
		}
	}
	return out
}

// ---- kube-scheduler ----

// volumeReasons answers for a node with the given labels (and name) as
// kube-scheduler's VolumeBinding filter and, when it passes, its VolumeZone
// filter do: nil when the pod's volumes can be used there.
func (pv *podVolumes) volumeReasons(ix *volumeIndex, name string, labels map[string]string) []Reason {
	boundOK, unboundOK := true, true
	for _, v := range pv.bound {
		if volume.CheckNodeAffinity(v, labels) != nil {
			boundOK = false
			break
		}
	}
	if len(pv.delayed) > 0 {
		unboundOK = pv.delayedFit(ix, name, labels)
	}
	var rs []Reason
	if !boundOK {
		rs = append(rs, Reason{Code: CodeVolume, Message: msgNodeConflict})
	}
	if !unboundOK {
		rs = append(rs, Reason{Code: CodeVolume, Message: msgBindConflict})
	}
	if len(rs) > 0 {
		return rs
	}
	if !zoneFits(pv.bound, labels) {
		return []Reason{{Code: CodeVolume, Message: msgZoneConflict}}
	}
	return nil
}

// delayedFit reports whether the pod's WaitForFirstConsumer claims can be
// bound on the node: each to an available volume of its class the node can
// use (smallest claims first), or else provisioned there (its class has a
// provisioner whose allowed topologies the node is in).
func (pv *podVolumes) delayedFit(ix *volumeIndex, name string, labels map[string]string) bool {
	node := &corev1.Node{}
	node.Name = name
	node.Labels = labels
	var find []*corev1.PersistentVolumeClaim
	var provision []*corev1.PersistentVolumeClaim
	for _, c := range pv.delayed {
		if sel, ok := c.Annotations[volume.AnnSelectedNode]; ok {
			if sel != name {
				return false
			}
			provision = append(provision, c)
			continue
		}
		find = append(find, c)
	}
	sort.SliceStable(find, func(i, j int) bool {
		a, b := find[i].Spec.Resources.Requests[corev1.ResourceStorage], find[j].Spec.Resources.Requests[corev1.ResourceStorage]
		return a.Cmp(b) < 0
	})
	chosen := map[string]*corev1.PersistentVolume{}
	for _, c := range find {
		match, err := volume.FindMatchingVolume(c, ix.byClass[volume.GetPersistentVolumeClaimClass(c)], node, chosen, true, true)
		if err != nil || match == nil {
			provision = append(provision, c)
			continue
		}
		chosen[match.Name] = match
	}
	for _, c := range provision {
		sc := ix.classes[volume.GetPersistentVolumeClaimClass(c)]
		if sc == nil || sc.Provisioner == "" || sc.Provisioner == noProvisioner {
			return false
		}
		if !topologyMatches(sc.AllowedTopologies, labels) {
			return false
		}
	}
	return true
}

// topologyMatches reports whether labels meet one of the terms (none: all).
func topologyMatches(terms []corev1.TopologySelectorTerm, labels map[string]string) bool {
	if len(terms) == 0 {
		return true
	}
	for _, t := range terms {
		ok := true
		for _, e := range t.MatchLabelExpressions {
			if v, has := labels[e.Key]; !has || !slices.Contains(e.Values, v) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// zoneLabels are the labels VolumeZone compares, with the label each is
// also read as on a node.
var zoneLabels = map[string]string{
	corev1.LabelFailureDomainBetaZone:   corev1.LabelTopologyZone,
	corev1.LabelFailureDomainBetaRegion: corev1.LabelTopologyRegion,
	corev1.LabelTopologyZone:            corev1.LabelFailureDomainBetaZone,
	corev1.LabelTopologyRegion:          corev1.LabelFailureDomainBetaRegion,
}

// zoneFits is VolumeZone: a node without zone or region labels takes any
// volume; else each zone or region label of a bound volume (values joined by
// "__") must hold the node's value of that label (or of its other name: the
// beta label a node or volume may carry for the GA one).
func zoneFits(bound []*corev1.PersistentVolume, labels map[string]string) bool {
	has := false
	for k := range zoneLabels {
		if _, ok := labels[k]; ok {
			has = true
			break
		}
	}
	if !has {
		return true
	}
	for _, v := range bound {
		for _, k := range sortedKeys(v.Labels) {
			if _, ok := zoneLabels[k]; !ok {
				continue
			}
			nodeValue, ok := labels[k]
			if !ok && (k == corev1.LabelFailureDomainBetaZone || k == corev1.LabelFailureDomainBetaRegion) {
				nodeValue, ok = labels[zoneLabels[k]]
			}
			if !ok || !slices.Contains(strings.Split(v.Labels[k], "__"), nodeValue) {
				return false
			}
		}
	}
	return true
}

// ---- Karpenter ----

// volumeFit is fitTypes for a pod with volume requirements: each
// alternative in turn, the first whose requirements the NodePool meets and
// an instance type fits; else the last alternative's reason.
func (s *Simulator) volumeFit(np *cluster.NodePool, info *poolInfo, over poolOverheads, at attempt, req corev1.ResourceList, need vec, pv *podVolumes) ([]string, Reason) {
	if pv.none() || len(pv.karpenter) == 0 {
		return s.fitTypes(np, info, over, at, req, need)
	}
	var last Reason
	for _, alt := range pv.karpenter {
		base := scheduling.NewRequirements(info.reqs.Values()...)
		base.Add(at.reqs.Values()...)
		if alt != nil {
			if err := base.Compatible(alt, scheduling.AllowUndefinedWellKnownLabels); err != nil {
				last = Reason{Code: CodeRequirements, Message: "incompatible volume requirements, " + keyOrder(err.Error())}
				continue
			}
		}
		reqs := scheduling.NewRequirements(at.reqs.Values()...)
		if alt != nil {
			reqs.Add(alt.Values()...)
		}
		a := attempt{reqs: reqs}
		if !offeringExcluded(reqs) {
			if podInstance := instanceRequirements(info.view, reqs); podInstance == nil {
				a.allTypes = true
			} else {
				a.eligible = s.eligibleTypes(np, info, podInstance)
			}
		}
		fit, r := s.fitTypes(np, info, over, a, req, need)
		if len(fit) > 0 {
			return fit, Reason{}
		}
		last = r
	}
	return nil, last
}

// ---- words ----

func topologyText(terms []corev1.TopologySelectorTerm) string {
	var parts []string
	for _, t := range terms {
		var exprs []string
		for _, e := range t.MatchLabelExpressions {
			exprs = append(exprs, fmt.Sprintf("%s In [%s]", e.Key, strings.Join(e.Values, " ")))
		}
		parts = append(parts, strings.Join(exprs, ", "))
	}
	return strings.Join(parts, " or ")
}

func volumeTopologyText(pv *corev1.PersistentVolume) string {
	var parts []string
	if pv.Spec.NodeAffinity != nil && pv.Spec.NodeAffinity.Required != nil {
		for _, t := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
			var exprs []string
			for _, e := range t.MatchExpressions {
				exprs = append(exprs, scheduling.NewRequirement(e.Key, e.Operator, e.Values...).String())
			}
			parts = append(parts, strings.Join(exprs, ", "))
		}
	}
	for _, k := range sortedKeys(pv.Labels) {
		if _, ok := zoneLabels[k]; ok {
			parts = append(parts, fmt.Sprintf("%s=%s", k, pv.Labels[k]))
		}
	}
	return strings.Join(parts, " or ")
}

// volumeState guards the index.
type volumeState struct {
	volOnce sync.Once
	vols    *volumeIndex
}

// PlaceWithoutVolumes is Place as if the workload's pods mounted no
// persistent volume: where they would run but for their volumes.
func (s *Simulator) PlaceWithoutVolumes(w *cluster.Workload, phase cluster.Phase) *Placement {
	return s.place(w, podOf(w), phase, nil, nil, false)
}

// PlacePodWithoutVolumes is PlacePod as if the pod mounted no persistent
// volume.
func (s *Simulator) PlacePodWithoutVolumes(p *cluster.Pod) *Placement {
	w, pod := livePod(p)
	return s.place(w, pod, cluster.Steady, nil, nil, false)
}

// VolumeRefusal reports whether a verdict refuses for the pod's volumes
// (kube-scheduler's volume plugins, Karpenter's volume requirements).
func VolumeRefusal(v Verdict) bool {
	for _, r := range v.Reasons {
		if r.Code == CodeVolume || strings.HasPrefix(r.Message, "incompatible volume requirements") {
			return true
		}
	}
	return false
}

// groupVolumeReason answers for a node group whose zones are known: nil when
// the pod's volumes can be used in one of them, else the reason a node of
// the group would give (the first zone's).
func (s *Simulator) groupVolumeReason(ng *cluster.NodeGroup, labels map[string]string, pv *podVolumes) *Reason {
	if pv.preFilter != "" {
		return &Reason{Code: CodeVolume, Message: pv.preFilter}
	}
	var first *Reason
	for _, z := range ng.Zones {
		l := make(map[string]string, len(labels)+1)
		for k, v := range labels {
			l[k] = v
		}
		l[corev1.LabelTopologyZone] = z
		rs := pv.volumeReasons(s.volumeIndex(), "", l)
		if len(rs) == 0 {
			return nil
		}
		if first == nil {
			r := rs[0]
			r.Note = "the node group runs in " + strings.Join(ng.Zones, ", ")
			first = &r
		}
	}
	return first
}

// zonesOffered reports whether a NodePool's node class has a subnet in a
// zone the requirements allow: Karpenter's AWS provider offers instance
// types only in the zones of the subnets the class resolved (its
// status.subnets, known in a running cluster). True when those are not known.
func (s *Simulator) zonesOffered(np *cluster.NodePool, reqs scheduling.Requirements) bool {
	if !reqs.Has(corev1.LabelTopologyZone) {
		return true
	}
	nc := s.nodeClass(np)
	if nc == nil || nc.Object == nil {
		return true
	}
	subnets, _ := nc.Object.Get("status.subnets").([]any)
	if len(subnets) == 0 {
		return true
	}
	zone := reqs.Get(corev1.LabelTopologyZone)
	for _, sn := range subnets {
		if z, _ := cluster.Lookup(sn, "zone").(string); z != "" && zone.Has(z) {
			return true
		}
	}
	return false
}

// keyOrder puts the keys of a requirements error in key order: Karpenter
// lists them in Go's map order, which changes from run to run.
func keyOrder(msg string) string {
	parts := strings.Split(msg, "; ")
	if len(parts) < 2 || !slices.ContainsFunc(parts, func(p string) bool { return strings.HasPrefix(p, "key ") }) {
		return msg
	}
	var keys, other []string
	for _, p := range parts {
		if strings.HasPrefix(p, "key ") {
			keys = append(keys, p)
		} else {
			other = append(other, p)
		}
	}
	slices.Sort(keys)
	return strings.Join(append(keys, other...), "; ")
}
