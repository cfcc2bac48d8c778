package report

import (
	"fmt"
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

// unsafeRune reports characters that control a terminal or reorder text: C0 and
// C1 controls, DEL, line and paragraph separators, and bidirectional overrides.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	case r == 0xfeff:
		return true
	}
	return false
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
