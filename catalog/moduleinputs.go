package catalog

import (
	_ "embed"
	"fmt"
	"math/bits"
	"sort"
	"strings"
	"sync"

	goversion "github.com/hashicorp/go-version"
	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/internal/textmatch"
)

// Which inputs each release of terraform-aws-modules/eks (and its sub-modules) and
// of aws-ia/eks-blueprints-addons declares, and which keys it reads from the
// entries of its map and object inputs, is data extracted from the module sources
// by hack/moduleinputs (each file's header names the repository and the command;
// each release names the commit of its tag).
var (
	//go:embed modules/terraform-aws-eks-inputs.yaml
	eksInputsYAML []byte
	//go:embed modules/eks-blueprints-addons-inputs.yaml
	blueprintsInputsYAML []byte
)

// ModuleReads is what the releases of a module that a version constraint allows
// declare and read. Names of inputs are variable names; a path names a place
// inside an input, with "*" for any entry of a map or element of a list:
// "eks_managed_node_groups.*" is a node group of eks_managed_node_groups,
// "eks_managed_node_groups.*.taints.*" a taint of one, "karpenter" the object
// input of eks-blueprints-addons. The zero value allows no release.
type ModuleReads struct {
	mod     *moduleIndex
	allowed releaseSet
	every   bool
}

// Presence says whether the allowed releases declare an input or read a key.
type Presence struct {
	// Any: some allowed release declares the input (reads the key); All: every one.
	Any, All bool
	// Required (inputs): every allowed release declares the input without a default.
	Required bool
	// Closed (keys): every allowed release that declares the path's input reads a
	// fixed set of keys at path (it neither iterates the value there, nor reads it
	// with a key computed at plan time, nor passes it, or anything holding it, on
	// whole), so a key none of them reads is ignored. When Closed is false, a key
	// no release reads may still matter.
	Closed bool
}

// NameHistory is what the releases of a module did with a name (an input, or a
// key at a path) across all its releases, not only the allowed ones.
type NameHistory struct {
	// Ranges are the runs of consecutive releases that declare (read) the name,
	// oldest first. For a key, the path under the names its input had before a
	// documented rename counts too (cluster_addons.* for addons.*).
	Ranges []ReleaseRange
	// Added is the first release with the name when the oldest allowed release
	// lacks it and a later release has it; Removed is the first release without it
	// after it was last there, when the newest allowed release lacks it and an
	// earlier release had it. Each is "" otherwise.
	Added, Removed string
	// Renames are the documented renames from the name (Old == name: what replaced
	// it) and to it (New == name: what older releases called it).
	Renames []ModuleRename
}

// ReleaseRange is a run of consecutive releases, From and To included.
type ReleaseRange struct{ From, To string }

// ModuleRename is a rename an upgrade document of the module lists: input Old of
// Module (Path "") or key Old at Path became New in Release. Doc is FILE@TAG of
// the document; Via, for a key of the root's entries, names the sub-module whose
// input was renamed.
type ModuleRename struct {
	Module, Path, Old, New, Release, Doc, Via string
}

// ModuleReadsFor returns what the releases of module that constraint allows
// declare and read. module is a registry source: "terraform-aws-modules/eks" (or
// ".../eks/aws", with or without "registry.terraform.io/"), a sub-module of it
// "terraform-aws-modules/eks//modules/karpenter" (eks-managed-node-group,
// self-managed-node-group, fargate-profile, aws-auth, _user_data,
// hybrid-node-role, capability; node_groups and fargate in v17), or
// "aws-ia/eks-blueprints-addons". constraint is a Terraform version constraint
// ("~> 20.0", "20.24.0", ">= 19.21, < 21"); "" allows every release (Every then
// reports true). Only releases where the module exists count, so Releases is
// empty when the constraint allows none of them. ok is false for an unknown
// module or an invalid constraint.
func ModuleReadsFor(module, constraint string) (ModuleReads, bool) {
	idx, err := moduleInputs()
	if err != nil {
		return ModuleReads{}, false
	}
	mod := idx[normalizeModule(module)]
	if mod == nil {
		return ModuleReads{}, false
	}
	c := strings.TrimSpace(constraint)
	if c == "" {
		return ModuleReads{mod: mod, allowed: mod.present, every: true}, true
	}
	cs, err := goversion.NewConstraint(c)
	if err != nil {
		return ModuleReads{}, false
	}
	allowed := newReleaseSet(len(mod.src.versions))
	for i, v := range mod.src.versions {
		if mod.present.has(i) && cs.Check(v) {
			allowed.add(i)
		}
	}
	return ModuleReads{mod: mod, allowed: allowed}, true
}

