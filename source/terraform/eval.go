package terraform

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
)

// Evaluation is bounded so that no configuration, however large or hostile, can hang
// the loader: every expression node costs a step, nesting is limited, and collections
// built by for expressions and functions are capped.
const (
	maxSteps      = 1_000_000
	maxDepth      = 200
	maxElements   = 100_000
	maxStringSize = 8 << 20
)

// evalError is an evaluation failure: what Terraform would report as an error for the
// expression. The loader turns it into an unknown value (never a guess) and, where the
// value mattered, a note.
type evalError struct {
	rng hcl.Range
	msg string
	// read is set when the error is a file that could not be read.
	read error
	// undeclared is set, to the name referred to ("var.environment"), when the
	// error is a reference to something the module does not declare.
	undeclared string
}

func errAt(rng hcl.Range, format string, args ...any) *evalError {
	return &evalError{rng: rng, msg: fmt.Sprintf(format, args...)}
}

// undeclaredAt is a reference to something the module does not declare.
func undeclaredAt(rng hcl.Range, name string) *evalError {
	return &evalError{rng: rng, msg: "reference to undeclared " + name, undeclared: name}
}

// binding is a name visible in an expression: a for expression's key or value, a
// dynamic block iterator, a templatefile variable, or a splat's anonymous item.
type binding struct {
	name string
	sym  *hclsyntax.AnonSymbolExpr
	val  cty.Value
	next *binding
}

// evalCtx is where an expression is evaluated: its module instance, the names bound
// around it, and the count/each of the block instance it belongs to.
type evalCtx struct {
	m   *modInst
	env *binding
	// count is count.index, each the each.key/each.value of the block instance;
	// cty.NilVal when the block has none.
	count, eachKey, eachVal cty.Value
	// templateOnly is set inside templatefile, which sees only its variables.
	templateOnly bool
	depth        int
	// self is what self means in a provisioner; cty.NilVal elsewhere.
	self cty.Value
}

func (c *evalCtx) bind(name string, v cty.Value) *evalCtx {
	n := *c
	n.env = &binding{name: name, val: v, next: c.env}
	return &n
}

func (c *evalCtx) bindSym(sym *hclsyntax.AnonSymbolExpr, v cty.Value) *evalCtx {
	n := *c
	n.env = &binding{sym: sym, val: v, next: c.env}
	return &n
}

func (c *evalCtx) lookup(name string) (cty.Value, bool) {
	for b := c.env; b != nil; b = b.next {
		if b.sym == nil && b.name == name {
			return b.val, true
		}
	}
	return cty.NilVal, false
}

// eval evaluates an expression. On failure it returns an unknown value for the
// expression together with the error.
func (l *loader) eval(expr hcl.Expression, c *evalCtx) (cty.Value, *evalError) {
	if expr == nil {
		return cty.NullVal(cty.DynamicPseudoType), nil
	}
	l.steps++
	if l.steps > maxSteps {
		l.budgetExceeded(expr.Range())
		return l.unknownAt(expr), errAt(expr.Range(), "configuration too complex to evaluate")
	}
	if c.depth > maxDepth {
		return l.unknownAt(expr), errAt(expr.Range(), "expression nested too deeply")
	}
	cc := *c
	cc.depth++
	saved := l.scope
	if c.m != nil {
		l.scope = c.m.prefix
	} else {
		l.scope = ""
	}
	v, err := l.evalNode(expr, &cc)
	l.scope = saved
	if err != nil {
		return l.unknownAt(expr), err
	}
	return v, nil
}

// unknownAt is the unknown value produced by expr, carrying its source text.
func (l *loader) unknownAt(expr hcl.Expression) cty.Value {
	return unknownIn(l.text(expr.Range()), l.scope)
}

// source returns the source of a range as written.
func (l *loader) source(rng hcl.Range) string {
	src := l.files[rng.Filename]
	if rng.Start.Byte < 0 || rng.End.Byte > len(src) || rng.Start.Byte >= rng.End.Byte {
		return ""
	}
	return string(src[rng.Start.Byte:rng.End.Byte])
}

