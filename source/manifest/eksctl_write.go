package manifest

import (
	"github.com/eksdoctor/eksdoctor/cluster"
)

// Fargate profiles as eksctl declares them: items of the ClusterConfig's
// fargateProfiles list. Each change is a patch of the ClusterConfig holding the
// items it changes or adds, each by its name (ApplyYAML merges a
// ClusterConfig's named lists by name), so that the changes of two profiles
// compose.

// selectorItem renders a selector as eksctl writes it.
func selectorItem(s cluster.FargateSelector) map[string]any {
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

// listItemEdit rewrites the list that declares an entry (Decl.List of
// Decl.Object): change receives a copy of the list and the entry's position
// and returns the new list, nil when it cannot make the change.
func listItemEdit(d cluster.Decl, change func(list []any, i int) []any) (cluster.Edit, bool) {
	o := d.Object
	if d.Kind != cluster.DeclEksctl || o == nil || o.Via != "" || !IsManifestFile(o.Origin.File) {
		return cluster.Edit{}, false
	}
	list, _ := cluster.CopyJSON(o.Get(d.List)).([]any)
	if d.Index < 0 || d.Index >= len(list) {
		return cluster.Edit{}, false
	}
	orig, _ := cluster.CopyJSON(o.Get(d.List)).([]any)
	out := change(list, d.Index)
	if out == nil {
		return cluster.Edit{}, false
	}
	if items, ok := changedItems(orig, out); ok && namedLists[d.List] {
		return PatchEdit(o, map[string]any{d.List: items}), true
	}
	return PatchEdit(o, map[string]any{d.List: out}), true
}

// changedItems lists, as merge patches keyed by name, the items of after that
// are new or differ from the item of the same name in before; ok is false when
// an item has no name, or one of before is gone.
func changedItems(before, after []any) ([]any, bool) {
	byName := map[string]map[string]any{}
	for _, it := range before {
		m, ok := it.(map[string]any)
		name, named := m["name"].(string)
		if !ok || !named {
			return nil, false
		}
		byName[name] = m
	}
	var out []any
	seen := map[string]bool{}
	for _, it := range after {
		m, ok := it.(map[string]any)
		name, named := m["name"].(string)
		if !ok || !named {
			return nil, false
		}
		seen[name] = true
		old, had := byName[name]
		if !had {
			out = append(out, m)
			continue
		}
		patch := map[string]any{"name": name}
		for k, v := range m {
			if !cluster.EqualJSON(old[k], v) {
				patch[k] = v
			}
		}
		for k := range old {
			if _, ok := m[k]; !ok {
				patch[k] = nil
			}
		}
		if len(patch) > 1 {
			out = append(out, patch)
		}
	}
	return out, len(seen) >= len(byName)
}

// AddFargateSelector appends a selector to a profile's selectors.
func AddFargateSelector(fp *cluster.FargateProfile, sel cluster.FargateSelector) (cluster.Edit, bool) {
	return listItemEdit(fp.Decl, func(list []any, i int) []any {
		item, ok := list[i].(map[string]any)
		if !ok {
			return nil
		}
		cur, _ := item["selectors"].([]any)
		item["selectors"] = append(cur, selectorItem(sel))
		return list
	})
}

// NewFargateProfile declares a profile after another in the list; withRole
// gives it the other's pod execution role when that one sets it.
func NewFargateProfile(beside *cluster.FargateProfile, name string, sel cluster.FargateSelector, withRole bool) (cluster.Edit, bool) {
	return listItemEdit(beside.Decl, func(list []any, i int) []any {
		np := map[string]any{"name": name, "selectors": []any{selectorItem(sel)}}
		if withRole {
			if item, ok := list[i].(map[string]any); ok && item["podExecutionRoleARN"] != nil {
				np["podExecutionRoleARN"] = item["podExecutionRoleARN"]
			}
		}
		return append(list, np)
	})
}

// SplitFargateProfile keeps the selectors keep in a profile and moves the
// selectors move to a new profile with the same pod execution role.
func SplitFargateProfile(fp *cluster.FargateProfile, keep, move []cluster.FargateSelector, name string) (cluster.Edit, bool) {
	return listItemEdit(fp.Decl, func(list []any, i int) []any {
		item, ok := list[i].(map[string]any)
		if !ok {
			return nil
		}
		var k, mv []any
		for _, s := range keep {
			k = append(k, selectorItem(s))
		}
		for _, s := range move {
			mv = append(mv, selectorItem(s))
		}
		item["selectors"] = k
		np := map[string]any{"name": name, "selectors": mv}
		if item["podExecutionRoleARN"] != nil {
			np["podExecutionRoleARN"] = item["podExecutionRoleARN"]
		}
		return append(list, np)
	})
}
