package write

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// The eksctl add-on edit patches the one entry, by its name: applied to the
// ClusterConfig, the other entries and the entry's other fields stay.
func TestEksctlAddonEdit(t *testing.T) {
	cfg := &cluster.Object{
		APIVersion: "eksctl.io/v1alpha5", Kind: "ClusterConfig", Name: "demo",
		Origin: cluster.Origin{File: "cluster.yaml", Line: 1},
		Content: map[string]any{"apiVersion": "eksctl.io/v1alpha5", "kind": "ClusterConfig", "metadata": map[string]any{"name": "demo"}, "addons": []any{
			map[string]any{"name": "eks-pod-identity-agent"},
			map[string]any{"name": "aws-ebs-csi-driver", "version": "v1.35.0-eksbuild.1", "configurationValues": `{"node":{"tolerateAllTaints":false}}`},
		}},
	}
	m := &cluster.Model{Objects: []*cluster.Object{cfg}}
	a := &cluster.Addon{Name: "aws-ebs-csi-driver", Address: "addons.1", Origin: cluster.Origin{File: "cluster.yaml", Line: 12},
		Decl: cluster.Decl{Kind: cluster.DeclEksctl, Object: cfg, List: "addons", Index: 1}}
	e, ok := EksctlAddonFields(m, a, map[string]any{"configurationValues": `{"node":{"tolerateAllTaints":true}}`})
	if !ok {
		t.Fatal("no edit")
	}
	if e.File != "cluster.yaml" || e.Line != 1 || e.Format != cluster.FormatYAML {
		t.Errorf("edit at %s:%d (%s), want cluster.yaml:1 (yaml)", e.File, e.Line, e.Format)
	}
	var got map[string]any
	if err := yaml.Unmarshal([]byte(e.Text), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"addons": []any{
		map[string]any{"name": "aws-ebs-csi-driver", "configurationValues": `{"node":{"tolerateAllTaints":true}}`},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("patch (-want +got):\n%s", diff)
	}
	doc, err := yaml.Marshal(cfg.Content)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Apply(doc, e)
	if err != nil {
		t.Fatal(err)
	}
	var applied map[string]any
	if err := yaml.Unmarshal(out, &applied); err != nil {
		t.Fatal(err)
	}
	wantAddons := []any{
		map[string]any{"name": "eks-pod-identity-agent"},
		map[string]any{"name": "aws-ebs-csi-driver", "version": "v1.35.0-eksbuild.1", "configurationValues": `{"node":{"tolerateAllTaints":true}}`},
	}
	if diff := cmp.Diff(wantAddons, applied["addons"]); diff != "" {
		t.Errorf("applied (-want +got):\n%s", diff)
	}
	if old := cfg.Content["addons"].([]any)[1].(map[string]any)["configurationValues"]; old != `{"node":{"tolerateAllTaints":false}}` {
		t.Errorf("the model was modified: %v", old)
	}
	if _, ok := EksctlAddonFields(m, &cluster.Addon{Address: "addons.7", Origin: a.Origin, Decl: cluster.Decl{Kind: cluster.DeclEksctl, Object: cfg, List: "addons", Index: 7}}, map[string]any{"version": "x"}); ok {
		t.Error("an edit for an entry the list does not have")
	}
}

// A release's values are written where the release is declared: nowhere when
// a tool installs it, the module input that makes it, the helm_release, the
// last values file of a local chart.
func TestReleaseValues(t *testing.T) {
	values := map[string]any{"replicas": int64(2)}
	if _, ok := ReleaseValues(&cluster.HelmRelease{InstalledBy: "eksctl"}, values); ok {
		t.Error("an edit of the values of a release a tool installs")
	}
	byModule := &cluster.HelmRelease{Address: "module.addons", Origin: cluster.Origin{File: "main.tf", Line: 30},
		Input: &cluster.ModuleInput{Module: "module.addons", Name: "karpenter", Origin: cluster.Origin{File: "main.tf", Line: 20}}}
	if e, ok := ReleaseValues(byModule, values); !ok || e.Format != cluster.FormatHCL || e.Line != 20 || !strings.HasPrefix(e.Text, "karpenter = {") {
		t.Errorf("module input: %+v, %v", e, ok)
	}
	resource := &cluster.HelmRelease{Address: "helm_release.x", Origin: cluster.Origin{File: "main.tf", Line: 40}}
	if e, ok := ReleaseValues(resource, values); !ok || e != (cluster.Edit{File: "main.tf", Line: 40, Format: cluster.FormatValues, Text: "replicas: 2\n"}) {
		t.Errorf("helm_release: %+v, %v", e, ok)
	}
	local := &cluster.HelmRelease{ChartDir: "chart", Origin: cluster.Origin{File: "chart/Chart.yaml", Line: 1},
		ValueOrigins: map[string]cluster.Origin{"a": {File: "values-prod.yaml", Line: 3}, "b": {File: "values.yaml", Line: 1}}}
	if e, ok := ReleaseValues(local, values); !ok || e.File != "values.yaml" || e.Line != 1 || e.Format != cluster.FormatValues {
		t.Errorf("local chart: %+v, %v", e, ok)
	}
}

// A value set in a values file of its own is changed there; a release read
// from a plan can be written nowhere.
func TestValuesFileAndPlan(t *testing.T) {
	r := &cluster.HelmRelease{Address: "helm_release.x", Origin: cluster.Origin{File: "main.tf", Line: 4}}
	patch := map[string]any{"a": nil}
	if e, ok := ValuesFile(r, cluster.Origin{File: "values.yaml", Line: 7}, patch); !ok || e.File != "values.yaml" || e.Line != 7 || e.Format != cluster.FormatValues {
		t.Errorf("values file: %+v, %v", e, ok)
	}
	for _, o := range []cluster.Origin{{File: "main.tf", Line: 9}, {File: "values.yaml"}} {
		if _, ok := ValuesFile(r, o, patch); ok {
			t.Errorf("a values-file edit at %s", o)
		}
	}
	if FromPlan(r) || !FromPlan(&cluster.HelmRelease{Address: "helm_release.x", Origin: cluster.Origin{File: "plan.json", Line: 1}}) || FromPlan(&cluster.HelmRelease{Origin: cluster.Origin{File: "values.yaml"}}) {
		t.Error("FromPlan: only a release with an address outside a configuration file is from a plan")
	}
}
