package cluster

import (
	"reflect"
	"testing"
)

// A StatefulSet's claim templates kept with its workload are read without
// reading the object again once its content is released.
func TestKeptClaimTemplatesOutliveTheContent(t *testing.T) {
	tmpls := []any{map[string]any{"metadata": map[string]any{"name": "data"}}}
	o := &Object{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", Content: map[string]any{"spec": map[string]any{"volumeClaimTemplates": tmpls}}}
	w := &Workload{Object: o}
	w.KeepClaimTemplates()
	reads := 0
	o.Content, o.ContentFunc = nil, func() map[string]any { reads++; return nil }
	if got := w.ClaimTemplates(); !reflect.DeepEqual(got, tmpls) || reads != 0 {
		t.Errorf("ClaimTemplates() = %v after %d reads of the object, want %v and none", got, reads, tmpls)
	}
	// Not kept: read from the object.
	none := &Workload{Object: &Object{Kind: "StatefulSet", Content: map[string]any{"spec": map[string]any{}}}}
	if got := none.ClaimTemplates(); got != nil {
		t.Errorf("ClaimTemplates() of a StatefulSet without any = %v", got)
	}
}
