package source

import (
	"path/filepath"
	"strings"
	"testing"
)

// A kustomization's patches are its inputs, not manifests; the objects of the
// resources it transforms (here through a base) are read as written and marked,
// and that is said once.
func TestKustomizations(t *testing.T) {
	patch := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app, namespace: default}\nspec: {replicas: 2}\n"
	dir := writeTree(t, map[string]string{
		"base/kustomization.yaml":    "resources: [deployment.yaml]\n",
		"base/deployment.yaml":       deploymentYAML,
		"overlay/kustomization.yaml": "resources: [../base]\nnamespace: prod\npatches:\n- path: replicas.yaml\npatchesStrategicMerge: [delete.yaml]\n",
		"overlay/replicas.yaml":      patch,
		"overlay/delete.yaml":        "$patch: delete\napiVersion: v1\nkind: Service\nmetadata: {name: x}\n",
		"plain/kustomization.yaml":   "resources: [cm.yaml]\n",
		"plain/cm.yaml":              strings.Replace(deploymentYAML, "name: app", "name: untouched", 1),
	})
	cs, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := cs[0].Model
	unknown := map[string]string{}
	for _, w := range m.Workloads {
		unknown[w.Object.Name] = w.Object.Unknown
	}
	if len(unknown) != 2 {
		t.Fatalf("workloads %v, want the base Deployment and the untouched one (patches are not manifests)", unknown)
	}
	if want := "the kustomize transformations of " + filepath.Join(dir, "overlay/kustomization.yaml") + " (namespace, patches, patchesStrategicMerge)"; unknown["app"] != want {
		t.Errorf("app: Unknown %q, want %q", unknown["app"], want)
	}
	if unknown["untouched"] != "" {
		t.Errorf("a kustomization that transforms nothing marked its objects: %q", unknown["untouched"])
	}
	var said []string
	for _, p := range m.Problems {
		if p.Unresolved && strings.Contains(p.Message, "does not run kustomize") {
			said = append(said, p.Message)
		} else {
			t.Errorf("problem: %+v", p)
		}
	}
	if len(said) != 1 {
		t.Errorf("said %q, want once", said)
	}
}
