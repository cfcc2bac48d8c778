package lint

import (
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// Helpers for the JSON-like values of Helm releases and add-ons.

func joinKey(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
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

// nest wraps a value under a dotted path: nest("spec.template", v) = {spec: {template: v}}.
func nest(path string, v any) map[string]any {
	m := map[string]any{}
	setPath(m, path, v)
	return m
}

func deletePath(m map[string]any, key string) {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	delete(m, parts[len(parts)-1])
}
