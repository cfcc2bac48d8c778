package source

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/eksdoctor/eksdoctor/internal/parallel"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/inputfs"
	"github.com/eksdoctor/eksdoctor/source/helm"
	"github.com/eksdoctor/eksdoctor/source/live"
	"github.com/eksdoctor/eksdoctor/source/manifest"
	"github.com/eksdoctor/eksdoctor/source/terraform"
)

// Options tune loading.
type Options struct {
	// Charts are local chart directories or .tgz files to render, with Values
	// files applied to each, as release Release in Namespace.
	Charts    []string
	Values    []string
	Release   string
	Namespace string
	// TFVars are extra Terraform variable files.
	TFVars []string
	// Assign puts manifests, values and charts in the cluster the user says,
	// whatever their place in the tree.
	Assign []Assignment
	// Budget bounds what a snapshot makes eksdoctor keep and analyse (zero
	// fields: live.DefaultBudget).
	Budget live.Budget
}

// Assignment puts the inputs whose paths match Include in Cluster, and says
// what the user declares of the cluster's capacity.
type Assignment struct {
	// Cluster is the configuration: a Terraform root directory, an eksctl or
	// snapshot file (as given, or as its path); or LooseCluster, the cluster
	// of the manifests that belong to no configuration.
	Cluster string
	// Include are path patterns (filepath.Match on the path or its base name;
	// "DIR/**" for everything under DIR), relative to the working directory.
	Include []string
	// CapacityComplete declares that the cluster's inputs hold all its
	// capacity: no node group, Fargate profile or NodePool is defined
	// elsewhere, so nothing is marked as capacity outside the inputs.
	CapacityComplete bool
}

// LooseCluster is the name of the cluster of the manifests that belong to no
// configuration (a GitOps repository given alone, a manifest equally near two
// configurations).
const LooseCluster = "manifests"

// Matches reports whether a path matches one of the patterns.
func (a Assignment) Matches(path string) bool {
	for _, p := range a.Include {
		if MatchPath(p, path) {
			return true
		}
	}
	return false
}

// MatchPath matches a path pattern as MatchPattern does, the pattern and the
// path also both made absolute (a pattern relative to the working directory
// matches a path given absolute, and the other way round).
func MatchPath(pattern, path string) bool {
	if path == "" {
		return false
	}
	return MatchPattern(pattern, path) || MatchPattern(filepath.ToSlash(abs(pattern)), abs(path))
}

// MatchPattern matches a path pattern as the configuration file writes them:
// filepath.Match against the path (slash-separated) or its base name, and
// "DIR/**" for everything under DIR.
func MatchPattern(pattern, path string) bool {
	if path == "" {
		return false
	}
	slash := filepath.ToSlash(path)
	if ok, _ := filepath.Match(pattern, slash); ok {
		return true
	}
	if ok, _ := filepath.Match(pattern, filepath.Base(path)); ok {
		return true
	}
	return strings.HasSuffix(pattern, "/**") && strings.HasPrefix(slash, strings.TrimSuffix(pattern, "**"))
}

// ErrNoInput is returned when no path could be read at all.
var ErrNoInput = errors.New("no input")

// Cluster is one cluster as the inputs describe it: a Terraform root, an eksctl
// ClusterConfig or a snapshot, with the manifests, values and charts that belong to
// it.
type Cluster struct {
	// Name says where the cluster is declared: the root directory or the file, as
	// given on the command line; "manifests" for manifests that belong to none.
	Name  string
	Model *cluster.Model
}

