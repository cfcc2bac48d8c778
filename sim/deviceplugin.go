package sim

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// A node advertises an extended resource such as nvidia.com/gpu only while
// the device plugin for it runs on the node. For the node groups a tool
// installs a device plugin for by itself (eksctl, cluster.DevicePlugin), the
// plugin runs only where its tolerations allow; where they do not, and no
// other plugin for the resource in the inputs runs there, the nodes offer none
// of it.

// devicePluginImages tells device plugin DaemonSets the inputs declare, by
// their image, from the resources they advertise.
var devicePluginImages = []struct {
	image     string
	resources []corev1.ResourceName
}{
	{"k8s-device-plugin", []corev1.ResourceName{"nvidia.com/gpu"}},
	{"neuron-device-plugin", []corev1.ResourceName{"aws.amazon.com/neuron", "aws.amazon.com/neuroncore", "aws.amazon.com/neurondevice"}},
	{"efa-k8s-device-plugin", []corev1.ResourceName{"vpc.amazonaws.com/efa"}},
}

// unseenPluginCharts are charts that may run a device plugin the inputs do not
// show: an operator creates it at run time (gpu-operator), or the chart is not
// rendered.
var unseenPluginCharts = map[corev1.ResourceName][]string{
	"nvidia.com/gpu":            {"gpu-operator", "nvidia-device-plugin"},
	"aws.amazon.com/neuron":     {"neuron"},
	"aws.amazon.com/neuroncore": {"neuron"},
	"vpc.amazonaws.com/efa":     {"efa"},
}

// deviceGap is why a node group's nodes would not advertise an extended
// resource the pod requests: a resource reason when certain, an unknown-value
// reason when it depends on what the inputs do not state; both nil when the
// nodes advertise it or eksdoctor does not model the plugin for the group.
func (s *Simulator) deviceGap(ng *cluster.NodeGroup, cands []candidate, req corev1.ResourceList) (refuse, unknown *Reason) {
	for _, p := range s.m.DevicePlugins {
		if !servesGroup(p, ng) {
			continue
		}
		for _, r := range p.Resources {
			q, ok := req[r]
			if !ok || q.Sign() <= 0 {
				continue
			}
			taint, blocked := untolerated(ng.Taints, p.Tolerations)
			if !blocked {
				if p.Earlier == nil || unknown != nil {
					continue
				}
				if t, bad := untolerated(ng.Taints, p.Earlier); bad && !s.otherPluginRuns(ng, cands, r) {
					unknown = &Reason{Code: CodeUnknownValue, Message: fmt.Sprintf(
						"whether its nodes advertise %s depends on the %s version, which no input states: before %s the %s DaemonSet %s installs does not tolerate taint %s, so it never runs on them and they never advertise %s (%s %s and later add a toleration for the taints of the node groups it is installed for)",
						r, p.InstalledBy, p.EarlierBefore, p.Name, p.InstalledBy, TaintText(t), r, p.InstalledBy, p.EarlierBefore)}
				}
				continue
			}
			if s.otherPluginRuns(ng, cands, r) {
				continue
			}
			if chart := s.unseenPluginChart(r); chart != "" {
				if unknown == nil {
					unknown = &Reason{Code: CodeUnknownValue, Message: fmt.Sprintf(
						"the %s DaemonSet %s installs does not tolerate taint %s; whether the %s chart runs a device plugin there is not known",
						p.Name, p.InstalledBy, TaintText(taint), chart)}
				}
				continue
			}
			return &Reason{Code: CodeResources, Resources: []corev1.ResourceName{r}, Message: insufficientText(r),
				Note: fmt.Sprintf("the %s DaemonSet %s installs for node group %q does not tolerate its taint %s, so the device plugin never runs on its nodes and they never advertise %s",
					p.Name, p.InstalledBy, ng.Name, TaintText(taint), r)}, nil
		}
	}
	return nil, unknown
}

func servesGroup(p *cluster.DevicePlugin, ng *cluster.NodeGroup) bool {
	for _, g := range p.Groups {
		if g == ng {
			return true
		}
	}
	return false
}

// otherPluginRuns reports whether a device plugin DaemonSet of the inputs that
// advertises r runs on the group's nodes: it tolerates their taints and its
// node affinity admits one of their instance types.
func (s *Simulator) otherPluginRuns(ng *cluster.NodeGroup, cands []candidate, r corev1.ResourceName) bool {
	for _, d := range s.daemonPods() {
		if !advertises(d.pod, r) {
			continue
		}
		if _, bad := untolerated(ng.Taints, d.pod.Spec.Tolerations); bad {
			continue
		}
		for _, c := range cands {
			if len(compatibleTerms(c.reqs, d.terms, groupUndefined)) == 0 {
				return true
			}
		}
	}
	return false
}

// advertises reports whether a DaemonSet pod is a device plugin for r, by its
// containers' images.
func advertises(pod *corev1.Pod, r corev1.ResourceName) bool {
	for _, c := range pod.Spec.Containers {
		for _, k := range devicePluginImages {
			if !strings.Contains(c.Image, k.image) {
				continue
			}
			for _, x := range k.resources {
				if x == r {
					return true
				}
			}
		}
	}
	return false
}

// unseenPluginChart is a Helm release of the inputs whose operator may run a
// device plugin for r that the inputs do not show.
func (s *Simulator) unseenPluginChart(r corev1.ResourceName) string {
	for _, hr := range s.m.HelmReleases {
		for _, c := range unseenPluginCharts[r] {
			if strings.Contains(hr.Chart, c) {
				return hr.Chart
			}
		}
	}
	return ""
}
