package report

import (
	"encoding/json"
	"strings"
	"testing"
)

// An invisible character in a JSON string becomes the text \u202e, whether the
// encoder wrote it raw or as a JSON escape; control characters keep their JSON
// escapes; nothing outside strings changes.
func TestVisibleJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{`{"a":"x` + "\u202e" + `y"}`, `{"a":"x\\u202ey"}`},
		{`{"a":"` + "\u200b\u200d\u2060\ufeff" + `"}`, `{"a":"\\u200b\\u200d\\u2060\\ufeff"}`},
		{`{"a":"x\u2028y"}`, `{"a":"x\\u2028y"}`},
		{`{"a":"line\nnext\u001b"}`, `{"a":"line\nnext\u001b"}`},
		{`{"a":"\\u202e"}`, `{"a":"\\u202e"}`},
		{`{"a":"\\` + "\u202e" + `"}`, `{"a":"\\\\u202e"}`},
		{`{"a":"é ü 日本"}`, `{"a":"é ü 日本"}`},
		{`{"` + "k\u200b" + `":1}`, `{"k\\u200b":1}`},
	} {
		got := string(visibleJSON([]byte(tc.in)))
		if got != tc.want {
			t.Errorf("visibleJSON(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("visibleJSON(%q) is not JSON: %q", tc.in, got)
		}
		var v map[string]any
		json.Unmarshal([]byte(got), &v)
		for k, x := range v {
			if s, _ := x.(string); strings.ContainsAny(k+s, "\u202e\u200b\u200d\u2060\ufeff\u2028") {
				t.Errorf("visibleJSON(%q) decodes to an invisible character: %q", tc.in, k+s)
			}
		}
	}
}

func TestInvisibleInText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"ad\u200dmin":   `ad\u200dmin`,
		"\u2066x\u2069": `\u2066x\u2069`,
		"soft\u00adhy":  `soft\xadhy`,
		"café":          "café",
	} {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
}