// text returns the source of a range with runs of white space collapsed, the form
// placeholders show.
func (l *loader) text(rng hcl.Range) string {
	src := l.files[rng.Filename]
	if rng.Start.Byte < 0 || rng.End.Byte > len(src) || rng.Start.Byte >= rng.End.Byte {
		return "?"
	}
	return strings.Join(strings.Fields(string(src[rng.Start.Byte:rng.End.Byte])), " ")
}

func (l *loader) evalNode(expr hcl.Expression, c *evalCtx) (cty.Value, *evalError) {
	switch e := expr.(type) {
	case *hclsyntax.LiteralValueExpr:
		return e.Val, nil
	case *hclsyntax.TemplateExpr:
		return l.evalTemplate(e, c)
	case *hclsyntax.TemplateWrapExpr:
		return l.eval(e.Wrapped, c)
	case *hclsyntax.TemplateJoinExpr:
		return l.evalTemplateJoin(e, c)
	case *hclsyntax.ParenthesesExpr:
		return l.eval(e.Expression, c)
	case *hclsyntax.ScopeTraversalExpr:
		return l.evalScopeTraversal(e, c)
	case *hclsyntax.RelativeTraversalExpr:
		src, err := l.eval(e.Source, c)
		if err != nil {
			return src, err
		}
		base, _ := unknownText(src)
		if base == "" {
			base = l.text(e.Source.Range())
		}
		return l.applyTraversal(src, base, e.Traversal, e.Range())
	case *hclsyntax.FunctionCallExpr:
		return l.evalCall(e, c)
	case *hclsyntax.ConditionalExpr:
		return l.evalConditional(e, c)
	case *hclsyntax.BinaryOpExpr:
		return l.evalBinary(e, c)
	case *hclsyntax.UnaryOpExpr:
		return l.evalUnary(e, c)
	case *hclsyntax.ObjectConsExpr:
		v, err := l.evalObject(e, c)
		if err == nil {
			err = l.checkSize(v, e.Range(), "this object")
		}
		return v, err
	case *hclsyntax.ObjectConsKeyExpr:
		if key, ok := literalKey(e); ok {
			return cty.StringVal(key), nil
		}
		return l.eval(e.Wrapped, c)
	case *hclsyntax.TupleConsExpr:
		vals := make([]cty.Value, 0, len(e.Exprs))
		for _, x := range e.Exprs {
			v, err := l.eval(x, c)
			if err != nil {
				return v, err
			}
			vals = append(vals, v)
		}
		v := cty.TupleVal(vals)
		return v, l.checkSize(v, e.Range(), "this list")
	case *hclsyntax.ForExpr:
		v, err := l.evalFor(e, c)
		if err == nil {
			err = l.checkSize(v, e.Range(), "the result of this for expression")
		}
		return v, err
	case *hclsyntax.IndexExpr:
		return l.evalIndex(e, c)
	case *hclsyntax.SplatExpr:
		return l.evalSplat(e, c)
	case *hclsyntax.AnonSymbolExpr:
		for b := c.env; b != nil; b = b.next {
			if b.sym == e {
				return b.val, nil
			}
		}
		return cty.DynamicVal, nil
	}
	// Anything else (a syntax error placeholder, a JSON expression) is not evaluated.
	return l.unknownAt(expr), nil
}

// literalKey returns the name of an object key written as a bare identifier.
func literalKey(e *hclsyntax.ObjectConsKeyExpr) (string, bool) {
	if e.ForceNonLiteral {
		return "", false
	}
	if t, ok := e.Wrapped.(*hclsyntax.ScopeTraversalExpr); ok && len(t.Traversal) == 1 {
		return t.Traversal.RootName(), true
	}
	return "", false
}

func (l *loader) evalTemplate(e *hclsyntax.TemplateExpr, c *evalCtx) (cty.Value, *evalError) {
	if len(e.Parts) == 1 {
		if lit, ok := e.Parts[0].(*hclsyntax.LiteralValueExpr); ok {
			return l.registerHeredoc(e, lit.Val), nil
		}
	}
	var b strings.Builder
	for _, p := range e.Parts {
		v, err := l.eval(p, c)
		if err != nil {
			return v, err
		}
		s, err := l.interpolate(v, p)
		if err != nil {
			return cty.NilVal, err
		}
		b.WriteString(s)
		if b.Len() > maxStringSize {
			return cty.NilVal, errAt(e.Range(), "string too long")
		}
	}
	return l.registerHeredoc(e, cty.StringVal(b.String())), nil
}

