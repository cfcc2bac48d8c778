package main

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// The evaluator follows, through a module's HCL, where the values of its input
// variables go: an abstract value is the set of input paths it may be (with the
// keys a later merge() argument overrides), the attributes of an object the module
// builds, and the elements of a list or map it builds. A path names a place inside
// an input: "eks_managed_node_groups.*.taints.*" is an entry of the taints of an
// entry of eks_managed_node_groups ("*" is any entry or element). Reading an
// attribute of a value (x.KEY, x["KEY"], lookup(x, "KEY", ...), try(x.KEY, ...))
// records KEY as read at each of its paths; iterating a value (for expressions,
// for_each, dynamic blocks, keys(), values()) or reading it with a key computed at
// plan time marks its paths open (the names there are the user's); passing it whole
// where eksdoctor cannot follow it (a resource argument, a module outside the
// repository, a function that is not a plain pass-through such as jsonencode or
// templatefile) marks it whole (every key below may be used).

type val struct {
	// paths maps each input path the value may be to the keys a later merge()
	// argument overrides there (a read of such a key does not reach the input).
	paths map[string]map[string]bool
	// eshadow maps a path that is a collection to the keys overridden in each of
	// its elements ({for k, v in X : k => merge(v, {name = k})}).
	eshadow map[string]map[string]bool
	attrs   map[string]*val
	elems   *val
}

func (v *val) addElemShadow(p string, shadow map[string]bool) {
	if len(shadow) == 0 {
		return
	}
	if v.eshadow == nil {
		v.eshadow = map[string]map[string]bool{}
	}
	v.eshadow[p] = shadow
}

func pathVal(p string) *val { return &val{paths: map[string]map[string]bool{p: nil}} }

func (v *val) addPath(p string, shadow map[string]bool) {
	if v.paths == nil {
		v.paths = map[string]map[string]bool{}
	}
	old, ok := v.paths[p]
	if !ok {
		v.paths[p] = shadow
		return
	}
	// Alternatives: a key is overridden only when every alternative overrides it.
	both := map[string]bool{}
	for k := range old {
		if shadow[k] {
			both[k] = true
		}
	}
	v.paths[p] = both
}

func union(vs ...*val) *val {
	out := &val{}
	for _, v := range vs {
		if v == nil {
			continue
		}
		for p, sh := range v.paths {
			_, had := out.paths[p]
			out.addPath(p, sh)
			es := v.eshadow[p]
			if had {
				both := map[string]bool{}
				for k := range out.eshadow[p] {
					if es[k] {
						both[k] = true
					}
				}
				es = both
			}
			delete(out.eshadow, p)
			out.addElemShadow(p, es)
		}
		for k, a := range v.attrs {
			if out.attrs == nil {
				out.attrs = map[string]*val{}
			}
			out.attrs[k] = union(out.attrs[k], a)
		}
		if v.elems != nil {
			out.elems = union(out.elems, v.elems)
		}
	}
	return out
}

// summary is what one release of one module declares and reads.
type summary struct {
	inputs map[string]bool            // variable -> required (no default)
	reads  map[string]map[string]bool // path -> keys read there
	open   map[string]bool            // paths whose names are the user's
	whole  map[string]bool            // paths passed on whole
}

type scope struct {
	parent *scope
	names  map[string]*val
}

func (s *scope) lookup(n string) (*val, bool) {
	for ; s != nil; s = s.parent {
		if v, ok := s.names[n]; ok {
			return v, true
		}
	}
	return nil, false
}

func (s *scope) with(names map[string]*val) *scope { return &scope{parent: s, names: names} }

// module is one module directory of one release being evaluated.
type module struct {
	dir    string
	files  map[string][]byte
	vars   map[string]*hclsyntax.Block
	locals map[string]hclsyntax.Expression
	lvals  map[string]*val
	busy   map[string]bool
	anon   map[*hclsyntax.AnonSymbolExpr]*val
	child  func(dir string) (*summary, error)
	sum    *summary
	errs   []error
}

