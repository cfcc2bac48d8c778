package terraform

import (
	"strconv"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// resInst is one instance of a resource or data source with its arguments evaluated
// into the form Terraform's plan JSON uses: attributes by name, nested blocks as lists
// of objects, unknown values as placeholders. Resources read from HCL, synthesized for
// what a terraform-aws-eks module creates, and read from a plan all take this form, so
// that one extractor turns them into the model.
type resInst struct {
	addr       string // instance address
	mode       string // "managed" or "data"
	typ, name  string
	vals       map[string]any
	unknown    map[string]bool // arguments (dotted paths) whose value is not known
	origin     cluster.Origin
	lines      map[string]int            // argument path -> line in origin.File
	texts      map[string]cluster.Origin // where the text of a string argument starts
	dependsOn  []string                  // configuration addresses
	dir        string                    // the module directory, for relative paths
	manifestAt *textAt                   // kubernetes_manifest written as yamldecode(text)
	// flat is set for resources read from a plan: the plan has no lines for the
	// arguments, every origin is the resource's.
	flat bool
	// keyLines maps, for a string argument built with yamlencode({...}), the key
	// paths of the encoded object to their lines.
	keyLines map[string]map[string]int
	x        extras
	// conditional is the count or for_each expression, not known, that decides
	// whether the instance exists (its own or its module's); "" when it does.
	conditional string
	// input is the module input a module creates the instance from, if any.
	input *cluster.ModuleInput
	// execs are the local-exec provisioners of a null_resource or
	// terraform_data, read.
	execs []*execRun
}

// textAt is a text and where it starts.
type textAt struct {
	text   string
	origin cluster.Origin
}

// extras carries what a terraform-aws-eks module does beyond the resources' own
// arguments: node labels and taints from user data, entries EKS or the module add by
// themselves, origins of module inputs.
type extras struct {
	labels        map[string]string
	taints        []corev1.Taint
	instanceTypes []string
	amiType       string
	implicit      bool
	mapOrigins    []cluster.Origin
	configRaw     string
	nodeRole      string
	authDefaulted bool
	unknownFields []string
	// disk is the node group's ephemeral storage volume in bytes (0 the AMI
	// default, -1 not known), when a module decides it (diskSet).
	disk    int64
	diskSet bool
	// autoFrom names the module input EKS Auto Mode comes from, autoInput
	// the argument; autoIgnored what of it the module drops.
	autoFrom, autoInput, autoIgnored string
}

// at returns the origin of an argument path, falling back to the closest parent.
func (r *resInst) at(path string) cluster.Origin {
	org := r.origin
	for p := path; p != ""; {
		if l, ok := r.lines[p]; ok {
			org.Line = l
			return org
		}
		i := lastDot(p)
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return org
}

func lastDot(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return i
		}
	}
	return -1
}

// textOrigin returns where the text of a string argument starts.
func (r *resInst) textOrigin(path string) cluster.Origin {
	if o, ok := r.texts[path]; ok {
		return o
	}
	return r.at(path)
}

func newResInst(addr, mode, typ, name string, origin cluster.Origin) *resInst {
	return &resInst{
		addr: addr, mode: mode, typ: typ, name: name, origin: origin,
		vals: map[string]any{}, unknown: map[string]bool{}, lines: map[string]int{}, texts: map[string]cluster.Origin{},
	}
}

// skipArgs are the meta-arguments of resource blocks.
var skipArgs = map[string]bool{"count": true, "for_each": true, "depends_on": true, "provider": true}
var skipBlocks = map[string]bool{"lifecycle": true, "provisioner": true, "connection": true, "precondition": true, "postcondition": true}

