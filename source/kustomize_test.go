package source

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// Each kustomization is expanded once however often it is listed: eighteen
// kustomizations, each listing the next three times, would otherwise be 3^18
// expansions.
func TestKustomizationFanOut(t *testing.T) {
	tree := map[string]string{}
	const n = 18
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("k%02d/kustomization.yaml", i)
		if i == n-1 {
			tree[k] = "resources: [deployment.yaml]\nnamespace: prod\n"
			tree[fmt.Sprintf("k%02d/deployment.yaml", i)] = deploymentYAML
			continue
		}
		next := fmt.Sprintf("../k%02d", i+1)
		tree[k] = fmt.Sprintf("resources: [%s, %s, %s]\nnamePrefix: p%d-\n", next, next, next, i)
	}
	dir := writeTree(t, tree)
	done := make(chan struct{})
	var cs []*Cluster
	var err error
	go func() { cs, err = Load([]string{dir}, Options{}); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the fan-out was expanded over and over")
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range cs[0].Model.Workloads {
		if !strings.Contains(w.Object.Unknown, "kustomize transformations of") {
			t.Errorf("%s is not marked as transformed: %q", w.Object.Name, w.Object.Unknown)
		}
	}
}

// A kustomization that includes itself, through another, is a cycle kustomize
// refuses: said once, naming the files in order.
func TestKustomizationCycle(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"a/kustomization.yaml": "resources: [../b, cm.yaml]\n",
		"a/cm.yaml":            deploymentYAML,
		"b/kustomization.yaml": "resources: [../a]\nnamespace: x\n",
	})
	cs, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var cycles []string
	for _, p := range cs[0].Model.Problems {
		if strings.Contains(p.Message, "kustomization cycle") {
			cycles = append(cycles, p.Message)
			if p.Unresolved {
				t.Errorf("a cycle is an error kustomize reports, not something unseen: %+v", p)
			}
		}
	}
	want := "kustomization cycle: " + filepath.Join(dir, "a/kustomization.yaml") + " → " + filepath.Join(dir, "b/kustomization.yaml") + " → " + filepath.Join(dir, "a/kustomization.yaml")
	if len(cycles) != 1 || !strings.HasPrefix(cycles[0], want) {
		t.Errorf("cycles %q, want one starting %q", cycles, want)
	}
}

// FuzzKustomize: whatever three kustomizations say of one another (bases
// listed many times, cycles, remote bases, paths out of the tree, wrong
// types), loading ends, every kustomization expanded once.
func FuzzKustomize(f *testing.F) {
	for _, s := range [][3]string{
		{"resources: [../b, ../b, ../b]\n", "resources: [../c, ../c]\nnamespace: x\n", "resources: [app.yaml]\n"},
		{"resources: [../b]\n", "resources: [../a]\n", "bases: [../a, ../b]\n"},
		{"resources: [https://github.com/x/y?ref=v1, ../../../etc]\n", "components: [../c]\n", "patches: [{path: ../a/kustomization.yaml}]\n"},
		{"resources: 3\n", "resources: [[], {}, null]\n", "- a\n"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		dir := writeTree(t, map[string]string{
			"a/kustomization.yaml": a,
			"b/kustomization.yaml": b,
			"c/kustomization.yaml": c,
			"c/app.yaml":           deploymentYAML,
		})
		if _, err := Load([]string{dir}, Options{}); err != nil {
			t.Fatal(err)
		}
	})
}
