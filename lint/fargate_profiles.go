package lint

import (
	"fmt"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/terraform"
)

func selectorMap(s cluster.FargateSelector) map[string]any {
	out := map[string]any{"namespace": s.Namespace}
	if len(s.Labels) > 0 {
		labels := map[string]any{}
		for k, v := range s.Labels {
			labels[k] = v
		}
		out["labels"] = labels
	}
	return out
}

func hclSelector(s cluster.FargateSelector) string {
	if len(s.Labels) == 0 {
		return "{ namespace = " + terraform.StringExpr(s.Namespace) + " }"
	}
	var labels []string
	for _, k := range labelKeys(s.Labels) {
		labels = append(labels, terraform.StringExpr(k)+" = "+terraform.StringExpr(s.Labels[k]))
	}
	return "{ namespace = " + terraform.StringExpr(s.Namespace) + ", labels = { " + strings.Join(labels, ", ") + " } }"
}

func hclSelectors(sels []cluster.FargateSelector) string {
	var b strings.Builder
	b.WriteString("[\n")
	for _, s := range sels {
		b.WriteString("  " + hclSelector(s) + ",\n")
	}
	b.WriteString("]")
	return b.String()
}

// profileKind tells how a Fargate profile is declared.
type profileDecl int

const (
	declUnknown     profileDecl = iota
	declEksctl                  // an eksctl fargateProfiles entry
	declModuleEntry             // a fargate_profiles entry of the terraform-aws-eks module
	declResource                // an aws_eks_fargate_profile resource
	declSubmodule               // a call of the fargate-profile sub-module
)

func profileDeclaration(m *cluster.Model, fp *cluster.FargateProfile) (profileDecl, string) {
	switch {
	case strings.HasPrefix(fp.Address, "fargateProfiles."):
		return declEksctl, ""
	case m.Terraform == nil:
		return declUnknown, ""
	}
	if n, ok := m.Terraform.Nodes[fp.Address]; ok && n.Type == "aws_eks_fargate_profile" {
		return declResource, fp.Address
	}
	call, ok := terraform.ModuleCall(fp.Address)
	if !ok {
		return declUnknown, ""
	}
	if strings.HasPrefix(fp.Address, call+".module.fargate_profile[") {
		return declModuleEntry, call
	}
	if n, ok := m.Terraform.Nodes[call]; ok && n.Type == "module" {
		return declSubmodule, call
	}
	return declUnknown, ""
}

// addSelectorEdit adds a selector to a profile, or, when the profile already has
// five, declares a second profile with it.
func addSelectorEdit(m *cluster.Model, fp *cluster.FargateProfile, sel cluster.FargateSelector) (Edit, bool) {
	full := len(fp.Selectors) >= maxFargateSelectors
	sels := append(append([]cluster.FargateSelector(nil), fp.Selectors...), sel)
	decl, addr := profileDeclaration(m, fp)
	switch decl {
	case declEksctl:
		return eksctlProfiles(m, fp, func(list []any, i int) []any {
			if full {
				np := map[string]any{"name": fp.Name + "-2", "selectors": []any{selectorMap(sel)}}
				if item, ok := list[i].(map[string]any); ok && item["podExecutionRoleARN"] != nil {
					np["podExecutionRoleARN"] = item["podExecutionRoleARN"]
				}
				return append(list, np)
			}
			item, ok := list[i].(map[string]any)
			if !ok {
				return nil
			}
			cur, _ := item["selectors"].([]any)
			item["selectors"] = append(cur, selectorMap(sel))
			return list
		})
	case declModuleEntry:
		if full {
			return blockEdit(m, addr, fmt.Sprintf("fargate_profiles = {\n  %s = {\n    selectors = [%s]\n  }\n}\n", terraform.MapKey(fp.Name+"-2"), hclSelector(sel)))
		}
		if fp.Origin.Line <= 0 {
			return Edit{}, false
		}
		return Edit{File: fp.Origin.File, Line: fp.Origin.Line, Format: FormatHCL, Text: "selectors = " + hclSelectors(sels) + "\n"}, true
	case declResource:
		if full {
			return Edit{}, false
		}
		text := "selector {\n  namespace = " + terraform.StringExpr(sel.Namespace) + "\n"
		if len(sel.Labels) > 0 {
			var labels []string
			for _, k := range labelKeys(sel.Labels) {
				labels = append(labels, terraform.StringExpr(k)+" = "+terraform.StringExpr(sel.Labels[k]))
			}
			text += "  labels = { " + strings.Join(labels, ", ") + " }\n"
		}
		return blockEdit(m, addr, text+"}\n")
	case declSubmodule:
		if full {
			return Edit{}, false
		}
		return blockEdit(m, addr, "selectors = "+hclSelectors(sels)+"\n")
	}
	return Edit{}, false
}

