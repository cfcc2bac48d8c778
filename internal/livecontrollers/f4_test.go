//go:build livecontrollers

package livecontrollers

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
	mine := func(f finding) bool { return f.Object.Namespace == "f4" || strings.HasPrefix(f.Object.Name, "f4-") }
	facts := func() []fact {
		return obs.about(func(f fact) bool { return strings.HasPrefix(f.Object, "Pod/f4/") || strings.Contains(f.Object, "f4-") })
	}
	d := diagnose(t, c.Kubeconfig)
	sideBySide(t, facts(), d.mine(mine))
	d.sameKeys(t, mine)
	// The Pending pods wait for these NodeClaims: the NodeClaims are the
	// findings, not the pods.
	want := []string{"nodeclaim-not-initialized error NodePool/f4-notready", "nodeclaim-not-registered error KWOKNodeClass/f4-unregistered"}
	if diff := cmp.Diff(want, d.live.keys(mine)); diff != "" {
		t.Errorf("findings five minutes on (-want +got):\n%s", diff)
	}
	unreg := d.live.of(t, "nodeclaim-not-registered", "KWOKNodeClass/f4-unregistered")
	waiting := podsOf(context.Background(), c, "f4", "waits-to-register")
	for _, part := range []string{
		"NodeClaim " + first + " of KWOKNodeClass f4-unregistered launched an instance that has not registered as a node for 5m",
		"Registered Unknown (NodeNotFound: Node not registered with cluster)", // Karpenter's condition
		"belongs to the karpenter.kwok.sh provider, whose node identities eksdoctor does not model",
		"event DisruptionBlocked: Nodeclaim does not have an associated node", // Karpenter's event
		"f4/" + waiting[0].Name,
	} {
		if !strings.Contains(unreg.text(), part) {
			t.Errorf("nodeclaim-not-registered lacks %q:\n%s", part, unreg.text())
		}
	}
	notReady := d.live.of(t, "nodeclaim-not-initialized", "NodePool/f4-notready")
	for _, part := range []string{
		"the node never became Ready (Ready=Unknown (NodeStatusNeverUpdated: Kubelet never posted node status.))", // kube-controller-manager's words
		"Initialized Unknown (NodeNotReady: Node status is NotReady)",                                             // Karpenter's
	} {
		if !strings.Contains(notReady.text(), part) {
			t.Errorf("nodeclaim-not-initialized lacks %q:\n%s", part, notReady.text())
		}
	}

	// Karpenter's registration timeout: the NodeClaim is deleted fifteen
	// minutes after it was created, and another one launched.
	var second string
	waitFor(t, c, "Karpenter times the unregistered NodeClaim out and launches another", 13*time.Minute, func(ctx context.Context) (bool, string) {
		for _, nc := range claimsOf(ctx, c, "f4-unregistered") {
			if nc.GetName() != first {
				second = nc.GetName()
				return true, ""
			}
		}
		return false, "still only " + first
	})
	if got := obs.about(func(f fact) bool { return f.Kind == "deleted" && f.Object == "NodeClaim/"+first }); len(got) == 0 {
		t.Errorf("%s was replaced without being deleted", first)
	}
	d = diagnose(t, c.Kubeconfig)
	sideBySide(t, facts(), d.mine(mine))
	d.sameKeys(t, mine)
	if diff := cmp.Diff(want, d.live.keys(mine)); diff != "" {
		t.Errorf("findings once Karpenter replaced the NodeClaim (-want +got):\n%s", diff)
	}
	unreg = d.live.of(t, "nodeclaim-not-registered", "KWOKNodeClass/f4-unregistered")
	for _, part := range []string{
		"NodeClaim " + second + " of KWOKNodeClass f4-unregistered",
		"1 earlier NodeClaim(s) of its NodePool went the same way and were replaced",
		first + " (launched ",
	} {
		if !strings.Contains(unreg.text(), part) {
			t.Errorf("once replaced, nodeclaim-not-registered lacks %q:\n%s", part, unreg.text())
		}
	}
}
