package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
)

// Compact writes one line per finding, as compilers do:
//
//	infra/main.tf:42: error pod-unschedulable: Deployment shop/web fits no capacity: …
//
// in the order of the text report (objects in the order of their first
// finding, the most severe first within one), every finding listed (never
// grouped). A finding without a file is placed at its object (a running
// cluster's), with its cluster's name when the inputs hold several. With
// ShowSuppressed, the suppressed findings follow, each saying what silenced
// it. Text from the input is escaped as in the text report; only the severity
// is colored, and only with Options.Color.
func Compact(w io.Writer, findings []lint.Finding, opts Options) error {
	p := painter(opts.Color)
	var b strings.Builder
	line := func(f lint.Finding, suffix string) {
		loc := f.Origin.String()
		if !f.Origin.InFile() {
			loc = objectOrFile(f)
		}
		if f.Cluster != "" && !f.Origin.InFile() {
			loc = f.Cluster + ": " + loc
		}
		if loc == "" {
			loc = "-"
		}
		fmt.Fprintf(&b, "%s: %s %s: %s%s\n", Line(loc), p.paint(severityColor(f.Severity), f.Severity.String()), f.Check, Line(f.Summary), suffix)
	}
	for _, f := range textOrder(findings) {
		line(f, "")
	}
	if opts.ShowSuppressed {
		for _, f := range opts.Suppressed {
			line(f, " ("+Line(suppressedBy(f.Suppressed))+")")
		}
	}
	_, err := io.WriteString(w, Guard(b.String()))
	return err
}

// textOrder is the order the text report lists findings in: by object, in
// the order of each object's first finding, the most severe first within one.
func textOrder(findings []lint.Finding) []lint.Finding {
	index := map[string]int{}
	var objects [][]lint.Finding
	for _, f := range findings {
		key := f.Cluster + "\x00" + f.Object.String()
		if f.Object == (cluster.ObjectRef{}) {
			key = f.Cluster + "\x00file:" + f.Origin.File
		}
		i, ok := index[key]
		if !ok {
			i = len(objects)
			index[key] = i
			objects = append(objects, nil)
		}
		objects[i] = append(objects[i], f)
	}
	out := make([]lint.Finding, 0, len(findings))
	for _, fs := range objects {
		sort.SliceStable(fs, func(i, j int) bool { return fs[i].Severity > fs[j].Severity })
		out = append(out, fs...)
	}
	return out
}
