package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"

	"github.com/eksdoctor/eksdoctor/internal/fixplan"
	"github.com/eksdoctor/eksdoctor/internal/outputfs"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/report"
	"github.com/eksdoctor/eksdoctor/source"
)

func newFixCmd(env *Env) *cobra.Command {
	o := &checkOptions{}
	var diff bool
	cmd := &cobra.Command{
		Use:   "fix [PATH...]",
		Short: "Apply the proposed fixes that can be applied safely, then check again",
		Long: `fix analyses the paths as 'eksdoctor check' does and applies, in your own files, every
proposed fix that applies together with the others: edits of one block are made once (two
fixes that rewrite the same kubectl_manifest's yaml_body are merged into one document),
a fix that would undo or clash with another is left out and said, and a fix that does not
apply to the file as it stands is left out. Then it checks again; when the fixes brought
out findings their own findings hid, it fixes those too (three rounds at most), and
reports what is left.

Fixes that are commands (kubectl, helm, aws) are printed, never run. Only files under the
paths given (and the values, variable and chart files named) are written.

With --diff nothing is written: the changes are printed as a unified diff.`,
		Example: `  eksdoctor fix ./infra --diff
  eksdoctor fix ./infra --disable teardown-orphans`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && len(o.charts) == 0 {
				args = []string{"."}
			}
			set, err := o.report.resolve(env)
			if err != nil {
				return err
			}
			set.anchor(args)
			opts := o.sourceOptions()
			opts.Assign = set.assign
			roots := append(append(append(append([]string(nil), args...), o.values...), o.tfvars...), o.charts...)
			paint := color(env, env.Stdout)
			// What is left after the fixes is reported as check reports it.
			left := func(r checkRun, cs []*source.Cluster) error {
				fmt.Fprintf(env.Stdout, "\n%s\n\n", report.Bold(paint, "What is left:"))
				return finish(env, r, cs)
			}
			// A fix can bring out what its finding hid (a NodePool moved to
			// v1 now exists, and its teardown hazard with it): fix again
			// what the files then say, a few rounds at most.
			for round := 1; ; round++ {
				cs, err := source.Load(args, opts)
				if err != nil {
					return loadError(err)
				}
				r := runChecks(set, cs)
				if round > maxFixRounds {
					return left(r, cs)
				}
				plan, err := fixplan.Make("", r.findings)
				if err != nil {
					return err
				}
				for _, f := range plan.Files {
					if !under(f.Path, roots) {
						return usagef("fix: %s is outside the paths given; nothing was written", f.Path)
					}
				}
				if round > 1 {
					if len(plan.Applied) == 0 {
						return left(r, cs)
					}
					fmt.Fprintf(env.Stdout, "\nThe fixes brought out more; fixing again (round %d):\n", round)
				}
				writePlan(env.Stdout, paint, plan, diff)
				if diff {
					fmt.Fprintf(env.Stdout, "\n--diff: nothing was written.\n")
					return nil
				}
				if len(plan.Files) == 0 {
					return left(r, cs)
				}
				for _, f := range plan.Files {
					if err := outputfs.Check(f.Path); err != nil {
						return usagef("fix: %v; nothing was written", err)
					}
				}
				for _, f := range plan.Files {
					if err := outputfs.WriteFile(f.Path, f.After, 0o644); err != nil {
						return fmt.Errorf("fix: %w", err)
					}
				}
			}
		},
	}
	o.report.formats = []string{"text"}
	o.report.paths = true
	o.report.addFlags(cmd)
	cmd.Flags().BoolVar(&diff, "diff", false, "print the changes as a unified diff and write nothing")
	addSourceFlags(cmd, o)
	return cmd
}

// maxFixRounds bounds how often fix applies what the previous round's fixes
// brought out.
const maxFixRounds = 3

