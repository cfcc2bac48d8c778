package terraform

import (
	"regexp"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/source/manifest"
)

// An edit never formats the file: only the text it adds is formatted (as
// `terraform fmt` would format it on its own), then indented to where it goes,
// so every byte around it stays as the user wrote it.

// snippet formats HCL text that is added to a file and indents it: every line
// gets indent, except the first when first is false (the text continues a
// line already there). A <<- heredoc's content and closing marker are
// indented to the line its opener is on (<<- strips that indentation, so the
// string is unchanged); a << heredoc's content is left exactly as it is.
func snippet(src, indent string, first bool) string {
	formatted := string(hclwrite.Format([]byte(strings.TrimSpace(src) + "\n")))
	lines := strings.Split(strings.TrimSuffix(formatted, "\n"), "\n")
	verbatim := make([]bool, len(lines))
	toks, diags := hclsyntax.LexConfig([]byte(formatted), "snippet.tf", hcl.InitialPos)
	if !diags.HasErrors() {
		for i := 0; i < len(toks); i++ {
			if toks[i].Type != hclsyntax.TokenOHeredoc {
				continue
			}
			open := toks[i].Range.Start.Line - 1
			flush := strings.HasPrefix(string(toks[i].Bytes), "<<-")
			j := i + 1
			for j < len(toks) && toks[j].Type != hclsyntax.TokenCHeredoc {
				j++
			}
			if j == len(toks) {
				break
			}
			closing := toks[j].Range.Start.Line - 1
			i = j
			if !flush {
				for l := open + 1; l <= closing && l < len(lines); l++ {
					verbatim[l] = true
				}
				continue
			}
			pad := lines[open][:len(lines[open])-len(strings.TrimLeft(lines[open], " \t"))]
			least := -1
			for l := open + 1; l < closing && l < len(lines); l++ {
				if strings.TrimSpace(lines[l]) == "" {
					continue
				}
				if n := len(lines[l]) - len(strings.TrimLeft(lines[l], " \t")); least < 0 || n < least {
					least = n
				}
			}
			for l := open + 1; l < closing && l < len(lines); l++ {
				if strings.TrimSpace(lines[l]) == "" {
					lines[l] = ""
					continue
				}
				lines[l] = pad + lines[l][max(least, 0):]
			}
			if closing < len(lines) {
				lines[closing] = pad + strings.TrimLeft(lines[closing], " \t")
			}
		}
	}
	lines, verbatim = joinCommas(lines, verbatim)
	for i, l := range lines {
		if verbatim[i] || l == "" || (i == 0 && !first) {
			continue
		}
		lines[i] = indent + l
	}
	return strings.Join(lines, "\n")
}

// expression formats an expression that replaces another in place: its first
// line continues the line the old one starts on, its other lines are indented
// to that line.
func expression(src, indent string) string {
	const name = "x = "
	out := snippet(name+src, indent, false)
	return strings.TrimPrefix(out, name)
}

// lineIndent is the indentation of the line that holds offset pos.
func lineIndent(content []byte, pos int) string {
	s := pos
	for s > 0 && content[s-1] != '\n' {
		s--
	}
	e := s
	for e < len(content) && (content[e] == ' ' || content[e] == '\t') {
		e++
	}
	return string(content[s:e])
}

// bodyIndent is the indentation of what is inside the braces that open at
// open and close at close: that of the first line written inside, else the
// opening line's indentation and two spaces.
func bodyIndent(content []byte, open, close int) string {
	i := open + 1
	for i < close {
		// Skip to the start of the next line.
		for i < close && content[i] != '\n' {
			i++
		}
		i++
		if i >= close {
			break
		}
		j := i
		for j < close && (content[j] == ' ' || content[j] == '\t') {
			j++
		}
		if j < close && content[j] != '\n' && content[j] != '\r' && content[j] != '#' && content[j] != '/' && content[j] != '}' {
			return string(content[i:j])
		}
	}
	return lineIndent(content, open) + "  "
}

// heredocText is a heredoc as written: its opener line, its content (without
// the indentation a <<- heredoc strips) and the indentation stripped, and its
// closing marker line.
type heredocText struct {
	opener, body, indent, closer string
}

func parseHeredoc(text string) (heredocText, bool) {
	first, rest, ok := strings.Cut(text, "\n")
	if !ok || !strings.HasPrefix(first, "<<") || strings.ContainsAny(first, " \t") {
		return heredocText{}, false
	}
	i := strings.LastIndex(strings.TrimRight(rest, "\n"), "\n")
	body, closer := "", rest
	if i >= 0 {
		body, closer = rest[:i+1], rest[i+1:]
	}
	if strings.TrimSpace(closer) != strings.TrimLeft(strings.TrimPrefix(first, "<<"), "-") {
		return heredocText{}, false
	}
	h := heredocText{opener: first, body: body, closer: closer}
	if strings.HasPrefix(first, "<<-") {
		least := -1
		lines := strings.Split(body, "\n")
		for _, l := range lines {
			if strings.TrimSpace(l) == "" {
				continue
			}
			if n := len(l) - len(strings.TrimLeft(l, " ")); least < 0 || n < least {
				least = n
			}
		}
		if least > 0 {
			h.indent = strings.Repeat(" ", least)
			for i, l := range lines {
				lines[i] = strings.TrimPrefix(l, h.indent)
			}
			h.body = strings.Join(lines, "\n")
		}
	}
	return h, true
}

