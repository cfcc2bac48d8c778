package report

import (
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
)

// Explanation is where one workload's (or live pod's) pods can run, source by
// source, phase by phase: the document explain writes.
type Explanation struct {
	// Cluster names the cluster the workload belongs to when the inputs hold
	// several.
	Cluster   string         `json:"cluster,omitempty"`
	Object    string         `json:"object"`
	Origin    Origin         `json:"origin"`
	Component string         `json:"component,omitempty"`
	Bootstrap string         `json:"bootstrap,omitempty"`
	Phases    []ExplainPhase `json:"phases"`
	// Pods is what a running cluster shows of the workload's pods.
	Pods *ExplainPods `json:"pods,omitempty"`
	// Disruption lists what keeps Karpenter from disrupting the nodes the
	// workload runs on (or, for a NodePool, its nodes); Undisrupted is set
	// for a NodePool explained, whose nodes nothing found blocks.
	Disruption  []ExplainBlock `json:"disruption,omitempty"`
	Undisrupted bool           `json:"undisrupted,omitempty"`
}

// ExplainBlock is one thing that keeps Karpenter from disrupting nodes: the
// blocking object, why, in Karpenter's words, and the NodePools (and, live,
// nodes) it pins.
type ExplainBlock struct {
	Cause     string   `json:"cause"`
	Object    string   `json:"object"`
	Origin    *Origin  `json:"origin,omitempty"`
	Reason    string   `json:"reason"`
	Karpenter string   `json:"karpenter"`
	Blocks    string   `json:"blocks"`
	NodePools []string `json:"nodePools"`
	Nodes     []string `json:"nodes,omitempty"`
	// Drain is how long a drain of the nodes waits on it: "forever", a
	// duration, or "" when it does not hold the drain.
	Drain string `json:"drain,omitempty"`
}

// ExplainPods is the live pods of a workload: how many run, which are Pending, what
// the scheduler said about them and how eksdoctor explains the first one.
type ExplainPods struct {
	Total         int      `json:"total"`
	Running       int      `json:"running"`
	Pending       []string `json:"pending"`
	Scheduler     string   `json:"scheduler,omitempty"`
	SchedulerFrom string   `json:"schedulerFrom,omitempty"`
	// Karpenter is what Karpenter said of them (its FailedScheduling event).
	Karpenter     string        `json:"karpenter,omitempty"`
	KarpenterFrom string        `json:"karpenterFrom,omitempty"`
	Placement     *ExplainPhase `json:"placement,omitempty"`
}

// ExplainPhase is one placement: the result and each source's verdict.
type ExplainPhase struct {
	Phase   string `json:"phase"`
	Result  string `json:"result"`
	Summary string `json:"summary"`
	// Karpenter is Karpenter's own error for the pod, word for word, when
	// no NodePool launches a node for it.
	Karpenter string            `json:"karpenter,omitempty"`
	Fargate   string            `json:"fargateProfile,omitempty"`
	Requests  map[string]string `json:"requests"`
	Sources   []ExplainSource   `json:"sources"`
}

// ExplainSource is one capacity source's verdict and reasons.
type ExplainSource struct {
	Kind          string   `json:"kind"`
	Name          string   `json:"name"`
	Origin        *Origin  `json:"origin,omitempty"`
	Result        string   `json:"result"`
	Reasons       []string `json:"reasons,omitempty"`
	InstanceTypes []string `json:"instanceTypes,omitempty"`
}

// ExplainJSON writes explanations as a versioned JSON document:
// {"version": 1, "explanations": [...]}.
func ExplainJSON(w io.Writer, docs []Explanation) error {
	if docs == nil {
		docs = []Explanation{}
	}
	return EncodeJSON(w, ExplainDocument{SchemaVersion, docs})
}

// ExplainDocument is what explain -o json writes.
type ExplainDocument struct {
	Version      int           `json:"version"`
	Explanations []Explanation `json:"explanations"`
}