// interpolate renders one template part; an unknown part becomes its placeholder so
// the unknown stays visible inside the larger string.
func (l *loader) interpolate(v cty.Value, part hcl.Expression) (string, *evalError) {
	if !v.IsKnown() {
		return placeholder(v, l.text(part.Range())), nil
	}
	v = unmark(v)
	if v.IsNull() {
		return "", errAt(part.Range(), "template interpolation value is null")
	}
	if !v.IsWhollyKnown() {
		return placeholder(cty.DynamicVal, l.text(part.Range())), nil
	}
	s, err := convert.Convert(v, cty.String)
	if err != nil {
		return "", errAt(part.Range(), "cannot include %s in a string template", v.Type().FriendlyName())
	}
	return s.AsString(), nil
}

// registerHeredoc remembers where the text of a heredoc starts, so that objects decoded
// from it point at the lines of the .tf file.
func (l *loader) registerHeredoc(e *hclsyntax.TemplateExpr, v cty.Value) cty.Value {
	if !v.IsKnown() || v.IsNull() || v.Type() != cty.String {
		return v
	}
	rng := e.Range()
	src := l.files[rng.Filename]
	line := rng.Start.Line
	if rng.Start.Byte >= 0 && rng.Start.Byte+2 <= len(src) && string(src[rng.Start.Byte:rng.Start.Byte+2]) == "<<" {
		line++
	}
	l.registerText(v.AsString(), rng.Filename, line)
	return v
}

func (l *loader) evalTemplateJoin(e *hclsyntax.TemplateJoinExpr, c *evalCtx) (cty.Value, *evalError) {
	tuple, err := l.eval(e.Tuple, c)
	if err != nil {
		return tuple, err
	}
	if !tuple.IsKnown() {
		return l.unknownAt(e), nil
	}
	tuple = unmark(tuple)
	if tuple.IsNull() {
		return cty.NilVal, errAt(e.Range(), "template loop over null")
	}
	var b strings.Builder
	for it := tuple.ElementIterator(); it.Next(); {
		_, v := it.Element()
		s, err := l.interpolate(v, e)
		if err != nil {
			return cty.NilVal, err
		}
		b.WriteString(s)
		if b.Len() > maxStringSize {
			return cty.NilVal, errAt(e.Range(), "string too long")
		}
	}
	return cty.StringVal(b.String()), nil
}

func (l *loader) evalConditional(e *hclsyntax.ConditionalExpr, c *evalCtx) (cty.Value, *evalError) {
	cond, err := l.eval(e.Condition, c)
	if err != nil {
		return cond, err
	}
	if !cond.IsKnown() {
		return l.unknownAt(e), nil
	}
	cond = unmark(cond)
	if cond.IsNull() {
		return cty.NilVal, errAt(e.Condition.Range(), "condition is null")
	}
	b, cerr := convert.Convert(cond, cty.Bool)
	if cerr != nil {
		return cty.NilVal, errAt(e.Condition.Range(), "condition must be a bool")
	}
	if b.True() {
		return l.eval(e.TrueResult, c)
	}
	return l.eval(e.FalseResult, c)
}