// resourceInstances expands a resource or data block into its instances with
// evaluated arguments.
func (m *modInst) resourceInstances(b *hclsyntax.Block) []*resInst {
	l := m.l
	keys, countText, known := m.expand(b)
	typ, name := b.Labels[0], b.Labels[1]
	mode, base := "managed", typ+"."+name
	if b.Type == "data" {
		mode, base = "data", "data."+base
	}
	deps := append(append([]string(nil), m.dependsOn...), m.addresses(blockAttr(b, "depends_on"))...)
	var out []*resInst
	for _, k := range keys {
		r := newResInst(m.prefix+base+k.suffix, mode, typ, name, originOf(b.DefRange()))
		r.dependsOn = dedupe(deps)
		r.dir = l.root
		if !known {
			r.unknown["count"] = true
			r.conditional = countText
		}
		if r.conditional == "" {
			r.conditional = m.conditional
		}
		c := k.ctx(m)
		l.evalBody(b.Body, c, r.vals, "", r)
		if commandResources[typ] && mode == "managed" {
			r.execs = m.localExecs(b, c, r)
		}
		switch typ {
		case "kubernetes_manifest":
			r.manifestAt = m.manifestText(blockAttr(b, "manifest"), c)
			kl := map[string]int{}
			keyLines(blockAttr(b, "manifest"), "", kl, 0)
			for p, line := range kl {
				r.lines["manifest."+p] = line
			}
		case "helm_release":
			if t, ok := blockAttr(b, "values").(*hclsyntax.TupleConsExpr); ok {
				for i, e := range t.Exprs {
					if call, ok := e.(*hclsyntax.FunctionCallExpr); ok && (call.Name == "yamlencode" || call.Name == "jsonencode") {
						kl := map[string]int{}
						keyLines(call, "", kl, 0)
						if r.keyLines == nil {
							r.keyLines = map[string]map[string]int{}
						}
						r.keyLines["values."+strconv.Itoa(i)] = kl
					}
				}
			}
		}
		out = append(out, r)
	}
	return out
}

// evalBody evaluates the arguments and nested blocks of a body into vals.
func (l *loader) evalBody(body *hclsyntax.Body, c *evalCtx, vals map[string]any, path string, r *resInst) {
	join := func(name string) string {
		if path == "" {
			return name
		}
		return path + "." + name
	}
	for _, name := range sortedKeys(body.Attributes) {
		if path == "" && skipArgs[name] {
			continue
		}
		a := body.Attributes[name]
		p := join(name)
		v, err := l.eval(a.Expr, c)
		if err != nil {
			l.evalNote(err, r.addr+"."+p)
			r.unknown[p] = true
		}
		if !v.IsKnown() {
			r.unknown[p] = true
		}
		vals[name] = toGo(v, l.text(a.Expr.Range()))
		r.lines[p] = a.SrcRange.Start.Line
		l.recordTexts(r, p, v, a.Expr)
		// Lists and objects written in place keep the lines of their elements
		// (set = [{...}], data = { mapRoles = yamlencode([...]) }).
		kl := map[string]int{}
		keyLines(a.Expr, "", kl, 0)
		for k, line := range kl {
			if _, ok := r.lines[p+"."+k]; !ok {
				r.lines[p+"."+k] = line
			}
		}
	}
	counts := map[string]int{}
	for _, nb := range body.Blocks {
		if skipBlocks[nb.Type] {
			continue
		}
		if nb.Type == "dynamic" && len(nb.Labels) == 1 {
			l.evalDynamic(nb, c, vals, path, r, counts)
			continue
		}
		l.appendBlock(nb.Type, nb.Body, c, vals, path, r, counts, nb.DefRange())
	}
}

func (l *loader) appendBlock(typ string, body *hclsyntax.Body, c *evalCtx, vals map[string]any, path string, r *resInst, counts map[string]int, rng hcl.Range) {
	p := typ
	if path != "" {
		p = path + "." + typ
	}
	i := counts[typ]
	counts[typ]++
	sub := map[string]any{}
	ip := p + "." + strconv.Itoa(i)
	r.lines[ip] = rng.Start.Line
	if _, ok := r.lines[p]; !ok {
		r.lines[p] = rng.Start.Line
	}
	l.evalBody(body, c, sub, ip, r)
	list, _ := vals[typ].([]any)
	vals[typ] = append(list, sub)
}

