package terraform

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	hcljson "github.com/hashicorp/hcl/v2/json"
)

// Terraform's JSON syntax (*.tf.json, as written by CDK for Terraform) is read by
// rewriting it into native syntax on the same lines, so that everything downstream
// (evaluation, origins) is shared. JSON strings are templates as in Terraform; nested
// blocks become object or list-of-object arguments, which is how the model reads
// them from a plan too.
//
// The JSON is parsed by hcl/v2/json (ParseExpression, then hcl.ExprMap and
// hcl.ExprList, which keep the order of keys, repeated keys included, and give
// every value its range); jnode is the tree the native writer reads, with each
// string decoded from its source as written (a JSON string is a template, which
// the library would only evaluate through an hcl.EvalContext). The loader, the
// evaluator and the extractors read hclsyntax blocks, attributes and expressions,
// which is why the files are rewritten rather than read as hcl/v2/json bodies.

type jnode struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	line  int
	str   string
	items []jnode
	keys  []string
	kline []int
}

// parseJSON reads a JSON configuration into a jnode tree with hcl/v2/json.
func parseJSON(src []byte) (jnode, error) {
	if line, deep := tooDeep(src); deep {
		// The library's parser recurses without a limit of its own.
		return jnode{}, fmt.Errorf("line %d: nested deeper than %d levels", line, maxNesting)
	}
	expr, diags := hcljson.ParseExpression(src, "config.tf.json")
	if diags.HasErrors() {
		d := diags.Errs()[0].(*hcl.Diagnostic)
		line := 1
		if d.Subject != nil {
			line = d.Subject.Start.Line
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		return jnode{}, fmt.Errorf("line %d: %s", line, msg)
	}
	return jsonNode(src, expr)
}

// jsonNode turns a parsed JSON value into a jnode.
func jsonNode(src []byte, e hcl.Expression) (jnode, error) {
	r := e.Range()
	n := jnode{line: r.Start.Line}
	text := src[r.Start.Byte:r.End.Byte]
	if len(text) == 0 {
		return n, fmt.Errorf("line %d: empty value", n.line)
	}
	switch c := text[0]; {
	case c == '{':
		n.kind = 'o'
		pairs, diags := hcl.ExprMap(e)
		if diags.HasErrors() {
			return n, fmt.Errorf("line %d: %s", n.line, diags.Error())
		}
		for _, p := range pairs {
			kr := p.Key.Range()
			k, err := jsonString(src[kr.Start.Byte:kr.End.Byte])
			if err != nil {
				return n, fmt.Errorf("line %d: invalid string: %s", kr.Start.Line, err)
			}
			v, err := jsonNode(src, p.Value)
			if err != nil {
				return n, err
			}
			n.keys, n.kline, n.items = append(n.keys, k), append(n.kline, kr.Start.Line), append(n.items, v)
		}
	case c == '[':
		n.kind = 'a'
		list, diags := hcl.ExprList(e)
		if diags.HasErrors() {
			return n, fmt.Errorf("line %d: %s", n.line, diags.Error())
		}
		for _, item := range list {
			v, err := jsonNode(src, item)
			if err != nil {
				return n, err
			}
			n.items = append(n.items, v)
		}
	case c == '"':
		str, err := jsonString(text)
		if err != nil {
			return n, fmt.Errorf("line %d: invalid string: %s", n.line, err)
		}
		n.kind, n.str = 's', str
	case string(text) == "true" || string(text) == "false":
		n.kind, n.str = 'b', string(text)
	case string(text) == "null":
		n.kind = 'z'
	default:
		n.kind, n.str = 'n', string(text)
	}
	return n, nil
}

// jsonString decodes a JSON string literal as written.
func jsonString(lit []byte) (string, error) {
	if s, err := strconv.Unquote(string(lit)); err == nil {
		return s, nil
	}
	if len(lit) < 2 {
		return "", fmt.Errorf("unterminated string")
	}
	// JSON allows escapes Go does not (\/); decode those by hand.
	return jsonUnquote(string(lit[1 : len(lit)-1]))
}

func jsonUnquote(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			return "", fmt.Errorf("bad escape")
		}
		switch s[i] {
		case '"', '\\', '/':
			b.WriteByte(s[i])
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf("bad escape")
			}
			v, err := strconv.ParseUint(s[i+1:i+5], 16, 32)
			if err != nil {
				return "", err
			}
			b.WriteRune(rune(v))
			i += 4
		default:
			return "", fmt.Errorf("bad escape \\%c", s[i])
		}
	}
	return b.String(), nil
}

// nativeWriter writes native syntax, padding with newlines so that each argument
// lands on the line its JSON key was on.
type nativeWriter struct {
	b    strings.Builder
	line int
}

func (w *nativeWriter) to(line int) {
	for w.line < line {
		w.b.WriteByte('\n')
		w.line++
	}
}