// evaluate reads a module directory's .tf files (name -> contents); child returns
// the summary of a module a local source names (a directory relative to the
// repository root).
func evaluate(dir string, files map[string][]byte, child func(dir string) (*summary, error)) (*summary, error) {
	m := &module{
		dir: dir, files: files, vars: map[string]*hclsyntax.Block{}, locals: map[string]hclsyntax.Expression{},
		lvals: map[string]*val{}, busy: map[string]bool{}, anon: map[*hclsyntax.AnonSymbolExpr]*val{}, child: child,
		sum: &summary{inputs: map[string]bool{}, reads: map[string]map[string]bool{}, open: map[string]bool{}, whole: map[string]bool{}},
	}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var blocks []*hclsyntax.Block
	for _, n := range names {
		f, diags := hclsyntax.ParseConfig(files[n], n, hcl.InitialPos)
		if diags.HasErrors() {
			return nil, fmt.Errorf("%s: %w", n, diags)
		}
		for _, b := range f.Body.(*hclsyntax.Body).Blocks {
			blocks = append(blocks, b)
			switch b.Type {
			case "variable":
				if len(b.Labels) == 1 {
					m.vars[b.Labels[0]] = b
					_, hasDefault := b.Body.Attributes["default"]
					m.sum.inputs[b.Labels[0]] = !hasDefault
				}
			case "locals":
				for n, a := range b.Body.Attributes {
					m.locals[n] = a.Expr
				}
			}
		}
	}
	root := &scope{}
	for _, b := range blocks {
		switch b.Type {
		case "variable":
			for _, vb := range b.Body.Blocks {
				if vb.Type == "validation" {
					for _, a := range vb.Body.Attributes {
						m.eval(a.Expr, root)
					}
				}
			}
		case "output":
			// An output hands a value to the caller; the module itself reads no key
			// of it.
			for n, a := range b.Body.Attributes {
				if n != "depends_on" {
					m.eval(a.Expr, root)
				}
			}
		case "resource", "data", "ephemeral":
			m.resource(b.Body, root)
		case "module":
			m.moduleCall(b.Body, root)
		}
	}
	var ls []string
	for n := range m.locals {
		ls = append(ls, n)
	}
	sort.Strings(ls)
	for _, n := range ls {
		m.local(n)
	}
	if len(m.errs) > 0 {
		return nil, m.errs[0]
	}
	return m.sum, nil
}

func (m *module) record(p, key string) {
	ks := m.sum.reads[p]
	if ks == nil {
		ks = map[string]bool{}
		m.sum.reads[p] = ks
	}
	ks[key] = true
}

func (m *module) local(n string) *val {
	if v, ok := m.lvals[n]; ok {
		return v
	}
	e, ok := m.locals[n]
	if !ok || m.busy[n] {
		return &val{}
	}
	m.busy[n] = true
	v := m.eval(e, &scope{})
	m.busy[n] = false
	m.lvals[n] = v
	return v
}

// get reads key of v.
func (m *module) get(v *val, key string) *val {
	out := &val{}
	for p, sh := range v.paths {
		if strings.HasSuffix(p, ".^") || sh[key] {
			continue
		}
		m.record(p, key)
		if !strings.ContainsAny(key, ".*^") {
			out.addPath(p+"."+key, nil)
		}
	}
	if a, ok := v.attrs[key]; ok {
		out = union(out, a)
	}
	return out
}

// elem is an element of v; iterate marks v's paths open.
func (m *module) elem(v *val, iterate bool) *val {
	out := &val{}
	for p := range v.paths {
		if strings.HasSuffix(p, ".^") {
			out.addPath(strings.TrimSuffix(p, ".^"), v.eshadow[p])
			continue
		}
		if iterate {
			m.sum.open[p] = true
		}
		out.addPath(p+".*", v.eshadow[p])
	}
	for _, a := range v.attrs {
		out = union(out, a)
	}
	if v.elems != nil {
		out = union(out, v.elems)
	}
	return out
}

