package terraform

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Terraform's JSON syntax (*.tf.json, as written by CDK for Terraform) is read by
// rewriting it into native syntax on the same lines, so that everything downstream
// (evaluation, origins) is shared. JSON strings are templates as in Terraform; nested
// blocks become object or list-of-object arguments, which is how the model reads
// them from a plan too.
//
// hcl/v2/json is not used to read the files: its bodies and expressions are
// hcl.Body and hcl.Expression values of its own types, while the loader, the
// evaluator and the extractors read hclsyntax blocks, attributes and expressions
// (resourceInstances, evalBody, keyLines, itemLine, ...). Its expressions evaluate
// their strings as templates only through an hcl.EvalContext, which the evaluator does
// not build. Its parser could stand in for jparser below (objects through
// hcl.ExprMap, arrays through hcl.ExprList, literals through Value(nil), lines from
// their ranges), but it has no nesting limit of its own (hostile input would need a
// scan first), and read without a schema (JustAttributes) it refuses a key repeated
// in an object, as a block type may be.

type jnode struct {
	kind  byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	line  int
	str   string
	items []jnode
	keys  []string
	kline []int
}

type jparser struct {
	src   []byte
	pos   int
	line  int
	depth int
}

func (p *jparser) errorf(format string, args ...any) error {
	return fmt.Errorf("line %d: %s", p.line, fmt.Sprintf(format, args...))
}

func (p *jparser) ws() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case '\n':
			p.line++
		case ' ', '\t', '\r':
		default:
			return
		}
		p.pos++
	}
}

func (p *jparser) value() (jnode, error) {
	p.ws()
	if p.pos >= len(p.src) {
		return jnode{}, p.errorf("unexpected end of input")
	}
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxNesting {
		return jnode{}, p.errorf("nested deeper than %d levels", maxNesting)
	}
	n := jnode{line: p.line}
	switch c := p.src[p.pos]; {
	case c == '{':
		n.kind = 'o'
		p.pos++
		p.ws()
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			p.pos++
			return n, nil
		}
		for {
			p.ws()
			kl := p.line
			k, err := p.string()
			if err != nil {
				return n, err
			}
			p.ws()
			if p.pos >= len(p.src) || p.src[p.pos] != ':' {
				return n, p.errorf("expected ':'")
			}
			p.pos++
			v, err := p.value()
			if err != nil {
				return n, err
			}
			n.keys, n.kline, n.items = append(n.keys, k), append(n.kline, kl), append(n.items, v)
			p.ws()
			if p.pos < len(p.src) && p.src[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.pos < len(p.src) && p.src[p.pos] == '}' {
				p.pos++
				return n, nil
			}
			return n, p.errorf("expected ',' or '}'")
		}
	case c == '[':
		n.kind = 'a'
		p.pos++
		p.ws()
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			p.pos++
			return n, nil
		}
		for {
			v, err := p.value()
			if err != nil {
				return n, err
			}
			n.items = append(n.items, v)
			p.ws()
			if p.pos < len(p.src) && p.src[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.pos < len(p.src) && p.src[p.pos] == ']' {
				p.pos++
				return n, nil
			}
			return n, p.errorf("expected ',' or ']'")
		}
	case c == '"':
		s, err := p.string()
		n.kind, n.str = 's', s
		return n, err
	case c == 't' || c == 'f' || c == 'n':
		for _, lit := range []string{"true", "false", "null"} {
			if strings.HasPrefix(string(p.src[p.pos:min(len(p.src), p.pos+5)]), lit) {
				p.pos += len(lit)
				n.kind, n.str = 'b', lit
				if lit == "null" {
					n.kind = 'z'
				}
				return n, nil
			}
		}
		return n, p.errorf("invalid literal")
	default:
		start := p.pos
		for p.pos < len(p.src) && strings.IndexByte("+-0123456789.eE", p.src[p.pos]) >= 0 {
			p.pos++
		}
		if start == p.pos {
			return n, p.errorf("unexpected character %q", c)
		}
		text := string(p.src[start:p.pos])
		if _, err := strconv.ParseFloat(text, 64); err != nil {
			return n, p.errorf("invalid number %s", text)
		}
		n.kind, n.str = 'n', text
		return n, nil
	}
}

func (p *jparser) string() (string, error) {
	if p.pos >= len(p.src) || p.src[p.pos] != '"' {
		return "", p.errorf("expected a string")
	}
	start := p.pos
	p.pos++
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case '\\':
			p.pos += 2
			continue
		case '\n':
			return "", p.errorf("newline in string")
		case '"':
			p.pos++
			s, err := strconv.Unquote(string(p.src[start:p.pos]))
			if err != nil {
				// JSON allows escapes Go does not (\/); decode those by hand.
				s, err = jsonUnquote(string(p.src[start+1 : p.pos-1]))
				if err != nil {
					return "", p.errorf("invalid string: %s", err)
				}
			}
			return s, nil
		}
		p.pos++
	}
	return "", p.errorf("unterminated string")
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
	p := &jparser{src: src, line: 1}
	root, err := p.value()
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.pos != len(src) {
		return nil, p.errorf("unexpected content after the configuration")
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
