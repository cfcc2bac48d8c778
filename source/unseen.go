package source

import (
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// markUnseen records capacity that placement cannot see into, so that a workload
// that fits nothing visible is reported as not verified rather than as failing:
// v1alpha5 Provisioners (Karpenter before v0.32), and, when a configuration declares
// no node group, Fargate profile or node at all, the compute the cluster must get
// from elsewhere (another Terraform root, an existing cluster read through data
// sources, the console). Loaders add what only they can tell (node groups known
// only after apply, module versions that are not modelled).
func markUnseen(m *cluster.Model) {
	if m.Live != nil {
		return // a running cluster shows its nodes
	}
	for _, o := range m.Objects {
		if o.Kind == "Provisioner" && strings.HasPrefix(o.APIVersion, "karpenter.sh/") {
			m.Unseen = append(m.Unseen, cluster.UnseenCapacity{
				What:       o.Ref().String(),
				Why:        "eksdoctor does not model karpenter.sh/v1alpha5 Provisioners (Karpenter v0.32 and earlier)",
				Origin:     o.Origin,
				SteadyOnly: true,
			})
		}
	}
	if len(m.NodeGroups) > 0 || len(m.FargateProfiles) > 0 || len(m.Nodes) > 0 {
		return
	}
	for _, u := range m.Unseen {
		if !u.SteadyOnly {
			return // a loader already said where the compute is and why it is unseen
		}
	}
	m.Unseen = append(m.Unseen, cluster.UnseenCapacity{
		What:   "the cluster's node groups",
		Why:    "these inputs declare no node group, Fargate profile or node, so the cluster's compute is defined elsewhere",
		Origin: m.Cluster.Origin,
	})
}
