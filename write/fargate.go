package write

import (
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/manifest"
	"github.com/eksdoctor/eksdoctor/source/terraform"
)

// What a Fargate fix changes, said once; the format that declares the profile
// (Decl) writes it: source/manifest for eksctl, source/terraform for
// resources, module entries and sub-module calls.

// MaxFargateSelectors is the EKS limit on selectors per profile.
const MaxFargateSelectors = 5

// AddFargateSelector adds a selector to a profile, or, when the profile
// already has five (EKS takes no more), declares a second profile with it.
func AddFargateSelector(m *cluster.Model, fp *cluster.FargateProfile, sel cluster.FargateSelector) (cluster.Edit, bool) {
	if len(fp.Selectors) >= MaxFargateSelectors {
		return NewFargateProfile(m, fp, fp.Name+"-2", sel, true)
	}
	if fp.Decl.Kind == cluster.DeclEksctl {
		return manifest.AddFargateSelector(fp, sel)
	}
	return terraform.AddFargateSelector(m.Terraform, fp, sel)
}

// NewFargateProfile declares a profile with one selector where another is
// declared; withRole gives it the other's pod execution role where the format
// repeats it.
func NewFargateProfile(m *cluster.Model, beside *cluster.FargateProfile, name string, sel cluster.FargateSelector, withRole bool) (cluster.Edit, bool) {
	if beside.Decl.Kind == cluster.DeclEksctl {
		return manifest.NewFargateProfile(beside, name, sel, withRole)
	}
	return terraform.NewFargateProfile(m.Terraform, beside, name, sel)
}

// SplitFargateProfile moves the selectors of a profile beyond the fifth to a
// new profile; ok is false when they would be too many for one.
func SplitFargateProfile(m *cluster.Model, fp *cluster.FargateProfile) (cluster.Edit, bool) {
	keep, move := fp.Selectors[:MaxFargateSelectors], fp.Selectors[MaxFargateSelectors:]
	if len(move) > MaxFargateSelectors {
		return cluster.Edit{}, false
	}
	if fp.Decl.Kind == cluster.DeclEksctl {
		return manifest.SplitFargateProfile(fp, keep, move, fp.Name+"-2")
	}
	return terraform.SplitFargateProfile(m.Terraform, fp, keep, move, fp.Name+"-2")
}
