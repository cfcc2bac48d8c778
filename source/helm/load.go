package helm

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/strvals"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/inputfs"
	"github.com/eksdoctor/eksdoctor/source/manifest"
)

// LoadChart renders the chart at dir (a directory or .tgz) with values files applied
// in order, as "helm template --values" does, reading through fsys (nil reads dir
// and the values files only), and returns a model holding the release and its
// objects. Values files and charts that cannot be read are errors; a values file
// that does not parse, and a chart that does not render, are Problems in the model
// (the chart is then not rendered).
func LoadChart(fsys *inputfs.FS, dir string, valuesFiles []string, release, namespace string) (*cluster.Model, error) {
	if fsys == nil {
		fsys = inputfs.New(append([]string{dir}, valuesFiles...)...)
		defer fsys.Close()
	}
	files, left, err := ReadChart(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", dir, err)
	}
	vals := map[string]any{}
	origins := map[string]cluster.Origin{}
	var bad []cluster.Problem
	for _, f := range valuesFiles {
		data, err := fsys.ReadFile(f, inputfs.MaxManifest)
		if err != nil {
			return nil, fmt.Errorf("read values file: %w", err)
		}
		v, o, err := ParseValues(f, data)
		if err != nil {
			bad = append(bad, cluster.Problem{Origin: cluster.Origin{File: f, Line: errorLine(err)}, Message: err.Error() + "; the chart is not rendered"})
			continue
		}
		MergeValues(vals, v)
		for k, org := range o {
			origins[k] = org
		}
	}
	if namespace == "" {
		namespace = "default"
	}
	r := &cluster.HelmRelease{
		Name:         release,
		Namespace:    namespace,
		Chart:        dir,
		Values:       vals,
		ValueOrigins: origins,
		ChartDir:     dir,
		ChartFiles:   files,
		Rendered:     true,
		Origin:       cluster.Origin{File: dir},
	}
	m := &cluster.Model{HelmReleases: []*cluster.HelmRelease{r}}
	if len(bad) > 0 {
		m.Problems = append(LeftOut(dir, left), bad...)
		return m, nil
	}
	m.Objects, m.Problems = Render(dir, files, r)
	m.Problems = append(LeftOut(dir, left), m.Problems...)
	return m, nil
}

var lineRE = regexp.MustCompile(`line (\d+)`)

// errorLine is the line a parse error names, 1 when it names none.
func errorLine(err error) int {
	if m := lineRE.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 1
}

// LeftOut words the chart files ReadChart left out as problems.
func LeftOut(dir string, left []string) []cluster.Problem {
	var out []cluster.Problem
	for _, n := range left {
		out = append(out, cluster.Problem{
			Origin:     cluster.Origin{File: filepath.Join(dir, filepath.FromSlash(n))},
			Message:    fmt.Sprintf("chart file %s links outside the inputs; the chart is rendered without it", n),
			Unresolved: true,
		})
	}
	return out
}

// ParseValues reads a Helm values file into JSON-compatible values and the origin
// (file, line) of every dotted key.
func ParseValues(file string, data []byte) (map[string]any, map[string]cluster.Origin, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, nil, fmt.Errorf("parse values file %s: %w", file, err)
	}
	origins := map[string]cluster.Origin{}
	if len(root.Content) == 0 {
		return map[string]any{}, origins, nil
	}
	node := root.Content[0]
	if node.Kind == yaml.ScalarNode && node.Tag == "!!null" {
		return map[string]any{}, origins, nil
	}
	if node.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("values file %s:%d: expected a mapping of values", file, node.Line)
	}
	v, err := nodeValue(manifest.NewBudget(&root), node, file, "", origins, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("values file %s: %w", file, err)
	}
	m, _ := v.(map[string]any)
	return m, origins, nil
}

// nodeValue converts a YAML node; depth bounds alias expansion.
func nodeValue(b *manifest.Budget, n *yaml.Node, file, path string, origins map[string]cluster.Origin, depth int) (any, error) {
	if depth > 64 {
		return nil, fmt.Errorf("line %d: values nested too deeply", n.Line)
	}
	if err := b.Spend(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n.Line, err)
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, nil
		}
		return nodeValue(b, n.Alias, file, path, nil, depth+1)
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if k.Value == "<<" && k.Tag != "!!str" {
				merged, err := nodeValue(b, val, file, path, nil, depth+1)
				if err != nil {
					return nil, err
				}
				if mm, ok := merged.(map[string]any); ok {
					for mk, mv := range mm {
						if _, exists := m[mk]; !exists {
							m[mk] = mv
						}
					}
				}
				continue
			}
			p := k.Value
			if path != "" {
				p = path + "." + k.Value
			}
			if origins != nil {
				origins[p] = cluster.Origin{File: file, Line: k.Line, Path: p}
			}
			x, err := nodeValue(b, val, file, p, origins, depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = x
		}
		return m, nil
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, it := range n.Content {
			x, err := nodeValue(b, it, file, path, nil, depth+1)
			if err != nil {
				return nil, err
			}
			l = append(l, x)
		}
		return l, nil
	case yaml.ScalarNode:
		var x any
		if err := n.Decode(&x); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		switch t := x.(type) {
		case int:
			return int64(t), nil
		case uint64:
			if t <= 1<<63-1 {
				return int64(t), nil
			}
			return strconv.FormatUint(t, 10), nil
		}
		return x, nil
	}
	return nil, nil
}

// MergeValues merges src into dst the way Helm merges successive values files:
// maps merge key by key, anything else replaces.
func MergeValues(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				MergeValues(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// ApplySet applies --set style overrides ("a.b=c", "list[0].key=x") to vals.
func ApplySet(vals map[string]any, set []string) error {
	for _, s := range set {
		if err := strvals.ParseInto(s, vals); err != nil {
			return fmt.Errorf("parse --set %q: %w", s, err)
		}
	}
	return nil
}
