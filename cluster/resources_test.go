package cluster

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Equal small lists become one map; lists that differ in a quantity, a name
// or its format, and large lists, stay their own; what readers see of a
// shared list is what they saw of their own.
func TestShareResourceList(t *testing.T) {
	list := func(kv ...string) corev1.ResourceList {
		l := corev1.ResourceList{}
		for i := 0; i < len(kv); i += 2 {
			l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
		}
		return l
	}
	same := func(a, b corev1.ResourceList) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}
	a := ShareResourceList(list("cpu", "100m", "memory", "128Mi"))
	b := ShareResourceList(list("memory", "128Mi", "cpu", "100m"))
	if !same(a, b) {
		t.Error("equal lists are not shared")
	}
	// "0.1" is 100m to every reader.
	if c := ShareResourceList(list("cpu", "0.1", "memory", "128Mi")); !same(a, c) {
		t.Error("lists equal in canonical text are not shared")
	}
	for _, other := range []corev1.ResourceList{
		list("cpu", "100m", "memory", "129Mi"),
		list("cpu", "100m", "ephemeral-storage", "128Mi"),
		list("cpu", "100m", "memory", "134217728"), // 128Mi in another format
		list("cpu", "100m"),
	} {
		got := ShareResourceList(other)
		if same(got, a) {
			t.Errorf("%v shares %v", other, a)
		}
		if got.Cpu().String() != other.Cpu().String() || got.Memory().String() != other.Memory().String() {
			t.Errorf("sharing %v reads as %v", other, got)
		}
	}
	big := list("cpu", "1", "memory", "1Gi", "pods", "1", "ephemeral-storage", "1Gi", "nvidia.com/gpu", "1")
	if got := ShareResourceList(big); !same(got, big) {
		t.Error("a list of five resources was replaced")
	}
	if ShareResourceList(nil) != nil {
		t.Error("nil became a list")
	}
}
