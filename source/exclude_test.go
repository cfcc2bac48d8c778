package source

import (
	"path/filepath"
	"testing"
)

func TestMatchExclude(t *testing.T) {
	wd := filepath.FromSlash("/repo")
	infra := filepath.FromSlash("/repo/infra")
	for _, c := range []struct {
		pattern, file string
		anchors       []string
		want          bool
	}{
		// Without a leading / or ./: at any depth.
		{"legacy/**", "legacy/app.yaml", nil, true},
		{"legacy/**", "infra/legacy/x.tf", nil, true},
		{"legacy/**", "infra/legacy/deep/er/x.tf", nil, true},
		{"legacy/**", "infra/legacy2/x.tf", nil, false},
		{"legacy/**", "infra/notlegacy/x.tf", nil, false},
		{"legacy", "infra/legacy/x.tf", nil, true}, // a directory covers its files
		{"*.tpl", "charts/x/templates/np.yaml.tpl", nil, true},
		{"k8s/*.yaml", "k8s/a.yaml", nil, true},
		{"k8s/*.yaml", "envs/prod/k8s/a.yaml", nil, true},
		{"k8s/*.yaml", "k8s/sub/a.yaml", nil, false},
		{"k8s/**/a.yaml", "k8s/sub/deeper/a.yaml", nil, true},
		{"k8s/**/a.yaml", "k8s/a.yaml", nil, true},
		{"k8s/**/a.yaml", "k8s/sub/b.yaml", nil, false},
		{"legacy/**", filepath.FromSlash("/repo/infra/legacy/x.tf"), nil, true},
		// Directories above the working directory are not part of the path.
		{"repo/**", "infra/x.tf", nil, false},
		// Anchored: from the working directory, or a directory given.
		{"/legacy/**", "legacy/x.tf", nil, true},
		{"/legacy/**", "infra/legacy/x.tf", nil, false},
		{"/legacy/**", "infra/legacy/x.tf", []string{infra}, true},
		{"./legacy/**", "legacy/x.tf", nil, true},
		{"./legacy/**", "infra/legacy/x.tf", nil, false},
		{"/infra/legacy/*.tf", "infra/legacy/x.tf", nil, true},
		{"/infra/legacy/*.tf", "infra/legacy/sub/x.tf", nil, false},
		// An absolute pattern naming the file.
		{filepath.ToSlash(filepath.FromSlash("/repo/infra/legacy")) + "/**", "infra/legacy/x.tf", nil, true},
		{"legacy/**", "", nil, false},
	} {
		if got := MatchExclude(c.pattern, c.file, wd, c.anchors); got != c.want {
			t.Errorf("MatchExclude(%q, %q, anchors %v) = %v, want %v", c.pattern, c.file, c.anchors, got, c.want)
		}
	}
	for p, want := range map[string]bool{"legacy/**": true, "[": false, "a/[x/b": false, "": false, "/x": true} {
		if got := ValidExclude(p); got != want {
			t.Errorf("ValidExclude(%q) = %v, want %v", p, got, want)
		}
	}
}