func (l *loader) evalBinary(e *hclsyntax.BinaryOpExpr, c *evalCtx) (cty.Value, *evalError) {
	lhs, err := l.eval(e.LHS, c)
	if err != nil {
		return lhs, err
	}
	// && and || decide from one known side, as Terraform does.
	switch e.Op {
	case hclsyntax.OpLogicalAnd, hclsyntax.OpLogicalOr:
		if b, ok := knownBool(lhs); ok {
			if (e.Op == hclsyntax.OpLogicalAnd && !b) || (e.Op == hclsyntax.OpLogicalOr && b) {
				return cty.BoolVal(b), nil
			}
		}
	}
	rhs, err := l.eval(e.RHS, c)
	if err != nil {
		return rhs, err
	}
	switch e.Op {
	case hclsyntax.OpLogicalAnd, hclsyntax.OpLogicalOr:
		lb, lok := knownBool(lhs)
		rb, rok := knownBool(rhs)
		if e.Op == hclsyntax.OpLogicalAnd {
			if (lok && !lb) || (rok && !rb) {
				return cty.False, nil
			}
		} else if (lok && lb) || (rok && rb) {
			return cty.True, nil
		}
		if !lok || !rok {
			return l.unknownAt(e), nil
		}
		if e.Op == hclsyntax.OpLogicalAnd {
			return cty.BoolVal(lb && rb), nil
		}
		return cty.BoolVal(lb || rb), nil
	case hclsyntax.OpEqual, hclsyntax.OpNotEqual:
		// A string holding a placeholder is partly unknown: comparing it decides
		// nothing.
		if !lhs.IsWhollyKnown() || !rhs.IsWhollyKnown() || hasPlaceholder(lhs) || hasPlaceholder(rhs) {
			return l.unknownAt(e), nil
		}
	}
	if !lhs.IsWhollyKnown() || !rhs.IsWhollyKnown() {
		return l.unknownAt(e), nil
	}
	return l.callOp(e, e.Op.Impl, []cty.Value{unmarkDeep(lhs), unmarkDeep(rhs)})
}

func knownBool(v cty.Value) (bool, bool) {
	if !v.IsKnown() {
		return false, false
	}
	v = unmark(v)
	if v.IsNull() {
		return false, false
	}
	b, err := convert.Convert(v, cty.Bool)
	if err != nil {
		return false, false
	}
	return b.True(), true
}

func unmarkDeep(v cty.Value) cty.Value {
	if v.Type().IsPrimitiveType() {
		return unmark(v)
	}
	u, _ := v.UnmarkDeep()
	return u
}

func (l *loader) evalUnary(e *hclsyntax.UnaryOpExpr, c *evalCtx) (cty.Value, *evalError) {
	v, err := l.eval(e.Val, c)
	if err != nil {
		return v, err
	}
	if !v.IsWhollyKnown() {
		return l.unknownAt(e), nil
	}
	return l.callOp(e, e.Op.Impl, []cty.Value{unmarkDeep(v)})
}

// callOp applies an operator implementation after converting the operands to its
// parameter types, as HCL does.
func (l *loader) callOp(e hcl.Expression, f function.Function, args []cty.Value) (res cty.Value, eerr *evalError) {
	params := f.Params()
	for i := range args {
		if i >= len(params) {
			break
		}
		v, err := convert.Convert(args[i], params[i].Type)
		if err != nil {
			return cty.NilVal, errAt(e.Range(), "invalid operand: %s", err)
		}
		if v.IsNull() && !params[i].AllowNull {
			return cty.NilVal, errAt(e.Range(), "operand must not be null")
		}
		args[i] = v
	}
	defer func() {
		if r := recover(); r != nil {
			res, eerr = cty.NilVal, errAt(e.Range(), "cannot evaluate: %v", r)
		}
	}()
	v, err := f.Call(args)
	if err != nil {
		return cty.NilVal, errAt(e.Range(), "%s", err)
	}
	return v, nil
}

func (l *loader) evalObject(e *hclsyntax.ObjectConsExpr, c *evalCtx) (cty.Value, *evalError) {
	attrs := make(map[string]cty.Value, len(e.Items))
	for _, item := range e.Items {
		kv, err := l.eval(item.KeyExpr, c)
		if err != nil {
			return kv, err
		}
		if !kv.IsKnown() {
			return l.unknownAt(e), nil
		}
		kv = unmark(kv)
		if kv.IsNull() {
			return cty.NilVal, errAt(item.KeyExpr.Range(), "object key is null")
		}
		ks, cerr := convert.Convert(kv, cty.String)
		if cerr != nil {
			return cty.NilVal, errAt(item.KeyExpr.Range(), "object key must be a string")
		}
		if strings.Contains(ks.AsString(), "${") {
			return l.unknownAt(e), nil
		}
		v, err := l.eval(item.ValueExpr, c)
		if err != nil {
			return v, err
		}
		attrs[ks.AsString()] = v
	}
	return cty.ObjectVal(attrs), nil
}