// ExplainText writes explanations as text; live titles the phase as the cluster
// as it is, paint adds terminal colors.
func ExplainText(w io.Writer, docs []Explanation, live, paint bool) error {
	p := paint
	var b strings.Builder
	for i, d := range docs {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s  %s\n", Bold(p, Line(d.Object)), Line(cluster.Origin{File: d.Origin.File, Line: d.Origin.Line}.String()))
		if d.Cluster != "" {
			fmt.Fprintf(&b, "  cluster: %s\n", Line(d.Cluster))
		}
		if d.Component != "" {
			fmt.Fprintf(&b, "  component: %s\n", Line(d.Component))
		}
		if d.Bootstrap != "" {
			fmt.Fprintf(&b, "  needed before Karpenter: %s\n", Line(d.Bootstrap))
		}
		for _, ph := range d.Phases {
			title := ph.Phase + " phase"
			if live {
				title = "in the cluster as it is"
			}
			fmt.Fprintf(&b, "\n  %s: %s\n", title, resultWord(p, ph.Result))
			writeSources(&b, p, ph, "    ")
		}
		writeDisruption(&b, d)
		if pd := d.Pods; pd != nil {
			fmt.Fprintf(&b, "\n  pods: %d, running %d, Pending %d", pd.Total, pd.Running, len(pd.Pending))
			if len(pd.Pending) > 0 {
				fmt.Fprintf(&b, " (%s)", Line(strings.Join(pd.Pending, ", ")))
			}
			b.WriteString("\n")
			if pd.Scheduler != "" {
				fmt.Fprintf(&b, "    kube-scheduler: %q\n      (%s)\n", pd.Scheduler, Line(pd.SchedulerFrom))
			} else if len(pd.Pending) > 0 {
				b.WriteString("    kube-scheduler: no FailedScheduling event or PodScheduled message was read (events expire after an hour)\n")
			}
			if pd.Karpenter != "" {
				fmt.Fprintf(&b, "    Karpenter: %q\n      (%s)\n", pd.Karpenter, Line(pd.KarpenterFrom))
			}
			if pl := pd.Placement; pl != nil {
				fmt.Fprintf(&b, "    eksdoctor, for pod %s: %s\n", Line(pd.Pending[0]), resultWord(p, pl.Result))
				writeSources(&b, p, *pl, "      ")
			}
		}
	}
	_, err := fmt.Fprint(w, Guard(b.String()))
	return err
}

// writeDisruption renders what keeps Karpenter from disrupting the nodes.
func writeDisruption(b *strings.Builder, d Explanation) {
	if d.Undisrupted {
		b.WriteString("\n  disruption: nothing found keeps Karpenter from disrupting its nodes\n")
	}
	if len(d.Disruption) == 0 {
		return
	}
	b.WriteString("\n  disruption: blocked\n")
	for _, bl := range d.Disruption {
		where := "nodes of NodePool " + strings.Join(bl.NodePools, ", ")
		if len(bl.Nodes) > 0 {
			where += " (" + strings.Join(bl.Nodes, ", ") + ")"
		}
		fmt.Fprintf(b, "    - %s pins the %s: %s\n", Line(bl.Object), Line(where), Line(bl.Reason))
		fmt.Fprintf(b, "        Karpenter: %s\n", Line(bl.Karpenter))
		fmt.Fprintf(b, "        blocks %s\n", Line(bl.Blocks))
		if bl.Drain != "" {
			fmt.Fprintf(b, "        a drain of these nodes waits %s\n", Line(bl.Drain))
		}
	}
}

// writeSources renders a placement's summary and its sources' verdicts.
func writeSources(b *strings.Builder, paint bool, ph ExplainPhase, indent string) {
	fmt.Fprintf(b, "%s%s\n", indent, Line(ph.Summary))
	if ph.Karpenter != "" {
		fmt.Fprintf(b, "%sKarpenter would log: %s\n", indent, Line(ph.Karpenter))
	}
	for _, src := range ph.Sources {
		line := fmt.Sprintf("%s %q", src.Kind, src.Name)
		fmt.Fprintf(b, "%s- %s: %s", indent, line, resultWord(paint, src.Result))
		if len(src.InstanceTypes) > 0 && src.Result == "fits" {
			fmt.Fprintf(b, " (e.g. %s)", Line(strings.Join(src.InstanceTypes, ", ")))
		}
		b.WriteString("\n")
		for _, r := range src.Reasons {
			fmt.Fprintf(b, "%s    %s\n", indent, Line(r))
		}
	}
}

