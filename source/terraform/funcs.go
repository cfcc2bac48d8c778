package terraform

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/big"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

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

// stdFuncs are the Terraform functions whose go-cty implementation matches Terraform's.
// They are called only with known arguments at the top level; an unknown argument makes
// the call unknown.
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
}

// builtin is a function implemented here: one that keeps the unknowns inside its
// arguments where they are (merge, concat, lookup, ...), needs the file system, or is
// Terraform's own. It receives evaluated arguments with the top-level unknown check
// already done unless it is listed in lazyArgs.
type builtin func(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError)

var builtins map[string]builtin

func init() {
	builtins = map[string]builtin{
		"merge": fnMerge,
		// Not a Terraform function: provider::kubernetes::manifest_decode_multi
		// is evaluated under this name (providerFuncs).
		"manifest_decode_multi": fnManifestDecodeMulti,
		"concat":                fnConcat,
		"flatten":               fnFlatten,
		"lookup":                fnLookup,
		"element":               fnElement,
		"values":                fnValues,
		"keys":                  fnKeys,
		"zipmap":                fnZipmap,
		"one":                   fnOne,
		"index":                 fnIndex,
		"reverse":               fnReverse,
		"slice":                 fnSlice,
		"length":                fnLength,
		"coalesce":              fnCoalesce,
		"tostring":              convertTo(cty.String),
		"tonumber":              convertTo(cty.Number),
		"tobool":                convertTo(cty.Bool),
		"tolist":                convertTo(cty.List(cty.DynamicPseudoType)),
		"toset":                 convertTo(cty.Set(cty.DynamicPseudoType)),
		"tomap":                 convertTo(cty.Map(cty.DynamicPseudoType)),
		"jsonencode":            fnJSONEncode,
		"yamlencode":            fnYAMLEncode,
		"startswith":            stringPredicate(strings.HasPrefix),
		"endswith":              stringPredicate(strings.HasSuffix),
		"strcontains":           stringPredicate(strings.Contains),
		"replace":               fnReplace,
		"format":                fnFormat,
		"formatlist":            fnFormatList,
		"range":                 fnRange,
		"setproduct":            fnSetProduct,
		"chunklist":             fnChunklist,
		"alltrue":               fnAllTrue,
		"anytrue":               fnAnyTrue,
		"sum":                   fnSum,
		"base64encode":          stringFunc(func(s string) (string, error) { return base64.StdEncoding.EncodeToString([]byte(s)), nil }),
		"base64decode": stringFunc(func(s string) (string, error) {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return "", fmt.Errorf("invalid base64: %w", err)
			}
			if !utf8.Valid(b) {
				return "", fmt.Errorf("decoded base64 is not UTF-8 text")
			}
			return string(b), nil
		}),
		"md5":       stringFunc(func(s string) (string, error) { h := md5.Sum([]byte(s)); return hex.EncodeToString(h[:]), nil }),
		"sha1":      stringFunc(func(s string) (string, error) { h := sha1.Sum([]byte(s)); return hex.EncodeToString(h[:]), nil }),
		"sha256":    stringFunc(func(s string) (string, error) { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]), nil }),
		"sha512":    stringFunc(func(s string) (string, error) { h := sha512.Sum512([]byte(s)); return hex.EncodeToString(h[:]), nil }),
		"basename":  stringFunc(func(s string) (string, error) { return path.Base(strings.ReplaceAll(s, "\\", "/")), nil }),
		"dirname":   stringFunc(func(s string) (string, error) { return path.Dir(strings.ReplaceAll(s, "\\", "/")), nil }),
		"urlencode": stringFunc(urlEncode),
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

