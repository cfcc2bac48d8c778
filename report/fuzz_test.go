package report_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/report"
	"github.com/eksdoctor/eksdoctor/teardown"
)

// FuzzReport writes findings whose every string comes from the fuzzer, as names,
// paths and messages come from the input: the text report carries no control
// character and no line a CI runner reads as a workflow command, and the JSON and
// SARIF reports stay valid JSON.
func FuzzReport(f *testing.F) {
	for _, s := range []string{
		"web", "a\nb", "\n::error file=x::y", "x\x1b[2Jy", "\u202eevil", "::add-mask::secret",
		"\u00a0::warning::x", "\xff\xfe", "a\r::error::b", "tab\there", "\u2028::error::x",
		"<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "\"><a href=\"javascript:x\">",
		"a\u200bb", "ad\u200dmin", "\u2060x", "\ufeffbom", "x\u2066y\u2069", "\U000e0041tag", "\\u202e",
	} {
		f.Add(s, s, s, s)
	}
	checks := lint.Checks()
	f.Fuzz(func(t *testing.T, name, file, summary, detail string) {
		fs := []lint.Finding{{
			Check: "pod-unschedulable", Severity: lint.Error,
			Object:  cluster.ObjectRef{Kind: "Deployment", Namespace: name, Name: name},
			Origin:  cluster.Origin{File: file, Line: 3},
			Summary: summary, Detail: detail,
			Fix: &lint.Fix{Summary: summary, Edits: []lint.Edit{{File: file, Line: 3, Format: lint.FormatYAML, Text: detail}}},
		}, {
			Check: "invalid-input", Severity: lint.Warning,
			Origin:  cluster.Origin{File: name + file},
			Summary: detail,
		}}
		var text bytes.Buffer
		if err := report.Text(&text, fs, report.TextOptions{}); err != nil {
			t.Fatal(err)
		}
		plainText(t, text.String())
		var js, sarif bytes.Buffer
		if err := report.JSON(&js, fs); err != nil {
			t.Fatal(err)
		}
		if err := report.SARIF(&sarif, fs, checks, "test"); err != nil {
			t.Fatal(err)
		}
		for format, out := range map[string][]byte{"json": js.Bytes(), "sarif": sarif.Bytes()} {
			if !json.Valid(out) {
				t.Fatalf("%s output is not valid JSON", format)
			}
		}
		// GitHub annotations: one command per finding, one line each, then
		// the count; nothing else a runner would read as a command.
		var gh bytes.Buffer
		if err := report.GitHub(&gh, fs, report.Options{}); err != nil {
			t.Fatal(err)
		}
		ghLines := strings.Split(strings.TrimSuffix(gh.String(), "\n"), "\n")
		if len(ghLines) != len(fs)+1 || !strings.HasPrefix(ghLines[len(fs)], "eksdoctor: ") {
			t.Fatalf("github output is not %d annotations and a count:\n%q", len(fs), gh.String())
		}
		for _, l := range ghLines[:len(fs)] {
			if strings.ContainsAny(l, "\r\x1b") || strings.Count(l, "::") < 2 || !strings.HasPrefix(l, "::") {
				t.Fatalf("annotation %q", l)
			}
		}
		// HTML: the input's text never becomes markup; the page's own
		// script is its only one.
		var page bytes.Buffer
		hc := []report.HTMLCluster{{Name: name, Workloads: []report.Explanation{{Object: "Deployment/" + name + "/" + file, Phases: []report.ExplainPhase{
			{Phase: "steady", Result: "refuses", Sources: []report.ExplainSource{{Kind: "nodepool", Name: name, Result: "refuses", Reasons: []string{summary}}}},
		}}}, Teardown: &teardown.Plan{Tool: "terraform", Steps: []teardown.Step{{Stage: teardown.StageController, Items: []teardown.Item{{Name: name, Origin: fs[0].Origin}}}}}}}
		if err := report.HTML(&page, hc, fs, report.Options{}); err != nil {
			t.Fatal(err)
		}
		inertHTML(t, page.Bytes())
		var junit, md bytes.Buffer
		if err := report.JUnit(&junit, fs, checks, report.Options{}); err != nil {
			t.Fatal(err)
		}
		if err := xml.Unmarshal(junit.Bytes(), new(struct{})); err != nil {
			t.Fatalf("junit output is not XML: %v", err)
		}
		if err := report.Markdown(&md, fs, report.Options{}); err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(md.String(), "\n") {
			if strings.ContainsRune(line, 0x1b) || strings.HasPrefix(strings.TrimLeftFunc(line, unicode.IsSpace), "::") {
				t.Fatalf("markdown line %d: %q", i+1, line)
			}
		}
		// No format carries a character a reader does not see, raw or as
		// an escape its reader decodes back into the character.
		for format, out := range map[string][]byte{"text": text.Bytes(), "json": js.Bytes(), "sarif": sarif.Bytes(), "github": gh.Bytes(), "html": page.Bytes(), "junit": junit.Bytes(), "markdown": md.Bytes()} {
			if r, ok := invisibleIn(string(out)); ok {
				t.Fatalf("%s output holds the invisible character %U", format, r)
			}
		}
		for format, out := range map[string][]byte{"json": js.Bytes(), "sarif": sarif.Bytes()} {
			var v any
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatal(err)
			}
			if r, ok := invisibleIn(decodedStrings(v)); ok {
				t.Fatalf("%s output decodes to the invisible character %U", format, r)
			}
		}
	})
}

// plainText fails when a line of a text report holds a control character
// or reads as a CI workflow command.
func plainText(t *testing.T, text string) {
	t.Helper()
	for i, line := range strings.Split(text, "\n") {
		for _, r := range line {
			if r == utf8.RuneError || (r < 0x20 && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
				t.Fatalf("text line %d holds %U: %q", i+1, r, line)
			}
		}
		if strings.HasPrefix(strings.TrimLeftFunc(line, unicode.IsSpace), "::") {
			t.Fatalf("text line %d reads as a workflow command: %q", i+1, line)
		}
	}
}

// invisibleIn finds a character that renders as nothing or reorders text:
// format characters (bidirectional controls, zero-width ones), separators,
// fillers and variation selectors.
func invisibleIn(s string) (rune, bool) {
	for _, r := range s {
		if unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029 || r == 0x115f || r == 0x1160 || r == 0x3164 || r == 0xffa0 || (r >= 0xfe00 && r <= 0xfe0f) {
			return r, true
		}
	}
	return 0, false
}

// decodedStrings joins every string a decoded JSON value holds.
func decodedStrings(v any) string {
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				b.WriteString(k)
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}
