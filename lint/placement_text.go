package lint

import (
	"fmt"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
)

// How placements are told in findings: the scheduler's first clause, the detail source by source, the explain command to run.

// firstClause is the most telling part of a placement summary.
func firstClause(pl *sim.Placement) string {
	s := pl.Summary()
	if len(s) > 240 {
		s = s[:237] + "..."
	}
	return s
}

// placementDetail renders the scheduler-style summary and every source's verdict.
func placementDetail(pl *sim.Placement) string {
	var b strings.Builder
	b.WriteString(pl.Summary())
	if len(pl.Verdicts) > 0 {
		fmt.Fprintf(&b, "\nIn the %s phase:", pl.Phase)
	}
	// Every fitting source, and the first refusing ones of each kind: a finding
	// stays readable on clusters with dozens of node groups and NodePools;
	// `eksdoctor explain` lists them all.
	shown := map[cluster.CapacityKind]int{}
	hidden := map[cluster.CapacityKind]int{}
	for _, v := range pl.Verdicts {
		if v.Result != sim.Fits && shown[v.Source.Kind] >= maxDetailed {
			hidden[v.Source.Kind]++
			continue
		}
		shown[v.Source.Kind]++
		b.WriteString("\n  - " + v.Line())
	}
	for _, k := range []cluster.CapacityKind{cluster.KindNode, cluster.KindNodeGroup, cluster.KindFargate, cluster.KindNodePool, cluster.KindUnseen} {
		if n := hidden[k]; n > 0 {
			fmt.Fprintf(&b, "\n  - and %d more %ss that refuse it (eksdoctor explain %s lists every source)", n, k, explainArg(pl.Workload))
		}
	}
	return b.String()
}

// maxDetailed is how many refusing sources of one kind a finding details.
const maxDetailed = 8

// explainArg is the WORKLOAD argument of `eksdoctor explain` for a workload.
func explainArg(w *cluster.Workload) string {
	return strings.ToLower(w.Object.Kind) + "/" + w.Template.Namespace + "/" + w.Object.Name
}
