package terraform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	tfjson "github.com/hashicorp/terraform-json"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/textpos"
)

// IsPlanJSON reports whether data is the JSON form of a Terraform plan, as written by
// terraform show -json.
func IsPlanJSON(data []byte) bool {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return false
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &top); err != nil {
		return false
	}
	if _, ok := top["format_version"]; !ok {
		return false
	}
	for _, k := range []string{"planned_values", "resource_changes", "configuration"} {
		if _, ok := top[k]; ok {
			return true
		}
	}
	return false
}

// LoadPlan reads the JSON form of a Terraform plan (file names it, data is its
// content) into the same partial model Load builds from the configuration: resource
// values come from planned_values, module calls, expressions and depends_on from
// configuration. A plan knows values that configuration cannot (data sources, module
// internals) and lacks some a configuration shows (what depends on unknown values is
// absent); unknown values are placeholders as in Load. The error is only for data that
// is not a plan at all; a plan that does not decode becomes a Problem.
func LoadPlan(file string, data []byte) (model *cluster.Model, err error) {
	defer func() {
		// A plan is untrusted input: whatever escapes becomes a problem, not a crash.
		if r := recover(); r != nil {
			model = &cluster.Model{Problems: []cluster.Problem{{
				Origin:  cluster.Origin{File: file},
				Message: fmt.Sprintf("the plan could not be analysed: %v", r),
			}}}
			err = nil
		}
	}()
	if !json.Valid(data) {
		return &cluster.Model{Problems: []cluster.Problem{{
			Origin:  cluster.Origin{File: file, Line: jsonErrorLine(data)},
			Message: "plan JSON syntax error",
		}}}, nil
	}
	var plan tfjson.Plan
	if err := json.Unmarshal(data, &plan); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return &cluster.Model{Problems: []cluster.Problem{{Origin: cluster.Origin{File: file, Line: textpos.Line(data, syn.Offset)}, Message: "plan JSON syntax error: " + err.Error()}}}, nil
		}
		if !IsPlanJSON(data) {
			return nil, fmt.Errorf("read plan %s: %w", file, err)
		}
		return &cluster.Model{Problems: []cluster.Problem{{Origin: cluster.Origin{File: file, Line: 1}, Message: "unsupported plan: " + err.Error()}}}, nil
	}
	p := &planLoader{file: file, data: data, plan: &plan, lines: addressLines(data), b: newBuilder(nil), changes: map[string]*tfjson.ResourceChange{}}
	for _, rc := range plan.ResourceChanges {
		if rc != nil {
			p.changes[rc.Address] = rc
		}
	}
	p.load()
	return p.b.m, nil
}

type planLoader struct {
	file    string
	data    []byte
	plan    *tfjson.Plan
	lines   map[string]int
	b       *builder
	changes map[string]*tfjson.ResourceChange
	// planned lists the module instance addresses that have planned resources.
	planned map[string]bool
	// configs maps a configuration address prefix ("module.eks.") to its module.
	configs map[string]*planModule
	// byConfig maps a configuration address to its first planned instance.
	byConfig map[string]*tfjson.StateResource
	notes    []cluster.Note
}

// planModule is a module of the configuration with the caller's view of it.
type planModule struct {
	cfg    *tfjson.ConfigModule
	prefix string
}

func (p *planLoader) origin(addr string) cluster.Origin {
	if l, ok := p.lines[addr]; ok {
		return cluster.Origin{File: p.file, Line: l}
	}
	if l, ok := p.lines[ConfigAddress(addr)]; ok {
		return cluster.Origin{File: p.file, Line: l}
	}
	return cluster.Origin{File: p.file, Line: 1}
}

