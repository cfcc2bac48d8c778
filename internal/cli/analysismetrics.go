package cli

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
)

// analysisMetrics is what one analysis of a running cluster becomes as metric
// values: serve exposes the latest.
type analysisMetrics struct {
	// findings counts the reported findings by check, severity and namespace
	// of the object.
	findings map[findingSeries]int
	// suppressed counts the findings ignore annotations silenced.
	suppressed int
	// pending counts the pods not bound to a node by the reason their
	// PodScheduled condition gives.
	pending map[string]int
	// readErrors holds the resources the analysis could not read.
	readErrors map[string]bool
	// ended is when the analysis ended; took how long it took, reading
	// included.
	ended time.Time
	took  time.Duration
}

// findingSeries is the labels of one eksdoctor_findings series.
type findingSeries struct {
	check, severity, namespace string
}

// measureAnalysis turns an analysis (the model read, its findings reported and
// silenced, when it ended and how long it took) into metric values.
func measureAnalysis(m *cluster.Model, findings, suppressed []lint.Finding, ended time.Time, took time.Duration) analysisMetrics {
	a := analysisMetrics{
		findings:   map[findingSeries]int{},
		suppressed: len(suppressed),
		pending:    map[string]int{},
		readErrors: map[string]bool{},
		ended:      ended,
		took:       took,
	}
	for _, f := range findings {
		a.findings[findingSeries{f.Check, f.Severity.String(), f.Object.Namespace}]++
	}
	for _, p := range m.Pods {
		if p.Status.Phase != corev1.PodPending || p.Spec.NodeName != "" {
			continue
		}
		a.pending[pendingReason(p)]++
	}
	if m.Live != nil {
		for _, s := range m.Live.Skipped {
			a.readErrors[s.Resource] = true
		}
	}
	return a
}

// pendingReason is the reason a pod's PodScheduled condition gives for not
// scheduling it (the last such condition's), or NotYetScheduled when none does.
func pendingReason(p *cluster.Pod) string {
	reason := "NotYetScheduled"
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason != "" {
			reason = c.Reason
		}
	}
	return reason
}

// endedSeconds is when the analysis ended in seconds since 1970, to the
// millisecond.
func (a analysisMetrics) endedSeconds() float64 { return float64(a.ended.UnixMilli()) / 1000 }

// tookSeconds is how long the analysis took in seconds, to the millisecond.
func (a analysisMetrics) tookSeconds() float64 {
	return float64(a.took.Round(time.Millisecond).Milliseconds()) / 1000
}
