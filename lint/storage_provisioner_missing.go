package lint

import (
	"fmt"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/write"
)

// storage-provisioner-missing: a StorageClass names a provisioner that serves no node the cluster has: the self-managed EBS CSI driver on a cluster whose only compute is EKS Auto Mode, or Auto Mode's block storage on a cluster without it.

var storageProvisionerMissing = &Check{
	ID:       "storage-provisioner-missing",
	Title:    "StorageClass names a provisioner no node of the cluster is served by",
	Family:   "F1",
	Severity: Error,
	Doc: Doc{
		What: "A StorageClass whose provisioner cannot give the cluster's nodes a volume. On a cluster whose only compute is EKS Auto Mode (no node group, no NodePool of Karpenter's AWS provider): `ebs.csi.aws.com` or the in-tree `kubernetes.io/aws-ebs` (what the `gp2` class EKS may create names), whether or not the self-managed EBS CSI driver is installed — its node plugin keeps off Auto Mode nodes (`eks.amazonaws.com/compute-type NotIn [fargate, auto, hybrid]` since v1.37, the version AWS requires with Auto Mode); a warning when the configuration installs an older driver whose node plugin would run beside Auto Mode's, a combination AWS does not describe. On a cluster the configuration creates without Auto Mode's block storage (`storage_config.block_storage`, all of `compute_config`, `cluster_compute_config` or eksctl `autoModeConfig`): `ebs.csi.eks.amazonaws.com`. A warning when pods of an Auto Mode-only cluster mount claims without a StorageClass and the inputs declare no default one: Auto Mode creates none.",
		Why:  "A claim of a provisioner nobody runs stays Pending with `waiting for a volume to be created, either by external provisioner \"ebs.csi.aws.com\" or manually created by system administrator`, and so do the pods that mount it (WaitForFirstConsumer) — or, when the self-managed controller is installed but its node plugin cannot run on the nodes, the volume is created and attached and the pod stays ContainerCreating: `driver name ebs.csi.aws.com not found in the list of registered CSI drivers`.",
		Fix:  "Name the provisioner the nodes are served by: `ebs.csi.eks.amazonaws.com` on Auto Mode (the parameters `type`, `encrypted`, `iops`, `throughput` and `kmsKeyId` are the same), `ebs.csi.aws.com` with the self-managed driver. A StorageClass's provisioner cannot be changed in place: `kubectl apply` refuses the change, Terraform replaces the class; volumes already provisioned keep their driver. Declare a default StorageClass on Auto Mode (`storageclass.kubernetes.io/is-default-class: \"true\"`).",
	},
	Run: runStorageProvisionerMissing,
}

const selfManagedEBS = "ebs.csi.aws.com"

func runStorageProvisionerMissing(p *Pass) {
	m := p.Model
	a := m.Cluster.AutoMode
	autoOnly := autoModeOnly(m)
	autoBlock := autoModeBlockStorage(m)
	blockDriver := catalog.AutoMode().BlockStorageProvisioner
	users := classUsers(p)
	hasDefault := false
	for _, o := range storageClasses(m) {
		if o.Annotations["storageclass.kubernetes.io/is-default-class"] == "true" {
			hasDefault = true
		}
		prov, _ := o.Get("provisioner").(string)
		if cluster.IsUnknown(prov) {
			continue
		}
		ref := o.Ref()
		origin := o.At("provisioner")
		switch {
		case sim.NormalizeDriver(prov) == selfManagedEBS && autoOnly:
			plugin, runs := ebsNodePlugin(p)
			what := fmt.Sprintf("%s: provisioner %s serves no node of this cluster: its only compute is EKS Auto Mode (%s), whose block storage answers to %s", ref, prov, a.From, blockDriver)
			var detail strings.Builder
			switch {
			case plugin != nil && runs:
				p.Report(Finding{
					Severity: Warning,
					Object:   ref,
					Origin:   origin,
					Summary:  fmt.Sprintf("%s: provisioner %s is the self-managed EBS CSI driver, whose node plugin %s runs on EKS Auto Mode nodes beside Auto Mode's own driver (%s)", ref, prov, plugin.Ref(), blockDriver),
					Detail:   "The driver's node plugin does not keep off Auto Mode nodes: it is older than v1.37, the version AWS requires when Auto Mode is switched on (from v1.37 its node affinity is eks.amazonaws.com/compute-type NotIn [fargate, auto, hybrid]). AWS does not say how two EBS drivers on one node behave; StorageClasses of Auto Mode name " + blockDriver + "." + usersLine(users[o.Name]),
					Fix:      provisionerFix(m, o, blockDriver),
				})
				continue
			case plugin != nil:
				fmt.Fprintf(&detail, "The self-managed driver's node plugin %s keeps off Auto Mode nodes (eks.amazonaws.com/compute-type NotIn [fargate, auto, hybrid]), so its volumes are created and attached but never mounted: pods stay ContainerCreating with `driver name %s not found in the list of registered CSI drivers`.", plugin.Ref(), selfManagedEBS)
			default:
				fmt.Fprintf(&detail, "No self-managed EBS CSI driver is installed by these inputs, so claims of the class stay Pending: `waiting for a volume to be created, either by external provisioner %q or manually created by system administrator`. One installed elsewhere would not help: from v1.37, the version AWS requires with Auto Mode, its node plugin keeps off Auto Mode nodes.", selfManagedEBS)
			}
			detail.WriteString(usersLine(users[o.Name]))
			p.Report(Finding{
				Object:  ref,
				Origin:  origin,
				Summary: what,
				Detail:  detail.String(),
				Fix:     provisionerFix(m, o, blockDriver),
			})
		case prov == blockDriver && !autoBlock && m.Live == nil && m.Cluster.Defined:
			why := "the cluster these inputs create does not switch EKS Auto Mode on"
			if a != nil {
				why = fmt.Sprintf("%s leaves EKS Auto Mode's block storage off (%s)", a.From, a.BlockStorage)
			}
			f := Finding{
				Object:  ref,
				Origin:  origin,
				Summary: fmt.Sprintf("%s: provisioner %s is EKS Auto Mode's block storage, and %s: no driver answers to it", ref, prov, why),
				Detail:  fmt.Sprintf("Claims of the class stay Pending: `waiting for a volume to be created, either by external provisioner %q or manually created by system administrator`.%s", prov, usersLine(users[o.Name])),
			}
			if plugin, _ := ebsNodePlugin(p); plugin != nil {
				f.Fix = provisionerFix(m, o, selfManagedEBS)
			}
			p.Report(f)
		}
	}
	if autoOnly && !hasDefault && m.Live == nil {
		if ws := users[""]; len(ws) > 0 {
			p.Report(Finding{
				Severity: Warning,
				Object:   ws[0].Ref(),
				Origin:   ws[0].Object.Origin,
				Summary:  fmt.Sprintf("%s mounts a claim without a StorageClass, and no default StorageClass is declared: EKS Auto Mode creates none", ws[0].Ref()),
				Detail:   fmt.Sprintf("A claim without storageClassName takes the default StorageClass. EKS Auto Mode creates no StorageClass, and the gp2 class EKS may create names kubernetes.io/aws-ebs, which Auto Mode does not serve: declare a StorageClass with provisioner %s and the annotation storageclass.kubernetes.io/is-default-class: \"true\".%s", blockDriver, usersLine(ws)),
			})
		}
	}
}