func (p *planLoader) load() {
	p.planned = map[string]bool{}
	p.configs = map[string]*planModule{}
	var resources []*tfjson.StateResource
	if pv := p.plan.PlannedValues; pv != nil && pv.RootModule != nil {
		var walk func(m *tfjson.StateModule, depth int)
		walk = func(m *tfjson.StateModule, depth int) {
			if m == nil || depth > 32 {
				return
			}
			if m.Address != "" && len(m.Resources) > 0 {
				p.planned[m.Address] = true
			}
			resources = append(resources, m.Resources...)
			for _, c := range m.ChildModules {
				walk(c, depth+1)
			}
		}
		walk(pv.RootModule, 0)
	}
	p.byConfig = map[string]*tfjson.StateResource{}
	sort.SliceStable(resources, func(i, j int) bool { return resources[i].Address < resources[j].Address })
	for _, r := range resources {
		if r == nil {
			continue
		}
		if _, ok := p.byConfig[ConfigAddress(r.Address)]; !ok {
			p.byConfig[ConfigAddress(r.Address)] = r
		}
	}
	g := cluster.NewGraph()
	g.Addressing = Addressing{}
	if c := p.plan.Config; c != nil && c.RootModule != nil {
		p.configModule(c.RootModule, "", g, 0)
	}
	p.b.m.Terraform = g
	for _, r := range resources {
		if r == nil {
			continue
		}
		p.b.add(p.instance(r))
	}
	p.b.m.Notes = append(p.b.m.Notes, p.notes...)
	p.b.finish()
}

// configModule adds a module's resources and calls to the graph and registers the
// terraform-aws-eks module calls.
func (p *planLoader) configModule(m *tfjson.ConfigModule, prefix string, g *cluster.Graph, depth int) {
	if m == nil || depth > 16 {
		return
	}
	p.configs[prefix] = &planModule{cfg: m, prefix: prefix}
	refs := planRefs{prefix: prefix, declared: map[string]bool{}}
	for _, r := range m.Resources {
		if r != nil {
			refs.declared[r.Address] = true
		}
	}
	for name := range m.ModuleCalls {
		refs.declared["module."+name] = true
	}
	for _, r := range m.Resources {
		if r == nil {
			continue
		}
		typ := r.Type
		if r.Mode == tfjson.DataResourceMode {
			typ = "data." + r.Type
		}
		node := &cluster.Resource{
			Address:   prefix + r.Address,
			Type:      typ,
			Name:      r.Name,
			DependsOn: prefixAll(prefix, r.DependsOn),
			Origin:    p.origin(prefix + r.Address),
			Attrs:     p.attrs(prefix+r.Address, r.Expressions),
			Count:     countText(r.CountExpression, r.ForEachExpression),
		}
		node.Refs, node.RefOutputs = refs.of(r.Expressions, r.CountExpression, r.ForEachExpression)
		g.Add(node)
	}
	for _, name := range sortedKeys(m.ModuleCalls) {
		if call := m.ModuleCalls[name]; call != nil {
			p.configCall(name, call, refs, g, depth)
		}
	}
}

// configCall adds the module call name of the module at refs.prefix to the
// graph: a local module with its own resources and calls (which the call
// refers to), a modelled one with the parts it creates.
func (p *planLoader) configCall(name string, call *tfjson.ModuleCall, refs planRefs, g *cluster.Graph, depth int) {
	addr := refs.prefix + "module." + name
	node := &cluster.Resource{
		Address:   addr,
		Type:      "module",
		Name:      name,
		Source:    call.Source,
		Version:   call.VersionConstraint,
		DependsOn: prefixAll(refs.prefix, call.DependsOn),
		Origin:    p.origin(addr),
		Attrs:     constantAttrs(call.Expressions),
		Count:     countText(call.CountExpression, call.ForEachExpression),
	}
	node.Refs, node.RefOutputs = refs.of(call.Expressions, call.CountExpression, call.ForEachExpression)
	kind, major, from := p.classify(call)
	if kind != kindLocal {
		node.Parts, node.Outputs = modelledParts(&moduleCall{kind: kind, source: call.Source, version: call.VersionConstraint, declaredMajor: majorOf(call.VersionConstraint)}, addr)
	}
	if kind == kindLocal && call.Module != nil {
		for _, r := range call.Module.Resources {
			if r != nil {
				node.Refs = append(node.Refs, addr+"."+r.Address)
			}
		}
		for child := range call.Module.ModuleCalls {
			node.Refs = append(node.Refs, addr+".module."+child)
		}
		node.Refs = dedupe(node.Refs)
	}
	g.Add(node)
	switch {
	case kind == kindLocal:
		p.configModule(call.Module, addr+".", g, depth+1)
	case kind >= kindEKS:
		p.semantic(addr, call, kind, major, from)
	}
}

