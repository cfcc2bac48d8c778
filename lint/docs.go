package lint

import (
	"fmt"
	"strings"
)

// Markdown renders a check's documentation; docs/checks/<id>.md is exactly this.
func Markdown(c *Check) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", c.ID)
	fmt.Fprintf(&b, "**%s** · severity `%s` · family %s", c.Title, c.Severity, c.Family)
	if c.Live {
		b.WriteString(" · live clusters")
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "## What it reports\n\n%s\n\n", c.Doc.What)
	fmt.Fprintf(&b, "## Why it matters\n\n%s\n\n", c.Doc.Why)
	fmt.Fprintf(&b, "## How to fix\n\n%s\n\n", c.Doc.Fix)
	if c.Doc.Differences != "" {
		fmt.Fprintf(&b, "## Deliberate differences\n\n%s\n\n", c.Doc.Differences)
	}
	if ex, ok := ExampleOf(c.ID); ok {
		fmt.Fprintf(&b, "## Example\n\n%s, reported:\n\n```%s\n%s\n```\n\nFixed, clean:\n\n```%s\n%s\n```\n\n",
			ex.File, ex.Format, strings.TrimRight(ex.Before, "\n"), ex.Format, strings.TrimRight(ex.After, "\n"))
		if len(ex.Context) > 0 {
			fmt.Fprintf(&b, "The example also reads %s; all of it is in [`lint/examples/%s.txtar`](../../lint/examples/%s.txtar), which the tests run.\n\n", strings.Join(ex.Context, ", "), c.ID, c.ID)
		} else {
			fmt.Fprintf(&b, "The example is [`lint/examples/%s.txtar`](../../lint/examples/%s.txtar), which the tests run.\n\n", c.ID, c.ID)
		}
	}
	fmt.Fprintf(&b, "Silence it on one object with the annotation `eksdoctor.io/ignore: %s`, or everywhere with `--disable %s`.\n", c.ID, c.ID)
	return b.String()
}

// Index renders docs/checks/README.md: the list of checks.
func Index(checks []*Check) string {
	var b strings.Builder
	b.WriteString("# Checks\n\nGenerated from the check registry (`go test ./lint -run TestDocs -update` regenerates it).\n\n| ID | family | severity | title |\n|---|---|---|---|\n")
	for _, c := range checks {
		fmt.Fprintf(&b, "| [`%s`](%s.md) | %s | %s | %s |\n", c.ID, c.ID, c.Family, c.Severity, c.Title)
	}
	return b.String()
}
