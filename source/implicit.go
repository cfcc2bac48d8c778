package source

import (
	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/manifest"
	"sort"
)

// defaultAddons are the add-ons EKS installs with a cluster unless told not to
// (bootstrap_self_managed_addons = false; eksctl's addonsConfig.
// disableDefaultAddons; terraform-aws-modules/eks v21, which always says false):
// the VPC CNI, kube-proxy and CoreDNS. eksctl installs the same three.
var defaultAddons = []string{"vpc-cni", "kube-proxy", "coredns"}

// implicitAddons adds to a configuration that defines an EKS cluster the default
// add-ons it does not declare: they run whether or not the user wrote them, with
// the scheduling attributes of their own (CoreDNS tolerates CriticalAddonsOnly
// and needs a Linux node; it does not tolerate Fargate's taint), so a cluster
// without capacity for them leaves them Pending, and everything that needs DNS
// after them. A running cluster shows them as they are.
func implicitAddons(m *cluster.Model) {
	if m.Live != nil || !m.Cluster.Defined || m.Cluster.NoDefaultAddons != "" {
		return
	}
	declared := map[string]bool{}
	for _, a := range m.Addons {
		declared[a.Name] = true
	}
	// Workloads the inputs install by other means (a manifest of CoreDNS, a
	// chart) stand for the add-on.
	names := map[string]string{"vpc-cni": "aws-node", "kube-proxy": "kube-proxy", "coredns": "coredns"}
	present := map[string]bool{}
	for _, o := range m.Objects {
		if o.Namespace == "kube-system" && (o.Kind == "Deployment" || o.Kind == "DaemonSet") {
			present[o.Name] = true
		}
	}
	decl := newAddonDecl(m)
	for _, name := range defaultAddons {
		if declared[name] || present[names[name]] {
			continue
		}
		m.Addons = append(m.Addons, &cluster.Addon{
			Name:     name,
			Origin:   m.Cluster.Origin,
			Decl:     decl,
			Implicit: "EKS installs it with cluster " + clusterLabel(m.Cluster),
		})
	}
	eksctlCoreDNSOnFargate(m, decl)
}

// eksctlCoreDNSOnFargate: once the cluster exists, eksctl moves CoreDNS to
// Fargate when one of the ClusterConfig's Fargate profiles selects it
// (namespace kube-system with no labels, or the label
// eks.amazonaws.com/component: coredns): it sets the pods' annotation
// eks.amazonaws.com/compute-type to fargate (pkg/fargate/coredns,
// IsSchedulableOnFargate and ScheduleOnFargate, since eksctl 0.11).
func eksctlCoreDNSOnFargate(m *cluster.Model, decl cluster.Decl) {
	if decl.Kind != cluster.DeclNew || decl.Object == nil {
		return
	}
	selects := false
	for _, fp := range m.FargateProfiles {
		if fp.Origin.File != decl.Object.Origin.File {
			continue
		}
		for _, sel := range fp.Selectors {
			if sel.Namespace == "kube-system" && (len(sel.Labels) == 0 || sel.Labels["eks.amazonaws.com/component"] == "coredns") {
				selects = true
			}
		}
	}
	if !selects {
		return
	}
	for _, a := range m.Addons {
		if a.Name == "coredns" {
			a.PodAnnotations = map[string]string{"eks.amazonaws.com/compute-type": "fargate"}
			a.PatchedBy = "eksctl"
		}
	}
}

// newAddonDecl is where a configuration declares an add-on it does not
// declare yet: the addons list of its eksctl ClusterConfig, the add-ons input
// of its terraform-aws-eks module call, or an aws_eks_addon beside its
// aws_eks_cluster.
func newAddonDecl(m *cluster.Model) cluster.Decl {
	addr := m.Cluster.Address
	switch {
	case m.Terraform.InModule(addr):
		return cluster.Decl{Kind: cluster.DeclNew, Block: addr, List: moduleAddonsInput(m, addr)}
	case m.Terraform.ResourceOf(addr) != "":
		return cluster.Decl{Kind: cluster.DeclNew, Block: addr}
	}
	for _, o := range m.Objects {
		if manifest.IsClusterConfig(o) && o.Origin.File == m.Cluster.Origin.File {
			return cluster.Decl{Kind: cluster.DeclNew, Object: o, List: "addons"}
		}
	}
	return cluster.Decl{}
}

// moduleAddonsInput is the input of the terraform-aws-eks call at addr that
// declares add-ons in every release its constraint allows (cluster_addons; addons
// from v21), "" when none does (v17 and older: an aws_eks_addon beside the
// module then declares it).
func moduleAddonsInput(m *cluster.Model, addr string) string {
	if m.Terraform == nil {
		return "cluster_addons"
	}
	for _, c := range m.Terraform.Modules {
		if c.Address != addr {
			continue
		}
		reads, ok := catalog.ModuleReadsFor(c.Module, c.Constraint)
		if ok && reads.Every() {
			// Unpinned: terraform init takes the newest release.
			if rs := reads.Releases(); len(rs) > 0 {
				reads, ok = catalog.ModuleReadsFor(c.Module, "= "+rs[len(rs)-1])
			}
		}
		if !ok {
			break
		}
		for _, in := range []string{"cluster_addons", "addons"} {
			if reads.Input(in).All {
				return in
			}
		}
		return ""
	}
	return "cluster_addons"
}

