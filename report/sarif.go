package report

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/eksdoctor/eksdoctor/lint"
)

// SARIF 2.1.0, the subset GitHub code scanning reads.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri"`
	Rules          []sarifRule `json:"rules"`
}

type sarifText struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type sarifRule struct {
	ID                   string             `json:"id"`
	Name                 string             `json:"name"`
	HelpURI              string             `json:"helpUri"`
	ShortDescription     sarifText          `json:"shortDescription"`
	FullDescription      sarifText          `json:"fullDescription"`
	Help                 sarifText          `json:"help"`
	DefaultConfiguration sarifConfiguration `json:"defaultConfiguration"`
	Properties           sarifRuleProps     `json:"properties"`
}

type sarifConfiguration struct {
	Level string `json:"level"`
}

type sarifRuleProps struct {
	Tags []string `json:"tags"`
}

type sarifResult struct {
	RuleID              string             `json:"ruleId"`
	RuleIndex           int                `json:"ruleIndex"`
	Level               string             `json:"level"`
	Message             sarifText          `json:"message"`
	Locations           []sarifLocation    `json:"locations,omitempty"`
	PartialFingerprints map[string]string  `json:"partialFingerprints"`
	Suppressions        []sarifSuppression `json:"suppressions,omitempty"`
	Fixes               []sarifFix         `json:"fixes,omitempty"`
	Properties          *sarifResultProps  `json:"properties,omitempty"`
}

type sarifSuppression struct {
	// Kind is inSource (an annotation or comment) or external (the baseline).
	Kind          string `json:"kind"`
	Justification string `json:"justification,omitempty"`
}

type sarifFix struct {
	Description     sarifText           `json:"description"`
	ArtifactChanges []sarifArtifactEdit `json:"artifactChanges"`
}

type sarifArtifactEdit struct {
	ArtifactLocation sarifArtifact      `json:"artifactLocation"`
	Replacements     []sarifReplacement `json:"replacements"`
}

type sarifReplacement struct {
	DeletedRegion   sarifRegion `json:"deletedRegion"`
	InsertedContent *sarifText  `json:"insertedContent,omitempty"`
}

