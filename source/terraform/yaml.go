package terraform

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/manifest"
)

// Placeholders in YAML text ("role: ${module.karpenter.node_iam_role_name}") are not
// always valid YAML: the expression may hold ": ", quotes or flow characters. Before
// decoding, each one is replaced by a plain token, and the tokens are put back in the
// decoded values.
type placeholders struct {
	byToken map[string]string
}

const tokenPrefix = "eksdoctorunknown"

func protect(s string) (string, *placeholders) {
	p := &placeholders{byToken: map[string]string{}}
	if !strings.Contains(s, "${") {
		return s, p
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			break
		}
		end := placeholderEnd(s, i)
		if end < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		tok := tokenPrefix + strconv.Itoa(len(p.byToken)) + "x"
		p.byToken[tok] = s[i : end+1]
		b.WriteString(tok)
		s = s[end+1:]
	}
	return b.String(), p
}

// placeholderEnd returns the index of the brace closing the placeholder that starts at
// i, or -1.
func placeholderEnd(s string, i int) int {
	depth := 0
	inStr := false
	for j := i + 2; j < len(s); j++ {
		c := s[j]
		switch {
		case inStr:
			if c == '\\' {
				j++
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '\n':
			return -1
		case c == '{':
			depth++
		case c == '}':
			if depth == 0 {
				return j
			}
			depth--
		}
	}
	return -1
}

func (p *placeholders) restoreString(s string) string {
	if len(p.byToken) == 0 || !strings.Contains(s, tokenPrefix) {
		return s
	}
	for tok, orig := range p.byToken {
		s = strings.ReplaceAll(s, tok, orig)
	}
	return s
}

func (p *placeholders) restore(v any) any {
	if len(p.byToken) == 0 {
		return v
	}
	switch t := v.(type) {
	case string:
		return p.restoreString(t)
	case []any:
		for i := range t {
			t[i] = p.restore(t[i])
		}
		return t
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[p.restoreString(k)] = p.restore(e)
		}
		return out
	}
	return v
}

func (p *placeholders) restoreLines(lines map[string]int) map[string]int {
	if len(p.byToken) == 0 {
		return lines
	}
	out := make(map[string]int, len(lines))
	for k, l := range lines {
		out[p.restoreString(k)] = l
	}
	return out
}

// yamlProblem words YAML text that does not parse. When the text holds values not
// known before apply, whether it parses once they are known cannot be told (an
// interpolation may render a whole line, or nothing): the YAML is unknown, not
// invalid.
func yamlProblem(org cluster.Origin, what, text string, err error) cluster.Problem {
	if exprs := cluster.UnknownExprs(text); len(exprs) > 0 {
		return cluster.Problem{Origin: org, Unresolved: true, Message: fmt.Sprintf("%s does not parse as YAML as it stands (%s), and it holds values not known before apply (${%s}); it is not analysed", what, err, exprs[0])}
	}
	return cluster.Problem{Origin: org, Message: what + " is not valid YAML: " + err.Error()}
}

// decodeObjects decodes Kubernetes objects from YAML text that starts at org, with
// the manifest decoder, keeping unknowns as placeholders.
func decodeObjects(text string, org cluster.Origin) ([]*cluster.Object, []cluster.Problem) {
	safe, p := protect(text)
	line := org.Line
	if line <= 0 {
		line = 1
	}
	objs, probs := manifest.DecodeAt(org.File, line, []byte(safe))
	for _, o := range objs {
		if len(p.byToken) == 0 {
			continue
		}
		content, _ := p.restore(o.Content).(map[string]any)
		o.Content = content
		o.Name = p.restoreString(o.Name)
		o.Namespace = p.restoreString(o.Namespace)
		o.Labels = restoreMap(p, o.Labels)
		o.Annotations = restoreMap(p, o.Annotations)
		o.Lines = p.restoreLines(o.Lines)
	}
	for i := range probs {
		probs[i].Message = p.restoreString(probs[i].Message)
		switch {
		case len(p.byToken) == 0:
		case strings.HasPrefix(probs[i].Message, "YAML syntax error"):
			// It may parse once the unknown values are known.
			probs[i].Unresolved = true
			probs[i].Message += "; the text holds values not known before apply, so it may parse once they are; it is not analysed"
		case strings.Contains(probs[i].Message, "not a Kubernetes object"):
			// A value not known before apply may be whole documents (the body
			// of an HTTP response, a file read elsewhere).
			probs[i].Unresolved = true
			probs[i].Message += "; the text holds values not known before apply, which may be the objects themselves; it is not analysed"
		}
	}
	return objs, probs
}

func restoreMap(p *placeholders, m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[p.restoreString(k)] = p.restoreString(v)
	}
	return out
}

// decodeValues decodes a Helm values document, returning the values and the line of
// every key path ("settings.clusterName", list items by index).
func decodeValues(text string, firstLine int) (map[string]any, map[string]int, error) {
	safe, p := protect(text)
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(safe), &root); err != nil {
		return nil, nil, fmt.Errorf("%s", p.restoreString(strings.TrimPrefix(err.Error(), "yaml: ")))
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return map[string]any{}, map[string]int{}, nil
	}
	lines := map[string]int{}
	v, err := nodeValue(manifest.NewBudget(&root), root.Content[0], "", lines, firstLine-1, 0, 0)
	if err != nil {
		return nil, nil, err
	}
	if v == nil {
		return map[string]any{}, map[string]int{}, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("values must be a mapping, not %T", v)
	}
	m, _ = p.restore(m).(map[string]any)
	return m, p.restoreLines(lines), nil
}

func nodeValue(b *manifest.Budget, n *yaml.Node, path string, lines map[string]int, offset, depth, aliases int) (any, error) {
	if depth > 64 || aliases > 32 {
		return nil, fmt.Errorf("values nested too deeply")
	}
	if err := b.Spend(); err != nil {
		return nil, err
	}
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, nil
		}
		return nodeValue(b, n.Alias, path, map[string]int{}, offset, depth+1, aliases+1)
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: mapping keys must be strings", k.Line+offset)
			}
			if k.Value == "<<" && k.Tag != "!!str" {
				mv, err := nodeValue(b, v, path, map[string]int{}, offset, depth+1, aliases)
				if err != nil {
					return nil, err
				}
				for _, src := range listOf(mv) {
					if sm, ok := src.(map[string]any); ok {
						for kk, vv := range sm {
							if _, exists := m[kk]; !exists {
								m[kk] = vv
							}
						}
					}
				}
				continue
			}
			p := join(k.Value)
			lines[p] = k.Line + offset
			val, err := nodeValue(b, v, p, lines, offset, depth+1, aliases)
			if err != nil {
				return nil, err
			}
			m[k.Value] = val
		}
		return m, nil
	case yaml.SequenceNode:
		l := make([]any, len(n.Content))
		for i, it := range n.Content {
			p := join(strconv.Itoa(i))
			lines[p] = it.Line + offset
			val, err := nodeValue(b, it, p, lines, offset, depth+1, aliases)
			if err != nil {
				return nil, err
			}
			l[i] = val
		}
		return l, nil
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return n.Value, nil
		}
		switch t := normalizeYAML(v).(type) {
		case nil, string, int64, float64, bool:
			return t, nil
		}
		return n.Value, nil
	}
	return nil, nil
}

func normalizeYAML(v any) any {
	switch t := v.(type) {
	case int:
		return int64(t)
	case uint64:
		return int64(t)
	case float32:
		return float64(t)
	}
	return v
}
