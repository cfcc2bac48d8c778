package lint

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/write"
)

// volume-zone-conflict: a workload's persistent volumes keep its pods off the capacity that would otherwise take them — the volume is in a zone (or on nodes) no capacity that takes the pods offers, a StorageClass's allowedTopologies name nothing it offers, a claim of an Immediate class is created, and its volume placed, before the pod is scheduled.

var volumeZoneConflict = &Check{
	ID:       "volume-zone-conflict",
	Title:    "Persistent volumes keep the pods off every capacity that would take them",
	Family:   "F6",
	Severity: Error,
	Doc: Doc{
		What: "A workload whose pods fit some capacity but for their persistent volumes: a claim bound to a PersistentVolume whose node affinity (an EBS volume's zone, `topology.kubernetes.io/zone` or the EBS CSI driver's older `topology.ebs.csi.aws.com/zone`) or zone labels no node or NodePool that takes the pods meets; a claim of a WaitForFirstConsumer StorageClass whose `allowedTopologies` exclude them; a claim of a class for volumes made by hand (`kubernetes.io/no-provisioner`) with no volume left that fits; and, in a running cluster, a claim that does not exist, is being deleted, or is unbound in an Immediate class. Pods a Fargate profile selects that mount an EBS claim (Fargate mounts EFS volumes only). A warning when a claim of an Immediate StorageClass (`volumeBindingMode` unset is Immediate) is mounted by pods whose capacity is restricted to some zones: its volume is created as soon as the claim exists, in a zone the provisioner picks without the pod's constraints. Decided by the same placement as `pod-unschedulable`, with the volumes judged as kube-scheduler v1.37's VolumeRestrictions, VolumeBinding and VolumeZone plugins judge them and as Karpenter v1.14's volume topology does (each node affinity term or allowed topology an alternative; a local or hostPath volume's hostname not required); both are checked against the real schedulers by differential tests. A node group is judged by zone where the inputs name its zones (eksctl `availabilityZones`), a NodePool by its requirements and, in a running cluster, by the zones of its EC2NodeClass's subnets (`status.subnets`: Karpenter offers instance types only there); otherwise it is taken to reach the volume's zone (Terraform node groups' `subnet_ids` are not followed to their zones). A claim the inputs do not hold (made by another tool) is not judged and the finding says so.",
		Why:  "The pods stay Pending: kube-scheduler reports `0/3 nodes are available: 3 node(s) had volume node affinity conflict` (or `node(s) had no available volume zone`, `node(s) didn't find available persistent volumes to bind`, `pod has unbound immediate PersistentVolumeClaims`), and Karpenter, which adds the volume's zone to the node it would launch, reports `incompatible volume requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [us-east-1a] not in topology.kubernetes.io/zone In [us-east-1b us-east-1c]` and launches nothing. An EBS volume never moves zones, so the pods wait until capacity in its zone exists.",
		Fix:  "Let the capacity reach the volume's zone: add the zone to the NodePool's `topology.kubernetes.io/zone` requirement (and a subnet there to its EC2NodeClass), or run a node group in it; or recreate the volume from a snapshot in a zone the capacity offers. Create volumes where their pods run: `volumeBindingMode: WaitForFirstConsumer` (a StorageClass's binding mode cannot be changed in place: the class is recreated; volumes already provisioned keep their zone), and `allowedTopologies` the capacity offers.",
	},
	Run:        runVolumeZoneConflict,
	Requires:   []*Fact{podsFact},
	Supersedes: []*Check{podUnschedulable},
}

