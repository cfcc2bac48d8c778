package source

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/inputfs"
	"github.com/eksdoctor/eksdoctor/source/manifest"
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
}

// ErrNoInput is returned when no path could be read at all.
var ErrNoInput = errors.New("no input")

// Load reads every path and returns the merged, interpreted model. Unreadable
// content becomes Problems in the model; an error is returned only when a path does
// not exist or nothing at all could be read. Nothing outside the paths (and the
// charts, values and variable files named in opts) is read.
func Load(paths []string, opts Options) (*cluster.Model, error) {
	var parts []*cluster.Model
	var files []string
	named := map[string]bool{}
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
	}
	fsys := inputfs.New(append(append(append(append([]string(nil), paths...), opts.Charts...), opts.Values...), opts.TFVars...)...)
	defer fsys.Close()
	for _, p := range paths {
		if fsys.IsDir(p) {
			dirParts, dirFiles := walk(fsys, p, opts)
			parts = append(parts, dirParts...)
			files = append(files, dirFiles...)
			continue
		}
		files = append(files, p)
		named[p] = true
	}
	parts = append(parts, readFiles(fsys, files, named)...)
	for _, c := range opts.Charts {
		part, err := loadChart(fsys, c, opts)
		if err != nil {
			return nil, err
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: no manifests, Terraform, charts or snapshots found in %s", ErrNoInput, strings.Join(paths, ", "))
	}
	return Build(parts...), nil
}

// Build merges partial models and completes them: Helm releases and EKS add-ons
// become objects, objects become workloads and capacity.
func Build(parts ...*cluster.Model) *cluster.Model {
	m := cluster.Merge(parts...)
	manifest.InterpretClusterConfigs(m)
	expand(m)
	manifest.Interpret(m)
	return m
}

// walk finds inputs under a directory. A directory with .tf files is a Terraform
// root (its local modules are read through it, not as roots of their own); a
// directory with Chart.yaml is a Helm chart, read only through a release or --chart.
// A directory that cannot be read is a problem; the rest of the tree is still read.
func walk(fsys *inputfs.FS, root string, opts Options) ([]*cluster.Model, []string) {
	var parts []*cluster.Model
	var files []string
	tfRoots := map[string]bool{}
	fsys.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			parts = append(parts, &cluster.Model{Problems: []cluster.Problem{{
				Origin:     cluster.Origin{File: path},
				Message:    "directory cannot be read: " + readReason(err) + "; what it holds is not analysed",
				Unresolved: true,
			}}})
			return nil
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "vendor") {
				return filepath.SkipDir
			}
			if fsys.IsRegular(filepath.Join(path, "Chart.yaml")) {
				return filepath.SkipDir
			}
			if hasTF(fsys, path) && !underRoot(path, tfRoots) {
				tfRoots[path] = true
				part, err := loadTerraform(fsys, path, opts)
				if err != nil {
					part = &cluster.Model{Problems: []cluster.Problem{{Origin: cluster.Origin{File: path}, Message: err.Error(), Unresolved: true}}}
				}
				parts = append(parts, part)
			}
			return nil
		}
		if isManifestName(d.Name()) {
			files = append(files, path)
		}
		return nil
	})
	return parts, files
}

// readReason is why a read failed, without the path (the finding names it).
func readReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func underRoot(path string, roots map[string]bool) bool {
	for r := range roots {
		if rel, err := filepath.Rel(r, path); err == nil && !strings.HasPrefix(rel, "..") {
			return true
		}
	}
	return false
}

func hasTF(fsys *inputfs.FS, dir string) bool {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.IsDir() && (strings.HasSuffix(e.Name(), ".tf") || strings.HasSuffix(e.Name(), ".tf.json")) {
			return true
		}
	}
	return false
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
func readFiles(fsys *inputfs.FS, files []string, named map[string]bool) []*cluster.Model {
	out := make([]*cluster.Model, len(files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, f := range files {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int, f string) {
			defer wg.Done()
			defer func() { <-sem }()
			out[i] = readFile(fsys, f, named[f])
		}(i, f)
	}
	wg.Wait()
	return out
}

func readFile(fsys *inputfs.FS, file string, explicit bool) *cluster.Model {
	limit := inputfs.MaxManifest
	if lower := strings.ToLower(file); strings.HasSuffix(lower, ".json") || strings.HasSuffix(lower, ".gz") {
		limit = inputfs.MaxSnapshot // snapshots of large clusters are large
	}
	data, err := fsys.ReadFile(file, limit)
	if err != nil {
		// A link out of the inputs is valid for kubectl, only not read here; a
		// file too large or not a file at all is not a manifest.
		return &cluster.Model{Problems: []cluster.Problem{{Origin: cluster.Origin{File: file}, Message: "cannot read file: " + readReason(err), Unresolved: inputfs.Unseen(err)}}}
	}
	if m, ok := readSpecial(file, data); ok {
		return m
	}
	if int64(len(data)) > inputfs.MaxManifest {
		return &cluster.Model{Problems: []cluster.Problem{{Origin: cluster.Origin{File: file}, Message: "cannot read file: " + (&inputfs.TooLargeError{Path: file, Limit: inputfs.MaxManifest}).Error()}}}
	}
	objs, probs := manifest.DecodeFile(file, data)
	if !explicit {
		probs = dropNonManifest(probs)
	}
	ws, wprobs := manifest.DecodeFileWorkloads(objs)
	return &cluster.Model{Objects: objs, Workloads: ws, Problems: append(probs, wprobs...)}
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

// isGzip reports gzip magic bytes.
func isGzip(data []byte) bool { return bytes.HasPrefix(data, []byte{0x1f, 0x8b}) }