func (l *loader) evalFor(e *hclsyntax.ForExpr, c *evalCtx) (cty.Value, *evalError) {
	coll, err := l.eval(e.CollExpr, c)
	if err != nil {
		return coll, err
	}
	if !coll.IsKnown() {
		return l.unknownAt(e), nil
	}
	coll = unmark(coll)
	if coll.IsNull() {
		return cty.NilVal, errAt(e.CollExpr.Range(), "cannot iterate over null")
	}
	ty := coll.Type()
	if !(ty.IsCollectionType() || ty.IsTupleType() || ty.IsObjectType()) {
		return cty.NilVal, errAt(e.CollExpr.Range(), "cannot iterate over %s", ty.FriendlyName())
	}
	if coll.LengthInt() > maxElements {
		return cty.NilVal, errAt(e.CollExpr.Range(), "collection too large")
	}
	var tuple []cty.Value
	obj := map[string]cty.Value{}
	groups := map[string][]cty.Value{}
	var order []string
	for it := coll.ElementIterator(); it.Next(); {
		k, v := it.Element()
		ic := c
		if e.KeyVar != "" {
			ic = ic.bind(e.KeyVar, k)
		}
		ic = ic.bind(e.ValVar, v)
		if e.CondExpr != nil {
			cond, err := l.eval(e.CondExpr, ic)
			if err != nil {
				return cond, err
			}
			b, ok := knownBool(cond)
			if !ok {
				if !cond.IsKnown() {
					return l.unknownAt(e), nil
				}
				return cty.NilVal, errAt(e.CondExpr.Range(), "for condition must be a bool")
			}
			if !b {
				continue
			}
		}
		val, err := l.eval(e.ValExpr, ic)
		if err != nil {
			return val, err
		}
		if e.KeyExpr == nil {
			tuple = append(tuple, val)
			continue
		}
		kv, err := l.eval(e.KeyExpr, ic)
		if err != nil {
			return kv, err
		}
		if !kv.IsKnown() {
			return l.unknownAt(e), nil
		}
		kv = unmark(kv)
		if kv.IsNull() {
			return cty.NilVal, errAt(e.KeyExpr.Range(), "for key is null")
		}
		ks, cerr := convert.Convert(kv, cty.String)
		if cerr != nil {
			return cty.NilVal, errAt(e.KeyExpr.Range(), "for key must be a string")
		}
		key := ks.AsString()
		// A key built around an unknown is unknown: two such keys may or may not
		// collide.
		if strings.Contains(key, "${") {
			return l.unknownAt(e), nil
		}
		if e.Group {
			if _, ok := groups[key]; !ok {
				order = append(order, key)
			}
			groups[key] = append(groups[key], val)
			continue
		}
		if _, dup := obj[key]; dup {
			return cty.NilVal, errAt(e.KeyExpr.Range(), "duplicate key %q in for expression", key)
		}
		obj[key] = val
	}
	if e.KeyExpr == nil {
		return cty.TupleVal(tuple), nil
	}
	if e.Group {
		for _, k := range order {
			obj[k] = cty.TupleVal(groups[k])
		}
	}
	return cty.ObjectVal(obj), nil
}

func (l *loader) evalIndex(e *hclsyntax.IndexExpr, c *evalCtx) (cty.Value, *evalError) {
	coll, err := l.eval(e.Collection, c)
	if err != nil {
		return coll, err
	}
	key, err := l.eval(e.Key, c)
	if err != nil {
		return key, err
	}
	if !coll.IsKnown() || !key.IsKnown() {
		return l.unknownAt(e), nil
	}
	return index(unmark(coll), unmark(key), e.Range())
}

