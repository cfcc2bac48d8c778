package terraform

import (
	"fmt"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// A value may share its parts: `local.b = [local.a, local.a, ...]` is cheap to build
// however large a is, and ten such locals describe 10^10 leaves in a kilobyte of HCL.
// Whatever walks the whole value afterwards (jsonencode, flatten, a for expression,
// conversion into the model) pays for every leaf. So every value a constructor or a
// function produces, and the arguments every function receives, are measured as the
// tree they stand for, and refused beyond these limits.
const (
	maxValueNodes = 1_000_000
	maxValueBytes = 32 << 20
)

// measure returns the nodes and string bytes of v counted as a tree, stopping as
// soon as either limit is passed.
func measure(v cty.Value) (nodes, bytes int, over bool) {
	var walk func(v cty.Value) bool
	walk = func(v cty.Value) bool {
		nodes++
		if nodes > maxValueNodes {
			return false
		}
		if !v.IsKnown() {
			return true
		}
		v = unmark(v)
		if v.IsNull() {
			return true
		}
		ty := v.Type()
		switch {
		case ty == cty.String:
			bytes += len(v.AsString())
			return bytes <= maxValueBytes
		case ty.IsCollectionType() || ty.IsTupleType() || ty.IsObjectType():
			for it := v.ElementIterator(); it.Next(); {
				k, e := it.Element()
				if ty.IsMapType() || ty.IsObjectType() {
					bytes += len(k.AsString())
				}
				if !walk(e) {
					return false
				}
			}
		}
		return true
	}
	ok := walk(v)
	return nodes, bytes, !ok
}

// tooLarge is the error for a value beyond the limits, recorded as a problem so the
// user learns why part of the configuration is unknown.
func (l *loader) tooLarge(rng hcl.Range, what string) *evalError {
	msg := fmt.Sprintf("%s is larger than %d values or %d MiB of text; it is not evaluated and treated as unknown", what, maxValueNodes, maxValueBytes>>20)
	l.problem(originOf(rng), msg)
	return errAt(rng, "%s", msg)
}

// checkSize refuses a value that is too large to walk.
func (l *loader) checkSize(v cty.Value, rng hcl.Range, what string) *evalError {
	if v.Type().IsPrimitiveType() && (v.Type() != cty.String || !v.IsKnown() || v.IsNull() || len(unmark(v).AsString()) <= maxValueBytes) {
		return nil
	}
	if _, _, over := measure(v); over {
		return l.tooLarge(rng, what)
	}
	return nil
}

// checkCall refuses a call whose arguments are too large, or whose result would be
// far larger than its arguments (a long separator joined between many elements, a
// large indent of many lines, a replacement repeated many times).
func (l *loader) checkCall(e *hclsyntax.FunctionCallExpr, name string, args []cty.Value) *evalError {
	nodes, bytes := 0, 0
	for _, a := range args {
		n, b, over := measure(a)
		nodes, bytes = nodes+n, bytes+b
		if over || nodes > maxValueNodes || bytes > maxValueBytes {
			return l.tooLarge(e.Range(), "the arguments of "+name)
		}
	}
	str := func(i int) (string, bool) {
		if i >= len(args) || !args[i].IsKnown() {
			return "", false
		}
		s, err := convert.Convert(unmark(args[i]), cty.String)
		if err != nil || s.IsNull() || !s.IsKnown() {
			return "", false
		}
		return s.AsString(), true
	}
	length := func(i int) int {
		if i >= len(args) || !args[i].IsKnown() {
			return 0
		}
		v := unmark(args[i])
		if v.IsNull() || !(v.Type().IsCollectionType() || v.Type().IsTupleType()) {
			return 0
		}
		return v.LengthInt()
	}
	var grows int
	switch name {
	case "join":
		if sep, ok := str(0); ok {
			for i := 1; i < len(args); i++ {
				grows += len(sep) * length(i)
			}
		}
	case "indent":
		if s, ok := str(1); ok && len(args) > 0 && args[0].IsKnown() {
			if n, err := convert.Convert(unmark(args[0]), cty.Number); err == nil && !n.IsNull() {
				f, _ := n.AsBigFloat().Float64()
				if f*float64(strings.Count(s, "\n")+1) > maxValueBytes {
					grows = maxValueBytes + 1
				}
			}
		}
	case "formatlist":
		if f, ok := str(0); ok {
			most := 1
			for i := 1; i < len(args); i++ {
				most = max(most, length(i))
			}
			grows = len(f) * most
		}
	case "replace":
		s, ok1 := str(0)
		search, ok2 := str(1)
		repl, ok3 := str(2)
		if ok1 && ok2 && ok3 {
			if len(search) > 1 && search[0] == '/' && search[len(search)-1] == '/' {
				grows = len(repl) * (len(s) + 1)
			} else {
				// An empty search string matches around every character.
				grows = len(repl) * strings.Count(s, search)
			}
		}
	}
	if grows > maxValueBytes {
		return l.tooLarge(e.Range(), "the result of "+name)
	}
	return nil
}
