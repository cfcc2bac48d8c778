package terraform

import (
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// reservedRoots are reference roots that are not resources.
var reservedRoots = map[string]bool{
	"var": true, "local": true, "module": true, "data": true, "path": true,
	"terraform": true, "count": true, "each": true, "self": true,
}

// declared returns the configuration addresses declared in a module (without the
// module prefix): "helm_release.karpenter", "data.aws_iam_policy_document.x",
// "module.eks".
func (cfg *modConfig) declared() map[string]bool {
	out := map[string]bool{}
	for _, b := range cfg.resources {
		if b.Type == "data" {
			out["data."+b.Labels[0]+"."+b.Labels[1]] = true
		} else {
			out[b.Labels[0]+"."+b.Labels[1]] = true
		}
	}
	for _, b := range cfg.modules {
		out["module."+b.Labels[0]] = true
	}
	return out
}

// traversalAddress returns the configuration address a reference points into, without
// the module prefix; "" for references that are not to resources or module calls.
func traversalAddress(t hcl.Traversal) string {
	name := func(i int) string {
		if len(t) <= i {
			return ""
		}
		if a, ok := t[i].(hcl.TraverseAttr); ok {
			return a.Name
		}
		return ""
	}
	root := t.RootName()
	switch root {
	case "module":
		if n := name(1); n != "" {
			return "module." + n
		}
	case "data":
		if a, b := name(1), name(2); a != "" && b != "" {
			return "data." + a + "." + b
		}
	default:
		if reservedRoots[root] {
			return ""
		}
		if n := name(1); n != "" {
			return root + "." + n
		}
	}
	return ""
}

// refOutputs records, per module call an expression refers to, the outputs it
// reads; "" for a reference to the call as a whole (or through an input whose
// outputs are not known).
type refOutputs map[string]map[string]bool

func (o refOutputs) add(call, output string) {
	if o == nil {
		return
	}
	if o[call] == nil {
		o[call] = map[string]bool{}
	}
	o[call][output] = true
}

// lists returns the outputs read per call, sorted; nil when none.
func (o refOutputs) lists() map[string][]string {
	if len(o) == 0 {
		return nil
	}
	out := map[string][]string{}
	for call, set := range o {
		out[call] = sortedKeys(set)
	}
	return out
}

// refs returns the addresses an expression depends on, as graph keys: resources, data
// sources and module calls, following local values and, inside a module, the caller's
// inputs.
func (m *modInst) refs(expr hcl.Expression) []string {
	r, _ := m.refsAndOutputs(expr)
	return r
}

// refsAndOutputs is refs with the outputs of module calls the expression reads.
func (m *modInst) refsAndOutputs(expr hcl.Expression) ([]string, refOutputs) {
	if expr == nil {
		return nil, nil
	}
	set := map[string]bool{}
	outs := refOutputs{}
	m.collectRefs(expr, set, outs, map[string]bool{})
	return sortedKeys(set), outs
}

// outputName returns the output a reference to a module call reads
// ("cluster_name" of module.eks.cluster_name or module.eks["a"].cluster_name);
// "" when it reads the call as a whole.
func outputName(t hcl.Traversal) string {
	for _, step := range t[2:] {
		switch s := step.(type) {
		case hcl.TraverseAttr:
			return s.Name
		case hcl.TraverseIndex:
			continue
		}
		return ""
	}
	return ""
}

func (m *modInst) collectRefs(expr hcl.Expression, set map[string]bool, outs refOutputs, visiting map[string]bool) {
	declared := m.declaredSet()
	for _, t := range expr.Variables() {
		switch t.RootName() {
		case "local":
			if len(t) < 2 {
				continue
			}
			a, ok := t[1].(hcl.TraverseAttr)
			if !ok || visiting[a.Name] {
				continue
			}
			if l, ok := m.cfg.locals[a.Name]; ok {
				visiting[a.Name] = true
				m.collectRefs(l.Expr, set, outs, visiting)
			}
		case "var":
			if len(t) < 2 {
				continue
			}
			if a, ok := t[1].(hcl.TraverseAttr); ok {
				for _, r := range m.inputRefs[a.Name] {
					set[r] = true
					if !isCallAddress(r) {
						continue
					}
					if known := m.inputOutputs[a.Name][r]; known != nil {
						for o := range known {
							outs.add(r, o)
						}
					} else {
						outs.add(r, "")
					}
				}
			}
		default:
			if addr := traversalAddress(t); addr != "" && declared[addr] {
				set[m.cfgPrefix+addr] = true
				if t.RootName() == "module" {
					outs.add(m.cfgPrefix+addr, outputName(t))
				}
			}
		}
	}
}

// isCallAddress reports whether a configuration address is a module call's
// ("module.a", "module.a.module.b").
func isCallAddress(addr string) bool {
	parts := strings.Split(addr, ".")
	return len(parts) >= 2 && parts[len(parts)-2] == "module"
}

func (m *modInst) declaredSet() map[string]bool {
	if m.declaredCache == nil {
		m.declaredCache = m.cfg.declared()
	}
	return m.declaredCache
}

// bodyRefs returns the addresses referenced anywhere in a block body.
func (m *modInst) bodyRefs(body *hclsyntax.Body, skip map[string]bool) ([]string, map[string][]string) {
	set := map[string]bool{}
	outs := refOutputs{}
	var walk func(b *hclsyntax.Body)
	walk = func(b *hclsyntax.Body) {
		for name, a := range b.Attributes {
			if skip[name] {
				continue
			}
			m.collectRefs(a.Expr, set, outs, map[string]bool{})
		}
		for _, nb := range b.Blocks {
			if nb.Type == "lifecycle" || nb.Type == "provisioner" || nb.Type == "connection" {
				continue
			}
			walk(nb.Body)
		}
	}
	walk(body)
	return sortedKeys(set), outs.lists()
}

// addresses returns the addresses listed in a depends_on expression.
func (m *modInst) addresses(expr hcl.Expression) []string {
	tuple, ok := expr.(*hclsyntax.TupleConsExpr)
	if !ok {
		return nil
	}
	var out []string
	for _, e := range tuple.Exprs {
		t, diags := hcl.AbsTraversalForExpr(e)
		if diags.HasErrors() {
			m.l.problem(originOf(e.Range()), "depends_on entries must be references to resources or modules")
			continue
		}
		if addr := traversalAddress(t); addr != "" {
			out = append(out, m.cfgPrefix+addr)
		}
	}
	return out
}

// dependsOnAddresses is addresses without reporting entries that are not
// references (the check of the block that holds them does).
func (m *modInst) dependsOnAddresses(expr hcl.Expression) []string {
	tuple, ok := expr.(*hclsyntax.TupleConsExpr)
	if !ok {
		return nil
	}
	var out []string
	for _, e := range tuple.Exprs {
		if t, diags := hcl.AbsTraversalForExpr(e); !diags.HasErrors() {
			if addr := traversalAddress(t); addr != "" {
				out = append(out, m.cfgPrefix+addr)
			}
		}
	}
	return out
}

var (
	resourceMeta = map[string]bool{"count": true, "for_each": true, "depends_on": true, "provider": true}
	moduleMeta   = map[string]bool{"count": true, "for_each": true, "depends_on": true, "providers": true, "source": true, "version": true}
)

// graphNodes adds the module's resources, data sources and module calls to the graph.
func (m *modInst) graphNodes(g *cluster.Graph) {
	l := m.l
	for _, b := range m.cfg.resources {
		typ, name := b.Labels[0], b.Labels[1]
		addr, rtype := typ+"."+name, typ
		if b.Type == "data" {
			addr, rtype = "data."+addr, "data."+typ
		}
		refs, outs := m.bodyRefs(b.Body, map[string]bool{"depends_on": true})
		r := &cluster.Resource{
			Address:    m.cfgPrefix + addr,
			Type:       rtype,
			Name:       name,
			DependsOn:  dedupe(append(append([]string(nil), m.dependsOn...), m.addresses(blockAttr(b, "depends_on"))...)),
			Refs:       refs,
			RefOutputs: outs,
			Origin:     originOf(b.DefRange()),
			Attrs:      m.scalarAttrs(b, resourceMeta),
		}
		if e := blockAttr(b, "count"); e != nil {
			r.Count = l.text(e.Range())
		} else if e := blockAttr(b, "for_each"); e != nil {
			r.Count = l.text(e.Range())
		}
		r.Keys = m.instanceKeys(b)
		g.Add(r)
	}
	for _, call := range m.callList {
		if mc := m.writtenCall(call); mc != nil {
			g.Modules = append(g.Modules, mc)
		}
		b := call.block
		refs, outs := m.bodyRefs(b.Body, map[string]bool{"depends_on": true, "source": true, "version": true})
		r := &cluster.Resource{
			Address:    m.cfgPrefix + "module." + call.name,
			Type:       "module",
			Name:       call.name,
			Source:     call.source,
			Version:    call.version,
			DependsOn:  dedupe(append(append([]string(nil), m.dependsOn...), m.addresses(blockAttr(b, "depends_on"))...)),
			Refs:       refs,
			RefOutputs: outs,
			Origin:     originOf(b.DefRange()),
			Attrs:      m.scalarAttrs(b, moduleMeta),
		}
		if e := blockAttr(b, "count"); e != nil {
			r.Count = l.text(e.Range())
		} else if e := blockAttr(b, "for_each"); e != nil {
			r.Count = l.text(e.Range())
		}
		// Depending on a local module means depending on everything in it;
		// reading one of its outputs, on what the output refers to.
		local := false
		for _, ci := range call.instances() {
			if ci.child == nil {
				continue
			}
			local = true
			for addr := range ci.child.declaredSet() {
				r.Refs = append(r.Refs, ci.child.cfgPrefix+addr)
			}
			if r.Outputs == nil {
				r.Outputs = map[string][]string{}
			}
			for name, ob := range ci.child.cfg.outputs {
				deps := append(ci.child.refs(blockAttr(ob, "value")), ci.child.dependsOnAddresses(blockAttr(ob, "depends_on"))...)
				r.Outputs[name] = dedupe(append(r.Outputs[name], deps...))
			}
		}
		r.Refs = dedupe(r.Refs)
		if !local {
			r.Parts, r.Outputs = modelledParts(call, r.Address)
		}
		g.Add(r)
	}
}

// scalarAttrs evaluates the top-level arguments of a block whose values are scalars or
// short lists of scalars: what teardown and ordering checks look at (wait, apply_only,
// force_new, chart, namespace, ...).
func (m *modInst) scalarAttrs(b *hclsyntax.Block, skip map[string]bool) map[string]any {
	l := m.l
	c := &evalCtx{m: m}
	if blockAttr(b, "count") != nil {
		c.count = unknownIn("count.index", m.prefix)
	}
	if blockAttr(b, "for_each") != nil {
		c.eachKey, c.eachVal = unknownIn("each.key", m.prefix), unknownIn("each.value", m.prefix)
	}
	out := map[string]any{}
	for _, name := range sortedKeys(b.Body.Attributes) {
		if skip[name] || secretArg(name) {
			continue
		}
		a := b.Body.Attributes[name]
		v, _ := l.eval(a.Expr, c)
		if g, ok := scalarGo(v, l.text(a.Expr.Range())); ok {
			out[name] = g
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// secretArg tells arguments that hold credentials, which the graph does not copy.
func secretArg(name string) bool {
	for _, w := range []string{"password", "token", "secret", "private_key", "kubeconfig"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

func scalarGo(v cty.Value, text string) (any, bool) {
	if !v.IsKnown() {
		return placeholder(v, text), true
	}
	u := unmark(v)
	if u.IsNull() {
		return nil, false
	}
	ty := u.Type()
	switch {
	case ty == cty.String:
		s := u.AsString()
		if len(s) > 512 || strings.Contains(s, "\n") {
			return nil, false
		}
		return s, true
	case ty == cty.Number || ty == cty.Bool:
		return toGo(u, text), true
	case isSeq(ty):
		if u.LengthInt() > 32 {
			return nil, false
		}
		var out []any
		for _, e := range elements(u) {
			g, ok := scalarGo(e, text)
			if !ok {
				return nil, false
			}
			out = append(out, g)
		}
		if out == nil {
			out = []any{}
		}
		return out, true
	}
	return nil, false
}

func dedupe(in []string) []string {
	if len(in) == 0 {
		return nil
	}
	sort.Strings(in)
	out := in[:1]
	for _, s := range in[1:] {
		if s != out[len(out)-1] {
			out = append(out, s)
		}
	}
	return out
}

// ConfigAddress returns the configuration address of a resource instance address:
// instance keys are dropped ("module.x[0].helm_release.y[\"a\"]" becomes
// "module.x.helm_release.y"). Graph nodes are keyed by configuration address.
func ConfigAddress(addr string) string {
	var b strings.Builder
	depth := 0
	inString := false
	for i := 0; i < len(addr); i++ {
		ch := addr[i]
		switch {
		case inString:
			if ch == '\\' {
				i++
			} else if ch == '"' {
				inString = false
			}
		case ch == '"' && depth > 0:
			inString = true
		case ch == '[':
			depth++
		case ch == ']':
			if depth > 0 {
				depth--
			}
		case depth == 0:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

// graphNode returns the graph node that stands for a model entry's address: the
// entry's own resource, or the module call that creates it ("module.eks" for a node
// group the terraform-aws-eks module creates); "" when none does.
func graphNode(g *cluster.Graph, addr string) string {
	if g == nil {
		return ""
	}
	a := ConfigAddress(addr)
	for a != "" {
		if _, ok := g.Nodes[a]; ok {
			return a
		}
		a = enclosingModule(a)
	}
	return ""
}

// enclosingModule returns the module call an address belongs to: "module.a.module.b"
// for "module.a.module.b.aws_iam_role.x", "module.a" for "module.a.module.b", "" at the
// root.
func enclosingModule(addr string) string {
	parts := strings.Split(addr, ".")
	last := -1
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == "module" {
			last = i
			i++
		}
	}
	if last < 0 {
		return ""
	}
	if last+2 == len(parts) {
		return strings.Join(parts[:last], ".")
	}
	return strings.Join(parts[:last+2], ".")
}