// coll is a list or map whose elements are v.
func coll(v *val) *val {
	out := &val{}
	for p, sh := range v.paths {
		c := p + ".^"
		if strings.HasSuffix(p, ".*") {
			c = strings.TrimSuffix(p, ".*")
		}
		out.addPath(c, nil)
		out.addElemShadow(c, sh)
	}
	if len(v.attrs) > 0 || v.elems != nil {
		out.elems = &val{attrs: v.attrs, elems: v.elems}
	}
	return out
}

// sink marks everything v may be as passed on whole.
func (m *module) sink(v *val) {
	m.sinkDepth(v, 0)
}

func (m *module) sinkDepth(v *val, depth int) {
	if v == nil || depth > 20 {
		return
	}
	for p := range v.paths {
		m.sum.whole[strings.TrimSuffix(p, ".^")] = true
	}
	for _, a := range v.attrs {
		m.sinkDepth(a, depth+1)
	}
	m.sinkDepth(v.elems, depth+1)
}

func isList(v *val) bool {
	if v.elems != nil {
		return true
	}
	for p := range v.paths {
		if strings.HasSuffix(p, ".^") {
			return true
		}
	}
	return false
}

func flatten(v *val) *val {
	out := &val{}
	for p := range v.paths {
		for strings.HasSuffix(p, ".^.^") {
			p = strings.TrimSuffix(p, ".^")
		}
		out.addPath(p, nil)
	}
	if v.elems != nil {
		if isList(v.elems) {
			out = union(out, flatten(v.elems))
		} else {
			out.elems = union(out.elems, v.elems)
		}
	}
	return out
}

func (m *module) merge(args []*val) *val {
	out := &val{}
	for i, a := range args {
		later := map[string]bool{}
		for _, b := range args[i+1:] {
			for k := range b.attrs {
				later[k] = true
			}
		}
		for p, sh := range a.paths {
			s := map[string]bool{}
			for k := range sh {
				s[k] = true
			}
			for k := range later {
				s[k] = true
			}
			out.addPath(p, s)
			out.addElemShadow(p, a.eshadow[p])
		}
		for k, av := range a.attrs {
			if out.attrs == nil {
				out.attrs = map[string]*val{}
			}
			out.attrs[k] = av
		}
		if a.elems != nil {
			out.elems = union(out.elems, a.elems)
		}
	}
	return out
}

func (m *module) traverse(v *val, tr hcl.Traversal) *val {
	for i, step := range tr {
		switch s := step.(type) {
		case hcl.TraverseAttr:
			v = m.get(v, s.Name)
		case hcl.TraverseIndex:
			if s.Key.Type() == cty.String && s.Key.IsKnown() && !s.Key.IsNull() {
				v = m.get(v, s.Key.AsString())
			} else {
				v = m.elem(v, false)
			}
		case hcl.TraverseSplat:
			return coll(m.traverse(m.elem(v, false), tr[i+1:]))
		}
	}
	return v
}

func literalString(e hclsyntax.Expression) (string, bool) {
	switch t := e.(type) {
	case *hclsyntax.TemplateExpr:
		if len(t.Parts) == 1 {
			return literalString(t.Parts[0])
		}
	case *hclsyntax.TemplateWrapExpr:
		return literalString(t.Wrapped)
	case *hclsyntax.LiteralValueExpr:
		if t.Val.Type() == cty.String && t.Val.IsKnown() && !t.Val.IsNull() {
			return t.Val.AsString(), true
		}
	}
	return "", false
}

// Functions whose result is one of their arguments (or a collection of their
// elements) and that read no key themselves.
var passThrough = map[string]bool{
	"try": true, "coalesce": true, "coalescelist": true, "concat": true, "setunion": true, "distinct": true,
	"compact": true, "toset": true, "tolist": true, "tomap": true, "sort": true, "reverse": true,
	"sensitive": true, "nonsensitive": true, "setintersection": true, "setsubtract": true, "slice": true,
	"tostring": true, "tonumber": true, "tobool": true, "ephemeralasnull": true,
}

