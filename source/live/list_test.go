package live

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/eksdoctor/eksdoctor/source/manifest"
)

// listOf is a page of a list as the API server writes one: items of
// built-in kinds without their apiVersion and kind, a continue token.
func listOf(t *testing.T, apiVersion, kind, cont string, objects []string) []byte {
	t.Helper()
	var items []json.RawMessage
	for _, o := range objects {
		var m map[string]any
		if err := json.Unmarshal([]byte(o), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "apiVersion")
		delete(m, "kind")
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, b)
	}
	page, err := json.Marshal(map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"resourceVersion": "42", "continue": cont}, "items": items})
	if err != nil {
		t.Fatal(err)
	}
	return page
}

// A page of a list is decoded straight into the model's objects (pods into
// their types) and gives the model client-go's generic decoding of the same
// page gives, the apiVersion and kind the items leave out taken from the
// list's.
func TestListPagesDecodeAsClientGo(t *testing.T) {
	rs := `{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web-5d8","namespace":"apps","ownerReferences":[{"kind":"Deployment","name":"web","controller":true}]},"spec":{"replicas":3}}`
	pages := [][]byte{
		listOf(t, "v1", "PodList", "token-2", podsToCompare),
		listOf(t, "apps/v1", "ReplicaSetList", "", []string{rs}),
	}
	var d objectDecoder
	var got decodedPage
	var conts []string
	for _, p := range pages {
		cont, n, err := d.decodePage(p, &got)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatal("no items decoded")
		}
		conts = append(conts, cont)
	}
	if want := []string{"token-2", ""}; !cmp.Equal(conts, want) {
		t.Errorf("continue tokens = %q, want %q", conts, want)
	}
	typedPods := 0
	for _, p := range got.pods {
		if p != nil {
			typedPods++
		}
	}
	if typedPods != len(podsToCompare) {
		t.Errorf("%d pods decoded into their types, want %d (the ReplicaSet generic)", typedPods, len(podsToCompare))
	}
	typed := (&state{Context: "c", Objects: got.objects, pods: got.pods}).model()

	generic := &state{Context: "c"}
	for _, p := range pages {
		obj, err := k8sruntime.Decode(unstructured.UnstructuredJSONScheme, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range obj.(*unstructured.UnstructuredList).Items {
			generic.Objects = append(generic.Objects, item.Object)
		}
	}
	want := generic.model()
	manifest.Interpret(typed)
	manifest.Interpret(want)
	if len(typed.Pods) != len(podsToCompare) {
		t.Fatalf("%d pods in the model, want %d", len(typed.Pods), len(podsToCompare))
	}
	if diff := cmp.Diff(want, typed, modelOptions); diff != "" {
		t.Errorf("models differ (-client-go +pages):\n%s", diff)
	}
}

// An answer that is not a list is an error naming what is wrong, not a panic
// or an empty list.
func TestSplitListRefusesWhatIsNotAList(t *testing.T) {
	for _, tc := range []struct{ page, want string }{
		{`[1,2]`, "does not start with an object"},
		{`{"kind":"PodList","items":{}}`, "items is not an array"},
		{`{"kind":"PodList","items":[{"metadata":{"name":"a"}}]} {}`, "text follows"},
		{`{"kind":"PodList","items":[{"metadata":`, "not a list"},
		{`{"kind":"PodList","metadata":{"continue":3},"items":[]}`, "not a list"},
	} {
		_, _, err := splitList([]byte(tc.page))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("splitList(%s) = %v, want an error with %q", tc.page, err, tc.want)
		}
	}
	var d objectDecoder
	var p decodedPage
	if _, _, err := d.decodePage([]byte(`{"apiVersion":"v1","kind":"PodList","items":[{"metadata":{}}]}`), &p); err == nil || !strings.Contains(err.Error(), "no metadata.name") {
		t.Errorf("an item without a name: %v, want an error saying so", err)
	}
}

// FuzzSplitList: whatever splitList accepts is JSON client-go reads as a list
// with as many items.
func FuzzSplitList(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"v1","kind":"PodList","metadata":{"continue":"x"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`))
	f.Add([]byte(`{"kind":"List","items":null}`))
	f.Fuzz(func(t *testing.T, page []byte) {
		_, items, err := splitList(page)
		if err != nil {
			return
		}
		for _, it := range items {
			if !json.Valid(it) {
				t.Fatalf("item %q of %q is not JSON", it, page)
			}
		}
		if !json.Valid(page) {
			t.Fatalf("splitList accepted %q, which is not JSON", page)
		}
	})
}