// planRefs finds, in a module's expressions, the references to what the
// module declares (declared, by address within the module), as addresses
// that start with prefix.
type planRefs struct {
	prefix   string
	declared map[string]bool
}

// of gives the sorted addresses exprs and extra refer to, and the outputs
// read of each module call they refer to ("" for the whole module).
func (pr planRefs) of(exprs map[string]*tfjson.Expression, extra ...*tfjson.Expression) ([]string, map[string][]string) {
	set := map[string]bool{}
	outs := refOutputs{}
	for _, e := range exprs {
		pr.visit(e, set, outs)
	}
	for _, e := range extra {
		pr.visit(e, set, outs)
	}
	return sortedKeys(set), outs.lists()
}

func (pr planRefs) visit(e *tfjson.Expression, set map[string]bool, outs refOutputs) {
	if e == nil || e.ExpressionData == nil {
		return
	}
	// A reference to an output is listed with the bare call after it
	// ("module.eks.cluster_name", "module.eks"): the bare call reads
	// the whole module only when no output of it is listed.
	named := map[string]bool{}
	for _, ref := range e.References {
		if a := refAddress(ref); a != "" && pr.declared[a] && strings.HasPrefix(a, "module.") {
			if o := refOutput(ref); o != "" {
				named[a] = true
				outs.add(pr.prefix+a, o)
			}
		}
	}
	for _, ref := range e.References {
		if a := refAddress(ref); a != "" && pr.declared[a] {
			set[pr.prefix+a] = true
			if strings.HasPrefix(a, "module.") && !named[a] && refOutput(ref) == "" {
				outs.add(pr.prefix+a, "")
			}
		}
	}
	for _, nb := range e.NestedBlocks {
		for _, x := range nb {
			pr.visit(x, set, outs)
		}
	}
}

// classify decides what a module call of the plan's configuration is, from its source
// and version, and from the variables the called module declares.
func (p *planLoader) classify(call *tfjson.ModuleCall) (moduleKind, int, string) {
	src := call.Source
	kind, major, from := kindOpaque, 0, ""
	if mm := registryRE.FindStringSubmatch(src); mm != nil {
		kind = kindEKS
		if mm[1] != "" {
			kind = subModuleKind(mm[1])
		}
		if call.VersionConstraint != "" {
			major, from = majorOf(call.VersionConstraint), "version "+call.VersionConstraint
		}
	} else if mm := gitRE.FindStringSubmatch(src); mm != nil {
		kind = kindEKS
		if mm[1] != "" {
			kind = subModuleKind(mm[1])
		}
		if r := refRE.FindStringSubmatch(mm[2]); r != nil {
			major, from = majorOf(r[1]), "ref "+r[1]
		}
	} else if isLocalSource(src) {
		kind = kindLocal
		if call.Module != nil {
			cfg := &modConfig{variables: map[string]*hclsyntax.Block{}}
			for v := range call.Module.Variables {
				cfg.variables[v] = nil
			}
			if k, mj := signature(cfg); k != kindOpaque {
				kind, major, from = k, mj, "the variables the module declares"
			}
		}
		base := filepath.ToSlash(src)
		if kind == kindLocal && strings.Contains(base, "modules/") && (call.Module == nil || len(call.Module.Resources) == 0 && len(call.Module.ModuleCalls) == 0) {
			if k := subModuleKind(base[strings.LastIndex(base, "/")+1:]); k != kindOpaque {
				kind = k
			}
		}
	}
	if kind >= kindEKS && major == 0 && call.Module != nil {
		cfg := &modConfig{variables: map[string]*hclsyntax.Block{}}
		for v := range call.Module.Variables {
			cfg.variables[v] = nil
		}
		if _, mj := signature(cfg); mj != 0 {
			major, from = mj, "the variables the module declares"
		}
	}
	if kind >= kindEKS && major == 0 {
		cands := []int{19, 20, 21}
		for name := range call.Expressions {
			if vs, ok := versionMarkers[kind][name]; ok {
				if next := intersect(cands, vs); len(next) > 0 {
					cands = next
				}
			}
		}
		major, from = cands[len(cands)-1], "assumed: the newest version the inputs allow"
	}
	if major != 0 {
		major = min(max(major, oldestMajor), newestMajor)
	}
	return kind, major, from
}