// writePlan says what the fixes change, what is left out and why, and the
// commands eksdoctor does not run.
func writePlan(w io.Writer, paint bool, plan *fixplan.Plan, diff bool) {
	var b strings.Builder
	if diff {
		for _, f := range plan.Files {
			b.WriteString(report.Block(unifiedDiff(filepath.ToSlash(f.Path), f.Before, f.After)))
		}
		if len(plan.Files) > 0 {
			b.WriteString("\n")
		}
	}
	files := make([]string, 0, len(plan.Files))
	for _, f := range plan.Files {
		files = append(files, f.Path)
	}
	verb := "Fixes"
	if !diff {
		verb = "Fixed"
	}
	fmt.Fprintf(&b, "%s\n", report.Bold(paint, fmt.Sprintf("%s %s in %s: %s", verb, countOf(len(plan.Applied), "finding"), countOf(len(files), "file"), report.Line(strings.Join(files, ", ")))))
	for _, f := range plan.Applied {
		fmt.Fprintf(&b, "  %-7s %s  %s: %s\n", f.Severity, f.Check, report.Line(findingName(f)), report.Line(f.Fix.Summary))
	}
	if len(plan.Skipped) > 0 {
		fmt.Fprintf(&b, "\n%s\n", report.Bold(paint, "Not applied:"))
		for _, s := range plan.Skipped {
			fmt.Fprintf(&b, "  %-7s %s  %s: %s\n", s.Finding.Severity, s.Finding.Check, report.Line(findingName(s.Finding)), report.Line(s.Why))
		}
	}
	if len(plan.Commands) > 0 {
		fmt.Fprintf(&b, "\n%s\n", report.Bold(paint, "Commands to run yourself (eksdoctor runs none):"))
		for _, c := range plan.Commands {
			fmt.Fprintf(&b, "  # %s %s\n", c.Finding.Check, report.Line(findingName(c.Finding)))
			for _, l := range strings.Split(strings.TrimRight(report.Block(c.Text), "\n"), "\n") {
				fmt.Fprintf(&b, "  %s\n", l)
			}
		}
	}
	io.WriteString(w, report.Guard(b.String()))
}

// unifiedDiff is the unified diff (3 lines of context) of a file's change.
// Lines that occur often (a closing brace) are matched like any other, so an
// insertion before the last brace of a file shows as an insertion.
func unifiedDiff(path string, before, after []byte) string {
	a, b := diffLines(before), diffLines(after)
	var out strings.Builder
	m := difflib.NewMatcherWithJunk(a, b, false, nil)
	for i, g := range m.GetGroupedOpCodes(3) {
		if i == 0 {
			fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", path, path)
		}
		first, last := g[0], g[len(g)-1]
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", diffRange(first.I1, last.I2), diffRange(first.J1, last.J2))
		for _, c := range g {
			if c.Tag == 'e' {
				for _, l := range a[c.I1:c.I2] {
					out.WriteString(" " + l)
				}
				continue
			}
			if c.Tag == 'r' || c.Tag == 'd' {
				for _, l := range a[c.I1:c.I2] {
					out.WriteString("-" + l)
				}
			}
			if c.Tag == 'r' || c.Tag == 'i' {
				for _, l := range b[c.J1:c.J2] {
					out.WriteString("+" + l)
				}
			}
		}
	}
	return out.String()
}

// diffLines splits content into lines that each end with a newline.
func diffLines(content []byte) []string {
	lines := strings.SplitAfter(string(content), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	} else {
		lines[len(lines)-1] += "\n"
	}
	return lines
}

// diffRange is a hunk's range as unified diffs write it.
func diffRange(start, stop int) string {
	switch n := stop - start; n {
	case 1:
		return fmt.Sprintf("%d", start+1)
	case 0:
		return fmt.Sprintf("%d,0", start)
	default:
		return fmt.Sprintf("%d,%d", start+1, n)
	}
}

func findingName(f lint.Finding) string {
	name := f.Object.String()
	if name == "" || f.Object.Kind == "" {
		name = f.Origin.String()
	}
	if f.Cluster != "" {
		name = f.Cluster + ": " + name
	}
	return name
}

func countOf(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// under reports whether a file is one of the paths or inside one of them.
func under(file string, roots []string) bool {
	af, err := filepath.Abs(file)
	if err != nil {
		return false
	}
	for _, r := range roots {
		ar, err := filepath.Abs(r)
		if err != nil {
			continue
		}
		if af == ar || strings.HasPrefix(af, ar+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
