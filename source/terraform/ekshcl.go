package terraform

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// The terraform-aws-modules/eks modules are not read from disk (their source is
// usually not there, and their internals depend on data sources): eksdoctor knows, per
// major version, which resources they create for their inputs, and synthesizes those
// resources at the addresses the module gives them, so that they become model entries
// exactly as the same resources read from a plan would.

// modIn reads a module call instance's inputs.
type modIn struct {
	ci *callInst
	m  *modInst // the caller
}

func (in modIn) get(name string) (cty.Value, bool) {
	v, ok := in.ci.input(name)
	if !ok {
		return cty.NilVal, false
	}
	if v.IsKnown() && unmark(v).IsNull() {
		return cty.NilVal, false
	}
	return v, true
}

// boolean returns an input's value, def when it is not set; an unknown value counts
// as def, and the caller is told it was unknown.
func (in modIn) boolean(name string, def bool) (bool, bool) {
	v, ok := in.get(name)
	if !ok {
		return def, true
	}
	b, known := knownBool(v)
	if !known {
		return def, false
	}
	return b, true
}

func (in modIn) str(name, def string) any {
	v, ok := in.get(name)
	if !ok {
		return def
	}
	return toGo(v, in.ci.addr+"."+name)
}

func (in modIn) origin(name string) cluster.Origin {
	if rng, ok := in.ci.call.attrRange(name); ok {
		return originOf(rng)
	}
	return originOf(in.ci.call.block.DefRange())
}

// entryOrigin returns where key is written in the map-valued input name.
func (in modIn) entryOrigin(name, key string) cluster.Origin {
	a, ok := in.ci.call.block.Body.Attributes[name]
	if !ok {
		return originOf(in.ci.call.block.DefRange())
	}
	if rng, ok := in.m.itemLine(a.Expr, key, 0); ok {
		return originOf(rng)
	}
	return originOf(a.SrcRange)
}

// entryExpr returns the expression of the value of key in the map-valued input name,
// when it is written as an object.
func (in modIn) entryExpr(name, key string) hcl.Expression {
	a, ok := in.ci.call.block.Body.Attributes[name]
	if !ok {
		return nil
	}
	return in.m.itemValue(a.Expr, key, 0)
}

// itemValue finds the value expression of a key of a map written as an object,
// following locals and merge().
func (m *modInst) itemValue(expr hcl.Expression, key string, depth int) hcl.Expression {
	if expr == nil || depth > 8 {
		return nil
	}
	switch e := expr.(type) {
	case *hclsyntax.ObjectConsExpr:
		for _, item := range e.Items {
			if k, ok := staticKey(item.KeyExpr); ok && k == key {
				return item.ValueExpr
			}
		}
	case *hclsyntax.ScopeTraversalExpr:
		if e.Traversal.RootName() == "local" && len(e.Traversal) == 2 {
			if a, ok := e.Traversal[1].(hcl.TraverseAttr); ok {
				if la, ok := m.cfg.locals[a.Name]; ok {
					return m.itemValue(la.Expr, key, depth+1)
				}
			}
		}
	case *hclsyntax.FunctionCallExpr:
		if e.Name == "merge" {
			for i := len(e.Args) - 1; i >= 0; i-- {
				if x := m.itemValue(e.Args[i], key, depth+1); x != nil {
					return x
				}
			}
		}
	case *hclsyntax.ParenthesesExpr:
		return m.itemValue(e.Expression, key, depth+1)
	}
	return nil
}

type entry struct {
	key string
	val cty.Value
	// unknown marks an entry that stands for entries not known before apply (an
	// unknown argument of merge()); its key is the expression.
	unknown bool
}

// partialEntries reads a map-valued input that is not known as a whole but is
// written as merge() of parts, some known: the entries of the known parts are
// kept (later parts win, as in merge), a for expression whose keys alone are
// unknown (keyed by a data source) gives its entries under unknown keys, and any
// other unknown part becomes one entry marked unknown. ok is false when the input
// is not written that way.
func (in modIn) partialEntries(name string) ([]entry, bool) {
	a, ok := in.ci.call.block.Body.Attributes[name]
	if !ok {
		return nil, false
	}
	m := in.m
	ctx := in.ci.key.ctx(m)
	if es, ok := m.objectEntries(a.Expr, ctx, 0); ok {
		return es, true
	}
	call := m.mergeCall(a.Expr, 0)
	if call == nil {
		return nil, false
	}
	var out []entry
	index := map[string]int{}
	add := func(e entry) {
		if i, dup := index[e.key]; dup && !e.unknown {
			out[i] = e
			return
		}
		index[e.key] = len(out)
		out = append(out, e)
	}
	for _, arg := range call.Args {
		v, err := m.l.eval(arg, ctx)
		if err == nil {
			if es, known := entries(v); known {
				for _, e := range es {
					add(e)
				}
				continue
			}
		}
		if es, ok := m.forEntriesUnknownKeys(arg, ctx); ok {
			for _, e := range es {
				add(e)
			}
			continue
		}
		add(entry{key: cluster.Unknown(m.l.source(arg.Range())), val: cty.DynamicVal, unknown: true})
	}
	return out, true
}

// objectEntries reads a map written as an object constructor (directly or through a
// local) item by item, so that an item whose key is not known before apply
// ("${local.name}-system" = {...}) keeps its known value.
func (m *modInst) objectEntries(expr hcl.Expression, c *evalCtx, depth int) ([]entry, bool) {
	if expr == nil || depth > 8 {
		return nil, false
	}
	switch e := expr.(type) {
	case *hclsyntax.ParenthesesExpr:
		return m.objectEntries(e.Expression, c, depth+1)
	case *hclsyntax.ScopeTraversalExpr:
		if e.Traversal.RootName() == "local" && len(e.Traversal) == 2 {
			if a, ok := e.Traversal[1].(hcl.TraverseAttr); ok {
				if la, ok := m.cfg.locals[a.Name]; ok {
					return m.objectEntries(la.Expr, &evalCtx{m: m}, depth+1)
				}
			}
		}
	case *hclsyntax.ObjectConsExpr:
		var out []entry
		for _, item := range e.Items {
			kv, err := m.l.eval(item.KeyExpr, c)
			key := ""
			if err == nil && kv.IsKnown() && !unmark(kv).IsNull() {
				if s, cerr := convert.Convert(unmark(kv), cty.String); cerr == nil {
					key = s.AsString()
				}
			}
			if key == "" {
				key = cluster.Unknown(m.l.text(item.KeyExpr.Range()))
			}
			v, err := m.l.eval(item.ValueExpr, c)
			if err != nil {
				v = cty.DynamicVal
			}
			out = append(out, entry{key: key, val: v, unknown: !v.IsKnown()})
		}
		return out, true
	}
	return nil, false
}

// mergeCall finds the merge() call a map is written with, through locals and
// parentheses.
func (m *modInst) mergeCall(expr hcl.Expression, depth int) *hclsyntax.FunctionCallExpr {
	if expr == nil || depth > 8 {
		return nil
	}
	switch e := expr.(type) {
	case *hclsyntax.FunctionCallExpr:
		if e.Name == "merge" && !e.ExpandFinal {
			return e
		}
	case *hclsyntax.ScopeTraversalExpr:
		if e.Traversal.RootName() == "local" && len(e.Traversal) == 2 {
			if a, ok := e.Traversal[1].(hcl.TraverseAttr); ok {
				if la, ok := m.cfg.locals[a.Name]; ok {
					return m.mergeCall(la.Expr, depth+1)
				}
			}
		}
	case *hclsyntax.ParenthesesExpr:
		return m.mergeCall(e.Expression, depth+1)
	}
	return nil
}

