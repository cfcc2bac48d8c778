package live

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/manifest"
)

// podsToCompare are pods with every field the checks read and several they do
// not, as a snapshot may hold them (older snapshots were not pruned).
var podsToCompare = []string{
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"apps","generation":3,"deletionGracePeriodSeconds":30,"labels":{"app":"web"},
	  "annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"password\":\"x\"}","eksdoctor.io/ignore":"pod-unschedulable"},
	  "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-5d8","controller":true,"blockOwnerDeletion":true,"uid":"u"}],
	  "finalizers":["example.com/hold"],"deletionTimestamp":"2026-01-02T03:04:05Z","creationTimestamp":"2026-01-01T00:00:00Z"},
	 "spec":{"nodeName":"n1","schedulerName":"default-scheduler","priorityClassName":"system-node-critical","priority":2000001000,
	  "nodeSelector":{"karpenter.sh/nodepool":"np-1"},
	  "tolerations":[{"key":"dedicated","operator":"Equal","value":"web","effect":"NoSchedule"},{"operator":"Exists","tolerationSeconds":300,"effect":"NoExecute"}],
	  "affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
	    {"matchExpressions":[{"key":"kubernetes.io/arch","operator":"In","values":["arm64","amd64"]},{"key":"karpenter.k8s.aws/instance-cpu","operator":"Gt","values":["4"]}]},
	    {"matchFields":[{"key":"metadata.name","operator":"In","values":["n1"]}]}]},
	   "preferredDuringSchedulingIgnoredDuringExecution":[{"weight":10,"preference":{"matchExpressions":[{"key":"zone","operator":"Exists"}]}}]},
	   "podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchLabels":{"app":"web"}},"topologyKey":"kubernetes.io/hostname"}]}},
	  "topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchLabels":{"app":"web"}}}],
	  "overhead":{"cpu":"250m","memory":"120Mi"},"runtimeClassName":"kata",
	  "schedulingGates":[{"name":"example.com/wait"}],
	  "initContainers":[{"name":"init","image":"busybox","command":["sh","-c","echo secret"],"restartPolicy":"Always",
	    "resources":{"limits":{"cpu":"1","memory":"1Gi"}}}],
	  "containers":[{"name":"main","image":"web:1","args":["--cluster-name=prod","--token=abc","--cluster-name"],
	    "env":[{"name":"CLUSTER_NAME","value":"prod"},{"name":"PASSWORD","value":"hunter2"},{"name":"FROM","valueFrom":{"secretKeyRef":{"name":"s","key":"k"}}}],
	    "ports":[{"containerPort":8080,"hostPort":8080,"protocol":"TCP"}],
	    "resources":{"requests":{"cpu":"100m","memory":"128Mi","nvidia.com/gpu":"1","ephemeral-storage":"1Gi"},"limits":{"memory":"256Mi"}}}],
	  "ephemeralContainers":[{"name":"debug","image":"busybox","command":["sh"],"env":[{"name":"TOKEN","value":"t"}]}],
	  "volumes":[{"name":"data","persistentVolumeClaim":{"claimName":"data-web-1"}},{"name":"tmp","emptyDir":{"sizeLimit":"1Gi"}}]},
	 "status":{"phase":"Pending","nominatedNodeName":"n2","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/3 nodes are available"}],
	  "containerStatuses":[{"name":"main","ready":false,"restartCount":4,"image":"web:1","imageID":"","state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}}`,
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bare"},"spec":{"containers":[{"name":"c"}]}}`,
	`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"nulls","labels":null},"spec":null,"status":null,"extra":[1,2.5,-0,1e3,true,null,{"a":[]}]}`,
	`{"kind":"Pod","apiVersion":"v1","metadata":{"namespace":"kube-system","name":"agent-x","ownerReferences":[{"kind":"DaemonSet","name":"agent"}]},"spec":{"containers":[]}}`,
}

// modelOptions compare models as the checks see them: a snapshot's pods have
// a way back to their whole content, and typed specs compare by meaning (a
// quantity keeps the text it was read from).
var modelOptions = cmp.Options{
	cmpopts.IgnoreFields(cluster.Object{}, "ContentFunc"),
	cmp.Comparer(func(a, b corev1.PodSpec) bool { return equality.Semantic.DeepEqual(a, b) }),
	cmp.Comparer(func(a, b corev1.PodStatus) bool { return equality.Semantic.DeepEqual(a, b) }),
}

// genericPod decodes a pod the way every other object is decoded: generic
// values, pruned, converted into the typed spec and status.
func genericPod(t testing.TB, raw []byte) (map[string]any, corev1.PodSpec, corev1.PodStatus, error) {
	t.Helper()
	var obj map[string]any
	if err := utiljson.Unmarshal(raw, &obj); err != nil {
		return nil, corev1.PodSpec{}, corev1.PodStatus{}, err
	}
	if err := checkObject(obj); err != nil {
		return nil, corev1.PodSpec{}, corev1.PodStatus{}, err
	}
	prune(obj)
	var spec corev1.PodSpec
	var status corev1.PodStatus
	for f, into := range map[string]any{"spec": &spec, "status": &status} {
		m, ok := obj[f].(map[string]any)
		if !ok {
			if obj[f] != nil {
				return nil, spec, status, fmt.Errorf("%s is not an object", f)
			}
			continue
		}
		if err := k8sruntime.DefaultUnstructuredConverter.FromUnstructured(m, into); err != nil {
			return nil, spec, status, err
		}
	}
	head := map[string]any{"apiVersion": obj["apiVersion"], "kind": obj["kind"], "metadata": obj["metadata"]}
	return head, spec, status, nil
}

// comparePod checks that the typed decoding of raw, when it accepts the pod,
// gives what the generic one gives.
func comparePod(t testing.TB, raw []byte) (typed bool) {
	t.Helper()
	var d objectDecoder
	content, body, err := d.decode(raw)
	if body == nil || err != nil {
		return false
	}
	prune(content)
	head, spec, status, err := genericPod(t, raw)
	if err != nil {
		t.Fatalf("the typed decoder accepts a pod the generic one refuses (%v):\n%s", err, raw)
	}
	if diff := cmp.Diff(head, content); diff != "" {
		t.Errorf("metadata differs (-generic +typed):\n%s\n%s", diff, raw)
	}
	if !equality.Semantic.DeepEqual(spec, body.Spec) {
		t.Errorf("spec differs (-generic +typed):\n%s\n%s", cmp.Diff(spec, body.Spec, cmpopts.EquateEmpty()), raw)
	}
	if !equality.Semantic.DeepEqual(status, body.Status) {
		t.Errorf("status differs (-generic +typed):\n%s\n%s", cmp.Diff(status, body.Status, cmpopts.EquateEmpty()), raw)
	}
	return true
}

// A snapshot's pods are decoded straight into their types; that gives what
// decoding them like any other object gives, and the model (after
// interpretation) is the same either way.
func TestSnapshotPodsDecodeAsGenericOnes(t *testing.T) {
	for _, p := range podsToCompare {
		if !comparePod(t, []byte(p)) {
			t.Errorf("the typed decoder refuses a valid pod:\n%s", p)
		}
	}

	// Through the whole reader: a snapshot of these pods, read (typed), and the
	// same objects given as generic ones, interpret to the same model.
	doc := `{"kind":"EKSDoctorSnapshot","version":1,"context":"c","objects":[` + strings.Join(podsToCompare, ",") +
		`,{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web-5d8","namespace":"apps","ownerReferences":[{"kind":"Deployment","name":"web","controller":true}]}}]}`
	typed, err := ReadSnapshot("s.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(typed.Pods) != len(podsToCompare) {
		t.Fatalf("%d pods decoded typed, want %d", len(typed.Pods), len(podsToCompare))
	}
	s := &state{Context: "c"}
	for _, p := range append(podsToCompare, `{"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"web-5d8","namespace":"apps","ownerReferences":[{"kind":"Deployment","name":"web","controller":true}]}}`) {
		var obj map[string]any
		if err := utiljson.Unmarshal([]byte(p), &obj); err != nil {
			t.Fatal(err)
		}
		s.Objects = append(s.Objects, obj)
	}
	generic := s.model()
	manifest.Interpret(typed)
	manifest.Interpret(generic)
	if diff := cmp.Diff(generic, typed, modelOptions); diff != "" {
		t.Errorf("models differ (-generic +typed):\n%s", diff)
	}
	// A snapshot written from what was read holds the whole pods, pruned.
	var buf bytes.Buffer
	if err := WriteSnapshot(&buf, typed, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"restartCount":4`, `"args":["--cluster-name","--cluster-name"]`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("rewritten snapshot lacks %s:\n%s", want, buf.String())
		}
	}
	for _, secret := range []string{"hunter2", "abc", "echo secret", "last-applied"} {
		if strings.Contains(buf.String(), secret) {
			t.Errorf("rewritten snapshot holds %q", secret)
		}
	}
}

// Pods the typed decoder is stricter about than the generic one take the
// generic way, which reads or reports them as before.
func TestSnapshotPodsTheTypedDecoderRefuses(t *testing.T) {
	for _, tc := range []struct{ name, pod, problem string }{
		{name: "duplicate member", pod: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"d"},"spec":{"nodeName":"a","nodeName":"b"}}`},
		{name: "number for a string", pod: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"n"},"spec":{"nodeName":3}}`, problem: "cannot decode pod spec"},
		{name: "spec not an object", pod: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"s"},"spec":"x"}`, problem: "cannot decode pod spec"},
		{name: "no name", pod: `{"apiVersion":"v1","kind":"Pod","metadata":{},"spec":{}}`, problem: "no metadata.name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d objectDecoder
			if _, body := d.pod([]byte(tc.pod)); body != nil {
				t.Fatal("the typed decoder accepted it")
			}
			m, err := ReadSnapshot("s.json", []byte(`{"kind":"EKSDoctorSnapshot","version":1,"objects":[`+tc.pod+`]}`))
			if err != nil {
				t.Fatal(err)
			}
			manifest.Interpret(m)
			var msgs []string
			for _, p := range m.Problems {
				msgs = append(msgs, p.Message)
			}
			if tc.problem == "" {
				if len(m.Pods) != 1 || len(msgs) != 0 {
					t.Errorf("pods = %d, problems = %q; want the pod read", len(m.Pods), msgs)
				}
				return
			}
			if len(m.Pods) != 0 || len(msgs) != 1 || !strings.Contains(msgs[0], tc.problem) {
				t.Errorf("pods = %d, problems = %q; want one problem with %q", len(m.Pods), msgs, tc.problem)
			}
		})
	}
}