// unknownFuncs are functions whose result is never known before apply.
var unknownFuncs = map[string]bool{
	"timestamp": true, "plantimestamp": true, "uuid": true, "uuidv5": true, "bcrypt": true,
	"pathexpand": true, "rsadecrypt": true, "cidrsubnet": true, "cidrsubnets": true,
	"cidrhost": true, "cidrnetmask": true, "base64gzip": true, "filemd5": true,
	"filesha1": true, "filesha256": true, "filesha512": true, "filebase64sha256": true,
	"filebase64sha512": true, "type": true, "templatestring": true, "issensitive": true,
	"ephemeralasnull": true, "textencodebase64": true, "textdecodebase64": true,
	"base64sha256": true, "base64sha512": true, "transpose": true, "matchkeys": true,
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
	args := make([]cty.Value, 0, len(e.Args))
	for i, a := range e.Args {
		v, err := l.eval(a, c)
		if err != nil {
			return v, err
		}
		if e.ExpandFinal && i == len(e.Args)-1 {
			if !v.IsKnown() {
				return l.unknownAt(e), nil
			}
			v = unmark(v)
			if v.IsNull() || !(v.Type().IsListType() || v.Type().IsTupleType() || v.Type().IsSetType()) {
				return cty.NilVal, errAt(a.Range(), "the final argument of an expanded call must be a list")
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
			return l.unknownAt(e), nil
		}
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
		l.unresolved(originOf(e.Range()), fmt.Sprintf("eksdoctor does not evaluate the function %s; its result is treated as unknown", name))
		return l.unknownAt(e), nil
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
	return l.callStd(e, f, args)
}

// callStd calls a go-cty function the way HCL does (arguments converted to the
// parameter types). Unknowns nested in arguments are moved by go-cty to the result,
// which then reads as the call expression.
func (l *loader) callStd(e *hclsyntax.FunctionCallExpr, f function.Function, args []cty.Value) (cty.Value, *evalError) {
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
		return l.unknownAt(e), nil
	}
	if v.ContainsMarked() || !v.IsWhollyKnown() {
		return markLeaves(unmarkDeep(v), l.text(e.Range())), nil
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

func fnMerge(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	out := map[string]cty.Value{}
	for i, a := range args {
		a = unmark(a)
		if a.IsNull() {
			continue
		}
		if !isMapLike(a.Type()) {
			return cty.NilVal, errAt(e.Range(), "merge: argument %d is not a map or object", i+1)
		}
		if !a.IsKnown() {
			return l.unknownAt(e), nil
		}
		for it := a.ElementIterator(); it.Next(); {
			k, v := it.Element()
			out[k.AsString()] = v
		}
	}
	return cty.ObjectVal(out), nil
}

func fnConcat(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	var out []cty.Value
	for i, a := range args {
		a = unmark(a)
		if a.IsNull() || !isSeq(a.Type()) {
			return cty.NilVal, errAt(e.Range(), "concat: argument %d is not a list", i+1)
		}
		out = append(out, elements(a)...)
		if len(out) > maxElements {
			return cty.NilVal, errAt(e.Range(), "concat: list too long")
		}
	}
	return cty.TupleVal(out), nil
}

func fnFlatten(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 1, 1); err != nil {
		return cty.NilVal, err
	}
	var out []cty.Value
	var walk func(v cty.Value, depth int) bool
	walk = func(v cty.Value, depth int) bool {
		if depth > 64 || len(out) > maxElements {
			return false
		}
		for _, el := range elements(v) {
			if !el.IsKnown() {
				return false
			}
			u := unmark(el)
			if !u.IsNull() && isSeq(u.Type()) {
				if !walk(u, depth+1) {
					return false
				}
				continue
			}
			out = append(out, el)
		}
		return true
	}
	a := unmark(args[0])
	if a.IsNull() || !isSeq(a.Type()) {
		return cty.NilVal, errAt(e.Range(), "flatten: argument is not a list")
	}
	if !walk(a, 0) {
		return l.unknownAt(e), nil
	}
	return cty.TupleVal(out), nil
}

func fnLookup(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 2, 3); err != nil {
		return cty.NilVal, err
	}
	m, k := unmark(args[0]), unmark(args[1])
	if m.IsNull() || !isMapLike(m.Type()) {
		return cty.NilVal, errAt(e.Range(), "lookup: first argument is not a map")
	}
	ks, err := convert.Convert(k, cty.String)
	if err != nil || ks.IsNull() {
		return cty.NilVal, errAt(e.Range(), "lookup: key must be a string")
	}
	key := ks.AsString()
	if m.Type().IsObjectType() {
		if m.Type().HasAttribute(key) {
			return m.GetAttr(key), nil
		}
	} else if m.HasIndex(ks).True() {
		return m.Index(ks), nil
	}
	if len(args) == 3 {
		return args[2], nil
	}
	return cty.NilVal, errAt(e.Range(), "lookup: no element %q and no default", key)
}

func fnElement(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 2, 2); err != nil {
		return cty.NilVal, err
	}
	list := unmark(args[0])
	if list.IsNull() || !(list.Type().IsListType() || list.Type().IsTupleType()) {
		return cty.NilVal, errAt(e.Range(), "element: first argument is not a list")
	}
	n, err := convert.Convert(unmark(args[1]), cty.Number)
	if err != nil || n.IsNull() {
		return cty.NilVal, errAt(e.Range(), "element: index must be a number")
	}
	i, acc := n.AsBigFloat().Int64()
	if acc != big.Exact || i < 0 {
		return cty.NilVal, errAt(e.Range(), "element: index must be a non-negative whole number")
	}
	els := elements(list)
	if len(els) == 0 {
		return cty.NilVal, errAt(e.Range(), "element: list is empty")
	}
	return els[i%int64(len(els))], nil
}

