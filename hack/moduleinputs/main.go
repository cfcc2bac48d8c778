// Command moduleinputs extracts, from a git clone of a Terraform module repository,
// which inputs each release of the module and of each of its sub-modules declares
// (and which of them are required: no default), and which keys each release reads
// from the entries of its map and object inputs, at any depth
// (eks_managed_node_groups.*.taints.* reads key, value and effect). It writes the
// catalog file eksdoctor checks module calls against:
//
//	go run ./hack/moduleinputs eks GIT_DIR > catalog/modules/terraform-aws-eks-inputs.yaml
//	go run ./hack/moduleinputs blueprints GIT_DIR > catalog/modules/eks-blueprints-addons-inputs.yaml
//
// GIT_DIR is a clone (bare or not) of github.com/terraform-aws-modules/terraform-aws-eks
// or github.com/aws-ia/terraform-aws-eks-blueprints-addons. Every release tag vX.Y.Z
// is read (terraform-aws-eks from v17.0.0 on).
//
// Keys are found by evaluating each module's HCL abstractly (eval.go), not by
// matching text: each.value.KEY, each.value["KEY"], try(each.value.KEY, ...),
// lookup(each.value, "KEY", ...), the same through locals, for expressions,
// merge(), flatten() and dynamic blocks, and through the arguments of the
// repository's own sub-modules (what the root passes as an entry's taints is read
// as the eks-managed-node-group sub-module reads its taints input). A path is
// "closed" in a release when the keys read there are all that matter: the module
// neither iterates it (names there are the user's), nor reads it with a key known
// only at plan time, nor passes it, or anything above it, on whole to a resource
// argument, an outside module or a function such as jsonencode or templatefile.
//
// Renames come from the UPGRADE-*.md documents of the newest release (renames.go):
// the "Renamed variables" lists, and the sentences of the "Removed variables" lists
// and of the lists of breaking changes that name a replacement ("replaced with",
// "superseded by", "should use ... instead"). A rename of a node group or Fargate
// profile sub-module's input is also a rename of the root's entry key when the root
// read the old key before the rename and the new one from it on.
//
// Handled by hand: nothing in the module sources. The documents' headings that
// name a sub-module ("Karpenter", "`eks-managed-node-group` sub-module", "EKS
// managed node groups:" ...) are mapped to sub-module directories by the words in
// subModuleWords.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var releaseTag = regexp.MustCompile(`^v\d+\.\d+\.\d+$`)

type sourceSpec struct {
	repository string // github.com/owner/name
	module     string // the registry name eksdoctor uses
	registry   string
	minMajor   int
	docs       bool // UPGRADE-*.md documents name renames
}

var sources = map[string]sourceSpec{
	"eks": {
		repository: "github.com/terraform-aws-modules/terraform-aws-eks",
		module:     "terraform-aws-modules/eks", registry: "terraform-aws-modules/eks/aws",
		minMajor: 17, docs: true,
	},
	"blueprints": {
		repository: "github.com/aws-ia/terraform-aws-eks-blueprints-addons",
		module:     "aws-ia/eks-blueprints-addons", registry: "aws-ia/eks-blueprints-addons/aws",
	},
}

// bits is a set of releases, by index.
type bits []bool

type moduleAgg struct {
	dir      string
	present  bits
	inputs   map[string]bits
	required map[string]bits
	keys     map[string]map[string]bits
	closed   map[string]bits
	// per release, the summary (kept for the renames of entry keys)
	sums []*summary
}