// forEntriesUnknownKeys evaluates a for expression producing an object whose
// keys are not known before apply (`{ for i in range(3) : "x-${data.y[i]}" =>
// {...} }`): its values usually are, so each becomes an entry whose key is the
// key expression, numbered.
func (m *modInst) forEntriesUnknownKeys(expr hcl.Expression, c *evalCtx) ([]entry, bool) {
	fe, ok := expr.(*hclsyntax.ForExpr)
	if !ok || fe.KeyExpr == nil || fe.Group {
		return nil, false
	}
	values := *fe
	values.KeyExpr = nil
	v, err := m.l.eval(&values, c)
	if err != nil || !v.IsKnown() {
		return nil, false
	}
	v = unmark(v)
	if v.IsNull() || !v.Type().IsTupleType() {
		return nil, false
	}
	// A quoted key template ("kube-system-${...}") reads best as its text, which
	// keeps its interpolations and so stays recognizably unknown.
	key := m.l.source(fe.KeyExpr.Range())
	if t, ok := fe.KeyExpr.(*hclsyntax.TemplateExpr); ok && len(key) >= 2 && key[0] == '"' && key[len(key)-1] == '"' && len(t.Parts) > 1 {
		key = key[1 : len(key)-1]
	} else {
		key = cluster.Unknown(key)
	}
	var out []entry
	i := 0
	for it := v.ElementIterator(); it.Next(); i++ {
		_, e := it.Element()
		out = append(out, entry{key: key + "[" + strconv.Itoa(i) + "]", val: e})
	}
	return out, true
}

// entries returns the elements of a known map or object, by key.
func entries(v cty.Value) ([]entry, bool) {
	if !v.IsKnown() {
		return nil, false
	}
	v = unmark(v)
	if v.IsNull() {
		return nil, true
	}
	if !isMapLike(v.Type()) {
		return nil, false
	}
	var out []entry
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		out = append(out, entry{key: k.AsString(), val: e})
	}
	return out, true
}

// field returns an attribute of an object value (or element of a map), if present and
// not null.
func field(v cty.Value, name string) (cty.Value, bool) {
	if v == cty.NilVal || !v.IsKnown() {
		return cty.NilVal, false
	}
	v = unmark(v)
	if v.IsNull() {
		return cty.NilVal, false
	}
	ty := v.Type()
	var out cty.Value
	switch {
	case ty.IsObjectType():
		if !ty.HasAttribute(name) {
			return cty.NilVal, false
		}
		out = v.GetAttr(name)
	case ty.IsMapType():
		k := cty.StringVal(name)
		if !v.HasIndex(k).True() {
			return cty.NilVal, false
		}
		out = v.Index(k)
	default:
		return cty.NilVal, false
	}
	if out.IsKnown() && unmark(out).IsNull() {
		return cty.NilVal, false
	}
	return out, true
}

// groupIn reads one node group / Fargate profile / add-on entry, with the module's
// *_defaults object as fallback.
type groupIn struct {
	val, defaults cty.Value
	text          string // for unknowns without a name
}

func (g groupIn) get(name string) (cty.Value, bool) {
	if v, ok := field(g.val, name); ok {
		return v, true
	}
	return field(g.defaults, name)
}

// written reports whether the entry (or its defaults) sets name, even to null.
func (g groupIn) written(name string) bool {
	for _, v := range []cty.Value{g.val, g.defaults} {
		if v == cty.NilVal || !v.IsKnown() {
			continue
		}
		u := unmark(v)
		if u.IsNull() {
			continue
		}
		if u.Type().IsObjectType() && u.Type().HasAttribute(name) {
			return true
		}
		if u.Type().IsMapType() && u.HasIndex(cty.StringVal(name)).True() {
			return true
		}
	}
	return false
}

func (g groupIn) goVal(name string) (any, bool) {
	v, ok := g.get(name)
	if !ok {
		return nil, false
	}
	return toGo(v, g.text+"."+name), true
}

// conditional is the create argument of a node group when it is not known before
// apply: the group exists only if it is true.
func (g groupIn) conditional(l *loader) string {
	v, ok := g.get("create")
	if !ok {
		return ""
	}
	if _, known := knownBool(v); known {
		return ""
	}
	if t, ok := unknownText(v); ok {
		return t
	}
	return g.text + ".create"
}

// groupEntries lists the node groups of a map input. What is not known before
// apply is kept where it can be (an entry whose key is unknown keeps its value);
// node groups that cannot be seen at all are recorded as unseen capacity.
func (in modIn) groupEntries(v cty.Value, name string) []entry {
	list, known := entries(v)
	if !known {
		partial, ok := in.partialEntries(name)
		if ok {
			list = partial
		}
	}
	var out []entry
	for _, e := range list {
		if e.unknown || e.val == cty.NilVal || !e.val.IsKnown() {
			what := e.key
			if len(what) > 80 {
				what = "part of " + name
			}
			in.m.l.unseenCapacity(in.origin(name), fmt.Sprintf("the node groups of %s.%s", in.ci.addr, name), fmt.Sprintf("%s is not known before apply", what))
			continue
		}
		out = append(out, e)
	}
	if !known && len(list) == 0 {
		what := name
		if t, ok := unknownText(v); ok && len(t) <= 80 {
			what = t
		}
		in.m.l.unseenCapacity(in.origin(name), fmt.Sprintf("the node groups of %s.%s", in.ci.addr, name), fmt.Sprintf("%s is not known before apply", what))
	}
	return out
}

func (g groupIn) boolean(name string, def bool) bool {
	v, ok := g.get(name)
	if !ok {
		return def
	}
	if b, known := knownBool(v); known {
		return b
	}
	return def
}

func (g groupIn) str(name, def string) string {
	v, ok := g.goVal(name)
	if !ok {
		return def
	}
	if s := str(v); s != "" {
		return s
	}
	return def
}

func (g groupIn) num(name string, def int64) any {
	v, ok := g.goVal(name)
	if !ok {
		return def
	}
	return v
}

func quoteKey(k string) string { return strconv.Quote(k) }

// trustPolicy is the assume-role policy a module writes for a role.
func trustPolicy(typ string, ids ...string) string {
	var p any = ids[0]
	if len(ids) > 1 {
		var l []any
		for _, id := range ids {
			l = append(l, id)
		}
		p = l
	}
	doc := map[string]any{
		"Version": "2012-10-17",
		"Statement": []any{map[string]any{
			"Effect":    "Allow",
			"Action":    "sts:AssumeRole",
			"Principal": map[string]any{typ: p},
		}},
	}
	b, _ := json.Marshal(doc)
	return string(b)
}