func clusterLabel(c cluster.EKSCluster) string {
	if c.Name != "" && !cluster.IsUnknown(c.Name) {
		return c.Name + " (" + c.Address + ")"
	}
	return c.Address
}

// autoModeCapacity adds what EKS Auto Mode runs when the inputs switch it on:
// the built-in NodePools they enable, as EKS creates them (catalog/automode),
// and the default NodeClass those use. EKS creates and deletes them (Manager
// "eks"); a NodePool or NodeClass of the inputs with the same name stands for
// itself. A running cluster shows them as they are.
func autoModeCapacity(m *cluster.Model) {
	a := m.Cluster.AutoMode
	if m.Live != nil || !a.On() || a.Compute != cluster.SwitchOn {
		return
	}
	k := catalog.AutoMode()
	taken := map[string]bool{}
	for _, o := range m.Objects {
		if o.Kind == "NodePool" || o.Kind == "NodeClass" {
			taken[o.Kind+"/"+o.Name] = true
		}
	}
	via := "EKS Auto Mode, switched on by " + a.From
	for _, name := range a.NodePools {
		bp, ok := k.BuiltinNodePool(name)
		if !ok || taken["NodePool/"+name] {
			continue
		}
		reqs := make([]any, 0, len(bp.Requirements))
		for _, r := range bp.Requirements {
			vals := make([]any, len(r.Values))
			for i, v := range r.Values {
				vals[i] = v
			}
			reqs = append(reqs, map[string]any{"key": r.Key, "operator": string(r.Operator), "values": vals})
		}
		spec := map[string]any{
			"nodeClassRef": map[string]any{"group": k.NodeClass.Group, "kind": k.NodeClass.Kind, "name": k.NodeClass.Default},
			"requirements": reqs,
		}
		if len(bp.Taints) > 0 {
			var taints []any
			for _, t := range bp.Taints {
				tm := map[string]any{"key": t.Key, "effect": string(t.Effect)}
				if t.Value != "" {
					tm["value"] = t.Value
				}
				taints = append(taints, tm)
			}
			spec["taints"] = taints
		}
		m.Objects = append(m.Objects, &cluster.Object{
			APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: name,
			Origin: a.Origin, Manager: cluster.ManagerEKS, Via: via,
			Content: map[string]any{
				"apiVersion": "karpenter.sh/v1", "kind": "NodePool",
				"metadata": map[string]any{"name": name},
				"spec":     map[string]any{"template": map[string]any{"spec": spec}},
			},
		})
	}
	if len(a.NodePools) > 0 && !taken["NodeClass/"+k.NodeClass.Default] {
		spec := map[string]any{}
		if a.NodeRole != "" {
			spec["role"] = a.NodeRole
		}
		m.Objects = append(m.Objects, &cluster.Object{
			APIVersion: k.NodeClass.Group + "/v1", Kind: k.NodeClass.Kind, Name: k.NodeClass.Default,
			Origin: a.Origin, Manager: cluster.ManagerEKS, Via: via,
			Content: map[string]any{
				"apiVersion": k.NodeClass.Group + "/v1", "kind": k.NodeClass.Kind,
				"metadata": map[string]any{"name": k.NodeClass.Default},
				"spec":     spec,
			},
		})
	}
}

// liveAutoMode recognises EKS Auto Mode in a running cluster: NodePools whose
// node class is an eks.amazonaws.com NodeClass, or nodes labelled
// eks.amazonaws.com/compute-type: auto. The switches themselves are not
// visible from inside the cluster; the built-in NodePools are those present.
func liveAutoMode(m *cluster.Model) {
	if m.Live == nil || m.Cluster.AutoMode != nil {
		return
	}
	k := catalog.AutoMode()
	seen := false
	var builtin []string
	for _, np := range m.NodePools {
		if np.InlineNodeClass || np.NodeClassRef.Group != k.NodeClass.Group {
			continue
		}
		seen = true
		if _, ok := k.BuiltinNodePool(np.Name); ok {
			builtin = append(builtin, np.Name)
		}
	}
	for _, n := range m.Nodes {
		if n.Labels[k.ComputeTypeLabel.Key] == k.ComputeTypeLabel.Value {
			seen = true
			break
		}
	}
	if !seen {
		return
	}
	sort.Strings(builtin)
	m.Cluster.AutoMode = &cluster.AutoMode{Live: true, Compute: cluster.SwitchOn, BlockStorage: cluster.SwitchUnknown, LoadBalancing: cluster.SwitchUnknown,
		NodePools: builtin, NodePoolsSet: true, From: "the running cluster"}
}