// semantic registers the planned instances of a terraform-aws-eks module call. A call
// whose module plans nothing (create = false) has no instance.
func (p *planLoader) semantic(addr string, call *tfjson.ModuleCall, kind moduleKind, major int, from string) {
	if call.VersionConstraint == "" && !strings.HasPrefix(from, "ref ") {
		p.notes = append(p.notes, cluster.Note{Origin: p.origin(addr), Subject: addr,
			Message: fmt.Sprintf("%s version is not declared; v%d semantics are used (%s)", kind, major, from)})
	}
	for _, inst := range moduleInstances(p.planned, addr) {
		s := &semModule{addr: inst, kind: kind, major: major, version: call.VersionConstraint, origin: p.origin(addr)}
		if _, ok := call.Expressions["authentication_mode"]; !ok || major <= 19 {
			s.authDefaulted = true
		}
		if kind == kindKarpenter {
			p.karpenterInfo(s, call)
		}
		p.b.sems = append(p.b.sems, s)
	}
}

// moduleInstances returns the instance addresses of the module call cfgAddr found among
// the planned module addresses (which include nested modules).
func moduleInstances(planned map[string]bool, cfgAddr string) []string {
	depth := strings.Count(cfgAddr, "module.")
	set := map[string]bool{}
	for m := range planned {
		steps := splitAddress(m)
		if len(steps) < 2*depth {
			continue
		}
		inst := strings.Join(steps[:2*depth], ".")
		if ConfigAddress(inst) == cfgAddr {
			set[inst] = true
		}
	}
	return sortedKeys(set)
}

// karpenterInfo reads what a planned karpenter module instance creates.
func (p *planLoader) karpenterInfo(s *semModule, call *tfjson.ModuleCall) {
	K := s.addr
	has := func(inner string) bool {
		for _, r := range p.plannedIn(K) {
			if r.Address == K+"."+inner {
				return true
			}
		}
		return false
	}
	if s.major <= 19 {
		if has("aws_iam_role.this[0]") {
			s.nodeRole, s.nodeRoleCreated = cluster.Unknown(K+".role_arn"), true
		}
		if has("aws_iam_role.irsa[0]") {
			s.controllerRole, s.ctrlCreated = cluster.Unknown(K+".irsa_arn"), true
		}
		sas := constantStrings(call.Expressions["irsa_namespace_service_accounts"], []string{"karpenter:karpenter"})
		if len(sas) > 0 {
			s.namespace, s.serviceAccount, _ = strings.Cut(sas[0], ":")
		}
		if s.ctrlCreated {
			p.irsa(sas, s.controllerRole, s.origin)
		}
		return
	}
	s.namespace = constantString(call.Expressions["namespace"], "kube-system")
	s.serviceAccount = constantString(call.Expressions["service_account"], "karpenter")
	for _, r := range p.plannedIn(K) {
		if r.Address == K+".aws_eks_pod_identity_association.karpenter[0]" {
			if ns := str(r.AttributeValues["namespace"]); ns != "" {
				s.namespace = ns
			}
			if sa := str(r.AttributeValues["service_account"]); sa != "" {
				s.serviceAccount = sa
			}
		}
	}
	if has("aws_iam_role.node[0]") {
		s.nodeRole, s.nodeRoleCreated = cluster.Unknown(K+".node_iam_role_arn"), true
	} else {
		s.nodeRole = constantString(call.Expressions["node_iam_role_arn"], "")
	}
	if has("aws_iam_role.controller[0]") {
		s.controllerRole, s.ctrlCreated = cluster.Unknown(K+".iam_role_arn"), true
		if enabled, ok := constantValue(call.Expressions["enable_irsa"]).(bool); ok && enabled && s.major == 20 {
			p.irsa(constantStrings(call.Expressions["irsa_namespace_service_accounts"], []string{"karpenter:karpenter"}), s.controllerRole, s.origin)
		}
	}
}

