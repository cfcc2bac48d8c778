package write

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/manifest"
	"github.com/eksdoctor/eksdoctor/source/terraform"
)

// Edits of the values and settings components are installed with: a Helm
// release's values (through the format that declares the release), an eksctl
// or Terraform add-on entry, and the JSON-like values they hold.

// ReleaseValues merges values into a release: at the helm_release (or chart,
// module input, Argo CD or Flux object) that declares it, or into the last
// values file given for a local chart. ok is false when the tool that
// installs the release chooses its values.
func ReleaseValues(r *cluster.HelmRelease, values map[string]any) (cluster.Edit, bool) {
	if r.InstalledBy != "" {
		// The tool that installs the release chooses its values.
		return cluster.Edit{}, false
	}
	if in := r.Input; in != nil {
		return terraform.ModuleValuesEdit(in, values), true
	}
	if r.Decl.Kind == cluster.DeclGitOps {
		return manifest.GitOpsValuesEdit(r.Decl, values)
	}
	e := cluster.Edit{File: r.Origin.File, Line: r.Origin.Line, Format: cluster.FormatValues, Text: YAMLText(values)}
	if r.Address == "" && r.ChartDir != "" {
		var files []string
		for _, o := range r.ValueOrigins {
			if o.File != "" {
				files = append(files, o.File)
			}
		}
		sort.Strings(files)
		if len(files) > 0 {
			e.File, e.Line = files[len(files)-1], 1
		}
	}
	return e, true
}

// ValuesFile merges a values patch into the values file at origin, where a
// release reads a value from: ok is false when origin is not a line of a
// values file of its own (a Terraform file, the object that declares the
// release).
func ValuesFile(r *cluster.HelmRelease, origin cluster.Origin, patch map[string]any) (cluster.Edit, bool) {
	inObject := r.Decl.Object != nil && origin.File == r.Decl.Object.Origin.File
	if !manifest.IsManifestFile(origin.File) || origin.Line <= 0 || inObject {
		return cluster.Edit{}, false
	}
	return cluster.Edit{File: origin.File, Line: origin.Line, Format: cluster.FormatValues, Text: YAMLText(patch)}, true
}

// FromPlan reports whether a release was read from a Terraform plan: the
// configuration that declares it is not among the inputs, so nothing can be
// written where it is declared.
func FromPlan(r *cluster.HelmRelease) bool {
	return r.Address != "" && !terraform.WrittenInConfig(r.Origin.File)
}

// SetBlockName renames the value a helm_release set block sets (the block at
// set, a set, set_list or set_sensitive origin).
func SetBlockName(set cluster.Origin, name string) cluster.Edit {
	return terraform.SetBlockNameEdit(set, name)
}

// ReleaseChartVersion sets the chart version of a release Terraform declares.
func ReleaseChartVersion(m *cluster.Model, r *cluster.HelmRelease, version string) (cluster.Edit, bool) {
	if m == nil {
		return cluster.Edit{}, false
	}
	return terraform.BlockEdit(m.Terraform, r.Address, "version = "+terraform.Quote(version)+"\n")
}

// Addon sets an add-on's version (when not empty) and configuration where the
// add-on is declared: the add-on block or map entry in Terraform, the entry of
// an eksctl ClusterConfig's addons list; an add-on EKS installs by itself is
// declared.
func Addon(m *cluster.Model, a *cluster.Addon, version string, config map[string]any) (cluster.Edit, bool) {
	if a.Decl.Kind == cluster.DeclEksctl || a.Decl.Kind == cluster.DeclNew && a.Decl.Object != nil {
		fields := map[string]any{"configurationValues": jsonText(config)}
		if a.Decl.Kind == cluster.DeclNew {
			fields["name"] = a.Name
		}
		if len(config) == 0 {
			fields["configurationValues"] = nil
		}
		if version != "" {
			fields["version"] = version
		}
		return EksctlAddonFields(m, a, fields)
	}
	return terraform.AddonEdit(a, version, config)
}

// AddonAfter sets an add-on's configuration as Addon does; an add-on EKS
// installs by itself that becomes a Terraform resource of its own is created
// after the graph nodes deps (the capacity its pods need).
func AddonAfter(m *cluster.Model, a *cluster.Addon, config map[string]any, deps []string) (cluster.Edit, bool) {
	if a.Decl.Kind == cluster.DeclNew && a.Decl.Object == nil {
		return terraform.NewAddonAfterEdit(a, config, deps)
	}
	return Addon(m, a, "", config)
}

// EksctlAddonFields sets fields of one entry of an eksctl ClusterConfig's
// addons list (a nil value removes the field); the patch carries the whole
// list, since a merge patch replaces lists.
func EksctlAddonFields(m *cluster.Model, a *cluster.Addon, fields map[string]any) (cluster.Edit, bool) {
	patch, ok := manifest.EksctlItemPatch(a.Decl, fields)
	if !ok {
		return cluster.Edit{}, false
	}
	return ObjectPatch(m, a.Decl.Object, patch)
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}