func fnValues(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 1, 1); err != nil {
		return cty.NilVal, err
	}
	m := unmark(args[0])
	if m.IsNull() || !isMapLike(m.Type()) {
		return cty.NilVal, errAt(e.Range(), "values: argument is not a map")
	}
	return cty.TupleVal(elements(m)), nil
}

func fnKeys(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 1, 1); err != nil {
		return cty.NilVal, err
	}
	m := unmark(args[0])
	if m.IsNull() || !isMapLike(m.Type()) {
		return cty.NilVal, errAt(e.Range(), "keys: argument is not a map")
	}
	var out []cty.Value
	for it := m.ElementIterator(); it.Next(); {
		k, _ := it.Element()
		out = append(out, k)
	}
	return cty.TupleVal(out), nil
}

func fnZipmap(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 2, 2); err != nil {
		return cty.NilVal, err
	}
	ks, vs := unmark(args[0]), unmark(args[1])
	if ks.IsNull() || vs.IsNull() || !isSeq(ks.Type()) || !isSeq(vs.Type()) {
		return cty.NilVal, errAt(e.Range(), "zipmap: arguments must be lists")
	}
	kl, vl := elements(ks), elements(vs)
	if len(kl) != len(vl) {
		return cty.NilVal, errAt(e.Range(), "zipmap: lists differ in length")
	}
	out := map[string]cty.Value{}
	for i, k := range kl {
		if !k.IsKnown() {
			return l.unknownAt(e), nil
		}
		s, err := convert.Convert(unmark(k), cty.String)
		if err != nil || s.IsNull() {
			return cty.NilVal, errAt(e.Range(), "zipmap: keys must be strings")
		}
		out[s.AsString()] = vl[i]
	}
	return cty.ObjectVal(out), nil
}

func fnOne(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 1, 1); err != nil {
		return cty.NilVal, err
	}
	v := unmark(args[0])
	if v.IsNull() || !isSeq(v.Type()) {
		return cty.NilVal, errAt(e.Range(), "one: argument is not a list")
	}
	els := elements(v)
	switch len(els) {
	case 0:
		return cty.NullVal(cty.DynamicPseudoType), nil
	case 1:
		return els[0], nil
	}
	return cty.NilVal, errAt(e.Range(), "one: list has more than one element")
}

