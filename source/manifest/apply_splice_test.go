package manifest

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// TestApplyYAMLMinimal: a merge patch changes only the bytes it must; the
// result is exactly the text given, and reads as the whole-document merge
// (the algorithm ApplyYAML used before, kept as the oracle).
func TestApplyYAMLMinimal(t *testing.T) {
	const cronJob = `# nightly
apiVersion: batch/v1
kind: CronJob
metadata:
  name: report   # the report
  namespace: batch
spec:
  schedule: "0 2 * * *" # 02:00 UTC, after the ETL
  suspend: false
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          # Added after the pods went Pending.
          tolerations:
            - key: eks.amazonaws.com/compute-type
              operator: Equal
              value: fargate
          containers:
            - name: report
              image: 'registry.example.com/report:1.0.0'
`
	tests := []struct {
		name  string
		in    string
		line  int
		patch string
		want  string
	}{
		{
			name:  "a scalar keeps its double quotes and its comment",
			in:    cronJob,
			line:  2,
			patch: "spec:\n  schedule: \"30 3 * * *\"\n",
			want:  strings.Replace(cronJob, `"0 2 * * *"`, `"30 3 * * *"`, 1),
		},
		{
			name:  "a scalar written plain stays plain; single quotes stay single",
			in:    cronJob,
			line:  2,
			patch: "metadata:\n  name: nightly\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers:\n          - name: report\n            image: registry.example.com/report:1.1.0\n",
			want: strings.Replace(strings.Replace(cronJob, "name: report   # the report", "name: nightly   # the report", 1),
				"'registry.example.com/report:1.0.0'", "'registry.example.com/report:1.1.0'", 1),
		},
		{
			name:  "a removed key loses its lines and the comment right above it, only",
			in:    cronJob,
			line:  2,
			patch: "spec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          tolerations: null\n",
			want:  strings.Replace(cronJob, "          # Added after the pods went Pending.\n          tolerations:\n            - key: eks.amazonaws.com/compute-type\n              operator: Equal\n              value: fargate\n", "", 1),
		},
		{
			name:  "new keys go after the last line of their mapping, in the patch's order",
			in:    cronJob,
			line:  2,
			patch: "spec:\n  jobTemplate:\n    spec:\n      template:\n        metadata:\n          labels:\n            compute: fargate\n            team: data\n",
			want:  cronJob + "        metadata:\n          labels:\n            compute: fargate\n            team: data\n",
		},
		{
			name:  "a list keeps its items and gets the new one, indented as the file indents lists",
			in:    cronJob,
			line:  2,
			patch: "spec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          tolerations:\n          - key: eks.amazonaws.com/compute-type\n            operator: Equal\n            value: fargate\n          - key: dedicated\n            operator: Exists\n",
			want:  strings.Replace(cronJob, "              value: fargate\n", "              value: fargate\n            - key: dedicated\n              operator: Exists\n", 1),
		},
		{
			name:  "a replaced list is written over its own lines, dashes at the key's column when the file does so",
			in:    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  tolerations:\n  - key: a\n    operator: Exists\n  # keep me\n  nodeSelector: {a: b}\n",
			line:  1,
			patch: "spec:\n  tolerations:\n  - key: b\n    operator: Exists\n",
			want:  "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  tolerations:\n  - key: b\n    operator: Exists\n  # keep me\n  nodeSelector: {a: b}\n",
		},
		{
			name:  "a flow mapping is rewritten as a flow mapping, alone",
			in:    "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {app: web}}  # flow\nspec:\n  nodeSelector: {a: b}\n",
			line:  1,
			patch: "spec:\n  nodeSelector:\n    c: d\n",
			want:  "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {app: web}}  # flow\nspec:\n  nodeSelector: {a: b, c: d}\n",
		},
		{
			name:  "a flow list keeps its quotes",
			in:    "apiVersion: v1\nkind: X\nspec:\n  values: [\"c\", \"m\"]\n  other: 1\n",
			line:  1,
			patch: "spec:\n  values: [\"c\", \"m\", \"r\"]\n",
			want:  "apiVersion: v1\nkind: X\nspec:\n  values: [\"c\", \"m\", \"r\"]\n  other: 1\n",
		},
		{
			name:  "a value read through an alias is replaced alone; the anchor and other aliases stay",
			in:    "apiVersion: v1\nkind: X\nspec:\n  base: &sel {app: web}\n  a: *sel\n  b: *sel\n",
			line:  1,
			patch: "spec:\n  a:\n    app: api\n",
			want:  "apiVersion: v1\nkind: X\nspec:\n  base: &sel {app: web}\n  a:\n    app: api\n  b: *sel\n",
		},
		{
			name:  "a change next to an anchor keeps it",
			in:    "apiVersion: v1\nkind: X\nspec:\n  base: &res\n    cpu: 1\n  pod:\n    resources: *res\n    replicas: 1\n",
			line:  1,
			patch: "spec:\n  pod:\n    replicas: 2\n",
			want:  "apiVersion: v1\nkind: X\nspec:\n  base: &res\n    cpu: 1\n  pod:\n    resources: *res\n    replicas: 2\n",
		},
		{
			name:  "CRLF line ends stay",
			in:    "apiVersion: v1\r\nkind: Pod\r\nmetadata:\r\n  name: p\r\nspec:\r\n  a: 1\r\n",
			line:  1,
			patch: "spec:\n  b: \"yes\"\n",
			want:  "apiVersion: v1\r\nkind: Pod\r\nmetadata:\r\n  name: p\r\nspec:\r\n  a: 1\r\n  b: \"yes\"\r\n",
		},
		{
			name:  "other documents and separators stay",
			in:    "a: 1 # one\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n--- # three\nb: [2]\n",
			line:  3,
			patch: "metadata:\n  labels:\n    app: web\n",
			want:  "a: 1 # one\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n    app: web\n--- # three\nb: [2]\n",
		},
		{
			name:  "an eksctl named list merges into the item of that name",
			in:    "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata:\n  name: c\n  region: eu-west-1\nfargateProfiles:\n  - name: fp # the profile\n    selectors:\n      - namespace: batch\n  - name: other\n    selectors:\n      - namespace: x\n",
			line:  1,
			patch: "fargateProfiles:\n- name: fp\n  selectors:\n  - namespace: batch\n    labels:\n      compute: fargate\n",
			want:  "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata:\n  name: c\n  region: eu-west-1\nfargateProfiles:\n  - name: fp # the profile\n    selectors:\n      - namespace: batch\n        labels:\n          compute: fargate\n  - name: other\n    selectors:\n      - namespace: x\n",
		},
		{
			name:  "removing a sequence item's first key rewrites that item only",
			in:    "apiVersion: v1\nkind: X\nspec:\n  items:\n    - a: 1\n      b: 2\n    - a: 3\n",
			line:  1,
			patch: "spec:\n  items:\n    - b: 2\n    - a: 3\n",
			want:  "apiVersion: v1\nkind: X\nspec:\n  items:\n    - b: 2\n    - a: 3\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := cluster.Edit{Line: tt.line, Format: cluster.FormatYAML, Text: tt.patch}
			got, err := SpliceYAML([]byte(tt.in), e)
			if err != nil {
				t.Fatalf("SpliceYAML: %v", err)
			}
			if diff := cmp.Diff(string(got), tt.want); diff != "" {
				t.Errorf("SpliceYAML mismatch (-got +want):\n%s\ngot:\n%s", diff, got)
			}
			applied, err := ApplyYAML([]byte(tt.in), e)
			if err != nil || string(applied) != string(got) {
				t.Errorf("ApplyYAML differs from SpliceYAML (err %v):\n%s", err, applied)
			}
			checkOracle(t, tt.in, got, e)
		})
	}
}

