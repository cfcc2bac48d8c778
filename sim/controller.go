package sim

import (
	"fmt"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// ControllerState is what a running cluster shows of the Karpenter controller.
type ControllerState int

const (
	_ ControllerState = iota
	// ControllerReady: a Deployment runs the controller with a ready pod.
	ControllerReady
	// ControllerNotReady: Deployments run the controller, none with a ready pod.
	ControllerNotReady
	// ControllerAbsent: every Deployment was read and none runs the controller.
	ControllerAbsent
	// ControllerUnknown: the Deployments could not all be seen.
	ControllerUnknown
)

// Controller is the Karpenter controller as a running cluster shows it. For
// static inputs (no Model.Live) it is ControllerAbsent or ControllerNotReady
// and means nothing: only live checks read it.
type Controller struct {
	State ControllerState
	// Deployments run the controller image (or carry the chart's name label).
	Deployments []*cluster.Workload
	// Why says, in a sentence, what was seen ("Deployment kube-system/karpenter
	// has 0 of 2 pods ready: pod ... is Pending"); Short says it without the
	// pods' details.
	Why, Short string
}

// Ready reports whether a controller is there to launch nodes and remove
// Karpenter's finalizers.
func (c Controller) Ready() bool { return c.State == ControllerReady }

// Known reports whether the controller's state could be seen.
func (c Controller) Known() bool { return c.State != ControllerUnknown }

// Sentence says the controller's state in a sentence.
func (c Controller) Sentence() string {
	switch c.State {
	case ControllerReady:
		return "The Karpenter controller runs: " + c.Why + "."
	case ControllerNotReady:
		return "The Karpenter controller is not ready: " + c.Why + "."
	case ControllerAbsent:
		return "The Karpenter controller is absent: " + c.Why + "."
	case ControllerUnknown:
		return "The Karpenter controller's state is unknown: " + c.Why + "."
	}
	return ""
}

// KarpenterController works out whether a controller is there to process
// Karpenter's finalizers and launch nodes: a Deployment with at least one ready
// pod. Absence is only concluded when every Deployment of the cluster was read.
func KarpenterController(m *cluster.Model) Controller {
	var c Controller
	for _, w := range m.Workloads {
		if w.Component == "karpenter" && w.Object.Kind == "Deployment" && w.Object.Manager == "cluster" {
			c.Deployments = append(c.Deployments, w)
		}
	}
	if len(c.Deployments) == 0 {
		if reason, skipped := m.SkippedReason("deployments.apps"); skipped {
			c.State, c.Why = ControllerUnknown, "Deployments could not be read ("+reason+"), so whether the Karpenter controller runs is unknown"
			c.Short = "Deployments could not be read"
			return c
		}
		if m.Live != nil && m.Live.Namespace != "" {
			c.State, c.Why = ControllerUnknown, fmt.Sprintf("the read was restricted to namespace %q, where no Karpenter Deployment is; the controller may run in another namespace", m.Live.Namespace)
			c.Short = fmt.Sprintf("the read was restricted to namespace %q", m.Live.Namespace)
			return c
		}
		c.State, c.Why = ControllerAbsent, "no Deployment in the cluster runs the Karpenter controller"
		c.Short = c.Why
		return c
	}
	_, podsSkipped := m.SkippedReason("pods")
	var parts, shorts []string
	for _, w := range c.Deployments {
		desired := w.Replicas
		var ready int
		var notes []string
		if podsSkipped {
			r, _ := w.Object.Get("status.readyReplicas").(int64)
			ready = int(r)
		} else {
			for _, p := range m.Pods {
				if p.Owner != w.Ref() {
					continue
				}
				if p.Ready() {
					ready++
					continue
				}
				notes = append(notes, p.StateText())
			}
		}
		if ready > 0 {
			c.State = ControllerReady
			c.Why = fmt.Sprintf("Deployment %s/%s has %d ready pod(s)", w.Object.Namespace, w.Object.Name, ready)
			c.Short = c.Why
			return c
		}
		s := fmt.Sprintf("Deployment %s/%s has 0 of %d pods ready", w.Object.Namespace, w.Object.Name, desired)
		if desired == 0 {
			s = fmt.Sprintf("Deployment %s/%s is scaled to 0 replicas", w.Object.Namespace, w.Object.Name)
		}
		shorts = append(shorts, s)
		sort.Strings(notes)
		if len(notes) > 0 {
			s += ": " + strings.Join(notes, "; ")
		}
		parts = append(parts, s)
	}
	c.State, c.Why, c.Short = ControllerNotReady, strings.Join(parts, "; "), strings.Join(shorts, "; ")
	return c
}
