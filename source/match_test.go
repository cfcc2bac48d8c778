package source

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMatchPattern(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pattern, path string
		rel, any      bool // MatchPattern, MatchPath
	}{
		{"legacy/**", "legacy/app.yaml", true, true},
		{"legacy/**", "legacy2/app.yaml", false, false},
		{"*.tpl", "charts/x/templates/np.yaml.tpl", true, true},
		{"k8s/*.yaml", "k8s/a.yaml", true, true},
		{"k8s/*.yaml", "k8s/sub/a.yaml", false, false},
		// Only MatchPath compares absolute forms.
		{"k8s/**", filepath.Join(wd, "k8s", "a.yaml"), false, true},
		{filepath.Join(wd, "k8s", "*.yaml"), "k8s/a.yaml", false, true},
		{"k8s/**", "", false, false},
	} {
		if got := MatchPattern(c.pattern, c.path); got != c.rel {
			t.Errorf("MatchPattern(%q, %q) = %v, want %v", c.pattern, c.path, got, c.rel)
		}
		if got := MatchPath(c.pattern, c.path); got != c.any {
			t.Errorf("MatchPath(%q, %q) = %v, want %v", c.pattern, c.path, got, c.any)
		}
	}
}
