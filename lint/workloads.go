package lint

import "github.com/eksdoctor/eksdoctor/cluster"

// What every check asks of a workload: whether it is judged from the configuration, the phase it must run in, and where its pod template is.

// judgedStatically reports whether the static checks should judge a workload's pods: live
// workloads are judged by their pods.
func judgedStatically(m *cluster.Model, w *cluster.Workload) bool {
	return !(m.Live != nil && w.Object.Manager == "cluster")
}

// requiredPhase is the phase a workload must be schedulable in: components needed
// before Karpenter capacity exists, and Helm hooks, in the bootstrap phase.
func requiredPhase(w *cluster.Workload) cluster.Phase {
	if w.Bootstrap != "" || isHelmHook(w) {
		return cluster.Bootstrap
	}
	return cluster.Steady
}

// isHelmHook reports whether the workload is a Helm hook (run while helm waits).
func isHelmHook(w *cluster.Workload) bool {
	_, ok := w.Object.Annotations["helm.sh/hook"]
	return ok
}

func templateLabels(w *cluster.Workload) map[string]string {
	if w.TemplatePath == "" {
		return w.Object.Labels
	}
	return w.Template.Labels
}

// podSpecPath is the path of the pod spec inside a workload object.
func podSpecPath(w *cluster.Workload) string {
	if w.TemplatePath == "" {
		return "spec"
	}
	return w.TemplatePath + ".spec"
}