// checkOracle: the object reads as the old whole-document merge gives it.
func checkOracle(t *testing.T, in string, got []byte, e cluster.Edit) {
	t.Helper()
	want, err := MergedYAML([]byte(in), e)
	if err != nil {
		t.Fatal(err)
	}
	objs, _ := Decode("", got)
	for _, o := range objs {
		if o.Origin.Line == e.Line {
			if !reflect.DeepEqual(cluster.Normalize(o.Content, 0), cluster.Normalize(want, 0)) {
				t.Errorf("the object reads as\n%v\nwant\n%v", o.Content, want)
			}
			return
		}
	}
	t.Errorf("no object at line %d after the edit:\n%s", e.Line, got)
}

// TestApplyYAMLAnchorFallback: a change inside an anchored value that an
// alias elsewhere reads cannot be made in place (the alias would change
// too); ApplyYAML then renders the document whole, and it still reads as the
// merge says.
func TestApplyYAMLAnchorFallback(t *testing.T) {
	in := "apiVersion: v1\nkind: X\nspec:\n  base: &res\n    cpu: 1\n  pod:\n    resources: *res\n"
	e := cluster.Edit{Line: 1, Format: cluster.FormatYAML, Text: "spec:\n  base:\n    cpu: 2\n"}
	if _, err := SpliceYAML([]byte(in), e); err == nil {
		t.Error("SpliceYAML changed an anchored value an alias reads")
	}
	got, err := ApplyYAML([]byte(in), e)
	if err != nil {
		t.Fatal(err)
	}
	checkOracle(t, in, got, e)
	var v map[string]any
	if err := yaml.Unmarshal(got, &v); err != nil {
		t.Fatal(err)
	}
	if pod := v["spec"].(map[string]any)["pod"].(map[string]any)["resources"].(map[string]any); pod["cpu"] != float64(1) {
		t.Errorf("the alias changed with its anchor: %v", pod)
	}
}

