package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/report"
)

// checksJSON writes the checks as a versioned JSON document.
func checksJSON(env *Env, list []*lint.Check) error {
	type doc struct {
		What string `json:"what"`
		Why  string `json:"why"`
		Fix  string `json:"fix"`
	}
	type check struct {
		ID       string `json:"id"`
		Title    string `json:"title"`
		Family   string `json:"family"`
		Severity string `json:"severity"`
		Live     bool   `json:"live"`
		HelpURI  string `json:"helpUri"`
		Doc      doc    `json:"doc"`
	}
	out := struct {
		Version int     `json:"version"`
		Checks  []check `json:"checks"`
	}{Version: report.SchemaVersion, Checks: []check{}}
	for _, c := range list {
		out.Checks = append(out.Checks, check{ID: c.ID, Title: c.Title, Family: c.Family, Severity: c.Severity.String(),
			Live: c.Live, HelpURI: report.CheckDocURL(c.ID), Doc: doc{What: c.Doc.What, Why: c.Doc.Why, Fix: c.Doc.Fix}})
	}
	return report.EncodeJSON(env.Stdout, out)
}

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
					return usagef("%s", unknownCheck(id))
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
			case "json":
				return checksJSON(env, list)
			default:
				return usagef("unknown output format %q (valid: text, markdown, json)", output)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text, markdown, json")
	completeValues(cmd, "output", []string{"text", "markdown", "json"})
	return cmd
}
