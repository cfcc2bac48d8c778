package schema

import (
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// Objects from Terraform carry values that are unknown before apply as "${expr}"
// placeholders (cluster.Unknown). A placeholder is not the value the API server will
// see, so no violation may rest on one: a pattern, type or rule failure on a value
// containing a placeholder is dropped. Required-field and unknown-field violations do
// not depend on values and are kept.

// maxDepth bounds how deep objects are copied and searched.
const maxDepth = cluster.MaxValueDepth

// normalize deep-copies a JSON-like value into the types the API server
// decodes JSON into (cluster.Normalize).
func normalize(v any, depth int) any { return cluster.Normalize(v, depth) }

// containsUnknown reports whether a value holds a placeholder anywhere, in a string or
// a map key.
func containsUnknown(v any, depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch t := v.(type) {
	case string:
		return cluster.IsUnknown(t)
	case map[string]any:
		for k, e := range t {
			if cluster.IsUnknown(k) || containsUnknown(e, depth+1) {
				return true
			}
		}
	case []any:
		for _, e := range t {
			if containsUnknown(e, depth+1) {
				return true
			}
		}
	}
	return false
}

// splitFieldPath splits the API server's field path ("spec.a[0].b", "labels[x.y/z]")
// into its segments, keeping map keys that contain dots whole.
func splitFieldPath(p string) []string {
	if p == "" || p == "<nil>" {
		return nil
	}
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '.':
			flush()
		case '[':
			flush()
			j := strings.IndexByte(p[i+1:], ']')
			if j < 0 {
				cur.WriteString(p[i+1:])
				i = len(p)
				break
			}
			out = append(out, p[i+1:i+1+j])
			i += j + 1
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return out
}

// valueAt walks segments through a JSON-like value; found is false when a segment is
// missing.
func valueAt(v any, segs []string) (any, bool) {
	for _, s := range segs {
		switch t := v.(type) {
		case map[string]any:
			e, ok := t[s]
			if !ok {
				return nil, false
			}
			v = e
		case []any:
			i, err := strconv.Atoi(s)
			if err != nil || i < 0 || i >= len(t) {
				return nil, false
			}
			v = t[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// dependsOnUnknown reports whether an API server error rests on a placeholder: its
// path or value holds one, or, for a CEL rule, one of the fields the rule reads does.
func (c *compiled) dependsOnUnknown(original map[string]any, e *field.Error) bool {
	if cluster.IsUnknown(e.Field) {
		return true
	}
	if s, ok := e.BadValue.(string); ok && cluster.IsUnknown(s) {
		return true
	}
	segs := splitFieldPath(e.Field)
	v, found := valueAt(original, segs)
	if !found {
		// The value was defaulted or is missing: nothing the user wrote is unknown.
		return false
	}
	rules := c.rulesFor(e)
	if len(rules) == 0 {
		return containsUnknown(v, 0)
	}
	for _, r := range rules {
		fields, whole := selfReferences(r)
		if whole {
			if containsUnknown(v, 0) {
				return true
			}
			continue
		}
		m, _ := v.(map[string]any)
		for _, f := range fields {
			if containsUnknown(m[f], 0) {
				return true
			}
		}
	}
	return false
}

// rulesFor returns the CEL rules an error may come from, found by the text the API
// server quotes.
func (c *compiled) rulesFor(e *field.Error) []string {
	d := e.Detail
	if rs, ok := c.rules[strings.TrimPrefix(d, "failed rule: ")]; ok {
		return rs
	}
	for _, sep := range []string{" evaluating rule: ", "macro signature for rule: ", "call cost exceeds limit for rule: "} {
		if i := strings.LastIndex(d, sep); i >= 0 {
			if rs, ok := c.rules[d[i+len(sep):]]; ok {
				return rs
			}
		}
	}
	return nil
}

var selfRef = regexp.MustCompile(`\bself\b(\.([A-Za-z_][A-Za-z0-9_]*)(\()?)?`)

// selfReferences lists the fields of self whose values a rule reads
// ("self.amiSelectorTerms.exists(...)" reads amiSelectorTerms), or whole when it reads
// self itself ("self.all(...)", "self != x", "size(self)"). A field only tested for
// presence ("has(self.role)") is not read: a placeholder there is still present.
func selfReferences(rule string) (fields []string, whole bool) {
	for _, m := range selfRef.FindAllStringSubmatchIndex(rule, -1) {
		if m[4] < 0 || m[6] >= 0 {
			// bare self, or a method called on self
			return nil, true
		}
		if strings.HasSuffix(rule[:m[0]], "has(") && strings.HasPrefix(rule[m[1]:], ")") {
			continue
		}
		fields = append(fields, rule[m[4]:m[5]])
	}
	return fields, false
}
