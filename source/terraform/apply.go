package terraform

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/manifest"
)

// HCL edits (cluster.FormatHCL) change Terraform files the way a user would: by
// setting arguments and adding blocks, keeping everything else as written.
//
// Edit.Line > 0 names the block whose header is on that line (a resource, a
// module call, or a nested block such as `lifecycle`), or else the map entry whose
// key is on that line and whose value is an object (`coredns = { ... }` inside
// `cluster_addons`, `karpenter = { ... }` inside `fargate_profiles`): module
// inputs are maps of objects as often as they are blocks. Edit.Text is an HCL body
// applied to it:
//
//   - Each attribute in Text sets that argument of the block. An existing argument
//     is replaced where it stands; a new one is added at the end of the block; an
//     argument set to null is removed.
//   - When both the existing value and the new value are object constructors
//     ({ ... }), they are merged key by key, recursively: a fix can change one
//     entry of a map and keep the others as written, e.g.
//     `fargate_profiles = { karpenter = { selectors = [...] } }` inside
//     module "eks" replaces the selectors of the "karpenter" profile only. A key
//     set to null is removed. Every other value, lists and function calls
//     included, is replaced whole (as in a JSON merge patch).
//   - Each block in Text (`set { ... }`, `selector { ... }`) is appended to the
//     block (a map entry takes no blocks).
//
// Edit.Line == 0 appends Text to the end of the file: new resources, such as an
// aws_eks_access_entry.
//
// The result must parse. The file is never formatted as a whole: only the
// text an edit adds is formatted, then indented to where it goes (see
// apply_snippet.go).
//
// Helm values edits (cluster.FormatValues) are a YAML document to merge into a
// release's values, the way Helm merges values files: maps key by key, every
// other value replaced, null removing a key. In a Terraform file, Edit.Line names
// the helm_release block and the document is appended to its `values` list as a
// heredoc (the provider passes the list to Helm in order, so the last document
// wins; the user's own documents stay as written). In a YAML values file, the
// document is merged into the file.

// ApplyHelmValues merges a values document into a release's values
// (cluster.FormatValues).
func ApplyHelmValues(content []byte, e cluster.Edit) ([]byte, error) {
	return applyHelmValues(content, e, false)
}

// SpliceHelmValues is ApplyHelmValues that fails, rather than render a values
// file whole, when the file cannot be changed in place. Tests use it to prove
// that fixes are minimal edits.
func SpliceHelmValues(content []byte, e cluster.Edit) ([]byte, error) {
	return applyHelmValues(content, e, true)
}

func applyHelmValues(content []byte, e cluster.Edit, strict bool) ([]byte, error) {
	var patch map[string]any
	if err := yaml.Unmarshal([]byte(e.Text), &patch); err != nil {
		return nil, fmt.Errorf("values are not YAML: %w", err)
	}
	if e.Line <= 0 || !looksLikeHCL(content) {
		var doc map[string]any
		if err := yaml.Unmarshal(content, &doc); err != nil {
			return nil, fmt.Errorf("the values file is not YAML: %w", err)
		}
		want := cluster.MergePatch(doc, patch)
		if out, ok := manifest.EditValues(content, want, e.Text); ok {
			return out, nil
		}
		if strict {
			return nil, errWhole
		}
		out, err := yaml.Marshal(want)
		if err != nil {
			return nil, fmt.Errorf("render values: %w", err)
		}
		return out, nil
	}
	body, err := parseBody(content, "file.tf", "the file does not parse", "the file")
	if err != nil {
		return nil, err
	}
	block := blockAt(body, e.Line)
	if block == nil {
		return nil, fmt.Errorf("no block starts at line %d", e.Line)
	}
	doc := strings.TrimRight(e.Text, "\n")
	if strings.Contains("\n"+doc+"\n", "\nEOT\n") {
		return nil, fmt.Errorf("the values contain the heredoc marker EOT")
	}
	var rep replacement
	if old, ok := block.Body.Attributes["values"]; ok {
		if tup, ok := old.Expr.(*hclsyntax.TupleConsExpr); ok {
			rep = appendHeredoc(content, old, tup, doc)
		} else {
			r := old.Expr.Range()
			rep = replacement{r.Start.Byte, r.End.Byte, expression("concat("+string(content[r.Start.Byte:r.End.Byte])+", [\n<<-EOT\n"+doc+"\nEOT\n])", lineIndent(content, r.Start.Byte))}
		}
	} else {
		rep = insertBefore(content, block.Body.SrcRange.Start.Byte, block.Body.SrcRange.End.Byte-1, []string{"values = [\n<<-EOT\n" + doc + "\nEOT\n]"})
	}
	out, err := replace(content, []replacement{rep})
	if err != nil {
		return nil, err
	}
	return finishHCL(out)
}

