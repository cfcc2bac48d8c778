package cli

import (
	"io"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/eksdoctor/eksdoctor/internal/outputfs"
	"github.com/eksdoctor/eksdoctor/source/live"
)

func newSnapshotCmd(env *Env) *cobra.Command {
	lo := &liveOptions{}
	var out string
	cmd := &cobra.Command{
		Use:   "snapshot -o FILE",
		Short: "Save what the checks read from the running cluster, for offline analysis",
		Long: `snapshot reads the cluster as 'eksdoctor cluster' does and writes what it read to FILE: the
objects the checks need (no Secrets, no managedFields), the resources it could not read, and
when it read them. 'eksdoctor check FILE' then reports exactly what 'eksdoctor cluster' reported
on the same state, on any machine, without access to the cluster. The file is JSON, sorted and
stable; it is gzip-compressed when its name ends in .gz. -o - writes to standard output.`,
		Example: `  eksdoctor snapshot -o prod.json.gz --context prod
  eksdoctor check prod.json.gz`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usagef("snapshot needs -o FILE (or -o - for standard output)")
			}
			if out != "-" {
				if err := outputfs.Check(out); err != nil {
					return usagef("-o: %v", err)
				}
			}
			// A snapshot holds the whole cluster: the budget applies to
			// whoever reads it.
			*lo.budget = budgetFlags{Objects: math.MaxInt, Pending: math.MaxInt, Workloads: math.MaxInt}
			m, err := lo.read(cmd.Context(), env)
			if err != nil {
				return err
			}
			if out == "-" {
				return live.WriteSnapshot(env.Stdout, m, false)
			}
			err = outputfs.WriteWith(out, 0o644, func(w io.Writer) error {
				return live.WriteSnapshot(w, m, strings.HasSuffix(strings.ToLower(out), ".gz"))
			})
			if outputfs.IsRefused(err) {
				return usagef("-o: %v", err)
			}
			return err
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (.gz: gzip-compressed; -: standard output)")
	lo.addFlags(cmd.Flags())
	for _, f := range []string{"max-objects", "max-pending", "max-pending-workloads", "max-snapshot-size"} {
		_ = cmd.Flags().MarkHidden(f)
	}
	return cmd
}
