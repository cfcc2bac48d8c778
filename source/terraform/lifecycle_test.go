package terraform

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/eksdoctor/eksdoctor/cluster"
)

const lifecyclePool = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
`

const lifecycleClass = `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: karpenter-node
`

// lifecycleFiles is a configuration whose karpenter.yaml holds a NodePool and
// an EC2NodeClass of the same name, read by data.kubectl_file_documents.k, and
// whose main.tf ends with res.
func lifecycleFiles(res string) map[string]string {
	return map[string]string{
		"karpenter.yaml": lifecycleClass + "---\n" + lifecyclePool,
		"pool.yaml":      lifecyclePool,
		"main.tf": `data "kubectl_file_documents" "k" {
  content = file("${path.module}/karpenter.yaml")
}

data "kubectl_file_documents" "pool" {
  content = file("${path.module}/pool.yaml")
}

` + res,
	}
}

func loadKeys(t *testing.T, files map[string]string, addr string) (*cluster.Model, *cluster.InstanceKeys) {
	t.Helper()
	m, err := Load(writeDir(t, files), Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := m.Terraform.Nodes[addr]
	if n == nil {
		t.Fatalf("no graph node %s", addr)
	}
	return m, n.Keys
}

func TestInstanceKeys(t *testing.T) {
	t.Parallel()
	byName := `{ for doc in data.kubectl_file_documents.k.documents : "${yamldecode(doc).kind}/${yamldecode(doc).metadata.name}" => doc }`
	for _, c := range []struct {
		name, res string
		arg, from string
		documents string
		rekey     map[string]string
	}{
		{
			name: "toset of documents",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  for_each  = toset(data.kubectl_file_documents.k.documents)\n  yaml_body = each.value\n}\n",
			arg:  "for_each", from: cluster.KeysContent, documents: "data.kubectl_file_documents.k.documents",
			rekey: map[string]string{"for_each": byName},
		},
		{
			name: "for keyed by the document",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  for_each  = { for d in data.kubectl_file_documents.k.documents : d => d if d != \"\" }\n  yaml_body = each.value\n}\n",
			arg:  "for_each", from: cluster.KeysContent, documents: "data.kubectl_file_documents.k.documents",
			rekey: map[string]string{"for_each": `{ for d in data.kubectl_file_documents.k.documents : "${yamldecode(d).kind}/${yamldecode(d).metadata.name}" => d if d != "" }`},
		},
		{
			name: "for keyed by a hash",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  for_each  = { for d in data.kubectl_file_documents.k.documents : sha256(yamlencode(yamldecode(d))) => d }\n  yaml_body = each.value\n}\n",
			arg:  "for_each", from: cluster.KeysDigest, documents: "data.kubectl_file_documents.k.documents",
			rekey: map[string]string{"for_each": `{ for d in data.kubectl_file_documents.k.documents : "${yamldecode(d).kind}/${yamldecode(d).metadata.name}" => d }`},
		},
		{
			name: "for keyed by the index",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  for_each  = { for i, d in data.kubectl_file_documents.k.documents : tostring(i) => d }\n  yaml_body = each.value\n}\n",
			arg:  "for_each", from: cluster.KeysPosition, documents: "data.kubectl_file_documents.k.documents",
			rekey: map[string]string{"for_each": `{ for i, d in data.kubectl_file_documents.k.documents : "${yamldecode(d).kind}/${yamldecode(d).metadata.name}" => d }`},
		},
		{
			name: "count by index",
			res:  "resource \"kubernetes_manifest\" \"x\" {\n  count    = length(data.kubectl_file_documents.k.documents)\n  manifest = yamldecode(data.kubectl_file_documents.k.documents[count.index])\n}\n",
			arg:  "count", from: cluster.KeysPosition, documents: "data.kubectl_file_documents.k.documents",
			rekey: map[string]string{"count": "null", "for_each": byName, "manifest": "yamldecode(each.value)"},
		},
		{
			name: "count under a condition, counting documents rendered with placeholders",
			res:  "variable \"on\" {\n  default = true\n}\n\ndata \"kubectl_file_documents\" \"dummy\" {\n  content = file(\"${path.module}/karpenter.yaml\")\n}\n\nresource \"kubectl_manifest\" \"x\" {\n  count     = var.on ? length(data.kubectl_file_documents.dummy.documents) : 0\n  yaml_body = element(data.kubectl_file_documents.k.documents, count.index)\n}\n",
			arg:  "count", from: cluster.KeysPosition, documents: "data.kubectl_file_documents.dummy.documents",
			rekey: map[string]string{
				"count":     "null",
				"for_each":  `var.on ? { for i, doc in data.kubectl_file_documents.dummy.documents : "${yamldecode(doc).kind}/${yamldecode(doc).metadata.name}" => i } : {}`,
				"yaml_body": "element(data.kubectl_file_documents.k.documents, each.value)",
			},
		},
		{
			name: "count under a condition, zero first",
			res:  "variable \"off\" {\n  default = false\n}\n\nresource \"kubectl_manifest\" \"x\" {\n  count     = var.off ? 0 : length(data.kubectl_file_documents.k.documents)\n  yaml_body = data.kubectl_file_documents.k.documents[count.index]\n}\n",
			arg:  "count", from: cluster.KeysPosition, documents: "data.kubectl_file_documents.k.documents",
			rekey: map[string]string{"count": "null", "for_each": "var.off ? {} : " + byName, "yaml_body": "each.value"},
		},
		{
			name: "count indexing a list of other documents",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  count     = length(data.kubectl_file_documents.k.documents)\n  yaml_body = element(data.kubectl_file_documents.pool.documents, count.index)\n}\n",
			arg:  "count",
		},
		{
			name: "count under a condition that is not zero",
			res:  "variable \"on\" {\n  default = true\n}\n\nresource \"kubectl_manifest\" \"x\" {\n  count     = var.on ? length(data.kubectl_file_documents.k.documents) : 1\n  yaml_body = element(data.kubectl_file_documents.k.documents, count.index)\n}\n",
			arg:  "count",
		},
		{
			name: "count that uses count.index otherwise too",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  count     = length(data.kubectl_file_documents.k.documents)\n  yaml_body = element(data.kubectl_file_documents.k.documents, count.index)\n  force_conflicts = count.index > 0\n}\n",
			arg:  "count", from: cluster.KeysPosition, documents: "data.kubectl_file_documents.k.documents",
		},
		{
			name: "count that does not index the documents",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  count     = length(data.kubectl_file_documents.k.documents)\n  yaml_body = file(\"pool.yaml\")\n}\n",
			arg:  "count",
		},
		{
			name: "count of a number",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  count     = 1\n  yaml_body = file(\"pool.yaml\")\n}\n",
			arg:  "count",
		},
		{
			name: "a local set of documents",
			res:  "locals {\n  docs = toset(data.kubectl_file_documents.k.documents)\n}\n\nresource \"kubectl_manifest\" \"x\" {\n  for_each  = local.docs\n  yaml_body = each.value\n}\n",
			arg:  "for_each", from: cluster.KeysContent,
		},
		{
			name: "a local map keyed by the documents",
			res:  "locals {\n  docs = { for d in data.kubectl_file_documents.k.documents : d => d }\n}\n\nresource \"kubectl_manifest\" \"x\" {\n  for_each  = local.docs\n  yaml_body = each.value\n}\n",
			arg:  "for_each", from: cluster.KeysContent,
		},
		{
			name: "a local map keyed by a hash",
			res:  "locals {\n  docs = { for d in data.kubectl_file_documents.k.documents : md5(d) => d }\n}\n\nresource \"kubectl_manifest\" \"x\" {\n  for_each  = local.docs\n  yaml_body = each.value\n}\n",
			arg:  "for_each", from: cluster.KeysDigest,
		},
		{
			name: "a local map keyed by name",
			res:  "locals {\n  docs = { for d in data.kubectl_file_documents.k.documents : yamldecode(d).kind => d }\n}\n\nresource \"kubectl_manifest\" \"x\" {\n  for_each  = local.docs\n  yaml_body = each.value\n}\n",
			arg:  "for_each",
		},
		{
			name: "a for expression over the manifests keyed by the documents",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  for_each  = { for link, d in data.kubectl_file_documents.k.manifests : d => d }\n  yaml_body = each.value\n}\n",
			arg:  "for_each", from: cluster.KeysContent,
		},
		{
			name: "a for expression over the manifests keyed by self link",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  for_each  = { for link, d in data.kubectl_file_documents.k.manifests : link => d }\n  yaml_body = each.value\n}\n",
			arg:  "for_each",
		},
		{
			name: "keyed by name",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  for_each  = { for d in data.kubectl_file_documents.pool.documents : yamldecode(d).metadata.name => d }\n  yaml_body = each.value\n}\n",
			arg:  "for_each",
		},
		{
			name: "a hash of the name",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  for_each  = { for d in data.kubectl_file_documents.pool.documents : md5(yamldecode(d).metadata.name) => d }\n  yaml_body = each.value\n}\n",
			arg:  "for_each",
		},
		{
			name: "the manifests map, keyed by self link",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  for_each  = data.kubectl_file_documents.k.manifests\n  yaml_body = each.value\n}\n",
			arg:  "for_each",
		},
		{
			name: "a literal map",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  for_each  = { default = file(\"pool.yaml\") }\n  yaml_body = each.value\n}\n",
			arg:  "for_each",
		},
		{
			name: "file names",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  for_each  = fileset(path.module, \"*.yaml\")\n  yaml_body = file(each.value)\n}\n",
			arg:  "for_each",
		},
		{
			name: "a set of strings that are not documents",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  for_each  = toset([\"a\", \"b\"])\n  yaml_body = file(\"pool.yaml\")\n}\n",
			arg:  "for_each",
		},
		{
			name: "object values keyed by their encoding",
			res:  "locals {\n  pools = [yamldecode(file(\"pool.yaml\"))]\n}\n\nresource \"kubectl_manifest\" \"x\" {\n  for_each  = { for np in local.pools : yamlencode(np) => np }\n  yaml_body = yamlencode(each.value)\n}\n",
			arg:  "for_each", from: cluster.KeysContent, documents: "local.pools",
			rekey: map[string]string{"for_each": `{ for np in local.pools : "${np.kind}/${np.metadata.name}" => np }`},
		},
		{
			name: "object values keyed by name",
			res:  "locals {\n  pools = [yamldecode(file(\"pool.yaml\"))]\n}\n\nresource \"kubectl_manifest\" \"x\" {\n  for_each  = { for np in local.pools : np.metadata.name => np }\n  yaml_body = yamlencode(each.value)\n}\n",
			arg:  "for_each",
		},
		{
			name: "documents with the same kind and name",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  for_each  = toset(concat(data.kubectl_file_documents.pool.documents, [\"# again\\n${data.kubectl_file_documents.pool.documents[0]}\"]))\n  yaml_body = each.value\n}\n",
			arg:  "for_each", from: cluster.KeysContent, documents: "concat(data.kubectl_file_documents.pool.documents, [\"# again\\n${data.kubectl_file_documents.pool.documents[0]}\"])",
		},
		{
			name: "documents written over lines",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  for_each = toset(concat(\n    data.kubectl_file_documents.k.documents,\n  ))\n  yaml_body = each.value\n}\n",
			arg:  "for_each", from: cluster.KeysContent, documents: "concat( data.kubectl_file_documents.k.documents, )",
		},
		{
			name: "a for expression written over lines",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  for_each = { for d in concat(\n    data.kubectl_file_documents.k.documents,\n  ) : d => d }\n  yaml_body = each.value\n}\n",
			arg:  "for_each", from: cluster.KeysContent, documents: "concat( data.kubectl_file_documents.k.documents, )",
		},
		{
			name: "a for expression that groups",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  for_each  = { for d in data.kubectl_file_documents.k.documents : d => d... }\n  yaml_body = each.value[0]\n}\n",
			arg:  "for_each",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			addr := "kubectl_manifest.x"
			if strings.Contains(c.res, "kubernetes_manifest") {
				addr = "kubernetes_manifest.x"
			}
			_, k := loadKeys(t, lifecycleFiles(c.res), addr)
			if k == nil {
				t.Fatal("no keys")
			}
			if k.Arg != c.arg || k.From != c.from || k.Documents != c.documents {
				t.Errorf("keys = %s %q from %q of %q, want %s from %q of %q", k.Arg, k.Expr, k.From, k.Documents, c.arg, c.from, c.documents)
			}
			if filepath.Base(k.Origin.File) != "main.tf" || k.Origin.Line == 0 {
				t.Errorf("origin %s, want the argument's line in main.tf", k.Origin)
			}
			if !equalMaps(k.Rekey, c.rekey) {
				t.Errorf("rekey = %q, want %q", k.Rekey, c.rekey)
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestInstanceKeysOnlyForManifests(t *testing.T) {
	t.Parallel()
	m, err := Load(writeDir(t, lifecycleFiles(`resource "helm_release" "x" {
  for_each = toset(data.kubectl_file_documents.k.documents)
  name     = "x"
  chart    = "x"
}