// Every reports that the constraint was empty: every release of the module is
// allowed, and an answer holds whichever release Terraform picks.
func (r ModuleReads) Every() bool { return r.every }

// Releases are the allowed releases ("20.24.0"), oldest first.
func (r ModuleReads) Releases() []string {
	if r.mod == nil {
		return nil
	}
	var out []string
	r.allowed.each(func(i int) { out = append(out, r.mod.src.names[i]) })
	return out
}

// Input says whether the allowed releases declare input name, and require it.
func (r ModuleReads) Input(name string) Presence {
	if r.mod == nil {
		return Presence{}
	}
	p := r.presence(r.mod.inputs[name])
	p.Required = !r.allowed.empty() && r.allowed.subsetOf(r.mod.required[name])
	return p
}

// RequiredInputs lists, sorted, the inputs every allowed release declares
// without a default: a call that does not set one is rejected by Terraform.
func (r ModuleReads) RequiredInputs() []string {
	if r.mod == nil || r.allowed.empty() {
		return nil
	}
	var out []string
	for name, s := range r.mod.required {
		if r.allowed.subsetOf(s) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Key says whether the allowed releases read key at path (path "eks_managed_node_groups.*",
// key "taints"), and whether the keys they read there are all that matter.
func (r ModuleReads) Key(path, key string) Presence {
	if r.mod == nil {
		return Presence{}
	}
	p := r.presence(r.mod.keys[path][key])
	withInput := r.allowed.and(r.mod.inputs[rootOf(path)])
	p.Closed = !withInput.empty() && withInput.subsetOf(r.mod.closed[path])
	return p
}

// Reads reports whether some allowed release reads keys at path.
func (r ModuleReads) Reads(path string) bool {
	if r.mod == nil {
		return false
	}
	for _, s := range r.mod.keys[path] {
		if !r.allowed.and(s).empty() {
			return true
		}
	}
	return false
}

func (r ModuleReads) presence(s releaseSet) Presence {
	in := r.allowed.and(s)
	return Presence{Any: !in.empty(), All: !r.allowed.empty() && r.allowed.subsetOf(s)}
}

// Nearest is the name a misspelt one most likely meant: among the inputs the
// allowed releases declare (path "") or the keys they read at path, the same name
// in another case, else the nearest within two edits (one for names of four
// characters or fewer); "" when none is that near.
func (r ModuleReads) Nearest(path, name string) string {
	if r.mod == nil {
		return ""
	}
	cands := r.mod.inputs
	if path != "" {
		cands = r.mod.keys[path]
	}
	var names []string
	for n, s := range cands {
		if n != name && !r.allowed.and(s).empty() {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	limit := 2
	if len(name) <= 4 {
		limit = 1
	}
	best, bestD := "", limit+1
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return n
		}
		if d := textmatch.Distance(strings.ToLower(name), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// History is what the module's releases did with a name: input name (path "") or
// key name at path.
func (r ModuleReads) History(path, name string) NameHistory {
	var h NameHistory
	if r.mod == nil {
		return h
	}
	src := r.mod.src
	had := newReleaseSet(len(src.versions))
	paths := r.mod.aliases(path)
	for _, p := range paths {
		if p == "" {
			had = had.or(r.mod.inputs[name])
		} else {
			had = had.or(r.mod.keys[p][name])
		}
	}
	for i := 0; i < len(src.versions); i++ {
		if !had.has(i) {
			continue
		}
		j := i
		for j+1 < len(src.versions) && had.has(j+1) {
			j++
		}
		h.Ranges = append(h.Ranges, ReleaseRange{From: src.names[i], To: src.names[j]})
		i = j
	}
	first, last := r.allowed.first(), r.allowed.last()
	if first >= 0 && !had.has(first) {
		for i := first + 1; i < len(src.versions); i++ {
			if had.has(i) {
				h.Added = src.names[i]
				break
			}
		}
	}
	if last >= 0 && !had.has(last) {
		for i := last - 1; i >= 0; i-- {
			if had.has(i) {
				h.Removed = src.names[i+1]
				break
			}
		}
	}
	for _, rn := range r.mod.renames {
		for _, p := range paths {
			if rn.Path == p && (rn.Old == name || rn.New == name) {
				h.Renames = append(h.Renames, rn)
				break
			}
		}
	}
	return h
}

// aliases are path and the paths it had before documented renames of its input
// (addons.* was cluster_addons.* before v21): for path "", just "".
func (m *moduleIndex) aliases(path string) []string {
	out := []string{path}
	if path == "" {
		return out
	}
	for i := 0; i < len(out) && i < 8; i++ {
		root, rest := rootOf(out[i]), strings.TrimPrefix(out[i], rootOf(out[i]))
		for _, rn := range m.renames {
			if rn.Path == "" && rn.New == root {
				alias := rn.Old + rest
				if !hasString(out, alias) {
					out = append(out, alias)
				}
			}
		}
	}
	return out
}

func rootOf(path string) string {
	if i := strings.IndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return path
}

// normalizeModule turns a registry source into the name the index uses:
// "registry.terraform.io/terraform-aws-modules/eks/aws//modules/karpenter/" ->
// "terraform-aws-modules/eks//modules/karpenter".
func normalizeModule(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimPrefix(s, "registry.terraform.io/")
	base, sub, _ := strings.Cut(s, "//")
	base = strings.Trim(base, "/")
	if parts := strings.Split(base, "/"); len(parts) == 3 {
		base = parts[0] + "/" + parts[1]
	}
	sub = strings.Trim(sub, "/")
	if sub == "" {
		return base
	}
	return base + "//" + sub
}

// The index.

type moduleInputsFile struct {
	Source   string `json:"source"`
	Module   string `json:"module"`
	Releases []struct {
		Version string `json:"version"`
		Commit  string `json:"commit"`
	} `json:"releases"`
	Modules []struct {
		Path     string                       `json:"path"`
		Releases string                       `json:"releases"`
		Inputs   map[string]string            `json:"inputs"`
		Required map[string]string            `json:"required"`
		Keys     map[string]map[string]string `json:"keys"`
		Closed   map[string]string            `json:"closed"`
	} `json:"modules"`
	Renames []struct {
		Module  string `json:"module"`
		Path    string `json:"path"`
		Old     string `json:"old"`
		New     string `json:"new"`
		Release string `json:"release"`
		Doc     string `json:"doc"`
		Via     string `json:"via"`
	} `json:"renames"`
}

type inputsSource struct {
	versions []*goversion.Version
	names    []string
	index    map[string]int
}

type moduleIndex struct {
	src              *inputsSource
	name             string
	present          releaseSet
	inputs, required map[string]releaseSet
	keys             map[string]map[string]releaseSet
	closed           map[string]releaseSet
	renames          []ModuleRename
}

var moduleInputs = sync.OnceValues(func() (map[string]*moduleIndex, error) {
	out := map[string]*moduleIndex{}
	for _, data := range [][]byte{eksInputsYAML, blueprintsInputsYAML} {
		if err := indexModuleInputs(data, out); err != nil {
			return nil, err
		}
	}
	return out, nil
})

func indexModuleInputs(data []byte, out map[string]*moduleIndex) error {
	var f moduleInputsFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return err
	}
	src := &inputsSource{index: map[string]int{}}
	for i, r := range f.Releases {
		v, err := goversion.NewVersion(r.Version)
		if err != nil {
			return err
		}
		src.versions = append(src.versions, v)
		src.names = append(src.names, r.Version)
		src.index[r.Version] = i
	}
	parse := func(s string) (releaseSet, error) { return src.parseRanges(s) }
	parseMap := func(m map[string]string) (map[string]releaseSet, error) {
		out := make(map[string]releaseSet, len(m))
		for k, s := range m {
			rs, err := parse(s)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = rs
		}
		return out, nil
	}
	for _, m := range f.Modules {
		name := f.Module
		if m.Path != "" {
			name += "//" + m.Path
		}
		mi := &moduleIndex{src: src, name: name, keys: map[string]map[string]releaseSet{}}
		var err error
		if mi.present, err = parse(m.Releases); err != nil {
			return err
		}
		if mi.inputs, err = parseMap(m.Inputs); err != nil {
			return err
		}
		if mi.required, err = parseMap(m.Required); err != nil {
			return err
		}
		if mi.closed, err = parseMap(m.Closed); err != nil {
			return err
		}
		for p, ks := range m.Keys {
			if mi.keys[p], err = parseMap(ks); err != nil {
				return err
			}
		}
		out[name] = mi
	}
	for _, r := range f.Renames {
		name := f.Module
		if r.Module != "" {
			name += "//" + r.Module
		}
		if mi := out[name]; mi != nil {
			mi.renames = append(mi.renames, ModuleRename{Module: name, Path: r.Path, Old: r.Old, New: r.New, Release: r.Release, Doc: r.Doc, Via: r.Via})
		}
	}
	return nil
}

// parseRanges reads "17.0.0-17.24.0 18.2.0".
func (s *inputsSource) parseRanges(text string) (releaseSet, error) {
	out := newReleaseSet(len(s.versions))
	for _, part := range strings.Fields(text) {
		a, b, found := strings.Cut(part, "-")
		if !found {
			b = a
		}
		i, ok1 := s.index[a]
		j, ok2 := s.index[b]
		if !ok1 || !ok2 || j < i {
			return nil, fmt.Errorf("bad release range %q", part)
		}
		for k := i; k <= j; k++ {
			out.add(k)
		}
	}
	return out, nil
}

// releaseSet is a set of releases of one source, by index.
type releaseSet []uint64

func newReleaseSet(n int) releaseSet { return make(releaseSet, (n+63)/64) }

func (s releaseSet) add(i int)      { s[i/64] |= 1 << (i % 64) }
func (s releaseSet) has(i int) bool { return i/64 < len(s) && s[i/64]&(1<<(i%64)) != 0 }

func (s releaseSet) and(t releaseSet) releaseSet {
	out := make(releaseSet, len(s))
	for i := range s {
		if i < len(t) {
			out[i] = s[i] & t[i]
		}
	}
	return out
}

func (s releaseSet) or(t releaseSet) releaseSet {
	out := make(releaseSet, max(len(s), len(t)))
	copy(out, s)
	for i := range t {
		out[i] |= t[i]
	}
	return out
}

func (s releaseSet) empty() bool {
	for _, w := range s {
		if w != 0 {
			return false
		}
	}
	return true
}

func (s releaseSet) subsetOf(t releaseSet) bool {
	for i, w := range s {
		var u uint64
		if i < len(t) {
			u = t[i]
		}
		if w&^u != 0 {
			return false
		}
	}
	return true
}

func (s releaseSet) each(f func(int)) {
	for i, w := range s {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			f(i*64 + b)
			w &^= 1 << b
		}
	}
}

func (s releaseSet) first() int {
	for i, w := range s {
		if w != 0 {
			return i*64 + bits.TrailingZeros64(w)
		}
	}
	return -1
}

func (s releaseSet) last() int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != 0 {
			return i*64 + 63 - bits.LeadingZeros64(s[i])
		}
	}
	return -1
}
