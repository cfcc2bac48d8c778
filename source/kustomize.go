package source

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/inputfs"
)

// Kustomize builds what is applied from a kustomization.yaml: its resources,
// transformed (namespace, name prefixes, labels, patches, components...).
// eksdoctor does not run kustomize. The files a kustomization uses as patches,
// replacements or generator configuration are inputs of it, not manifests; the
// objects of the resources a kustomization transforms are read as written and
// marked (Object.Unknown), so that what a transformation may change is not
// verified; and it is said, once.

// kustomizations is what the kustomization files among the inputs say.
type kustomizations struct {
	// inputs are the files kustomizations use other than as resources.
	inputs map[string]bool
	// transformed maps a resource file to the kustomization that transforms it.
	transformed map[string]string
	// which lists the transforming kustomizations, with what they do.
	which []string
	first cluster.Origin
}

// isKustomization reports the names kustomize reads a kustomization from.
func isKustomization(name string) bool {
	switch filepath.Base(name) {
	case "kustomization.yaml", "kustomization.yml", "Kustomization":
		return true
	}
	return false
}

// transformKeys are the kustomization fields that change the objects it lists.
var transformKeys = []string{
	"namespace", "namePrefix", "nameSuffix", "commonLabels", "labels", "commonAnnotations",
	"patches", "patchesStrategicMerge", "patchesJson6902", "replicas", "components",
	"replacements", "transformers", "helmCharts", "vars",
}

// readKustomizations reads every kustomization file among files.
func readKustomizations(fsys *inputfs.FS, files []string) *kustomizations {
	k := &kustomizations{inputs: map[string]bool{}, transformed: map[string]string{}}
	docs := map[string]map[string]any{}
	given := map[string]string{} // absolute path → as given, for messages
	for _, f := range files {
		if !isKustomization(f) {
			continue
		}
		data, err := fsys.ReadFile(f, inputfs.MaxConfig)
		if err != nil {
			continue
		}
		var doc map[string]any
		if yaml.Unmarshal(data, &doc) != nil || doc == nil {
			continue
		}
		docs[abs(f)] = doc
		given[abs(f)] = f
		k.inputs[abs(f)] = true
		dir := filepath.Dir(abs(f))
		for _, p := range patchPaths(doc) {
			k.inputs[filepath.Join(dir, p)] = true
		}
	}
	for _, f := range sortedKeys(docs) {
		var did []string
		for _, key := range transformKeys {
			if _, ok := docs[f][key]; ok {
				did = append(did, key)
			}
		}
		if len(did) == 0 {
			continue
		}
		name := given[f]
		what := fmt.Sprintf("the kustomize transformations of %s (%s)", name, strings.Join(did, ", "))
		if len(k.which) == 0 {
			k.first = cluster.Origin{File: name, Line: 1}
		}
		k.which = append(k.which, fmt.Sprintf("%s (%s)", name, strings.Join(did, ", ")))
		for _, r := range resourceFiles(fsys, docs, f, 0) {
			if _, ok := k.transformed[r]; !ok {
				k.transformed[r] = what
			}
		}
	}
	return k
}

// patchPaths lists the files a kustomization uses other than as resources.
func patchPaths(doc map[string]any) []string {
	var out []string
	for _, key := range []string{"patchesStrategicMerge", "configurations", "crds", "generators", "transformers", "validators"} {
		list, _ := doc[key].([]any)
		for _, it := range list {
			if s, ok := it.(string); ok && !strings.Contains(s, "\n") && !strings.Contains(s, ":") {
				out = append(out, s)
			}
		}
	}
	for _, key := range []string{"patches", "patchesJson6902", "replacements"} {
		list, _ := doc[key].([]any)
		for _, it := range list {
			if m, ok := it.(map[string]any); ok {
				if p, ok := m["path"].(string); ok {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// resourceFiles lists the manifest files a kustomization's resources come from,
// following the kustomizations it builds on.
func resourceFiles(fsys *inputfs.FS, docs map[string]map[string]any, file string, depth int) []string {
	if depth > 16 {
		return nil
	}
	doc := docs[file]
	dir := filepath.Dir(file)
	var out []string
	for _, key := range []string{"resources", "bases", "components"} {
		list, _ := doc[key].([]any)
		for _, it := range list {
			s, ok := it.(string)
			if !ok || strings.Contains(s, "://") || strings.Contains(s, "?ref=") || strings.HasPrefix(s, "github.com/") {
				continue // a remote base: not read
			}
			p := filepath.Join(dir, s)
			if fsys.IsRegular(p) {
				out = append(out, p)
				continue
			}
			for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
				if _, ok := docs[filepath.Join(p, name)]; ok {
					out = append(out, resourceFiles(fsys, docs, filepath.Join(p, name), depth+1)...)
					break
				}
			}
		}
	}
	return out
}

// mark marks the objects of the resource files a kustomization transforms.
func (k *kustomizations) mark(file string, m *cluster.Model) {
	what, ok := k.transformed[abs(file)]
	if !ok {
		return
	}
	for _, o := range m.Objects {
		if o.Unknown == "" {
			o.Unknown = what
		}
	}
}

// problem says, once, that kustomizations transform objects eksdoctor reads as
// written.
func (k *kustomizations) problem() (cluster.Problem, bool) {
	if len(k.which) == 0 {
		return cluster.Problem{}, false
	}
	list := strings.Join(k.which, "; ")
	if len(k.which) > 5 {
		list = strings.Join(k.which[:5], "; ") + fmt.Sprintf("; and %d more", len(k.which)-5)
	}
	return cluster.Problem{Origin: k.first, Unresolved: true, Message: fmt.Sprintf("eksdoctor does not run kustomize: the objects these kustomizations transform are read as written, and what the transformations change is not verified: %s", list)}, true
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