resource "kubectl_manifest" "plain" {
  yaml_body = file("pool.yaml")
}
`)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{"helm_release.x", "kubectl_manifest.plain", "data.kubectl_file_documents.k"} {
		if k := m.Terraform.Nodes[addr].Keys; k != nil {
			t.Errorf("%s has keys %+v", addr, k)
		}
	}
}

// TestRekeyByNameEdit applies the rewrite and reads the configuration again:
// the objects are the same, keyed by kind and name, and the keys no longer
// follow the content.
func TestRekeyByNameEdit(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, res, addr, want string
	}{
		{
			name: "for_each",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  for_each  = toset(data.kubectl_file_documents.k.documents)\n  yaml_body = each.value\n  wait      = true\n}\n",
			addr: "kubectl_manifest.x",
			want: "resource \"kubectl_manifest\" \"x\" {\n  for_each  = { for doc in data.kubectl_file_documents.k.documents : \"${yamldecode(doc).kind}/${yamldecode(doc).metadata.name}\" => doc }\n  yaml_body = each.value\n  wait      = true\n}\n",
		},
		{
			name: "count",
			res:  "resource \"kubectl_manifest\" \"x\" {\n  count     = length(data.kubectl_file_documents.k.documents)\n  yaml_body = element(data.kubectl_file_documents.k.documents, count.index)\n}\n",
			addr: "kubectl_manifest.x",
			want: "resource \"kubectl_manifest\" \"x\" {\n  yaml_body = each.value\n  for_each  = { for doc in data.kubectl_file_documents.k.documents : \"${yamldecode(doc).kind}/${yamldecode(doc).metadata.name}\" => doc }\n}\n",
		},
		{
			name: "count of placeholder documents",
			res:  "data \"kubectl_file_documents\" \"dummy\" {\n  content = file(\"${path.module}/karpenter.yaml\")\n}\n\nresource \"kubectl_manifest\" \"x\" {\n  count     = true ? length(data.kubectl_file_documents.dummy.documents) : 0\n  yaml_body = element(data.kubectl_file_documents.k.documents, count.index)\n}\n",
			addr: "kubectl_manifest.x",
			want: "resource \"kubectl_manifest\" \"x\" {\n  yaml_body = element(data.kubectl_file_documents.k.documents, each.value)\n  for_each  = true ? { for i, doc in data.kubectl_file_documents.dummy.documents : \"${yamldecode(doc).kind}/${yamldecode(doc).metadata.name}\" => i } : {}\n}\n",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			files := lifecycleFiles(c.res)
			dir := writeDir(t, files)
			m, err := Load(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			e, ok := RekeyByNameEdit(m.Terraform, c.addr)
			if !ok {
				t.Fatal("no edit")
			}
			p := e.File
			src, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out, err := ApplyHCL(src, e)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(out); !strings.HasSuffix(got, c.want) {
				t.Errorf("after the edit:\n%s\nwant it to end with:\n%s", got, c.want)
			}
			if err := os.WriteFile(p, out, 0o644); err != nil {
				t.Fatal(err)
			}
			m2, err := Load(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if k := m2.Terraform.Nodes[c.addr].Keys; k == nil || k.From != "" {
				t.Errorf("after the edit the keys are %+v, want keys that do not follow the content", k)
			}
			var vias []string
			for _, o := range m2.Objects {
				vias = append(vias, o.Via)
			}
			sort.Strings(vias)
			want := []string{c.addr + `["EC2NodeClass/default"]`, c.addr + `["NodePool/default"]`}
			if strings.Join(vias, " ") != strings.Join(want, " ") {
				t.Errorf("objects after the edit come from %q, want %q", vias, want)
			}
		})
	}
}

func TestRekeyByNameEditRefuses(t *testing.T) {
	t.Parallel()
	g := cluster.NewGraph()
	keyed := &cluster.InstanceKeys{From: cluster.KeysContent, Rekey: map[string]string{"for_each": "{}"}}
	g.Add(&cluster.Resource{Address: "kubectl_manifest.json", Origin: cluster.Origin{File: "main.tf.json", Line: 3}, Keys: keyed})
	g.Add(&cluster.Resource{Address: "kubectl_manifest.stable", Origin: cluster.Origin{File: "main.tf", Line: 3}, Keys: &cluster.InstanceKeys{Rekey: map[string]string{"for_each": "{}"}}})
	g.Add(&cluster.Resource{Address: "kubectl_manifest.none", Origin: cluster.Origin{File: "main.tf", Line: 9}, Keys: &cluster.InstanceKeys{From: cluster.KeysContent}})
	g.Add(&cluster.Resource{Address: "kubectl_manifest.ok", Origin: cluster.Origin{File: "main.tf", Line: 12}, Keys: keyed})
	for _, addr := range []string{"kubectl_manifest.json", "kubectl_manifest.stable", "kubectl_manifest.none", "kubectl_manifest.missing"} {
		if e, ok := RekeyByNameEdit(g, addr); ok {
			t.Errorf("%s: edit %+v, want none", addr, e)
		}
	}
	if _, ok := RekeyByNameEdit(nil, "kubectl_manifest.ok"); ok {
		t.Error("an edit without a graph")
	}
	e, ok := RekeyByNameEdit(g, "kubectl_manifest.ok")
	if !ok || e.File != "main.tf" || e.Line != 12 || e.Format != cluster.FormatHCL || e.Text != "for_each = {}\n" {
		t.Errorf("edit %+v, %v", e, ok)
	}
}

func TestIsObjectDoc(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    string
		want bool
	}{
		{lifecyclePool, true},
		{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"}}`, true},
		// Values not known yet that break the YAML: the top-level lines say so.
		{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: [${module.x.y}]\n", true},
		{"kind: ConfigMap\n", false},
		{"metadata:\n  name: x\n", false},
		{"nodepools/default.yaml", false},
		{"", false},
		{"kind: [\nmetadata: x", false},
	} {
		if got := isObjectDoc(c.s); got != c.want {
			t.Errorf("isObjectDoc(%q) = %v, want %v", c.s, got, c.want)
		}
	}
}