// Phase renders one placement.
func Phase(pl *sim.Placement) ExplainPhase {
	return phase(pl, false)
}

// MapPhase renders one placement for the capacity map: as Phase, but when
// collapse is set its nodes are the one "nodes" source the map shows of a
// cluster of many (see CollapsesNodes), counted straight from the verdicts,
// so that a cluster of thousands of nodes is not rendered node by node for
// every workload first.
func MapPhase(pl *sim.Placement, collapse bool) ExplainPhase {
	return phase(pl, collapse)
}

// CollapsesNodes reports whether the capacity map shows the nodes of a
// cluster as one column when its placements name n nodes in all.
func CollapsesNodes(n int) bool { return n > maxNodeColumns }

func phase(pl *sim.Placement, collapse bool) ExplainPhase {
	pj := ExplainPhase{Phase: pl.Phase.String(), Result: pl.Result().String(), Summary: pl.Summary(), Requests: map[string]string{}}
	pj.Karpenter = pl.KarpenterMessage()
	if pl.Fargate != nil {
		pj.Fargate = pl.Fargate.Name
	}
	for k, q := range pl.Requests {
		pj.Requests[string(k)] = q.String()
	}
	var nodes nodeCount
	for _, v := range pl.Verdicts {
		if collapse && v.Source.Kind == cluster.KindNode {
			nodes.add(v)
			continue
		}
		sj := ExplainSource{Kind: v.Source.Kind.String(), Name: v.Source.Name, Origin: originPtr(v.Source.Origin()), Result: v.Result.String(), InstanceTypes: v.InstanceTypes}
		for _, r := range v.Reasons {
			sj.Reasons = append(sj.Reasons, r.Text())
		}
		pj.Sources = append(pj.Sources, sj)
	}
	if nodes.total > 0 {
		pj.Sources = append([]ExplainSource{nodes.source()}, pj.Sources...)
	}
	return pj
}

// Pods sums up live pods; the first unscheduled Pending pod is placed with its
// own spec, beside what the scheduler said.
func Pods(s *sim.Simulator, pods []*cluster.Pod) *ExplainPods {
	d := &ExplainPods{Total: len(pods), Pending: []string{}}
	var pending []*cluster.Pod
	for _, p := range pods {
		switch {
		case p.Status.Phase == corev1.PodRunning:
			d.Running++
		case p.Status.Phase == corev1.PodPending && p.Spec.NodeName == "":
			pending = append(pending, p)
			d.Pending = append(d.Pending, p.Object.Name)
		}
	}
	if len(pending) == 0 {
		return d
	}
	q := cluster.SchedulerMessage(pending)
	d.Scheduler, d.SchedulerFrom = q.Message, q.From
	k := cluster.KarpenterSaid(pending)
	d.Karpenter, d.KarpenterFrom = k.Message, k.From
	pl := Phase(s.PlacePod(pending[0]))
	d.Placement = &pl
	return d
}

// Bold puts s in terminal bold when on.
func Bold(on bool, s string) string {
	if !on {
		return s
	}
	return "\x1b[1m" + s + "\x1b[0m"
}

func resultWord(on bool, r string) string {
	if !on {
		return r
	}
	switch r {
	case "fits":
		return "\x1b[32m" + r + "\x1b[0m"
	case "refuses":
		return "\x1b[31m" + r + "\x1b[0m"
	}
	return "\x1b[33m" + r + "\x1b[0m"
}

func originPtr(o cluster.Origin) *Origin {
	if o.IsZero() {
		return nil
	}
	j := OriginOf(o)
	return &j
}
