// Package fixplan works out which of the proposed fixes can be applied
// together, composes the ones that rewrite the same block, and gives the new
// content of every file they change. It writes nothing: `eksdoctor fix` shows
// the plan as a diff or writes it.
package fixplan

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"go.yaml.in/yaml/v3"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/fixapply"
	"github.com/eksdoctor/eksdoctor/internal/inputfs"
	"github.com/eksdoctor/eksdoctor/lint"
)

// Plan is what applying the fixes does.
type Plan struct {
	// Applied are the findings whose fix is in the plan.
	Applied []lint.Finding
	// Skipped are findings whose fix is left out, with why.
	Skipped []Skip
	// Commands are the fixes that are commands to run (kubectl, helm): never
	// run, only said.
	Commands []Command
	// Files are the files the plan changes, sorted, with their content before
	// and after.
	Files []File
}

// Skip is a fix left out.
type Skip struct {
	Finding lint.Finding
	Why     string
}

// Command is a fix that is a command.
type Command struct {
	Finding lint.Finding
	Text    string
}

// File is one changed file.
type File struct {
	Path          string
	Before, After []byte
}

// Make plans the fixes of findings, in their order. Relative paths are resolved
// against dir. A fix is in the plan only when all its edits apply together with
// the fixes before it; two fixes that set the same attribute of the same block
// are composed when it is a Kubernetes object (yaml_body: both changes in one
// document), and the later one is left out otherwise.
func Make(dir string, findings []lint.Finding) (*Plan, error) {
	p := &Plan{}
	var accepted []cluster.Edit
	for _, f := range findings {
		if f.Fix == nil || f.Suppressed != nil {
			continue
		}
		var edits []cluster.Edit
		for _, e := range f.Fix.Edits {
			if e.Format == cluster.FormatShell {
				p.Commands = append(p.Commands, Command{Finding: f, Text: e.Text})
				continue
			}
			edits = append(edits, e)
		}
		if len(edits) == 0 {
			continue
		}
		next, why := add(dir, accepted, edits)
		if why != "" {
			p.Skipped = append(p.Skipped, Skip{Finding: f, Why: why})
			continue
		}
		// The fix must apply, with those before it, to the files as they
		// are: the files it edits, the others are as they were.
		if _, err := apply(dir, inFiles(next, edits)); err != nil {
			p.Skipped = append(p.Skipped, Skip{Finding: f, Why: "it does not apply: " + err.Error()})
			continue
		}
		accepted = next
		p.Applied = append(p.Applied, f)
	}
	files, err := apply(dir, accepted)
	if err != nil {
		return nil, err
	}
	p.Files = files
	return p, nil
}

// add adds a fix's edits to those accepted, composing where both rewrite one
// object; why says why it cannot be.
func add(dir string, accepted, edits []cluster.Edit) ([]cluster.Edit, string) {
	out := append([]cluster.Edit(nil), accepted...)
	for _, e := range edits {
		merged := false
		for i, a := range out {
			clash := clashes(a, e)
			if clash == "" {
				continue
			}
			if clash != "yaml_body" {
				return nil, fmt.Sprintf("another fix already sets %s of the block at %s:%d", clash, e.File, e.Line)
			}
			text, err := composeYAMLBody(dir, a, e)
			if err != nil {
				return nil, fmt.Sprintf("another fix already rewrites the object at %s:%d, and the two cannot be composed: %v", e.File, e.Line, err)
			}
			out[i].Text = text
			merged = true
			break
		}
		if !merged {
			out = append(out, e)
		}
	}
	return out, ""
}

// inFiles are the edits of the files some of these edit.
func inFiles(all, these []cluster.Edit) []cluster.Edit {
	files := map[string]bool{}
	for _, e := range these {
		files[e.File] = true
	}
	var out []cluster.Edit
	for _, e := range all {
		if files[e.File] {
			out = append(out, e)
		}
	}
	return out
}

// clashes names the attribute two HCL edits of one block both set; "" when
// they do not clash.
func clashes(a, b cluster.Edit) string {
	if a.Format != cluster.FormatHCL || b.Format != cluster.FormatHCL || a.File != b.File || a.Line != b.Line || a.Line == 0 {
		return ""
	}
	as, bs := attributes(a.Text), attributes(b.Text)
	for _, n := range sortedKeys(as) {
		if bs[n] != nil {
			return n
		}
	}
	return ""
}

