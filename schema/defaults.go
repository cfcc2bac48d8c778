package schema

import (
	"reflect"
	"sort"
	"strconv"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// Default is a field the API server fills in when the object leaves it out.
type Default struct {
	// Path is the dotted path of the defaulted field.
	Path string
	// Value is what the API server stores there.
	Value any
}

// Defaults returns the fields the API server would default when the object is
// created, by the same schema Validate uses ("spec.disruption" defaulted to
// {budgets: [{nodes: 10%}], consolidateAfter: 0s, consolidationPolicy:
// WhenEmptyOrUnderutilized}), sorted by path. Unknown fields are pruned first, as the
// API server does, so a dropped spec.disruption.expireAfter shows up as the default
// spec.template.spec.expireAfter.
func Defaults(obj *cluster.Object) []Default {
	gvk, ok := objectGVK(obj)
	if !ok {
		return nil
	}
	c, err := lookup(releaseOf(gvk), gvk)
	if err != nil || c == nil {
		return nil
	}
	defaults := prepare(obj.Content, gvk, c, true).defaults
	out := make([]Default, 0, len(defaults))
	for p, v := range defaults {
		out = append(out, Default{Path: p, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// defaultedPaths lists the paths present in after but not in before, stopping at the
// first missing level: a defaulted object is one entry, not one per field.
func defaultedPaths(before, after any, prefix string) map[string]any {
	out := map[string]any{}
	collectDefaults(before, after, prefix, out, 0)
	return out
}

func collectDefaults(before, after any, prefix string, out map[string]any, depth int) {
	if depth > maxDepth {
		return
	}
	switch a := after.(type) {
	case map[string]any:
		b, _ := before.(map[string]any)
		for k, av := range a {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			bv, ok := b[k]
			if !ok {
				out[p] = av
				continue
			}
			collectDefaults(bv, av, p, out, depth+1)
		}
	case []any:
		b, _ := before.([]any)
		for i, av := range a {
			if i >= len(b) {
				break
			}
			collectDefaults(b[i], av, joinIndex(prefix, i), out, depth+1)
		}
	default:
		if before == nil && after != nil && !reflect.DeepEqual(before, after) {
			out[prefix] = after
		}
	}
}

func joinIndex(prefix string, i int) string {
	if prefix == "" {
		return strconv.Itoa(i)
	}
	return prefix + "." + strconv.Itoa(i)
}
