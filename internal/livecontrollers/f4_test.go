//go:build livecontrollers

package livecontrollers

import (
	"context"
	"strings"
	"testing"
	"time"
)

// F4: nodes that never register (the kwok provider creates the Node only after
// the node class's registration delay, as an instance whose kubelet is refused
// would never create it) and nodes that register but never become Ready (the
// node agent leaves them alone). Karpenter gives the NodeClaims the states it
// gives them, times the unregistered one out after fifteen minutes and launches
// another.
func TestNodesThatNeverJoin(t *testing.T) {
	t.Parallel()
	c := shared
	obs := observe(t, c.Config)
	apply(t, c, namespace("f4"),
		deployment("f4", "waits-to-register", 1, "100m", "nodeSelector: {workload: unregistered}"),
		deployment("f4", "waits-for-ready", 1, "100m", "nodeSelector: {workload: notready}"),
	)
	var first string
	waitFor(t, c, "Karpenter launches a NodeClaim of f4-unregistered", 3*time.Minute, func(ctx context.Context) (bool, string) {
		for _, nc := range claimsOf(ctx, c, "f4-unregistered") {
			if s, _ := condition(nc, "Launched"); s == "True" {
				first = nc.GetName()
				return true, ""
			}
		}
		return false, "no launched NodeClaim"
	})
	waitFor(t, c, "the node of f4-notready registers and stays not Ready", 3*time.Minute, func(ctx context.Context) (bool, string) {
		for _, nc := range claimsOf(ctx, c, "f4-notready") {
			if s, _ := condition(nc, "Registered"); s == "True" {
				if s, r := condition(nc, "Initialized"); s != "True" && r == "NodeNotReady" {
					return true, ""
				}
			}
		}
		return false, "no registered, uninitialized NodeClaim"
	})
	// eksdoctor gives a NodeClaim five minutes to register or initialize
	// before it reports it.
	time.Sleep(5*time.Minute + 20*time.Second)
	d := diagnose(t, c.Kubeconfig)
	mine := func(f finding) bool { return f.Object.Namespace == "f4" || strings.Contains(f.Object.Name, "f4-") }
	var fs findings
	for _, f := range d.live {
		if mine(f) {
			fs = append(fs, f)
		}
	}
	sideBySide(t, obs.about(func(f fact) bool { return strings.HasPrefix(f.Object, "Pod/f4/") || strings.Contains(f.Object, "f4-") }), fs)

	// Karpenter's registration timeout: the NodeClaim is deleted fifteen
	// minutes after it was created, and another one launched.
	waitFor(t, c, "Karpenter times the unregistered NodeClaim out and launches another", 13*time.Minute, func(ctx context.Context) (bool, string) {
		for _, nc := range claimsOf(ctx, c, "f4-unregistered") {
			if nc.GetName() != first {
				return true, ""
			}
		}
		return false, "still only " + first
	})
	d = diagnose(t, c.Kubeconfig)
	fs = nil
	for _, f := range d.live {
		if mine(f) {
			fs = append(fs, f)
		}
	}
	sideBySide(t, obs.about(func(f fact) bool { return strings.HasPrefix(f.Object, "Pod/f4/") || strings.Contains(f.Object, "f4-") }), fs)
}