// Load reads every path and returns the clusters they describe, sorted by name.
// Inputs make clusters the way repositories lay them out: each Terraform root, each
// eksctl ClusterConfig and each snapshot is a cluster of its own; a directory that
// another configuration calls as a local module is a module, not a root; files a
// Terraform configuration reads (templates, values, documents) belong to it;
// other manifests join the configuration nearest to them in the tree, or, when
// that is not clear, a cluster of their own. Unreadable content becomes Problems in
// the models; an error is returned only when a path does not exist or nothing at
// all could be read. Nothing outside the paths (and the charts, values and variable
// files named in opts) is read.
func Load(paths []string, opts Options) ([]*Cluster, error) {
	// Every file named on the command line must be there: a run without the
	// variables or values it was asked to use would answer another question.
	for _, group := range [][]string{paths, opts.TFVars, opts.Values, opts.Charts} {
		for _, p := range group {
			if _, err := os.Stat(p); err != nil {
				return nil, fmt.Errorf("read %s: %w", p, err)
			}
		}
	}
	// A variables file given directly is read as `terraform plan -var-file`
	// reads it: for the configuration of its directory.
	for _, p := range paths {
		if isVarsName(p) {
			opts.TFVars = append(slices.Clip(opts.TFVars), p)
		}
	}
	roots := append(append(append([]string(nil), paths...), opts.Charts...), opts.Values...)
	roots = append(roots, opts.TFVars...)
	for _, p := range paths {
		// A .tf file given directly is read as Terraform reads it: with its
		// directory.
		if isTerraformName(p) || isVarsName(p) {
			roots = append(roots, filepath.Dir(p))
		}
	}
	fsys := inputfs.New(roots...)
	defer fsys.Close()

	var f finder
	for _, p := range paths {
		switch {
		case fsys.IsDir(p):
			f.walk(fsys, p)
		case isTerraformName(p), isVarsName(p):
			f.addRoot(filepath.Dir(p))
		default:
			f.files = append(f.files, p)
			f.named = append(f.named, p)
		}
	}
	return f.load(fsys, opts)
}

// finder collects what the paths hold before anything is loaded.
type finder struct {
	tfDirs []string // directories holding .tf files, in walk order
	files  []string // manifest, snapshot and plan files
	named  []string // files given on the command line
	charts []string // Helm chart directories found, rendered only through a release
	other  []string // tool files eksdoctor does not run (helmfile.yaml)
	probs  []cluster.Problem
}

func (f *finder) addRoot(dir string) {
	for _, d := range f.tfDirs {
		if d == dir {
			return
		}
	}
	f.tfDirs = append(f.tfDirs, dir)
}

// walk finds inputs under a directory: every directory with .tf files, every
// manifest file. A directory with Chart.yaml is a Helm chart, read only through a
// release or --chart. A directory that cannot be read is a problem; the rest of the
// tree is still read.
func (f *finder) walk(fsys *inputfs.FS, root string) {
	fsys.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			f.probs = append(f.probs, cluster.Problem{
				Origin:     cluster.Origin{File: path},
				Message:    "directory cannot be read: " + readReason(err) + "; what it holds is not analysed",
				Unresolved: true,
			})
			return nil
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && skippedDirs[name] {
				return filepath.SkipDir
			}
			if fsys.IsRegular(filepath.Join(path, "Chart.yaml")) {
				f.charts = append(f.charts, path)
				return filepath.SkipDir
			}
			if hasTF(fsys, path) {
				f.addRoot(path)
			}
			return nil
		}
		if isHelmfile(d.Name()) {
			f.other = append(f.other, path)
			return nil
		}
		if isManifestName(d.Name()) {
			f.files = append(f.files, path)
		}
		return nil
	})
}

// skippedDirs hold what tools keep beside a configuration, never a configuration:
// version control, Terraform's and Terragrunt's caches of providers and module
// sources, package managers' trees. Other hidden directories are read (a
// workshop's .workshop/terraform is a configuration like any other).
var skippedDirs = map[string]bool{
	".git": true, ".hg": true, ".svn": true, ".terraform": true, ".terragrunt-cache": true,
	"node_modules": true, "vendor": true, ".venv": true, "__pycache__": true,
}

// isHelmfile reports the file names helmfile reads its releases from.
func isHelmfile(name string) bool {
	switch name {
	case "helmfile.yaml", "helmfile.yml", "helmfile.yaml.gotmpl":
		return true
	}
	return false
}

// unrendered says, once, which charts found among the inputs no release of
// them renders, and which helmfiles are not run: what they would install is not
// analysed.
func (f *finder) unrendered(models []*cluster.Model, followed map[string]bool) []cluster.Problem {
	used := map[string]bool{}
	for d := range followed {
		used[d] = true
	}
	for _, m := range models {
		for _, r := range m.HelmReleases {
			if r.ChartDir != "" {
				used[abs(r.ChartDir)] = true
			}
		}
	}
	var out []cluster.Problem
	var charts []string
	for _, c := range f.charts {
		if !used[abs(c)] {
			charts = append(charts, c)
		}
	}
	if len(charts) > 0 {
		list := strings.Join(charts, ", ")
		if len(charts) > 5 {
			list = strings.Join(charts[:5], ", ") + fmt.Sprintf(" and %d more", len(charts)-5)
		}
		out = append(out, cluster.Problem{Origin: cluster.Origin{File: filepath.Join(charts[0], "Chart.yaml")}, Unresolved: true,
			Message: fmt.Sprintf("no release in the inputs renders these Helm charts, so what they create is not analysed (check them with --chart DIR -f VALUES): %s", list)})
	}
	return out
}

