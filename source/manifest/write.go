package manifest

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// The YAML writer: values rendered as block YAML in the order people write
// Kubernetes objects, and merge patches of the objects manifests declare.

// fieldRank orders the keys of rendered YAML the way people write Kubernetes
// objects (key before operator before value before effect).
var fieldRank = map[string]int{
	"apiVersion": 0, "kind": 1, "metadata": 2, "name": 3, "namespace": 4, "labels": 5, "annotations": 6,
	"spec": 7, "key": 10, "operator": 11, "value": 12, "values": 13, "effect": 14, "tolerationSeconds": 15,
	"rolearn": 20, "username": 21, "groups": 22,
}

// FieldLess orders the keys of rendered objects the way people write
// Kubernetes objects (fieldRank), then alphabetically. The HCL writer uses the
// same order.
func FieldLess(a, b string) bool {
	ra, oka := fieldRank[a]
	rb, okb := fieldRank[b]
	switch {
	case oka && okb && ra != rb:
		return ra < rb
	case oka != okb:
		return oka
	}
	return a < b
}

// YAMLText renders a value as block YAML with keys in conventional order. It is
// used for every YAML snippet a fix proposes. A snippet once rendered is
// remembered by its YAML tree: a large input proposes the same one for
// thousands of objects, and the encoder is most of the cost of a fix.
func YAMLText(v any) string {
	n := yamlNode(v)
	var key strings.Builder
	treeKey(&key, n)
	k := key.String()
	rendered.mu.Lock()
	text, ok := rendered.m[k]
	rendered.mu.Unlock()
	if ok {
		return text
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return fmt.Sprintf("# cannot render: %v\n", err)
	}
	enc.Close()
	text = b.String()
	rendered.mu.Lock()
	if len(rendered.m) >= maxRendered {
		clear(rendered.m)
	}
	if rendered.m == nil {
		rendered.m = map[string]string{}
	}
	rendered.m[k] = text
	rendered.mu.Unlock()
	return text
}

// rendered holds the snippets YAMLText rendered last, by treeKey; at most
// maxRendered of them, so a long-running process does not grow with them.
var rendered struct {
	mu sync.Mutex
	m  map[string]string
}

const maxRendered = 1024

// treeKey writes what yamlNode sets of a YAML tree (kind, tag, value,
// children), each value prefixed by its length: two of its trees with one key
// render alike.
func treeKey(b *strings.Builder, n *yaml.Node) {
	b.WriteString(strconv.Itoa(int(n.Kind)))
	b.WriteByte(',')
	for _, s := range []string{n.Tag, n.Value} {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	b.WriteString(strconv.Itoa(len(n.Content)))
	b.WriteByte('[')
	for _, c := range n.Content {
		treeKey(b, c)
	}
	b.WriteByte(']')
}

func yamlNode(v any) *yaml.Node {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return FieldLess(keys[i], keys[j]) })
		n := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range keys {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, yamlNode(t[k]))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for _, it := range t {
			n.Content = append(n.Content, yamlNode(it))
		}
		return n
	case []string:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for _, it := range t {
			n.Content = append(n.Content, yamlNode(it))
		}
		return n
	case string:
		n := &yaml.Node{Kind: yaml.ScalarNode, Value: t, Tag: "!!str"}
		return n
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatBool(t), Tag: "!!bool"}
	case int:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.Itoa(t), Tag: "!!int"}
	case int64:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatInt(t, 10), Tag: "!!int"}
	case float64:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: strconv.FormatFloat(t, 'g', -1, 64), Tag: "!!float"}
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: "null", Tag: "!!null"}
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Value: fmt.Sprint(v)}
}

// PatchEdit is a YAML merge patch for the object that starts at its origin.
func PatchEdit(o *cluster.Object, patch map[string]any) cluster.Edit {
	return cluster.Edit{File: o.Origin.File, Line: o.Origin.Line, Format: cluster.FormatYAML, Text: YAMLText(patch)}
}

// IsManifestFile reports whether a file is a YAML or JSON manifest (not a
// Terraform JSON configuration).
func IsManifestFile(f string) bool {
	f = strings.ToLower(f)
	return strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".yml") || strings.HasSuffix(f, ".json") && !strings.HasSuffix(f, ".tf.json")
}