func (p *planLoader) irsa(sas []string, role string, org cluster.Origin) {
	for _, sa := range sas {
		ns, name, _ := strings.Cut(sa, ":")
		p.b.m.Identity.ServiceAccounts = append(p.b.m.Identity.ServiceAccounts, cluster.ServiceAccountIdentity{Namespace: ns, Name: name, RoleARN: role, Mechanism: "irsa", Origin: org})
	}
}

func (p *planLoader) plannedIn(prefix string) []*tfjson.StateResource {
	var out []*tfjson.StateResource
	var walk func(m *tfjson.StateModule)
	walk = func(m *tfjson.StateModule) {
		if m == nil {
			return
		}
		for _, r := range m.Resources {
			if r != nil && strings.HasPrefix(r.Address, prefix+".") {
				out = append(out, r)
			}
		}
		for _, c := range m.ChildModules {
			walk(c)
		}
	}
	if p.plan.PlannedValues != nil {
		walk(p.plan.PlannedValues.RootModule)
	}
	return out
}

// instance turns a planned resource into a resource instance. Values the plan does
// not know are absent from planned_values; those the configuration writes as a
// reference read as that reference, as in Load.
func (p *planLoader) instance(r *tfjson.StateResource) *resInst {
	mode := "managed"
	if r.Mode == tfjson.DataResourceMode {
		mode = "data"
	}
	ri := newResInst(r.Address, mode, r.Type, r.Name, p.origin(r.Address))
	ri.flat = true
	ri.dir = filepath.Dir(p.file)
	sensitive := map[string]any{}
	_ = json.Unmarshal(r.SensitiveValues, &sensitive)
	for k, v := range r.AttributeValues {
		ri.vals[k] = maskSensitive(normalizeJSON(v), sensitive[k])
	}
	cfgRes, cfgPrefix := p.configResource(r.Address)
	if rc := p.changes[r.Address]; rc != nil && rc.Change != nil {
		if au, ok := rc.Change.AfterUnknown.(map[string]any); ok {
			for k, v := range au {
				if b, ok := v.(bool); ok && b {
					ri.unknown[k] = true
					if cfgRes != nil {
						if e := cfgRes.Expressions[k]; e != nil && e.ExpressionData != nil && len(e.References) > 0 {
							ri.vals[k] = cluster.Unknown(p.refText(cfgPrefix, e.References[0]))
						}
					}
				}
			}
		}
	}
	if cfgRes != nil {
		ri.dependsOn = prefixAll(cfgPrefix, cfgRes.DependsOn)
	}
	if r.Type == "aws_eks_cluster" {
		if s, _ := p.b.sem(r.Address); s != nil {
			ri.x.authDefaulted = s.authDefaulted
		}
	}
	return ri
}