// helmfiles says which helmfiles are not run.
func (f *finder) helmfiles() []cluster.Problem {
	var out []cluster.Problem
	for _, h := range f.other {
		out = append(out, cluster.Problem{Origin: cluster.Origin{File: h}, Unresolved: true,
			Message: fmt.Sprintf("eksdoctor does not run helmfile: the releases %s installs are not analysed (check a chart with --chart and its values with -f)", h)})
	}
	return out
}

// localCharts gives the GitOps objects the chart directories among the inputs,
// read as local charts are, and records in followed those they read.
func (f *finder) localCharts(fsys *inputfs.FS, mu *sync.Mutex, followed map[string]bool) manifest.LocalCharts {
	if len(f.charts) == 0 {
		return manifest.LocalCharts{}
	}
	return manifest.LocalCharts{Dirs: f.charts, Read: func(dir string) ([]cluster.File, error) {
		mu.Lock()
		followed[abs(dir)] = true
		mu.Unlock()
		files, _, err := helm.ReadChart(fsys, dir)
		return files, err
	}}
}

// unit is one cluster being assembled.
type unit struct {
	name   string
	dir    string // absolute: where the configuration lives, for nearness
	anchor bool   // a configuration manifests may belong to
	parts  []*cluster.Model
	// complete: the configuration file declares that the inputs hold all
	// the cluster's capacity.
	complete bool
}

// load assembles the clusters: one per Terraform root configuration, snapshot,
// plan or eksctl ClusterConfig, with every other file joined to the cluster it
// is assigned to or nearest, else to the loose cluster.
func (f *finder) load(fsys *inputfs.FS, opts Options) ([]*Cluster, error) {
	units, read := f.terraformUnits(fsys, opts)
	units, pending := f.readLoose(fsys, opts, units, read)
	pending, err := f.extraParts(fsys, opts, pending)
	if err != nil {
		return nil, err
	}
	units, err = join(units, pending, opts.Assign)
	if err != nil {
		return nil, err
	}
	declareCapacity(units, opts.Assign)
	if len(units) == 0 {
		if len(f.charts) > 0 {
			return nil, fmt.Errorf("%w: %s is a Helm chart, rendered only through a release or with --chart %s (add -f for its values files)", ErrNoInput, f.charts[0], f.charts[0])
		}
		return nil, fmt.Errorf("%w: no manifests, Terraform, charts or snapshots found", ErrNoInput)
	}
	sort.SliceStable(units, func(i, j int) bool { return units[i].name < units[j].name })
	return f.clusters(fsys, units), nil
}

// tfReads is what the Terraform configurations read: files, and the folders
// of their own they read from.
type tfReads struct {
	inputs    map[string]bool
	inputDirs map[string]bool
}

// terraformUnits loads every Terraform root configuration (a directory no
// other configuration calls as a local module) into a unit of its own, and
// returns what they read.
func (f *finder) terraformUnits(fsys *inputfs.FS, opts Options) ([]*unit, tfReads) {
	// A directory another configuration calls as a local module is a module.
	called := map[string]bool{}
	for _, d := range f.tfDirs {
		for _, m := range terraform.LocalModuleDirs(fsys, d) {
			if abs(m) != abs(d) {
				called[abs(m)] = true
			}
		}
	}
	var units []*unit
	read := tfReads{inputs: map[string]bool{}, inputDirs: map[string]bool{}}
	var rootDirs []string
	for _, d := range f.tfDirs {
		if called[abs(d)] {
			continue
		}
		rootDirs = append(rootDirs, d)
	}
	tfModels := make([]*cluster.Model, len(rootDirs))
	parallel.Each(len(rootDirs), func(i int) {
		m, err := terraform.Load(rootDirs[i], terraform.Options{VarFiles: opts.TFVars, FS: fsys})
		if err != nil {
			m = &cluster.Model{Problems: []cluster.Problem{{Origin: cluster.Origin{File: rootDirs[i]}, Message: err.Error(), Unresolved: true}}}
		}
		tfModels[i] = m
	})
	for i, d := range rootDirs {
		m := tfModels[i]
		for _, in := range m.Inputs {
			read.inputs[abs(in)] = true
			if dir := filepath.Dir(abs(in)); dir != abs(d) {
				// Files beside what a configuration reads from a folder of its
				// own (templates/, values/) are its inputs too.
				read.inputDirs[dir] = true
			}
		}
		units = append(units, &unit{name: d, dir: abs(d), anchor: kubernetesRelated(m), parts: []*cluster.Model{m}})
	}
	return units, read
}

