package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
)

// renderChartValues renders deploy/chart with the Helm SDK and values, as `helm
// template --set ...` does (Helm validates the values against the chart's
// values.schema.json before rendering), and returns the rendered files or the
// error Helm gives.
func renderChartValues(t *testing.T, values map[string]any) (map[string]string, error) {
	t.Helper()
	ch, err := loader.Load(filepath.Join("..", "..", "deploy", "chart"))
	if err != nil {
		t.Fatal(err)
	}
	if ch.Schema == nil {
		t.Fatal("deploy/chart has no values.schema.json")
	}
	vals, err := chartutil.CoalesceValues(ch, values)
	if err != nil {
		t.Fatal(err)
	}
	top, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "eksdoctor", Namespace: "default", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	return engine.Render(ch, top)
}

// TestChartValuesSchema: the chart's values.schema.json accepts the defaults
// and every value the README documents, and Helm refuses, before rendering
// anything, a mode the templates do not know (which would otherwise render no
// workload at all), a misspelt key and values of the wrong type.
func TestChartValuesSchema(t *testing.T) {
	t.Parallel()
	for name, values := range map[string]map[string]any{
		"defaults": nil,
		"cronjob":  {"mode": "cronjob", "cronJob": map[string]any{"schedule": "*/15 * * * *"}},
		"everything": {
			"mode":           "serve",
			"image":          map[string]any{"repository": "registry.example/eksdoctor", "tag": "v1.2.3", "pullPolicy": "Always"},
			"interval":       "1h30m",
			"namespace":      "apps",
			"extraArgs":      []any{"--disable=teardown-orphans", "--fail-on=warning"},
			"service":        map[string]any{"port": 9090},
			"serviceMonitor": map[string]any{"enabled": true, "interval": "30s", "labels": map[string]any{"release": "prom"}},
			"resources":      map[string]any{"requests": map[string]any{"cpu": "50m"}},
			"nodeSelector":   map[string]any{"kubernetes.io/os": "linux"},
			"tolerations":    []any{map[string]any{"key": "CriticalAddonsOnly", "operator": "Exists"}},
			"affinity":       map[string]any{},
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out, err := renderChartValues(t, values)
			if err != nil {
				t.Fatalf("valid values refused: %v", err)
			}
			workload := "templates/deployment.yaml"
			if name == "cronjob" {
				workload = "templates/cronjob.yaml"
			}
			if !strings.Contains(out["eksdoctor/"+workload], "image: ") {
				t.Errorf("%s rendered no workload:\n%s", workload, out["eksdoctor/"+workload])
			}
		})
	}

	for name, c := range map[string]struct {
		values map[string]any
		want   []string // in Helm's error
	}{
		"mode typo":         {map[string]any{"mode": "serev"}, []string{"mode", "serve", "cronjob"}},
		"misspelt key":      {map[string]any{"serviceMonitr": map[string]any{"enabled": true}}, []string{"serviceMonitr"}},
		"misspelt sub-key":  {map[string]any{"image": map[string]any{"repo": "x"}}, []string{"repo"}},
		"port as string":    {map[string]any{"service": map[string]any{"port": "http"}}, []string{"port"}},
		"interval no unit":  {map[string]any{"interval": "300"}, []string{"interval"}},
		"unknown pull rule": {map[string]any{"image": map[string]any{"pullPolicy": "Sometimes"}}, []string{"pullPolicy"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := renderChartValues(t, c.values)
			if err == nil {
				t.Fatalf("values %v rendered; want Helm's schema error", c.values)
			}
			msg := err.Error()
			if !strings.Contains(msg, "values don't meet the specifications of the schema") {
				t.Errorf("error is not Helm's schema validation: %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error does not name %q: %v", w, err)
				}
			}
		})
	}
}
