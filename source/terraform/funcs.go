package terraform

import (
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	ctyyaml "github.com/zclconf/go-cty-yaml"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/manifest"
)

// stdFuncs are the Terraform functions whose go-cty implementation matches Terraform's;
// tfFuncs are the others. They are called through callStd, only with known arguments
// at the top level: an unknown argument makes the call unknown.
var stdFuncs = map[string]function.Function{
	"abs":             stdlib.AbsoluteFunc,
	"ceil":            stdlib.CeilFunc,
	"chomp":           stdlib.ChompFunc,
	"coalescelist":    stdlib.CoalesceListFunc,
	"compact":         stdlib.CompactFunc,
	"contains":        stdlib.ContainsFunc,
	"csvdecode":       stdlib.CSVDecodeFunc,
	"distinct":        stdlib.DistinctFunc,
	"floor":           stdlib.FloorFunc,
	"formatdate":      stdlib.FormatDateFunc,
	"indent":          stdlib.IndentFunc,
	"join":            stdlib.JoinFunc,
	"jsondecode":      stdlib.JSONDecodeFunc,
	"log":             stdlib.LogFunc,
	"lower":           stdlib.LowerFunc,
	"max":             stdlib.MaxFunc,
	"min":             stdlib.MinFunc,
	"parseint":        stdlib.ParseIntFunc,
	"pow":             stdlib.PowFunc,
	"regex":           stdlib.RegexFunc,
	"regexall":        stdlib.RegexAllFunc,
	"setintersection": stdlib.SetIntersectionFunc,
	"setsubtract":     stdlib.SetSubtractFunc,
	"setunion":        stdlib.SetUnionFunc,
	"signum":          stdlib.SignumFunc,
	"sort":            stdlib.SortFunc,
	"split":           stdlib.SplitFunc,
	"strrev":          stdlib.ReverseFunc,
	"substr":          stdlib.SubstrFunc,
	"timeadd":         stdlib.TimeAddFunc,
	"title":           stdlib.TitleFunc,
	"trim":            stdlib.TrimFunc,
	"trimprefix":      stdlib.TrimPrefixFunc,
	"trimspace":       stdlib.TrimSpaceFunc,
	"trimsuffix":      stdlib.TrimSuffixFunc,
	"upper":           stdlib.UpperFunc,
	"yamldecode":      ctyyaml.YAMLDecodeFunc,
	// Functions that move values about (moves).
	"merge":   stdlib.MergeFunc,
	"concat":  stdlib.ConcatFunc,
	"element": stdlib.ElementFunc,
	"values":  stdlib.ValuesFunc,
	"keys":    stdlib.KeysFunc,
	"zipmap":  stdlib.ZipmapFunc,
	"reverse": stdlib.ReverseListFunc,
	"slice":   stdlib.SliceFunc,
	// Functions whose arguments are checked against the budgets first (guards).
	"format":     stdlib.FormatFunc,
	"formatlist": stdlib.FormatListFunc,
	"range":      stdlib.RangeFunc,
	"setproduct": stdlib.SetProductFunc,
	"chunklist":  stdlib.ChunklistFunc,
}

// builtin is a function that needs the loader: one that reads files, keeps the
// placeholders of unknowns in the text it makes (jsonencode, yamlencode), or deals
// with unknowns in its own way (coalesce, the conversions). It receives evaluated
// arguments with the top-level unknown check already done.
type builtin func(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError)

var builtins map[string]builtin

func init() {
	builtins = map[string]builtin{
		// Not a Terraform function: provider::kubernetes::manifest_decode_multi
		// is evaluated under this name (providerFuncs).
		"manifest_decode_multi": fnManifestDecodeMulti,
		"coalesce":              fnCoalesce,
		"tostring":              convertTo(cty.String),
		"tonumber":              convertTo(cty.Number),
		"tobool":                convertTo(cty.Bool),
		"tolist":                convertTo(cty.List(cty.DynamicPseudoType)),
		"toset":                 convertTo(cty.Set(cty.DynamicPseudoType)),
		"tomap":                 convertTo(cty.Map(cty.DynamicPseudoType)),
		"jsonencode":            fnJSONEncode,
		"yamlencode":            fnYAMLEncode,
		"sensitive": func(*loader, *hclsyntax.FunctionCallExpr, *evalCtx, []cty.Value) (cty.Value, *evalError) {
			return sensitiveValue(), nil
		},
		"nonsensitive": identity,
		"file":         fnFile,
		"fileexists":   fnFileExists,
		"filebase64":   fnFileBase64,
		"fileset":      fnFileset,
		"templatefile": fnTemplateFile,
		"abspath":      fnAbspath,
	}
}