func TestDigestOf(t *testing.T) {
	t.Parallel()
	text := "kind: NodePool\n"
	for _, c := range []struct {
		key  string
		want bool
	}{
		{"1d0fd4c52ac5f5b1d0ea74fe2e8f85b4", false},
		{"d7d3b53f5c8b4e4d9e7ab1a0a5d3f3b1", false},
		{"a2V5", false},
		{"a2luZDogTm9kZVBvb2wK", true}, // base64encode
		{text, false},
	} {
		if got := digestOf(text, c.key); got != c.want {
			t.Errorf("digestOf(%q) = %v, want %v", c.key, got, c.want)
		}
	}
	for _, f := range []string{"md5", "sha1", "sha256", "sha512", "base64sha256", "base64sha512"} {
		v, err := tfFuncs[f].Call([]cty.Value{cty.StringVal(text)})
		if err != nil {
			t.Fatal(err)
		}
		if !digestOf(text, v.AsString()) {
			t.Errorf("%s(text) is not taken for a digest of it", f)
		}
	}
}

func TestForKeyFrom(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		expr, want string
	}{
		{`{ for d in x : d => d }`, cluster.KeysContent},
		{`{ for d in x : trimspace(d) => d }`, cluster.KeysContent},
		{`{ for d in x : jsonencode(yamldecode(d)) => d }`, cluster.KeysContent},
		{`{ for d in x : md5(d) => d }`, cluster.KeysDigest},
		{`{ for d in x : uuidv5("dns", d) => d }`, cluster.KeysDigest},
		{`{ for d in x : base64sha256(trimspace(d)) => d }`, cluster.KeysDigest},
		{`{ for i, d in x : i => d }`, cluster.KeysPosition},
		{`{ for i, d in x : tostring(i) => d }`, cluster.KeysPosition},
		{`{ for d in x : yamldecode(d).metadata.name => d }`, ""},
		{`{ for d in x : md5(yamldecode(d).metadata.name) => d }`, ""},
		{`{ for d in x : "pool" => d }`, ""},
		{`{ for d in x : md5() => d }`, ""},
		{`{ for i, d in x : d.name => d }`, ""},
		{`{ for d in x : lookup(d, "a") => d }`, ""},
	} {
		e, diags := hclsyntax.ParseExpression([]byte(c.expr), "x.tf", hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatalf("%s: %v", c.expr, diags)
		}
		if got := forKeyFrom(e.(*hclsyntax.ForExpr)); got != c.want {
			t.Errorf("forKeyFrom(%s) = %q, want %q", c.expr, got, c.want)
		}
	}
}