func (w *nativeWriter) nl() {
	w.b.WriteByte('\n')
	w.line++
}

func (w *nativeWriter) write(s string) {
	w.b.WriteString(s)
	w.line += strings.Count(s, "\n")
}

// jsonToNative rewrites a JSON configuration file as native syntax.
func jsonToNative(src []byte) ([]byte, error) {
	if !utf8.Valid(src) {
		return nil, fmt.Errorf("not UTF-8 text")
	}
	root, err := parseJSON(src)
	if err != nil {
		return nil, err
	}
	if root.kind != 'o' {
		return nil, fmt.Errorf("line %d: a configuration is a JSON object", root.line)
	}
	w := &nativeWriter{line: 1}
	for i, typ := range root.keys {
		v := root.items[i]
		switch typ {
		case "variable", "output", "module":
			for j, name := range v.keys {
				w.block(v.kline[j], typ, []string{name}, v.items[j])
			}
		case "resource", "data":
			for j, rtype := range v.keys {
				byName := v.items[j]
				for k, name := range byName.keys {
					body := byName.items[k]
					if body.kind == 'a' {
						for _, b := range body.items {
							w.block(byName.kline[k], typ, []string{rtype, name}, b)
						}
						continue
					}
					w.block(byName.kline[k], typ, []string{rtype, name}, body)
				}
			}
		case "provider":
			// Only that a provider is configured matters (a root, not a module).
			for j, name := range v.keys {
				w.to(v.kline[j])
				w.write("provider " + strconv.Quote(name) + " {}")
				w.nl()
			}
		case "terraform":
			for j, name := range v.keys {
				if name == "backend" || name == "cloud" {
					// A backend marks a root as a provider does; one line keeps
					// the lines of what follows.
					w.to(v.kline[j])
					w.write(`provider "terraform-` + name + `" {}`)
					w.nl()
				}
			}
		case "locals":
			if v.kind == 'a' {
				for _, b := range v.items {
					w.block(root.kline[i], typ, nil, b)
				}
				continue
			}
			w.block(root.kline[i], typ, nil, v)
		}
	}
	w.nl()
	return []byte(w.b.String()), nil
}

func (w *nativeWriter) block(line int, typ string, labels []string, body jnode) {
	if body.kind != 'o' {
		return
	}
	w.to(line)
	w.write(typ)
	for _, l := range labels {
		w.write(" " + strconv.Quote(l))
	}
	w.write(" {")
	w.nl()
	for i, k := range body.keys {
		if k == "//" || skipBlocks[k] || k == "dynamic" || k == "provider" || k == "providers" {
			continue
		}
		if !isIdentifier(k) {
			continue
		}
		w.to(body.kline[i])
		w.write(k + " = ")
		v := body.items[i]
		switch {
		case k == "depends_on":
			w.references(v)
		case typ == "variable" && k == "type" && v.kind == 's':
			w.write(v.str)
		case typ == "variable" && k == "default":
			w.value(v, false)
		default:
			w.value(v, true)
		}
		w.nl()
	}
	w.write("}")
	w.nl()
}

func (w *nativeWriter) references(v jnode) {
	w.write("[")
	for i, it := range v.items {
		if i > 0 {
			w.write(", ")
		}
		ref := strings.TrimSuffix(strings.TrimPrefix(it.str, "${"), "}")
		if it.kind != 's' || !isReference(ref) {
			continue
		}
		w.write(ref)
	}
	w.write("]")
}

func isReference(s string) bool {
	if s == "" {
		return false
	}
	for _, part := range strings.Split(s, ".") {
		if !isIdentifier(part) {
			return false
		}
	}
	return true
}

// value writes a JSON value as a native expression: strings are templates (unless
// literal), objects and arrays keep their elements on their lines.
func (w *nativeWriter) value(v jnode, template bool) {
	switch v.kind {
	case 's':
		w.write(quoteTemplate(v.str, template))
	case 'n', 'b':
		w.write(v.str)
	case 'z':
		w.write("null")
	case 'a':
		w.write("[")
		for i, it := range v.items {
			if i > 0 {
				w.write(",")
			}
			w.to(it.line)
			w.value(it, template)
		}
		w.write("]")
	case 'o':
		w.write("{")
		first := true
		for i, k := range v.keys {
			if k == "//" {
				continue
			}
			if !first {
				w.write(",")
			}
			first = false
			w.to(v.kline[i])
			w.write(quoteTemplate(k, false) + " = ")
			w.value(v.items[i], template)
		}
		w.write("}")
	}
}

// quoteTemplate writes a native quoted string; a literal one escapes template
// sequences.
func quoteTemplate(s string, template bool) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		case !template && (c == '$' || c == '%') && i+1 < len(s) && s[i+1] == '{':
			b.WriteByte(c)
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
