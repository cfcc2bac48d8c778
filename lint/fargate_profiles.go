package lint

import (
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/manifest"
	"github.com/eksdoctor/eksdoctor/source/terraform"
)

// What a Fargate fix changes, said once; the format that declares the profile
// (Decl) writes it: source/manifest for eksctl, source/terraform for resources,
// module entries and sub-module calls.

// addSelectorEdit adds a selector to a profile, or, when the profile already has
// five (EKS takes no more), declares a second profile with it.
func addSelectorEdit(m *cluster.Model, fp *cluster.FargateProfile, sel cluster.FargateSelector) (Edit, bool) {
	if len(fp.Selectors) >= maxFargateSelectors {
		return newProfileBeside(m, fp, fp.Name+"-2", sel, true)
	}
	if fp.Decl.Kind == cluster.DeclEksctl {
		return manifest.AddFargateSelector(fp, sel)
	}
	return terraform.AddFargateSelector(m.Terraform, fp, sel)
}

// newProfileEdit declares a Fargate profile next to the existing ones.
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
	return newProfileBeside(m, fps[0], name, sel, false)
}

// newProfileBeside declares a profile where another is declared; withRole
// gives it the other's pod execution role where the format repeats it.
func newProfileBeside(m *cluster.Model, beside *cluster.FargateProfile, name string, sel cluster.FargateSelector, withRole bool) (Edit, bool) {
	if beside.Decl.Kind == cluster.DeclEksctl {
		return manifest.NewFargateProfile(beside, name, sel, withRole)
	}
	return terraform.NewFargateProfile(m.Terraform, beside, name, sel)
}

// splitProfileEdit moves the selectors beyond the fifth to a new profile.
func splitProfileEdit(m *cluster.Model, fp *cluster.FargateProfile) (Edit, bool) {
	keep, move := fp.Selectors[:maxFargateSelectors], fp.Selectors[maxFargateSelectors:]
	if len(move) > maxFargateSelectors {
		return Edit{}, false
	}
	if fp.Decl.Kind == cluster.DeclEksctl {
		return manifest.SplitFargateProfile(fp, keep, move, fp.Name+"-2")
	}
	return terraform.SplitFargateProfile(m.Terraform, fp, keep, move, fp.Name+"-2")
}
