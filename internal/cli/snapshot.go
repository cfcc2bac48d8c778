package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

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
			m, err := lo.read(cmd.Context(), env)
			if err != nil {
				return err
			}
			if out == "-" {
				return live.WriteSnapshot(env.Stdout, m, false)
			}
			return writeFileAtomic(out, func(f *os.File) error {
				return live.WriteSnapshot(f, m, strings.HasSuffix(strings.ToLower(out), ".gz"))
			})
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (.gz: gzip-compressed; -: standard output)")
	lo.addFlags(cmd.Flags())
	return cmd
}

// writeFileAtomic writes a file through a temporary file in the same directory,
// so an interrupted write never leaves a truncated snapshot under the name.
func writeFileAtomic(path string, write func(*os.File) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
