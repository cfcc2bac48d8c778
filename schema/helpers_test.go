package schema

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/shared"
	"github.com/eksdoctor/eksdoctor/source/manifest"
)

// The upstream configurations the tests read, as slash-separated paths relative to
// shared/corpus, where they are kept (see testdata/README.md).
const (
	// Karpenter's own examples, current and at v0.37.7.
	corpusExamplesV1      = "karpenter-provider-aws/examples/v1"
	corpusExamplesV1beta1 = "karpenter-provider-aws/@v0.37.7/examples/v1beta1"
	// The manifests of aws-samples/karpenter-blueprints, and the Terraform file of
	// its cluster, whose kubectl_manifest resources hold the default NodePool and
	// EC2NodeClass as yaml_body heredocs.
	corpusBlueprints        = "karpenter-blueprints/blueprints"
	corpusBlueprintsCluster = "karpenter-blueprints/cluster/terraform/karpenter.tf"
)

// upstream returns the path of rel, a file or glob pattern relative to
// shared/corpus; the test fails when shared/corpus is not found.
func upstream(t testing.TB, rel string) string {
	t.Helper()
	return filepath.Join(shared.Dir(t, "corpus"), filepath.FromSlash(rel))
}

// corpusName returns the slash-separated path of file relative to shared/corpus,
// the name of an upstream file wherever the corpus is kept.
func corpusName(t testing.TB, file string) string {
	t.Helper()
	rel, err := filepath.Rel(shared.Dir(t, "corpus"), file)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return filepath.ToSlash(rel)
}

// decodeFile reads every object of a fixture; a fixture that does not decode fails the
// test, since the fixtures are known-good YAML.
func decodeFile(t testing.TB, file string) []*cluster.Object {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	objs, probs := manifest.Decode(file, data)
	if len(probs) > 0 {
		t.Fatalf("decode %s: %v", file, probs)
	}
	return objs
}

// fixtures lists the files matching patterns, sorted; an empty match fails the test so
// a moved fixture cannot make a test pass vacuously. Patterns of upstream files
// come from upstream.
func fixtures(t testing.TB, patterns ...string) []string {
	t.Helper()
	var files []string
	for _, p := range patterns {
		m, err := filepath.Glob(p)
		if err != nil {
			t.Fatalf("glob %s: %v", p, err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatalf("no fixtures match %v", patterns)
	}
	sort.Strings(files)
	return files
}

// karpenterObjects keeps the objects Validate is about.
func karpenterObjects(objs []*cluster.Object) []*cluster.Object {
	var out []*cluster.Object
	for _, o := range objs {
		if strings.HasPrefix(o.APIVersion, GroupKarpenter+"/") || strings.HasPrefix(o.APIVersion, GroupAWS+"/") {
			out = append(out, o)
		}
	}
	return out
}

// heredoc returns the body of the `yaml_body = <<-YAML` heredoc of a Terraform resource
// ("kubectl_manifest.name"), with the indentation <<- strips removed, and the line the
// body starts on.
func heredoc(t testing.TB, file, address string) ([]byte, int) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	typ, name, _ := strings.Cut(address, ".")
	header := `resource "` + typ + `" "` + name + `"`
	var body []string
	start, inResource, inBody := 0, false, false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, header):
			inResource = true
		case inResource && !inBody && strings.Contains(line, "yaml_body") && strings.Contains(line, "<<-YAML"):
			inBody, start = true, n+1
		case inBody && strings.TrimSpace(line) == "YAML":
			return []byte(dedent(body)), start
		case inBody:
			body = append(body, line)
		}
	}
	t.Fatalf("%s: no yaml_body heredoc in %s", file, address)
	return nil, 0
}

// dedent removes the indentation common to all non-blank lines, as <<- does.
func dedent(lines []string) string {
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	var b strings.Builder
	for _, l := range lines {
		if len(l) >= indent && indent > 0 {
			l = l[indent:]
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// withAPIVersion returns a copy of obj under another apiVersion, nothing else changed.
func withAPIVersion(obj *cluster.Object, apiVersion string) *cluster.Object {
	c := *obj
	c.APIVersion = apiVersion
	c.Content, _ = normalize(obj.Content, 0).(map[string]any)
	c.Content["apiVersion"] = apiVersion
	return &c
}

// object wraps content the way a loader would.
func object(content map[string]any) *cluster.Object {
	o := &cluster.Object{Content: content}
	o.APIVersion, _ = content["apiVersion"].(string)
	o.Kind, _ = content["kind"].(string)
	if md, ok := content["metadata"].(map[string]any); ok {
		o.Name, _ = md["name"].(string)
	}
	return o
}

// decodeYAML decodes text that starts at line of file.
func decodeYAML(t testing.TB, file string, line int, text []byte) []*cluster.Object {
	t.Helper()
	objs, probs := manifest.DecodeAt(file, line, text)
	if len(probs) > 0 {
		t.Fatalf("decode %s:%d: %v", file, line, probs)
	}
	return objs
}
