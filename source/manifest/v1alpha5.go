package manifest

import (
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// v1alpha5InstanceProfiles completes the node classes of Karpenter v0.31 and
// earlier. An AWSNodeTemplate, or a Provisioner's inline spec.provider, names
// no role: its instances get spec.instanceProfile, or else the instance
// profile the chart's settings give (aws.defaultInstanceProfile,
// settings.aws.defaultInstanceProfile from chart 0.19). A Provisioner's inline
// provider becomes a node class of its own, so that its role is judged like
// any other.
func v1alpha5InstanceProfiles(m *cluster.Model) {
	def, from := defaultInstanceProfile(m.Karpenter.Release)
	for _, nc := range m.NodeClasses {
		if nc.Object != nil && nc.Object.Kind == "AWSNodeTemplate" && strings.TrimSpace(nc.InstanceProfile) == "" && def != "" {
			nc.InstanceProfile, nc.InstanceProfileFrom = def, from
		}
	}
	for _, np := range m.NodePools {
		if !np.InlineNodeClass || np.Object == nil {
			continue
		}
		o := np.Object
		nc := &cluster.NodeClass{Object: o, Name: o.Name, APIVersion: o.APIVersion, Inline: true,
			InstanceProfile: o.String("spec.provider.instanceProfile"), AMIFamily: o.String("spec.provider.amiFamily")}
		if strings.TrimSpace(nc.InstanceProfile) == "" {
			if def == "" {
				continue
			}
			nc.InstanceProfile, nc.InstanceProfileFrom = def, from
		}
		m.NodeClasses = append(m.NodeClasses, nc)
	}
}

// defaultInstanceProfile is the instance profile a Karpenter release before
// v0.32 gives node classes that name none, and the values key it is set at.
func defaultInstanceProfile(r *cluster.HelmRelease) (string, string) {
	if r == nil {
		return "", ""
	}
	for _, k := range []string{"settings.aws.defaultInstanceProfile", "aws.defaultInstanceProfile"} {
		if v, ok := cluster.Lookup(r.Values, k).(string); ok && strings.TrimSpace(v) != "" {
			return v, k + " of " + releaseName(r)
		}
	}
	return "", ""
}