// readLoose reads the files no Terraform configuration or kustomization
// reads (those named on the command line always): a snapshot, a plan or an
// eksctl ClusterConfig becomes a unit of its own, every other file a part
// still to join. It records the kustomizations' problems in f.probs.
func (f *finder) readLoose(fsys *inputfs.FS, opts Options, units []*unit, tf tfReads) ([]*unit, []*pendingPart) {
	named := map[string]bool{}
	for _, n := range f.named {
		named[n] = true
	}
	kz := readKustomizations(fsys, f.files)
	var files []string
	for _, file := range f.files {
		a := abs(file)
		if !named[file] && (tf.inputs[a] || tf.inputDirs[filepath.Dir(a)] || kz.inputs[a]) {
			continue
		}
		files = append(files, file)
	}
	read := readFiles(fsys, files, named, opts.Budget)
	for i, file := range files {
		kz.mark(file, read[i])
	}

	var pending []*pendingPart
	for i, file := range files {
		m := read[i]
		switch {
		case m.Live != nil, m.Terraform != nil, hasClusterConfig(m):
			// A snapshot, a plan or an eksctl ClusterConfig is a cluster of its own.
			units = append(units, &unit{name: file, dir: filepath.Dir(abs(file)), anchor: true, parts: []*cluster.Model{m}})
		default:
			pending = append(pending, &pendingPart{path: abs(file), model: m})
		}
	}
	if p, ok := kz.problem(); ok {
		f.probs = append(f.probs, p)
	}
	f.probs = append(f.probs, kz.probs...)
	return units, pending
}

// extraParts adds to pending the charts given with --chart, then every
// problem found while finding and reading the inputs, each a part of its own.
func (f *finder) extraParts(fsys *inputfs.FS, opts Options, pending []*pendingPart) ([]*pendingPart, error) {
	for _, c := range opts.Charts {
		part, err := loadChart(fsys, c, opts)
		if err != nil {
			return nil, err
		}
		pending = append(pending, &pendingPart{path: abs(c), model: part})
	}
	f.probs = append(f.probs, f.helmfiles()...)
	for _, p := range f.probs {
		pending = append(pending, &pendingPart{path: abs(p.Origin.File), model: &cluster.Model{Problems: []cluster.Problem{p}}})
	}
	return pending, nil
}

// join adds each pending part that declares something to the unit it is
// assigned to, else the nearest, else the loose cluster (made when first
// needed and appended to units).
func join(units []*unit, pending []*pendingPart, as []Assignment) ([]*unit, error) {
	var loose *unit
	for _, p := range pending {
		if p.model.Empty() {
			// A file that declares nothing (a values file no
			// configuration reads, a CI configuration) adds nothing.
			continue
		}
		u, toLoose, err := assigned(units, p.path, as)
		if err != nil {
			return nil, err
		}
		if u == nil && !toLoose {
			u = nearest(units, p.path)
		}
		if u == nil {
			if loose == nil {
				loose = &unit{name: LooseCluster}
				units = append(units, loose)
			}
			u = loose
		}
		u.parts = append(u.parts, p.model)
	}
	return units, nil
}

// clusters builds each unit's model, in parallel, and adds the problem of the
// charts no release renders and no GitOps object follows, said once, in the
// cluster nearest the first of them.
func (f *finder) clusters(fsys *inputfs.FS, units []*unit) []*Cluster {
	out := make([]*Cluster, len(units))
	var mu sync.Mutex
	followed := map[string]bool{}
	charts := f.localCharts(fsys, &mu, followed)
	parallel.Each(len(units), func(i int) {
		out[i] = &Cluster{Name: units[i].name, Model: build(charts, units[i].complete, units[i].parts...)}
	})
	models := make([]*cluster.Model, len(out))
	for i, c := range out {
		models[i] = c.Model
	}
	for _, p := range f.unrendered(models, followed) {
		u := nearest(units, abs(p.Origin.File))
		if u == nil {
			u = units[0]
		}
		for i := range units {
			if units[i] == u {
				out[i].Model.Problems = append(out[i].Model.Problems, p)
			}
		}
	}
	return out
}

