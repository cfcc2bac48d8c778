package cluster

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// What a running cluster tells about itself, read from the model: the moment it
// was read, what could not be read, its name and account, the state of a pod,
// what the scheduler said.

// NowTime is the moment the cluster was read; ok is false for static inputs
// and snapshots that do not say.
func (m *Model) NowTime() (time.Time, bool) {
	if m.Live == nil || m.Live.Now == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, m.Live.Now)
	return t, err == nil
}

// SkippedReason reports whether a resource (as Skipped names it: "pods",
// "deployments.apps", "events (reason=FailedScheduling)") could not be read, and
// why. It is false for static inputs.
func (m *Model) SkippedReason(resource string) (string, bool) {
	if m.Live == nil {
		return "", false
	}
	for _, s := range m.Live.Skipped {
		if s.Resource == resource || strings.HasPrefix(s.Resource, resource+" (") {
			return s.Reason, true
		}
	}
	return "", false
}

// InstanceID extracts the EC2 instance from a providerID
// (aws:///eu-west-1a/i-0123456789abcdef0 → i-0123456789abcdef0), "" when none.
func InstanceID(providerID string) string {
	i := strings.LastIndexByte(providerID, '/')
	if id := providerID[i+1:]; strings.HasPrefix(id, "i-") {
		return id
	}
	return ""
}

var (
	eksClusterARN  = regexp.MustCompile(`^arn:(aws[a-z-]*):eks:[a-z0-9-]+:(\d{12}):cluster/([A-Za-z0-9][A-Za-z0-9_-]*)$`)
	roleARNAccount = regexp.MustCompile(`^arn:(aws[a-z-]*):iam::(\d{12}):role/`)
)

// ClusterName finds the EKS cluster's name: the configuration's, the kubeconfig
// context of `aws eks update-kubeconfig` (the cluster's ARN), the Karpenter
// controller's CLUSTER_NAME, or the label eksctl puts on its nodes; "" when
// none tells.
func (m *Model) ClusterName() string {
	if m.Cluster.Name != "" && !IsUnknown(m.Cluster.Name) {
		return m.Cluster.Name
	}
	if m.Live != nil {
		if mm := eksClusterARN.FindStringSubmatch(m.Live.Context); mm != nil {
			return mm[3]
		}
	}
	for _, w := range m.Workloads {
		if w.Component != "karpenter" {
			continue
		}
		for _, c := range w.Template.Spec.Containers {
			for _, e := range c.Env {
				if e.Name == "CLUSTER_NAME" && e.Value != "" {
					return e.Value
				}
			}
		}
	}
	for _, n := range m.Nodes {
		if name := n.Labels["alpha.eksctl.io/cluster-name"]; name != "" {
			return name
		}
	}
	return ""
}

// Account finds the AWS partition and account of the cluster: from the
// context's cluster ARN, or from the role ARNs aws-auth maps; "aws" and "" when
// neither tells.
func (m *Model) Account() (partition, account string) {
	if m.Live != nil {
		if mm := eksClusterARN.FindStringSubmatch(m.Live.Context); mm != nil {
			return mm[1], mm[2]
		}
	}
	if a := m.Identity.AwsAuth; a != nil {
		for _, r := range a.Roles {
			if mm := roleARNAccount.FindStringSubmatch(r.RoleARN); mm != nil {
				return mm[1], mm[2]
			}
		}
	}
	return "aws", ""
}

// Finalizers lists an object's metadata.finalizers.
func (o *Object) Finalizers() []string {
	l, _ := o.Get("metadata.finalizers").([]any)
	var out []string
	for _, it := range l {
		if s, ok := it.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// Terminating reports whether an object is being deleted.
func (o *Object) Terminating() bool { return o.String("metadata.deletionTimestamp") != "" }

// Ready reports whether a pod runs and passes its readiness checks.
func (p *Pod) Ready() bool {
	if p.Status.Phase != corev1.PodRunning || p.Object.Terminating() {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// StateText says in a few words why a pod is not ready.
func (p *Pod) StateText() string {
	phase := string(p.Status.Phase)
	if phase == "" {
		phase = "Unknown"
	}
	s := fmt.Sprintf("pod %s is %s", p.Object.Name, phase)
	switch {
	case p.Object.Terminating():
		s += " and terminating"
	case p.Status.Phase == corev1.PodPending && p.Spec.NodeName == "":
		s += ", unscheduled"
		if q := SchedulerMessage([]*Pod{p}); q.Message != "" {
			s += fmt.Sprintf(" (%q)", q.Message)
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			s += fmt.Sprintf(", container %s %s", cs.Name, w.Reason)
		}
	}
	return s
}

// karpenterComponent is the source component of Karpenter's events.
const karpenterComponent = "karpenter"

// KarpenterSaid returns the newest FailedScheduling message Karpenter
// recorded for the pods ("Failed to schedule pod, ..."); empty when none was
// read.
func KarpenterSaid(pods []*Pod) Quote {
	return failedScheduling(pods, func(src string) bool { return src == karpenterComponent })
}

// failedScheduling is the newest FailedScheduling event of the pods from a
// source that passes from.
func failedScheduling(pods []*Pod, from func(string) bool) Quote {
	for _, p := range pods {
		for i := len(p.Events) - 1; i >= 0; i-- {
			ev := p.Events[i]
			if ev.Reason != "FailedScheduling" || ev.Message == "" || !from(ev.Source) {
				continue
			}
			where := "FailedScheduling event"
			if ev.Source != "" {
				where += " from " + ev.Source
			}
			if ev.Count > 1 {
				where += fmt.Sprintf(", %d times", ev.Count)
			}
			return Quote{Message: ev.Message, From: where + ", pod " + p.Object.Name}
		}
	}
	return Quote{}
}

// Quote is what the scheduler said about pods it could not place.
type Quote struct {
	Message string
	// From says where the message comes from ("FailedScheduling event from
	// default-scheduler, 7 times, pod web-5d8f-abcde").
	From string
}

// SchedulerMessage returns the newest FailedScheduling message the pods'
// scheduler recorded for them (kube-scheduler's, not Karpenter's, which also
// records FailedScheduling events: see KarpenterSaid), or, when the events
// have expired (after an hour by default), the message of a pod's
// PodScheduled condition; empty when nothing was recorded.
func SchedulerMessage(pods []*Pod) Quote {
	if q := failedScheduling(pods, func(src string) bool { return src != karpenterComponent }); q.Message != "" {
		return q
	}
	for _, p := range pods {
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Message != "" {
				reason := c.Reason
				if reason == "" {
					reason = "False"
				}
				return Quote{Message: c.Message, From: fmt.Sprintf("PodScheduled condition (%s), pod %s", reason, p.Object.Name)}
			}
		}
	}
	return Quote{}
}

// State words a condition's status as Karpenter's and the kubelet's
// conditions read: "Unknown (NodeNotFound: Node not registered with cluster)".
func (c Condition) State() string {
	s := c.Status
	switch {
	case c.Reason != "" && c.Message != "":
		s += " (" + c.Reason + ": " + c.Message + ")"
	case c.Reason != "":
		s += " (" + c.Reason + ")"
	case c.Message != "":
		s += " (" + c.Message + ")"
	}
	return s
}

// String words a condition with its type: "NodeClassReady=False (NodeClassNotFound: NodeClass not found on cluster)".
func (c Condition) String() string { return c.Type + "=" + c.State() }
