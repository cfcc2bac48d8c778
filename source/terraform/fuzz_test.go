package terraform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// hang is how long one load may take before the fuzz targets call it a hang; the
// evaluation budget keeps real inputs far below it.
const hang = 20 * time.Second

// seedFiles adds every .tf file of the test data as a seed.
func seedFiles(f *testing.F, add func(string)) {
	f.Helper()
	_ = filepath.WalkDir("testdata", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".tf") {
			if src, err := os.ReadFile(p); err == nil {
				add(string(src))
			}
		}
		return nil
	})
}

var fuzzSeeds = []string{
	rawMain,
	"locals {\n  a = local.b\n  b = local.a\n}\n",
	"module \"self\" {\n  source = \"./\"\n  for_each = toset([\"a\", \"b\"])\n}\n",
	"locals { x = [for a in range(1000) : [for b in range(1000) : a * b]] }\n",
	"resource \"kubectl_manifest\" \"x\" {\n  yaml_body = <<-YAML\n    kind: ${var.x}\n    a: [${module.m.y}, {b: ${local.z ? 1 : 2}}]\n  YAML\n}\n",
	"resource \"helm_release\" \"x\" {\n  values = [yamlencode({a = module.k.v})]\n  set {\n    name = \"a\\\\.b[0].c\"\n    value = \"${module.k.v},x\"\n  }\n}\n",
	"locals { t = templatefile(\"main.tf\", {}) }\n",
	"data \"kubectl_file_documents\" \"d\" { content = \"---\\n---\\nkind: A\\n\" }\nresource \"kubectl_manifest\" \"m\" {\n  for_each = data.kubectl_file_documents.d.manifests\n  yaml_body = each.value\n}\n",
	"locals { x = format(\"%[999]s\", 1) }\n",
}

// FuzzLoadHCL loads arbitrary HCL (and tfvars) text: the loader must never panic, fail
// or stop on it.
func FuzzLoadHCL(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, "")
	}
	seedFiles(f, func(s string) { f.Add(s, "") })
	f.Add("variable \"x\" {\n  type = map(string)\n}\n", "x = { a = [1] }\n")
	f.Fuzz(func(t *testing.T, src, tfvars string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if tfvars != "" {
			if err := os.WriteFile(filepath.Join(dir, "terraform.tfvars"), []byte(tfvars), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		m, err := Load(dir, Options{})
		if d := time.Since(start); d > hang {
			t.Fatalf("Load took %s on %q", d, src)
		}
		if err != nil {
			t.Fatalf("Load: got error %v, want a model", err)
		}
		if m == nil {
			t.Fatal("Load: got no model")
		}
		for _, p := range m.Problems {
			if strings.Contains(p.Message, "could not be analysed") {
				t.Fatalf("Load panicked: %s", p.Message)
			}
		}
	})
}

// FuzzEvalExpression evaluates arbitrary expressions: unknowns, functions and
// operators must never panic.
func FuzzEvalExpression(f *testing.F) {
	for _, s := range []string{
		`jsondecode(jsonencode({a = module.k.v, b = [1, "x", null]}))`,
		`merge({a = module.k.v}, try(local.m.x, {}), {for k, v in {a = 1} : k => v})`,
		`"${module.k.v}-%{for s in ["a"]}${s}%{endfor}" == "x" ? 1 : 2`,
		`flatten([[module.k.v], [[1]]])[0]`,
		`yamldecode("a: [1, {b: c}]").a[1].b`,
		`tolist([module.k.v, "a"])`,
		`setproduct(range(10), range(10), range(10))`,
		`[for i, v in toset(["a"]) : "${i}${v}"...]`,
		`lookup(module.k.v, "a", null)`,
		`element([], 0)`,
		`regex("(", "x")`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		if strings.Contains(expr, "\n}") {
			return
		}
		src := "module \"k\" { source = \"example.com/k/aws\" }\nlocals {\n  m = {}\n  result = " + expr + "\n}\n"
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := Load(dir, Options{})
		if err != nil || m == nil {
			t.Fatalf("Load: got %v, %v", m, err)
		}
		for _, p := range m.Problems {
			if strings.Contains(p.Message, "could not be analysed") {
				t.Fatalf("Load panicked on %q: %s", expr, p.Message)
			}
		}
	})
}

