package lint

import (
	"fmt"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/identity"
)

// How a role joins the cluster as a node, as the identity checks word it.

const nodeJoinSymptom = "Instances launch but never become nodes: the kubelet logs `Unable to register node with API server\" err=\"Unauthorized\"` and the NodeClaim stays `Launched=True, Registered=Unknown` until Karpenter replaces it."

func explicitMappings(fs []identity.Found) []identity.Found {
	var out []identity.Found
	for _, f := range fs {
		if !f.Implicit {
			out = append(out, f)
		}
	}
	return out
}

func unionGroups(have, want []string) []string {
	out := append([]string(nil), have...)
	seen := map[string]bool{}
	for _, g := range have {
		seen[g] = true
	}
	for _, g := range want {
		if !seen[g] {
			out = append(out, g)
		}
	}
	return out
}

// profileNote says where a node class's instance profile comes from when the
// object does not name it (a v1alpha5 class takes the chart's default).
func profileNote(nc *cluster.NodeClass) string {
	if nc.InstanceProfileFrom == "" {
		return ""
	}
	return fmt.Sprintf("Its instances get instance profile %s, from %s.\n", nc.InstanceProfile, nc.InstanceProfileFrom)
}