// storageClasses lists the StorageClass objects, sorted.
func storageClasses(m *cluster.Model) []*cluster.Object {
	var out []*cluster.Object
	for _, o := range m.Objects {
		if o.Kind == "StorageClass" && strings.HasPrefix(o.APIVersion, "storage.k8s.io/") {
			out = append(out, o)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Ref().Compare(out[j].Ref()) < 0 })
	return out
}

// classUsers maps each StorageClass name to the workloads whose claims it
// provisions ("" for claims that name no class and find no default).
func classUsers(p *Pass) map[string][]*cluster.Workload {
	out := map[string][]*cluster.Workload{}
	for _, w := range p.Model.Workloads {
		if w.Replicas == 0 {
			continue
		}
		for _, c := range p.Sim.Claims(w) {
			from := c.From
			from = strings.TrimPrefix(from, "default ")
			name, ok := strings.CutPrefix(from, "StorageClass ")
			if !ok {
				if from == "" && c.Driver == "" {
					name = ""
				} else {
					continue
				}
			}
			if l := out[name]; len(l) == 0 || l[len(l)-1] != w {
				out[name] = append(l, w)
			}
		}
	}
	return out
}

func usersLine(ws []*cluster.Workload) string {
	if len(ws) == 0 {
		return ""
	}
	var refs []string
	for i, w := range ws {
		if i == 5 {
			refs = append(refs, fmt.Sprintf("and %d more", len(ws)-5))
			break
		}
		refs = append(refs, w.Ref().String())
	}
	return "\nIts claims are mounted by " + strings.Join(refs, ", ") + "."
}

// ebsNodePlugin finds the self-managed EBS CSI driver's node plugin among the
// workloads, and whether its pods run on Auto Mode's NodePools.
func ebsNodePlugin(p *Pass) (*cluster.Workload, bool) {
	for _, w := range p.Model.Workloads {
		if !w.IsDaemonSet() || p.Sim.PluginDriver(w) != selfManagedEBS {
			continue
		}
		pl := p.Sim.Place(w, cluster.Steady)
		for _, v := range pl.Verdicts {
			if v.Source.NodePool != nil && sim.IsAutoMode(v.Source.NodePool) && v.Result != sim.Refuses {
				return w, true
			}
		}
		return w, false
	}
	return nil, false
}

// autoModeOnly reports whether EKS Auto Mode is all the compute the cluster
// has: its compute switched on (or seen running), and no node group, no
// NodePool of another node class, and in a running cluster no node that is not
// Auto Mode's.
func autoModeOnly(m *cluster.Model) bool {
	a := m.Cluster.AutoMode
	if !a.On() || a.Compute == cluster.SwitchUnknown || len(m.NodeGroups) > 0 {
		return false
	}
	if m.Live == nil && !m.Cluster.Defined {
		return false
	}
	for _, np := range m.NodePools {
		if !sim.IsAutoMode(np) {
			return false
		}
	}
	ct := catalog.AutoMode().ComputeTypeLabel
	for _, n := range m.Nodes {
		if n.Labels[ct.Key] != ct.Value {
			return false
		}
	}
	return true
}

// autoModeBlockStorage reports whether Auto Mode's block storage is on, or may
// be (not known before apply, or a running cluster that shows Auto Mode).
func autoModeBlockStorage(m *cluster.Model) bool {
	a := m.Cluster.AutoMode
	if a == nil {
		return false
	}
	return a.Live || a.BlockStorage == cluster.SwitchOn || a.BlockStorage == cluster.SwitchUnknown
}

// provisionerFix names another provisioner in the StorageClass.
func provisionerFix(m *cluster.Model, o *cluster.Object, provisioner string) *Fix {
	e, ok := write.StorageClassProvisioner(m, o, provisioner)
	if !ok {
		return nil
	}
	return &Fix{
		Summary: fmt.Sprintf("name the provisioner %s (a StorageClass's provisioner cannot change in place: kubectl apply refuses it and Terraform replaces the class; volumes already provisioned keep their driver)", provisioner),
		Edits:   []Edit{e},
	}
}