// Functions that look at a value without passing it on.
var inspect = map[string]bool{
	"length": true, "can": true, "contains": true, "startswith": true, "endswith": true, "alltrue": true,
	"anytrue": true, "index": true, "type": true, "issensitive": true,
}

func (m *module) eval(e hclsyntax.Expression, sc *scope) *val {
	switch t := e.(type) {
	case nil:
		return &val{}
	case *hclsyntax.LiteralValueExpr:
		return &val{}
	case *hclsyntax.TemplateExpr:
		for _, p := range t.Parts {
			m.eval(p, sc)
		}
		return &val{}
	case *hclsyntax.TemplateWrapExpr:
		return m.eval(t.Wrapped, sc)
	case *hclsyntax.TemplateJoinExpr:
		m.eval(t.Tuple, sc)
		return &val{}
	case *hclsyntax.ParenthesesExpr:
		return m.eval(t.Expression, sc)
	case *hclsyntax.ObjectConsKeyExpr:
		return m.eval(t.Wrapped, sc)
	case *hclsyntax.ScopeTraversalExpr:
		return m.scopeTraversal(t.Traversal, sc)
	case *hclsyntax.RelativeTraversalExpr:
		return m.traverse(m.eval(t.Source, sc), t.Traversal)
	case *hclsyntax.IndexExpr:
		c := m.eval(t.Collection, sc)
		if k, ok := literalString(t.Key); ok {
			return m.get(c, k)
		}
		m.eval(t.Key, sc)
		if _, isNum := t.Key.(*hclsyntax.LiteralValueExpr); !isNum {
			// A key known only at plan time may be any name.
			for p := range c.paths {
				if !strings.HasSuffix(p, ".^") {
					m.sum.open[p] = true
				}
			}
		}
		return m.elem(c, false)
	case *hclsyntax.SplatExpr:
		src := m.eval(t.Source, sc)
		m.anon[t.Item] = m.elem(src, false)
		return coll(m.eval(t.Each, sc))
	case *hclsyntax.AnonSymbolExpr:
		if v, ok := m.anon[t]; ok {
			return v
		}
		return &val{}
	case *hclsyntax.ConditionalExpr:
		m.eval(t.Condition, sc)
		return union(m.eval(t.TrueResult, sc), m.eval(t.FalseResult, sc))
	case *hclsyntax.BinaryOpExpr:
		m.eval(t.LHS, sc)
		m.eval(t.RHS, sc)
		return &val{}
	case *hclsyntax.UnaryOpExpr:
		m.eval(t.Val, sc)
		return &val{}
	case *hclsyntax.TupleConsExpr:
		var items []*val
		for _, x := range t.Exprs {
			items = append(items, m.eval(x, sc))
		}
		return coll(union(items...))
	case *hclsyntax.ObjectConsExpr:
		out := &val{attrs: map[string]*val{}}
		for i, it := range t.Items {
			k, ok := objectKey(it.KeyExpr)
			if !ok {
				m.eval(it.KeyExpr, sc)
				k = fmt.Sprintf("\x00%d", i)
			}
			out.attrs[k] = union(out.attrs[k], m.eval(it.ValueExpr, sc))
		}
		return out
	case *hclsyntax.ForExpr:
		return m.forExpr(t, sc)
	case *hclsyntax.FunctionCallExpr:
		return m.call(t, sc)
	default:
		m.errs = append(m.errs, fmt.Errorf("%s: %s: expression %T not handled", m.dir, e.Range(), e))
		return &val{}
	}
}

func objectKey(e hclsyntax.Expression) (string, bool) {
	k, ok := e.(*hclsyntax.ObjectConsKeyExpr)
	if !ok {
		return literalString(e)
	}
	if !k.ForceNonLiteral {
		if st, ok := k.Wrapped.(*hclsyntax.ScopeTraversalExpr); ok && len(st.Traversal) == 1 {
			return st.Traversal.RootName(), true
		}
	}
	return literalString(k.Wrapped)
}