// refText renders a configuration reference made inside a module in the root's
// words.
func (p *planLoader) refText(prefix, ref string) string {
	root := strings.SplitN(ref, ".", 2)[0]
	switch root {
	case "var", "local", "each", "count", "path", "terraform", "self":
		return ref
	}
	return prefix + ref
}

// configResource finds the configuration of a planned resource instance, and the
// instance prefix of its module.
func (p *planLoader) configResource(addr string) (*tfjson.ConfigResource, string) {
	instPrefix := modulePrefixOf(addr)
	cfgPrefix := ConfigAddress(instPrefix)
	pm, ok := p.configs[cfgPrefix]
	if !ok {
		return nil, instPrefix
	}
	rel := strings.TrimPrefix(ConfigAddress(addr), cfgPrefix)
	for _, r := range pm.cfg.Resources {
		if r != nil && r.Address == rel {
			return r, instPrefix
		}
	}
	return nil, instPrefix
}

// modulePrefixOf returns the module instance prefix of a resource instance address
// (`module.x["a"].` for `module.x["a"].aws_iam_role.y`), "" at the root.
func modulePrefixOf(addr string) string {
	steps := splitAddress(addr)
	end := 0
	for i := 0; i+1 < len(steps); i++ {
		if steps[i] == "module" {
			end = i + 2
			i++
		}
	}
	if end == 0 || end >= len(steps) {
		return ""
	}
	return strings.Join(steps[:end], ".") + "."
}

// splitAddress splits an address at the dots outside instance keys.
func splitAddress(addr string) []string {
	var out []string
	depth := 0
	inStr := false
	start := 0
	for i := 0; i < len(addr); i++ {
		c := addr[i]
		switch {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
		case c == '"' && depth > 0:
			inStr = true
		case c == '[':
			depth++
		case c == ']':
			depth--
		case c == '.' && depth == 0:
			out = append(out, addr[start:i])
			start = i + 1
		}
	}
	return append(out, addr[start:])
}

// Sensitive is what a sensitive value shows in the model and in every finding.
const Sensitive = "(sensitive)"

// maskSensitive replaces the parts of a planned value that the plan's
// sensitive_values marks (true at any depth, mirroring the value's structure) with
// Sensitive.
func maskSensitive(v, mask any) any {
	switch m := mask.(type) {
	case bool:
		if m {
			return Sensitive
		}
	case map[string]any:
		if vm, ok := v.(map[string]any); ok {
			out := make(map[string]any, len(vm))
			for k, x := range vm {
				out[k] = maskSensitive(x, m[k])
			}
			return out
		}
	case []any:
		if vl, ok := v.([]any); ok {
			out := make([]any, len(vl))
			for i, x := range vl {
				var sub any
				if i < len(m) {
					sub = m[i]
				}
				out[i] = maskSensitive(x, sub)
			}
			return out
		}
	}
	return v
}

