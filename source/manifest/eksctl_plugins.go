package manifest

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
)

// eksctlGroup is a node group of a ClusterConfig with what decides the device
// plugins eksctl installs for it.
type eksctlGroup struct {
	ng  *cluster.NodeGroup
	efa bool
}

// The extended resources each device plugin eksctl installs advertises.
var (
	nvidiaResources = []corev1.ResourceName{"nvidia.com/gpu"}
	neuronResources = []corev1.ResourceName{"aws.amazon.com/neuron", "aws.amazon.com/neuroncore", "aws.amazon.com/neurondevice"}
	efaResources    = []corev1.ResourceName{"vpc.amazonaws.com/efa"}
)

// interpretEksctlDevicePlugins records the device plugin DaemonSets eksctl
// applies by itself after creating the node groups of a ClusterConfig
// (pkg/eks/tasks.go ClusterTasksForNodeGroups, manifests in pkg/addons/assets;
// see docs/facts.md): the NVIDIA plugin when a node group of the AmazonLinux2
// or AmazonLinux2023 family has an NVIDIA instance type, the Neuron plugin for
// Inferentia and Trainium types, the EFA plugin when a group sets efaEnabled.
// The command-line flags --install-nvidia-plugin and --install-neuron-plugin
// (true by default) are not in the file; their defaults are assumed.
func interpretEksctlDevicePlugins(m *cluster.Model, o *cluster.Object, own []eksctlGroup) {
	// eksctl walks nodeGroups before managedNodeGroups when it collects taints.
	var ordered []eksctlGroup
	for _, managed := range []bool{false, true} {
		for _, g := range own {
			if g.ng.Managed == managed {
				ordered = append(ordered, g)
			}
		}
	}
	var nvidia, neuron, efa []*cluster.NodeGroup
	for _, g := range ordered {
		switch groupAccelerator(g.ng) {
		case "nvidia":
			if nvidiaPluginFamily(g.ng.AMIType) {
				nvidia = append(nvidia, g.ng)
			}
		case "neuron":
			neuron = append(neuron, g.ng)
		}
		if g.efa {
			efa = append(efa, g.ng)
		}
	}
	critical := corev1.Toleration{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists}
	exists := func(key string) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	}
	if len(nvidia) > 0 {
		// Since eksctl 0.101.0 (SetTolerations) the DaemonSet also tolerates
		// the taints of the NVIDIA node groups: key and value, any effect, the
		// first value met for each key only, and no key it already tolerates.
		tols := []corev1.Toleration{exists("nvidia.com/gpu")}
		has := map[string]bool{"nvidia.com/gpu": true}
		for _, ng := range nvidia {
			for _, t := range ng.Taints {
				if has[t.Key] {
					continue
				}
				has[t.Key] = true
				tols = append(tols, corev1.Toleration{Key: t.Key, Value: t.Value})
			}
		}
		m.DevicePlugins = append(m.DevicePlugins, &cluster.DevicePlugin{
			Name: "nvidia-device-plugin-daemonset", Namespace: "kube-system", Resources: nvidiaResources,
			Tolerations: tols, Groups: nvidia, InstalledBy: "eksctl", Origin: o.Origin,
			Earlier: []corev1.Toleration{critical, exists("nvidia.com/gpu")}, EarlierBefore: "0.101.0",
		})
	}
	if len(neuron) > 0 {
		m.DevicePlugins = append(m.DevicePlugins, &cluster.DevicePlugin{
			Name: "neuron-device-plugin", Namespace: "kube-system", Resources: neuronResources,
			Tolerations: []corev1.Toleration{critical, exists("aws.amazon.com/neuron")},
			Groups:      neuron, InstalledBy: "eksctl", Origin: o.Origin,
		})
	}
	if len(efa) > 0 {
		m.DevicePlugins = append(m.DevicePlugins, &cluster.DevicePlugin{
			Name: "aws-efa-k8s-device-plugin", Namespace: "kube-system", Resources: efaResources,
			Tolerations: []corev1.Toleration{critical, exists("aws.amazon.com/efa")},
			Groups:      efa, InstalledBy: "eksctl", Origin: o.Origin,
		})
	}
}

// groupAccelerator is the accelerator of a node group's instance types, the
// first one that has one (eksctl's HasInstanceType: any of them).
func groupAccelerator(ng *cluster.NodeGroup) string {
	for _, t := range ng.InstanceTypes {
		if a := catalog.Accelerator(t); a != "" {
			return a
		}
	}
	return ""
}

// nvidiaPluginFamily reports whether eksctl installs the NVIDIA plugin for an
// amiFamily: AmazonLinux2 and AmazonLinux2023 (the default, AmazonLinux2 in
// older releases) only; Bottlerocket's NVIDIA variants run the plugin
// themselves.
func nvidiaPluginFamily(family string) bool {
	switch family {
	case "", "AmazonLinux2", "AmazonLinux2023":
		return true
	}
	return false
}