// evalDynamic expands a dynamic block when its for_each is known.
//
// It does not use hcl/v2/ext/dynblock, which expands blocks for HCL's own evaluator:
// dynblock.Expand evaluates for_each with an hcl.EvalContext (this loader resolves
// var, local, module and resource references itself, lazily, with budgets, and keeps
// the text of unknowns as marks no EvalContext holds), and the body it returns wraps
// the content's expressions in its own types that bind the iterator through an
// EvalContext; the evaluator here reads hclsyntax nodes and would see those as
// expressions it cannot evaluate. With an unknown for_each dynblock makes one block
// of unknowns, where the argument must instead be said unknown as a whole (r.unknown)
// with no block guessed. Each block also keeps the dynamic block's line as its origin.
func (l *loader) evalDynamic(b *hclsyntax.Block, c *evalCtx, vals map[string]any, path string, r *resInst, counts map[string]int) {
	label := b.Labels[0]
	p := label
	if path != "" {
		p = path + "." + label
	}
	iter := label
	if e := blockAttr(b, "iterator"); e != nil {
		if t, diags := hcl.AbsTraversalForExpr(e); !diags.HasErrors() && len(t) == 1 {
			iter = t.RootName()
		}
	}
	var content *hclsyntax.Block
	for _, nb := range b.Body.Blocks {
		if nb.Type == "content" {
			content = nb
		}
	}
	if content == nil {
		return
	}
	coll, err := l.eval(blockAttr(b, "for_each"), c)
	if err != nil {
		l.evalNote(err, r.addr+"."+p)
	}
	if !coll.IsKnown() || err != nil {
		r.unknown[p] = true
		return
	}
	coll = unmark(coll)
	if coll.IsNull() || !(isSeq(coll.Type()) || isMapLike(coll.Type())) || coll.LengthInt() > maxElements {
		r.unknown[p] = true
		return
	}
	for it := coll.ElementIterator(); it.Next(); {
		k, v := it.Element()
		obj := cty.ObjectVal(map[string]cty.Value{"key": k, "value": v})
		l.appendBlock(label, content.Body, c.bind(iter, obj), vals, path, r, counts, b.DefRange())
	}
}

// recordTexts remembers where the text of string arguments starts: the heredoc, the
// file read, or the argument itself.
func (l *loader) recordTexts(r *resInst, path string, v cty.Value, expr hcl.Expression) {
	if !v.IsKnown() {
		return
	}
	v = unmark(v)
	if v.IsNull() {
		return
	}
	if v.Type() == cty.String {
		r.texts[path] = l.textOrigin(v.AsString(), expr)
		return
	}
	if isMapLike(v.Type()) {
		if obj, ok := expr.(*hclsyntax.ObjectConsExpr); ok {
			for _, item := range obj.Items {
				k, ok := staticKey(item.KeyExpr)
				if !ok || !v.Type().HasAttribute(k) && !(v.Type().IsMapType() && v.HasIndex(cty.StringVal(k)).True()) {
					continue
				}
				var e cty.Value
				if v.Type().IsObjectType() {
					e = v.GetAttr(k)
				} else {
					e = v.Index(cty.StringVal(k))
				}
				if e.IsKnown() && !unmark(e).IsNull() && unmark(e).Type() == cty.String {
					r.texts[path+"."+k] = l.textOrigin(unmark(e).AsString(), item.ValueExpr)
				}
			}
		}
		return
	}
	if !isSeq(v.Type()) {
		return
	}
	tuple, _ := expr.(*hclsyntax.TupleConsExpr)
	for i, e := range elements(v) {
		if !e.IsKnown() {
			continue
		}
		e = unmark(e)
		if e.IsNull() || e.Type() != cty.String {
			continue
		}
		var ex hcl.Expression = expr
		if tuple != nil && i < len(tuple.Exprs) {
			ex = tuple.Exprs[i]
		}
		r.texts[path+"."+strconv.Itoa(i)] = l.textOrigin(e.AsString(), ex)
		if tuple != nil && i < len(tuple.Exprs) {
			r.lines[path+"."+strconv.Itoa(i)] = ex.Range().Start.Line
		}
	}
}

// textOrigin returns where a string value's text starts: the file or heredoc it was
// read from, else the expression that produced it.
func (l *loader) textOrigin(s string, expr hcl.Expression) cluster.Origin {
	if o, ok := l.texts[s]; ok {
		return o
	}
	rng := expr.Range()
	src := l.files[rng.Filename]
	line := rng.Start.Line
	if rng.Start.Byte >= 0 && rng.Start.Byte+2 <= len(src) && string(src[rng.Start.Byte:rng.Start.Byte+2]) == "<<" {
		line++
	}
	return cluster.Origin{File: rng.Filename, Line: line}
}