func TestByNameFor(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		keyVar, valVar, coll, val, cond string
		structured                      bool
		want                            string
	}{
		{"", "doc", "data.x.y.documents", "doc", "", false, `{ for doc in data.x.y.documents : "${yamldecode(doc).kind}/${yamldecode(doc).metadata.name}" => doc }`},
		{"i", "d", "local.docs", "yamldecode(d)", `d != ""`, false, `{ for i, d in local.docs : "${yamldecode(d).kind}/${yamldecode(d).metadata.name}" => yamldecode(d) if d != "" }`},
		{"", "np", "local.pools", "np", "", true, `{ for np in local.pools : "${np.kind}/${np.metadata.name}" => np }`},
	} {
		if got := byNameFor(c.keyVar, c.valVar, c.coll, c.val, c.cond, c.structured); got != c.want {
			t.Errorf("byNameFor = %s, want %s", got, c.want)
		}
	}
}

func TestOneLineAndUniqueIdentities(t *testing.T) {
	t.Parallel()
	if s, ok := oneLine("a.b"); !ok || s != "a.b" {
		t.Errorf("oneLine(a.b) = %q, %v", s, ok)
	}
	for _, s := range []string{"", "a(\n)", "a\r"} {
		if _, ok := oneLine(s); ok {
			t.Errorf("oneLine(%q) is one line", s)
		}
	}
	for _, c := range []struct {
		ids  []string
		want bool
	}{
		{[]string{"NodePool/a", "EC2NodeClass/a"}, true},
		{[]string{"NodePool/a", "NodePool/a"}, false},
		{[]string{"NodePool/a", ""}, false},
		{nil, true},
	} {
		if got := uniqueIdentities(c.ids); got != c.want {
			t.Errorf("uniqueIdentities(%q) = %v, want %v", c.ids, got, c.want)
		}
	}
}