func runVolumeZoneConflict(p *Pass) {
	decided := resultOf[map[*cluster.Workload]*podsDecision](p, podsFact)
	for _, w := range p.Model.Workloads {
		if d := decided[w]; d == nil || w.IsDaemonSet() || w.Replicas == 0 || !mountsClaims(w) {
			continue
		}
		pl := p.Sim.Place(w, cluster.Steady)
		if pl.Fargate != nil {
			reportFargateEBS(p, w, pl)
			continue
		}
		if len(pl.Volumes) == 0 && len(pl.ImmediateClaims) == 0 {
			continue
		}
		reportVolumeConflict(p, pl, func() *sim.Placement { return p.Sim.PlaceWithoutVolumes(w, cluster.Steady) }, w.Ref(), w.Object.Origin, "")
	}
	if p.Model.Live == nil {
		return
	}
	for _, g := range pendingGroups(p.Model) {
		// A pod that claims no volume has no volume to conflict (and is
		// not placed again for nothing).
		if g.owner.Kind == "DaemonSet" || !sim.ClaimsVolumes(&g.pods[0].Spec) {
			continue
		}
		pl := p.Sim.PlacePod(g.pods[0])
		if len(pl.Volumes) == 0 && !slices.ContainsFunc(pl.Verdicts, sim.VolumeRefusal) {
			continue
		}
		ref, origin := g.owner, g.pods[0].Object.Origin
		if g.workload != nil {
			origin = g.workload.Object.Origin
		}
		pods := g
		reportVolumeConflict(p, pl, func() *sim.Placement { return p.Sim.PlacePodWithoutVolumes(pods.pods[0]) }, ref, origin, pendingDetail(g, pl), podCauses(g.pods)...)
	}
}

// reportVolumeConflict decides for files and running clusters alike: the
// pods fit nothing, every refusal of a source that would take them but for
// their volumes is for the volumes.
func reportVolumeConflict(p *Pass, pl *sim.Placement, without func() *sim.Placement, ref cluster.ObjectRef, origin cluster.Origin, liveDetail string, podCauses ...string) {
	causes := podCauses
	if len(causes) == 0 {
		causes = []string{podsCause(ref)}
	}
	if pl.Result() != sim.Fits && slices.ContainsFunc(pl.Verdicts, sim.VolumeRefusal) {
		free := without()
		if free.Result() != sim.Fits {
			return
		}
		var blocked []sim.Verdict
		for i, v := range free.Verdicts {
			if v.Result == sim.Fits && i < len(pl.Verdicts) && sim.VolumeRefusal(pl.Verdicts[i]) {
				blocked = append(blocked, pl.Verdicts[i])
			}
		}
		if len(blocked) == 0 {
			return
		}
		var b strings.Builder
		b.WriteString(claimsText(pl))
		b.WriteString("\nBut for their volumes, the pods would run on " + sourceNames(blocked) + ".")
		if liveDetail != "" {
			b.WriteString("\n" + liveDetail)
		} else {
			b.WriteString("\n" + placementDetail(pl))
		}
		sev, what := Error, "every capacity that would take them"
		if pl.Result() == sim.Unknown {
			// Capacity the inputs do not show (node groups made elsewhere)
			// may run in the volume's zone.
			sev, what = Warning, "every NodePool that would take them, so Karpenter will not launch a node for them"
		}
		p.Report(Finding{
			Severity: sev,
			Object:   ref,
			Origin:   origin,
			Summary:  fmt.Sprintf("%s: its persistent volumes keep its pods off %s: %s", ref, what, firstVolumeReason(blocked)),
			Detail:   b.String(),
			Fix:      volumeZoneFix(p, pl, blocked),
			causes:   causes,
		})
		return
	}
	if len(pl.ImmediateClaims) == 0 || p.Model.Live != nil || pl.Result() == sim.Refuses {
		return
	}
	ic := pl.ImmediateClaims[0]
	var summary string
	if zones := fittingZones(pl); zones != "" {
		summary = fmt.Sprintf("%s: claim %s of StorageClass %s is provisioned as soon as it exists (volumeBindingMode Immediate), in a zone chosen without its pods, which run only in %s", ref, ic.Claim, ic.Class, zones)
	} else if len(pl.ImmediateClaims) > 1 && !sameZonalClass(p.Model, pl.ImmediateClaims) {
		// Each claim is provisioned on its own: two volumes of one pod may
		// land in two zones, and no node mounts both.
		summary = fmt.Sprintf("%s: claims %s and %s are provisioned as soon as they exist (volumeBindingMode Immediate), each in a zone chosen on its own: the pod mounts both, and no node can when they land in two zones", ref, ic.Claim, pl.ImmediateClaims[1].Claim)
	} else {
		return
	}
	f := Finding{
		Severity: Warning,
		Object:   ref,
		Origin:   origin,
		Summary:  summary,
		Detail:   claimsText(pl) + "\nAn Immediate class creates the volume before any pod is scheduled; the provisioner picks its zone without the pod's node selection, the zones of the capacity that takes it, or the pod's other volumes. When it picks another zone the pods stay Pending with `node(s) didn't match PersistentVolume's node affinity` (`node(s) had volume node affinity conflict` before Kubernetes v1.37).",
		causes:   causes,
	}
	if sc := storageClassNamed(p.Model, ic.Class); sc != nil {
		if e, ok := write.ObjectPatch(p.Model, sc, map[string]any{"volumeBindingMode": "WaitForFirstConsumer"}); ok {
			f.Fix = &Fix{Summary: fmt.Sprintf("create the volumes of StorageClass %s where their pods are scheduled (volumeBindingMode: WaitForFirstConsumer; the class is recreated: its binding mode cannot change in place)", ic.Class), Edits: []Edit{e}}
		}
	}
	p.Report(f)
}