// appendHeredoc adds a <<-EOT heredoc holding doc as the last element of the
// tuple tup (the value of attribute a), its content indented as the elements
// are. After an element that is a heredoc, whose closing marker must stay
// alone on its line, the comma starts the new element's line: `, <<-EOT`.
func appendHeredoc(content []byte, a *hclsyntax.Attribute, tup *hclsyntax.TupleConsExpr, doc string) replacement {
	attrIndent := lineIndent(content, a.SrcRange.Start.Byte)
	indent := attrIndent + "  "
	if n := len(tup.Exprs); n > 0 {
		first := tup.Exprs[0].Range().Start.Byte
		if startsLine(content, first) {
			indent = lineIndent(content, first)
		}
	}
	var body strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if strings.TrimSpace(l) != "" {
			body.WriteString(indent + l)
		}
		body.WriteString("\n")
	}
	heredoc := "<<-EOT\n" + body.String() + indent + "EOT"
	at := tup.SrcRange.Start.Byte + 1
	text := "\n" + indent + heredoc
	if n := len(tup.Exprs); n > 0 {
		last := tup.Exprs[n-1]
		at = last.Range().End.Byte
		j := at
		for j < len(content) && (content[j] == ' ' || content[j] == '\t' || content[j] == '\n' || content[j] == '\r') {
			j++
		}
		switch {
		case j < len(content) && content[j] == ',':
			at = j + 1
		case bytes.HasPrefix(content[last.Range().Start.Byte:], []byte("<<")):
			text = "\n" + indent + ", " + heredoc
		default:
			text = "," + text
		}
	}
	if at >= len(content) || (content[at] != '\n' && content[at] != '\r') {
		text += "\n" + attrIndent
	}
	return replacement{at, at, text}
}

// startsLine reports whether only blanks precede pos on its line.
func startsLine(content []byte, pos int) bool {
	for i := pos - 1; i >= 0 && content[i] != '\n'; i-- {
		if content[i] != ' ' && content[i] != '\t' {
			return false
		}
	}
	return true
}

// looksLikeHCL tells Terraform files from YAML values files.
func looksLikeHCL(content []byte) bool {
	f, diags := hclsyntax.ParseConfig(content, "file.tf", hcl.InitialPos)
	if diags.HasErrors() {
		return false
	}
	body, ok := f.Body.(*hclsyntax.Body)
	return ok && len(body.Blocks) > 0
}

// replacement swaps src[start:end] for text.
type replacement struct {
	start, end int
	text       string
}

// ApplyHCL applies an HCL edit (cluster.FormatHCL) to a Terraform file's
// content.
func ApplyHCL(content []byte, e cluster.Edit) ([]byte, error) {
	return applyHCL(content, e, false)
}

// SpliceHCL is ApplyHCL that fails, rather than replace a heredoc of YAML
// whole, when the new document cannot be written by splices of the old one.
// Tests use it to prove that fixes are minimal edits.
func SpliceHCL(content []byte, e cluster.Edit) ([]byte, error) {
	return applyHCL(content, e, true)
}

// errWhole says that a strict apply would have to rewrite a document whole.
var errWhole = fmt.Errorf("the change cannot be made in place")

