package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/eksdoctor/eksdoctor/lint"
)

func newChecksCmd(env *Env) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "checks [ID...]",
		Short: "List the checks with their documentation",
		RunE: func(cmd *cobra.Command, args []string) error {
			var list []*lint.Check
			if len(args) == 0 {
				list = lint.Checks()
			}
			for _, id := range args {
				c, ok := lint.Lookup(id)
				if !ok {
					return usagef("unknown check %q (valid: %s)", id, strings.Join(checkIDs(), ", "))
				}
				list = append(list, c)
			}
			switch output {
			case "text":
				for _, c := range list {
					if len(args) == 0 {
						fmt.Fprintf(env.Stdout, "%-30s %-7s %-5s %s\n", c.ID, c.Severity, c.Family, c.Title)
						continue
					}
					fmt.Fprint(env.Stdout, lint.Markdown(c))
				}
			case "markdown":
				for _, c := range list {
					fmt.Fprint(env.Stdout, lint.Markdown(c))
				}
			default:
				return usagef("unknown output format %q (valid: text, markdown)", output)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or markdown")
	return cmd
}
