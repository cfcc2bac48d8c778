package terraform

import (
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// What a module call writes is kept as written, for the check that compares it
// with what the module's release reads: the arguments, and the keys inside their
// values where the values are written out (object constructors, merge() of
// them, the locals that hold them). What is computed is not followed.

// catalogModule names a call's module as the catalog knows it, with the version
// constraint of the release the call uses; ok is false for a module the catalog
// does not describe, or a local copy of one (whose variables are on disk).
func catalogModule(call *moduleCall) (module, constraint string, ok bool) {
	src := call.source
	switch {
	case src == "" || isLocalSource(src):
		return "", "", false
	case blueprintsRE.MatchString(src):
		if mm := blueprintsRE.FindStringSubmatch(src); mm != nil && mm[1] != "" {
			if r := refRE.FindStringSubmatch(mm[1]); r != nil {
				return "aws-ia/eks-blueprints-addons", "= " + strings.TrimPrefix(r[1], "v"), true
			}
		}
		return "aws-ia/eks-blueprints-addons", call.version, true
	}
	if mm := registryRE.FindStringSubmatch(src); mm != nil {
		module = "terraform-aws-modules/eks"
		if mm[1] != "" {
			module += "//modules/" + mm[1]
		}
		return module, call.version, true
	}
	if mm := gitRE.FindStringSubmatch(src); mm != nil {
		module = "terraform-aws-modules/eks"
		if mm[1] != "" {
			module += "//modules/" + mm[1]
		}
		if r := refRE.FindStringSubmatch(mm[2]); r != nil {
			return module, "= " + strings.TrimPrefix(r[1], "v"), true
		}
		return module, "", true
	}
	return "", "", false
}

// maxWrittenDepth bounds how deep into a value keys are recorded.
const maxWrittenDepth = 8

// writtenCall records a call of a module the catalog describes.
func (m *modInst) writtenCall(call *moduleCall) *cluster.ModuleCall {
	module, constraint, ok := catalogModule(call)
	if !ok {
		return nil
	}
	mc := &cluster.ModuleCall{
		Address: m.cfgPrefix + "module." + call.name, Module: module, Constraint: constraint,
		Origin: originOf(call.block.DefRange()),
	}
	for _, name := range sortedAttrNames(call.block.Body.Attributes) {
		if metaArgs[name] {
			continue
		}
		a := call.block.Body.Attributes[name]
		mc.Keys = append(mc.Keys, cluster.WrittenKey{Key: name, Origin: originOf(a.NameRange), InCall: true, Value: m.l.rawText(a.Expr.Range())})
		m.writtenKeys(mc, a.Expr, []string{name}, true, 0, map[string]bool{})
	}
	return mc
}

// writtenKeys records the keys an expression writes at path.
func (m *modInst) writtenKeys(mc *cluster.ModuleCall, e hclsyntax.Expression, path []string, inCall bool, depth int, seen map[string]bool) {
	if depth > maxWrittenDepth {
		return
	}
	switch x := e.(type) {
	case *hclsyntax.ObjectConsExpr:
		for _, it := range x.Items {
			key, ok := staticKey(it.KeyExpr)
			if !ok {
				continue
			}
			mc.Keys = append(mc.Keys, cluster.WrittenKey{Path: path, Key: key, Origin: originOf(it.KeyExpr.Range()), InCall: inCall, Value: m.l.rawText(it.ValueExpr.Range())})
			m.writtenKeys(mc, it.ValueExpr, append(append([]string(nil), path...), key), inCall, depth+1, seen)
		}
	case *hclsyntax.FunctionCallExpr:
		if x.Name == "merge" {
			for _, a := range x.Args {
				m.writtenKeys(mc, a, path, inCall, depth+1, seen)
			}
		}
	case *hclsyntax.ConditionalExpr:
		m.writtenKeys(mc, x.TrueResult, path, inCall, depth+1, seen)
		m.writtenKeys(mc, x.FalseResult, path, inCall, depth+1, seen)
	case *hclsyntax.ParenthesesExpr:
		m.writtenKeys(mc, x.Expression, path, inCall, depth+1, seen)
	case *hclsyntax.ScopeTraversalExpr:
		// local.x, once each: a local written out is as good as the value.
		t := x.Traversal
		if len(t) != 2 || t.RootName() != "local" {
			return
		}
		attr, ok := t[1].(hcl.TraverseAttr)
		if !ok || seen[attr.Name] {
			return
		}
		if a := m.cfg.locals[attr.Name]; a != nil {
			seen[attr.Name] = true
			m.writtenKeys(mc, a.Expr, path, false, depth+1, seen)
		}
	}
}

func sortedAttrNames(attrs hclsyntax.Attributes) []string {
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// rawText is the source of a range as written, or "" when it is not known.
func (l *loader) rawText(rng hcl.Range) string {
	src := l.files[rng.Filename]
	if rng.Start.Byte < 0 || rng.End.Byte > len(src) || rng.Start.Byte >= rng.End.Byte {
		return ""
	}
	return string(src[rng.Start.Byte:rng.End.Byte])
}

// RenameKeyEdit renames a key written in a module call (an argument, or a key
// inside an argument's object), keeping its value as written: the key under
// the new name, the old one removed (null). ok is false for a key not written
// in the call itself.
func RenameKeyEdit(mc *cluster.ModuleCall, k cluster.WrittenKey, to string) (cluster.Edit, bool) {
	if !k.InCall || strings.TrimSpace(k.Value) == "" || mc.Origin.File == "" || mc.Origin.Line <= 0 {
		return cluster.Edit{}, false
	}
	body := MapKey(to) + " = " + k.Value + "\n" + MapKey(k.Key) + " = null\n"
	for i := len(k.Path) - 1; i >= 0; i-- {
		body = MapKey(k.Path[i]) + " = {\n" + body + "}\n"
	}
	return cluster.Edit{File: mc.Origin.File, Line: mc.Origin.Line, Format: cluster.FormatHCL, Text: body}, true
}
