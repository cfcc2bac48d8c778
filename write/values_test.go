package write

import (
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
