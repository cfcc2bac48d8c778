package cluster

import (
	"slices"
	"testing"
)

// TestCheckedFlags: of a command line, the flags checks read are kept without
// their values, whether written as one argument or two; nothing else is.
func TestCheckedFlags(t *testing.T) {
	got := CheckedFlags([]string{"/karpenter", "--cluster-name=prod", "--log-level", "debug", "--cluster-name", "prod", "--cluster-names=x", "--cluster-name-x"})
	if want := []string{"--cluster-name", "--cluster-name"}; !slices.Equal(got, want) {
		t.Errorf("CheckedFlags = %q, want %q", got, want)
	}
	if got := CheckedFlags([]string{"--config=/etc/app.yaml"}); got != nil {
		t.Errorf("CheckedFlags of no checked flag = %q, want nil", got)
	}
}