// TestDetectStyle: the file's own indentation of lists is what added lists use.
func TestDetectStyle(t *testing.T) {
	for _, c := range []struct {
		in   string
		want yamlStyle
	}{
		{"a:\n  b:\n  - x\n", yamlStyle{step: 2, seqIndent: 0}},
		{"a:\n    b:\n        - x\n", yamlStyle{step: 4, seqIndent: 4}},
		{"a: 1\n", yamlStyle{step: 2, seqIndent: 2}},
	} {
		if got := detectStyle([]byte(c.in)); got != c.want {
			t.Errorf("detectStyle(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

// TestEditValues: a values file keeps its comments and order.
func TestEditValues(t *testing.T) {
	in := "# values for prod\nreplicas: 2 # two zones\nsettings:\n  clusterName: demo\n"
	out, ok := EditValues([]byte(in), map[string]any{"replicas": int64(2), "settings": map[string]any{"clusterName": "demo", "interruptionQueue": "q"}}, "settings:\n  interruptionQueue: q\n")
	if !ok {
		t.Fatal("not edited in place")
	}
	if want := in + "  interruptionQueue: q\n"; string(out) != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

// FuzzApplyYAML: whatever the document and the patch, ApplyYAML does not
// panic, and what it writes reads as the whole-document merge.
func FuzzApplyYAML(f *testing.F) {
	for _, c := range [][2]string{
		{"apiVersion: v1\nkind: X\nspec:\n  a: [1, 2]\n  b: &x {c: 1}\n  d: *x\n", "spec:\n  a: [3]\n  b: {e: 2}\n"},
		{"apiVersion: v1\nkind: X\nspec:\n  list:\n  - name: a # one\n    v: 1\n  - name: b\n", "spec:\n  list:\n  - name: a\n    v: 2\n  - name: b\n  - name: c\n"},
		{"apiVersion: v1\nkind: X\nmetadata: {name: x}\nspec:\n  s: |\n    text\n  t: 'q'\n", "spec:\n  s: other\n  t: null\n  u: {v: [1]}\n"},
		{"apiVersion: v1\r\nkind: X\r\nbase: &b\r\n  k: v\r\nspec:\r\n  <<: *b\r\n  z: 1\r\n", "spec:\n  k: w\n  z: null\n"},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, doc, patch string) {
		if len(doc) > 4096 || len(patch) > 1024 {
			return
		}
		e := cluster.Edit{Line: 1, Format: cluster.FormatYAML, Text: patch}
		if _, err := MergedYAML([]byte(doc), e); err != nil {
			return
		}
		got, err := ApplyYAML([]byte(doc), e)
		if err != nil {
			return
		}
		checkOracle(t, doc, got, e)
	})
}
