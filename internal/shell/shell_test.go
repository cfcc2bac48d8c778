package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"karpenter", "karpenter"},
		{"kube-system", "kube-system"},
		{"infra/karpenter.yaml", "infra/karpenter.yaml"},
		{"arn:aws:iam::111122223333:role/KarpenterNodeRole", "arn:aws:iam::111122223333:role/KarpenterNodeRole"},
		{"", "''"},
		{"a b", "'a b'"},
		{"it's", `'it'\''s'`},
		{"=ls", "'=ls'"},
		{"~root", "'~root'"},
		{"<cluster-name>", "'<cluster-name>'"},
		{"$(touch x)", "'$(touch x)'"},
	} {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if got := Path("-rf.yaml"); got != "./-rf.yaml" {
		t.Errorf("Path(-rf.yaml) = %s", got)
	}
}

// Whatever a word holds, a shell given the quoted word reads back exactly that
// word and runs nothing: printf receives it as its one argument.
func TestQuoteRoundTrip(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	canary := filepath.Join(dir, "ran")
	words := []string{
		"$(touch " + canary + ")", "`touch " + canary + "`", "a; touch " + canary, "a && touch " + canary,
		"a | touch " + canary, "a\ntouch " + canary, "'; touch " + canary + "; '", `"; touch ` + canary + `; "`,
		"${IFS}", "$HOME", "*", "?", "[a]", "{a,b}", "a\\b", "!", "#c", "a\tb", "~", "=x", "x > " + canary,
		"-n", "\x1b[2J", "\u202e", "it's", "", " ", "\\'",
	}
	for _, w := range words {
		out, err := exec.Command(sh, "-c", "printf '%s' "+Quote(w)).Output()
		if err != nil {
			t.Errorf("%q: %v", w, err)
			continue
		}
		if string(out) != w {
			t.Errorf("Quote(%q) read back as %q", w, out)
		}
	}
	if _, err := os.Stat(canary); err == nil {
		t.Errorf("a quoted word ran a command")
	}
	if got := Join("kubectl", "delete", "-f", "a b.yaml"); got != "kubectl delete -f 'a b.yaml'" {
		t.Errorf("Join = %s", got)
	}
	if strings.Contains(Quote("x"), "'") {
		t.Error("a plain word was quoted")
	}
}
