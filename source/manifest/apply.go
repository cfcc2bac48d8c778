package manifest

import (
	"bytes"
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// ApplyYAML merges the edit's patch into the YAML document whose object starts at
// the edit's line, re-rendering that document (comments in it are lost; the other
// documents are kept byte for byte).
func ApplyYAML(content []byte, e cluster.Edit) ([]byte, error) {
	var patch map[string]any
	if err := yaml.Unmarshal([]byte(e.Text), &patch); err != nil {
		return nil, fmt.Errorf("patch is not YAML: %w", err)
	}
	docs := splitDocs(content)
	for i, d := range docs {
		objs, _ := DecodeAt("", d.line, d.text)
		for _, o := range objs {
			if o.Origin.Line != e.Line {
				continue
			}
			var merged map[string]any
			if IsClusterConfig(o) {
				merged = mergeClusterConfig(o.Content, patch)
			} else {
				merged = cluster.MergePatch(o.Content, patch)
			}
			out, err := yaml.Marshal(merged)
			if err != nil {
				return nil, fmt.Errorf("render patched object: %w", err)
			}
			docs[i].text = out
			return joinDocs(docs), nil
		}
	}
	return nil, fmt.Errorf("no object starts at line %d", e.Line)
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