func applyHCL(content []byte, e cluster.Edit, strict bool) ([]byte, error) {
	editSrc := []byte(e.Text)
	if e.Line == 0 {
		out := append([]byte{}, content...)
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		out = append(out, '\n')
		out = append(out, snippet(string(editSrc), "", true)...)
		out = append(out, '\n')
		return finishHCL(out)
	}
	body, err := parseBody(content, "file.tf", "the file does not parse", "the file")
	if err != nil {
		return nil, err
	}
	ebody, err := parseBody(editSrc, "edit.tf", "the edit is not HCL", "the edit")
	if err != nil {
		return nil, err
	}
	block := blockAt(body, e.Line)
	if block == nil {
		obj := entryAt(body, e.Line)
		if obj == nil {
			return nil, fmt.Errorf("no block or map entry starts at line %d", e.Line)
		}
		return applyToEntry(content, obj, editSrc, ebody, strict)
	}
	var reps []replacement
	open, insertAt := block.Body.SrcRange.Start.Byte, block.Body.SrcRange.End.Byte-1 // the braces
	var inserts []string
	attrs := make([]*hclsyntax.Attribute, 0, len(ebody.Attributes))
	for _, a := range ebody.Attributes {
		attrs = append(attrs, a)
	}
	sort.Slice(attrs, func(i, j int) bool { return attrs[i].SrcRange.Start.Byte < attrs[j].SrcRange.Start.Byte })
	for _, na := range attrs {
		old, exists := block.Body.Attributes[na.Name]
		switch {
		case !exists && isNull(na.Expr):
		case !exists:
			inserts = append(inserts, na.Name+" = "+source(editSrc, na.Expr.Range()))
		case isNull(na.Expr):
			start, end := lineSpan(content, old.SrcRange.Start.Byte, old.SrcRange.End.Byte)
			reps = append(reps, replacement{start, end, ""})
		default:
			r, err := setHCLValue(content, old.Expr, editSrc, na.Expr, strict)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", na.Name, err)
			}
			reps = append(reps, r...)
		}
	}
	for _, nb := range ebody.Blocks {
		inserts = append(inserts, source(editSrc, nb.Range()))
	}
	if len(inserts) > 0 {
		reps = append(reps, insertBefore(content, open, insertAt, inserts))
	}
	out, err := replace(content, reps)
	if err != nil {
		return nil, err
	}
	return finishHCL(out)
}

// applyToEntry applies an edit body to a map entry's object value.
func applyToEntry(content []byte, obj *hclsyntax.ObjectConsExpr, editSrc []byte, ebody *hclsyntax.Body, strict bool) ([]byte, error) {
	if len(ebody.Blocks) > 0 {
		return nil, fmt.Errorf("a map entry takes no blocks")
	}
	attrs := make([]*hclsyntax.Attribute, 0, len(ebody.Attributes))
	for _, a := range ebody.Attributes {
		attrs = append(attrs, a)
	}
	sort.Slice(attrs, func(i, j int) bool { return attrs[i].SrcRange.Start.Byte < attrs[j].SrcRange.Start.Byte })
	var reps []replacement
	var inserts []string
	for _, na := range attrs {
		idx := -1
		for i, it := range obj.Items {
			if k, ok := objectKey(it.KeyExpr); ok && k == na.Name {
				idx = i
				break
			}
		}
		switch {
		case idx < 0 && isNull(na.Expr):
		case idx < 0:
			inserts = append(inserts, na.Name+" = "+source(editSrc, na.Expr.Range()))
		case isNull(na.Expr):
			start, end := itemSpan(content, obj.Items[idx])
			reps = append(reps, replacement{start, end, ""})
		default:
			r, err := setHCLValue(content, obj.Items[idx].ValueExpr, editSrc, na.Expr, strict)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", na.Name, err)
			}
			reps = append(reps, r...)
		}
	}
	if len(inserts) > 0 {
		reps = append(reps, insertBefore(content, obj.SrcRange.Start.Byte, obj.SrcRange.End.Byte-1, inserts))
	}
	out, err := replace(content, reps)
	if err != nil {
		return nil, err
	}
	return finishHCL(out)
}