// moves are the functions that move values about without looking into them (merge,
// concat, lookup, ...): the unknowns inside their arguments keep their own text in
// the result, and one they return whole (an element) is itself.
var moves = map[string]bool{
	"merge": true, "concat": true, "flatten": true, "lookup": true, "element": true,
	"values": true, "keys": true, "zipmap": true, "reverse": true, "slice": true,
	"one": true, "matchkeys": true,
}

// guards refuse, before the call, arguments whose result would be beyond the budgets
// though the arguments are not.
var guards = map[string]func(e *hclsyntax.FunctionCallExpr, args []cty.Value) *evalError{
	"format":     checkFormat,
	"formatlist": checkFormat,
	"range":      checkRange,
	"setproduct": checkSetProduct,
	"chunklist":  checkChunklist,
	"concat":     checkConcat,
	"replace":    checkReplace,
}

// unknownFuncs are functions whose result is never known before apply: they read the
// clock, make random values, read the machine Terraform runs on or secrets, or are
// not evaluated here (base64gzip's bytes depend on the compressor's version, the
// text encodings need character sets, templatestring a template's variables).
var unknownFuncs = map[string]bool{
	"timestamp": true, "plantimestamp": true, "uuid": true, "uuidv5": true, "bcrypt": true,
	"pathexpand": true, "rsadecrypt": true, "base64gzip": true, "filemd5": true,
	"filesha1": true, "filesha256": true, "filesha512": true, "filebase64sha256": true,
	"filebase64sha512": true, "type": true, "templatestring": true, "issensitive": true,
	"ephemeralasnull": true, "textencodebase64": true, "textdecodebase64": true,
	"regex_replace": true,
}

// providerFuncs are the provider-defined functions evaluated, by the built-in
// that does the same: hashicorp/kubernetes' manifest_decode,
// manifest_decode_multi and manifest_encode (Terraform 1.8 and later).
var providerFuncs = map[string]string{
	"provider::kubernetes::manifest_decode":       "yamldecode",
	"provider::kubernetes::manifest_decode_multi": "manifest_decode_multi",
	"provider::kubernetes::manifest_encode":       "yamlencode",
}

// fnManifestDecodeMulti is provider::kubernetes::manifest_decode_multi: each
// document of a multi-document YAML string, decoded, empty ones left out.
func fnManifestDecodeMulti(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 1, 1); err != nil {
		return cty.NilVal, err
	}
	s, err := convert.Convert(unmark(args[0]), cty.String)
	if err != nil || s.IsNull() {
		return cty.NilVal, errAt(e.Range(), "manifest_decode_multi: the argument must be a string")
	}
	text := s.AsString()
	if err := manifest.CheckAliases([]byte(text)); err != nil {
		l.problem(originOf(e.Range()), "manifest_decode_multi: "+err.Error())
		return cty.NilVal, errAt(e.Range(), "manifest_decode_multi: %s", err)
	}
	var docs []cty.Value
	for _, d := range l.splitDocs(text, l.textOrigin(text, e), false) {
		v, eerr := l.callStd(e, stdFuncs["yamldecode"], []cty.Value{cty.StringVal(d.text)})
		if eerr != nil {
			return cty.NilVal, eerr
		}
		docs = append(docs, revivePlaceholders(v))
	}
	if len(docs) == 0 {
		return cty.EmptyTupleVal, nil
	}
	return cty.TupleVal(docs), nil
}