func main() {
	if len(os.Args) != 3 || sources[os.Args[1]].repository == "" {
		fmt.Fprintln(os.Stderr, "usage: moduleinputs eks|blueprints GIT_DIR")
		os.Exit(2)
	}
	spec := sources[os.Args[1]]
	r, err := openRepo(os.Args[2])
	if err != nil {
		fail(err)
	}
	defer r.close()
	tagCommits, err := r.tags()
	if err != nil {
		fail(err)
	}
	var tags []string
	for t := range tagCommits {
		if major(t) >= spec.minMajor {
			tags = append(tags, t)
		}
	}
	sort.Slice(tags, func(i, j int) bool { return less(tags[i], tags[j]) })
	mods := map[string]*moduleAgg{}
	for i, t := range tags {
		sums, err := releaseSummaries(r, t)
		if err != nil {
			fail(fmt.Errorf("%s: %w", t, err))
		}
		for dir, s := range sums {
			a := mods[dir]
			if a == nil {
				a = newModuleAgg(dir, len(tags))
				mods[dir] = a
			}
			a.add(i, s)
		}
	}
	var renames []rename
	if spec.docs {
		newest := tags[len(tags)-1]
		renames, err = docRenames(r, newest)
		if err != nil {
			fail(err)
		}
		renames = append(renames, entryRenames(renames, mods, tags)...)
		sortRenames(renames)
	}
	var b bytes.Buffer
	writeHeader(&b, spec, os.Args[1])
	writeReleases(&b, tags, tagCommits)
	var versions []string
	for _, t := range tags {
		versions = append(versions, strings.TrimPrefix(t, "v"))
	}
	b.WriteString("modules:\n")
	for _, dir := range sortedKeys(mods) {
		mods[dir].write(&b, versions)
	}
	writeRenames(&b, renames)
	os.Stdout.Write(b.Bytes())
}

// newModuleAgg is the aggregate of the module at dir over n releases, none
// added yet.
func newModuleAgg(dir string, n int) *moduleAgg {
	return &moduleAgg{dir: dir, present: make(bits, n), inputs: map[string]bits{}, required: map[string]bits{},
		keys: map[string]map[string]bits{}, closed: map[string]bits{}, sums: make([]*summary, n)}
}

// add records release i's summary of the module: its inputs, which are
// required, and the keys read from its inputs' entries (only under a path
// that starts at a declared input).
func (a *moduleAgg) add(i int, s *summary) {
	n := len(a.present)
	a.present[i] = true
	a.sums[i] = s
	for in, req := range s.inputs {
		set(a.inputs, in, i, n)
		if req {
			set(a.required, in, i, n)
		}
	}
	for p, ks := range s.reads {
		if _, ok := s.inputs[strings.Split(p, ".")[0]]; !ok {
			continue
		}
		if a.keys[p] == nil {
			a.keys[p] = map[string]bits{}
		}
		for k := range ks {
			set(a.keys[p], k, i, n)
		}
		if s.closed(p) {
			set(a.closed, p, i, n)
		}
	}
}

// writeHeader writes the comment that says what the file holds and the
// command that extracted it (kind is the command's argument), then the
// source and module names.
func writeHeader(b *bytes.Buffer, spec sourceSpec, kind string) {
	fmt.Fprintf(b, "# Which inputs each release of %s\n", spec.repository)
	fmt.Fprintf(b, "# (registry %s) and of each of its sub-modules declares,\n", spec.registry)
	b.WriteString(`# which of them are required (no default), and which keys each release reads from the
# entries of its map and object inputs, at any depth ("*" is any entry: the keys of
# "eks_managed_node_groups.*" are read from every node group). closed lists, by path,
# the releases where the keys read there are all that matter (nothing iterates the
# value, reads it with a computed key, or passes it on whole). renames are the renames
# of inputs (path "") and of entry keys that the UPGRADE-*.md document named lists
# (via: the sub-module whose renamed input the root passes the entry key to).
# Release ranges are runs of consecutive releases of the list below (first-last,
# separated by spaces); each release names the commit of its tag. Extracted from the
# module sources by
`)
	fmt.Fprintf(b, "#   go run ./hack/moduleinputs %s GIT_DIR\n", kind)
	fmt.Fprintf(b, "source: %s\n", spec.repository)
	fmt.Fprintf(b, "module: %s\n", spec.module)
}

// writeReleases writes the list of releases, each with its tag's commit.
func writeReleases(b *bytes.Buffer, tags []string, tagCommits map[string]string) {
	b.WriteString("releases:\n")
	for _, t := range tags {
		fmt.Fprintf(b, "  - {version: %s, commit: %s}\n", q(strings.TrimPrefix(t, "v")), tagCommits[t])
	}
}

