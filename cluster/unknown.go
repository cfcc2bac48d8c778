package cluster

import "strings"

// Values that cannot be known before apply (a module output, a data source, a resource
// attribute) are kept in the model as the Terraform expression that would produce them,
// wrapped as "${expr}". Keeping the expression rather than an empty string lets checks
// reason about identity ("this EC2NodeClass uses module.karpenter.iam_role_name, which
// is the controller role") without ever treating the unknown as a concrete value.

// Unknown returns the placeholder for a value produced by the given expression.
func Unknown(expr string) string { return "${" + expr + "}" }

// IsUnknown reports whether s is, or contains, a value that is not known statically.
func IsUnknown(s string) bool { return strings.Contains(s, "${") }

// UnknownExpr returns the expression of a value that is exactly one placeholder.
func UnknownExpr(s string) (string, bool) {
	if strings.HasPrefix(s, "${") && strings.HasSuffix(s, "}") && strings.Count(s, "${") == 1 {
		return s[2 : len(s)-1], true
	}
	return "", false
}

// UnknownExprs returns every placeholder expression inside s, in order.
func UnknownExprs(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return out
		}
		depth, j := 0, i+2
		for ; j < len(s); j++ {
			if s[j] == '{' {
				depth++
			} else if s[j] == '}' {
				if depth == 0 {
					break
				}
				depth--
			}
		}
		if j >= len(s) {
			return out
		}
		out = append(out, s[i+2:j])
		s = s[j+1:]
	}
}