func (l *loader) evalCall(e *hclsyntax.FunctionCallExpr, c *evalCtx) (res cty.Value, eerr *evalError) {
	name := strings.TrimPrefix(e.Name, "core::")
	switch name {
	case "try":
		return l.evalTry(e, c)
	case "can":
		return l.evalCan(e, c)
	}
	if alias, ok := providerFuncs[name]; ok {
		// The Kubernetes provider's functions decode and encode manifests as
		// yamldecode and yamlencode do.
		name = alias
	} else if strings.Contains(name, "::") {
		l.unresolved(originOf(e.Range()), fmt.Sprintf("eksdoctor does not evaluate the provider function %s; its result is treated as unknown", name))
		return l.unknownAt(e), nil
	}
	if unknownFuncs[name] {
		return l.unknownAt(e), nil
	}
	if c.templateOnly && name == "templatefile" {
		return cty.NilVal, errAt(e.Range(), "templatefile cannot be called from a template")
	}
	args, ok, early, err := l.evalArgs(e, c)
	if !ok {
		return early, err
	}
	if err := l.checkCall(e, name, args); err != nil {
		return cty.NilVal, err
	}
	defer func() {
		if r := recover(); r != nil {
			res, eerr = cty.NilVal, errAt(e.Range(), "%s: cannot evaluate: %v", name, r)
		}
		if eerr == nil {
			if err := l.checkSize(res, e.Range(), "the result of "+name); err != nil {
				res, eerr = cty.NilVal, err
			}
		}
	}()
	if b, ok := builtins[name]; ok {
		v, err := b(l, e, c, args)
		if err != nil {
			return cty.NilVal, err
		}
		if !v.IsKnown() {
			if _, ok := unknownText(v); !ok {
				return l.unknownAt(e), nil
			}
		}
		return v, nil
	}
	f, ok := stdFuncs[name]
	if !ok {
		f, ok = tfFuncs[name]
	}
	if !ok {
		l.unresolved(originOf(e.Range()), fmt.Sprintf("eksdoctor does not evaluate the function %s; its result is treated as unknown", name))
		return l.unknownAt(e), nil
	}
	if guard := guards[name]; guard != nil {
		if err := guard(e, args); err != nil {
			return cty.NilVal, err
		}
	}
	if name == "yamldecode" {
		if s := unmark(args[0]); s.Type() == cty.String && !s.IsNull() {
			if err := manifest.CheckAliases([]byte(s.AsString())); err != nil {
				l.problem(originOf(e.Range()), "yamldecode: "+err.Error())
				return cty.NilVal, errAt(e.Range(), "yamldecode: %s", err)
			}
		}
	}
	if name == "jsondecode" || name == "yamldecode" {
		v, err := l.callStd(e, f, args)
		if err != nil {
			if s := unmark(args[0]); s.Type() == cty.String && !s.IsNull() && cluster.IsUnknown(s.AsString()) {
				// The text may be valid once the values are known.
				return cty.NilVal, errAt(e.Range(), "%s of text that holds values not known before apply", name)
			}
			return v, err
		}
		return revivePlaceholders(v), nil
	}
	if moves[name] {
		return l.callMoving(e, f, args)
	}
	return l.callStd(e, f, args)
}

// evalArgs evaluates the arguments of a call, the elements of an expanded final
// one (f(list...)) each an argument. When ok is false the call returns early with
// early and eerr: an argument's error, or the call unknown when an argument is not
// known at the top level.
func (l *loader) evalArgs(e *hclsyntax.FunctionCallExpr, c *evalCtx) (args []cty.Value, ok bool, early cty.Value, eerr *evalError) {
	args = make([]cty.Value, 0, len(e.Args))
	for i, a := range e.Args {
		v, err := l.eval(a, c)
		if err != nil {
			return nil, false, v, err
		}
		if e.ExpandFinal && i == len(e.Args)-1 {
			if !v.IsKnown() {
				return nil, false, l.unknownAt(e), nil
			}
			v = unmark(v)
			if v.IsNull() || !(v.Type().IsListType() || v.Type().IsTupleType() || v.Type().IsSetType()) {
				return nil, false, cty.NilVal, errAt(a.Range(), "the final argument of an expanded call must be a list")
			}
			for it := v.ElementIterator(); it.Next(); {
				_, ev := it.Element()
				args = append(args, ev)
			}
			continue
		}
		args = append(args, v)
	}
	for _, a := range args {
		if !a.IsKnown() {
			return nil, false, l.unknownAt(e), nil
		}
	}
	return args, true, cty.NilVal, nil
}

