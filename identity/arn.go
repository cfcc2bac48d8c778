package identity

import (
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/textmatch"
)

// ARN is an IAM role ARN split into the parts EKS compares. Any part may contain
// placeholders of values unknown before apply.
type ARN struct {
	Partition string
	Account   string
	// Path is the IAM path with its slashes ("/", "/team/"); aws-auth does not
	// match role ARNs that carry a path other than "/".
	Path string
	Name string
}

// ParseRoleARN splits arn:<partition>:iam::<account>:role/<path...>/<name>. It
// accepts placeholders anywhere, including inside the name, and reports false for
// anything that is not an IAM role ARN.
func ParseRoleARN(s string) (ARN, bool) {
	masked, restore := mask(s)
	if !strings.HasPrefix(masked, "arn:") {
		return ARN{}, false
	}
	parts := strings.SplitN(masked, ":", 6)
	if len(parts) != 6 || parts[2] != "iam" {
		return ARN{}, false
	}
	res := parts[5]
	if !strings.HasPrefix(res, "role/") {
		return ARN{}, false
	}
	res = strings.TrimPrefix(res, "role/")
	if res == "" {
		return ARN{}, false
	}
	a := ARN{Partition: restore(parts[1]), Account: restore(parts[4]), Path: "/"}
	if i := strings.LastIndexByte(res, '/'); i >= 0 {
		a.Path = restore("/" + res[:i+1])
		res = res[i+1:]
	}
	a.Name = restore(res)
	return a, a.Name != ""
}

// HasPath reports whether the ARN carries an IAM path other than "/".
func (a ARN) HasPath() bool { return a.Path != "" && a.Path != "/" }

// WithoutPath returns the ARN as aws-auth wants it: arn:<p>:iam::<acct>:role/<name>.
func (a ARN) WithoutPath() string {
	return "arn:" + a.Partition + ":iam::" + a.Account + ":role/" + a.Name
}

// String renders the ARN.
func (a ARN) String() string {
	p := a.Path
	if p == "" {
		p = "/"
	}
	return "arn:" + a.Partition + ":iam::" + a.Account + ":role" + p + a.Name
}

// mask replaces every placeholder with a token free of ':' and '/', so that the
// ARN grammar can be applied to text whose unknown parts may contain either.
func mask(s string) (string, func(string) string) {
	exprs := cluster.UnknownExprs(s)
	if len(exprs) == 0 {
		return s, func(x string) string { return x }
	}
	var b strings.Builder
	var tokens []string
	rest := s
	for _, e := range exprs {
		ph := cluster.Unknown(e)
		i := strings.Index(rest, ph)
		if i < 0 {
			break
		}
		b.WriteString(rest[:i])
		tok := "\x00" + string(rune('A'+len(tokens)%26)) + strings.Repeat("\x01", len(tokens)/26) + "\x00"
		tokens = append(tokens, ph)
		b.WriteString(tok)
		rest = rest[i+len(ph):]
	}
	b.WriteString(rest)
	restore := func(x string) string {
		for i, ph := range tokens {
			tok := "\x00" + string(rune('A'+i%26)) + strings.Repeat("\x01", i/26) + "\x00"
			x = strings.ReplaceAll(x, tok, ph)
		}
		return x
	}
	return b.String(), restore
}

// nameMatch compares two role names, either of which may contain placeholders:
// Yes when equal (IAM names are unique case-insensitively; identical expressions
// produce identical values), No when one is known and cannot match the other's
// pattern, Maybe otherwise.
func nameMatch(a, b string) Match {
	if a == "" || b == "" {
		return Maybe
	}
	if strings.EqualFold(a, b) {
		return Yes
	}
	ua, ub := cluster.IsUnknown(a), cluster.IsUnknown(b)
	switch {
	case !ua && !ub:
		return No
	case ua && ub:
		return Maybe
	case ua:
		a, b = b, a
	}
	// a is known, b is a pattern.
	if globFold(pattern(b), a) {
		return Maybe
	}
	return No
}

// pattern turns placeholders into '*' wildcards.
func pattern(s string) string {
	masked, _ := mask(s)
	var b strings.Builder
	in := false
	for _, r := range masked {
		if r == 0 {
			if !in {
				b.WriteByte('*')
			}
			in = !in
			continue
		}
		if !in {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// globFold matches s against a pattern whose only wildcard is '*', ignoring case.
func globFold(pat, s string) bool {
	return textmatch.Wildcard(strings.ToLower(pat), strings.ToLower(s), false)
}

// partMatch compares an ARN part (partition, account) the same way, but an empty
// part is simply not known.
func partMatch(a, b string) Match {
	if a == "" || b == "" {
		return Maybe
	}
	return nameMatch(a, b)
}