// claimsText lists the pod's claims and where each lets it run.
func claimsText(pl *sim.Placement) string {
	var parts []string
	for _, c := range pl.Volumes {
		s := "claim " + c.Name
		if c.Volume != "" {
			s += " (PersistentVolume " + c.Volume + ")"
		} else if c.Class != "" {
			s += " (StorageClass " + c.Class + ", unbound)"
		}
		if c.Topology != "" {
			s += ": " + c.Topology
		} else {
			s += ": any zone"
		}
		parts = append(parts, s)
	}
	out := "The pods mount " + strings.Join(parts, "; ") + "."
	if pl.VolumesUnknown != "" {
		out += " Not judged: " + pl.VolumesUnknown + "."
	}
	return out
}

func firstVolumeReason(vs []sim.Verdict) string {
	for _, v := range vs {
		for _, r := range v.Reasons {
			if r.Code == sim.CodeVolume || strings.HasPrefix(r.Message, "incompatible volume requirements") {
				return describeSource(v.Source) + ": " + r.Text()
			}
		}
	}
	return ""
}

// fittingZones words the zones the capacity that takes the pods is
// restricted to: "" when some of it may run in any zone.
func fittingZones(pl *sim.Placement) string {
	var zones []string
	for _, v := range pl.Verdicts {
		if v.Result != sim.Fits {
			continue
		}
		np := v.Source.NodePool
		if np == nil {
			return ""
		}
		z, ok := poolZones(np)
		if !ok {
			return ""
		}
		for _, x := range z {
			if !slices.Contains(zones, x) {
				zones = append(zones, x)
			}
		}
	}
	if len(zones) == 0 {
		return ""
	}
	slices.Sort(zones)
	return "topology.kubernetes.io/zone In [" + strings.Join(zones, " ") + "]"
}

// poolZones are the zones a NodePool's requirements allow (In), false when
// they allow any.
func poolZones(np *cluster.NodePool) ([]string, bool) {
	for _, r := range np.Requirements {
		if r.Key == corev1.LabelTopologyZone && r.Operator == corev1.NodeSelectorOpIn {
			return r.Values, true
		}
	}
	return nil, false
}

// volumeZoneFix adds the zone of a volume bound to one zone to the zone
// requirement of a NodePool that would take the pods but for it.
func volumeZoneFix(p *Pass, pl *sim.Placement, blocked []sim.Verdict) *Fix {
	zone := ""
	for _, c := range pl.Volumes {
		if z, ok := singleZone(c.Topology); ok {
			if zone != "" && zone != z {
				return nil
			}
			zone = z
		}
	}
	if zone == "" {
		return nil
	}
	for _, v := range blocked {
		np := v.Source.NodePool
		if np == nil || np.Object == nil || len(np.Unknown) > 0 {
			continue
		}
		path := poolRequirementsPath(np)
		reqs, ok := np.Object.Get(path).([]any)
		if !ok {
			continue
		}
		out := make([]any, len(reqs))
		changed := false
		for i, r := range reqs {
			m, _ := r.(map[string]any)
			if m != nil && m["key"] == corev1.LabelTopologyZone && m["operator"] == "In" {
				vals, _ := m["values"].([]any)
				c := map[string]any{}
				for k, x := range m {
					c[k] = x
				}
				c["values"] = append(slices.Clone(vals), zone)
				out[i] = c
				changed = true
				continue
			}
			out[i] = r
		}
		if !changed {
			continue
		}
		e, ok := write.ObjectPatch(p.Model, np.Object, nest(path, out))
		if !ok {
			continue
		}
		return &Fix{
			Summary: fmt.Sprintf("let %s launch nodes in %s, the zone of the pods' volume (its EC2NodeClass needs a subnet there)", poolWord(np), zone),
			Edits:   []Edit{e},
		}
	}
	return nil
}

