package manifest

import (
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// ComponentAnnotation names the well-known component a workload is; sources that
// synthesize workloads (charts, add-ons) set it, and Interpret recognizes the
// rest from their containers, labels and host paths.
const ComponentAnnotation = "eksdoctor.io/component"

// recognize marks well-known components, the workloads the cluster needs before any
// Karpenter capacity exists, and node-critical DaemonSets; and works out which
// Karpenter installation and version the configuration uses.
func recognize(m *cluster.Model) {
	addons := map[string]*cluster.Addon{}
	for _, a := range m.Addons {
		if a.Address != "" {
			addons[a.Address] = a
		}
		// Add-ons without an address (eksctl) are named by what expanded them.
		addons["eks-addon:"+a.Name] = a
	}
	releases := map[string]*cluster.HelmRelease{}
	for _, r := range m.HelmReleases {
		releases[r.Address] = r
		releases["helm:"+r.Name] = r
	}
	for _, w := range m.Workloads {
		w.Component = component(w)
		if a := addons[w.Object.Via]; a != nil {
			w.Addon = a
		}
		if r := releases[w.Object.Via]; r != nil {
			w.Release = r
		}
		if w.IsDaemonSet() {
			w.NodeCritical = nodeCritical(w)
		}
	}
	karpenterInstall(m)
	v1alpha5InstanceProfiles(m)
	for _, w := range m.Workloads {
		switch {
		case w.Component == "karpenter":
			w.Bootstrap = "the Karpenter controller must run before Karpenter can launch any node"
		case isCNI(w.Component):
			w.Bootstrap = "nodes do not become Ready until the CNI agent runs on them"
		case w.Component == "coredns" && karpenterNeedsDNS(m):
			w.Bootstrap = "the Karpenter controller uses dnsPolicy ClusterFirst, so it needs CoreDNS to reach AWS APIs before it can launch nodes"
		case w.Addon != nil && w.Addon.Implicit == "" && !w.IsDaemonSet() && !strings.HasPrefix(w.Addon.Address, "addons."):
			// Terraform (aws_eks_addon, the eks module's add-ons) waits for the
			// add-on to become ACTIVE; eksctl entries ("addons.N") and the
			// add-ons EKS installs itself do not block.
			w.Bootstrap = "Terraform waits for the EKS add-on " + w.Addon.Name + " to become ACTIVE, which needs its pods running"
		}
	}
}

var (
	karpenterImage = regexp.MustCompile(`(^|/)karpenter/controller([:@]|$)|/karpenter/controller:`)
	tagRE          = regexp.MustCompile(`:v?(\d+\.\d+\.\d+[^@]*)`)
)

func component(w *cluster.Workload) string {
	if c := w.Object.Annotations[ComponentAnnotation]; c != "" {
		return c
	}
	spec := &w.Template.Spec
	labels := w.Template.Labels
	name := w.Object.Name
	for _, c := range spec.Containers {
		img := c.Image
		switch {
		case karpenterImage.MatchString(img):
			return "karpenter"
		case strings.Contains(img, "amazon-k8s-cni") && !strings.Contains(img, "init"):
			return "aws-node"
		case strings.Contains(img, "cilium/cilium") || strings.Contains(img, "/cilium:"):
			if w.IsDaemonSet() {
				return "cilium-agent"
			}
		case strings.Contains(img, "calico/node"):
			return "calico-node"
		case strings.Contains(img, "coredns"):
			return "coredns"
		case strings.Contains(img, "kube-proxy") && w.IsDaemonSet():
			return "kube-proxy"
		}
	}
	switch {
	case w.Object.Kind == "Deployment" && labels["app.kubernetes.io/name"] == "karpenter":
		return "karpenter"
	case labels["k8s-app"] == "kube-dns":
		return "coredns"
	case w.IsDaemonSet() && hasContainer(spec, "csi-node-driver-registrar", "node-driver-registrar"):
		return csiName(name) + "-node"
	case w.IsDaemonSet() && mountsCNI(spec):
		return "cni:" + name
	case w.IsDaemonSet() && (name == "aws-node" || name == "calico-node" || name == "kube-proxy"):
		return name
	case w.IsDaemonSet() && name == "cilium":
		return "cilium-agent"
	}
	return ""
}

func hasContainer(spec *corev1.PodSpec, names ...string) bool {
	for _, c := range append(append([]corev1.Container{}, spec.Containers...), spec.InitContainers...) {
		for _, n := range names {
			if c.Name == n || strings.Contains(c.Image, "/"+n+":") || strings.Contains(c.Image, "/"+n+"@") {
				return true
			}
		}
	}
	return false
}

func mountsCNI(spec *corev1.PodSpec) bool {
	for _, v := range spec.Volumes {
		if v.HostPath == nil {
			continue
		}
		p := strings.TrimSuffix(v.HostPath.Path, "/")
		if p == "/etc/cni/net.d" || p == "/opt/cni/bin" || p == "/etc/cni" {
			return true
		}
	}
	return false
}

// csiName shortens a CSI node DaemonSet name to its driver ("ebs-csi-node" → "ebs-csi").
func csiName(name string) string {
	n := strings.TrimSuffix(name, "-node")
	n = strings.TrimSuffix(n, "-daemonset")
	if n == "" {
		return "csi"
	}
	return n
}

func isCNI(c string) bool {
	return c == "aws-node" || c == "cilium-agent" || c == "calico-node" || strings.HasPrefix(c, "cni:")
}

// IsCSINode reports whether a component id names a CSI node plugin
// ("ebs-csi-node", "ebs-csi-node-windows", "efs-csi-node", "s3-csi-node").
func IsCSINode(c string) bool {
	return strings.Contains(c, "csi") && (strings.HasSuffix(c, "-node") || strings.Contains(c, "-node-"))
}

func nodeCritical(w *cluster.Workload) string {
	c := w.Component
	switch {
	case IsCSINode(c):
		return "CSI node plugin: it unmounts and detaches volumes when pods leave the node"
	case isCNI(c):
		return "CNI agent: pods on the node lose networking without it"
	}
	return ""
}

// karpenterInstall fills m.Karpenter from the workloads and objects: the controller,
// its namespace and the version in use.
func karpenterInstall(m *cluster.Model) {
	k := &m.Karpenter
	for _, w := range m.Workloads {
		if w.Component == "karpenter" && w.Object.Kind == "Deployment" {
			if k.Controller == nil {
				k.Controller = w
			}
			if k.Namespace == "" {
				k.Namespace = w.Template.Namespace
			}
		}
	}
	if k.Release == nil {
		for _, r := range m.HelmReleases {
			if r.Chart == "karpenter" || strings.HasSuffix(r.Chart, "/karpenter") {
				k.Release = r
				break
			}
		}
	}
	if k.Release != nil && k.Namespace == "" {
		k.Namespace = k.Release.Namespace
	}
	if k.Version != "" {
		return
	}
	if r := k.Release; r != nil && r.Version != "" && !cluster.IsUnknown(r.Version) {
		k.Version, k.VersionFrom = strings.TrimPrefix(r.Version, "v"), "chart version of "+releaseName(r)
		return
	}
	if c := k.Controller; c != nil {
		for _, ct := range c.Template.Spec.Containers {
			if mm := tagRE.FindStringSubmatch(ct.Image); mm != nil && karpenterImage.MatchString(ct.Image) {
				k.Version, k.VersionFrom = mm[1], "controller image "+ct.Image
				return
			}
		}
	}
	for _, o := range m.Objects {
		if (o.Kind == "NodePool" || o.Kind == "NodeClaim") && isGroup(o, "karpenter.sh") {
			switch o.APIVersion {
			case "karpenter.sh/v1":
				k.Version, k.VersionFrom = "1", "apiVersion karpenter.sh/v1 of "+o.Ref().String()
			case "karpenter.sh/v1beta1":
				k.Version, k.VersionFrom = "0.37", "apiVersion karpenter.sh/v1beta1 of "+o.Ref().String()
			}
			return
		}
	}
}

func releaseName(r *cluster.HelmRelease) string {
	if r.Address != "" {
		return r.Address
	}
	return "release " + r.Name
}

// karpenterNeedsDNS reports whether the Karpenter controller resolves names through
// cluster DNS (dnsPolicy ClusterFirst, the Kubernetes default).
func karpenterNeedsDNS(m *cluster.Model) bool {
	c := m.Karpenter.Controller
	if c == nil {
		return false
	}
	p := c.Template.Spec.DNSPolicy
	return (p == "" || p == corev1.DNSClusterFirst) && !c.Template.Spec.HostNetwork
}