// FuzzLoadPlan reads arbitrary plan JSON.
func FuzzLoadPlan(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "plan", "plan.json")); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`{"format_version":"1.2","planned_values":{"root_module":{"child_modules":[{"address":"module.x","resources":[{"address":"module.x.helm_release.y","mode":"managed","type":"helm_release","values":{"values":["a: ["],"set":[{"name":"a[","value":"b"}]}}]}]}}}`))
	f.Add([]byte(`{"format_version":"1.2","configuration":{"root_module":{"module_calls":{"k":{"source":"terraform-aws-modules/eks/aws//modules/karpenter","expressions":{"namespace":{"references":["var.x["]}}}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := LoadPlan("plan.json", data)
		if err == nil && m == nil {
			t.Fatal("LoadPlan: got neither a model nor an error")
		}
		if m != nil {
			for _, p := range m.Problems {
				if strings.Contains(p.Message, "could not be analysed") {
					t.Fatalf("LoadPlan panicked: %s", p.Message)
				}
			}
		}
	})
}

// FuzzLoadJSONConfig loads arbitrary Terraform JSON syntax.
func FuzzLoadJSONConfig(f *testing.F) {
	f.Add(cdktfJSON)
	f.Add(`{"resource": {"helm_release": {"x": [{"values": ["a: ${b}"]}]}}, "locals": [{"a": {"//": 1}}]}`)
	f.Add(`{"variable": {"v": {"type": "map(", "default": "\u0000"}}}`)
	f.Fuzz(func(t *testing.T, src string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.tf.json"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := Load(dir, Options{})
		if err != nil || m == nil {
			t.Fatalf("Load: got %v, %v", m, err)
		}
		for _, p := range m.Problems {
			if strings.Contains(p.Message, "could not be analysed") {
				t.Fatalf("Load panicked on %q: %s", src, p.Message)
			}
		}
	})
}

// FuzzDecodeYAML decodes arbitrary YAML the way Terraform configurations hand it over:
// helm_release values, aws-auth mapRoles, kubectl_manifest bodies with placeholders,
// and yamldecode. Errors or values, never a panic, and aliases never expand past
// their budget.
func FuzzDecodeYAML(f *testing.F) {
	for _, s := range []string{
		"a: 1", "settings:\n  clusterName: ${module.eks.cluster_name}\n", "- rolearn: ${x}\n  username: a\n  groups: [b]\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${var.n}\ndata: {a: \"${x}: y\"}\n",
		"a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]", "<<: *x", "a: ${", "? ${a}\n: b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if vals, lines, err := decodeValues(text, 1); err == nil {
			if n := countGo(vals); n > 10_000+5*len(text)+100 {
				t.Errorf("values: %d values from %d bytes", n, len(text))
			}
			for k, l := range lines {
				if l < 1 {
					t.Errorf("values: line %d for %s", l, k)
				}
			}
		}
		mapRoles(text, cluster.Origin{File: "main.tf", Line: 1})
		decodeObjects(text, cluster.Origin{File: "main.tf", Line: 3})
		l := newLoader(t.TempDir(), Options{})
		expr, diags := hclsyntax.ParseExpression([]byte(`yamldecode(x)`), "f.tf", hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		c := (&evalCtx{}).bind("x", cty.StringVal(text))
		if v, err := l.eval(expr, c); err == nil {
			if nodes, _, over := measure(v); over || nodes > 10_000+5*len(text)+100 {
				t.Errorf("yamldecode: %d values from %d bytes", nodes, len(text))
			}
		}
	})
}

func countGo(v any) int {
	n := 1
	switch t := v.(type) {
	case map[string]any:
		for _, x := range t {
			n += countGo(x)
		}
	case []any:
		for _, x := range t {
			n += countGo(x)
		}
	}
	return n
}