// write writes the module's entry of the modules list.
func (a *moduleAgg) write(b *bytes.Buffer, versions []string) {
	fmt.Fprintf(b, "  - path: %s\n", q(a.dir))
	fmt.Fprintf(b, "    releases: %s\n", q(ranges(a.present, versions)))
	writeBits(b, "inputs", a.inputs, versions)
	writeBits(b, "required", a.required, versions)
	if len(a.keys) > 0 {
		b.WriteString("    keys:\n")
		for _, p := range sortedKeys(a.keys) {
			fmt.Fprintf(b, "      %s:\n", q(p))
			for _, k := range sortedKeys(a.keys[p]) {
				fmt.Fprintf(b, "        %s: %s\n", q(k), q(ranges(a.keys[p][k], versions)))
			}
		}
	}
	writeBits(b, "closed", a.closed, versions)
}

// writeRenames writes the renames list, if there are any.
func writeRenames(b *bytes.Buffer, renames []rename) {
	if len(renames) == 0 {
		return
	}
	b.WriteString("renames:\n")
	for _, rn := range renames {
		via := ""
		if rn.via != "" {
			via = ", via: " + q(rn.via)
		}
		fmt.Fprintf(b, "  - {module: %s, path: %s, old: %s, new: %s, release: %s, doc: %s%s}\n",
			q(rn.module), q(rn.path), q(rn.old), q(rn.new), q(rn.release), q(rn.doc), via)
	}
}

func writeBits(b *bytes.Buffer, name string, m map[string]bits, versions []string) {
	if len(m) == 0 {
		return
	}
	fmt.Fprintf(b, "    %s:\n", name)
	for _, k := range sortedKeys(m) {
		fmt.Fprintf(b, "      %s: %s\n", q(k), q(ranges(m[k], versions)))
	}
}

var plain = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// q writes a YAML scalar: plain when that is unambiguous, else double-quoted.
func q(s string) string {
	if plain.MatchString(s) && s != "true" && s != "false" && s != "null" && s != "yes" && s != "no" && s != "on" && s != "off" {
		return s
	}
	out, _ := json.Marshal(s)
	return string(out)
}

func set(m map[string]bits, k string, i, n int) {
	if m[k] == nil {
		m[k] = make(bits, n)
	}
	m[k][i] = true
}

// ranges writes runs of consecutive releases: "17.0.0-17.24.0 18.2.0".
func ranges(b bits, versions []string) string {
	var parts []string
	for i := 0; i < len(b); i++ {
		if !b[i] {
			continue
		}
		j := i
		for j+1 < len(b) && b[j+1] {
			j++
		}
		if i == j {
			parts = append(parts, versions[i])
		} else {
			parts = append(parts, versions[i]+"-"+versions[j])
		}
		i = j
	}
	return strings.Join(parts, " ")
}

// releaseSummaries evaluates the root module and every directory under modules/
// of a release.
func releaseSummaries(r *repo, tag string) (map[string]*summary, error) {
	files, err := r.files(tag)
	if err != nil {
		return nil, err
	}
	byDir := map[string][]string{}
	for _, f := range files {
		if !strings.HasSuffix(f, ".tf") {
			continue
		}
		dir := path.Dir(f)
		if dir == "." {
			dir = ""
		}
		if dir == "" || (strings.HasPrefix(dir, "modules/") && strings.Count(dir, "/") == 1) {
			byDir[dir] = append(byDir[dir], f)
		}
	}
	sums := map[string]*summary{}
	busy := map[string]bool{}
	var load func(dir string) (*summary, error)
	load = func(dir string) (*summary, error) {
		if dir == "." {
			dir = ""
		}
		if s, ok := sums[dir]; ok {
			return s, nil
		}
		if busy[dir] {
			return nil, fmt.Errorf("module cycle at %q", dir)
		}
		busy[dir] = true
		contents := map[string][]byte{}
		for _, f := range byDir[dir] {
			c, ok, err := r.show(tag, f)
			if err != nil {
				return nil, err
			}
			if ok {
				contents[path.Base(f)] = c
			}
		}
		if len(contents) == 0 {
			return nil, fmt.Errorf("no module at %q", dir)
		}
		s, err := evaluate(dir, contents, load)
		if err != nil {
			return nil, err
		}
		sums[dir] = s
		return s, nil
	}
	for _, dir := range sortedKeys(byDir) {
		if _, err := load(dir); err != nil {
			return nil, err
		}
	}
	return sums, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func major(t string) int {
	x, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(t, "v"), ".", 2)[0])
	return x
}

func less(a, b string) bool {
	pa, pb := strings.Split(strings.TrimPrefix(a, "v"), "."), strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := range pa {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x < y
		}
	}
	return false
}
