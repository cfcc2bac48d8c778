package report

import (
	"encoding/json"
	"io"

	"github.com/eksdoctor/eksdoctor/lint"
)

// SchemaVersion is the version of the JSON output; it changes only when a field
// is removed or changes meaning.
const SchemaVersion = 1

type jsonReport struct {
	Version  int           `json:"version"`
	Findings []jsonFinding `json:"findings"`
	Summary  jsonSummary   `json:"summary"`
}

type jsonFinding struct {
	// Cluster names the cluster when the inputs hold several.
	Cluster  string     `json:"cluster,omitempty"`
	Check    string     `json:"check"`
	Severity string     `json:"severity"`
	Object   jsonObject `json:"object"`
	Origin   jsonOrigin `json:"origin"`
	Summary  string     `json:"summary"`
	Detail   string     `json:"detail"`
	Fix      *jsonFix   `json:"fix,omitempty"`
}

type jsonObject struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

type jsonOrigin struct {
	File string `json:"file"`
	Line int    `json:"line"`
}

type jsonFix struct {
	Summary string     `json:"summary"`
	Edits   []jsonEdit `json:"edits"`
}

type jsonEdit struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Format string `json:"format"`
	Text   string `json:"text"`
}

type jsonSummary struct {
	Error   int `json:"error"`
	Warning int `json:"warning"`
	Info    int `json:"info"`
}

// JSON writes findings in the documented JSON schema.
func JSON(w io.Writer, findings []lint.Finding) error {
	r := jsonReport{Version: SchemaVersion, Findings: []jsonFinding{}}
	for _, f := range findings {
		jf := jsonFinding{
			Cluster:  f.Cluster,
			Check:    f.Check,
			Severity: f.Severity.String(),
			Object:   jsonObject{Kind: f.Object.Kind, Namespace: f.Object.Namespace, Name: f.Object.Name},
			Origin:   jsonOrigin{File: f.Origin.File, Line: f.Origin.Line},
			Summary:  f.Summary,
			Detail:   f.Detail,
		}
		if f.Fix != nil {
			jf.Fix = &jsonFix{Summary: f.Fix.Summary, Edits: []jsonEdit{}}
			for _, e := range f.Fix.Edits {
				jf.Fix.Edits = append(jf.Fix.Edits, jsonEdit{File: e.File, Line: e.Line, Format: e.Format, Text: e.Text})
			}
		}
		r.Findings = append(r.Findings, jf)
	}
	c := lint.Count(findings)
	r.Summary = jsonSummary{Error: c[lint.Error], Warning: c[lint.Warning], Info: c[lint.Info]}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
