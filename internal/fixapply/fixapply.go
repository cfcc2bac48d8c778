// Package fixapply applies the edits of eksdoctor's fixes to files, the way a user
// pasting them would. Tests use it to prove that every proposed fix makes its
// finding disappear without causing a new one.
package fixapply

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/schema"
	"github.com/eksdoctor/eksdoctor/source/manifest"
)

// Applier applies one edit format to a file's content. Formats other packages own
// (HCL, Helm values in Terraform) register theirs with Register.
type Applier func(content []byte, e lint.Edit) ([]byte, error)

var appliers = map[string]Applier{
	lint.FormatYAML: applyYAML,
}

// Register adds an applier for a format.
func Register(format string, a Applier) { appliers[format] = a }

// Apply applies edits to files; relative edit paths are resolved against dir, and
// edits to one file are applied bottom-up so earlier line numbers stay valid.
func Apply(dir string, edits []lint.Edit) error {
	byFile := map[string][]lint.Edit{}
	var order []string
	for _, e := range edits {
		if e.Format == lint.FormatShell {
			continue
		}
		if _, ok := byFile[e.File]; !ok {
			order = append(order, e.File)
		}
		byFile[e.File] = append(byFile[e.File], e)
	}
	for _, f := range order {
		path := f
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, f)
		}
		content, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read %s: %w", f, err)
		}
		es := byFile[f]
		// Bottom-up: an edit never moves the lines of the edits above it.
		for i := 0; i < len(es); i++ {
			for j := i + 1; j < len(es); j++ {
				if es[j].Line > es[i].Line {
					es[i], es[j] = es[j], es[i]
				}
			}
		}
		for _, e := range es {
			a, ok := appliers[e.Format]
			if !ok {
				return fmt.Errorf("%s:%d: no applier for format %q", f, e.Line, e.Format)
			}
			content, err = a(content, e)
			if err != nil {
				return fmt.Errorf("%s:%d: %w", f, e.Line, err)
			}
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", f, err)
		}
	}
	return nil
}

// applyYAML merges the edit's patch into the YAML document whose object starts at
// the edit's line, re-rendering that document (comments in it are lost; the other
// documents are kept byte for byte).
func applyYAML(content []byte, e lint.Edit) ([]byte, error) {
	var patch map[string]any
	if err := yaml.Unmarshal([]byte(e.Text), &patch); err != nil {
		return nil, fmt.Errorf("patch is not YAML: %w", err)
	}
	docs := splitDocs(content)
	for i, d := range docs {
		objs, _ := manifest.DecodeAt("", d.line, d.text)
		for _, o := range objs {
			if o.Origin.Line != e.Line {
				continue
			}
			merged := schema.ApplyMergePatch(o.Content, patch)
			out, err := yaml.Marshal(merged)
			if err != nil {
				return nil, fmt.Errorf("render patched object: %w", err)
			}
			docs[i].text = out
			return joinDocs(docs), nil
		}
	}
	return nil, fmt.Errorf("no object starts at line %d", e.Line)
}

type doc struct {
	line int
	sep  []byte // the separator line before the document, if any
	text []byte
}

func splitDocs(content []byte) []doc {
	var docs []doc
	cur := doc{line: 1}
	line := 1
	for _, l := range bytes.SplitAfter(content, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		if t := strings.TrimRight(string(l), "\r\n"); t == "---" || strings.HasPrefix(t, "--- ") {
			docs = append(docs, cur)
			cur = doc{line: line + 1, sep: l}
		} else {
			cur.text = append(cur.text, l...)
		}
		line++
	}
	return append(docs, cur)
}

func joinDocs(docs []doc) []byte {
	var b bytes.Buffer
	for _, d := range docs {
		b.Write(d.sep)
		b.Write(d.text)
		if len(d.text) > 0 && d.text[len(d.text)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}