// callStd calls a go-cty function the way HCL does (arguments converted to the
// parameter types). Unknowns nested in arguments are moved by go-cty to the result,
// which then reads as the call expression.
func (l *loader) callStd(e *hclsyntax.FunctionCallExpr, f function.Function, args []cty.Value) (cty.Value, *evalError) {
	v, err := l.call(e, f, args, false)
	if err != nil || !v.IsKnown() {
		return v, err
	}
	if v.ContainsMarked() || !v.IsWhollyKnown() {
		return markLeaves(unmarkDeep(v), l.text(e.Range())), nil
	}
	return v, nil
}

// callMoving calls a function that moves values about (moves): the unknowns inside
// its arguments keep their text in the result, and one it returns whole (the
// element lookup or element picked) is itself. Unknowns go-cty made read as the call
// expression and the path to them.
func (l *loader) callMoving(e *hclsyntax.FunctionCallExpr, f function.Function, args []cty.Value) (cty.Value, *evalError) {
	v, err := l.call(e, f, args, true)
	if err != nil || !v.IsKnown() {
		return v, err
	}
	return renameLeaves(unmark(v), l.text(e.Range()), func(x cty.Value) bool {
		_, ok := unknownText(x)
		return !ok
	}), nil
}

// call converts the arguments to the parameter types of f, as HCL does, and calls
// it. An unknown result reads as the call expression, unless keep is set and it is
// an unknown of the arguments, returned whole.
func (l *loader) call(e *hclsyntax.FunctionCallExpr, f function.Function, args []cty.Value, keep bool) (cty.Value, *evalError) {
	params := f.Params()
	vp := f.VarParam()
	conv := make([]cty.Value, len(args))
	for i, a := range args {
		var p *function.Parameter
		if i < len(params) {
			p = &params[i]
		} else if vp != nil {
			p = vp
		}
		a = unmark(a)
		if p != nil {
			v, err := convert.Convert(a, p.Type)
			if err != nil {
				return cty.NilVal, errAt(e.Range(), "%s: invalid argument %d: %s", e.Name, i+1, err)
			}
			a = v
		}
		conv[i] = a
	}
	v, err := f.Call(conv)
	if err != nil {
		return cty.NilVal, errAt(e.Range(), "%s: %s", e.Name, err)
	}
	if !v.IsKnown() {
		if _, ok := unknownText(v); ok && keep {
			return v, nil
		}
		return l.unknownAt(e), nil
	}
	return v, nil
}

// revivePlaceholders turns strings that are exactly one placeholder back into unknown
// values, so that a decoded jsonencode of an unknown stays unknown.
func revivePlaceholders(v cty.Value) cty.Value {
	if !v.IsKnown() {
		return v
	}
	v = unmark(v)
	if v.IsNull() {
		return v
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		if expr, ok := cluster.UnknownExpr(v.AsString()); ok {
			return unknownOf(expr)
		}
		return v
	case ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		if v.LengthInt() == 0 {
			return v
		}
		var vals []cty.Value
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			vals = append(vals, revivePlaceholders(e))
		}
		return cty.TupleVal(vals)
	case ty.IsMapType() || ty.IsObjectType():
		if v.LengthInt() == 0 {
			return v
		}
		vals := map[string]cty.Value{}
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			vals[k.AsString()] = revivePlaceholders(e)
		}
		return cty.ObjectVal(vals)
	}
	return v
}

// evalTry returns the first argument that evaluates without error. An argument that
// depends on unknown values could still fail at apply time, so, as in Terraform, the
// result is then unknown; a plain reference cannot fail later and is kept as it is.
//
// hcl/v2/ext/tryfunc is not used: it evaluates its arguments through HCL's own
// Expression.Value with an hcl.EvalContext, so it could neither apply the rules for
// placeholders above nor stop when the evaluation budget runs out.
func (l *loader) evalTry(e *hclsyntax.FunctionCallExpr, c *evalCtx) (cty.Value, *evalError) {
	if len(e.Args) == 0 {
		return cty.NilVal, errAt(e.Range(), "try needs at least one argument")
	}
	var last *evalError
	for _, a := range e.Args {
		v, err := l.eval(a, c)
		if err != nil {
			if l.budgetHit {
				return v, err
			}
			last = err
			continue
		}
		if v.IsWhollyKnown() {
			return v, nil
		}
		if _, plain := a.(*hclsyntax.ScopeTraversalExpr); plain {
			return v, nil
		}
		if !v.IsKnown() {
			if _, ok := unknownText(v); ok {
				return v, nil
			}
		}
		return l.unknownAt(e), nil
	}
	return cty.NilVal, errAt(e.Range(), "no argument of try could be evaluated: %s", last.msg)
}