// entryAt finds the object-valued map entry whose key is on line, in any
// attribute of any block.
func entryAt(body *hclsyntax.Body, line int) *hclsyntax.ObjectConsExpr {
	for _, a := range body.Attributes {
		if o := entryIn(a.Expr, line); o != nil {
			return o
		}
	}
	for _, b := range body.Blocks {
		if o := entryAt(b.Body, line); o != nil {
			return o
		}
	}
	return nil
}

func entryIn(e hclsyntax.Expression, line int) *hclsyntax.ObjectConsExpr {
	switch t := e.(type) {
	case *hclsyntax.ObjectConsExpr:
		for _, it := range t.Items {
			if v, ok := it.ValueExpr.(*hclsyntax.ObjectConsExpr); ok && it.KeyExpr.Range().Start.Line == line {
				return v
			}
			if o := entryIn(it.ValueExpr, line); o != nil {
				return o
			}
		}
	case *hclsyntax.TupleConsExpr:
		for _, x := range t.Exprs {
			if o := entryIn(x, line); o != nil {
				return o
			}
		}
	case *hclsyntax.FunctionCallExpr:
		for _, x := range t.Args {
			if o := entryIn(x, line); o != nil {
				return o
			}
		}
	}
	return nil
}

// blockAt finds the block whose header is on line, at any depth.
func blockAt(body *hclsyntax.Body, line int) *hclsyntax.Block {
	for _, b := range body.Blocks {
		if b.TypeRange.Start.Line == line {
			return b
		}
		if b.Range().Start.Line <= line && line <= b.Range().End.Line {
			if inner := blockAt(b.Body, line); inner != nil {
				return inner
			}
		}
	}
	return nil
}

func isNull(e hclsyntax.Expression) bool {
	lit, ok := e.(*hclsyntax.LiteralValueExpr)
	return ok && lit.Val.IsNull()
}

func source(src []byte, r hcl.Range) string { return string(src[r.Start.Byte:r.End.Byte]) }

// setValue replaces an existing value by a new one, merging object constructors.
func setHCLValue(content []byte, old hclsyntax.Expression, editSrc []byte, nu hclsyntax.Expression, strict bool) ([]replacement, error) {
	oo, okOld := old.(*hclsyntax.ObjectConsExpr)
	no, okNew := nu.(*hclsyntax.ObjectConsExpr)
	if !okOld || !okNew {
		r := old.Range()
		if rep, ok := spliceHeredoc(content, old, editSrc, nu); ok {
			return []replacement{rep}, nil
		}
		if strict && yamlHeredoc(content, old) && yamlHeredoc(editSrc, nu) {
			return nil, errWhole
		}
		return []replacement{{r.Start.Byte, r.End.Byte, expression(source(editSrc, nu.Range()), lineIndent(content, r.Start.Byte))}}, nil
	}
	var reps []replacement
	var inserts []string
	for _, item := range no.Items {
		key, ok := objectKey(item.KeyExpr)
		if !ok {
			return nil, fmt.Errorf("object keys in an edit must be names or literal strings")
		}
		idx := -1
		for i, oi := range oo.Items {
			if k, ok := objectKey(oi.KeyExpr); ok && k == key {
				idx = i
				break
			}
		}
		switch {
		case idx < 0 && isNull(item.ValueExpr):
		case idx < 0:
			inserts = append(inserts, source(editSrc, item.KeyExpr.Range())+" = "+source(editSrc, item.ValueExpr.Range()))
		case isNull(item.ValueExpr):
			start, end := itemSpan(content, oo.Items[idx])
			reps = append(reps, replacement{start, end, ""})
		default:
			r, err := setHCLValue(content, oo.Items[idx].ValueExpr, editSrc, item.ValueExpr, strict)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			reps = append(reps, r...)
		}
	}
	if len(inserts) > 0 {
		reps = append(reps, insertBefore(content, oo.SrcRange.Start.Byte, oo.SrcRange.End.Byte-1, inserts))
	}
	return reps, nil
}

