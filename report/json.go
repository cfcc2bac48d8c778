package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/textpos"
	"github.com/eksdoctor/eksdoctor/lint"
)

// SchemaVersion is the version of the JSON output; it changes only when a field
// is removed or changes meaning.
const SchemaVersion = 1

type jsonReport struct {
	Version  int           `json:"version"`
	Findings []jsonFinding `json:"findings"`
	Summary  jsonSummary   `json:"summary"`
	// Suppressed lists the suppressed findings (--show-suppressed).
	Suppressed []jsonFinding `json:"suppressed,omitempty"`
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
	// Fingerprint identifies the finding across runs (lint.Fingerprint): what
	// --baseline matches.
	Fingerprint string `json:"fingerprint"`
	// SuppressedBy says what silenced a suppressed finding.
	SuppressedBy *jsonSuppressed `json:"suppressedBy,omitempty"`
}

type jsonSuppressed struct {
	// By is annotation, comment or baseline.
	By     string     `json:"by"`
	Origin jsonOrigin `json:"origin"`
	Reason string     `json:"reason,omitempty"`
}

type jsonObject struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Origin is a place in the input, as every JSON document writes it.
type Origin = jsonOrigin

// OriginOf is an origin as JSON writes it.
func OriginOf(o cluster.Origin) Origin { return Origin{File: o.File, Line: o.Line} }

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
	// Suppressed counts the findings ignore annotations and comments silenced;
	// Baseline those the baseline holds.
	Suppressed int `json:"suppressed"`
	Baseline   int `json:"baseline"`
}

// JSON writes findings in the documented JSON schema.
func JSON(w io.Writer, findings []lint.Finding, opts ...Options) error {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	r := jsonReport{Version: SchemaVersion, Findings: []jsonFinding{}}
	for _, f := range findings {
		r.Findings = append(r.Findings, toJSON(f))
	}
	if o.ShowSuppressed {
		for _, f := range o.Suppressed {
			r.Suppressed = append(r.Suppressed, toJSON(f))
		}
	}
	c := lint.Count(findings)
	n := lint.Suppressions(o.Suppressed)
	r.Summary = jsonSummary{Error: c[lint.Error], Warning: c[lint.Warning], Info: c[lint.Info],
		Suppressed: n["annotation"] + n["comment"], Baseline: n["baseline"]}
	return EncodeJSON(w, r)
}

func toJSON(f lint.Finding) jsonFinding {
	jf := jsonFinding{
		Cluster:     f.Cluster,
		Check:       f.Check,
		Severity:    f.Severity.String(),
		Object:      jsonObject{Kind: f.Object.Kind, Namespace: f.Object.Namespace, Name: f.Object.Name},
		Origin:      OriginOf(f.Origin),
		Summary:     f.Summary,
		Detail:      f.Detail,
		Fingerprint: lint.Fingerprint(f),
	}
	if f.Fix != nil {
		jf.Fix = &jsonFix{Summary: f.Fix.Summary, Edits: []jsonEdit{}}
		for _, e := range f.Fix.Edits {
			jf.Fix.Edits = append(jf.Fix.Edits, jsonEdit{File: e.File, Line: e.Line, Format: e.Format, Text: e.Text})
		}
	}
	if s := f.Suppressed; s != nil {
		jf.SuppressedBy = &jsonSuppressed{By: s.By, Origin: OriginOf(s.Origin), Reason: s.Reason}
	}
	return jf
}

// Baseline is a previous JSON report: the fingerprints of its findings, with
// how many times each occurs.
type Baseline map[string]int

// ReadBaseline reads a report written by -o json. A finding without a
// fingerprint (a report from before they were written) is fingerprinted from
// its check, cluster, object and summary, as lint.Fingerprint does.
func ReadBaseline(data []byte) (Baseline, error) {
	var r jsonReport
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, jsonError(data, err)
	}
	if r.Version == 0 || r.Findings == nil {
		return nil, errors.New("not a report written by eksdoctor -o json (no version and findings)")
	}
	if r.Version > SchemaVersion {
		return nil, fmt.Errorf("report version %d is newer than this eksdoctor reads (%d)", r.Version, SchemaVersion)
	}
	b := Baseline{}
	for _, f := range r.Findings {
		fp := f.Fingerprint
		if fp == "" {
			fp = lint.Fingerprint(lint.Finding{Check: f.Check, Cluster: f.Cluster, Summary: f.Summary,
				Object: cluster.ObjectRef{Kind: f.Object.Kind, Namespace: f.Object.Namespace, Name: f.Object.Name}})
		}
		b[fp]++
	}
	return b, nil
}

// Split separates the findings the baseline holds (as many of each as it
// holds) from the new ones.
func (b Baseline) Split(fs []lint.Finding) (fresh, known []lint.Finding) {
	left := maps.Clone(b)
	for _, f := range fs {
		fp := lint.Fingerprint(f)
		if left[fp] > 0 {
			left[fp]--
			known = append(known, f)
			continue
		}
		fresh = append(fresh, f)
	}
	return fresh, known
}

// jsonError words a JSON decoding error with the line it is on.
func jsonError(data []byte, err error) error {
	var off int64 = -1
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		off = syn.Offset
	case errors.As(err, &typ):
		off = typ.Offset
	}
	if off < 0 || off > int64(len(data)) {
		return err
	}
	line := textpos.Line(data, off)
	msg := err.Error()
	if typ != nil {
		msg = fmt.Sprintf("%s holds a JSON %s where %s is expected", typ.Field, typ.Value, typ.Type)
	}
	return fmt.Errorf("line %d: %s", line, msg)
}
