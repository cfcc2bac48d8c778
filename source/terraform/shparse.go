package terraform

import (
	"strings"
)

// A reader of the shell commands a local-exec provisioner runs, enough to see
// what they apply and delete: words with their quotes removed, pipelines,
// here-documents, redirections and variables set by the provisioner's
// environment or by the script itself. It never runs anything. What a shell
// would only know when running (command substitutions, variables of the
// environment Terraform runs in, globs) is marked dynamic; loops and
// conditions are marked so that their commands are said to be unread rather
// than taken as certain.

// maxScript bounds the command text read; maxWords the words kept.
const (
	maxScript = 1 << 20
	maxWords  = 100_000
)

// shWord is one word of a command after quote removal.
type shWord struct {
	text string
	// dyn: part of the word is known only when the shell runs it.
	dyn bool
}

// shCmd is one simple command.
type shCmd struct {
	words []shWord
	// stdin is what the command reads on its standard input when the script
	// gives it (a here-document, a here-string); stdinDyn when that text holds
	// expansions not known; stdinFile a file redirected with <.
	stdin     *string
	stdinDyn  bool
	stdinFile *shWord
	// line is the 0-based line of the script the command starts on.
	line int
	// nested: the command runs inside a loop, a condition, a function, a
	// subshell or a group; whether and how often it runs is not read.
	nested bool
}

// shPipeline is commands joined by |.
type shPipeline struct {
	cmds []*shCmd
}

// shScript is a parsed command text.
type shScript struct {
	pipelines []*shPipeline
	// tooLarge: the text is longer than maxScript (or has too many words) and
	// was not read.
	tooLarge bool
}

type heredocReq struct {
	cmd   *shCmd
	delim string
	quote bool // quoted delimiter: the body is taken literally
	strip bool // <<-: leading tabs are removed
}

type shParser struct {
	s       string
	i       int
	line    int
	env     map[string]string
	unset   map[string]bool
	out     *shScript
	pipe    *shPipeline
	cmd     *shCmd
	pending []heredocReq
	depth   int // loops, conditions, groups open
	words   int
	// redirect is the pending redirection operator whose target is the next word.
	redirect string
}

// parseShell reads a command text as sh or bash would split it. env are the
// variables the provisioner's environment gives.
func parseShell(text string, env map[string]string) *shScript {
	out := &shScript{}
	if len(text) > maxScript {
		out.tooLarge = true
		return out
	}
	p := &shParser{s: text, env: map[string]string{}, unset: map[string]bool{}, out: out}
	for k, v := range env {
		p.env[k] = v
	}
	p.run()
	return out
}

var shKeywordsOpen = map[string]bool{"if": true, "for": true, "while": true, "until": true, "case": true, "select": true, "function": true, "{": true, "(": true}
var shKeywordsClose = map[string]bool{"fi": true, "done": true, "esac": true, "}": true, ")": true}
var shKeywordsMid = map[string]bool{"then": true, "else": true, "elif": true, "do": true, "in": true, "!": true}

func (p *shParser) startCmd() {
	if p.cmd == nil {
		p.cmd = &shCmd{line: p.line, nested: p.depth > 0}
	}
}

func (p *shParser) endCmd() {
	c := p.cmd
	p.cmd = nil
	p.redirect = ""
	if c == nil || len(c.words) == 0 && c.stdin == nil && c.stdinFile == nil {
		return
	}
	// Assignments before the command name set its environment; alone, they set
	// shell variables for the rest of the script.
	n := 0
	for n < len(c.words) && assignment(c.words[n].text) {
		n++
	}
	if n == len(c.words) {
		for _, w := range c.words {
			k, v, _ := strings.Cut(w.text, "=")
			if w.dyn {
				delete(p.env, k)
				p.unset[k] = true
			} else {
				p.env[k] = v
				delete(p.unset, k)
			}
		}
		return
	}
	c.words = c.words[n:]
	if p.pipe == nil {
		p.pipe = &shPipeline{}
		p.out.pipelines = append(p.out.pipelines, p.pipe)
	}
	p.pipe.cmds = append(p.pipe.cmds, c)
}

func (p *shParser) endPipeline() {
	p.endCmd()
	p.pipe = nil
}

func assignment(w string) bool {
	k, _, ok := strings.Cut(w, "=")
	return ok && isShellName(k)
}

