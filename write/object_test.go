package write

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// ObjectPatch writes a patch where the object is declared; every branch of
// where that is.
func TestObjectPatch(t *testing.T) {
	graph := &cluster.Graph{Nodes: map[string]*cluster.Resource{
		"kubectl_manifest.pool":    {Address: "kubectl_manifest.pool", Type: "kubectl_manifest", Origin: cluster.Origin{File: "main.tf", Line: 10}},
		"kubectl_manifest.file":    {Address: "kubectl_manifest.file", Type: "kubectl_manifest", Origin: cluster.Origin{File: "main.tf", Line: 30}},
		"kubernetes_manifest.pool": {Address: "kubernetes_manifest.pool", Type: "kubernetes_manifest", Origin: cluster.Origin{File: "k8s.tf", Line: 4}},
		"kubectl_manifest.planned": {Address: "kubectl_manifest.planned", Type: "kubectl_manifest", Origin: cluster.Origin{File: "plan.json", Line: 1}},
		"helm_release.karpenter":   {Address: "helm_release.karpenter", Type: "helm_release", Origin: cluster.Origin{File: "main.tf", Line: 50}},
	}}
	m := &cluster.Model{Terraform: graph}
	pool := func(file string, line int, via string) *cluster.Object {
		return &cluster.Object{
			APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: "default",
			Origin: cluster.Origin{File: file, Line: line}, Via: via,
			Content: map[string]any{
				"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "default"},
				"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
					"kubelet": map[string]any{"maxPods": int64(110)},
					"role":    "${module.karpenter.node_iam_role_name}",
				}}},
			},
		}
	}
	patch := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"kubelet": nil, "expireAfter": "720h"}}}}
	tests := []struct {
		name string
		obj  *cluster.Object
		want cluster.Edit
		ok   bool
	}{
		{
			name: "manifest file",
			obj:  pool("nodepool.yaml", 3, ""),
			want: cluster.Edit{File: "nodepool.yaml", Line: 3, Format: cluster.FormatYAML, Text: YAMLText(patch)},
			ok:   true,
		},
		{
			name: "not a manifest file and no declaration",
			obj:  pool("main.tf", 3, ""),
		},
		{
			name: "kubectl_manifest heredoc",
			obj:  pool("main.tf", 12, "kubectl_manifest.pool"),
			want: cluster.Edit{File: "main.tf", Line: 10, Format: cluster.FormatHCL, Text: `yaml_body = <<-YAML
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      expireAfter: 720h
      role: ${module.karpenter.node_iam_role_name}
YAML
`},
			ok: true,
		},
		{
			name: "kubectl_manifest reading a file",
			obj:  pool("nodepool.yaml", 1, "kubectl_manifest.file"),
			want: cluster.Edit{File: "nodepool.yaml", Line: 1, Format: cluster.FormatYAML, Text: YAMLText(patch)},
			ok:   true,
		},
		{
			name: "kubernetes_manifest",
			obj:  pool("k8s.tf", 5, "kubernetes_manifest.pool"),
			want: cluster.Edit{File: "k8s.tf", Line: 4, Format: cluster.FormatHCL, Text: `manifest = {
  apiVersion = "karpenter.sh/v1"
  kind = "NodePool"
  metadata = {
    name = "default"
  }
  spec = {
    template = {
      spec = {
        expireAfter = "720h"
        kubelet = null
        role = module.karpenter.node_iam_role_name
      }
    }
  }
}
`},
			ok: true,
		},
		{name: "from a plan", obj: pool("plan.json", 1, "kubectl_manifest.planned")},
		{name: "one instance of a for_each", obj: pool("main.tf", 12, `kubectl_manifest.pool["a"]`)},
		{name: "rendered from a chart", obj: pool("templates/nodepool.yaml", 1, "helm_release.karpenter")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ObjectPatch(m, tt.obj, patch)
			if ok != tt.ok {
				t.Fatalf("ObjectPatch ok = %v, want %v (edit %+v)", ok, tt.ok, got)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("edit (-want +got):\n%s", diff)
			}
		})
	}
	// A heredoc cannot hold its own end marker.
	o := pool("main.tf", 12, "kubectl_manifest.pool")
	o.Content["metadata"].(map[string]any)["annotations"] = map[string]any{"note": "a\nYAML\nb"}
	if e, ok := ObjectPatch(m, o, patch); ok {
		t.Errorf("an edit whose heredoc holds its end marker:\n%s", e.Text)
	}
}