// manifestText returns the YAML or JSON text of a kubernetes_manifest written as
// yamldecode(text) or jsondecode(text), so that its objects keep their lines.
func (m *modInst) manifestText(expr hcl.Expression, c *evalCtx) *textAt {
	call, ok := expr.(*hclsyntax.FunctionCallExpr)
	if !ok || (call.Name != "yamldecode" && call.Name != "jsondecode") || len(call.Args) != 1 {
		return nil
	}
	v, err := m.l.eval(call.Args[0], c)
	if err != nil || !v.IsKnown() {
		return nil
	}
	v = unmark(v)
	if v.IsNull() || v.Type() != cty.String {
		return nil
	}
	return &textAt{text: v.AsString(), origin: m.l.textOrigin(v.AsString(), call.Args[0])}
}

// keyLines maps the key paths of an object constructor to their lines, to point values
// written as HCL objects (kubernetes_manifest, yamlencode'd Helm values) at their
// lines.
func keyLines(expr hcl.Expression, prefix string, out map[string]int, depth int) {
	if depth > 12 {
		return
	}
	switch e := expr.(type) {
	case *hclsyntax.ObjectConsExpr:
		for _, item := range e.Items {
			k, ok := staticKey(item.KeyExpr)
			if !ok {
				continue
			}
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			out[p] = item.KeyExpr.Range().Start.Line
			keyLines(item.ValueExpr, p, out, depth+1)
		}
	case *hclsyntax.TupleConsExpr:
		for i, x := range e.Exprs {
			p := strconv.Itoa(i)
			if prefix != "" {
				p = prefix + "." + p
			}
			out[p] = x.Range().Start.Line
			keyLines(x, p, out, depth+1)
		}
	case *hclsyntax.FunctionCallExpr:
		if (e.Name == "yamlencode" || e.Name == "jsonencode") && len(e.Args) == 1 {
			keyLines(e.Args[0], prefix, out, depth+1)
		}
	case *hclsyntax.ParenthesesExpr:
		keyLines(e.Expression, prefix, out, depth+1)
	}
}

// staticKey returns an object key that needs no evaluation.
func staticKey(e hcl.Expression) (string, bool) {
	if k, ok := e.(*hclsyntax.ObjectConsKeyExpr); ok {
		if s, ok := literalKey(k); ok {
			return s, true
		}
		return literalString(k.Wrapped)
	}
	return literalString(e)
}

// itemLine finds where a key of a map-valued argument is written, following local
// values and merge() so that, for example, a node group defined in a local points at
// its line.
func (m *modInst) itemLine(expr hcl.Expression, key string, depth int) (hcl.Range, bool) {
	if expr == nil || depth > 8 {
		return hcl.Range{}, false
	}
	switch e := expr.(type) {
	case *hclsyntax.ObjectConsExpr:
		for _, item := range e.Items {
			if k, ok := staticKey(item.KeyExpr); ok && k == key {
				return item.KeyExpr.Range(), true
			}
		}
	case *hclsyntax.ScopeTraversalExpr:
		if e.Traversal.RootName() == "local" && len(e.Traversal) == 2 {
			if a, ok := e.Traversal[1].(hcl.TraverseAttr); ok {
				if la, ok := m.cfg.locals[a.Name]; ok {
					return m.itemLine(la.Expr, key, depth+1)
				}
			}
		}
	case *hclsyntax.FunctionCallExpr:
		if e.Name == "merge" {
			for i := len(e.Args) - 1; i >= 0; i-- {
				if rng, ok := m.itemLine(e.Args[i], key, depth+1); ok {
					return rng, true
				}
			}
		}
	case *hclsyntax.ParenthesesExpr:
		return m.itemLine(e.Expression, key, depth+1)
	}
	return hcl.Range{}, false
}

// setName names a resource a module creates: name_prefix, to which AWS appends
// a random suffix, when the module's use-prefix input says so (its default),
// else the exact name.
func (r *resInst) setName(name string, prefix bool) {
	if prefix {
		r.vals["name_prefix"] = name + "-"
	} else {
		r.vals["name"] = name
	}
}
