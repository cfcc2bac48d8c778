package textmatch

import "testing"

func TestWildcard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, s string
		question   bool
		want       bool
	}{
		{"*", "", true, true}, {"*", "abc", true, true}, {"a*c", "abbbc", true, true},
		{"a?c", "abc", true, true}, {"a?c", "ac", true, false}, {"a?c", "abc", false, false}, {"a?c", "a?c", false, true},
		{"kube-*", "kube-system", true, true}, {"*-system", "kube-system", true, true},
		{"k*b*m", "kubesystem", true, true}, {"abc", "abd", true, false},
		{"arn:aws:iam::*:role/x", "arn:aws:iam::1234:role/x", false, true},
	}
	for _, tc := range tests {
		if got := Wildcard(tc.pattern, tc.s, tc.question); got != tc.want {
			t.Errorf("Wildcard(%q, %q, %v) = %v, want %v", tc.pattern, tc.s, tc.question, got, tc.want)
		}
	}
}

func TestDistance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"karpenter", "karpenter", 0}, {"karpenter", "karpentr", 1},
		{"kitten", "sitting", 3}, {"consolidateAfter", "consolidationAfter", 3},
	}
	for _, tc := range tests {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	long := string(make([]byte, 65))
	if Distance(long, "") < 1<<20 {
		t.Errorf("long strings must never be close")
	}
}