// index looks up key in a known collection.
func index(coll, key cty.Value, rng hcl.Range) (cty.Value, *evalError) {
	if coll.IsNull() {
		return cty.NilVal, errAt(rng, "cannot index a null value")
	}
	if key.IsNull() {
		return cty.NilVal, errAt(rng, "index is null")
	}
	ty := coll.Type()
	switch {
	case ty.IsListType() || ty.IsTupleType():
		n, err := convert.Convert(key, cty.Number)
		if err != nil {
			return cty.NilVal, errAt(rng, "list index must be a number")
		}
		i, acc := n.AsBigFloat().Int64()
		if acc != big.Exact || i < 0 || i >= int64(coll.LengthInt()) {
			return cty.NilVal, errAt(rng, "index %s out of range", n.AsBigFloat().String())
		}
		return coll.Index(cty.NumberIntVal(i)), nil
	case ty.IsMapType():
		s, err := convert.Convert(key, cty.String)
		if err != nil {
			return cty.NilVal, errAt(rng, "map key must be a string")
		}
		if !coll.HasIndex(s).True() {
			return cty.NilVal, errAt(rng, "map has no element %q", s.AsString())
		}
		return coll.Index(s), nil
	case ty.IsObjectType():
		s, err := convert.Convert(key, cty.String)
		if err != nil {
			return cty.NilVal, errAt(rng, "object key must be a string")
		}
		if !ty.HasAttribute(s.AsString()) {
			return cty.NilVal, errAt(rng, "object has no attribute %q", s.AsString())
		}
		return coll.GetAttr(s.AsString()), nil
	}
	return cty.NilVal, errAt(rng, "cannot index %s", ty.FriendlyName())
}

func (l *loader) evalSplat(e *hclsyntax.SplatExpr, c *evalCtx) (cty.Value, *evalError) {
	src, err := l.eval(e.Source, c)
	if err != nil {
		return src, err
	}
	if !src.IsKnown() {
		return l.unknownAt(e), nil
	}
	src = unmark(src)
	if src.IsNull() {
		return cty.EmptyTupleVal, nil
	}
	ty := src.Type()
	var items []cty.Value
	if ty.IsListType() || ty.IsSetType() || ty.IsTupleType() {
		if src.LengthInt() > maxElements {
			return cty.NilVal, errAt(e.Range(), "collection too large")
		}
		for it := src.ElementIterator(); it.Next(); {
			_, v := it.Element()
			items = append(items, v)
		}
	} else {
		items = []cty.Value{src}
	}
	out := make([]cty.Value, 0, len(items))
	for _, it := range items {
		v, err := l.eval(e.Each, c.bindSym(e.Item, it))
		if err != nil {
			return v, err
		}
		out = append(out, v)
	}
	return cty.TupleVal(out), nil
}

// traversalText renders a traversal the way it is written, normalised: root, .attr,
// ["key"], [0], [*].
func traversalText(t hcl.Traversal) string {
	var b strings.Builder
	for i, step := range t {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			b.WriteString(s.Name)
		case hcl.TraverseAttr:
			b.WriteString("." + s.Name)
		case hcl.TraverseIndex:
			b.WriteString(keyText(s.Key))
		case hcl.TraverseSplat:
			b.WriteString("[*]")
		default:
			if i == 0 {
				b.WriteString("?")
			}
		}
	}
	return b.String()
}

func keyText(k cty.Value) string {
	k = unmark(k)
	if !k.IsKnown() || k.IsNull() {
		return "[?]"
	}
	switch k.Type() {
	case cty.String:
		return "[" + strconv.Quote(k.AsString()) + "]"
	case cty.Number:
		return "[" + k.AsBigFloat().Text('f', -1) + "]"
	}
	return "[?]"
}

// applyTraversal follows steps from a value. When it meets an unknown, the result is
// unknown and named by the expression that produced the unknown followed by the
// remaining steps ("module.karpenter.node_iam_role_name", "var.roles[0].arn" in the
// caller's words).
func (l *loader) applyTraversal(v cty.Value, text string, steps hcl.Traversal, rng hcl.Range) (cty.Value, *evalError) {
	for i, step := range steps {
		if !v.IsKnown() {
			base, ok := unknownText(v)
			scope := unknownScope(v)
			if !ok {
				base, scope = text, l.scope
			}
			return unknownIn(base+traversalText(steps[i:]), scope), nil
		}
		v = unmark(v)
		switch s := step.(type) {
		case hcl.TraverseAttr:
			if v.IsNull() {
				return cty.NilVal, errAt(rng, "attempt to get attribute %q from a null value", s.Name)
			}
			ty := v.Type()
			switch {
			case ty.IsObjectType():
				if !ty.HasAttribute(s.Name) {
					return cty.NilVal, errAt(rng, "unsupported attribute %q", s.Name)
				}
				v = v.GetAttr(s.Name)
			case ty.IsMapType():
				k := cty.StringVal(s.Name)
				if !v.HasIndex(k).True() {
					return cty.NilVal, errAt(rng, "map has no element %q", s.Name)
				}
				v = v.Index(k)
			case ty == cty.DynamicPseudoType:
				return unknownIn(text+traversalText(steps[i:]), l.scope), nil
			default:
				return cty.NilVal, errAt(rng, "cannot get attribute %q of %s", s.Name, ty.FriendlyName())
			}
			text += "." + s.Name
		case hcl.TraverseIndex:
			if !s.Key.IsKnown() {
				return unknownIn(text+traversalText(steps[i:]), l.scope), nil
			}
			nv, err := index(v, s.Key, rng)
			if err != nil {
				return cty.NilVal, err
			}
			v = nv
			text += keyText(s.Key)
		case hcl.TraverseSplat:
			return unknownIn(text+traversalText(steps[i:]), l.scope), nil
		}
	}
	return v, nil
}