func isShellName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func (p *shParser) run() {
	for p.i < len(p.s) {
		if p.words > maxWords {
			p.out.tooLarge = true
			return
		}
		c := p.s[p.i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			p.i++
		case c == '\\' && p.i+1 < len(p.s) && p.s[p.i+1] == '\n':
			p.i += 2
			p.line++
		case c == '\n':
			p.i++
			p.endPipeline()
			p.line++
			p.readHeredocs()
		case c == '#':
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		case c == ';' || c == '&':
			p.i++
			if p.i < len(p.s) && (p.s[p.i] == c || c == '&' && p.s[p.i] == '>') {
				if c == '&' && p.s[p.i] == '>' {
					// &> redirects both outputs.
					p.i++
					p.startCmd()
					p.redirect = ">"
					continue
				}
				p.i++
			}
			p.endPipeline()
		case c == '|':
			p.i++
			if p.i < len(p.s) && p.s[p.i] == '|' {
				p.i++
				p.endPipeline()
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == '&' {
				p.i++
			}
			p.endCmd()
		case c == '(' || c == ')':
			p.i++
			p.endPipeline()
			if c == '(' {
				p.depth++
			} else if p.depth > 0 {
				p.depth--
			}
		case c == '<' || c == '>':
			p.readRedirect()
		default:
			p.readWord()
		}
	}
	p.endPipeline()
}

func (p *shParser) readRedirect() {
	p.startCmd()
	s := p.s
	if strings.HasPrefix(s[p.i:], "<<<") {
		p.i += 3
		p.redirect = "<<<"
		return
	}
	if strings.HasPrefix(s[p.i:], "<<") {
		p.i += 2
		strip := false
		if p.i < len(s) && s[p.i] == '-' {
			strip = true
			p.i++
		}
		for p.i < len(s) && (s[p.i] == ' ' || s[p.i] == '\t') {
			p.i++
		}
		start := p.i
		w := p.word()
		raw := s[start:p.i]
		p.pending = append(p.pending, heredocReq{cmd: p.cmd, delim: w.text, quote: strings.ContainsAny(raw, `'"\`), strip: strip})
		return
	}
	op := string(s[p.i])
	p.i++
	for p.i < len(s) && (s[p.i] == '>' || s[p.i] == '&' || s[p.i] == '|') {
		op += string(s[p.i])
		p.i++
	}
	if strings.HasSuffix(op, "&") {
		// >&2, <&0: a descriptor, not a file.
		for p.i < len(s) && (s[p.i] >= '0' && s[p.i] <= '9' || s[p.i] == '-') {
			p.i++
		}
		return
	}
	p.redirect = op
}

// readHeredocs reads the bodies of the here-documents of the line just ended.
func (p *shParser) readHeredocs() {
	reqs := p.pending
	p.pending = nil
	for _, r := range reqs {
		var body strings.Builder
		for p.i < len(p.s) {
			end := strings.IndexByte(p.s[p.i:], '\n')
			var ln string
			if end < 0 {
				ln = p.s[p.i:]
				p.i = len(p.s)
			} else {
				ln = p.s[p.i : p.i+end]
				p.i += end + 1
			}
			p.line++
			cmp := strings.TrimRight(ln, "\r")
			if r.strip {
				cmp = strings.TrimLeft(cmp, "\t")
				ln = strings.TrimLeft(ln, "\t")
			}
			if cmp == r.delim {
				break
			}
			body.WriteString(ln)
			body.WriteByte('\n')
		}
		text := body.String()
		dyn := false
		if !r.quote {
			text, dyn = p.expandText(text)
		}
		if r.cmd != nil {
			r.cmd.stdin, r.cmd.stdinDyn = &text, dyn
		}
	}
}

// expandText expands $NAME, ${NAME}, $(...) and `...` in a here-document body.
func (p *shParser) expandText(text string) (string, bool) {
	if !strings.ContainsAny(text, "$`\\") {
		return text, false
	}
	var b strings.Builder
	dyn := false
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\\' && i+1 < len(text) && strings.IndexByte("$`\\\n", text[i+1]) >= 0:
			if text[i+1] != '\n' {
				b.WriteByte(text[i+1])
			}
			i += 2
		case c == '$':
			n, s, d := p.dollar(text, i)
			b.WriteString(s)
			dyn = dyn || d
			i += n
		case c == '`':
			j := strings.IndexByte(text[i+1:], '`')
			if j < 0 {
				i = len(text)
			} else {
				i += j + 2
			}
			dyn = true
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String(), dyn
}

// dollar reads an expansion at s[i] == '$': its length, its text when known
// (a Terraform placeholder ${a.b} is kept as it is), and whether it is dynamic.
func (p *shParser) dollar(s string, i int) (int, string, bool) {
	if i+1 >= len(s) {
		return 1, "$", false
	}
	switch c := s[i+1]; {
	case c == '(':
		return matchClose(s, i+1, '(', ')') - i, "", true
	case c == '{':
		end := matchClose(s, i+1, '{', '}')
		inner := s[i+2 : max(i+2, end-1)]
		if isShellName(inner) {
			v, d := p.variable(inner)
			return end - i, v, d
		}
		if strings.ContainsAny(inner, ".[") && !strings.ContainsAny(inner, ":#%/^,@!") {
			// A value Terraform does not know before apply (cluster.Unknown).
			return end - i, s[i:end], false
		}
		return end - i, "", true
	case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		j := i + 1
		for j < len(s) && (s[j] == '_' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		v, d := p.variable(s[i+1 : j])
		return j - i, v, d
	case c >= '0' && c <= '9' || strings.IndexByte("@*#?$!-", c) >= 0:
		return 2, "", true
	case c == '\'':
		// $'...' ANSI-C quoting: read literally (escapes are not expanded).
		j := strings.IndexByte(s[i+2:], '\'')
		if j < 0 {
			return len(s) - i, s[i+2:], true
		}
		return j + 3, s[i+2 : i+2+j], strings.Contains(s[i+2:i+2+j], `\`)
	}
	return 1, "$", false
}

func (p *shParser) variable(name string) (string, bool) {
	if v, ok := p.env[name]; ok {
		return v, false
	}
	return "", true
}

// matchClose returns the index after the bracket closing the one at s[i],
// counting nesting; len(s) when it is not closed.
func matchClose(s string, i int, open, close byte) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '\'':
			if k := strings.IndexByte(s[j+1:], '\''); k >= 0 {
				j += k + 1
			}
		case open:
			depth++
		case close:
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(s)
}

// readWord reads one word and files it: a command word, the target of a
// redirection, or a keyword that opens or closes a construct.
func (p *shParser) readWord() {
	first := p.cmd == nil || len(p.cmd.words) == 0
	p.startCmd()
	w := p.word()
	p.words++
	if r := p.redirect; r != "" {
		p.redirect = ""
		switch r {
		case "<":
			p.cmd.stdinFile = &w
		case "<<<":
			t := w.text + "\n"
			p.cmd.stdin, p.cmd.stdinDyn = &t, w.dyn
		}
		return
	}
	if first && !w.dyn {
		switch {
		case shKeywordsOpen[w.text]:
			p.depth++
			p.cmd.nested = true
			p.cmd.words = nil
			return
		case shKeywordsClose[w.text]:
			if p.depth > 0 {
				p.depth--
			}
			p.cmd.words = nil
			return
		case shKeywordsMid[w.text]:
			p.cmd.nested = p.depth > 0
			return
		}
	}
	// A descriptor before a redirection (2>file) is not a word.
	if p.i < len(p.s) && (p.s[p.i] == '>' || p.s[p.i] == '<') && isDigits(w.text) {
		return
	}
	p.cmd.words = append(p.cmd.words, w)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// word reads a word at p.i, removing quotes and expanding what is known.
func (p *shParser) word() shWord {
	var b strings.Builder
	var w shWord
	s := p.s
	for p.i < len(s) {
		c := s[p.i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';' || c == '&' || c == '|' || c == '<' || c == '>' || c == '(' || c == ')':
			w.text = b.String()
			return w
		case c == '\\':
			if p.i+1 < len(s) {
				if s[p.i+1] == '\n' {
					p.line++
				} else {
					b.WriteByte(s[p.i+1])
				}
				p.i += 2
			} else {
				p.i++
			}
		case c == '\'':
			j := strings.IndexByte(s[p.i+1:], '\'')
			if j < 0 {
				b.WriteString(s[p.i+1:])
				p.line += strings.Count(s[p.i+1:], "\n")
				p.i = len(s)
			} else {
				b.WriteString(s[p.i+1 : p.i+1+j])
				p.line += strings.Count(s[p.i+1:p.i+1+j], "\n")
				p.i += j + 2
			}
		case c == '"':
			p.i++
			for p.i < len(s) && s[p.i] != '"' {
				d := s[p.i]
				switch {
				case d == '\\' && p.i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[p.i+1]) >= 0:
					if s[p.i+1] != '\n' {
						b.WriteByte(s[p.i+1])
					} else {
						p.line++
					}
					p.i += 2
				case d == '$':
					n, t, dyn := p.dollar(s, p.i)
					p.line += strings.Count(s[p.i:p.i+n], "\n")
					b.WriteString(t)
					w.dyn = w.dyn || dyn
					p.i += n
				case d == '`':
					j := strings.IndexByte(s[p.i+1:], '`')
					if j < 0 {
						p.i = len(s)
					} else {
						p.line += strings.Count(s[p.i+1:p.i+1+j], "\n")
						p.i += j + 2
					}
					w.dyn = true
				default:
					if d == '\n' {
						p.line++
					}
					b.WriteByte(d)
					p.i++
				}
			}
			if p.i < len(s) {
				p.i++ // the closing quote
			}
		case c == '$':
			n, t, dyn := p.dollar(s, p.i)
			p.line += strings.Count(s[p.i:p.i+n], "\n")
			b.WriteString(t)
			w.dyn = w.dyn || dyn
			p.i += n
		case c == '`':
			j := strings.IndexByte(s[p.i+1:], '`')
			if j < 0 {
				p.i = len(s)
			} else {
				p.line += strings.Count(s[p.i+1:p.i+1+j], "\n")
				p.i += j + 2
			}
			w.dyn = true
		case c == '*' || c == '?' || c == '[':
			// A glob: the files it names are known when the shell runs it.
			w.dyn = true
			b.WriteByte(c)
			p.i++
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	w.text = b.String()
	return w
}
