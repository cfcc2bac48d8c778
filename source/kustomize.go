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
	// probs are cycles and fan-outs beyond the budget.
	probs []cluster.Problem
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
	x := &expansion{fsys: fsys, docs: docs, given: given, memo: map[string][]string{}}
	defer func() { k.probs = x.probs }()
	for _, f := range sortedKeys(docs) {
		// Every kustomization is expanded, so that a cycle is found wherever
		// it is; each once.
		files := x.resourceFiles(f)
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
		for _, r := range files {
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

// maxKustomizeFiles bounds the resource files one kustomization may build
// on, through all its bases: far more than a repository holds, few enough that
// a fan-out of bases listed many times over stays cheap.
const maxKustomizeFiles = 20000

// expansion finds the resource files of kustomizations, each kustomization
// expanded once however many others list it (kustomize builds a base listed
// twice twice; the files are the same), and reports cycles and fan-outs
// beyond the budget.
type expansion struct {
	fsys  *inputfs.FS
	docs  map[string]map[string]any
	given map[string]string
	memo  map[string][]string
	// active is the chain being expanded, to tell a cycle.
	active []string
	probs  []cluster.Problem
	cut    bool
}

// resourceFiles lists, sorted and once each, the manifest files a
// kustomization's resources come from, following the kustomizations it builds
// on.
func (x *expansion) resourceFiles(file string) []string {
	if got, ok := x.memo[file]; ok {
		return got
	}
	for i, a := range x.active {
		if a == file {
			chain := make([]string, 0, len(x.active)-i+1)
			for _, c := range append(x.active[i:], file) {
				chain = append(chain, x.given[c])
			}
			x.probs = append(x.probs, cluster.Problem{Origin: cluster.Origin{File: x.given[file], Line: 1},
				Message: "kustomization cycle: " + strings.Join(chain, " → ") + " (kustomize build fails: a kustomization cannot include itself)"})
			return nil
		}
	}
	x.active = append(x.active, file)
	defer func() { x.active = x.active[:len(x.active)-1] }()
	doc := x.docs[file]
	dir := filepath.Dir(file)
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] && len(out) < maxKustomizeFiles {
			seen[p] = true
			out = append(out, p)
		} else if !seen[p] && !x.cut {
			x.cut = true
			x.probs = append(x.probs, cluster.Problem{Origin: cluster.Origin{File: x.given[file], Line: 1}, Unresolved: true,
				Message: fmt.Sprintf("%s builds on more than %d resource files through its bases; the rest are not marked as transformed", x.given[file], maxKustomizeFiles)})
		}
	}
	for _, key := range []string{"resources", "bases", "components"} {
		list, _ := doc[key].([]any)
		for _, it := range list {
			s, ok := it.(string)
			if !ok || strings.Contains(s, "://") || strings.Contains(s, "?ref=") || strings.HasPrefix(s, "github.com/") {
				continue // a remote base: not read
			}
			p := filepath.Join(dir, s)
			if x.fsys.IsRegular(p) {
				add(p)
				continue
			}
			for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
				if _, ok := x.docs[filepath.Join(p, name)]; ok {
					for _, r := range x.resourceFiles(filepath.Join(p, name)) {
						add(r)
					}
					break
				}
			}
		}
	}
	sort.Strings(out)
	x.memo[file] = out
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