// FuzzTypedPodDecode: whatever the typed decoder accepts, the generic one
// accepts and decodes the same.
func FuzzTypedPodDecode(f *testing.F) {
	for _, p := range podsToCompare {
		f.Add([]byte(p))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		comparePod(t, raw)
	})
}

// A snapshot edited by hand (indented, members in another order, the objects
// before the kind, unknown members) reads as the one eksdoctor wrote; one the
// fast reader refuses (a member twice) is read by the standard decoder, as
// before, the last value winning.
func TestSnapshotLayoutsReadAlike(t *testing.T) {
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"a"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]},"status":{"phase":"Pending"}}`
	node := `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"status":{"allocatable":{"cpu":"2","pods":"10"}}}`
	written := `{"kind":"EKSDoctorSnapshot","version":1,"context":"c","now":"2026-01-02T03:04:05Z","skipped":[{"resource":"events","reason":"forbidden"}],"objects":[` + node + `,` + pod + `]}`
	want, err := ReadSnapshot("s.json", []byte(written))
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Pods) != 1 || len(want.Live.Skipped) != 1 || want.Live.Now == "" {
		t.Fatalf("the written layout read wrong: %d pods, skipped %v, now %q", len(want.Pods), want.Live.Skipped, want.Live.Now)
	}
	for name, doc := range map[string]string{
		"edited": "{\n  \"objects\": [\n    " + strings.ReplaceAll(pod, `"kind":"Pod",`, `"kind": "Pod", "x-note": [1, {"a": null}],`) +
			",\n    " + node + "\n  ],\n  \"extra\": {\"k\": [true]},\n  \"now\": \"2026-01-02T03:04:05Z\", \"skipped\": [{\"resource\": \"events\", \"reason\": \"forbidden\"}],\n  \"version\": 1, \"context\": \"c\",\n  \"kind\": \"EKSDoctorSnapshot\"\n}\n",
		"member twice": `{"kind":"EKSDoctorSnapshot","version":1,"context":"other","context":"c","now":"2026-01-02T03:04:05Z","skipped":[{"resource":"events","reason":"forbidden"}],"objects":[` + node + `,` + pod + `]}`,
	} {
		got, err := ReadSnapshot("s.json", []byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		manifest.Interpret(got)
		w, _ := ReadSnapshot("s.json", []byte(written))
		manifest.Interpret(w)
		if diff := cmp.Diff(w, got, modelOptions); diff != "" {
			t.Errorf("%s: model differs from the written layout's (-written +%s):\n%s", name, name, diff)
		}
	}
}

// genericToCompare are objects, and texts that are not, for unmarshalGeneric:
// numbers of every kind, members twice, invalid UTF-8 and escapes, text after
// the object, values that are not objects, numbers no float64 holds.
var genericToCompare = []string{
	`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","generation":3},"data":{"a":"b"}}`,
	`{"i":1,"neg":-0,"big":9223372036854775807,"over":9223372036854775808,"f":1.0,"e":1e3,"E":2E-2,"l":[1,2.5,[3,{"x":4}]],"n":null,"t":true}`,
	`{"a":1,"a":{"b":2}}`,
	"{\"s\":\"\xff\xfe\",\"u\":\"\\ud800\",\"v\":\"caf\\u00e9\"}",
	` {"a":1} `,
	`{"a":1} x`,
	`{"a":1}{"b":2}`,
	`[1,2]`,
	`"text"`,
	`null`,
	`{"a":1e400,"b":[2e400]}`,
	`{"a":[1,1e999],"b":1e400}`,
	`{"a":`,
	``,
	`{"a":01}`,
}