// singleZone reads the one zone of a volume's worded topology
// ("topology.kubernetes.io/zone In [us-east-1a]").
func singleZone(topology string) (string, bool) {
	const head = corev1.LabelTopologyZone + " In ["
	if !strings.HasPrefix(topology, head) || strings.Contains(topology, " or ") || strings.Contains(topology, ",") {
		return "", false
	}
	rest := strings.TrimSuffix(strings.TrimPrefix(topology, head), "]")
	if rest == "" || strings.Contains(rest, " ") {
		return "", false
	}
	return rest, true
}

func storageClassNamed(m *cluster.Model, name string) *cluster.Object {
	for _, o := range storageClasses(m) {
		if o.Name == name {
			return o
		}
	}
	return nil
}

// poolRequirementsPath is where a NodePool keeps its requirements
// (spec.template.spec), or a v1alpha5 Provisioner (spec).
func poolRequirementsPath(np *cluster.NodePool) string {
	if np.Object.Kind == "Provisioner" {
		return "spec.requirements"
	}
	return "spec.template.spec.requirements"
}

// mountsClaims reports whether a workload's pods mount persistent volume
// claims (a StatefulSet's templates included).
func mountsClaims(w *cluster.Workload) bool {
	if w.Object.Kind == "StatefulSet" && w.ClaimTemplates() != nil {
		return true
	}
	return slices.ContainsFunc(w.Template.Spec.Volumes, func(v corev1.Volume) bool {
		return v.PersistentVolumeClaim != nil || v.Ephemeral != nil
	})
}

// reportFargateEBS: a Fargate profile selects pods that mount EBS volumes,
// which Fargate cannot attach (it mounts EFS volumes only): the pods never
// run.
func reportFargateEBS(p *Pass, w *cluster.Workload, pl *sim.Placement) {
	for _, c := range p.Sim.Claims(w) {
		if c.Driver != selfManagedEBS && c.Driver != catalog.AutoMode().BlockStorageProvisioner {
			continue
		}
		p.Report(Finding{
			Object:  w.Ref(),
			Origin:  w.Object.Origin,
			Summary: fmt.Sprintf("%s: Fargate profile %s selects its pods, which mount claim %s, an EBS volume (%s, %s): Fargate runs no EBS volumes", w.Ref(), pl.Fargate.Name, c.Name, c.Driver, c.From),
			Detail:  "Fargate mounts EFS volumes only (statically provisioned); a pod with an EBS claim is not supported on Fargate and never runs there, and fargate-scheduler places the pods of a profile on Fargate alone. Run the workload on EC2 capacity (keep the profile from selecting it), or use EFS.",
			causes:  []string{podsCause(w.Ref())},
		})
		return
	}
}

// sameZonalClass reports whether every claim takes one StorageClass whose
// allowedTopologies name a single zone: its volumes cannot land apart.
func sameZonalClass(m *cluster.Model, claims []sim.ImmediateClaim) bool {
	for _, c := range claims[1:] {
		if c.Class != claims[0].Class {
			return false
		}
	}
	sc := storageClassNamed(m, claims[0].Class)
	if sc == nil {
		return false
	}
	terms, _ := sc.Get("allowedTopologies").([]any)
	if len(terms) != 1 {
		return false
	}
	exprs, _ := cluster.Lookup(terms[0], "matchLabelExpressions").([]any)
	for _, e := range exprs {
		if k, _ := cluster.Lookup(e, "key").(string); k == corev1.LabelTopologyZone {
			vals, _ := cluster.Lookup(e, "values").([]any)
			return len(vals) == 1
		}
	}
	return false
}
