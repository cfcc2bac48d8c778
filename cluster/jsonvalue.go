package cluster

import (
	"fmt"
	"math"
	"reflect"
)

// JSON-like values: the types the API server decodes JSON into, and RFC 7386 merge patches of them.

// MaxValueDepth bounds how deep objects are copied and searched; Kubernetes objects are far
// shallower, and the bound keeps hostile input from exhausting the stack.
const MaxValueDepth = 64

// Normalize deep-copies a JSON-like value into exactly the types the API server
// decodes JSON into (map[string]any, []any, string, int64, float64, bool, nil), so
// that validation never meets a Go type it does not expect. Whole floats become
// integers as they do when the API server decodes JSON.
func Normalize(v any, depth int) any {
	if depth > MaxValueDepth {
		return nil
	}
	switch t := v.(type) {
	case nil, string, bool, int64:
		return t
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = Normalize(e, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = Normalize(e, depth+1)
		}
		return out
	case map[string]string:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = e
		}
		return out
	case []string:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = e
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[fmt.Sprint(k)] = Normalize(e, depth+1)
		}
		return out
	case float64:
		return normalizeFloat(t)
	case float32:
		return normalizeFloat(float64(t))
	case int:
		return int64(t)
	case int8:
		return int64(t)
	case int16:
		return int64(t)
	case int32:
		return int64(t)
	case uint:
		return normalizeUint(uint64(t))
	case uint8:
		return int64(t)
	case uint16:
		return int64(t)
	case uint32:
		return int64(t)
	case uint64:
		return normalizeUint(t)
	default:
		return fmt.Sprint(t)
	}
}

func normalizeFloat(f float64) any {
	if f == math.Trunc(f) && f >= math.MinInt64 && f < math.MaxInt64 {
		return int64(f)
	}
	return f
}

func normalizeUint(u uint64) any {
	if u > math.MaxInt64 {
		return float64(u)
	}
	return int64(u)
}

// MergePatch applies a JSON merge patch (RFC 7386) to a copy of doc: objects
// merge key by key, null deletes, anything else replaces.
func MergePatch(doc, patch map[string]any) map[string]any {
	out, _ := Normalize(doc, 0).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	mergeInto(out, patch, 0)
	return out
}

func mergeInto(dst, patch map[string]any, depth int) {
	if depth > MaxValueDepth {
		return
	}
	for k, pv := range patch {
		if pv == nil {
			delete(dst, k)
			continue
		}
		pm, ok := pv.(map[string]any)
		if !ok {
			dst[k] = Normalize(pv, depth+1)
			continue
		}
		dm, ok := dst[k].(map[string]any)
		if !ok {
			dm = map[string]any{}
			dst[k] = dm
		}
		mergeInto(dm, pm, depth+1)
	}
}

// EqualJSON compares JSON-like values, treating integer and float forms of the
// same number as equal.
func EqualJSON(a, b any) bool {
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case float64:
			return float64(x) == y
		case int:
			return x == int64(y)
		}
	case float64:
		switch y := b.(type) {
		case int64:
			return x == float64(y)
		case int:
			return x == float64(y)
		}
	case int:
		return EqualJSON(int64(x), b)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !EqualJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if !EqualJSON(v, y[k]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
