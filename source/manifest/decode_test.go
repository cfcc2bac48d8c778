package manifest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/cluster"
)

func TestDecodeKeepsFileAndLines(t *testing.T) {
	t.Parallel()
	data := `# leading comment
apiVersion: v1
kind: Namespace
metadata:
  name: one
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: two
  namespace: ns
spec:
  template:
    spec:
      tolerations:
      - key: a
        operator: Exists
---
# only a comment
---
{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "three"}},
  {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "four"}}
]}
`
	objs, probs := Decode("m.yaml", []byte(data))
	if len(probs) > 0 {
		t.Fatalf("problems: %+v", probs)
	}
	type got struct {
		Ref  string
		Line int
	}
	var gs []got
	for _, o := range objs {
		gs = append(gs, got{o.Ref().String(), o.Origin.Line})
	}
	want := []got{{"Namespace/one", 2}, {"Deployment/ns/two", 7}, {"ConfigMap/three", 22}, {"ConfigMap/four", 23}}
	if diff := cmp.Diff(want, gs); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	dep := objs[1]
	if got := dep.At("spec.template.spec.tolerations").Line; got != 15 {
		t.Errorf("line of tolerations = %d, want 15", got)
	}
	if got := dep.At("spec.template.spec.tolerations.0.key").Line; got != 16 {
		t.Errorf("line of tolerations.0.key = %d, want 16", got)
	}
	if got := dep.At("spec.template.spec.nonexistent").Line; got != 14 {
		t.Errorf("line of a missing field falls back to its parent: got %d, want 14", got)
	}
}

func TestDecodeOneBadDocumentDoesNotHideOthers(t *testing.T) {
	t.Parallel()
	data := `apiVersion: v1
kind: ConfigMap
metadata:
  name: good
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: bad
   namespace: x
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: also-good
`
	objs, probs := Decode("m.yaml", []byte(data))
	var names []string
	for _, o := range objs {
		names = append(names, o.Name)
	}
	if diff := cmp.Diff([]string{"good", "also-good"}, names); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	if len(probs) != 1 {
		t.Fatalf("problems = %+v, want one", probs)
	}
	if probs[0].Origin.File != "m.yaml" || probs[0].Origin.Line != 10 {
		t.Errorf("problem at %s, want m.yaml:10 (%s)", probs[0].Origin, probs[0].Message)
	}
	if !strings.Contains(probs[0].Message, "YAML syntax error") {
		t.Errorf("message = %q", probs[0].Message)
	}
}

func TestDecodeRejectsNonObjects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, data string
		notObject  bool
		want       string
	}{
		{name: "values file", data: "replicas: 2\n", notObject: true},
		{name: "scalar list", data: "- a\n- b\n", notObject: true},
		{name: "kind without apiVersion", data: "kind: Pod\nmetadata: {name: x}\n", want: "document has no apiVersion"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			objs, probs := Decode("f.yaml", []byte(tc.data))
			if len(objs) != 0 || len(probs) != 1 {
				t.Fatalf("got %d objects, %d problems; want 0, 1", len(objs), len(probs))
			}
			if IsNotAnObject(probs[0]) != tc.notObject {
				t.Errorf("IsNotAnObject = %v, want %v (%s)", !tc.notObject, tc.notObject, probs[0].Message)
			}
			if tc.want != "" && !strings.Contains(probs[0].Message, tc.want) {
				t.Errorf("message %q lacks %q", probs[0].Message, tc.want)
			}
		})
	}
}

func TestDecodeScalarsAndAnchors(t *testing.T) {
	t.Parallel()
	data := `apiVersion: v1
kind: ConfigMap
metadata:
  name: x
  labels: &l
    a: "1"
base: &b
  n: 3
  f: 1.5
  on: true
  nothing: null
  octal: 0o17
copy:
  <<: *b
  extra: *l
`
	objs, probs := Decode("x.yaml", []byte(data))
	if len(probs) > 0 || len(objs) != 1 {
		t.Fatalf("objs=%d probs=%+v", len(objs), probs)
	}
	got := objs[0].Content["copy"]
	want := map[string]any{"n": int64(3), "f": 1.5, "on": true, "nothing": nil, "octal": int64(15), "extra": map[string]any{"a": "1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged anchors (-want +got):\n%s", diff)
	}
}

func TestDecodeAtOffsetsLines(t *testing.T) {
	t.Parallel()
	objs, _ := DecodeAt("main.tf", 40, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"))
	if len(objs) != 1 || objs[0].Origin != (cluster.Origin{File: "main.tf", Line: 40}) {
		t.Fatalf("origin = %+v, want main.tf:40", objs[0].Origin)
	}
	if l := objs[0].At("metadata.name").Line; l != 43 {
		t.Errorf("metadata.name line = %d, want 43", l)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c}]}\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("---\n--- \n-\n"))
	f.Add([]byte("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[1,{}]}"))
	f.Add([]byte("apiVersion: apps/v1\nkind: Deployment\nspec:\n  template: [1]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, probs := Decode("fuzz.yaml", data)
		m := &cluster.Model{Objects: objs, Problems: probs}
		InterpretClusterConfigs(m)
		Interpret(m)
		for _, p := range m.Problems {
			if p.Origin.File != "fuzz.yaml" {
				t.Fatalf("problem without the file: %+v", p)
			}
		}
	})
}

func TestDecodeFileIndexesLinesLazily(t *testing.T) {
	t.Parallel()
	data := "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n- apiVersion: apps/v1\n  kind: Deployment\n  metadata:\n    name: b\n  spec:\n    template:\n      spec:\n        tolerations: []\n"
	objs, probs := DecodeFile("l.yaml", []byte(data))
	if len(probs) > 0 || len(objs) != 2 {
		t.Fatalf("objs=%d probs=%+v", len(objs), probs)
	}
	if objs[0].Lines != nil {
		t.Errorf("lines were indexed eagerly")
	}
	if got := objs[1].Origin.Line; got != 8 {
		t.Errorf("second item starts at line %d, want 8", got)
	}
	if got := objs[1].At("spec.template.spec.tolerations").Line; got != 15 {
		t.Errorf("tolerations at line %d, want 15", got)
	}
	if got := objs[0].At("metadata.name").Line; got != 7 {
		t.Errorf("metadata.name at line %d, want 7", got)
	}
}

// TestIsBlank: a document of blank lines and comments holds nothing; any
// other line is content, whatever line it is on.
func TestIsBlank(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]bool{
		"":                                true,
		"\n\n":                            true,
		"# a comment\n  # indented\n\t\n": true,
		"  \r\n#x":                        true,
		"a: b":                            false,
		"# c\n\n  key: v\n":               false,
		"#c\nx":                           false,
	} {
		if got := isBlank([]byte(text)); got != want {
			t.Errorf("isBlank(%q) = %t, want %t", text, got, want)
		}
	}
}
