package cli

import "testing"

func TestFixWritesOnlyUnderThePathsGiven(t *testing.T) {
	for _, c := range []struct {
		file  string
		roots []string
		want  bool
	}{
		{"infra/main.tf", []string{"infra"}, true},
		{"infra/main.tf", []string{"infra/main.tf"}, true},
		{"infra2/main.tf", []string{"infra"}, false},
		{"/etc/passwd", []string{"."}, false},
		{"values/prod.yaml", []string{"infra", "values/prod.yaml"}, true},
		{"../outside.tf", []string{"."}, false},
	} {
		if got := under(c.file, c.roots); got != c.want {
			t.Errorf("under(%q, %q) = %v, want %v", c.file, c.roots, got, c.want)
		}
	}
}