// unmarshalGeneric decodes as client-go's decoder for unstructured objects
// does: the same values, with the same types, and the same errors.
func TestGenericDecodeAsClientGo(t *testing.T) {
	for _, raw := range genericToCompare {
		compareGeneric(t, []byte(raw))
	}
}

// FuzzGenericDecode: unmarshalGeneric and client-go's decoder agree on any
// input.
func FuzzGenericDecode(f *testing.F) {
	for _, raw := range genericToCompare {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		compareGeneric(t, raw)
	})
}

func compareGeneric(t *testing.T, raw []byte) {
	t.Helper()
	var want map[string]any
	wantErr := utiljson.Unmarshal(raw, &want)
	got, gotErr := unmarshalGeneric(raw)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("%q: error %v, client-go's %v", raw, gotErr, wantErr)
	}
	// The decoder's fast way gives the same, or takes the way above.
	var d objectDecoder
	fast, fastErr := d.object(raw)
	if fmt.Sprint(fastErr) != fmt.Sprint(wantErr) || fmt.Sprintf("%#v", fast) != fmt.Sprintf("%#v", got) {
		t.Fatalf("%q: the fast way gives %#v (%v), the standard one %#v (%v)", raw, fast, fastErr, got, gotErr)
	}
	if wantErr != nil {
		return
	}
	// %#v shows the types: an int64 is not a float64.
	if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
		t.Errorf("%q:\n got %#v\nwant %#v", raw, got, want)
	}
}

