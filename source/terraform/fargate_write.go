package terraform

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// Fargate profiles as Terraform declares them: an aws_eks_fargate_profile
// resource, an entry of a terraform-aws-eks module's fargate_profiles, or a
// call of its fargate-profile sub-module. The loader says which
// (fargateDecl); the writers below change the profile there.

// fargateDecl says how the profile at an address is declared.
func fargateDecl(g *cluster.Graph, addr string) cluster.Decl {
	if g == nil {
		return cluster.Decl{}
	}
	if n, ok := g.Nodes[addr]; ok && n.Type == "aws_eks_fargate_profile" {
		return cluster.Decl{Kind: cluster.DeclResource, Block: addr}
	}
	call, ok := ModuleCall(addr)
	if !ok {
		return cluster.Decl{}
	}
	if strings.HasPrefix(addr, call+".module.fargate_profile[") {
		return cluster.Decl{Kind: cluster.DeclModuleEntry, Block: call}
	}
	if n, ok := g.Nodes[call]; ok && n.Type == "module" {
		return cluster.Decl{Kind: cluster.DeclModule, Block: call}
	}
	return cluster.Decl{}
}

// fargateDecls attaches its declaration to every Fargate profile the
// configuration declares.
func (b *builder) fargateDecls() {
	for _, fp := range b.m.FargateProfiles {
		if fp.Decl.Kind == cluster.DeclUnknown {
			fp.Decl = fargateDecl(b.m.Terraform, fp.Address)
		}
	}
}

// selectorHCL renders a selector as an object of a selectors list.
func selectorHCL(s cluster.FargateSelector) string {
	if len(s.Labels) == 0 {
		return "{ namespace = " + StringExpr(s.Namespace) + " }"
	}
	return "{ namespace = " + StringExpr(s.Namespace) + ", labels = { " + labelsHCL(s.Labels) + " } }"
}

func labelsHCL(labels map[string]string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		out = append(out, StringExpr(k)+" = "+StringExpr(labels[k]))
	}
	return strings.Join(out, ", ")
}

func selectorsHCL(sels []cluster.FargateSelector) string {
	var b strings.Builder
	b.WriteString("[\n")
	for _, s := range sels {
		b.WriteString("  " + selectorHCL(s) + ",\n")
	}
	b.WriteString("]")
	return b.String()
}

// AddFargateSelector adds a selector to a profile where it is declared: the
// selectors of its fargate_profiles entry, a selector block of its resource,
// the selectors of its sub-module call. ok is false when that cannot be
// written.
func AddFargateSelector(g *cluster.Graph, fp *cluster.FargateProfile, sel cluster.FargateSelector) (cluster.Edit, bool) {
	sels := append(append([]cluster.FargateSelector(nil), fp.Selectors...), sel)
	switch fp.Decl.Kind {
	case cluster.DeclModuleEntry:
		if fp.Origin.Line <= 0 {
			return cluster.Edit{}, false
		}
		return cluster.Edit{File: fp.Origin.File, Line: fp.Origin.Line, Format: cluster.FormatHCL, Text: "selectors = " + selectorsHCL(sels) + "\n"}, true
	case cluster.DeclResource:
		text := "selector {\n  namespace = " + StringExpr(sel.Namespace) + "\n"
		if len(sel.Labels) > 0 {
			text += "  labels = { " + labelsHCL(sel.Labels) + " }\n"
		}
		return BlockEdit(g, fp.Decl.Block, text+"}\n")
	case cluster.DeclModule:
		return BlockEdit(g, fp.Decl.Block, "selectors = "+selectorsHCL(sels)+"\n")
	}
	return cluster.Edit{}, false
}

// NewFargateProfile declares a profile beside another: a new entry of the
// same fargate_profiles input. ok is false when the other is not declared
// that way.
func NewFargateProfile(g *cluster.Graph, beside *cluster.FargateProfile, name string, sel cluster.FargateSelector) (cluster.Edit, bool) {
	if beside.Decl.Kind != cluster.DeclModuleEntry {
		return cluster.Edit{}, false
	}
	return BlockEdit(g, beside.Decl.Block, fmt.Sprintf("fargate_profiles = {\n  %s = {\n    selectors = [%s]\n  }\n}\n", MapKey(name), selectorHCL(sel)))
}

// SplitFargateProfile keeps the selectors keep in a profile and moves the
// selectors move to a new profile beside it.
func SplitFargateProfile(g *cluster.Graph, fp *cluster.FargateProfile, keep, move []cluster.FargateSelector, name string) (cluster.Edit, bool) {
	if fp.Decl.Kind != cluster.DeclModuleEntry {
		return cluster.Edit{}, false
	}
	return BlockEdit(g, fp.Decl.Block, fmt.Sprintf("fargate_profiles = {\n  %s = {\n    selectors = %s\n  }\n  %s = {\n    selectors = %s\n  }\n}\n", MapKey(fp.Name), selectorsHCL(keep), MapKey(name), selectorsHCL(move)))
}