func attributes(text string) map[string]*hclsyntax.Attribute {
	f, diags := hclsyntax.ParseConfig([]byte(text), "edit.tf", hcl.InitialPos)
	if diags.HasErrors() {
		return nil
	}
	body, _ := f.Body.(*hclsyntax.Body)
	if body == nil {
		return nil
	}
	return body.Attributes
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// apply works out the new content of every file the edits change.
func apply(dir string, edits []cluster.Edit) ([]File, error) {
	changed, err := fixapply.Contents(dir, edits)
	if err != nil {
		return nil, err
	}
	var out []File
	for _, c := range changed {
		if !bytes.Equal(c.Before, c.After) {
			out = append(out, File{Path: c.File, Before: c.Before, After: c.After})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// composeYAMLBody makes one yaml_body edit of two that rewrite the same
// object: the first's document with the second's changes (to the document in
// the file) merged in, as a JSON merge patch merges (maps by key, the rest
// replaced whole; keys the second removes removed).
func composeYAMLBody(dir string, first, second cluster.Edit) (string, error) {
	path := first.File
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	content, err := inputfs.ReadOne(path, inputfs.MaxManifest)
	if err != nil {
		return "", err
	}
	orig, err := yamlBodyInFile(content, first.Line)
	if err != nil {
		return "", err
	}
	a, err := yamlBodyOfEdit(first.Text)
	if err != nil {
		return "", err
	}
	b, err := yamlBodyOfEdit(second.Text)
	if err != nil {
		return "", err
	}
	var on, an, bn yaml.Node
	for _, x := range []struct {
		text string
		node *yaml.Node
	}{{orig, &on}, {a, &an}, {b, &bn}} {
		if err := yaml.Unmarshal([]byte(x.text), x.node); err != nil {
			return "", fmt.Errorf("the document does not parse: %w", err)
		}
		if len(x.node.Content) != 1 || x.node.Content[0].Kind != yaml.MappingNode {
			return "", fmt.Errorf("not one object")
		}
	}
	mergeChanges(an.Content[0], on.Content[0], bn.Content[0])
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(an.Content[0]); err != nil {
		return "", err
	}
	return "yaml_body = <<-YAML\n" + buf.String() + "YAML\n", nil
}

// mergeChanges applies to dst what changed from orig to changed: keys whose
// value changed are set (maps merged key by key), keys removed are removed.
func mergeChanges(dst, orig, changed *yaml.Node) {
	for i := 0; i+1 < len(changed.Content); i += 2 {
		k, v := changed.Content[i].Value, changed.Content[i+1]
		ov := lookup(orig, k)
		if ov != nil && sameNode(ov, v) {
			continue
		}
		dv := lookup(dst, k)
		if ov != nil && dv != nil && ov.Kind == yaml.MappingNode && v.Kind == yaml.MappingNode && dv.Kind == yaml.MappingNode {
			mergeChanges(dv, ov, v)
			continue
		}
		set(dst, k, v)
	}
	for i := 0; i+1 < len(orig.Content); i += 2 {
		if k := orig.Content[i].Value; lookup(changed, k) == nil {
			remove(dst, k)
		}
	}
}

func lookup(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func set(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

func remove(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

// sameNode compares two values as data (not as text: flow and block lists of
// the same items are the same).
func sameNode(a, b *yaml.Node) bool {
	var x, y any
	if a.Decode(&x) != nil || b.Decode(&y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// yamlBodyOfEdit is the document an edit sets yaml_body to.
func yamlBodyOfEdit(text string) (string, error) {
	a := attributes(text)["yaml_body"]
	if a == nil {
		return "", fmt.Errorf("the edit does not set yaml_body")
	}
	return heredoc([]byte(text), a.Expr)
}

// yamlBodyInFile is the yaml_body document of the block at line.
func yamlBodyInFile(content []byte, line int) (string, error) {
	f, diags := hclsyntax.ParseConfig(content, "file.tf", hcl.InitialPos)
	if diags.HasErrors() {
		return "", fmt.Errorf("the file does not parse")
	}
	body := f.Body.(*hclsyntax.Body)
	for _, b := range body.Blocks {
		if b.DefRange().Start.Line != line {
			continue
		}
		a := b.Body.Attributes["yaml_body"]
		if a == nil {
			return "", fmt.Errorf("the block at line %d has no yaml_body", line)
		}
		return heredoc(content, a.Expr)
	}
	return "", fmt.Errorf("no block starts at line %d", line)
}

// heredoc is the text of a heredoc expression as written (interpolations
// kept), without the indentation a <<- heredoc strips.
func heredoc(src []byte, e hclsyntax.Expression) (string, error) {
	r := e.Range()
	text := string(src[r.Start.Byte:r.End.Byte])
	first, rest, ok := strings.Cut(text, "\n")
	if !ok || !strings.HasPrefix(first, "<<") {
		return "", fmt.Errorf("yaml_body is not a heredoc")
	}
	lines := strings.Split(strings.TrimRight(rest, "\n"), "\n")
	if len(lines) > 0 {
		lines = lines[:len(lines)-1] // the closing marker
	}
	if strings.HasPrefix(first, "<<-") {
		indent := -1
		for _, l := range lines {
			if strings.TrimSpace(l) == "" {
				continue
			}
			n := len(l) - len(strings.TrimLeft(l, " \t"))
			if indent < 0 || n < indent {
				indent = n
			}
		}
		for i, l := range lines {
			if len(l) >= indent && indent > 0 {
				lines[i] = l[indent:]
			}
		}
	}
	return strings.Join(lines, "\n") + "\n", nil
}