// semantics synthesizes the resources of the terraform-aws-eks modules of a module
// instance.
func (m *modInst) semantics(call *moduleCall, ci *callInst, b *builder, add func(*resInst)) {
	in := modIn{ci: ci, m: m}
	if create, known := in.boolean("create", true); !create {
		return
	} else if !known {
		// Everything the module creates exists only if create turns out true.
		cond := ci.addr + ".create"
		if v, ok := in.get("create"); ok {
			if t, ok := unknownText(v); ok {
				cond = t
			}
		}
		inner := add
		add = func(r *resInst) {
			if r.conditional == "" {
				r.conditional = cond
			}
			inner(r)
		}
	}
	s := &semModule{addr: ci.addr, kind: call.kind, major: call.major, version: call.version, origin: originOf(call.block.DefRange())}
	b.sems = append(b.sems, s)
	switch call.kind {
	case kindEKS:
		m.eksRoot(in, s, add)
		m.eksNetwork(in, s, b)
	case kindKarpenter:
		m.karpenterModule(in, s, add)
	case kindBlueprintsAddons:
		m.blueprintsAddons(in, s, add)
	case kindBlueprintsAddon:
		m.blueprintsAddon(in, s, add)
	case kindManagedNodeGroup:
		g := groupIn{val: inputsObject(ci), text: ci.addr}
		name := g.str("name", "")
		add(managedNodeGroup(ci.addr, name, g, s.origin, ci.addr, call.major, false))
		if g.boolean("create_iam_role", true) {
			add(nodeRole(ci.addr+".aws_iam_role.this[0]", name+"-eks-node-group", g, s.origin))
		}
	case kindSelfManagedNodeGroup:
		g := groupIn{val: inputsObject(ci), text: ci.addr}
		name := g.str("name", "")
		for _, r := range selfManagedNodeGroup(ci.addr, name, g, s.origin, ci.addr, call.major, false) {
			add(r)
		}
	case kindFargateProfile:
		g := groupIn{val: inputsObject(ci), text: ci.addr}
		name := g.str("name", "")
		for _, r := range fargateProfile(ci.addr, name, g, s.origin, cluster.Unknown(ci.addr+".fargate_profile_pod_execution_role_arn"), nil) {
			add(r)
		}
	case kindAwsAuth:
		manage, _ := in.boolean("manage_aws_auth_configmap", true)
		createCM, _ := in.boolean("create_aws_auth_configmap", false)
		if !manage && !createCM {
			return
		}
		addr := ci.addr + ".kubernetes_config_map_v1_data.aws_auth[0]"
		typ := "kubernetes_config_map_v1_data"
		if createCM && !manage {
			addr, typ = ci.addr+".kubernetes_config_map.aws_auth[0]", "kubernetes_config_map"
		}
		roles, origins := m.awsAuthRoles(in, "aws_auth_roles")
		add(awsAuthResource(addr, typ, roles, origins, in.origin("aws_auth_roles")))
	}
}

// inputsObject returns all inputs of a module call instance as one object.
func inputsObject(ci *callInst) cty.Value {
	vals := map[string]cty.Value{}
	for name := range ci.inputs {
		v, _ := ci.input(name)
		vals[name] = v
	}
	return cty.ObjectVal(vals)
}

// eksRoot synthesizes what the terraform-aws-modules/eks root module creates:
// the cluster, its node groups (managed and self-managed), Fargate profiles,
// add-ons, access entries and the aws-auth ConfigMap it writes.
func (m *modInst) eksRoot(in modIn, s *semModule, add func(*resInst)) {
	major := s.major
	addonsKey := "cluster_addons"
	if major >= 21 {
		addonsKey = "addons"
	}
	m.eksCluster(in, s, add)
	var auth awsAuthMap
	m.unmodelledCapacity(in)
	m.eksManagedNodeGroups(in, major, &auth, add)
	m.eksSelfManagedNodeGroups(in, major, &auth, add)
	fargate := m.eksFargateProfiles(in, add)
	m.eksAddons(in, addonsKey, add)
	if major >= 20 {
		m.eksAccessEntries(in, add)
	}
	if dm := in.ci.call.declaredMajor; dm > 0 && dm < 18 {
		m.awsAuthBefore18(in, &auth, fargate, add)
		return
	}
	if major <= 19 {
		m.awsAuthV19(in, &auth, fargate, add)
	}
}

// eksCluster adds the cluster, with its name, version, whether EKS bootstraps
// the default add-ons, and its authentication mode (a default one noted).
func (m *modInst) eksCluster(in modIn, s *semModule, add func(*resInst)) {
	A := in.ci.addr
	major := s.major
	nameKey, versionKey := "cluster_name", "cluster_version"
	if major >= 21 {
		nameKey, versionKey = "name", "kubernetes_version"
	}
	cl := newResInst(A+".aws_eks_cluster.this[0]", "managed", "aws_eks_cluster", "this", s.origin)
	cl.vals["name"] = in.str(nameKey, "")
	cl.vals["version"] = in.str(versionKey, "")
	// v21 never bootstraps the default add-ons (they are declared in addons);
	// v20 passes its input through (unset: EKS's default, true).
	switch {
	case major >= 21:
		cl.vals["bootstrap_self_managed_addons"] = false
	case major == 20:
		if v, ok := in.get("bootstrap_self_managed_addons"); ok {
			if b, known := knownBool(v); known {
				cl.vals["bootstrap_self_managed_addons"] = b
			} else {
				cl.vals["bootstrap_self_managed_addons"] = "${unknown}"
			}
		}
	}
	m.autoModeInputs(in, major, cl)
	switch {
	case major <= 19:
		cl.vals["access_config"] = []any{map[string]any{"authentication_mode": cluster.AuthConfigMap}}
		cl.x.authDefaulted = true
		m.l.note(s.origin, A, "terraform-aws-modules/eks v19 supports only the CONFIG_MAP authentication mode")
	default:
		mode := in.str("authentication_mode", "")
		if mode == "" {
			mode = cluster.AuthAPIAndConfigMap
			cl.x.authDefaulted = true
			m.l.note(s.origin, A, "authentication_mode is not set; the module default API_AND_CONFIG_MAP applies")
		} else {
			cl.lines["access_config.0.authentication_mode"] = in.origin("authentication_mode").Line
		}
		cl.vals["access_config"] = []any{map[string]any{"authentication_mode": mode}}
	}
	add(cl)
}

// autoModeInputs writes the EKS Auto Mode settings the module sends with the
// cluster, from compute_config (v21) or cluster_compute_config (v20.31 on), as
// the module's own logic makes them:
//
//   - v21: the three switches all follow compute_config.enabled (default
//     false); node_pools go as written; node_role_arn is the module's node
//     role when node_pools is set (a role it creates wins over the one
//     written, since v21.0.1), else none.
//   - v20: compute_config only when the map is not empty; node_pools and the
//     node role only when enabled (node_pools written without enabled are
//     dropped), the load balancing and block storage blocks only when
//     enabled; bootstrap_self_managed_addons false unless written.
func (m *modInst) autoModeInputs(in modIn, major int, cl *resInst) {
	name := "compute_config"
	if major == 20 {
		name = "cluster_compute_config"
	} else if major < 20 {
		return
	}
	v, ok := in.get(name)
	if !ok {
		return
	}
	org := in.origin(name)
	cl.lines["compute_config"] = org.Line
	cl.x.autoFrom = fmt.Sprintf("%s (terraform-aws-modules/eks v%d) %s", in.ci.addr, major, name)
	cl.x.autoInput = name
	if !v.IsKnown() {
		cl.vals["compute_config"] = "${unknown}"
		cl.unknown["compute_config"] = true
		return
	}
	g := groupIn{val: v, text: in.ci.addr + "." + name}
	enabled := any(false)
	if ev, set := g.get("enabled"); set {
		if b, known := knownBool(ev); known {
			enabled = b
		} else {
			enabled = "${" + g.text + ".enabled}"
		}
	}
	pools, poolsSet := g.goVal("node_pools")
	role := g.str("node_role_arn", "")
	moduleRole := "${" + in.ci.addr + ".node_iam_role_arn}"
	cc := map[string]any{"enabled": enabled}
	on := enabled == true
	switch major {
	case 20:
		if u := unmark(v); u.Type().IsObjectType() && len(u.Type().AttributeTypes()) == 0 || u.Type().IsMapType() && u.LengthInt() == 0 {
			return
		}
		if !on && poolsSet {
			cl.x.autoIgnored = name + ".node_pools without enabled = true, which the module drops"
		}
		if on {
			if !poolsSet {
				pools = []any{}
			}
			cc["node_pools"] = pools
			if l, isList := pools.([]any); !isList || len(l) > 0 {
				cc["node_role_arn"] = orAny(role, moduleRole)
			}
		}
		if on || enabled != false {
			cl.vals["kubernetes_network_config"] = []any{map[string]any{"elastic_load_balancing": []any{map[string]any{"enabled": enabled}}}}
			cl.vals["storage_config"] = []any{map[string]any{"block_storage": []any{map[string]any{"enabled": enabled}}}}
		}
		if _, written := in.get("bootstrap_self_managed_addons"); !written && on {
			cl.vals["bootstrap_self_managed_addons"] = false
		}
	default:
		if poolsSet {
			cc["node_pools"] = pools
			if createRole, _ := in.boolean("create_node_iam_role", true); createRole {
				cc["node_role_arn"] = moduleRole
				if role != "" {
					cl.x.autoIgnored = name + ".node_role_arn, which the module replaces with the node role it creates while create_node_iam_role is true (since v21.0.1)"
				}
			} else {
				cc["node_role_arn"] = role
			}
		}
		cl.vals["kubernetes_network_config"] = []any{map[string]any{"elastic_load_balancing": []any{map[string]any{"enabled": enabled}}}}
		cl.vals["storage_config"] = []any{map[string]any{"block_storage": []any{map[string]any{"enabled": enabled}}}}
	}
	cl.vals["compute_config"] = []any{cc}
}

