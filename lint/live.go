package lint

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// The live checks read what only a running cluster shows: Pending pods with the
// scheduler's own words, NodeClaims that launched an instance that never joined,
// objects waiting on a finalizer no controller will remove, volumes left attached
// to nodes that are gone, and node-critical DaemonSet pods Karpenter evicted from
// a node it is draining. Every check here is silent on static inputs
// (Model.Live == nil) and judges time only by Model.Live.Now, the moment the
// cluster was read, so a snapshot analysed later gives the same findings.

const (
	// pendingGrace: a pod that fits capacity Karpenter can launch is Pending for
	// a minute or two while the node comes up; only longer is worth a finding.
	pendingGrace = 5 * time.Minute
	// registrationGrace: an instance registers as a node within a couple of
	// minutes of its launch; Karpenter gives up on the NodeClaim after 15.
	registrationGrace = 5 * time.Minute
)

// ---- time ----

// ageAt is how long before now a timestamp was; ok is false when either is
// unknown.
func ageAt(now time.Time, haveNow bool, ts string) (time.Duration, bool) {
	if !haveNow || ts == "" {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		return 0, false
	}
	return now.Sub(t), true
}

// ageText renders a duration the way kubectl prints ages: 45s, 12m, 3h12m, 2d4h.
func ageText(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return fmt.Sprintf("%dh", h)
		}
		return fmt.Sprintf("%dh%dm", h, m)
	}
	days, h := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
	if h == 0 {
		return fmt.Sprintf("%dd", days)
	}
	return fmt.Sprintf("%dd%dh", days, h)
}

// ---- what was read ----

// liveReadNamespace reports whether objects of a namespace were read.
func liveReadNamespace(m *cluster.Model, ns string) bool {
	return m.Live == nil || m.Live.Namespace == "" || m.Live.Namespace == ns
}

func deletionTimestamp(o *cluster.Object) string { return o.String("metadata.deletionTimestamp") }

func creationTimestamp(o *cluster.Object) string { return o.String("metadata.creationTimestamp") }

// podRunsOn reports whether a pod still occupies a node (bound, not finished).
func podRunsOn(p *cluster.Pod, node string) bool {
	return p.Spec.NodeName == node && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ---- commands ----

// ---- cluster identity ----

// ---- Pending pods ----

// ---- nodeclaim-not-registered ----

func conditionOf(cs []cluster.Condition, typ string) *cluster.Condition {
	for i := range cs {
		if cs[i].Type == typ {
			return &cs[i]
		}
	}
	return nil
}

// ---- finalizer-stuck ----

// ---- volumes ----

// ---- disruption-daemonset-evicted ----

// ---- live-resource-skipped ----
