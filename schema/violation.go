package schema

import (
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Kind classifies a violation by what the API server does with the object.
type Kind int

// The zero Kind is invalid so that a forgotten classification shows.
const (
	_ Kind = iota
	// UnknownField is a field the schema does not have. The API server drops it; only
	// clients that ask for strict field validation (kubectl apply does) see an error,
	// for the others the setting silently has no effect.
	UnknownField
	// Required is a field the API server requires.
	Required
	// Invalid is a value the API server rejects: wrong type, pattern, bounds, format,
	// or a failed x-kubernetes-validations rule.
	Invalid
	// NotSupported is a value outside the field's enum.
	NotSupported
	// Duplicate is a repeated item in a list that must be a set or a map.
	Duplicate
	// Forbidden is a field the API server forbids in this context.
	Forbidden
	// Removed is an apiVersion or kind that the Karpenter release does not serve.
	Removed
	// Unchecked means the object could not be validated completely (a rule ran out
	// of cost budget, or the embedded schema could not be compiled).
	Unchecked
)

var kindNames = map[Kind]string{
	UnknownField: "UnknownField",
	Required:     "Required",
	Invalid:      "Invalid",
	NotSupported: "NotSupported",
	Duplicate:    "Duplicate",
	Forbidden:    "Forbidden",
	Removed:      "Removed",
	Unchecked:    "Unchecked",
}

// String returns the Kind's name.
func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return "Kind(invalid)"
}

// Violation is one reason the API server would reject or silently change an object.
type Violation struct {
	// Path is the dotted field path, list items as numbers and map keys as they are
	// ("spec.template.spec.requirements.0.key", "spec.template.metadata.labels.karpenter.sh/nodepool").
	Path string
	// Message is what the API server says, e.g.
	// "spec.disruption.consolidateAfter: Required value".
	Message string
	Kind    Kind
	// Hint explains the consequence and the fix, when there is more to say than the
	// message.
	Hint string
	// Move is the ID of the entry in Moves this violation comes from, or "" when the
	// violation is not a v1beta1 → v1 change.
	Move string
	// Accepted is true when the API server accepts the object as written, so nothing
	// fails at apply time: an unknown field it drops, or a value it lets through that
	// Karpenter cannot use. These are the silent ones.
	Accepted bool
}

// kindOf maps the API server's error types onto Kinds.
func kindOf(t field.ErrorType) Kind {
	switch t {
	case field.ErrorTypeRequired:
		return Required
	case field.ErrorTypeNotSupported:
		return NotSupported
	case field.ErrorTypeDuplicate:
		return Duplicate
	case field.ErrorTypeForbidden:
		return Forbidden
	default:
		return Invalid
	}
}

// dottedPath turns the API server's field path ("a.b[0].c", "labels[x/y]") into the
// dotted form the model uses ("a.b.0.c", "labels.x/y").
func dottedPath(p string) string {
	if p == "<nil>" {
		return ""
	}
	if !strings.ContainsAny(p, "[]") {
		return p
	}
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '[':
			if b.Len() > 0 {
				b.WriteByte('.')
			}
		case ']':
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// sortViolations orders violations by path, then message, and drops exact repeats, so
// output is deterministic.
func sortViolations(vs []Violation) []Violation {
	if len(vs) == 0 {
		return nil
	}
	sort.SliceStable(vs, func(i, j int) bool {
		if vs[i].Path != vs[j].Path {
			return vs[i].Path < vs[j].Path
		}
		return vs[i].Message < vs[j].Message
	})
	out := vs[:1]
	for _, v := range vs[1:] {
		if v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}