func (m *module) scopeTraversal(tr hcl.Traversal, sc *scope) *val {
	root := tr.RootName()
	if v, ok := sc.lookup(root); ok {
		return m.traverse(v, tr[1:])
	}
	name := ""
	if len(tr) > 1 {
		if a, ok := tr[1].(hcl.TraverseAttr); ok {
			name = a.Name
		}
	}
	switch root {
	case "var":
		if _, ok := m.vars[name]; ok {
			return m.traverse(pathVal(name), tr[2:])
		}
	case "local":
		if name != "" {
			return m.traverse(m.local(name), tr[2:])
		}
	}
	return &val{}
}

func bareName(e hclsyntax.Expression) string {
	if st, ok := e.(*hclsyntax.ScopeTraversalExpr); ok && len(st.Traversal) == 1 {
		return st.Traversal.RootName()
	}
	return ""
}

func (m *module) forExpr(t *hclsyntax.ForExpr, sc *scope) *val {
	c := m.eval(t.CollExpr, sc)
	names := map[string]*val{t.ValVar: m.elem(c, true)}
	if t.KeyVar != "" {
		names[t.KeyVar] = &val{}
	}
	inner := sc.with(names)
	if t.CondExpr != nil {
		m.eval(t.CondExpr, inner)
	}
	var key string
	if t.KeyExpr != nil {
		m.eval(t.KeyExpr, inner)
		key = bareName(t.KeyExpr)
	}
	body := m.eval(t.ValExpr, inner)
	// A filter ({for k, v in X : k => v if ...}) keeps X as it is.
	if bareName(t.ValExpr) == t.ValVar && !t.Group && (t.KeyExpr == nil || (t.KeyVar != "" && key == t.KeyVar)) {
		return c
	}
	if t.Group {
		return coll(coll(body))
	}
	return coll(body)
}

func (m *module) call(t *hclsyntax.FunctionCallExpr, sc *scope) *val {
	name := t.Name
	if i := strings.LastIndex(name, "::"); i >= 0 && strings.HasPrefix(name, "core::") {
		name = name[i+2:]
	}
	args := make([]*val, len(t.Args))
	for i, a := range t.Args {
		if name == "lookup" && i == 1 {
			continue
		}
		args[i] = m.eval(a, sc)
	}
	switch {
	case passThrough[name]:
		return union(args...)
	case inspect[name]:
		return &val{}
	}
	switch name {
	case "merge":
		return m.merge(args)
	case "flatten":
		if len(args) == 1 {
			return flatten(args[0])
		}
	case "lookup":
		if len(args) >= 2 {
			var out *val
			if k, ok := literalString(t.Args[1]); ok {
				out = m.get(args[0], k)
			} else {
				m.eval(t.Args[1], sc)
				for p := range args[0].paths {
					m.sum.open[p] = true
				}
				out = m.elem(args[0], false)
			}
			return union(append([]*val{out}, args[2:]...)...)
		}
	case "element", "one":
		if len(args) >= 1 {
			return m.elem(args[0], false)
		}
	case "values":
		if len(args) == 1 {
			return coll(m.elem(args[0], true))
		}
	case "keys":
		if len(args) == 1 {
			m.elem(args[0], true)
			return &val{}
		}
	}
	for _, a := range args {
		m.sink(a)
	}
	return &val{}
}

// The meta-arguments of resources and data sources, and of module calls.
var (
	metaArgs       = map[string]bool{"count": true, "for_each": true, "depends_on": true, "provider": true}
	moduleMetaArgs = map[string]bool{"count": true, "for_each": true, "depends_on": true, "providers": true, "source": true, "version": true}
)

// resource evaluates a resource or data block: its arguments are passed on.
func (m *module) resource(body *hclsyntax.Body, sc *scope) {
	sc = m.iteration(body, sc)
	m.blockBody(body, sc)
}

