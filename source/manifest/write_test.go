package manifest

import (
	"fmt"
	"testing"
)

// Snippets are remembered by their YAML tree: values that render differently
// never share a text, whatever was rendered before, and one rendered again
// reads as the first time.
func TestYAMLTextRemembersByTree(t *testing.T) {
	t.Parallel()
	cases := []struct {
		v    any
		want string
	}{
		{map[string]any{"value": "true"}, "value: \"true\"\n"},
		{map[string]any{"value": true}, "value: true\n"},
		{map[string]any{"value": "1"}, "value: \"1\"\n"},
		{map[string]any{"value": 1}, "value: 1\n"},
		{map[string]any{"value": nil}, "value: null\n"},
		{map[string]any{"values": []string{"a", "b"}}, "values:\n  - a\n  - b\n"},
		{map[string]any{"values": []any{"a:b"}}, "values:\n  - a:b\n"},
		{map[string]any{"effect": "NoSchedule", "key": "k", "operator": "Equal"}, "key: k\noperator: Equal\neffect: NoSchedule\n"},
	}
	for round := range 2 {
		for _, c := range cases {
			if got := YAMLText(c.v); got != c.want {
				t.Errorf("round %d: YAMLText(%#v) = %q, want %q", round, c.v, got, c.want)
			}
		}
	}
	// Past the bound the remembered texts are let go, and rendering goes on.
	for i := range maxRendered + 10 {
		v := map[string]any{"name": fmt.Sprint("n", i)}
		if got, want := YAMLText(v), fmt.Sprintf("name: n%d\n", i); got != want {
			t.Fatalf("YAMLText(%v) = %q, want %q", v, got, want)
		}
	}
	if n := len(rendered.m); n > maxRendered {
		t.Errorf("%d texts remembered, more than %d", n, maxRendered)
	}
	if got := YAMLText(cases[0].v); got != cases[0].want {
		t.Errorf("after the bound: %q, want %q", got, cases[0].want)
	}
}
