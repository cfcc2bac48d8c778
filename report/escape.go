package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Everything a report prints about the input (names, paths, values, messages that
// quote them) was written by whoever wrote the input: in CI, a stranger's pull
// request. Text that reaches a terminal or a build log must not be able to move the
// cursor, recolour the screen, or issue a CI workflow command (GitHub Actions reads
// any line whose first non-blank characters are "::" as one: ::add-mask::,
// ::error file=...::). So text outputs escape control characters in what comes from
// the input, and guard every line they write.

// Line escapes s for a place that holds one line: every control character,
// including line breaks, is written as a Go escape (\n, \x1b, \u202e).
func Line(s string) string { return escape(s, false) }

// Block escapes s for a place that holds several lines: line breaks are kept,
// every other control character is escaped.
func Block(s string) string { return escape(s, true) }

func escape(s string, keepNewlines bool) string {
	if safe(s, keepNewlines) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' && keepNewlines, r == '\t':
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case unsafeRune(r):
			if r < 0x100 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

func safe(s string, keepNewlines bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' && !(keepNewlines && c == '\n') || c == 0x7f || c >= 0x80 {
			return !needsEscape(s[i:], keepNewlines)
		}
	}
	return true
}

// needsEscape is the slow path of safe, for text with non-ASCII characters.
func needsEscape(s string, keepNewlines bool) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\n' && !keepNewlines || r != '\n' && r != '\t' && unsafeRune(r) {
			return true
		}
		i += size
	}
	return false
}

// unsafeRune reports characters that control a terminal, or that do not show
// or reorder text (invisible).
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	}
	return invisible(r)
}

// invisible reports characters a reader does not see but a program does, so
// that a name shown is not the name read ("Trojan Source"): bidirectional
// controls (U+202A–U+202E, U+2066–U+2069, the marks), zero-width characters
// (U+200B–U+200D, U+2060, U+FEFF), line and paragraph separators, and every
// other format character, filler and variation selector that renders as
// nothing.
func invisible(r rune) bool {
	switch {
	case r < 0xa0:
		return false
	case r == 0x2028, r == 0x2029:
		return true
	case r == 0x115f, r == 0x1160, r == 0x3164, r == 0xffa0, r == 0x034f, r == 0x180e:
		return true // Hangul fillers, the combining grapheme joiner, the Mongolian vowel separator
	case r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef:
		return true // variation selectors
	}
	return unicode.Is(unicode.Cf, r)
}

// visibleJSON rewrites an encoded JSON document so that no string in it holds
// an invisible character (see invisible): each becomes the text \u202e, as the
// text report writes it, rather than the character, or a JSON escape a reader
// turns back into the character. Control characters keep their JSON escapes: a
// JSON reader decodes them, and shows them as what they are.
func visibleJSON(data []byte) []byte {
	var out []byte // nil while nothing changed
	inString, escaped := false, false
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case !inString:
			if c == '"' {
				inString = true
			}
		case escaped:
			escaped = false
			if c == 'u' && i+5 <= len(data) {
				if r, ok := hex4(data[i+1 : i+5]); ok && invisible(r) {
					// \u2028 → \\u2028: the backslash itself escaped.
					out = append(cut(out, data, i), `\u`...)
					out = append(out, data[i+1:i+5]...)
					i += 5
					continue
				}
			}
		case c == '\\':
			escaped = true
		case c == '"':
			inString = false
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(data[i:])
			if invisible(r) {
				out = fmt.Appendf(cut(out, data, i), `\\u%04x`, r)
				i += size
				continue
			}
			if out != nil {
				out = append(out, data[i:i+size]...)
			}
			i += size
			continue
		}
		if out != nil {
			out = append(out, c)
		}
		i++
	}
	if out == nil {
		return data
	}
	return out
}

// cut starts the rewritten copy of data at i the first time something changes.
func cut(out, data []byte, i int) []byte {
	if out == nil {
		out = make([]byte, 0, len(data)+64)
		out = append(out, data[:i]...)
	}
	return out
}

func hex4(b []byte) (rune, bool) {
	var r rune
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// EncodeJSON writes v as every JSON document of eksdoctor is written:
// indented, without HTML escaping, with invisible characters made visible.
func EncodeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(visibleJSON(buf.Bytes()))
	return err
}

// Guard makes sure no line of a text output can be read as a CI workflow command:
// a line whose first non-blank characters are "::" gets a backslash before them.
// Blank is any Unicode white space, as the Actions runner trims (a no-break space
// before "::" still starts a command there).
func Guard(s string) string {
	if !strings.Contains(s, "::") {
		return s
	}
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		trimmed := strings.TrimLeftFunc(l, unicode.IsSpace)
		if strings.HasPrefix(trimmed, "::") {
			lead := l[:len(l)-len(trimmed)]
			lines[i] = lead + `\` + trimmed
		}
	}
	return strings.Join(lines, "")
}