// newProfileEdit declares a Fargate profile next to the existing ones: an eksctl
// fargateProfiles entry, or a fargate_profiles entry of the terraform-aws-eks
// module.
func newProfileEdit(m *cluster.Model, name string, sel cluster.FargateSelector) (Edit, bool) {
	for _, fp := range m.FargateProfiles {
		if fp.Name == name {
			return Edit{}, false
		}
	}
	fps := sortedProfiles(m)
	if len(fps) == 0 {
		return Edit{}, false
	}
	decl, addr := profileDeclaration(m, fps[0])
	switch decl {
	case declEksctl:
		return eksctlProfiles(m, fps[0], func(list []any, _ int) []any {
			return append(list, map[string]any{"name": name, "selectors": []any{selectorMap(sel)}})
		})
	case declModuleEntry:
		return blockEdit(m, addr, fmt.Sprintf("fargate_profiles = {\n  %s = {\n    selectors = [%s]\n  }\n}\n", terraform.MapKey(name), hclSelector(sel)))
	}
	return Edit{}, false
}

// splitProfileEdit moves the selectors beyond the fifth to a new profile.
func splitProfileEdit(m *cluster.Model, fp *cluster.FargateProfile) (Edit, bool) {
	keep, move := fp.Selectors[:maxFargateSelectors], fp.Selectors[maxFargateSelectors:]
	if len(move) > maxFargateSelectors {
		return Edit{}, false
	}
	decl, addr := profileDeclaration(m, fp)
	switch decl {
	case declEksctl:
		return eksctlProfiles(m, fp, func(list []any, i int) []any {
			item, ok := list[i].(map[string]any)
			if !ok {
				return nil
			}
			var k, mv []any
			for _, s := range keep {
				k = append(k, selectorMap(s))
			}
			for _, s := range move {
				mv = append(mv, selectorMap(s))
			}
			item["selectors"] = k
			np := map[string]any{"name": fp.Name + "-2", "selectors": mv}
			if item["podExecutionRoleARN"] != nil {
				np["podExecutionRoleARN"] = item["podExecutionRoleARN"]
			}
			return append(list, np)
		})
	case declModuleEntry:
		return blockEdit(m, addr, fmt.Sprintf("fargate_profiles = {\n  %s = {\n    selectors = %s\n  }\n  %s = {\n    selectors = %s\n  }\n}\n", terraform.MapKey(fp.Name), hclSelectors(keep), terraform.MapKey(fp.Name+"-2"), hclSelectors(move)))
	}
	return Edit{}, false
}

// eksctlProfiles rewrites the fargateProfiles list of an eksctl ClusterConfig.
func eksctlProfiles(m *cluster.Model, fp *cluster.FargateProfile, change func(list []any, i int) []any) (Edit, bool) {
	var idx int
	if _, err := fmt.Sscanf(fp.Address, "fargateProfiles.%d", &idx); err != nil {
		return Edit{}, false
	}
	o := eksctlObject(m)
	if o == nil {
		return Edit{}, false
	}
	list := copyJSONList(o.Get("fargateProfiles"))
	if idx < 0 || idx >= len(list) {
		return Edit{}, false
	}
	out := change(list, idx)
	if out == nil {
		return Edit{}, false
	}
	return objectPatch(m, o, map[string]any{"fargateProfiles": out})
}