func (l *loader) evalCan(e *hclsyntax.FunctionCallExpr, c *evalCtx) (cty.Value, *evalError) {
	if len(e.Args) != 1 {
		return cty.NilVal, errAt(e.Range(), "can takes one argument")
	}
	v, err := l.eval(e.Args[0], c)
	if err != nil {
		if l.budgetHit {
			return v, err
		}
		return cty.False, nil
	}
	if !v.IsWhollyKnown() {
		return l.unknownAt(e), nil
	}
	return cty.True, nil
}

func argCount(e *hclsyntax.FunctionCallExpr, args []cty.Value, min, max int) *evalError {
	if len(args) < min || (max >= 0 && len(args) > max) {
		return errAt(e.Range(), "%s: wrong number of arguments (%d given)", e.Name, len(args))
	}
	return nil
}

func isSeq(t cty.Type) bool { return t.IsListType() || t.IsTupleType() || t.IsSetType() }
func isMapLike(t cty.Type) bool {
	return t.IsMapType() || t.IsObjectType()
}

func elements(v cty.Value) []cty.Value {
	v = unmark(v)
	out := make([]cty.Value, 0, v.LengthInt())
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		out = append(out, e)
	}
	return out
}

func intArg(v cty.Value) (int, bool) {
	if !v.IsKnown() {
		return 0, false
	}
	n, err := convert.Convert(unmark(v), cty.Number)
	if err != nil || n.IsNull() || !n.IsKnown() {
		return 0, false
	}
	i, acc := n.AsBigFloat().Int64()
	if acc != big.Exact || i > maxElements*10 || i < -maxElements*10 {
		return 0, false
	}
	return int(i), true
}

// fnCoalesce returns the first argument that is neither null nor an empty string; an
// unknown before it makes the result unknown.
func fnCoalesce(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	for _, a := range args {
		if !a.IsKnown() {
			return l.unknownAt(e), nil
		}
		u := unmark(a)
		if u.IsNull() {
			continue
		}
		if u.Type() == cty.String && u.AsString() == "" {
			continue
		}
		return a, nil
	}
	return cty.NilVal, errAt(e.Range(), "coalesce: no non-null, non-empty argument")
}

func convertTo(ty cty.Type) builtin {
	return func(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
		if err := argCount(e, args, 1, 1); err != nil {
			return cty.NilVal, err
		}
		v := unmark(args[0])
		if v.IsNull() {
			return cty.NullVal(ty), nil
		}
		out, err := convert.Convert(v, ty)
		if err != nil {
			// Lists and maps with unknowns of other types inside cannot be unified;
			// keeping the structure is closer to Terraform than failing.
			if (ty.IsListType() && isSeq(v.Type())) || (ty.IsMapType() && isMapLike(v.Type())) || (ty.IsSetType() && isSeq(v.Type())) {
				return v, nil
			}
			return cty.NilVal, errAt(e.Range(), "%s: %s", e.Name, err)
		}
		return out, nil
	}
}

func fnJSONEncode(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 1, 1); err != nil {
		return cty.NilVal, err
	}
	v := withPlaceholders(args[0], l.text(e.Args[0].Range()))
	return l.callStd(e, stdlib.JSONEncodeFunc, []cty.Value{v})
}

func fnYAMLEncode(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 1, 1); err != nil {
		return cty.NilVal, err
	}
	v := withPlaceholders(args[0], l.text(e.Args[0].Range()))
	return l.callStd(e, ctyyaml.YAMLEncodeFunc, []cty.Value{v})
}

func stringArgs(e *hclsyntax.FunctionCallExpr, args []cty.Value, n int) ([]string, *evalError) {
	if err := argCount(e, args, n, n); err != nil {
		return nil, err
	}
	out := make([]string, n)
	for i, a := range args {
		s, err := convert.Convert(unmark(a), cty.String)
		if err != nil || s.IsNull() {
			return nil, errAt(e.Range(), "%s: argument %d must be a string", e.Name, i+1)
		}
		if !s.IsKnown() {
			return nil, nil
		}
		out[i] = s.AsString()
	}
	return out, nil
}

func identity(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 1, 1); err != nil {
		return cty.NilVal, err
	}
	return args[0], nil
}

