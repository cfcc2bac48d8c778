package terraform

import "testing"

func TestHCLValue(t *testing.T) {
	got := Literal(map[string]any{
		"node": map[string]any{
			"tolerateAllTaints": false,
			"tolerations":       []any{map[string]any{"key": "karpenter.sh/disrupted", "operator": "Exists", "effect": "NoSchedule"}},
		},
		"a.b": "${x}",
	}, 0)
	want := `{
  "a.b" = "$${x}"
  node = {
    tolerateAllTaints = false
    tolerations = [
      {
        key = "karpenter.sh/disrupted"
        operator = "Exists"
        effect = "NoSchedule"
      },
    ]
  }
}`
	if got != want {
		t.Errorf("Literal() =\n%s\nwant\n%s", got, want)
	}
}