func orAny(s string, def any) any {
	if s == "" {
		return def
	}
	return s
}

// awsAuthMap is the mapRoles of the aws-auth ConfigMap the module writes, in
// order, with the origin of each.
type awsAuthMap struct {
	roles   []map[string]any
	origins []cluster.Origin
}

// node maps a node role (of Windows nodes: kube-proxy's group first).
func (a *awsAuthMap) node(role any, org cluster.Origin, windows bool) {
	groups := []any{"system:bootstrappers", "system:nodes"}
	if windows {
		groups = append([]any{"eks:kube-proxy-windows"}, groups...)
	}
	a.roles = append(a.roles, map[string]any{"rolearn": role, "username": "system:node:{{EC2PrivateDNSName}}", "groups": groups})
	a.origins = append(a.origins, org)
}

// fargate maps the pod execution roles of Fargate profiles.
func (a *awsAuthMap) fargate(f fargateRoles) {
	for i, role := range f.roles {
		a.roles = append(a.roles, map[string]any{
			"rolearn":  role,
			"username": "system:node:{{SessionName}}",
			"groups":   []any{"system:bootstrappers", "system:nodes", "system:node-proxier"},
		})
		a.origins = append(a.origins, f.origins[i])
	}
}

// fargateRoles are the pod execution roles of Fargate profiles, with the
// origin of each.
type fargateRoles struct {
	roles   []any
	origins []cluster.Origin
}

// unmodelledCapacity says which capacity the call declares that eksdoctor
// does not model: the node groups of inputs before v18.
func (m *modInst) unmodelledCapacity(in modIn) {
	A := in.ci.addr
	if in.ci.call.declaredMajor > 0 && in.ci.call.declaredMajor < 18 {
		for _, name := range []string{"node_groups", "worker_groups", "worker_groups_launch_template"} {
			if v, ok := in.get(name); ok && !emptyCollection(v) {
				m.l.unseenCapacity(in.origin(name), fmt.Sprintf("the node groups of %s.%s", A, name),
					fmt.Sprintf("terraform-aws-modules/eks v%d declares them in %s, which eksdoctor does not model (it models v19 to v21)", in.ci.call.declaredMajor, name))
			}
		}
	}
}

// eksManagedNodeGroups adds each managed node group the call creates, with
// its node role, and maps the role in auth.
func (m *modInst) eksManagedNodeGroups(in modIn, major int, auth *awsAuthMap, add func(*resInst)) {
	A := in.ci.addr
	defaults, _ := in.get("eks_managed_node_group_defaults")
	v, ok := in.get("eks_managed_node_groups")
	if !ok {
		return
	}
	for _, e := range in.groupEntries(v, "eks_managed_node_groups") {
		g := groupIn{val: e.val, defaults: defaults, text: A + ".eks_managed_node_groups[" + quoteKey(e.key) + "]"}
		if !g.boolean("create", true) {
			continue
		}
		base := A + ".module.eks_managed_node_group[" + quoteKey(e.key) + "]"
		org := in.entryOrigin("eks_managed_node_groups", e.key)
		name := g.str("name", e.key)
		ng := managedNodeGroup(base, name, g, org, g.text, major, true)
		ng.conditional = g.conditional(m.l)
		add(ng)
		if g.boolean("create_iam_role", true) {
			add(nodeRole(base+".aws_iam_role.this[0]", name+"-eks-node-group", g, org))
		}
		auth.node(ng.vals["node_role_arn"], org, false)
	}
}

// eksSelfManagedNodeGroups adds each self-managed node group the call
// creates, with what it creates beside, and maps its node role in auth.
func (m *modInst) eksSelfManagedNodeGroups(in modIn, major int, auth *awsAuthMap, add func(*resInst)) {
	A := in.ci.addr
	defaults, _ := in.get("self_managed_node_group_defaults")
	v, ok := in.get("self_managed_node_groups")
	if !ok {
		return
	}
	for _, e := range in.groupEntries(v, "self_managed_node_groups") {
		g := groupIn{val: e.val, defaults: defaults, text: A + ".self_managed_node_groups[" + quoteKey(e.key) + "]"}
		if !g.boolean("create", true) {
			continue
		}
		base := A + ".module.self_managed_node_group[" + quoteKey(e.key) + "]"
		org := in.entryOrigin("self_managed_node_groups", e.key)
		rs := selfManagedNodeGroup(base, g.str("name", e.key), g, org, g.text, major, true)
		for _, r := range rs {
			r.conditional = g.conditional(m.l)
			add(r)
		}
		auth.node(rs[0].x.nodeRole, org, rs[0].x.windows())
	}
}

// eksFargateProfiles adds each Fargate profile the call creates and returns
// their pod execution roles. A profile nobody can see may select any pod:
// what is known is kept and the unknown part makes placement unknown rather
// than absent.
func (m *modInst) eksFargateProfiles(in modIn, add func(*resInst)) fargateRoles {
	A := in.ci.addr
	var out fargateRoles
	defaults, _ := in.get("fargate_profile_defaults")
	v, ok := in.get("fargate_profiles")
	if !ok {
		return out
	}
	list, known := entries(v)
	if !known {
		if partial, ok := in.partialEntries("fargate_profiles"); ok {
			list = partial
			m.l.unresolved(in.origin("fargate_profiles"), A+".fargate_profiles is only partly known statically; the profiles whose names or selectors are not known are analysed as unknown")
		} else {
			m.l.unseenCapacity(in.origin("fargate_profiles"), "the Fargate profiles of "+A+".fargate_profiles", "fargate_profiles is not known before apply")
		}
	}
	for _, e := range list {
		g := groupIn{val: e.val, defaults: defaults, text: A + ".fargate_profiles[" + quoteKey(e.key) + "]"}
		if !e.unknown && !g.boolean("create", true) {
			continue
		}
		base := A + ".module.fargate_profile[" + quoteKey(e.key) + "]"
		org := in.entryOrigin("fargate_profiles", e.key)
		if e.unknown {
			org = in.origin("fargate_profiles")
		}
		rs := fargateProfile(base, g.str("name", e.key), g, org,
			cluster.Unknown(A+".fargate_profiles["+quoteKey(e.key)+"].fargate_profile_pod_execution_role_arn"),
			in.selectorOrigins("fargate_profiles", e.key))
		if e.unknown {
			rs[0].vals["fargate_profile_name"] = e.key
			rs[0].unknown["selector"] = true
		}
		for _, r := range rs {
			add(r)
		}
		out.roles = append(out.roles, rs[0].vals["pod_execution_role_arn"])
		out.origins = append(out.origins, org)
	}
	return out
}