func TestDocumentID(t *testing.T) {
	t.Parallel()
	obj := func(attrs map[string]cty.Value) cty.Value { return cty.ObjectVal(attrs) }
	meta := obj(map[string]cty.Value{"name": cty.StringVal("a")})
	for _, c := range []struct {
		name           string
		v              cty.Value
		id             string
		structured, ok bool
	}{
		{"text", cty.StringVal(lifecyclePool), "NodePool/default", false, true},
		{"text without a name", cty.StringVal("kind: NodePool\nmetadata:\n  labels: {}\n"), "", false, true},
		{"text that is no object", cty.StringVal("a: b"), "", false, false},
		{"object", obj(map[string]cty.Value{"kind": cty.StringVal("NodePool"), "metadata": meta}), "NodePool/a", true, true},
		{"map", cty.MapVal(map[string]cty.Value{"kind": cty.StringVal("NodePool"), "metadata": cty.StringVal("x")}), "", false, false},
		{"object without metadata", obj(map[string]cty.Value{"kind": cty.StringVal("NodePool")}), "", false, false},
		{"object with an unknown name", obj(map[string]cty.Value{"kind": cty.StringVal("NodePool"), "metadata": obj(map[string]cty.Value{"name": cty.UnknownVal(cty.String)})}), "", true, true},
		{"unknown", cty.UnknownVal(cty.String), "", false, false},
		{"number", cty.NumberIntVal(1), "", false, false},
	} {
		id, structured, ok := documentID(c.v)
		if id != c.id || structured != c.structured || ok != c.ok {
			t.Errorf("%s: documentID = %q, %v, %v; want %q, %v, %v", c.name, id, structured, ok, c.id, c.structured, c.ok)
		}
	}
	if attrOf(cty.StringVal("x"), "kind") != cty.NilVal {
		t.Error("attrOf a string")
	}
	if v := attrOf(cty.MapVal(map[string]cty.Value{"kind": cty.StringVal("x")}), "kind"); v.AsString() != "x" {
		t.Errorf("attrOf a map = %#v", v)
	}
}
