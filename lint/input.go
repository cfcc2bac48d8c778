package lint

var invalidInput = &Check{
	ID:       "invalid-input",
	Title:    "Input could not be read",
	Family:   "input",
	Severity: Error,
	Doc: Doc{
		What: "A file, document or object could not be parsed or decoded. The finding names the file and line; every other input is still analysed.",
		Why:  "Whatever the unreadable input declares (a NodePool, a taint, a role mapping) is missing from the analysis, so other findings may be incomplete; and kubectl, Helm or Terraform would reject the same input.",
		Fix:  "Correct the syntax or the field type at the reported line.",
		Before: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
   namespace: default   # indentation error`,
		After: `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: default`,
		Format: "yaml",
	},
	Run: func(p *Pass) {
		for _, pr := range p.Model.Problems {
			p.Report(Finding{
				Object:  pr.Object,
				Origin:  pr.Origin,
				Summary: pr.Message,
			})
		}
	},
}