// assigned is the cluster the configuration file assigns a path to; nil when
// none does, or when it assigns the path to the cluster of the manifests that
// belong to no configuration (toLoose).
func assigned(units []*unit, path string, as []Assignment) (u *unit, toLoose bool, err error) {
	for _, a := range as {
		if !a.Matches(path) {
			continue
		}
		if u := named(units, a.Cluster); u != nil {
			return u, false, nil
		}
		if a.Cluster == LooseCluster {
			return nil, true, nil
		}
		var names []string
		for _, u := range units {
			if u.anchor {
				names = append(names, u.name)
			}
		}
		they := "they are: " + strings.Join(names, ", ")
		if len(names) == 0 {
			they = "they hold none"
		}
		return nil, false, fmt.Errorf("%w: clusters: %s is assigned to %q, which is not a cluster of these inputs (%s; %s puts it in a cluster of its own)", ErrAssign, path, a.Cluster, they, LooseCluster)
	}
	return nil, false, nil
}

// named is the configuration called name (as given, or as its path); nil when
// no configuration of the inputs is.
func named(units []*unit, name string) *unit {
	for _, u := range units {
		if u.anchor && (u.name == name || abs(u.name) == abs(name)) {
			return u
		}
	}
	return nil
}

// declareCapacity marks the clusters whose capacity the configuration file
// declares complete. An entry naming a cluster that is not among the inputs
// (the configuration file of a repository checked one cluster at a time)
// declares nothing.
func declareCapacity(units []*unit, as []Assignment) {
	for _, a := range as {
		if !a.CapacityComplete {
			continue
		}
		u := named(units, a.Cluster)
		if u == nil && a.Cluster == LooseCluster {
			for _, l := range units {
				if !l.anchor && l.name == LooseCluster {
					u = l
				}
			}
		}
		if u != nil {
			u.complete = true
		}
	}
}

// ErrAssign is an assignment to a cluster the inputs do not hold.
var ErrAssign = errors.New("unknown cluster")

type pendingPart struct {
	path  string
	model *cluster.Model
}

// nearest is the configuration a manifest at path belongs to: the only one there
// is, or the nearest one whose directory holds the manifest's, else the one
// sharing the longest directory prefix with it; nil when none is an anchor or two
// are equally near.
func nearest(units []*unit, path string) *unit {
	var anchors []*unit
	for _, u := range units {
		if u.anchor {
			anchors = append(anchors, u)
		}
	}
	switch len(anchors) {
	case 0:
		return nil
	case 1:
		return anchors[0]
	}
	best, bestScore, tie := (*unit)(nil), -1, false
	dir := filepath.Dir(path)
	for _, u := range anchors {
		s := commonDepth(u.dir, dir)
		if s == depth(u.dir) {
			// The configuration's directory holds the manifest: nearer than
			// any that merely shares a prefix.
			s += 1 << 16
		}
		switch {
		case s > bestScore:
			best, bestScore, tie = u, s, false
		case s == bestScore:
			tie = true
		}
	}
	if tie {
		return nil
	}
	return best
}

// depth counts the path elements of a directory.
func depth(dir string) int { return len(strings.Split(filepath.ToSlash(dir), "/")) }

// commonDepth counts the leading path elements a and b share.
func commonDepth(a, b string) int {
	as := strings.Split(filepath.ToSlash(a), "/")
	bs := strings.Split(filepath.ToSlash(b), "/")
	n := 0
	for n < len(as) && n < len(bs) && as[n] == bs[n] {
		n++
	}
	return n
}

// kubernetesRelated reports whether a Terraform configuration has anything to do
// with a cluster, so that manifests may belong to it.
func kubernetesRelated(m *cluster.Model) bool {
	return m.Cluster.Defined || len(m.NodeGroups) > 0 || len(m.FargateProfiles) > 0 ||
		len(m.HelmReleases) > 0 || len(m.Addons) > 0 || len(m.Objects) > 0 || m.Karpenter.Address != ""
}

func hasClusterConfig(m *cluster.Model) bool {
	for _, o := range m.Objects {
		if manifest.IsClusterConfig(o) {
			return true
		}
	}
	return false
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	return a
}

