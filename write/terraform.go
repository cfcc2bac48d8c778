package write

import (
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/identity"
	"github.com/eksdoctor/eksdoctor/source/manifest"
	"github.com/eksdoctor/eksdoctor/source/terraform"
)

// Edits of how Terraform orders and names what it creates, of the inputs of
// the module calls eksdoctor knows, and of how the Karpenter controller gets
// its role.

// DependsOn makes the graph node at addr depend on deps (its whole
// depends_on list, as written).
func DependsOn(m *cluster.Model, addr string, deps []string) (cluster.Edit, bool) {
	if m == nil {
		return cluster.Edit{}, false
	}
	return terraform.DependsOnEdit(m.Terraform, addr, deps, false)
}

// DependsOnInLines is DependsOn with the list written one entry a line, the
// way a destroy plan's changes are shown.
func DependsOnInLines(m *cluster.Model, addr string, deps []string) (cluster.Edit, bool) {
	if m == nil {
		return cluster.Edit{}, false
	}
	return terraform.DependsOnEdit(m.Terraform, addr, deps, true)
}

// DestroyWait makes destroying the resource at addr wait until the
// Kubernetes objects it deletes are gone.
func DestroyWait(m *cluster.Model, addr string) (cluster.Edit, bool) {
	if m == nil {
		return cluster.Edit{}, false
	}
	return terraform.DestroyWaitEdit(m.Terraform, addr)
}

// DestroyDelete makes destroying the resource at addr delete its Kubernetes
// objects.
func DestroyDelete(m *cluster.Model, addr string) (cluster.Edit, bool) {
	if m == nil {
		return cluster.Edit{}, false
	}
	return terraform.DestroyDeleteEdit(m.Terraform, addr)
}

// UpdateInPlace makes a change of the resource at addr update its Kubernetes
// objects in place rather than delete and recreate them.
func UpdateInPlace(m *cluster.Model, addr string) (cluster.Edit, bool) {
	if m == nil {
		return cluster.Edit{}, false
	}
	return terraform.UpdateInPlaceEdit(m.Terraform, addr)
}

// RekeyByName keys the instances of the kubectl_manifest or
// kubernetes_manifest resource at addr by each object's kind and name
// (cluster.InstanceKeys.Rekey).
func RekeyByName(m *cluster.Model, addr string) (cluster.Edit, bool) {
	if m == nil {
		return cluster.Edit{}, false
	}
	return terraform.RekeyByNameEdit(m.Terraform, addr)
}

// RenameModuleKey renames a key written in a module call's inputs.
func RenameModuleKey(mc *cluster.ModuleCall, k cluster.WrittenKey, to string) (cluster.Edit, bool) {
	return terraform.RenameKeyEdit(mc, k, to)
}

// ExactNodeRoleName makes the terraform-aws-eks karpenter module that creates
// the node role at roleAddr name it exactly, without a random suffix.
func ExactNodeRoleName(m *cluster.Model, roleAddr string) (cluster.Edit, bool) {
	if m == nil {
		return cluster.Edit{}, false
	}
	return terraform.ExactNodeRoleNameEdit(m.Terraform, roleAddr)
}

// ClusterNameExpr is a Terraform expression for the cluster's name (an
// output of the module or an attribute of the resource that creates it).
func ClusterNameExpr(c cluster.EKSCluster) (string, bool) {
	return terraform.ClusterNameRef(c)
}

// IRSA moves a service account of the Karpenter controller from EKS Pod
// Identity to IRSA where that is declared: the eksctl ClusterConfig's
// iam.serviceAccounts (eksctl then annotates the service account), or the
// terraform-aws-eks karpenter module call with, for a release r (nil for
// none), the role annotation in its values. how says what the edits change;
// ok is false when the association is declared nowhere eksdoctor can write.
func IRSA(m *cluster.Model, r *cluster.HelmRelease, id cluster.ServiceAccountIdentity) (edits []cluster.Edit, how string, ok bool) {
	if o := EksctlConfig(m); o != nil && manifest.FromPodIdentityAssociation(id) {
		e, ok := ObjectPatch(m, o, manifest.IRSAPatch(o, id.Namespace, id.Name))
		if !ok {
			return nil, "", false
		}
		return []cluster.Edit{e}, "eksctl iam.serviceAccounts; eksctl annotates the service account", true
	}
	k := m.Karpenter
	if m.Terraform == nil || k.Address == "" || !terraform.InModule(k.Address) {
		return nil, "", false
	}
	mod, ok := terraform.KarpenterIRSAEdit(m.Terraform, k.Address, m.Cluster, id.Namespace+":"+id.Name)
	if !ok {
		return nil, "", false
	}
	edits = []cluster.Edit{mod}
	if r != nil {
		values := map[string]any{"serviceAccount": map[string]any{"annotations": map[string]any{identity.IRSAAnnotation: cluster.Unknown(terraform.KarpenterRoleARNExpr(k.Address))}}}
		e, ok := ReleaseValues(r, values)
		if !ok {
			return nil, "", false
		}
		edits = append(edits, e)
	}
	return edits, "enable_irsa in the karpenter module, and the role annotation on the service account", true
}
