package sim

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/catalog"
)

// The memory capacity NodePool limits count, checked against the expected
// values of karpenter-provider-aws's own unit test of its memory function
// (pkg/providers/instancetype/memory_test.go, at the default 7.5 % VM
// overhead): Graviton types lose 64 MiB first, then the overhead is taken,
// rounded up to a MiB.
func TestMemCapacityFollowsTheProvider(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		arch      string
		sizeMiB   int64
		wantBytes int64
	}{
		{"amd64", 8192, 7945060352},
		{"arm64", 8192, 7883194368},
		{"arm64", 512, 434110464},
		{"amd64", 2048, 1986002944},
	} {
		st := sizedType{it: &catalog.InstanceType{Labels: map[string]string{corev1.LabelArchStable: tc.arch}}, memMiB: tc.sizeMiB}
		if got := st.memCapacityMiB() << 20; got != tc.wantBytes {
			t.Errorf("%s with %d MiB: capacity %d bytes, want %d", tc.arch, tc.sizeMiB, got, tc.wantBytes)
		}
	}
}