// fnIndex is Terraform's index(list, value): the position of value in list.
func fnIndex(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 2, 2); err != nil {
		return cty.NilVal, err
	}
	list := unmark(args[0])
	if list.IsNull() || !(list.Type().IsListType() || list.Type().IsTupleType()) {
		return cty.NilVal, errAt(e.Range(), "index: first argument is not a list")
	}
	want := unmarkDeep(args[1])
	for i, el := range elements(list) {
		if !el.IsWhollyKnown() {
			return l.unknownAt(e), nil
		}
		eq := unmarkDeep(el).Equals(want)
		if !eq.IsKnown() {
			return l.unknownAt(e), nil
		}
		if eq.True() {
			return cty.NumberIntVal(int64(i)), nil
		}
	}
	return cty.NilVal, errAt(e.Range(), "index: item not found")
}

func fnReverse(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 1, 1); err != nil {
		return cty.NilVal, err
	}
	v := unmark(args[0])
	if v.IsNull() || !isSeq(v.Type()) {
		return cty.NilVal, errAt(e.Range(), "reverse: argument is not a list")
	}
	els := elements(v)
	out := make([]cty.Value, len(els))
	for i, x := range els {
		out[len(els)-1-i] = x
	}
	return cty.TupleVal(out), nil
}

func fnSlice(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 3, 3); err != nil {
		return cty.NilVal, err
	}
	v := unmark(args[0])
	if v.IsNull() || !(v.Type().IsListType() || v.Type().IsTupleType()) {
		return cty.NilVal, errAt(e.Range(), "slice: first argument is not a list")
	}
	els := elements(v)
	from, ok1 := intArg(args[1])
	to, ok2 := intArg(args[2])
	if !ok1 || !ok2 || from < 0 || to > len(els) || from > to {
		return cty.NilVal, errAt(e.Range(), "slice: indices out of range")
	}
	return cty.TupleVal(els[from:to]), nil
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

func fnLength(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 1, 1); err != nil {
		return cty.NilVal, err
	}
	v := unmark(args[0])
	if v.IsNull() {
		return cty.NilVal, errAt(e.Range(), "length: argument is null")
	}
	if v.Type() == cty.String {
		if strings.Contains(v.AsString(), "${") {
			return l.unknownAt(e), nil
		}
		return l.callStd(e, stdlib.StrlenFunc, []cty.Value{v})
	}
	if !(isSeq(v.Type()) || isMapLike(v.Type())) {
		return cty.NilVal, errAt(e.Range(), "length: argument must be a string, list or map")
	}
	return cty.NumberIntVal(int64(v.LengthInt())), nil
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

func stringPredicate(f func(s, sub string) bool) builtin {
	return func(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
		s, err := stringArgs(e, args, 2)
		if err != nil || s == nil {
			return l.unknownAt(e), err
		}
		if strings.Contains(s[0], "${") || strings.Contains(s[1], "${") {
			return l.unknownAt(e), nil
		}
		return cty.BoolVal(f(s[0], s[1])), nil
	}
}

func stringFunc(f func(string) (string, error)) builtin {
	return func(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
		s, err := stringArgs(e, args, 1)
		if err != nil || s == nil {
			return l.unknownAt(e), err
		}
		out, ferr := f(s[0])
		if ferr != nil {
			return cty.NilVal, errAt(e.Range(), "%s: %s", e.Name, ferr)
		}
		return cty.StringVal(out), nil
	}
}

func identity(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 1, 1); err != nil {
		return cty.NilVal, err
	}
	return args[0], nil
}

func urlEncode(s string) (string, error) {
	var b strings.Builder
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == '~':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String(), nil
}

