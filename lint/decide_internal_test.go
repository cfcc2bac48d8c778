package lint

import (
	"testing"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/identity"
	"github.com/eksdoctor/eksdoctor/sim"
)

// The decisions of checks with a live side take evidence gathered from the
// configuration or from a running cluster; these cases pin what each input
// decides, and that the same evidence decides alike from either side.

func TestDecideSelection(t *testing.T) {
	fp := &cluster.FargateProfile{Name: "karpenter"}
	live := &missedGroup{}
	near := []nearMiss{{profile: fp}}
	for _, c := range []struct {
		name string
		e    selectionEvidence
		want selectionOutcome
	}{
		{name: "taken by a profile", e: selectionEvidence{missed: false}, want: selectionFine},
		{name: "kept off, configuration: pod-unschedulable's", e: selectionEvidence{missed: true, selecting: fp, keptOff: true, ec2: sim.Refuses}, want: selectionFine},
		{name: "kept off, running cluster", e: selectionEvidence{missed: true, selecting: fp, keptOff: true, ec2: sim.Refuses, live: live}, want: selectionKeptOff},
		{name: "selected now, running cluster", e: selectionEvidence{missed: true, selecting: fp, ec2: sim.Unknown, live: live}, want: selectionTooEarly},
		{name: "selectors unknown, only Fargate", e: selectionEvidence{missed: true, profilesUnknown: true, ec2: sim.Refuses, noEC2: true}, want: selectionUnverified},
		{name: "selectors unknown, EC2 exists", e: selectionEvidence{missed: true, profilesUnknown: true, ec2: sim.Refuses}, want: selectionFine},
		{name: "near miss, EC2 runs them", e: selectionEvidence{missed: true, ec2: sim.Fits, near: near}, want: selectionElsewhere},
		{name: "near miss, nothing runs them", e: selectionEvidence{missed: true, ec2: sim.Refuses, near: near}, want: selectionNone},
		{name: "only Fargate, configuration", e: selectionEvidence{missed: true, ec2: sim.Refuses, noEC2: true}, want: selectionNone},
		{name: "only Fargate, running cluster", e: selectionEvidence{missed: true, ec2: sim.Refuses, noEC2: true, live: live}, want: selectionNone},
		{name: "other nodes, running cluster: pod-unschedulable's", e: selectionEvidence{missed: true, ec2: sim.Unknown, live: live}, want: selectionFine},
		{name: "EC2 refuses, nothing meant for Fargate", e: selectionEvidence{missed: true, ec2: sim.Refuses}, want: selectionFine},
	} {
		if got := decideSelection(c.e); got != c.want {
			t.Errorf("%s: decideSelection = %d, want %d", c.name, got, c.want)
		}
	}
	// Only an outcome that leaves the pods nowhere else explains them.
	if !(selectionEvidence{ec2: sim.Refuses}).explainsPods(selectionNone) {
		t.Error("no profile and no other capacity: the finding should explain the pods")
	}
	if (selectionEvidence{ec2: sim.Unknown}).explainsPods(selectionTooEarly) || (selectionEvidence{ec2: sim.Refuses}).explainsPods(selectionUnverified) {
		t.Error("other capacity may take the pods, or nothing is certain: the finding should not explain them")
	}
}

func TestDecideToleration(t *testing.T) {
	fp := &cluster.FargateProfile{Name: "apps"}
	live := &turnedAwayGroup{}
	for _, c := range []struct {
		name string
		e    tolerationEvidence
		want tolerationOutcome
	}{
		{name: "no toleration", e: tolerationEvidence{}, want: tolerationFine},
		{name: "a profile takes them", e: tolerationEvidence{tolerates: true, profile: fp}, want: tolerationWrongFix},
		{name: "no profile, configuration", e: tolerationEvidence{tolerates: true}, want: tolerationStrands},
		{name: "no profile, turned away", e: tolerationEvidence{tolerates: true, turnedAway: true, live: live}, want: tolerationStrands},
		{name: "no profile, not turned away yet", e: tolerationEvidence{tolerates: true, live: live}, want: tolerationFine},
	} {
		if got := decideToleration(c.e); got != c.want {
			t.Errorf("%s: decideToleration = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestDecideProfileRole(t *testing.T) {
	unauthorized := &identity.Authorization{Outcome: identity.Unauthorized}
	unverified := &identity.Authorization{Outcome: identity.Unverified}
	blocked := []*cluster.Pod{{}}
	for _, c := range []struct {
		name string
		e    roleEvidence
		want roleOutcome
	}{
		{name: "only named by the cluster, blocked", e: roleEvidence{blocked: blocked}, want: roleBlocked},
		{name: "declared and blocked", e: roleEvidence{auth: unauthorized, blocked: blocked}, want: roleBlocked},
		{name: "declared, unauthorized", e: roleEvidence{auth: unauthorized}, want: roleUnauthorized},
		{name: "declared, unverified, aws-auth written whole", e: roleEvidence{auth: unverified, replaced: true}, want: roleUnverified},
		{name: "declared, unverified, aws-auth left to EKS", e: roleEvidence{auth: unverified}, want: roleFine},
		{name: "declared without a role", e: roleEvidence{}, want: roleFine},
	} {
		if got := decideProfileRole(c.e); got != c.want {
			t.Errorf("%s: decideProfileRole = %d, want %d", c.name, got, c.want)
		}
	}
}
