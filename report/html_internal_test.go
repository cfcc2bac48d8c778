package report

import "testing"

func TestFileHrefIsAlwaysAFile(t *testing.T) {
	for in, want := range map[string]string{
		"infra/main.tf":            "infra/main.tf",
		"javascript:alert(1)":      "./javascript:alert(1)",
		"data:text/html,x/main.tf": "./data:text/html,x/main.tf",
		"/abs/dir/main.tf":         "file:///abs/dir/main.tf",
		"dir with space/a#b.tf":    "dir%20with%20space/a%23b.tf",
	} {
		if got := fileHref(in); got != want {
			t.Errorf("fileHref(%q) = %q, want %q", in, got, want)
		}
	}
}
