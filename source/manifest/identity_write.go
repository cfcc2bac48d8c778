package manifest

import (
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// Who may join the cluster, as YAML declares it: eksctl iamIdentityMappings
// and accessConfig.accessEntries, and the mapRoles of an aws-auth ConfigMap.
// Each writer returns the merge patch of the declaring object; where that
// object is written (a manifest file, a kubectl_manifest body) decides how the
// patch is applied.

func sameMapping(item map[string]any, arnKey string, rm *cluster.RoleMapping) bool {
	arn, _ := item[arnKey].(string)
	user, _ := item["username"].(string)
	return arn == rm.RoleARN && user == rm.Username
}

func mappingItem(arnKey string, rm *cluster.RoleMapping) map[string]any {
	groups := make([]any, len(rm.Groups))
	for i, g := range rm.Groups {
		groups[i] = g
	}
	return map[string]any{arnKey: rm.RoleARN, "username": rm.Username, "groups": groups}
}

// editMappings replaces (or appends, old == nil; or removes, nu == nil) one
// mapping in a list of mapping items.
func editMappings(list []any, arnKey string, old, nu *cluster.RoleMapping) ([]any, bool) {
	out, _ := cluster.CopyJSON(list).([]any)
	if old == nil {
		return append(out, mappingItem(arnKey, nu)), true
	}
	for i, it := range out {
		item, ok := it.(map[string]any)
		if !ok || !sameMapping(item, arnKey, old) {
			continue
		}
		if nu == nil {
			return append(out[:i], out[i+1:]...), true
		}
		for k, v := range mappingItem(arnKey, nu) {
			item[k] = v
		}
		return out, true
	}
	return nil, false
}

// EksctlMappingsPatch rewrites one of an eksctl ClusterConfig's
// iamIdentityMappings.
func EksctlMappingsPatch(o *cluster.Object, old, nu *cluster.RoleMapping) (map[string]any, bool) {
	list, _ := o.Get("iamIdentityMappings").([]any)
	out, ok := editMappings(list, "arn", old, nu)
	if !ok {
		return nil, false
	}
	return map[string]any{"iamIdentityMappings": out}, true
}

// AwsAuthPatch rewrites one mapping of an aws-auth ConfigMap's mapRoles.
func AwsAuthPatch(o *cluster.Object, old, nu *cluster.RoleMapping) (map[string]any, bool) {
	raw, _ := o.Get("data.mapRoles").(string)
	var list []any
	if strings.TrimSpace(raw) != "" {
		if err := yaml.Unmarshal([]byte(raw), &list); err != nil {
			return nil, false
		}
	}
	out, ok := editMappings(list, "rolearn", old, nu)
	if !ok {
		return nil, false
	}
	return map[string]any{"data": map[string]any{"mapRoles": mapRolesText(out)}}, true
}

// mapRolesText renders mapRoles the way the aws-auth documentation writes it:
// rolearn, username, groups, in that order.
func mapRolesText(list []any) string {
	var b strings.Builder
	for _, it := range list {
		item, ok := it.(map[string]any)
		if !ok {
			continue
		}
		first := true
		line := func(k string, v any) {
			prefix := "  "
			if first {
				prefix = "- "
				first = false
			}
			b.WriteString(prefix + k + ": " + strings.TrimSpace(YAMLText(v)) + "\n")
		}
		for _, k := range []string{"rolearn", "username"} {
			if v, ok := item[k]; ok {
				line(k, v)
			}
		}
		if gs, ok := item["groups"].([]any); ok {
			if first {
				b.WriteString("- groups:\n")
				first = false
			} else {
				b.WriteString("  groups:\n")
			}
			for _, g := range gs {
				b.WriteString("  - " + strings.TrimSpace(YAMLText(g)) + "\n")
			}
		}
		var rest []string
		for k := range item {
			if k != "rolearn" && k != "username" && k != "groups" {
				rest = append(rest, k)
			}
		}
		sort.Strings(rest)
		for _, k := range rest {
			line(k, item[k])
		}
	}
	return b.String()
}

// accessEntriesPatch rewrites an eksctl ClusterConfig's accessEntries.
func accessEntriesPatch(o *cluster.Object, change func([]any) ([]any, bool)) (map[string]any, bool) {
	list, _ := o.Get("accessConfig.accessEntries").([]any)
	cp, _ := cluster.CopyJSON(list).([]any)
	out, ok := change(cp)
	if !ok {
		return nil, false
	}
	return map[string]any{"accessConfig": map[string]any{"accessEntries": out}}, true
}

// changeAccessEntry changes the entry of a principal.
func changeAccessEntry(o *cluster.Object, principal string, change func(item map[string]any)) (map[string]any, bool) {
	return accessEntriesPatch(o, func(list []any) ([]any, bool) {
		for _, it := range list {
			if item, ok := it.(map[string]any); ok && item["principalARN"] == principal {
				change(item)
				return list, true
			}
		}
		return nil, false
	})
}

// AccessEntryTypePatch makes the eksctl access entry of a principal of the
// given type, without Kubernetes groups or access policies.
func AccessEntryTypePatch(o *cluster.Object, principal, entryType string) (map[string]any, bool) {
	return changeAccessEntry(o, principal, func(item map[string]any) {
		item["type"] = entryType
		delete(item, "kubernetesGroups")
		delete(item, "accessPolicies")
	})
}

// AccessEntryPrincipalPatch gives the eksctl access entry of a principal to
// another.
func AccessEntryPrincipalPatch(o *cluster.Object, principal, to string) (map[string]any, bool) {
	return changeAccessEntry(o, principal, func(item map[string]any) { item["principalARN"] = to })
}

// NewAccessEntryPatch adds an eksctl access entry.
func NewAccessEntryPatch(o *cluster.Object, principal, entryType string) (map[string]any, bool) {
	return accessEntriesPatch(o, func(list []any) ([]any, bool) {
		e := map[string]any{"principalARN": principal, "type": entryType}
		if entryType == cluster.AccessEC2 {
			e["accessPolicies"] = []any{map[string]any{"policyARN": cluster.AutoNodePolicy, "accessScope": map[string]any{"type": "cluster"}}}
		}
		return append(list, e), true
	})
}

// EksctlItemPatch sets fields of the list item that declares an entry (a nil
// value removes the field).
func EksctlItemPatch(d cluster.Decl, fields map[string]any) (map[string]any, bool) {
	if d.Kind == cluster.DeclNew && d.Object != nil && IsClusterConfig(d.Object) {
		// A new item, appended to the list (made when there is none).
		list, _ := d.Object.Get(d.List).([]any)
		list = append(cluster.CopyJSON(list).([]any), map[string]any{})
		d = cluster.Decl{Kind: cluster.DeclEksctl, Object: d.Object, List: d.List, Index: len(list) - 1}
		return itemPatch(d, list, fields)
	}
	if d.Kind != cluster.DeclEksctl || d.Object == nil {
		return nil, false
	}
	list, ok := d.Object.Get(d.List).([]any)
	if !ok || d.Index < 0 || d.Index >= len(list) {
		return nil, false
	}
	return itemPatch(d, cluster.CopyJSON(list).([]any), fields)
}

// itemPatch sets fields of item d.Index of list, a copy of d.List. A named
// item (add-ons, node groups, Fargate profiles) is patched alone, by its name
// (ApplyYAML merges the lists of a ClusterConfig by name), so that the changes
// of two items compose; an unnamed one takes the whole list.
func itemPatch(d cluster.Decl, list []any, fields map[string]any) (map[string]any, bool) {
	entry, ok := list[d.Index].(map[string]any)
	if !ok {
		return nil, false
	}
	name, named := entry["name"].(string)
	if n, ok := fields["name"].(string); ok {
		name, named = n, true
	}
	if named && namedLists[d.List] {
		item := map[string]any{"name": name}
		for k, v := range fields {
			item[k] = v
		}
		return nestPatch(d.List, []any{item}), true
	}
	for k, v := range fields {
		if v == nil {
			delete(entry, k)
			continue
		}
		entry[k] = v
	}
	return nestPatch(d.List, list), true
}

// nestPatch wraps a value under a dotted path.
func nestPatch(path string, v any) map[string]any {
	keys := strings.Split(path, ".")
	out := map[string]any{keys[len(keys)-1]: v}
	for i := len(keys) - 2; i >= 0; i-- {
		out = map[string]any{keys[i]: out}
	}
	return out
}

// FromPodIdentityAssociation reports whether a service account's role comes
// from an eksctl iam.podIdentityAssociations entry.
func FromPodIdentityAssociation(id cluster.ServiceAccountIdentity) bool {
	return strings.HasPrefix(id.Origin.Path, "iam.podIdentityAssociations.")
}

// IRSAPatch moves a service account of an eksctl ClusterConfig from EKS Pod
// Identity (iam.podIdentityAssociations) to IRSA (iam.serviceAccounts, with
// withOIDC), keeping its role and policies.
func IRSAPatch(o *cluster.Object, namespace, name string) map[string]any {
	assocs, _ := cluster.CopyJSON(o.Get("iam.podIdentityAssociations")).([]any)
	sas, _ := cluster.CopyJSON(o.Get("iam.serviceAccounts")).([]any)
	var kept []any
	for _, it := range assocs {
		a, ok := it.(map[string]any)
		if !ok || a["namespace"] != namespace || a["serviceAccountName"] != name {
			kept = append(kept, it)
			continue
		}
		sa := map[string]any{"metadata": map[string]any{"name": name, "namespace": namespace}}
		for from, to := range map[string]string{"roleARN": "attachRoleARN", "roleName": "roleName", "permissionPolicyARNs": "attachPolicyARNs", "permissionPolicy": "attachPolicy", "wellKnownPolicies": "wellKnownPolicies"} {
			if v, ok := a[from]; ok {
				sa[to] = v
			}
		}
		sas = append(sas, sa)
	}
	iam := map[string]any{"withOIDC": true, "serviceAccounts": sas, "podIdentityAssociations": kept}
	if len(kept) == 0 {
		iam["podIdentityAssociations"] = nil
	}
	return map[string]any{"iam": iam}
}

// AutoModeNodePoolsPatch sets autoModeConfig.nodePools of an eksctl
// ClusterConfig.
func AutoModeNodePoolsPatch(o *cluster.Object, pools []string) (map[string]any, bool) {
	if !IsClusterConfig(o) {
		return nil, false
	}
	if _, ok := o.Get("autoModeConfig").(map[string]any); !ok {
		return nil, false
	}
	list := make([]any, len(pools))
	for i, p := range pools {
		list[i] = p
	}
	return map[string]any{"autoModeConfig": map[string]any{"nodePools": list}}, true
}
