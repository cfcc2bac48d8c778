// Package textmatch holds the two approximate string comparisons eksdoctor's
// explanations rely on: wildcard patterns (Fargate selectors, IAM ARNs) and edit
// distance (the "did you mean" of a misspelled field, key or namespace).
package textmatch

import "strings"

// Wildcard matches s against a pattern where * is any run of characters and,
// when question is set, ? is exactly one character (Fargate selectors); without
// it, ? is literal (IAM ARNs). Matching backtracks only to the last star, so it
// is linear in practice and safe on hostile patterns.
func Wildcard(pattern, s string, question bool) bool {
	p, i, star, mark := 0, 0, -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] != '*' && (pattern[p] == s[i] || question && pattern[p] == '?'):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// Distance is the Levenshtein edit distance between a and b, in bytes. Strings
// longer than 64 bytes are never close: the answer is then a large number,
// which keeps hints cheap on hostile input.
func Distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 1 << 30
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Nearest is the candidate nearest a mistyped word (a few edits away, or one
// the word is a part of), or "" when none is near: the "did you mean" of check
// IDs, flags and workload names. Ties go to the first in byte order, so the
// answer does not depend on the order of the candidates.
func Nearest(word string, candidates []string) string {
	best, bestD := "", 0
	for _, c := range candidates {
		d := Distance(word, c)
		if word != "" && len(word) >= 3 && strings.Contains(c, word) {
			d = min(d, 2)
		}
		if d <= max(2, len(c)/4) && (best == "" || d < bestD || d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	return best
}