// iteration binds each.value (and reads count).
func (m *module) iteration(body *hclsyntax.Body, sc *scope) *scope {
	if a, ok := body.Attributes["count"]; ok {
		m.eval(a.Expr, sc)
	}
	if a, ok := body.Attributes["for_each"]; ok {
		ev := m.elem(m.eval(a.Expr, sc), true)
		return sc.with(map[string]*val{"each": {attrs: map[string]*val{"value": ev, "key": {}}}})
	}
	return sc
}

func (m *module) blockBody(body *hclsyntax.Body, sc *scope) {
	var names []string
	for n := range body.Attributes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if metaArgs[n] {
			continue
		}
		m.sink(m.eval(body.Attributes[n].Expr, sc))
	}
	for _, b := range body.Blocks {
		switch b.Type {
		case "lifecycle":
			for _, c := range b.Body.Blocks {
				for _, a := range c.Body.Attributes {
					m.eval(a.Expr, sc)
				}
			}
		case "dynamic":
			if len(b.Labels) != 1 {
				continue
			}
			it := b.Labels[0]
			if a, ok := b.Body.Attributes["iterator"]; ok {
				if n := bareName(a.Expr); n != "" {
					it = n
				}
			}
			var ev *val = &val{}
			if a, ok := b.Body.Attributes["for_each"]; ok {
				ev = m.elem(m.eval(a.Expr, sc), true)
			}
			inner := sc.with(map[string]*val{it: {attrs: map[string]*val{"value": ev, "key": {}}}})
			if a, ok := b.Body.Attributes["labels"]; ok {
				m.eval(a.Expr, inner)
			}
			for _, c := range b.Body.Blocks {
				if c.Type == "content" {
					m.blockBody(c.Body, inner)
				}
			}
		case "provisioner", "connection":
		default:
			m.blockBody(b.Body, sc)
		}
	}
}

// moduleCall evaluates a module block: a module of the same repository reads its
// arguments as its summary says; any other module takes them whole.
func (m *module) moduleCall(body *hclsyntax.Body, sc *scope) {
	sc = m.iteration(body, sc)
	src := ""
	if a, ok := body.Attributes["source"]; ok {
		src, _ = literalString(a.Expr)
	}
	var child *summary
	if strings.HasPrefix(src, "./") || strings.HasPrefix(src, "../") {
		dir := path.Clean(path.Join(m.dir, src))
		var err error
		if child, err = m.child(dir); err != nil {
			m.errs = append(m.errs, err)
			return
		}
	}
	if child == nil {
		m.blockBody(body, sc)
		return
	}
	var names []string
	for n := range body.Attributes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if moduleMetaArgs[n] {
			continue
		}
		v := m.eval(body.Attributes[n].Expr, sc)
		if _, ok := child.inputs[n]; !ok {
			continue
		}
		m.replay(v, n, child)
	}
}

// replay does to v, passed as the child's input name, what the child does to it.
func (m *module) replay(v *val, name string, child *summary) {
	walk := func(p string) (*val, bool) {
		segs := strings.Split(p, ".")
		if segs[0] != name {
			return nil, false
		}
		w := v
		for _, s := range segs[1:] {
			if s == "*" {
				w = m.elem(w, false)
			} else {
				w = m.get(w, s)
			}
		}
		return w, true
	}
	for _, p := range sortedKeys(child.reads) {
		w, ok := walk(p)
		if !ok {
			continue
		}
		for _, k := range sortedKeys(child.reads[p]) {
			m.get(w, k)
		}
	}
	for _, p := range sortedKeys(child.open) {
		if w, ok := walk(p); ok {
			m.elem(w, true)
		}
	}
	for _, p := range sortedKeys(child.whole) {
		if w, ok := walk(p); ok {
			m.sink(w)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// closed reports whether the keys read at p are all the keys that matter there:
// p is neither open nor passed on whole, and nothing above it is passed on whole.
func (s *summary) closed(p string) bool {
	if len(s.reads[p]) == 0 || s.open[p] {
		return false
	}
	segs := strings.Split(p, ".")
	for i := 1; i <= len(segs); i++ {
		if s.whole[strings.Join(segs[:i], ".")] {
			return false
		}
	}
	return true
}