// eksAddons adds the EKS add-ons of the input addonsKey, with the source text
// and line of each one's configuration_values.
func (m *modInst) eksAddons(in modIn, addonsKey string, add func(*resInst)) {
	A := in.ci.addr
	v, ok := in.get(addonsKey)
	if !ok {
		return
	}
	list, known := entries(v)
	if !known {
		m.l.unresolved(in.origin(addonsKey), A+"."+addonsKey+" is not known statically; the add-ons it installs are not analysed")
	}
	for _, e := range list {
		g := groupIn{val: e.val, text: A + "." + addonsKey + "[" + quoteKey(e.key) + "]"}
		if !g.boolean("create", true) {
			continue
		}
		res := "this"
		if g.boolean("before_compute", false) {
			res = "before_compute"
		}
		r := newResInst(A+".aws_eks_addon."+res+"["+quoteKey(e.key)+"]", "managed", "aws_eks_addon", res, in.entryOrigin(addonsKey, e.key))
		r.vals["addon_name"] = g.str("name", e.key)
		if v, ok := g.goVal("addon_version"); ok {
			r.vals["addon_version"] = v
		}
		if cv, ok := g.get("configuration_values"); ok {
			r.vals["configuration_values"] = toGo(cv, g.text+".configuration_values")
			if !cv.IsKnown() {
				r.unknown["configuration_values"] = true
			}
			if x := in.entryExpr(addonsKey, e.key); x != nil {
				if cvx := m.itemValue(x, "configuration_values", 0); cvx != nil {
					r.x.configRaw = m.l.source(cvx.Range())
					r.lines["configuration_values"] = cvx.Range().Start.Line
				}
			}
		}
		add(r)
	}
}

// eksAccessEntries adds the access entries (v20+) of the access_entries
// input, and the cluster creator's when enable_cluster_creator_admin_permissions
// asks for it.
func (m *modInst) eksAccessEntries(in modIn, add func(*resInst)) {
	A := in.ci.addr
	if v, ok := in.get("access_entries"); ok {
		list, known := entries(v)
		if !known {
			m.l.unresolved(in.origin("access_entries"), A+".access_entries is not known statically; the access entries it creates are not analysed")
		}
		for _, e := range list {
			g := groupIn{val: e.val, text: A + ".access_entries[" + quoteKey(e.key) + "]"}
			r := newResInst(A+".aws_eks_access_entry.this["+quoteKey(e.key)+"]", "managed", "aws_eks_access_entry", "this", in.entryOrigin("access_entries", e.key))
			r.vals["principal_arn"], _ = g.goVal("principal_arn")
			r.vals["type"] = g.str("type", cluster.AccessStandard)
			if v, ok := g.goVal("kubernetes_groups"); ok {
				r.vals["kubernetes_groups"] = v
			}
			if v, ok := g.goVal("user_name"); ok {
				r.vals["user_name"] = v
			}
			add(r)
			pa, _ := g.get("policy_associations")
			assocs, _ := entries(pa)
			for _, a := range assocs {
				ag := groupIn{val: a.val, text: g.text + ".policy_associations[" + quoteKey(a.key) + "]"}
				pr := newResInst(A+".aws_eks_access_policy_association.this["+quoteKey(e.key+"_"+a.key)+"]", "managed", "aws_eks_access_policy_association", "this", r.origin)
				pr.vals["principal_arn"] = r.vals["principal_arn"]
				pr.vals["policy_arn"], _ = ag.goVal("policy_arn")
				add(pr)
			}
		}
	}
	if admin, _ := in.boolean("enable_cluster_creator_admin_permissions", false); admin {
		r := newResInst(A+`.aws_eks_access_entry.this["cluster_creator"]`, "managed", "aws_eks_access_entry", "this", in.origin("enable_cluster_creator_admin_permissions"))
		r.vals["principal_arn"] = cluster.Unknown(A + ".data.aws_iam_session_context.current[0].issuer_arn")
		r.vals["type"] = cluster.AccessStandard
		add(r)
	}
}

// awsAuthBefore18 adds the aws-auth ConfigMap of the releases before v18:
// the module writes it unless manage_aws_auth = false, mapping the worker
// role of its worker groups (output worker_iam_role_arn) as nodes, its
// Fargate profiles' pod execution roles, then map_roles (v17.24.0
// aws_auth.tf).
func (m *modInst) awsAuthBefore18(in modIn, auth *awsAuthMap, fargate fargateRoles, add func(*resInst)) {
	A := in.ci.addr
	if manage, _ := in.boolean("manage_aws_auth", true); !manage {
		return
	}
	auth.node(cluster.Unknown(A+".worker_iam_role_arn"), in.origin("worker_groups"), false)
	auth.fargate(fargate)
	roles, origins := m.awsAuthRoles(in, "map_roles")
	auth.roles = append(auth.roles, roles...)
	auth.origins = append(auth.origins, origins...)
	add(awsAuthResource(A+".kubernetes_config_map.aws_auth[0]", "kubernetes_config_map", auth.roles, auth.origins, in.origin("manage_aws_auth")))
}

// awsAuthV19 adds the aws-auth ConfigMap, which v19 manages itself when asked
// to: the node and Fargate roles it creates, then aws_auth_roles.
func (m *modInst) awsAuthV19(in modIn, auth *awsAuthMap, fargate fargateRoles, add func(*resInst)) {
	A := in.ci.addr
	manage, _ := in.boolean("manage_aws_auth_configmap", false)
	createCM, _ := in.boolean("create_aws_auth_configmap", false)
	if !manage && !createCM {
		return
	}
	for _, name := range []string{"aws_auth_node_iam_role_arns_non_windows", "aws_auth_node_iam_role_arns_windows"} {
		if v, ok := in.get(name); ok {
			for _, arn := range listOf(toGo(v, A+"."+name)) {
				auth.node(arn, in.origin(name), strings.HasSuffix(name, "_windows") && !strings.HasSuffix(name, "non_windows"))
			}
		}
	}
	if v, ok := in.get("aws_auth_fargate_profile_pod_execution_role_arns"); ok {
		for _, arn := range listOf(toGo(v, A+".aws_auth_fargate_profile_pod_execution_role_arns")) {
			fargate.roles = append(fargate.roles, arn)
			fargate.origins = append(fargate.origins, in.origin("aws_auth_fargate_profile_pod_execution_role_arns"))
		}
	}
	auth.fargate(fargate)
	roles, origins := m.awsAuthRoles(in, "aws_auth_roles")
	auth.roles = append(auth.roles, roles...)
	auth.origins = append(auth.origins, origins...)
	addr, typ := A+".kubernetes_config_map_v1_data.aws_auth[0]", "kubernetes_config_map_v1_data"
	if createCM && !manage {
		addr, typ = A+".kubernetes_config_map.aws_auth[0]", "kubernetes_config_map"
	}
	add(awsAuthResource(addr, typ, auth.roles, auth.origins, in.origin("manage_aws_auth_configmap")))
}