func (l *loader) evalScopeTraversal(e *hclsyntax.ScopeTraversalExpr, c *evalCtx) (cty.Value, *evalError) {
	t := e.Traversal
	root := t.RootName()
	if v, ok := c.lookup(root); ok {
		return l.applyTraversal(v, root, t[1:], e.Range())
	}
	if c.templateOnly {
		return cty.NilVal, errAt(e.Range(), "template has no variable %q", root)
	}
	attrName := func(i int) (string, bool) {
		if len(t) <= i {
			return "", false
		}
		a, ok := t[i].(hcl.TraverseAttr)
		return a.Name, ok
	}
	m := c.m
	if m == nil {
		return cty.NilVal, errAt(e.Range(), "references are not allowed here")
	}
	switch root {
	case "var":
		name, ok := attrName(1)
		if !ok {
			return cty.NilVal, errAt(e.Range(), "a reference to var needs a variable name")
		}
		v, ok := m.variable(name)
		if !ok {
			return cty.NilVal, undeclaredAt(e.Range(), "var."+name)
		}
		return l.applyTraversal(v, "var."+name, t[2:], e.Range())
	case "local":
		name, ok := attrName(1)
		if !ok {
			return cty.NilVal, errAt(e.Range(), "a reference to local needs a name")
		}
		v, ok := m.local(name)
		if !ok {
			return cty.NilVal, undeclaredAt(e.Range(), "local."+name)
		}
		return l.applyTraversal(v, "local."+name, t[2:], e.Range())
	case "path":
		name, _ := attrName(1)
		switch name {
		case "module":
			return cty.StringVal(m.pathModule), nil
		case "root":
			return cty.StringVal("."), nil
		case "cwd":
			return cty.StringVal(l.cwd), nil
		}
		return cty.NilVal, errAt(e.Range(), "unsupported path attribute %q", name)
	case "terraform":
		if name, _ := attrName(1); name == "workspace" {
			return cty.StringVal("default"), nil
		}
		return unknownIn(traversalText(t), m.prefix), nil
	case "count":
		if c.count == cty.NilVal {
			return cty.NilVal, errAt(e.Range(), "count.index is only valid in a block with count")
		}
		return l.applyTraversal(cty.ObjectVal(map[string]cty.Value{"index": c.count}), "count", t[1:], e.Range())
	case "each":
		if c.eachKey == cty.NilVal {
			return cty.NilVal, errAt(e.Range(), "each is only valid in a block with for_each")
		}
		return l.applyTraversal(cty.ObjectVal(map[string]cty.Value{"key": c.eachKey, "value": c.eachVal}), "each", t[1:], e.Range())
	case "module":
		name, ok := attrName(1)
		if !ok {
			return cty.NilVal, errAt(e.Range(), "a reference to module needs a name")
		}
		return m.moduleRef(name, t, e.Range())
	case "data":
		if v, ok := m.staticData(t); ok {
			return l.applyTraversal(v, m.prefix+traversalText(t[:3]), t[3:], e.Range())
		}
		return unknownIn(m.prefix+traversalText(t), m.prefix), nil
	case "self":
		if c.self != cty.NilVal {
			return l.applyTraversal(c.self, "self", t[1:], e.Range())
		}
		return unknownIn(traversalText(t), m.prefix), nil
	}
	// A resource attribute: known only after apply.
	return unknownIn(m.prefix+traversalText(t), m.prefix), nil
}