// spliceHeredoc changes a heredoc of YAML (a kubectl_manifest's yaml_body, a
// values document) into another by the smallest splices of its YAML (see
// manifest.EditValues): the lines the change does not touch, comments
// included, stay as written, at the heredoc's indentation. ok is false when
// either is not a heredoc of one YAML mapping, or holds template directives.
func spliceHeredoc(content []byte, old hclsyntax.Expression, editSrc []byte, nu hclsyntax.Expression) (replacement, bool) {
	or, nr := old.Range(), nu.Range()
	otext, ntext := string(content[or.Start.Byte:or.End.Byte]), string(editSrc[nr.Start.Byte:nr.End.Byte])
	oh, ok := parseHeredoc(otext)
	if !ok {
		return replacement{}, false
	}
	nh, ok := parseHeredoc(ntext)
	if !ok || strings.Contains(otext+ntext, "%{") || strings.Contains("\n"+oh.body+nh.body, "\n---") {
		return replacement{}, false
	}
	var want map[string]any
	if err := yaml.Unmarshal([]byte(nh.body), &want); err != nil || want == nil {
		return replacement{}, false
	}
	out, ok := manifest.EditValues([]byte(oh.body), want, nh.body)
	if !ok {
		return replacement{}, false
	}
	var b strings.Builder
	b.WriteString(oh.opener + "\n")
	for _, l := range strings.SplitAfter(string(out), "\n") {
		if strings.TrimSpace(l) != "" {
			b.WriteString(oh.indent)
		}
		b.WriteString(l)
	}
	b.WriteString(oh.closer)
	return replacement{or.Start.Byte, or.End.Byte, b.String()}, true
}

// yamlHeredoc reports whether an expression is a heredoc of one YAML mapping.
func yamlHeredoc(src []byte, e hclsyntax.Expression) bool {
	r := e.Range()
	h, ok := parseHeredoc(string(src[r.Start.Byte:r.End.Byte]))
	if !ok {
		return false
	}
	var m map[string]any
	return yaml.Unmarshal([]byte(h.body), &m) == nil && m != nil
}

// joinCommas moves a comma that is alone on its line (the separator after a
// heredoc, whose closing marker must end its line) to the start of the next
// element's line, `, yamlencode(...)`; before a closing bracket it is dropped
// (a trailing comma is optional).
func joinCommas(lines []string, verbatim []bool) ([]string, []bool) {
	var out []string
	var verb []bool
	for i := 0; i < len(lines); i++ {
		if !verbatim[i] && strings.TrimSpace(lines[i]) == "," && i+1 < len(lines) && !verbatim[i+1] {
			next := strings.TrimLeft(lines[i+1], " \t")
			if strings.HasPrefix(next, "]") || strings.HasPrefix(next, ")") || strings.HasPrefix(next, "}") {
				continue
			}
			pad := lines[i][:len(lines[i])-len(strings.TrimLeft(lines[i], " \t"))]
			lines[i+1] = pad + ", " + next
			continue
		}
		out = append(out, lines[i])
		verb = append(verb, verbatim[i])
	}
	return out, verb
}

// attrLine is a line that starts an attribute: its indentation, name, the
// blanks before its equals sign.
var attrLine = regexp.MustCompile(`^([ \t]*)([A-Za-z_][A-Za-z0-9_-]*)([ \t]*)=[^=>]`)

// alignAfter aligns the equals signs of the attributes a snippet starts with
// to those of the attribute on the line just before at, as `terraform fmt`
// aligns a run of attributes, when their names fit; the lines already in the
// file are left as they are.
func alignAfter(content []byte, at int, indent, text string) string {
	if at == 0 || content[at-1] != '\n' {
		return text
	}
	s := at - 1
	for s > 0 && content[s-1] != '\n' {
		s--
	}
	prev := attrLine.FindStringSubmatch(string(content[s : at-1]))
	if prev == nil || prev[1] != indent {
		return text
	}
	col := len(prev[1]) + len(prev[2]) + len(prev[3])
	lines := strings.Split(text, "\n")
	var run []int
	for i, l := range lines {
		m := attrLine.FindStringSubmatch(l)
		if m == nil || m[1] != indent {
			break
		}
		if len(m[1])+len(m[2])+1 > col {
			return text
		}
		run = append(run, i)
		if i+1 < len(lines) && !attrLine.MatchString(lines[i+1]) {
			break
		}
	}
	for _, i := range run {
		m := attrLine.FindStringSubmatch(lines[i])
		rest := lines[i][len(m[1])+len(m[2])+len(m[3]):]
		lines[i] = m[1] + m[2] + strings.Repeat(" ", col-len(m[1])-len(m[2])) + rest
	}
	return strings.Join(lines, "\n")
}
