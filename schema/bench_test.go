package schema

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/manifest"
)

// benchObjects is a realistic mix: the v1 examples, the v1beta1 examples, and the
// v1beta1 fixture read as v1 (many violations, hints and CEL failures).
func benchObjects(b testing.TB) []*cluster.Object {
	b.Helper()
	var objs []*cluster.Object
	for _, f := range fixtures(b, upstream(b, corpusExamplesV1+"/*.yaml"), upstream(b, corpusExamplesV1beta1+"/*.yaml")) {
		objs = append(objs, karpenterObjects(decodeFile(b, f))...)
	}
	for _, o := range decodeFile(b, "testdata/moves/v1beta1.yaml") {
		group, _, _ := strings.Cut(o.APIVersion, "/")
		objs = append(objs, withAPIVersion(o, group+"/v1"))
	}
	return objs
}

// BenchmarkValidate measures validation with the schemas compiled. "batch" is a run
// over many objects, where rule results for values seen before (requirement keys,
// labels, selector terms) are remembered; "unique" forgets them before every object,
// the cost of an object unlike any before it.
func BenchmarkValidate(b *testing.B) {
	objs := benchObjects(b)
	// The schemas compile on first use; that cost is paid once per process and is
	// measured by BenchmarkFirstValidate.
	for _, o := range objs {
		Validate(o)
	}
	b.Run("batch", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			Validate(objs[i%len(objs)])
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "objects/s")
	})
	b.Run("unique", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			b.StopTimer()
			forgetRuleResults()
			b.StartTimer()
			Validate(objs[i%len(objs)])
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "objects/s")
	})
}

// BenchmarkFirstValidate measures parsing the embedded CRDs and compiling one schema.
func BenchmarkFirstValidate(b *testing.B) {
	objs := benchObjects(b)
	for b.Loop() {
		resetSchemas()
		Validate(objs[0])
	}
	resetSchemas()
}

// resetSchemas forgets the parsed and compiled CRDs, to measure the first use.
func resetSchemas() {
	loaded, loadErr = loadAll()
}

// forgetRuleResults empties every rule memo of the compiled schemas.
func forgetRuleResults() {
	all, err := schemas()
	if err != nil {
		return
	}
	for _, rs := range all {
		for _, v := range rs.versions {
			if c, err := v.compile(); err == nil {
				if n, ok := c.cel.(*ruleNode); ok {
					forgetNode(n)
				}
			}
		}
	}
}

func forgetNode(n *ruleNode) {
	if n == nil {
		return
	}
	n.memo.mu.Lock()
	n.memo.m = nil
	n.memo.mu.Unlock()
	forgetNode(n.items)
	forgetNode(n.additional)
	for _, c := range n.props {
		forgetNode(c)
	}
}

var fuzzKinds = []struct{ apiVersion, kind string }{
	{"karpenter.sh/v1", "NodePool"},
	{"karpenter.sh/v1beta1", "NodePool"},
	{"karpenter.sh/v1", "NodeClaim"},
	{"karpenter.sh/v1beta1", "NodeClaim"},
	{"karpenter.k8s.aws/v1", "EC2NodeClass"},
	{"karpenter.k8s.aws/v1beta1", "EC2NodeClass"},
	{"karpenter.sh/v1alpha1", "NodeOverlay"},
	{"karpenter.sh/v1alpha5", "Provisioner"},
}

// FuzzValidate feeds arbitrary documents to every entry point, read as each Karpenter
// kind: nothing may panic, input must not change, and the output must be well formed.
func FuzzValidate(f *testing.F) {
	for _, file := range fixtures(f, upstream(f, corpusExamplesV1+"/*.yaml"), upstream(f, corpusExamplesV1beta1+"/*.yaml"), "testdata/invalid/*.yaml", "testdata/moves/*.yaml") {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			f.Add([]byte(doc), uint8(0))
		}
	}
	f.Add([]byte(`{"spec": {"template": {"spec": {"kubelet": null, "requirements": [{"key": 1}]}}, "disruption": []}}`), uint8(1))
	f.Add([]byte("spec: ${var.spec}\nmetadata: {name: ${x}, labels: [1]}"), uint8(4))
	f.Add([]byte("spec: {weight: 1e400, limits: {cpu: .nan}, template: {spec: {expireAfter: -.inf}}}"), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, pick uint8) {
		objs, _ := manifest.Decode("fuzz.yaml", data)
		for _, o := range objs {
			k := fuzzKinds[int(pick)%len(fuzzKinds)]
			o.Content["apiVersion"], o.Content["kind"] = k.apiVersion, k.kind
			o.APIVersion, o.Kind = k.apiVersion, k.kind
			before, _ := normalize(o.Content, 0).(map[string]any)

			checkWellFormed(t, Validate(o))
			for _, r := range Releases() {
				checkWellFormed(t, ValidateFor(o, r))
			}
			Defaults(o)
			fx := Fix(o)
			if fx.Object != nil {
				checkWellFormed(t, Validate(object(fx.Object)))
				ApplyMergePatch(fx.Object, fx.NodeClassPatch)
			}
			after, _ := normalize(o.Content, 0).(map[string]any)
			if !reflect.DeepEqual(before, after) {
				t.Fatalf("the object changed while it was validated and fixed")
			}
		}
	})
}

func checkWellFormed(t *testing.T, vs []Violation) {
	t.Helper()
	for i, v := range vs {
		if _, ok := kindNames[v.Kind]; !ok {
			t.Fatalf("violation %+v has an invalid kind", v)
		}
		if v.Message == "" {
			t.Fatalf("violation %+v has no message", v)
		}
		if v.Move != "" {
			if _, ok := moveByID(v.Move); !ok {
				t.Fatalf("violation %+v names an unknown move", v)
			}
		}
		if i > 0 && vs[i-1].Kind != Removed && (vs[i-1].Path > v.Path || (vs[i-1].Path == v.Path && vs[i-1].Message > v.Message)) {
			t.Fatalf("violations are not sorted: %q before %q", vs[i-1].Message, v.Message)
		}
	}
}
