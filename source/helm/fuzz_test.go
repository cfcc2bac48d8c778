package helm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
)

// FuzzExpand feeds arbitrary values and add-on configuration to every knowledge-base
// chart and add-on: whatever the user writes, Expand reports problems, never panics.
func FuzzExpand(f *testing.F) {
	seeds := []string{
		"",
		"tolerations: [{operator: Exists}]",
		"affinity: 3",
		"node: {tolerateAllTaints: maybe, tolerations: {a: b}}",
		"controller: null\nnode: null",
		"podLabels: [1, 2]\nreplicas: {x: 1}",
		"topologySpreadConstraints: [1, {labelSelector: 2}]",
		"nameOverride: {a: 1}\nfullnameOverride: [x]",
		"affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [3, {topologyKey: x}]}}",
		"sidecars: {provisioner: 7}",
		"computeType: [Fargate]\ntolerations: 1",
	}
	for _, s := range seeds {
		f.Add(s, "1.14.1")
		f.Add(s, "2.36.0")
	}
	charts := catalog.ChartNames()
	addons := catalog.AddonNames()
	f.Fuzz(func(t *testing.T, values, version string) {
		var v map[string]any
		if err := yaml.Unmarshal([]byte(values), &v); err != nil {
			return
		}
		m := &cluster.Model{}
		for _, c := range charts {
			m.HelmReleases = append(m.HelmReleases, &cluster.HelmRelease{Name: c, Namespace: "kube-system", Chart: c, Version: version, Values: v})
		}
		for _, a := range addons {
			m.Addons = append(m.Addons, &cluster.Addon{Name: a, Version: version, ConfigurationValues: v})
		}
		Expand(m)
	})
}

// TestKnowledgeBaseChartRendersFromDisk writes a knowledge-base chart version to
// disk as an ordinary chart (Chart.yaml, values.yaml, templates) and renders it with
// Render: the result must equal what Expand synthesizes, so the reduced templates
// are real Helm templates and both paths agree.
func TestKnowledgeBaseChartRendersFromDisk(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		chart, version string
		values         map[string]any
	}{
		{"aws-ebs-csi-driver", "2.35.1", map[string]any{"node": map[string]any{"tolerateAllTaints": false}}},
		{"aws-ebs-csi-driver", "2.36.0", map[string]any{"node": map[string]any{"tolerateAllTaints": false, "podLabels": map[string]any{"a": "b"}}}},
		{"karpenter", "1.0.0", map[string]any{"podLabels": map[string]any{"team": "x"}}},
	} {
		kb, ok := catalog.ChartFor(tc.chart, tc.version)
		if !ok {
			t.Fatalf("%s %s not known", tc.chart, tc.version)
		}
		dir := filepath.Join(t.TempDir(), tc.chart)
		meta := map[string]any{"apiVersion": "v2", "name": kb.Name, "version": kb.Version, "appVersion": kb.AppVersion, "annotations": map[string]any{}}
		for _, feat := range kb.Features {
			meta["annotations"].(map[string]any)["eksdoctor.io/feature-"+feat] = "true"
		}
		writeYAML(t, filepath.Join(dir, "Chart.yaml"), meta)
		writeYAML(t, filepath.Join(dir, "values.yaml"), kb.DefaultValues())
		for name, data := range kb.Templates {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r := &cluster.HelmRelease{Name: tc.chart, Namespace: "kube-system", Chart: tc.chart, Version: tc.version, Values: tc.values}
		rendered, probs := renderDir(t, dir, r)
		if len(probs) != 0 {
			t.Fatalf("%s %s: %v", tc.chart, tc.version, probs)
		}
		m := &cluster.Model{HelmReleases: []*cluster.HelmRelease{{Name: tc.chart, Namespace: "kube-system", Chart: tc.chart, Version: tc.version, Values: tc.values}}}
		Expand(m)
		if len(rendered) != len(m.Objects) || len(rendered) == 0 {
			t.Fatalf("%s %s: %d rendered, %d synthesized", tc.chart, tc.version, len(rendered), len(m.Objects))
		}
		for i := range rendered {
			if diff := cmp.Diff(m.Objects[i].Content, rendered[i].Content); diff != "" {
				t.Errorf("%s %s %s (-synthesized +rendered):\n%s", tc.chart, tc.version, rendered[i].Ref(), diff)
			}
			if rendered[i].Origin.File == m.Objects[i].Origin.File {
				t.Errorf("rendered and synthesized objects share an origin: %v", rendered[i].Origin)
			}
		}
	}
}

func writeYAML(t *testing.T, name string, v any) {
	t.Helper()
	data, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// FuzzParseValues reads arbitrary values files: an error or values, never a panic,
// and never more values than the alias budget allows.
func FuzzParseValues(f *testing.F) {
	for _, s := range []string{
		"", "a: 1", "a: &x [1, 2]\nb: *x", "<<: {a: 1}\nb: 2", "- 1", "a: [\n",
		"a0: &a0 [x, x]\na1: &a1 [*a0, *a0]\na2: [*a1, *a1]",
		"a: !!binary aGVsbG8=", "? [a]\n: b", "a: *undefined",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, origins, err := ParseValues("values.yaml", data)
		if err != nil {
			return
		}
		if n := countValues(v); n > 10_000+5*len(data)+100 {
			t.Errorf("%d values from %d bytes: the alias budget did not hold", n, len(data))
		}
		for k, o := range origins {
			if o.File != "values.yaml" || o.Path != k {
				t.Errorf("origin of %s = %+v", k, o)
			}
		}
	})
}

func countValues(v any) int {
	n := 1
	switch t := v.(type) {
	case map[string]any:
		for _, x := range t {
			n += countValues(x)
		}
	case []any:
		for _, x := range t {
			n += countValues(x)
		}
	}
	return n
}

// FuzzRender renders a chart whose template and values are arbitrary, through the
// bounded child process: a problem or objects, never a crash, a hang or a leak of
// the chart's surroundings.
func FuzzRender(f *testing.F) {
	for _, s := range [][2]string{
		{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ .Release.Name }}}\n", "a: 1"},
		{"{{ range until 3 }}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c{{ . }}}\n{{ end }}", ""},
		{"{{ .Files.Get \"x\" }}", ""},
		{"{{ include \"x\" . }}", ""},
		{"{{ fail \"no\" }}", ""},
		{"{{ toYaml .Values }}", "a: [1, 2]"},
		{"{{ range until 2000000000 }}{{ end }}", ""},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, template, values string) {
		var v map[string]any
		if err := yaml.Unmarshal([]byte(values), &v); err != nil {
			return
		}
		files := []cluster.File{
			{Name: "Chart.yaml", Data: []byte("apiVersion: v2\nname: fuzz\nversion: 1.0.0\n")},
			{Name: "templates/t.yaml", Data: []byte(template)},
		}
		objs, probs := Render("chart", files, &cluster.HelmRelease{Name: "r", Namespace: "default", Values: v})
		for _, p := range probs {
			if len(p.Message) > 2*maxMessage+200 {
				t.Errorf("a problem of %d bytes: engine messages are not clipped", len(p.Message))
			}
		}
		for _, o := range objs {
			if o.Origin.File == "" {
				t.Errorf("object %s has no origin", o.Ref())
			}
		}
	})
}