var bigWidth = regexp.MustCompile(`%[-+# 0]*\d{5,}|\.\d{5,}|\[\d{5,}\]`)

func checkFormat(e *hclsyntax.FunctionCallExpr, args []cty.Value) *evalError {
	if len(args) == 0 {
		return errAt(e.Range(), "%s: needs a format string", e.Name)
	}
	f := unmark(args[0])
	if f.IsNull() || f.Type() != cty.String {
		return errAt(e.Range(), "%s: format must be a string", e.Name)
	}
	if bigWidth.MatchString(f.AsString()) {
		return errAt(e.Range(), "%s: format width too large", e.Name)
	}
	return nil
}

// sortedKeys returns the keys of a map in order, nil for an empty map.
func sortedKeys[V any](m map[string]V) []string {
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// literalString returns the value of an expression that is a plain string literal.
func literalString(expr hcl.Expression) (string, bool) {
	switch e := expr.(type) {
	case *hclsyntax.TemplateExpr:
		if len(e.Parts) == 1 {
			if lit, ok := e.Parts[0].(*hclsyntax.LiteralValueExpr); ok && lit.Val.Type() == cty.String {
				return lit.Val.AsString(), true
			}
		}
	case *hclsyntax.LiteralValueExpr:
		if e.Val.Type() == cty.String {
			return e.Val.AsString(), true
		}
	}
	return "", false
}

// checkRange refuses a range of more than maxElements numbers.
func checkRange(e *hclsyntax.FunctionCallExpr, args []cty.Value) *evalError {
	if err := argCount(e, args, 1, 3); err != nil {
		return err
	}
	nums := make([]float64, len(args))
	for i, a := range args {
		n, err := convert.Convert(unmark(a), cty.Number)
		if err != nil || n.IsNull() {
			return errAt(e.Range(), "range: arguments must be numbers")
		}
		nums[i], _ = n.AsBigFloat().Float64()
	}
	start, end, step := 0.0, 0.0, 1.0
	switch len(nums) {
	case 1:
		end = nums[0]
	case 2:
		start, end = nums[0], nums[1]
	case 3:
		start, end, step = nums[0], nums[1], nums[2]
	}
	if step == 0 || (end-start)/step > maxElements {
		return errAt(e.Range(), "range: too many elements")
	}
	return nil
}

// checkSetProduct refuses a product of more than maxElements lists.
func checkSetProduct(e *hclsyntax.FunctionCallExpr, args []cty.Value) *evalError {
	total := 1
	for _, a := range args {
		a = unmark(a)
		if a.IsNull() || !isSeq(a.Type()) {
			return errAt(e.Range(), "setproduct: arguments must be lists or sets")
		}
		total *= a.LengthInt()
		if total > maxElements {
			return errAt(e.Range(), "setproduct: result too large")
		}
	}
	return nil
}

// checkChunklist refuses a negative or huge chunk size.
func checkChunklist(e *hclsyntax.FunctionCallExpr, args []cty.Value) *evalError {
	if err := argCount(e, args, 2, 2); err != nil {
		return err
	}
	if n, ok := intArg(args[1]); !ok || n < 0 {
		return errAt(e.Range(), "chunklist: size must be a non-negative number")
	}
	return nil
}

// checkConcat refuses a list of more than maxElements elements.
func checkConcat(e *hclsyntax.FunctionCallExpr, args []cty.Value) *evalError {
	n := 0
	for _, a := range args {
		if a = unmark(a); !a.IsNull() && isSeq(a.Type()) {
			n += a.LengthInt()
		}
		if n > maxElements {
			return errAt(e.Range(), "concat: list too long")
		}
	}
	return nil
}

// checkReplace refuses a replacement whose result would be longer than
// maxStringSize. An empty search string matches around every character.
func checkReplace(e *hclsyntax.FunctionCallExpr, args []cty.Value) *evalError {
	s, err := stringArgs(e, args, 3)
	if err != nil || s == nil {
		return err
	}
	str, search, repl := s[0], s[1], s[2]
	if len(search) > 1 && search[0] == '/' && search[len(search)-1] == '/' {
		// Bounded by checkCall.
		return nil
	}
	if len(str)+strings.Count(str, search)*(len(repl)-len(search)) > maxStringSize {
		return errAt(e.Range(), "replace: result too long")
	}
	return nil
}