// fnReplace is Terraform's replace: a search string between slashes is a regular
// expression.
func fnReplace(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	s, err := stringArgs(e, args, 3)
	if err != nil || s == nil {
		return l.unknownAt(e), err
	}
	str, search, repl := s[0], s[1], s[2]
	if len(search) > 1 && search[0] == '/' && search[len(search)-1] == '/' {
		re, rerr := regexp.Compile(search[1 : len(search)-1])
		if rerr != nil {
			return cty.NilVal, errAt(e.Range(), "replace: invalid regular expression: %s", rerr)
		}
		return cty.StringVal(re.ReplaceAllString(str, repl)), nil
	}
	if search == "" {
		return cty.StringVal(str), nil
	}
	out := strings.ReplaceAll(str, search, repl)
	if len(out) > maxStringSize {
		return cty.NilVal, errAt(e.Range(), "replace: result too long")
	}
	return cty.StringVal(out), nil
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

func fnFormat(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := checkFormat(e, args); err != nil {
		return cty.NilVal, err
	}
	return l.callStd(e, stdlib.FormatFunc, args)
}

func fnFormatList(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := checkFormat(e, args); err != nil {
		return cty.NilVal, err
	}
	return l.callStd(e, stdlib.FormatListFunc, args)
}

func fnRange(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 1, 3); err != nil {
		return cty.NilVal, err
	}
	nums := make([]float64, len(args))
	for i, a := range args {
		n, err := convert.Convert(unmark(a), cty.Number)
		if err != nil || n.IsNull() {
			return cty.NilVal, errAt(e.Range(), "range: arguments must be numbers")
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
		return cty.NilVal, errAt(e.Range(), "range: too many elements")
	}
	return l.callStd(e, stdlib.RangeFunc, args)
}

func fnSetProduct(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	total := 1
	for _, a := range args {
		a = unmark(a)
		if a.IsNull() || !isSeq(a.Type()) {
			return cty.NilVal, errAt(e.Range(), "setproduct: arguments must be lists or sets")
		}
		total *= a.LengthInt()
		if total > maxElements {
			return cty.NilVal, errAt(e.Range(), "setproduct: result too large")
		}
	}
	return l.callStd(e, stdlib.SetProductFunc, args)
}

func fnChunklist(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 2, 2); err != nil {
		return cty.NilVal, err
	}
	if n, ok := intArg(args[1]); !ok || n < 0 {
		return cty.NilVal, errAt(e.Range(), "chunklist: size must be a non-negative number")
	}
	return l.callStd(e, stdlib.ChunklistFunc, args)
}

func boolList(e *hclsyntax.FunctionCallExpr, args []cty.Value) ([]cty.Value, *evalError) {
	if err := argCount(e, args, 1, 1); err != nil {
		return nil, err
	}
	v := unmark(args[0])
	if v.IsNull() || !isSeq(v.Type()) {
		return nil, errAt(e.Range(), "%s: argument must be a list", e.Name)
	}
	return elements(v), nil
}

func fnAllTrue(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	return boolFold(l, e, args, "alltrue", false)
}

func fnAnyTrue(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	return boolFold(l, e, args, "anytrue", true)
}

// boolFold is alltrue (decisive false) and anytrue (decisive true): a known
// decisive element settles the answer even when others are unknown.
func boolFold(l *loader, e *hclsyntax.FunctionCallExpr, args []cty.Value, name string, decisive bool) (cty.Value, *evalError) {
	els, err := boolList(e, args)
	if err != nil {
		return cty.NilVal, err
	}
	unknown := false
	for _, x := range els {
		b, ok := knownBool(x)
		if !ok {
			if x.IsKnown() {
				return cty.NilVal, errAt(e.Range(), "%s: elements must be bools", name)
			}
			unknown = true
			continue
		}
		if b == decisive {
			return cty.BoolVal(decisive), nil
		}
	}
	if unknown {
		return l.unknownAt(e), nil
	}
	return cty.BoolVal(!decisive), nil
}

func fnSum(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	els, err := boolList(e, args)
	if err != nil {
		return cty.NilVal, err
	}
	if len(els) == 0 {
		return cty.NilVal, errAt(e.Range(), "sum: list is empty")
	}
	total := new(big.Float)
	for _, x := range els {
		if !x.IsKnown() {
			return l.unknownAt(e), nil
		}
		n, cerr := convert.Convert(unmark(x), cty.Number)
		if cerr != nil || n.IsNull() {
			return cty.NilVal, errAt(e.Range(), "sum: elements must be numbers")
		}
		total.Add(total, n.AsBigFloat())
	}
	return cty.NumberVal(total), nil
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