// selectorOrigins returns the line of each selector of a Fargate profile entry.
func (in modIn) selectorOrigins(name, key string) []cluster.Origin {
	x := in.entryExpr(name, key)
	if x == nil {
		return nil
	}
	sel := in.m.itemValue(x, "selectors", 0)
	t, ok := sel.(*hclsyntax.TupleConsExpr)
	if !ok {
		return nil
	}
	var out []cluster.Origin
	for _, e := range t.Exprs {
		out = append(out, originOf(e.Range()))
	}
	return out
}

// awsAuthRoles returns the entries of an aws_auth_roles input with their origins.
func (m *modInst) awsAuthRoles(in modIn, name string) ([]map[string]any, []cluster.Origin) {
	v, ok := in.get(name)
	if !ok {
		return nil, nil
	}
	var exprs []hcl.Expression
	if a, ok := in.ci.call.block.Body.Attributes[name]; ok {
		if t, ok := a.Expr.(*hclsyntax.TupleConsExpr); ok {
			for _, x := range t.Exprs {
				exprs = append(exprs, x)
			}
		}
	}
	var out []map[string]any
	var origins []cluster.Origin
	g := toGo(v, in.ci.addr+"."+name)
	if isWhollyUnknown(str(g)) {
		out = append(out, map[string]any{"rolearn": g})
		origins = append(origins, in.origin(name))
		return out, origins
	}
	for i, e := range listOf(g) {
		em, ok := e.(map[string]any)
		if !ok {
			continue
		}
		out = append(out, em)
		org := in.origin(name)
		if i < len(exprs) {
			org = originOf(exprs[i].Range())
		}
		origins = append(origins, org)
	}
	return out, origins
}

func awsAuthResource(addr, typ string, roles []map[string]any, origins []cluster.Origin, org cluster.Origin) *resInst {
	r := newResInst(addr, "managed", typ, "aws_auth", org)
	r.vals["metadata"] = []any{map[string]any{"name": "aws-auth", "namespace": "kube-system"}}
	list := make([]any, len(roles))
	for i, x := range roles {
		list[i] = x
	}
	text, err := yaml.Marshal(list)
	if err != nil {
		return r
	}
	r.vals["data"] = map[string]any{"mapRoles": string(text)}
	r.vals["force"] = true
	r.x.mapOrigins = origins
	return r
}

// managedNodeGroup synthesizes the aws_eks_node_group of an eks-managed-node-group
// module instance at base. refPrefix names the group's outputs.
func managedNodeGroup(base, name string, g groupIn, org cluster.Origin, refPrefix string, major int, fromRoot bool) *resInst {
	r := newResInst(base+".aws_eks_node_group.this[0]", "managed", "aws_eks_node_group", "this", org)
	if g.boolean("use_name_prefix", true) {
		r.vals["node_group_name_prefix"] = name + "-"
	} else {
		r.vals["node_group_name"] = name
	}
	if v, ok := g.goVal("labels"); ok {
		r.vals["labels"] = v
		if isWhollyUnknown(str(v)) {
			r.unknown["labels"] = true
		}
	}
	if v, ok := g.get("taints"); ok {
		t, known := taintList(v, g.text+".taints")
		r.vals["taint"] = t
		if !known {
			r.unknown["taint"] = true
		}
	}
	for _, k := range []string{"instance_types", "ami_type", "capacity_type"} {
		if v, ok := g.goVal(k); ok {
			r.vals[k] = v
		}
	}
	minDef, maxDef, desDef := int64(0), int64(3), int64(1)
	if fromRoot {
		minDef = 1
	}
	r.vals["scaling_config"] = []any{map[string]any{
		"min_size":     g.num("min_size", minDef),
		"max_size":     g.num("max_size", maxDef),
		"desired_size": g.num("desired_size", desDef),
	}}
	if g.boolean("create_iam_role", true) {
		r.vals["node_role_arn"] = cluster.Unknown(refPrefix + ".iam_role_arn")
	} else {
		r.vals["node_role_arn"], _ = g.goVal("iam_role_arn")
	}
	r.x.labels, r.x.taints = nodeUserData(g, managedUserData(g, str(r.vals["ami_type"]), g.str("platform", "")))
	// The module's launch template (use_custom_launch_template, the default)
	// sizes the disk by block_device_mappings; without it, disk_size does.
	r.x.diskSet = true
	if g.boolean("use_custom_launch_template", true) {
		r.x.disk = blockDeviceDisk(g, str(r.vals["ami_type"]))
	} else {
		r.x.disk = gibBytes(g, "disk_size")
	}
	return r
}

// blockDeviceDisk is the size of the volume a node group's block_device_mappings
// give the AMI's ephemeral device (/dev/xvda; /dev/xvdb for Bottlerocket;
// /dev/sda1 for Windows): 0 without one, -1 when not known before apply.
func blockDeviceDisk(g groupIn, amiType string) int64 {
	v, ok := g.get("block_device_mappings")
	if !ok {
		return 0
	}
	if !v.IsKnown() {
		return -1
	}
	device := "/dev/xvda"
	switch t := strings.ToUpper(amiType); {
	case strings.HasPrefix(t, "BOTTLEROCKET"):
		device = "/dev/xvdb"
	case strings.HasPrefix(t, "WINDOWS"):
		device = "/dev/sda1"
	}
	var entries []any
	switch t := toGo(v, g.text+".block_device_mappings").(type) {
	case map[string]any:
		for _, k := range sortedKeys(t) {
			entries = append(entries, t[k])
		}
	case []any:
		entries = t
	case string:
		return -1
	}
	for _, e := range entries {
		m, _ := e.(map[string]any)
		if name := str(m["device_name"]); cluster.IsUnknown(name) {
			return -1
		} else if name != device {
			continue
		}
		ebs := first(m["ebs"])
		if ebs == nil {
			ebs, _ = m["ebs"].(map[string]any)
		}
		n, ok := intOf(ebs["volume_size"])
		switch {
		case ok:
			return int64(n) << 30
		case ebs["volume_size"] == nil:
			return 0
		}
		return -1
	}
	return 0
}

// gibBytes reads a size in GiB: 0 when unset, -1 when not known.
func gibBytes(g groupIn, name string) int64 {
	v, ok := g.goVal(name)
	if !ok || v == nil {
		return 0
	}
	if n, ok := intOf(v); ok {
		return int64(n) << 30
	}
	return -1
}

// taintList normalises a taints input (a map of objects or a list of objects) into
// the provider's taint blocks.
func taintList(v cty.Value, text string) ([]any, bool) {
	if !v.IsKnown() {
		return nil, false
	}
	g := toGo(v, text)
	var items []any
	switch t := g.(type) {
	case map[string]any:
		for _, k := range sortedKeys(t) {
			items = append(items, t[k])
		}
	case []any:
		items = t
	default:
		return nil, false
	}
	var out []any
	for _, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		out = append(out, map[string]any{"key": m["key"], "value": m["value"], "effect": m["effect"]})
	}
	return out, true
}

// nodeUserData returns the labels and taints a node group's user data gives its
// nodes.
func nodeUserData(g groupIn, keys []string) (map[string]string, []corev1.Taint) {
	var texts []string
	for _, k := range keys {
		if s := g.str(k, ""); s != "" {
			texts = append(texts, s)
		}
	}
	if v, ok := g.goVal("cloudinit_pre_nodeadm"); ok {
		for _, part := range listOf(v) {
			if pm, ok := part.(map[string]any); ok {
				texts = append(texts, str(pm["content"]))
			}
		}
	}
	labels := map[string]string{}
	var taints []corev1.Taint
	for _, t := range texts {
		l, ts := userDataLabels(t)
		for k, v := range l {
			labels[k] = v
		}
		taints = append(taints, ts...)
	}
	if len(labels) == 0 {
		labels = nil
	}
	return labels, taints
}

