package lint

import (
	"testing"

	"github.com/eksdoctor/eksdoctor/sim"
)

// One decision for the configuration and for a running cluster: the same
// evidence gives the same outcome, and what only a running cluster shows
// (time, the controller) only adds outcomes where there is such evidence.
func TestDecidePods(t *testing.T) {
	fit := []sim.Verdict{{Result: sim.Fits}}
	for _, c := range []struct {
		name string
		e    podsEvidence
		want podsOutcome
	}{
		{"capacity takes them", podsEvidence{existing: fit}, podsFine},
		{"nothing takes them", podsEvidence{}, podsFitNothing},
		{"nothing known to take them", podsEvidence{unknown: true}, podsUnverified},
		{"only a NodePool no controller can launch", podsEvidence{blocked: true}, podsNeedController},
		{"unknown wins over a blocked NodePool", podsEvidence{unknown: true, blocked: true}, podsUnverified},
		{"needed before Karpenter, nothing exists", podsEvidence{bootstrap: true}, podsDeadlock},
		{"needed before Karpenter, a node group takes them", podsEvidence{bootstrap: true, existing: fit}, podsFine},
		{"live: a NodePool, the controller down", podsEvidence{live: true, pools: fit, controllerDown: true}, podsNeedController},
		{"live: a NodePool, not waited long", podsEvidence{live: true, pools: fit}, podsFine},
		{"live: a NodePool, waited, nothing came", podsEvidence{live: true, pools: fit, waited: true}, podsNotLaunched},
		{"live: a node takes them, waited", podsEvidence{live: true, existing: fit, waited: true}, podsRefusedUnmodelled},
		{"live: a node takes them, just created", podsEvidence{live: true, existing: fit}, podsFine},
		{"live: the controller down and nothing else", podsEvidence{live: true, controllerDown: true}, podsFitNothing},
		{"static: time does not count", podsEvidence{existing: fit, waited: true}, podsFine},
		// Karpenter's Nominated event: it found capacity where eksdoctor
		// could not judge (another provider's NodePool).
		{"live: nominated, judged unknown, just created", podsEvidence{live: true, unknown: true, nominated: []string{"pool-x"}}, podsFine},
		{"live: nominated, judged unknown, waited", podsEvidence{live: true, unknown: true, nominated: []string{"pool-x"}, waited: true}, podsNotLaunched},
		{"live: nominated, yet nothing known takes them", podsEvidence{live: true, nominated: []string{"pool-x"}}, podsFine},
		// Karpenter's FailedScheduling: it found nothing, where eksdoctor
		// could not judge.
		{"live: Karpenter refused, judged unknown", podsEvidence{live: true, unknown: true, karpenterRefused: true}, podsFitNothing},
	} {
		if got := decidePods(c.e); got != c.want {
			t.Errorf("%s: decidePods = %d, want %d", c.name, got, c.want)
		}
	}
}