// One decoder's pods share the strings their specs and statuses repeat (the
// defaults an API server fills in, a workload's image), and a string with an
// escape sequence is still decoded whole.
func TestTypedPodsShareTheirStrings(t *testing.T) {
	pod := func(name, image string) []byte {
		return []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `","namespace":"apps"},` +
			`"spec":{"dnsPolicy":"ClusterFirst","containers":[{"name":"app","image":"` + image + `","terminationMessagePath":"/dev/termination-log","imagePullPolicy":"IfNotPresent"}],` +
			`"tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}]},` +
			`"status":{"phase":"Pending","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable"}]}}`)
	}
	var d objectDecoder
	_, a, err := d.decode(pod("a", "registry.example/app:1"))
	if err != nil || a == nil {
		t.Fatalf("pod a: %v %v", a, err)
	}
	_, b, err := d.decode(pod("b", `registry.example/app:1`))
	if err != nil || b == nil {
		t.Fatalf("pod b: %v %v", b, err)
	}
	same := func(what, x, y string) {
		t.Helper()
		if x != y || unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("%s: %q and %q are not one string", what, x, y)
		}
	}
	ca, cb := a.Spec.Containers[0], b.Spec.Containers[0]
	same("image", ca.Image, cb.Image)
	same("terminationMessagePath", ca.TerminationMessagePath, cb.TerminationMessagePath)
	same("imagePullPolicy", string(ca.ImagePullPolicy), string(cb.ImagePullPolicy))
	same("dnsPolicy", string(a.Spec.DNSPolicy), string(b.Spec.DNSPolicy))
	same("toleration key", a.Spec.Tolerations[0].Key, b.Spec.Tolerations[0].Key)
	same("toleration effect", string(a.Spec.Tolerations[0].Effect), string(b.Spec.Tolerations[0].Effect))
	same("phase", string(a.Status.Phase), string(b.Status.Phase))
	same("condition reason", a.Status.Conditions[0].Reason, b.Status.Conditions[0].Reason)
	if ca.ImagePullPolicy != corev1.PullIfNotPresent || *a.Spec.Tolerations[0].TolerationSeconds != 300 {
		t.Errorf("decoded %+v", a.Spec)
	}
	_, c, err := d.decode(pod("c", `registry.example/app\u003a2\"`))
	if err != nil || c == nil {
		t.Fatalf("pod c: %v %v", c, err)
	}
	if got := c.Spec.Containers[0].Image; got != `registry.example/app:2"` {
		t.Errorf("an escaped image decodes as %q", got)
	}
	if !comparePod(t, pod("d", `registry.example/app\u003a2\"`)) {
		t.Error("the typed decoder refuses a pod with an escaped image")
	}
}
