//go:build livecontrollers

package livecontrollers

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// F1: workloads no NodePool can take, as kube-scheduler and Karpenter decide
// them (an untolerated taint, a label no NodePool defines, a NodePool at its
// limits, requirements that exclude each other, a NodePool Karpenter ignores
// because its node class is missing), and a workload Karpenter launches a node
// for that kube-scheduler then refuses (a startup taint nothing removes).
func TestSchedulingFailures(t *testing.T) {
	t.Parallel()
	c := shared
	obs := observe(t, c.Config)
	apply(t, c, namespace("f1"), deployment("f1", "fill", 1, "1500m", "nodeSelector: {workload: small}"))
	// The first node of f1-small reaches the NodePool's cpu limit.
	waitFor(t, c, "Karpenter launches a node for f1/fill", 3*time.Minute, func(ctx context.Context) (bool, string) {
		return running(podsOf(ctx, c, "f1", "fill"), 1), "pods of f1/fill not running"
	})
	apply(t, c,
		deployment("f1", "untolerated", 2, "100m", "nodeSelector: {workload: gpu}"),
		deployment("f1", "unlabelled", 1, "100m", "nodeSelector: {team: data}"),
		deployment("f1", "over-limit", 1, "1500m", "nodeSelector: {workload: small}"),
		deployment("f1", "on-demand", 1, "100m", "nodeSelector: {workload: spot, karpenter.sh/capacity-type: on-demand}"),
		deployment("f1", "lost", 1, "100m", "nodeSelector: {workload: lost}"),
		// Larger than any of the kwok provider's instance types, which
		// eksdoctor does not know: Karpenter's word decides.
		deployment("f1", "huge", 1, "500", ""),
		deployment("f1", "startup", 1, "100m", "nodeSelector: {workload: startup}"),
	)
	refused := []string{"huge", "lost", "on-demand", "over-limit", "unlabelled", "untolerated"}
	waitFor(t, c, "Karpenter reports the pods it cannot schedule", 3*time.Minute, func(ctx context.Context) (bool, string) {
		for _, app := range refused {
			if len(obs.eventsOf("karpenter", "FailedScheduling", "Pod/f1/"+app+"-")) == 0 {
				return false, "no FailedScheduling event from karpenter for f1/" + app
			}
		}
		return true, ""
	})
	var startupClaim string
	waitFor(t, c, "Karpenter launches a node for f1/startup, which keeps its startup taint", 3*time.Minute, func(ctx context.Context) (bool, string) {
		for _, nc := range claimsOf(ctx, c, "f1-startup") {
			if s, r := condition(nc, "Initialized"); s != "True" && r == "StartupTaintsExist" {
				startupClaim = nc.GetName()
				return true, ""
			}
		}
		return false, "no NodeClaim of f1-startup waiting on its startup taint"
	})

	// serve followed: the first refused pod kube-scheduler marked
	// unschedulable shows in its metrics within seconds.
	if marked := obs.about(func(f fact) bool {
		return f.Kind == "event" && f.By == "default-scheduler" && strings.HasPrefix(f.Text, "FailedScheduling: ") && slices.ContainsFunc(refused, func(app string) bool { return strings.HasPrefix(f.Object, "Pod/f1/"+app+"-") })
	}); len(marked) > 0 {
		serving.followed(t, marked[0], `check="pod-unschedulable"`, `namespace="f1"`, `severity="error"`)
	}
	inScenario := func(f finding) bool { return f.Object.Namespace == "f1" || strings.HasPrefix(f.Object.Name, "f1-") }
	scenarioFacts := func() []fact {
		return obs.about(func(f fact) bool { return strings.HasPrefix(f.Object, "Pod/f1/") || strings.Contains(f.Object, "f1-") })
	}
	d := diagnose(t, c.Kubeconfig)
	sideBySide(t, scenarioFacts(), d.mine(inScenario))
	d.sameKeys(t, inScenario)

	// Every workload Karpenter refused is an error, and eksdoctor words
	// Karpenter's answer as Karpenter worded it in its event.
	want := []string{}
	for _, app := range refused {
		want = append(want, "pod-unschedulable error Deployment/f1/"+app)
		got := obs.eventsOf("karpenter", "FailedScheduling", "Pod/f1/"+app+"-")
		ex := explain(t, c.Kubeconfig, "f1/"+app)
		if ex.Pods == nil || ex.Pods.Placement == nil {
			t.Errorf("explain f1/%s says nothing of its Pending pods", app)
			continue
		}
		switch said := got[len(got)-1]; {
		case ex.Pods.Placement.Karpenter == "":
			// What eksdoctor cannot word (instance types it does not
			// know), it quotes.
			if f := d.live.of(t, "pod-unschedulable", "Deployment/f1/"+app); !strings.Contains(f.Summary, "Karpenter found no NodePool for them: "+strconv.Quote(said)) {
				t.Errorf("f1/%s: eksdoctor neither words nor quotes Karpenter's %q:\n%s", app, said, f.Summary)
			}
		case said != "Failed to schedule pod, "+ex.Pods.Placement.Karpenter:
			t.Errorf("f1/%s: Karpenter said\n  %q\neksdoctor says it would say\n  %q", app, said, "Failed to schedule pod, "+ex.Pods.Placement.Karpenter)
		}
		// The finding quotes what each scheduler said, as it said it.
		f := d.live.of(t, "pod-unschedulable", "Deployment/f1/"+app)
		quoted := func(who, component string) {
			for _, msg := range obs.eventsOf(component, "FailedScheduling", "Pod/f1/"+app+"-") {
				if strings.Contains(f.Detail, who+": "+strconv.Quote(msg)) {
					return
				}
			}
			t.Errorf("f1/%s: the finding quotes none of %s's FailedScheduling messages:\n%s", app, component, f.Detail)
		}
		quoted("kube-scheduler", "default-scheduler")
		quoted("Karpenter", "karpenter")
	}
	if lost := d.live.of(t, "pod-unschedulable", "Deployment/f1/lost"); !strings.Contains(lost.text(), `nodepool "f1-lost" is not Ready (NodeClassReady=False (NodeClassNotFound: NodeClass not found on cluster))`) {
		t.Errorf("f1/lost: the finding does not say why Karpenter ignores f1-lost:\n%s", lost.text())
	}
	// The pods of f1/startup fit f1-startup: nothing to report while its node
	// comes up.
	if diff := cmp.Diff(want, d.live.keys(func(f finding) bool { return inScenario(f) && f.Severity != "info" })); diff != "" {
		t.Errorf("errors and warnings while the startup node comes up (-want +got):\n%s", diff)
	}

	// Five minutes after it registered, the node that keeps its startup taint
	// is reported, with the pod Karpenter nominated to it.
	waitFor(t, c, "five minutes pass since the startup node registered", 7*time.Minute, func(ctx context.Context) (bool, string) {
		for _, nc := range claimsOf(ctx, c, "f1-startup") {
			if nc.GetName() == startupClaim {
				if at, ok := conditionTime(nc, "Registered"); ok && time.Since(at) > 5*time.Minute+5*time.Second {
					return true, ""
				}
			}
		}
		return false, "not yet"
	})
	d = diagnose(t, c.Kubeconfig)
	sideBySide(t, scenarioFacts(), d.mine(inScenario))
	d.sameKeys(t, inScenario)
	want = append([]string{"nodeclaim-not-initialized error NodePool/f1-startup"}, want...)
	if diff := cmp.Diff(want, d.live.keys(func(f finding) bool { return inScenario(f) && f.Severity != "info" })); diff != "" {
		t.Errorf("errors and warnings once the startup node is stuck (-want +got):\n%s", diff)
	}
	stuck := d.live.of(t, "nodeclaim-not-initialized", "NodePool/f1-startup")
	pod := podsOf(context.Background(), c, "f1", "startup")
	for _, part := range []string{
		// Karpenter may have launched a second NodeClaim for the pool (a
		// NodeClaim created before the NodePool's hash annotation reads as
		// drifted): the finding then speaks of both.
		"of NodePool f1-startup registered a node that has not become usable",
		"NodeClaim " + startupClaim + " (node ",
		"startup taint example.com/agent-not-ready:NoSchedule is never removed",
		`StartupTaint "example.com/agent-not-ready:NoSchedule" still exists`, // Karpenter's condition, word for word
		"f1/" + pod[0].Name,
	} {
		if !strings.Contains(stuck.text(), part) {
			t.Errorf("nodeclaim-not-initialized lacks %q:\n%s", part, stuck.text())
		}
	}
	nominated := obs.eventsOf("karpenter", "Nominated", "Pod/f1/"+pod[0].Name)
	if !slices.ContainsFunc(nominated, func(msg string) bool { return strings.Contains(msg, "nodeclaim/f1-startup-") }) {
		t.Errorf("Karpenter did not nominate f1/%s to a NodeClaim of f1-startup: %v", pod[0].Name, nominated)
	}
}