// managedUserData lists the user data inputs of an EKS managed node group the
// module (v18 and later) puts on its nodes. EKS writes the bootstrap call of
// the EKS-optimized AMIs itself, so the module renders bootstrap_extra_args
// only with enable_bootstrap_user_data (a custom AMI), a template of the
// user's, or Bottlerocket (whose TOML settings EKS merges); it always prepends
// pre_bootstrap_user_data (modules/_user_data, v19.19.1 and later). No release
// after v17 reads kubelet_extra_args.
func managedUserData(g groupIn, amiType, platform string) []string {
	keys := []string{"pre_bootstrap_user_data"}
	if g.boolean("enable_bootstrap_user_data", false) || g.str("user_data_template_path", "") != "" ||
		strings.HasPrefix(strings.ToUpper(amiType), "BOTTLEROCKET") || platform == "bottlerocket" {
		keys = append(keys, "bootstrap_extra_args")
	}
	return keys
}

// nodeRole synthesizes the IAM role a node group module creates.
func nodeRole(addr, defName string, g groupIn, org cluster.Origin) *resInst {
	r := newResInst(addr, "managed", "aws_iam_role", "this", org)
	name := g.str("iam_role_name", defName)
	r.setName(name, g.boolean("iam_role_use_name_prefix", true))
	if p := g.str("iam_role_path", ""); p != "" {
		r.vals["path"] = p
	}
	r.vals["assume_role_policy"] = trustPolicy("Service", "ec2.amazonaws.com")
	return r
}

func (x extras) windows() bool { return x.amiType != "" && strings.HasPrefix(x.amiType, "WINDOWS") }

// selfManagedNodeGroup synthesizes the autoscaling group, IAM role and access entry of
// a self-managed-node-group module instance.
func selfManagedNodeGroup(base, name string, g groupIn, org cluster.Origin, refPrefix string, major int, fromRoot bool) []*resInst {
	r := newResInst(base+".aws_autoscaling_group.this[0]", "managed", "aws_autoscaling_group", "this", org)
	r.setName(name, g.boolean("use_name_prefix", true))
	r.vals["min_size"] = g.num("min_size", 0)
	r.vals["max_size"] = g.num("max_size", 3)
	r.vals["desired_capacity"] = g.num("desired_size", 1)
	types := map[string]bool{}
	if v, ok := g.goVal("instance_type"); ok {
		if s := str(v); s != "" {
			types[s] = true
		}
	}
	for _, t := range strList(mustGo(g, "instance_types")) {
		types[t] = true
	}
	// The module's default instance type applies only when none is written (an
	// explicit null means instance requirements choose).
	if len(types) == 0 && !g.written("instance_type") && !g.written("instance_types") {
		types["m6i.large"] = true
	}
	if mip, ok := g.goVal("mixed_instances_policy"); ok {
		lt := first(first(mip)["launch_template"])
		for _, o := range listOf(lt["override"]) {
			if om, ok := o.(map[string]any); ok {
				if s := str(om["instance_type"]); s != "" {
					types[s] = true
				}
			}
		}
	}
	if len(types) > 0 {
		r.x.instanceTypes = sortedKeys(types)
	}
	r.x.amiType = g.str("ami_type", "")
	if g.str("platform", "") == "windows" && r.x.amiType == "" {
		r.x.amiType = "WINDOWS_CORE_2022_x86_64"
	}
	r.x.labels, r.x.taints = nodeUserData(g, []string{"bootstrap_extra_args", "pre_bootstrap_user_data"})
	r.x.disk, r.x.diskSet = blockDeviceDisk(g, r.x.amiType), true
	if v, ok := g.goVal("labels"); ok {
		if r.x.labels == nil {
			r.x.labels = map[string]string{}
		}
		for k, val := range strMap(v) {
			r.x.labels[k] = val
		}
	}
	if v, ok := g.get("taints"); ok {
		t, _ := taintList(v, g.text+".taints")
		r.x.taints = append(r.x.taints, taintsOf(t)...)
	}
	out := []*resInst{r}
	if g.boolean("create_iam_role", true) {
		r.x.nodeRole = cluster.Unknown(refPrefix + ".iam_role_arn")
		out = append(out, nodeRole(base+".aws_iam_role.this[0]", name+"-node-group", g, org))
	} else if v, ok := g.goVal("iam_role_arn"); ok {
		r.x.nodeRole = str(v)
	}
	if major >= 20 && g.boolean("create_access_entry", true) && r.x.nodeRole != "" {
		e := newResInst(base+".aws_eks_access_entry.this[0]", "managed", "aws_eks_access_entry", "this", org)
		e.vals["principal_arn"] = r.x.nodeRole
		e.vals["type"] = cluster.AccessEC2Linux
		if r.x.windows() {
			e.vals["type"] = cluster.AccessEC2Windows
		}
		e.x.implicit = true
		out = append(out, e)
	}
	return out
}

func mustGo(g groupIn, name string) any {
	v, _ := g.goVal(name)
	return v
}

// fargateProfile synthesizes a fargate-profile module instance: the profile and its
// pod execution role.
func fargateProfile(base, name string, g groupIn, org cluster.Origin, rolePlaceholder string, selectorOrigins []cluster.Origin) []*resInst {
	r := newResInst(base+".aws_eks_fargate_profile.this[0]", "managed", "aws_eks_fargate_profile", "this", org)
	r.vals["fargate_profile_name"] = name
	create := g.boolean("create_iam_role", true)
	if create {
		r.vals["pod_execution_role_arn"] = rolePlaceholder
	} else {
		r.vals["pod_execution_role_arn"], _ = g.goVal("iam_role_arn")
	}
	if v, ok := g.get("selectors"); ok {
		gv := toGo(v, g.text+".selectors")
		if isWhollyUnknown(str(gv)) {
			r.unknown["selector"] = true
		}
		var sel []any
		for i, s := range listOf(gv) {
			sm, ok := s.(map[string]any)
			if !ok {
				continue
			}
			sel = append(sel, map[string]any{"namespace": sm["namespace"], "labels": sm["labels"]})
			if i < len(selectorOrigins) {
				r.lines["selector."+strconv.Itoa(i)] = selectorOrigins[i].Line
			}
		}
		r.vals["selector"] = sel
	}
	out := []*resInst{r}
	if create {
		role := newResInst(base+".aws_iam_role.this[0]", "managed", "aws_iam_role", "this", org)
		rn := g.str("iam_role_name", name)
		role.setName(rn, g.boolean("iam_role_use_name_prefix", true))
		if p := g.str("iam_role_path", ""); p != "" {
			role.vals["path"] = p
		}
		role.vals["assume_role_policy"] = trustPolicy("Service", "eks-fargate-pods.amazonaws.com")
		out = append(out, role)
	}
	return out
}

// karpenterModule synthesizes what the karpenter sub-module creates: the node role and
// (v20+) its access entry, the controller role with its trust, and the pod identity
// association; v19's node role and IRSA role carry different output names.
func (m *modInst) karpenterModule(in modIn, s *semModule, add func(*resInst)) {
	K := in.ci.addr
	g := groupIn{val: inputsObject(in.ci), text: K}
	clusterName := g.str("cluster_name", "")
	if s.major <= 19 {
		m.karpenterV19(in, s, g, clusterName, add)
		return
	}
	// v20 and v21.
	s.namespace = g.str("namespace", "kube-system")
	s.serviceAccount = g.str("service_account", "karpenter")
	if g.boolean("create_iam_role", true) {
		m.karpenterController(in, s, g, clusterName, add)
	}
	karpenterNode(in, s, g, clusterName, add)
}