// Build merges partial models and completes them: Helm releases and EKS add-ons
// become objects, objects become workloads and capacity, and capacity the inputs
// cannot show is marked as unseen.
func Build(parts ...*cluster.Model) *cluster.Model {
	return build(manifest.LocalCharts{}, false, parts...)
}

// build is Build with the chart directories among the inputs, which GitOps
// objects may install from a path of their repository, and with what the
// configuration file declares: complete when the inputs hold all the cluster's
// capacity.
func build(charts manifest.LocalCharts, complete bool, parts ...*cluster.Model) *cluster.Model {
	m := cluster.Merge(parts...)
	manifest.InterpretClusterConfigs(m)
	manifest.InterpretGitOps(m, charts)
	implicitAddons(m)
	autoModeCapacity(m)
	expand(m)
	manifest.Interpret(m)
	liveAutoMode(m)
	markUnseen(m, complete)
	return m
}

// readReason is why a read failed, without the path (the finding names it).
func readReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func hasTF(fsys *inputfs.FS, dir string) bool {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.IsDir() && isTerraformName(e.Name()) {
			return true
		}
	}
	return false
}

// isVarsName reports whether a file is a Terraform variables file.
func isVarsName(name string) bool {
	return strings.HasSuffix(name, ".tfvars") || strings.HasSuffix(name, ".tfvars.json")
}

func isTerraformName(name string) bool {
	return strings.HasSuffix(name, ".tf") || strings.HasSuffix(name, ".tf.json")
}

func isManifestName(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	switch ext {
	case ".yaml", ".yml", ".json":
		return !strings.HasSuffix(name, ".tf.json")
	case ".gz":
		return strings.HasSuffix(strings.ToLower(name), ".json.gz")
	}
	return false
}

// readFiles decodes files in parallel, keeping their order. In a file the user
// named, a document that is not a Kubernetes object is a problem; in a directory
// walk such documents (values files, CI configs) are simply not manifests.
func readFiles(fsys *inputfs.FS, files []string, named map[string]bool, budget live.Budget) []*cluster.Model {
	out := make([]*cluster.Model, len(files))
	again := &recent{max: 4, roots: fsys.Roots()}
	parallel.Each(len(files), func(i int) { out[i] = readFile(fsys, again, files[i], named[files[i]], budget) })
	return out
}

func readFile(fsys *inputfs.FS, again *recent, file string, explicit bool, budget live.Budget) *cluster.Model {
	limit := inputfs.MaxManifest
	if lower := strings.ToLower(file); strings.HasSuffix(lower, ".json") || strings.HasSuffix(lower, ".gz") {
		limit = budget.SnapshotBytes() // snapshots of large clusters are large
	}
	data, err := fsys.ReadFile(file, limit)
	if err != nil {
		// A link out of the inputs is valid for kubectl, only not read here; a
		// file too large or not a file at all is not a manifest.
		msg := "cannot read file: " + readReason(err)
		if tl := (*inputfs.TooLargeError)(nil); errors.As(err, &tl) && limit != inputfs.MaxManifest {
			msg += " (a snapshot; --max-snapshot-size raises that)"
		}
		return &cluster.Model{Problems: []cluster.Problem{{Origin: cluster.Origin{File: file}, Message: msg, Unresolved: inputfs.Unseen(err)}}}
	}
	if m, ok := readSpecial(file, data, budget); ok {
		return m
	}
	if int64(len(data)) > inputfs.MaxManifest {
		return &cluster.Model{Problems: []cluster.Problem{{Origin: cluster.Origin{File: file}, Message: "cannot read file: " + (&inputfs.TooLargeError{Path: file, Limit: inputfs.MaxManifest}).Error()}}}
	}
	objs, probs := manifest.DecodeFileFrom(file, data, again.reader(file, limit))
	if !explicit {
		probs = dropNonManifest(probs)
		if !bytes.Contains(data, []byte("apiVersion")) || !bytes.Contains(data, []byte("kind")) {
			// A file found in a directory that names no apiVersion and kind
			// anywhere is something else (tsconfig.json with comments, a CI
			// workflow): what does not parse in it is not a broken manifest.
			probs = nil
		}
		probs = templateProblems(data, probs)
	}
	objs, ws, wprobs := manifest.DecodeFileWorkloads(objs)
	if !explicit {
		wprobs = templateDocumentProblems(data, wprobs)
	}
	return &cluster.Model{Objects: objs, Workloads: ws, Problems: append(probs, wprobs...)}
}

