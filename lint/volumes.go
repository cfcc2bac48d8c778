package lint

import "github.com/eksdoctor/eksdoctor/cluster"

// The PersistentVolumeClaims pods of a running cluster mount, and their CSI drivers.

// claimNames lists the PersistentVolumeClaims a pod mounts.
func claimNames(p *cluster.Pod) []string {
	var out []string
	for _, v := range p.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			out = append(out, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			// A generic ephemeral volume's claim is named <pod>-<volume>.
			out = append(out, p.Object.Name+"-"+v.Name)
		}
	}
	return out
}

// claimDriver returns the CSI driver of a PersistentVolumeClaim: its bound
// volume's, else the provisioner annotation. "" when unknown.
func claimDriver(m *cluster.Model, ns, name string) string {
	for _, o := range m.Live.PVCs {
		if o.Namespace != ns || o.Name != name {
			continue
		}
		if vol := o.String("spec.volumeName"); vol != "" {
			if d := pvInfo(m, vol).driver; d != "" {
				return d
			}
		}
		for _, a := range []string{"volume.kubernetes.io/storage-provisioner", "volume.beta.kubernetes.io/storage-provisioner"} {
			if d := o.Annotations[a]; d != "" {
				if d == "kubernetes.io/aws-ebs" {
					return "ebs.csi.aws.com"
				}
				return d
			}
		}
	}
	return ""
}

// liveVolume is what the cluster says about one persistent volume.
type liveVolume struct {
	pv     *cluster.Object
	claim  cluster.ObjectRef // PersistentVolumeClaim namespace/name
	driver string
	handle string
}

func pvInfo(m *cluster.Model, name string) liveVolume {
	v := liveVolume{}
	for _, o := range m.Live.PVs {
		if o.Name != name {
			continue
		}
		v.pv = o
		v.driver = o.String("spec.csi.driver")
		v.handle = o.String("spec.csi.volumeHandle")
		if v.handle == "" {
			v.handle = o.String("spec.awsElasticBlockStore.volumeID")
		}
		if ns, n := o.String("spec.claimRef.namespace"), o.String("spec.claimRef.name"); n != "" {
			v.claim = cluster.ObjectRef{Kind: "PersistentVolumeClaim", Namespace: ns, Name: n}
		}
	}
	return v
}