// karpenterV19 synthesizes what v19 of the karpenter sub-module creates: the
// node role and its instance profile, and the IRSA role of the controller's
// service accounts.
func (m *modInst) karpenterV19(in modIn, s *semModule, g groupIn, clusterName string, add func(*resInst)) {
	K := in.ci.addr
	if g.boolean("create_iam_role", true) {
		r := newResInst(K+".aws_iam_role.this[0]", "managed", "aws_iam_role", "this", s.origin)
		name := g.str("iam_role_name", "Karpenter-"+clusterName)
		r.setName(name, g.boolean("iam_role_use_name_prefix", true))
		r.vals["path"] = g.str("iam_role_path", "/")
		r.vals["assume_role_policy"] = trustPolicy("Service", "ec2.amazonaws.com")
		add(r)
		s.nodeRole, s.nodeRoleCreated = cluster.Unknown(K+".role_arn"), true
	} else {
		s.nodeRole = g.str("iam_role_arn", "")
	}
	if g.boolean("create_instance_profile", true) {
		p := newResInst(K+".aws_iam_instance_profile.this[0]", "managed", "aws_iam_instance_profile", "this", s.origin)
		p.vals["role"] = cluster.Unknown(K + ".role_name")
		if !s.nodeRoleCreated {
			p.vals["role"] = s.nodeRole
		}
		add(p)
	}
	sas := []string{"karpenter:karpenter"}
	if v, ok := g.goVal("irsa_namespace_service_accounts"); ok {
		sas = strList(v)
	}
	if g.boolean("create_irsa", true) {
		r := newResInst(K+".aws_iam_role.irsa[0]", "managed", "aws_iam_role", "irsa", s.origin)
		name := g.str("irsa_name", "KarpenterIRSA-"+clusterName)
		r.setName(name, g.boolean("irsa_use_name_prefix", true))
		r.vals["path"] = g.str("irsa_path", "/")
		oidc := g.str("irsa_oidc_provider_arn", "")
		if oidc == "" {
			oidc = cluster.Unknown(K + ".irsa_oidc_provider_arn")
		}
		r.vals["assume_role_policy"] = trustPolicy("Federated", oidc)
		add(r)
		s.controllerRole, s.ctrlCreated = cluster.Unknown(K+".irsa_arn"), true
		m.irsaServiceAccounts(sas, s.controllerRole, in.origin("irsa_namespace_service_accounts"))
	}
	if len(sas) > 0 {
		s.namespace, s.serviceAccount, _ = strings.Cut(sas[0], ":")
	}
}

// karpenterController synthesizes the controller role of v20 and v21, trusted
// by EKS Pod Identity (v21 always, v20 unless disabled) and by IRSA (v20 when
// enabled), with its pod identity association.
func (m *modInst) karpenterController(in modIn, s *semModule, g groupIn, clusterName string, add func(*resInst)) {
	K := in.ci.addr
	r := newResInst(K+".aws_iam_role.controller[0]", "managed", "aws_iam_role", "controller", s.origin)
	name := g.str("iam_role_name", "KarpenterController")
	r.setName(name, g.boolean("iam_role_use_name_prefix", true))
	r.vals["path"] = g.str("iam_role_path", "/")
	var stmts []any
	if s.major >= 21 || g.boolean("enable_pod_identity", true) {
		stmts = append(stmts, map[string]any{"Effect": "Allow", "Action": []any{"sts:AssumeRole", "sts:TagSession"}, "Principal": map[string]any{"Service": "pods.eks.amazonaws.com"}})
	}
	irsa := s.major == 20 && g.boolean("enable_irsa", false)
	if irsa {
		oidc := g.str("irsa_oidc_provider_arn", "")
		if oidc == "" {
			oidc = cluster.Unknown(K + ".irsa_oidc_provider_arn")
		}
		stmts = append(stmts, map[string]any{"Effect": "Allow", "Action": "sts:AssumeRoleWithWebIdentity", "Principal": map[string]any{"Federated": oidc}})
	}
	doc, _ := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": stmts})
	r.vals["assume_role_policy"] = string(doc)
	add(r)
	s.controllerRole, s.ctrlCreated = cluster.Unknown(K+".iam_role_arn"), true
	podIdentityDefault := s.major >= 21
	if pi, _ := in.boolean("create_pod_identity_association", podIdentityDefault); pi {
		p := newResInst(K+".aws_eks_pod_identity_association.karpenter[0]", "managed", "aws_eks_pod_identity_association", "karpenter", in.origin("create_pod_identity_association"))
		p.vals["namespace"] = s.namespace
		p.vals["service_account"] = s.serviceAccount
		p.vals["role_arn"] = s.controllerRole
		p.vals["cluster_name"] = clusterName
		add(p)
	}
	if irsa {
		sas := []string{"karpenter:karpenter"}
		if v, ok := g.goVal("irsa_namespace_service_accounts"); ok {
			sas = strList(v)
		}
		m.irsaServiceAccounts(sas, s.controllerRole, in.origin("irsa_namespace_service_accounts"))
	}
}

// karpenterNode synthesizes the node role of v20 and v21 (or takes the one
// given), its access entry and, when asked for, its instance profile.
func karpenterNode(in modIn, s *semModule, g groupIn, clusterName string, add func(*resInst)) {
	K := in.ci.addr
	if g.boolean("create_node_iam_role", true) {
		r := newResInst(K+".aws_iam_role.node[0]", "managed", "aws_iam_role", "node", s.origin)
		name := g.str("node_iam_role_name", "")
		if name == "" {
			name = "Karpenter-" + clusterName
		}
		r.setName(name, g.boolean("node_iam_role_use_name_prefix", true))
		r.vals["path"] = g.str("node_iam_role_path", "/")
		r.vals["assume_role_policy"] = trustPolicy("Service", "ec2.amazonaws.com")
		add(r)
		s.nodeRole, s.nodeRoleCreated = cluster.Unknown(K+".node_iam_role_arn"), true
	} else {
		s.nodeRole = g.str("node_iam_role_arn", "")
	}
	if g.boolean("create_access_entry", true) {
		e := newResInst(K+".aws_eks_access_entry.node[0]", "managed", "aws_eks_access_entry", "node", in.origin("create_access_entry"))
		e.vals["principal_arn"] = s.nodeRole
		e.vals["type"] = g.str("access_entry_type", cluster.AccessEC2Linux)
		e.vals["cluster_name"] = clusterName
		e.x.implicit = true
		add(e)
	}
	if g.boolean("create_instance_profile", false) {
		p := newResInst(K+".aws_iam_instance_profile.this[0]", "managed", "aws_iam_instance_profile", "this", s.origin)
		p.vals["role"] = cluster.Unknown(K + ".node_iam_role_name")
		if !s.nodeRoleCreated {
			p.vals["role"] = s.nodeRole
		}
		add(p)
	}
}

func (m *modInst) irsaServiceAccounts(sas []string, role string, org cluster.Origin) {
	for _, sa := range sas {
		ns, name, _ := strings.Cut(sa, ":")
		m.l.serviceAccounts = append(m.l.serviceAccounts, cluster.ServiceAccountIdentity{Namespace: ns, Name: name, RoleARN: role, Mechanism: "irsa", Origin: org})
	}
}

// emptyCollection reports whether v is known to hold nothing: null, or an
// empty map, object, list or tuple.
func emptyCollection(v cty.Value) bool {
	if !v.IsWhollyKnown() {
		return false
	}
	if v.IsNull() {
		return true
	}
	t := v.Type()
	if t.IsMapType() || t.IsObjectType() || t.IsListType() || t.IsTupleType() || t.IsSetType() {
		return v.LengthInt() == 0
	}
	return false
}
