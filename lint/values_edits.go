package lint

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/manifest"
	"github.com/eksdoctor/eksdoctor/source/terraform"
)

// Edits of the values and settings components are installed with: a Helm release's values (through the format that declares the release), an eksctl add-on entry, and the JSON-like values they hold.

func joinKey(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// valuesEdit merges values into a release: at the helm_release (or chart) that
// declares it, or into the last values file given for a local chart.
func valuesEdit(r *cluster.HelmRelease, values map[string]any) (Edit, bool) {
	if r.InstalledBy != "" {
		// The tool that installs the release chooses its values.
		return Edit{}, false
	}
	if in := r.Input; in != nil {
		return terraform.ModuleValuesEdit(in, values), true
	}
	if r.Decl.Kind == cluster.DeclGitOps {
		return manifest.GitOpsValuesEdit(r.Decl, values)
	}
	e := Edit{File: r.Origin.File, Line: r.Origin.Line, Format: FormatValues, Text: yamlText(values)}
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

// eksctlAddonEdit sets a field of one entry of an eksctl ClusterConfig's addons
// list; the patch carries the whole list, since a merge patch replaces lists.
func eksctlAddonEdit(m *cluster.Model, a *cluster.Addon, field string, value any) (Edit, bool) {
	return eksctlAddonFields(m, a, map[string]any{field: value})
}

// eksctlAddonFields sets fields of one entry of an eksctl ClusterConfig's addons
// list (a nil value removes the field).
func eksctlAddonFields(m *cluster.Model, a *cluster.Addon, fields map[string]any) (Edit, bool) {
	patch, ok := manifest.EksctlItemPatch(a.Decl, fields)
	if !ok {
		return Edit{}, false
	}
	return objectPatch(m, a.Decl.Object, patch)
}

func lookupBool(m map[string]any, key string) (value, set bool) {
	v := cluster.Lookup(m, key)
	switch t := v.(type) {
	case bool:
		return t, true
	case string:
		switch strings.ToLower(t) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return false, false
}

// setPath sets a dotted key, creating maps on the way.
func setPath(m map[string]any, key string, v any) {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}
