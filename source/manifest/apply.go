package manifest

import (
	"bytes"
	"fmt"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// ApplyYAML merges the edit's patch into the object that starts at the edit's
// line. The merge is made by the smallest splices of the text (see
// apply_splice.go): comments, key order, quoting and the other documents stay
// as written. When the merged object cannot be written by splices (a change
// inside an anchored value that an alias elsewhere reads, a root that is a
// flow mapping), the document alone is rendered whole, as the merge says.
func ApplyYAML(content []byte, e cluster.Edit) ([]byte, error) {
	return applyYAML(content, e, true)
}

// SpliceYAML is ApplyYAML without the fallback: it fails when the merged
// object cannot be written by splices. Tests use it to prove that fixes are
// minimal edits.
func SpliceYAML(content []byte, e cluster.Edit) ([]byte, error) {
	return applyYAML(content, e, false)
}

func applyYAML(content []byte, e cluster.Edit, fallback bool) ([]byte, error) {
	patch, order, err := readPatch(e.Text)
	if err != nil {
		return nil, err
	}
	docs := splitDocs(content)
	style := detectStyle(content)
	for i, d := range docs {
		objs, _ := DecodeAt("", d.line, d.text)
		for j, o := range objs {
			if o.Origin.Line != e.Line {
				continue
			}
			merged := mergeObject(o, patch)
			out, err := spliceObject(d.text, e.Line-d.line+1, merged, order, style)
			if err == nil && !sameObjects(d.line, out, objs, j, merged) {
				err = errNotMinimal
			}
			if err != nil {
				if !fallback {
					return nil, err
				}
				if out, err = yaml.Marshal(merged); err != nil {
					return nil, fmt.Errorf("render patched object: %w", err)
				}
			}
			docs[i].text = out
			return joinDocs(docs), nil
		}
	}
	return nil, fmt.Errorf("no object starts at line %d", e.Line)
}

// MergedYAML is what ApplyYAML writes the object at the edit's line as: the
// patch merged as a merge patch (eksctl's named lists merged by name). Tests
// compare the spliced text with it.
func MergedYAML(content []byte, e cluster.Edit) (map[string]any, error) {
	patch, _, err := readPatch(e.Text)
	if err != nil {
		return nil, err
	}
	for _, d := range splitDocs(content) {
		objs, _ := DecodeAt("", d.line, d.text)
		for _, o := range objs {
			if o.Origin.Line == e.Line {
				return mergeObject(o, patch), nil
			}
		}
	}
	return nil, fmt.Errorf("no object starts at line %d", e.Line)
}

func mergeObject(o *cluster.Object, patch map[string]any) map[string]any {
	if IsClusterConfig(o) {
		return mergeClusterConfig(o.Content, patch)
	}
	return cluster.MergePatch(o.Content, patch)
}

// readPatch reads a merge patch, and its text as nodes for the order and
// quoting of what it adds.
func readPatch(text string) (map[string]any, *yamlv3.Node, error) {
	var patch map[string]any
	if err := yaml.Unmarshal([]byte(text), &patch); err != nil {
		return nil, nil, fmt.Errorf("patch is not YAML: %w", err)
	}
	var n yamlv3.Node
	if yamlv3.Unmarshal([]byte(text), &n) != nil || len(n.Content) != 1 {
		return patch, nil, nil
	}
	return patch, n.Content[0], nil
}

// sameObjects checks the spliced document: the object at index j says
// merged, and the other objects of the document are as they were.
func sameObjects(line int, text []byte, before []*cluster.Object, j int, merged map[string]any) bool {
	after, _ := DecodeAt("", line, text)
	if len(after) != len(before) {
		return false
	}
	for i := range after {
		want := before[i].Content
		if i == j {
			want = merged
		}
		if !same(after[i].Content, want) {
			return false
		}
	}
	return true
}

// EditValues merges a Helm values patch into a values file by splices of its
// text, as ApplyYAML does; ok is false when the file cannot be changed in
// place (it is empty, or its root is not a block mapping), and the caller
// renders it whole.
func EditValues(content []byte, want map[string]any, patchText string) ([]byte, bool) {
	_, order, _ := readPatch(patchText)
	out, err := spliceObject(content, 0, want, order, detectStyle(content))
	if err != nil {
		return nil, false
	}
	var got map[string]any
	if yaml.Unmarshal(out, &got) != nil || !same(got, want) {
		return nil, false
	}
	return out, true
}

// namedLists are the lists of an eksctl ClusterConfig whose items eksctl
// tells apart by name.
var namedLists = map[string]bool{"addons": true, "managedNodeGroups": true, "nodeGroups": true, "fargateProfiles": true}

// mergeClusterConfig merges a patch into a ClusterConfig as a merge patch does,
// but for its named lists: a patch item is merged into the item of the same
// name (a null field removes it), or appended when there is none, and the other
// items are kept.
func mergeClusterConfig(doc, patch map[string]any) map[string]any {
	rest := map[string]any{}
	out := cluster.CopyJSON(doc).(map[string]any)
	for k, v := range patch {
		items, isList := v.([]any)
		current, hasList := out[k].([]any)
		if !namedLists[k] || !isList || (!hasList && out[k] != nil) {
			rest[k] = v
			continue
		}
		for _, it := range items {
			pm, ok := it.(map[string]any)
			name, named := pm["name"].(string)
			if !ok || !named {
				rest[k] = v
				break
			}
			found := false
			for i, c := range current {
				if cm, ok := c.(map[string]any); ok && cm["name"] == name {
					current[i] = cluster.MergePatch(cm, pm)
					found = true
					break
				}
			}
			if !found {
				current = append(current, cluster.MergePatch(map[string]any{}, pm))
			}
		}
		if _, whole := rest[k]; !whole {
			out[k] = current
		}
	}
	return cluster.MergePatch(out, rest)
}

type doc struct {
	line int
	sep  []byte // the separator line before the document, if any
	text []byte
}

func splitDocs(content []byte) []doc {
	var docs []doc
	cur := doc{line: 1}
	line := 1
	for _, l := range bytes.SplitAfter(content, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		if t := strings.TrimRight(string(l), "\r\n"); t == "---" || strings.HasPrefix(t, "--- ") {
			docs = append(docs, cur)
			cur = doc{line: line + 1, sep: l}
		} else {
			cur.text = append(cur.text, l...)
		}
		line++
	}
	return append(docs, cur)
}

func joinDocs(docs []doc) []byte {
	var b bytes.Buffer
	for _, d := range docs {
		b.Write(d.sep)
		b.Write(d.text)
		if len(d.text) > 0 && d.text[len(d.text)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}
