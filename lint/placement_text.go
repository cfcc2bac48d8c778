package lint

import (
	"fmt"
	"strings"

	"github.com/eksdoctor/eksdoctor/sim"
)

// How placements are told in findings: the scheduler's first clause, the detail source by source.

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
	return pl.Text("detail", func() string { return wordDetail(pl) })
}

func wordDetail(pl *sim.Placement) string {
	var b strings.Builder
	b.WriteString(pl.Summary())
	if len(pl.Verdicts) > 0 {
		fmt.Fprintf(&b, "\nIn the %s phase:", pl.Phase)
	}
	// Every fitting source, and the refusing ones nearest first; a kind with
	// more than maxDetailed refusing sources (dozens of node groups, hundreds
	// of NodePools) has those that refuse for the same reason on one line.
	for _, l := range pl.Grouped(maxDetailed) {
		b.WriteString("\n  - " + l)
	}
	return b.String()
}

// maxDetailed is how many refusing sources of one kind a finding details.
const maxDetailed = 8
