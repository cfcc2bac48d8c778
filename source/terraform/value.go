package terraform

import (
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// An unknown value (a module output, a data source, a resource attribute) stays a cty
// unknown so that conditionals, comparisons and functions never pick a branch or
// compute a result from it. The expression that produced it travels with it as a mark,
// so that the model can show it as cluster.Unknown(expr).
//
// scope is the address prefix of the module instance whose expression produced the
// unknown, so that a module output imported into its caller can be renamed in the
// caller's words when (and only when) it stands for something inside the module.
type unknownMark struct{ expr, scope string }

// unknownOf returns an unknown value produced by expr.
func unknownOf(expr string) cty.Value {
	return cty.DynamicVal.Mark(unknownMark{expr: expr})
}

// sensitiveValue is what a sensitive value (a variable or output declared sensitive,
// the result of sensitive()) evaluates to: an unknown that shows as Sensitive, so
// that no finding, in any format, can print what it holds. Nothing is decided from it.
func sensitiveValue() cty.Value { return unknownOf(Sensitive) }

// unknownIn returns an unknown value produced by expr inside a module instance.
func unknownIn(expr, scope string) cty.Value {
	return cty.DynamicVal.Mark(unknownMark{expr: expr, scope: scope})
}

// unknownScope returns the module scope an unknown value was produced in.
func unknownScope(v cty.Value) string {
	if !v.IsMarked() {
		return ""
	}
	_, marks := v.Unmark()
	for m := range marks {
		if u, ok := m.(unknownMark); ok {
			return u.scope
		}
	}
	return ""
}

// unknownText returns the expression a wholly unknown value stands for, if it is known.
func unknownText(v cty.Value) (string, bool) {
	if !v.IsMarked() {
		return "", false
	}
	_, marks := v.Unmark()
	var texts []string
	for m := range marks {
		if u, ok := m.(unknownMark); ok {
			texts = append(texts, u.expr)
		}
	}
	if len(texts) == 0 {
		return "", false
	}
	sort.Strings(texts)
	return texts[0], true
}

// unmark removes the marks of the value itself; marks only carry meaning on unknown
// leaves, so a known value's own marks (moved there by cty set construction) are noise.
func unmark(v cty.Value) cty.Value {
	if v.IsMarked() {
		v, _ = v.Unmark()
	}
	return v
}

// placeholder renders an unknown value as the model's placeholder.
func placeholder(v cty.Value, fallback string) string {
	if t, ok := unknownText(v); ok {
		return cluster.Unknown(t)
	}
	return cluster.Unknown(fallback)
}

// toGo converts a value to the JSON-compatible form the model uses: map[string]any,
// []any, string, int64, float64, bool and nil. Unknown values become placeholders; an
// unknown without its own expression uses fallback, the enclosing expression.
func toGo(v cty.Value, fallback string) any {
	if !v.IsKnown() {
		return placeholder(v, fallback)
	}
	v = unmark(v)
	if v.IsNull() {
		return nil
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return v.AsString()
	case ty == cty.Number:
		return numberToGo(v.AsBigFloat())
	case ty == cty.Bool:
		return v.True()
	case ty.IsListType() || ty.IsSetType() || ty.IsTupleType():
		out := make([]any, 0, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			out = append(out, toGo(e, fallback))
		}
		return out
	case ty.IsMapType() || ty.IsObjectType():
		out := make(map[string]any, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			out[k.AsString()] = toGo(e, fallback)
		}
		return out
	case ty.IsCapsuleType():
		return nil
	}
	return nil
}

func numberToGo(f *big.Float) any {
	if f.IsInt() {
		if i, acc := f.Int64(); acc == big.Exact {
			return i
		}
	}
	x, _ := f.Float64()
	return x
}

// fromGo converts a JSON-compatible value into a cty value. Placeholder strings become
// unknown values again so that evaluation treats them as unknown.
func fromGo(v any) cty.Value {
	switch t := v.(type) {
	case nil:
		return cty.NullVal(cty.DynamicPseudoType)
	case string:
		if e, ok := cluster.UnknownExpr(t); ok {
			return unknownOf(e)
		}
		return cty.StringVal(t)
	case bool:
		return cty.BoolVal(t)
	case int:
		return cty.NumberIntVal(int64(t))
	case int64:
		return cty.NumberIntVal(t)
	case float64:
		return cty.NumberFloatVal(t)
	case []any:
		if len(t) == 0 {
			return cty.EmptyTupleVal
		}
		vals := make([]cty.Value, len(t))
		for i, e := range t {
			vals[i] = fromGo(e)
		}
		return cty.TupleVal(vals)
	case map[string]any:
		if len(t) == 0 {
			return cty.EmptyObjectVal
		}
		vals := make(map[string]cty.Value, len(t))
		for k, e := range t {
			vals[k] = fromGo(e)
		}
		return cty.ObjectVal(vals)
	}
	return cty.NullVal(cty.DynamicPseudoType)
}

// withPlaceholders replaces every unknown leaf by its placeholder string so that the
// value can be encoded (jsonencode, yamlencode) with the unknowns visible in the text.
func withPlaceholders(v cty.Value, fallback string) cty.Value {
	if !v.IsKnown() {
		return cty.StringVal(placeholder(v, fallback))
	}
	v = unmark(v)
	if v.IsNull() {
		return v
	}
	ty := v.Type()
	switch {
	case ty.IsListType() || ty.IsSetType() || ty.IsTupleType():
		if v.LengthInt() == 0 {
			return v
		}
		vals := make([]cty.Value, 0, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			vals = append(vals, withPlaceholders(e, fallback))
		}
		return cty.TupleVal(vals)
	case ty.IsMapType() || ty.IsObjectType():
		if v.LengthInt() == 0 {
			return v
		}
		vals := make(map[string]cty.Value, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			vals[k.AsString()] = withPlaceholders(e, fallback)
		}
		return cty.ObjectVal(vals)
	}
	return v
}

// markLeaves gives every unknown leaf of v the expression prefix+path.
func markLeaves(v cty.Value, prefix string) cty.Value {
	return renameLeaves(v, prefix, func(cty.Value) bool { return true })
}

// renameLeaves gives the unknown leaves of v for which rename is true the expression
// prefix+path, so that a module output imported into its caller reads as the caller
// would write it ("module.x.roles.node").
func renameLeaves(v cty.Value, prefix string, rename func(cty.Value) bool) cty.Value {
	if !v.IsKnown() {
		if rename(v) {
			return unknownOf(prefix)
		}
		return v
	}
	v = unmark(v)
	if v.IsNull() || v.IsWhollyKnown() {
		return v
	}
	ty := v.Type()
	switch {
	case ty.IsListType() || ty.IsTupleType():
		vals := make([]cty.Value, 0, v.LengthInt())
		i := 0
		for it := v.ElementIterator(); it.Next(); i++ {
			_, e := it.Element()
			vals = append(vals, renameLeaves(e, prefix+"["+strconv.Itoa(i)+"]", rename))
		}
		if len(vals) == 0 {
			return v
		}
		return cty.TupleVal(vals)
	case ty.IsMapType() || ty.IsObjectType():
		vals := make(map[string]cty.Value, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			vals[k.AsString()] = renameLeaves(e, prefix+indexText(k.AsString()), rename)
		}
		if len(vals) == 0 {
			return v
		}
		return cty.ObjectVal(vals)
	}
	return v
}

// indexText renders an attribute step the way HCL would write it: .name for an
// identifier, ["key"] otherwise.
func indexText(key string) string {
	if isIdentifier(key) {
		return "." + key
	}
	return "[" + strconv.Quote(key) + "]"
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'):
		case i > 0 && (r == '-' || (r >= '0' && r <= '9')):
		default:
			return false
		}
	}
	return true
}

// hasPlaceholder reports whether any string inside v holds an unknown placeholder.
func hasPlaceholder(v cty.Value) bool {
	if !v.IsKnown() {
		return false
	}
	v = unmark(v)
	if v.IsNull() {
		return false
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return strings.Contains(v.AsString(), "${")
	case ty.IsCollectionType() || ty.IsTupleType() || ty.IsObjectType():
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			if hasPlaceholder(e) {
				return true
			}
		}
	}
	return false
}