// attrs returns the graph attributes of a resource of the plan: the arguments its
// configuration sets, with the planned value where there is one.
func (p *planLoader) attrs(cfgAddr string, exprs map[string]*tfjson.Expression) map[string]any {
	var planned, sensitive map[string]any
	if r := p.byConfig[cfgAddr]; r != nil {
		planned = r.AttributeValues
		_ = json.Unmarshal(r.SensitiveValues, &sensitive)
	}
	out := map[string]any{}
	for _, k := range sortedKeys(exprs) {
		if resourceMeta[k] || secretArg(k) {
			continue
		}
		e := exprs[k]
		if e == nil || e.ExpressionData == nil || len(e.NestedBlocks) > 0 {
			continue
		}
		if b, ok := sensitive[k].(bool); ok && b {
			continue
		}
		if v, ok := planned[k]; ok && v != nil {
			v = maskSensitive(v, sensitive[k])
			if g, ok := scalarJSON(normalizeJSON(v)); ok {
				out[k] = g
			}
			continue
		}
		if len(e.References) > 0 {
			out[k] = cluster.Unknown(e.References[0])
			continue
		}
		if g, ok := scalarJSON(normalizeJSON(e.ConstantValue)); ok && e.ConstantValue != nil {
			out[k] = g
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func constantAttrs(exprs map[string]*tfjson.Expression) map[string]any {
	out := map[string]any{}
	for _, k := range sortedKeys(exprs) {
		e := exprs[k]
		if moduleMeta[k] || secretArg(k) || e == nil || e.ExpressionData == nil || len(e.NestedBlocks) > 0 {
			continue
		}
		if len(e.References) > 0 {
			out[k] = cluster.Unknown(e.References[0])
			continue
		}
		if g, ok := scalarJSON(normalizeJSON(e.ConstantValue)); ok && e.ConstantValue != nil {
			out[k] = g
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func scalarJSON(v any) (any, bool) {
	switch t := v.(type) {
	case string:
		if len(t) > 512 || strings.Contains(t, "\n") {
			return nil, false
		}
		return t, true
	case bool, int64, float64:
		return t, true
	case []any:
		if len(t) > 32 {
			return nil, false
		}
		for _, e := range t {
			if _, ok := scalarJSON(e); !ok {
				return nil, false
			}
		}
		return t, true
	}
	return nil, false
}

func constantValue(e *tfjson.Expression) any {
	if e == nil || e.ExpressionData == nil || len(e.References) > 0 {
		return nil
	}
	return e.ConstantValue
}

func constantString(e *tfjson.Expression, def string) string {
	if e == nil || e.ExpressionData == nil {
		return def
	}
	if len(e.References) > 0 {
		return cluster.Unknown(e.References[0])
	}
	if s, ok := e.ConstantValue.(string); ok {
		return s
	}
	return def
}

func constantStrings(e *tfjson.Expression, def []string) []string {
	v := constantValue(e)
	if v == nil {
		return def
	}
	return strList(v)
}

func countText(count, forEach *tfjson.Expression) string {
	for _, e := range []*tfjson.Expression{count, forEach} {
		if e == nil || e.ExpressionData == nil {
			continue
		}
		if len(e.References) > 0 {
			return strings.Join(e.References, ", ")
		}
		b, err := json.Marshal(e.ConstantValue)
		if err == nil {
			return string(b)
		}
	}
	return ""
}

func prefixAll(prefix string, addrs []string) []string {
	var out []string
	for _, a := range addrs {
		if addr := refAddress(a); addr != "" {
			out = append(out, prefix+addr)
		}
	}
	return dedupe(out)
}

// refAddress returns the address a configuration reference points into.
// refOutput is the output a reference to a module call reads, "" for none.
func refOutput(ref string) string {
	t, diags := hclsyntax.ParseTraversalAbs([]byte(ref), "", hcl.InitialPos)
	if diags.HasErrors() || t.RootName() != "module" || len(t) < 3 {
		return ""
	}
	return outputName(t)
}

func refAddress(ref string) string {
	t, diags := hclsyntax.ParseTraversalAbs([]byte(ref), "", hcl.InitialPos)
	if diags.HasErrors() {
		return ""
	}
	return traversalAddress(t)
}

// addressLines maps each "address" value of the plan JSON to the line it first
// appears on, so that model entries from a plan point into it.
func addressLines(data []byte) map[string]int {
	out := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(data))
	line := 1
	last := int64(0)
	expectAddr := false
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		off := dec.InputOffset()
		line += bytes.Count(data[last:off], []byte("\n"))
		last = off
		s, ok := tok.(string)
		if !ok {
			expectAddr = false
			continue
		}
		if expectAddr {
			if _, seen := out[s]; !seen {
				out[s] = line
			}
			expectAddr = false
			continue
		}
		expectAddr = s == "address" && dec.More()
	}
	return out
}

func jsonErrorLine(data []byte) int {
	var v any
	err := json.Unmarshal(data, &v)
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return textpos.Line(data, syn.Offset)
	}
	return 1
}