type sarifResultProps struct {
	Fix     string `json:"fix,omitempty"`
	Cluster string `json:"cluster,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation *sarifPhysical `json:"physicalLocation,omitempty"`
	LogicalLocations []sarifLogical `json:"logicalLocations,omitempty"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

type sarifRegion struct {
	StartLine   int `json:"startLine"`
	StartColumn int `json:"startColumn,omitempty"`
	EndLine     int `json:"endLine,omitempty"`
	EndColumn   int `json:"endColumn,omitempty"`
}

type sarifLogical struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

func sarifLevel(s lint.Severity) string {
	switch s {
	case lint.Error:
		return "error"
	case lint.Warning:
		return "warning"
	}
	return "note"
}

// ruleName turns an ID into the PascalCase name SARIF viewers show.
func ruleName(id string) string {
	var b strings.Builder
	up := true
	for _, r := range id {
		if r == '-' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// SARIF writes findings as a SARIF 2.1.0 log with one rule per check.
func SARIF(w io.Writer, findings []lint.Finding, checks []*lint.Check, version string, opts ...Options) error {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	rules, index := sarifRules(checks)
	run := sarifRun{
		Tool: sarifTool{Driver: sarifDriver{
			Name:           "eksdoctor",
			Version:        version,
			InformationURI: "https://github.com/eksdoctor/eksdoctor",
			Rules:          rules,
		}},
		Results: []sarifResult{},
	}
	all := findings
	if o.ShowSuppressed {
		all = append(append([]lint.Finding(nil), findings...), o.Suppressed...)
	}
	for _, f := range all {
		if ri, ok := index[f.Check]; ok {
			run.Results = append(run.Results, sarifResultOf(f, ri, o))
		}
	}
	log := sarifLog{
		Schema:  "https://json.schemastore.org/sarif-2.1.0.json",
		Version: "2.1.0",
		Runs:    []sarifRun{run},
	}
	return EncodeJSON(w, log)
}

// sarifRules are the checks as SARIF rules, and each check's index among
// them.
func sarifRules(checks []*lint.Check) ([]sarifRule, map[string]int) {
	rules := []sarifRule{}
	index := map[string]int{}
	for i, c := range checks {
		index[c.ID] = i
		help := c.Doc.What + "\n\nWhy: " + c.Doc.Why + "\n\nFix: " + c.Doc.Fix
		md := "**" + c.Title + "**\n\n" + c.Doc.What + "\n\n**Why it matters.** " + c.Doc.Why + "\n\n**How to fix.** " + c.Doc.Fix
		if ex, ok := lint.ExampleOf(c.ID); ok {
			md += "\n\nBefore:\n\n```" + ex.Format + "\n" + ex.Before + "\n```\n\nAfter:\n\n```" + ex.Format + "\n" + ex.After + "\n```"
		}
		rules = append(rules, sarifRule{
			ID:                   c.ID,
			Name:                 ruleName(c.ID),
			HelpURI:              CheckDocURL(c.ID),
			ShortDescription:     sarifText{Text: c.Title},
			FullDescription:      sarifText{Text: c.Doc.What},
			Help:                 sarifText{Text: help, Markdown: md},
			DefaultConfiguration: sarifConfiguration{Level: sarifLevel(c.Severity)},
			Properties:           sarifRuleProps{Tags: []string{"eksdoctor", c.Family}},
		})
	}
	return rules, index
}

// sarifResultOf is a finding as the result of rule number ri.
func sarifResultOf(f lint.Finding, ri int, o Options) sarifResult {
	text := f.Summary
	if f.Detail != "" {
		text += "\n" + f.Detail
	}
	res := sarifResult{
		RuleID:    f.Check,
		RuleIndex: ri,
		Level:     sarifLevel(f.Severity),
		Message:   sarifText{Text: text},
		PartialFingerprints: map[string]string{
			"eksdoctorFinding/v1": fingerprint(f.Check, f.Object.String(), f.Summary),
			"eksdoctorFinding/v2": lint.Fingerprint(f),
		},
	}
	loc := sarifLocation{}
	if f.Origin.InFile() {
		loc.PhysicalLocation = &sarifPhysical{ArtifactLocation: artifactLocation(f.Origin.File, o.Root)}
		if f.Origin.Line > 0 {
			loc.PhysicalLocation.Region = &sarifRegion{StartLine: f.Origin.Line}
		}
	}
	if f.Object.Name != "" {
		loc.LogicalLocations = []sarifLogical{{Name: f.Object.Name, FullyQualifiedName: f.Object.String(), Kind: "object"}}
	}
	if loc.PhysicalLocation != nil || loc.LogicalLocations != nil {
		res.Locations = []sarifLocation{loc}
	}
	if s := f.Suppressed; s != nil {
		kind := "inSource"
		if s.By == "baseline" {
			kind = "external"
		}
		res.Suppressions = []sarifSuppression{{Kind: kind, Justification: suppressedBy(s)}}
	}
	if f.Fix != nil {
		var b strings.Builder
		b.WriteString(f.Fix.Summary)
		for _, e := range f.Fix.Edits {
			b.WriteString("\n" + e.Text)
		}
		res.Properties = &sarifResultProps{Fix: b.String()}
		if o.Changes != nil {
			if changes := o.Changes(f); len(changes) > 0 {
				res.Fixes = []sarifFix{sarifFixOf(f.Fix.Summary, changes, o.Root)}
			}
		}
	}
	if f.Cluster != "" {
		if res.Properties == nil {
			res.Properties = &sarifResultProps{}
		}
		res.Properties.Cluster = f.Cluster
	}
	return res
}

// sarifFixOf words line changes as SARIF replacements: whole lines deleted
// (from the start of the first to the start of the line after the last) and
// the new lines inserted there.
func sarifFixOf(summary string, changes []TextChange, root string) sarifFix {
	fix := sarifFix{Description: sarifText{Text: summary}}
	byFile := map[string]int{}
	for _, c := range changes {
		i, ok := byFile[c.File]
		if !ok {
			i = len(fix.ArtifactChanges)
			byFile[c.File] = i
			fix.ArtifactChanges = append(fix.ArtifactChanges, sarifArtifactEdit{ArtifactLocation: artifactLocation(c.File, root)})
		}
		r := sarifReplacement{DeletedRegion: sarifRegion{StartLine: c.StartLine, StartColumn: 1, EndLine: c.EndLine + 1, EndColumn: 1}}
		if c.Text != "" {
			r.InsertedContent = &sarifText{Text: c.Text}
		}
		fix.ArtifactChanges[i].Replacements = append(fix.ArtifactChanges[i].Replacements, r)
	}
	return fix
}

// artifactLocation is where a file is for SARIF: relative to the source root
// (%SRCROOT%, the directory eksdoctor ran in) when it is there, else an
// absolute file URI.
func artifactLocation(file, root string) sarifArtifact {
	if filepath.IsAbs(file) {
		if root != "" {
			if rel, err := filepath.Rel(root, file); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return sarifArtifact{URI: artifactURI(rel), URIBaseID: "%SRCROOT%"}
			}
		}
		return sarifArtifact{URI: "file://" + artifactURI(file)}
	}
	return sarifArtifact{URI: artifactURI(file), URIBaseID: "%SRCROOT%"}
}

// artifactURI makes a relative URI reference from a file path.
func artifactURI(file string) string {
	p := filepath.ToSlash(file)
	p = strings.TrimPrefix(p, "./")
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = strings.NewReplacer("%", "%25", " ", "%20", "#", "%23", "?", "%3F").Replace(s)
	}
	return strings.Join(parts, "/")
}

func fingerprint(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:16])
}
