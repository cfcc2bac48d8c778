// Package shell words the commands eksdoctor prints for a person to run
// (teardown steps, fixes that are kubectl, helm, eksctl or aws commands). Every
// word that comes from the input — a file name, an object, release or cluster
// name, a namespace — goes through Quote, so that running a printed command runs
// that command and nothing else: a manifest named karpenter$(touch x).yaml is
// deleted by name, never executed. Words eksdoctor writes itself (flags,
// resource kinds) need no quoting.
//
// It must not run anything.
package shell

import "strings"

// Quote returns s as one word for a POSIX shell (sh, bash, zsh): as it is when
// it holds only characters no shell treats specially, else in single quotes,
// inside which nothing is special (a single quote in s closes the quotes, is
// written escaped, and opens them again).
func Quote(s string) string {
	if s != "" && plain(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// plain reports whether s can stand unquoted: letters, digits and
// @ % + = : , . / _ -, not starting with = or ~ (zsh expands =cmd, every shell
// ~user).
func plain(s string) bool {
	if s[0] == '=' || s[0] == '~' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("@%+=:,./_-", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// Join quotes each word and joins them with spaces.
func Join(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = Quote(w)
	}
	return strings.Join(q, " ")
}

// Path quotes a file path given to a command as an argument: one that starts
// with "-" is prefixed with "./", so that the command does not read it as an
// option.
func Path(p string) string {
	if strings.HasPrefix(p, "-") {
		p = "./" + p
	}
	return Quote(p)
}
