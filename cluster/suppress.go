package cluster

import (
	"regexp"
	"strings"
)

// Suppression silences checks on part of a file: a comment
// "# eksdoctor:ignore=ID[,ID] reason" (also "//" and "/* */") on the line
// before a Terraform block or attribute covers the lines of that block or
// attribute.
type Suppression struct {
	// Origin is the comment.
	Origin Origin
	// File, From and To are the lines it covers (From and To included).
	File     string
	From, To int
	// Checks are the IDs named ("*" or "all" for every check).
	Checks []string
	Reason string
}

// Covers reports whether the suppression silences a check at an origin.
func (s Suppression) Covers(check string, at Origin) bool {
	return at.File == s.File && at.Line >= s.From && at.Line <= s.To && names(s.Checks, check)
}

// names reports whether a list of check IDs names a check ("*" and "all"
// name every check).
func names(ids []string, check string) bool {
	for _, id := range ids {
		if id == check || id == "*" || id == "all" {
			return true
		}
	}
	return false
}

// ignoreComment matches the comment's text: eksdoctor:ignore=ID[,ID] reason.
var ignoreComment = regexp.MustCompile(`^(?:#|//|/\*)\s*eksdoctor:ignore=([A-Za-z0-9*_,-]*)\s*(.*?)\s*(?:\*/)?\s*$`)

// ParseIgnoreComment reads a comment that silences checks: the IDs and the
// reason; ok is false for any other comment.
func ParseIgnoreComment(comment string) (ids []string, reason string, ok bool) {
	m := ignoreComment.FindStringSubmatch(strings.TrimSpace(comment))
	if m == nil {
		return nil, "", false
	}
	return SplitIDs(m[1]), m[2], true
}

// SplitIDs splits a comma-separated list of check IDs, trimmed, empty ones left out.
func SplitIDs(s string) []string {
	var ids []string
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	return ids
}