// objectKey returns the name an object constructor key stands for.
func objectKey(e hclsyntax.Expression) (string, bool) {
	if k, ok := e.(*hclsyntax.ObjectConsKeyExpr); ok {
		if !k.ForceNonLiteral {
			if kw := hcl.ExprAsKeyword(k.Wrapped); kw != "" {
				return kw, true
			}
		}
		e = k.Wrapped
	}
	v, diags := e.Value(nil)
	if diags.HasErrors() || !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
		return "", false
	}
	return v.AsString(), true
}

// insertBefore inserts texts before the closing brace at pos of the braces
// that open at open, each on its own lines, formatted and indented as the
// other lines inside the braces are.
func insertBefore(content []byte, open, pos int, texts []string) replacement {
	var b strings.Builder
	// Start on a fresh line unless the brace already starts one.
	i := pos - 1
	for i >= 0 && (content[i] == ' ' || content[i] == '\t') {
		i--
	}
	at, end, closing := pos, pos, ""
	if i >= 0 && content[i] == '\n' {
		at, end = i+1, i+1
	} else {
		at = i + 1
		b.WriteByte('\n')
		closing = lineIndent(content, open)
	}
	indent := bodyIndent(content, open, pos)
	b.WriteString(alignAfter(content, at, indent, snippet(strings.Join(texts, "\n"), indent, true)))
	b.WriteByte('\n')
	b.WriteString(closing)
	return replacement{at, end, b.String()}
}

// itemSpan is the text of one map entry with its separating comma.
func itemSpan(content []byte, it hclsyntax.ObjectConsItem) (int, int) {
	start, end := it.KeyExpr.Range().Start.Byte, it.ValueExpr.Range().End.Byte
	if end < len(content) && content[end] == ',' {
		end++
	}
	return lineSpan(content, start, end)
}

// lineSpan widens a span to whole lines when it is alone on its lines, so that
// removing an argument or an entry leaves no blank line behind.
func lineSpan(content []byte, start, end int) (int, int) {
	s := start
	for s > 0 && (content[s-1] == ' ' || content[s-1] == '\t') {
		s--
	}
	if s > 0 && content[s-1] != '\n' {
		return start, end
	}
	e := end
	for e < len(content) && (content[e] == ' ' || content[e] == '\t') {
		e++
	}
	if e < len(content) && content[e] == '\n' {
		return s, e + 1
	}
	return start, end
}

func replace(content []byte, reps []replacement) ([]byte, error) {
	sort.Slice(reps, func(i, j int) bool {
		if reps[i].start != reps[j].start {
			return reps[i].start > reps[j].start
		}
		return reps[i].end > reps[j].end
	})
	out := append([]byte{}, content...)
	prev := len(content) + 1
	for _, r := range reps {
		if r.end > prev {
			return nil, fmt.Errorf("the edit changes overlapping parts of the block")
		}
		out = append(out[:r.start:r.start], append([]byte(r.text), out[r.end:]...)...)
		prev = r.start
	}
	return out, nil
}

// finishHCL checks that the result parses.
func finishHCL(out []byte) ([]byte, error) {
	if _, diags := hclwrite.ParseConfig(out, "result.tf", hcl.InitialPos); diags.HasErrors() {
		return nil, fmt.Errorf("the edited file does not parse: %s", diags.Error())
	}
	if _, diags := hclsyntax.ParseConfig(out, "result.tf", hcl.InitialPos); diags.HasErrors() {
		return nil, fmt.Errorf("the edited file does not parse: %s", diags.Error())
	}
	return out, nil
}

// parseBody parses HCL native syntax; failed starts the error of a text that
// does not parse, what names the text ("the file", "the edit").
func parseBody(src []byte, name, failed, what string) (*hclsyntax.Body, error) {
	f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("%s: %s", failed, diags.Error())
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return nil, fmt.Errorf("%s is not native HCL syntax", what)
	}
	return body, nil
}