// recent reads files again, later, inside the same roots: a large input's
// objects do not keep the text of every file for the few lines and contents
// findings ask for again. The last few files read again are kept, since a
// finding asks for several lines of one object.
type recent struct {
	roots []string // the roots of the first read
	max   int

	mu    sync.Mutex
	names []string
	data  [][]byte
}

// reader reads file again, where it was read even if the working directory
// has changed since (a library's caller may change it).
func (r *recent) reader(file string, limit int64) func() ([]byte, error) {
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	return func() ([]byte, error) {
		if data, ok := r.get(file); ok {
			return data, nil
		}
		fsys := inputfs.New(r.roots...)
		defer fsys.Close()
		data, err := fsys.ReadFile(file, limit)
		if err == nil {
			r.put(file, data)
		}
		return data, err
	}
}

func (r *recent) get(name string) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, n := range r.names {
		if n == name {
			return r.data[i], true
		}
	}
	return nil, false
}

func (r *recent) put(name string, data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.names) == r.max {
		r.names, r.data = r.names[1:], r.data[1:]
	}
	r.names, r.data = append(r.names, name), append(r.data, data)
}

func dropNonManifest(probs []cluster.Problem) []cluster.Problem {
	out := probs[:0]
	for _, p := range probs {
		if manifest.IsNotAnObject(p) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// templateProblems: a document that does not parse near a template placeholder is
// a template something fills in before applying it (sed, envsubst, Helm,
// Terraform), not a broken manifest.
func templateProblems(data []byte, probs []cluster.Problem) []cluster.Problem {
	if len(probs) == 0 {
		return probs
	}
	// Only the lines near a problem are looked at: a file can be large, and
	// its problems few.
	near := map[int]bool{}
	for _, p := range probs {
		for d := -3; d <= 3; d++ {
			near[p.Origin.Line+d] = true
		}
	}
	markers := map[int]string{}
	for n, rest := 1, data; len(rest) > 0; n++ {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if !near[n] || len(line) > maxTemplateLine {
			continue
		}
		if m := templateMarker.Find(line); m != nil {
			markers[n] = string(m)
		}
	}
	if len(markers) == 0 {
		return probs
	}
	for i, p := range probs {
		for d := -3; d <= 3; d++ {
			if m, ok := markers[p.Origin.Line+d]; ok {
				probs[i].Unresolved = true
				probs[i].Message = fmt.Sprintf("this document is a template (it holds %s), not a manifest yet, and does not parse as one (%s); it is not analysed", m, p.Message)
				break
			}
		}
	}
	return probs
}

// templateDocumentProblems: an object that does not decode (a port or quantity
// written as ${PORT}) in a document that holds template placeholders is a
// template, not a broken manifest. Only the documents with problems are looked
// at, from the object's first line to the next separator.
func templateDocumentProblems(data []byte, probs []cluster.Problem) []cluster.Problem {
	if len(probs) == 0 {
		return probs
	}
	starts := map[int]bool{}
	for _, p := range probs {
		starts[p.Origin.Line] = true
	}
	found := map[int]string{} // start line → placeholder
	in := 0                   // the start line of the document being scanned, 0 outside
	for n, rest := 1, data; len(rest) > 0; n++ {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if starts[n] {
			in = n
		} else if bytes.HasPrefix(line, []byte("---")) {
			in = 0
		}
		if in == 0 || found[in] != "" || len(line) > maxTemplateLine {
			continue
		}
		if m := templateMarker.Find(line); m != nil {
			found[in] = string(m)
		}
	}
	for i, p := range probs {
		if m, ok := found[p.Origin.Line]; ok {
			probs[i].Unresolved = true
			probs[i].Message = fmt.Sprintf("this document is a template (it holds %s), not a manifest yet: %s; it is not analysed", m, p.Message)
		}
	}
	return probs
}

// maxTemplateLine bounds the lines searched for template placeholders.
const maxTemplateLine = 64 << 10

// templateMarker finds the placeholders of the common template languages: Go
// templates and Mustache ({{ }}), Terraform (${ } and %{ }), Jinja ({% %}).
var templateMarker = regexp.MustCompile(`\{\{[^\n]{0,80}\}\}|\$\{[^\n]{0,80}\}|%\{[^\n]{0,80}\}|\{%[^\n]{0,80}%\}`)

// isGzip reports gzip magic bytes.
func isGzip(data []byte) bool { return bytes.HasPrefix(data, []byte{0x1f, 0x8b}) }
