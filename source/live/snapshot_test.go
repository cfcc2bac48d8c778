package live

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/manifest"
)

// A snapshot of a live read reads back into the very model the live read gave, so
// `eksdoctor check snapshot.json` sees what `eksdoctor cluster` saw.
func TestSnapshotRoundTripsTheLiveModel(t *testing.T) {
	fixture(t)
	ctx := testContext(t)
	live, err := Load(ctx, Options{Kubeconfig: kubeconfig(t, env.Config, "admin@test"), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	// Skipped entries must survive too.
	live.Live.Skipped = []cluster.Skipped{{Resource: "volumeattachments.storage.k8s.io", Reason: "forbidden: not today"}}

	for _, gz := range []bool{false, true} {
		var buf bytes.Buffer
		if err := WriteSnapshot(&buf, live, gz); err != nil {
			t.Fatal(err)
		}
		if got := isGzip(buf.Bytes()); got != gz {
			t.Errorf("gzip %v: output compressed = %v", gz, got)
		}
		if !IsSnapshot(buf.Bytes()) {
			t.Errorf("gzip %v: IsSnapshot = false for a snapshot", gz)
		}
		read, err := ReadSnapshot("snapshot.json", buf.Bytes())
		if err != nil {
			t.Fatalf("gzip %v: %v", gz, err)
		}
		// What the checks see is the same: the models, interpreted (a
		// snapshot's pods are decoded as they are read, a live read's when
		// interpreted), do not differ.
		seen, err := Load(ctx, Options{Kubeconfig: kubeconfig(t, env.Config, "admin@test"), Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		seen.Live.Skipped = live.Live.Skipped
		again, err := ReadSnapshot("snapshot.json", buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		manifest.Interpret(seen)
		manifest.Interpret(again)
		if len(seen.Pods) == 0 {
			t.Fatal("the fixture has no pods")
		}
		if diff := cmp.Diff(seen, again, modelOptions); diff != "" {
			t.Errorf("gzip %v: live model (-) and the model read from its snapshot (+) differ:\n%s", gz, diff)
		}

		// Writing what was read gives the same bytes: snapshots are stable.
		var rewritten bytes.Buffer
		if err := WriteSnapshot(&rewritten, read, gz); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), rewritten.Bytes()) {
			t.Errorf("gzip %v: rewriting a snapshot changed its bytes", gz)
		}
	}

	// Two live reads of the same state give the same bytes.
	second, err := Load(ctx, Options{Kubeconfig: kubeconfig(t, env.Config, "admin@test"), Clock: clock, PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	second.Live.Skipped = live.Live.Skipped
	var a, b bytes.Buffer
	if err := WriteSnapshot(&a, live, false); err != nil {
		t.Fatal(err)
	}
	if err := WriteSnapshot(&b, second, false); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a.String(), b.String()); diff != "" {
		t.Errorf("two reads of the same cluster give different snapshots:\n%s", diff)
	}
	if strings.Contains(a.String(), "never-read-by-eksdoctor") || strings.Contains(a.String(), "managedFields") {
		t.Error("the snapshot holds a Secret value or managedFields")
	}
}

func TestSnapshotLayout(t *testing.T) {
	m := (&state{
		Context: "prod",
		Server:  "https://example.eks.amazonaws.com",
		Now:     "2026-01-02T03:04:05Z",
		Skipped: []cluster.Skipped{{Resource: "nodeclaims.karpenter.sh", Reason: "forbidden: no"}},
		Objects: []map[string]any{
			{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "b"}},
			{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "<y>"}}},
		},
	}).model()
	var buf bytes.Buffer
	if err := WriteSnapshot(&buf, m, false); err != nil {
		t.Fatal(err)
	}
	want := `{
 "kind": "EKSDoctorSnapshot",
 "version": 1,
 "context": "prod",
 "server": "https://example.eks.amazonaws.com",
 "now": "2026-01-02T03:04:05Z",
 "skipped": [
  {"resource":"nodeclaims.karpenter.sh","reason":"forbidden: no"}
 ],
 "objects": [
  {"apiVersion":"v1","kind":"Node","metadata":{"labels":{"x":"<y>"},"name":"a"}},
  {"apiVersion":"v1","kind":"Node","metadata":{"name":"b"}}
 ]
}
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}

	// A read restricted to one namespace says so, and reads back the same.
	restricted := (&state{Context: "prod", Namespace: "apps", Now: "2026-01-02T03:04:05Z"}).model()
	buf.Reset()
	if err := WriteSnapshot(&buf, restricted, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), " \"server\": \"\",\n \"namespace\": \"apps\",\n \"now\": ") {
		t.Errorf("restricted snapshot = %s", buf.String())
	}
	back, err := ReadSnapshot("s.json", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if back.Live.Namespace != "apps" {
		t.Errorf("namespace read back = %q, want apps", back.Live.Namespace)
	}

	empty := (&state{Context: "c"}).model()
	buf.Reset()
	if err := WriteSnapshot(&buf, empty, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "\"skipped\": [],\n \"objects\": []\n}") {
		t.Errorf("empty snapshot = %s", buf.String())
	}
	if err := WriteSnapshot(&buf, &cluster.Model{}, false); err == nil {
		t.Error("writing a model without live state should fail")
	}
}

func TestIsSnapshot(t *testing.T) {
	gz := func(s string) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		io.WriteString(w, s)
		w.Close()
		return b.Bytes()
	}
	for _, tc := range []struct {
		name string
		data []byte
		want bool
	}{
		{name: "snapshot", data: []byte(`{"kind":"EKSDoctorSnapshot","version":1}`), want: true},
		{name: "kind after other keys", data: []byte(`{"version":1,"objects":[{"kind":"Pod"}],"kind":"EKSDoctorSnapshot"}`), want: true},
		{name: "gzip", data: gz(`{"kind":"EKSDoctorSnapshot"}`), want: true},
		{name: "kubernetes list", data: []byte(`{"kind":"List","items":[]}`)},
		{name: "kind not a string", data: []byte(`{"kind":1}`)},
		{name: "yaml", data: []byte("kind: EKSDoctorSnapshot\n")},
		{name: "array", data: []byte(`[{"kind":"EKSDoctorSnapshot"}]`)},
		{name: "truncated gzip", data: gz(`{"kind":"EKSDoctorSnapshot"}`)[:5]},
		{name: "terraform plan", data: []byte(`{"format_version":"1.2","planned_values":{}}`)},
		{name: "empty"},
	} {
		if got := IsSnapshot(tc.data); got != tc.want {
			t.Errorf("%s: IsSnapshot = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestReadSnapshotErrors(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
	}{
		{name: "syntax", data: "{\n \"kind\": \"EKSDoctorSnapshot\",\n \"version\": 1,,\n}", want: "read snapshot s.json: line 3: invalid character ','"},
		{name: "kind", data: `{"kind":"List","version":1}`, want: `read snapshot s.json: kind is "List", want "EKSDoctorSnapshot"`},
		{name: "version", data: `{"kind":"EKSDoctorSnapshot","version":2}`, want: "read snapshot s.json: version 2 is not supported (this eksdoctor reads version 1)"},
		{name: "gzip", data: "\x1f\x8bnot gzip", want: "read snapshot s.json: "},
	} {
		_, err := ReadSnapshot("s.json", []byte(tc.data))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want prefix %q", tc.name, err, tc.want)
		}
	}
}

// Objects that are not Kubernetes objects become problems; the others are read.
func TestReadSnapshotKeepsGoodObjects(t *testing.T) {
	data := `{"kind":"EKSDoctorSnapshot","version":1,"context":"c","objects":[
  {"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"pods":"29"}},"spec":{"podCIDRs":[]},"x":3},
  "a string",
  {"kind":"Node","metadata":{"name":"n2"}},
  {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"aws-auth","namespace":"kube-system"},"data":{"mapRoles":"- rolearn: [unclosed"}}
 ]}`
	m, err := ReadSnapshot("s.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Objects) != 2 || find(m, "Node", "", "n1") == nil {
		t.Fatalf("objects = %v", refs(m))
	}
	if n, ok := find(m, "Node", "", "n1").Get("x").(int64); !ok || n != 3 {
		t.Errorf("integers must read as int64 like live objects, got %T", find(m, "Node", "", "n1").Get("x"))
	}
	var msgs []string
	for _, p := range m.Problems {
		msgs = append(msgs, p.Origin.String()+" "+p.Origin.Path+": "+p.Message)
	}
	want := []string{
		"s.json objects.1: snapshot object 1: json: cannot unmarshal string into Go value of type map[string]interface {}",
		"s.json objects.2: snapshot object 2: no apiVersion",
		"cluster:c data.mapRoles: aws-auth mapRoles is not a YAML list of {rolearn, username, groups}: error converting YAML to JSON: yaml: line 1: did not find expected ',' or ']'",
	}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if m.Identity.AwsAuth == nil || m.Identity.AwsAuth.Complete {
		t.Errorf("an aws-auth that does not decode must be kept as incomplete: %+v", m.Identity.AwsAuth)
	}
}

// A snapshot keeps only what the checks read: container commands and arguments
// (but for the bare flags checks read), environment values, EC2NodeClass user data and annotations no check reads
// (kubectl's last-applied-configuration copies whole objects) never reach it.
func TestSnapshotHoldsNothingTheChecksDoNotRead(t *testing.T) {
	fixture(t)
	ctx := testContext(t)
	const canary = "canary-7d1f0e"
	objs, err := env.Apply(ctx, []byte(`
apiVersion: v1
kind: Namespace
metadata:
  name: private
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: karpenter
  namespace: private
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"password":"`+canary+`"}'
    meta.helm.sh/release-name: karpenter
    eksdoctor.io/ignore: pod-unschedulable
spec:
  selector: {matchLabels: {app: k}}
  template:
    metadata:
      labels: {app: k}
      annotations: {note: `+canary+`, helm.sh/hook: pre-install}
    spec:
      initContainers:
      - name: init
        image: busybox
        command: [sh, -c, "echo `+canary+`"]
      containers:
      - name: controller
        image: karpenter
        command: ["/karpenter", "--cluster-name", "--token=`+canary+`"]
        args: ["--cluster-name=prod", "--api-key=`+canary+`"]
        env:
        - {name: CLUSTER_NAME, value: prod}
        - {name: AWS_SECRET_ACCESS_KEY, value: `+canary+`}
        - name: FROM_SECRET
          valueFrom: {secretKeyRef: {name: creds, key: token}}
        resources: {requests: {cpu: 100m}}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: private
spec:
  role: KarpenterNodeRole
  amiSelectorTerms: [{alias: al2023@latest}]
  subnetSelectorTerms: [{tags: {a: b}}]
  securityGroupSelectorTerms: [{tags: {a: b}}]
  userData: "echo `+canary+`"
`))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// No namespace controller runs here: delete the objects themselves.
		dyn := dynamic.NewForConfigOrDie(env.Config)
		for _, o := range objs {
			plural := strings.ToLower(o.GetKind()) + "s"
			if strings.HasSuffix(o.GetKind(), "s") {
				plural = strings.ToLower(o.GetKind()) + "es" // EC2NodeClass: ec2nodeclasses
			}
			gvr := schema.GroupVersionResource{Group: o.GroupVersionKind().Group, Version: o.GroupVersionKind().Version, Resource: plural}
			ri := dyn.Resource(gvr)
			var err error
			if o.GetNamespace() != "" {
				err = ri.Namespace(o.GetNamespace()).Delete(context.Background(), o.GetName(), metav1.DeleteOptions{})
			} else if o.GetKind() != "Namespace" {
				err = ri.Delete(context.Background(), o.GetName(), metav1.DeleteOptions{})
			}
			if err != nil {
				t.Errorf("delete %s/%s: %v", o.GetKind(), o.GetName(), err)
			}
		}
	})

	m, err := Load(ctx, Options{Kubeconfig: kubeconfig(t, env.Config, "admin@test"), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteSnapshot(&buf, m, false); err != nil {
		t.Fatal(err)
	}
	snap := buf.String()
	if strings.Contains(snap, canary) {
		for _, l := range strings.Split(snap, "\n") {
			if strings.Contains(l, canary) {
				t.Errorf("the snapshot holds what no check reads: %s", l)
			}
		}
	}
	dep := find(m, "Deployment", "private", "karpenter")
	if dep == nil {
		t.Fatal("the Deployment was not read")
	}
	// What the checks read stays.
	for path, want := range map[string]any{
		"metadata.annotations":                               map[string]any{"meta.helm.sh/release-name": "karpenter", "eksdoctor.io/ignore": "pod-unschedulable"},
		"spec.template.metadata.annotations":                 map[string]any{"helm.sh/hook": "pre-install"},
		"spec.template.spec.containers.0.args":               []any{"--cluster-name"},
		"spec.template.spec.containers.0.command":            []any{"--cluster-name"},
		"spec.template.spec.containers.0.env.0":              map[string]any{"name": "CLUSTER_NAME", "value": "prod"},
		"spec.template.spec.containers.0.env.1":              map[string]any{"name": "AWS_SECRET_ACCESS_KEY"},
		"spec.template.spec.containers.0.env.2.valueFrom":    map[string]any{"secretKeyRef": map[string]any{"name": "creds", "key": "token"}},
		"spec.template.spec.containers.0.resources.requests": map[string]any{"cpu": "100m"},
		"spec.template.spec.initContainers.0.name":           "init",
	} {
		if diff := cmp.Diff(want, dep.Get(path)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", path, diff)
		}
	}
	for _, path := range []string{"spec.template.spec.initContainers.0.command"} {
		if dep.Get(path) != nil {
			t.Errorf("%s kept", path)
		}
	}
	if nc := find(m, "EC2NodeClass", "", "private"); nc == nil || nc.Get("spec.userData") != nil || nc.Get("spec.role") != "KarpenterNodeRole" {
		t.Errorf("EC2NodeClass: %v", nc)
	}
}

// FuzzReadSnapshot reads arbitrary snapshots, plain and compressed: a model or an
// error, never a panic, and never more than the expansion limit decompressed.
func FuzzReadSnapshot(f *testing.F) {
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write([]byte(`{"kind": "EKSDoctorSnapshot", "version": 1, "objects": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}]}`))
	zw.Close()
	for _, s := range []string{
		`{"kind": "EKSDoctorSnapshot", "version": 1, "objects": []}`,
		`{"kind": "EKSDoctorSnapshot", "version": 1, "objects": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "annotations": {"a": "b"}}, "spec": {"containers": [{"name": "c", "env": [{"name": "X", "value": "y"}], "command": ["x"]}]}}]}`,
		`{"kind": "EKSDoctorSnapshot", "version": 1, "objects": [1, null, "x", {"kind": "Node"}]}`,
		`{"kind": "EKSDoctorSnapshot", "version": 2}`,
		`{"kind": "EKSDoctorSnapshot", "version": 1, "objects": [{"apiVersion": "apps/v1", "kind": "CronJob", "metadata": {"name": "c"}, "spec": {"jobTemplate": 3}}]}`,
		zipped.String(),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ReadSnapshot("s.json", data)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteSnapshot(&buf, m, false); err != nil {
			t.Fatalf("a snapshot that reads does not write: %v", err)
		}
		again, err := ReadSnapshot("s.json", buf.Bytes())
		if err != nil {
			t.Fatalf("a written snapshot does not read: %v", err)
		}
		if len(again.Objects) != len(m.Objects) {
			t.Errorf("%d objects read back from %d", len(again.Objects), len(m.Objects))
		}
	})
}

// A snapshot is bounded by the budget's bytes, which a flag raises: within
// them, a compressed snapshot expands to at most maxExpansion times its size;
// one object larger than the API server stores is a problem of its own, and
// gigabytes of a few huge objects are refused as out of proportion.
func TestSnapshotSizeBudget(t *testing.T) {
	small := `{"kind":"EKSDoctorSnapshot","version":1,"context":"c","objects":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}]}`
	if _, err := ReadSnapshotWithin("s.json", []byte(small), Budget{Bytes: 64}); err == nil || !strings.Contains(err.Error(), "larger than 64 bytes") || !strings.Contains(err.Error(), "--max-snapshot-size") {
		t.Errorf("a snapshot beyond the budget's bytes: err = %v", err)
	}
	if _, err := ReadSnapshotWithin("s.json", []byte(small), Budget{}); err != nil {
		t.Errorf("within the default: %v", err)
	}

	// A compressed stream of spaces: 40 MiB from a few KiB, beyond
	// maxExpansion times its size, is refused; the same bytes with a budget
	// below what they expand to are refused by the budget.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"kind":"EKSDoctorSnapshot","version":1,"objects":[`))
	zw.Write(bytes.Repeat([]byte(" "), 40<<20))
	zw.Write([]byte(`]}`))
	zw.Close()
	if _, err := ReadSnapshot("s.json.gz", gz.Bytes()); err == nil || !strings.Contains(err.Error(), "expands beyond 32 MiB") {
		t.Errorf("a compressed snapshot out of proportion to its size: err = %v", err)
	}
	if got := expandLimit(20<<20, DefaultBudget.Bytes); got != 1000<<20 {
		t.Errorf("20 MiB compressed may expand to %d bytes, want %d", got, 1000<<20)
	}
	if got := expandLimit(50<<20, DefaultBudget.Bytes); got != DefaultBudget.Bytes {
		t.Errorf("50 MiB compressed may expand to %d bytes, want the budget's %d", got, DefaultBudget.Bytes)
	}

	// One object over the API server's size: a problem naming it; the
	// others are read.
	huge := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"big","namespace":"x"},"data":{"a":"` + strings.Repeat("a", maxObjectBytes) + `"}}`
	data := `{"kind":"EKSDoctorSnapshot","version":1,"context":"c","objects":[` + huge + `,{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}]}`
	m, err := ReadSnapshot("s.json", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Objects) != 1 || find(m, "Node", "", "n1") == nil {
		t.Errorf("objects = %v, want the node only", refs(m))
	}
	if len(m.Problems) != 1 || m.Problems[0].Origin.Path != "objects.0" || !strings.Contains(m.Problems[0].Message, "more than any object the API server stores") {
		t.Errorf("problems = %+v", m.Problems)
	}

	// Out of proportion to the cluster it claims: past 128 MiB, objects
	// average at most 64 KiB.
	for _, tc := range []struct {
		size, objects int
		refused       bool
	}{
		{size: 100 << 20, objects: 10},                 // small: any shape
		{size: 900 << 20, objects: 1_200_000},          // a million pods
		{size: 200 << 20, objects: 100, refused: true}, // 2 MiB each
		{size: 1 << 30, objects: 0, refused: true},
	} {
		if err := disproportionate(tc.size, tc.objects); (err != nil) != tc.refused {
			t.Errorf("%d bytes of %d objects: err = %v, want refused %v", tc.size, tc.objects, err, tc.refused)
		}
	}
}
