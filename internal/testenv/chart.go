package testenv

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// RenderChart renders eksdoctor's Helm chart (deploy/chart) with the Helm SDK,
// as `helm template eksdoctor deploy/chart -n default` does with the values
// given, and returns its objects in file order.
func RenderChart(values map[string]any) ([]*unstructured.Unstructured, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	ch, err := loader.Load(filepath.Join(root, "deploy", "chart"))
	if err != nil {
		return nil, err
	}
	if err := ch.Validate(); err != nil {
		return nil, fmt.Errorf("Chart.yaml: %w", err)
	}
	vals, err := chartutil.CoalesceValues(ch, values)
	if err != nil {
		return nil, err
	}
	top, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "eksdoctor", Namespace: "default", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	out, err := engine.Render(ch, top)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	var objs []*unstructured.Unstructured
	for _, n := range names {
		if !strings.HasSuffix(n, ".yaml") {
			continue
		}
		for _, doc := range strings.Split(out[n], "\n---") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			var m map[string]any
			if err := yaml.UnmarshalStrict([]byte(doc), &m); err != nil {
				return nil, fmt.Errorf("%s: %w\n%s", n, err, doc)
			}
			if len(m) == 0 {
				continue
			}
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
	return objs, nil
}

// ChartRBAC is the RBAC of eksdoctor's chart (its roles and bindings) as a
// multi-document manifest, for Grant.
func ChartRBAC() ([]byte, error) {
	objs, err := RenderChart(nil)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			y, err := yaml.Marshal(o.Object)
			if err != nil {
				return nil, err
			}
			b.WriteString("---\n")
			b.Write(y)
		}
	}
	return b.Bytes(), nil
}
