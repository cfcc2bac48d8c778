package cluster

import "sort"

// ValuesKeys lists the dotted keys of the leaves of Helm values ("settings.clusterName"),
// sorted; keys not known before apply and null values are left out.
func ValuesKeys(values map[string]any) []string {
	var out []string
	var walk func(m map[string]any, prefix string)
	walk = func(m map[string]any, prefix string) {
		for k, v := range m {
			if IsUnknown(k) || v == nil {
				continue
			}
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
				walk(sub, key)
				continue
			}
			out = append(out, key)
		}
	}
	walk(values, "")
	sort.Strings(out)
	return out
}
