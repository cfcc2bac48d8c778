package helm

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/ignore"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/inputfs"
)

// Limits on what a local chart may hold; Helm's own limit on one file is 5 MiB.
const (
	maxChartFile  = 5 << 20
	maxChartTotal = 32 << 20
	maxChartFiles = 5000
)

// ReadChart reads the files of a local chart, a directory or a .tgz, through fsys:
// what "helm template" would load, with .helmignore applied, but never a file
// outside the inputs. Helm's own loader follows every symbolic link; here a link
// is read only when it stays inside the inputs, so .Files.Get cannot print a file
// of the machine running the analysis. A link that leads out is left out of the
// chart and named in left; the chart renders without it.
func ReadChart(fsys *inputfs.FS, path string) (files []cluster.File, left []string, err error) {
	if isArchive(path) {
		files, err = readArchive(fsys, path)
		return files, nil, err
	}
	r := &chartReader{fsys: fsys}
	err = r.dir(path)
	return r.files, r.left, err
}

type chartReader struct {
	fsys  *inputfs.FS
	files []cluster.File
	left  []string
	total int
}

func (r *chartReader) dir(path string) error {
	fsys := r.fsys
	if !fsys.IsDir(path) {
		if _, err := fsys.Stat(path); err != nil {
			return err
		}
		return fmt.Errorf("%s is neither a chart directory nor a .tgz", path)
	}
	rules := ignore.Empty()
	if data, err := fsys.ReadFile(filepath.Join(path, ignore.HelmIgnore), maxChartFile); err == nil {
		parsed, err := ignore.Parse(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("%s: %w", ignore.HelmIgnore, err)
		}
		rules = parsed
	}
	rules.AddDefaults()
	return fsys.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, rerr := filepath.Rel(path, p)
		if rerr != nil || rel == "." {
			return nil
		}
		return r.entry(p, filepath.ToSlash(rel), d.Type()&fs.ModeSymlink != 0, rules)
	})
}

// entry reads one entry of the chart, named n inside it.
func (r *chartReader) entry(p, n string, link bool, rules *ignore.Rules) error {
	st, err := r.fsys.Stat(p)
	if err != nil {
		var oe *inputfs.OutsideError
		if errors.As(err, &oe) {
			r.left = append(r.left, n)
		}
		return nil // a dangling link holds nothing
	}
	if rules.Ignore(n, st) {
		if st.IsDir() && !link {
			return filepath.SkipDir
		}
		return nil
	}
	if !st.IsDir() {
		return r.add(p, n)
	}
	if !link {
		return nil // the walk goes on into it
	}
	// A linked directory inside the inputs: read it as Helm would.
	entries, err := r.fsys.ReadDir(p)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := r.entry(filepath.Join(p, e.Name()), n+"/"+e.Name(), true, rules); err != nil && !errors.Is(err, filepath.SkipDir) {
			return err
		}
	}
	return nil
}

func (r *chartReader) add(p, name string) error {
	if len(r.files) >= maxChartFiles {
		return fmt.Errorf("the chart has more than %d files", maxChartFiles)
	}
	data, err := r.fsys.ReadFile(p, maxChartFile)
	if err != nil {
		return fmt.Errorf("chart file %s: %w", name, err)
	}
	r.total += len(data)
	if r.total > maxChartTotal {
		return fmt.Errorf("the chart's files add up to more than %s", inputfs.Size(maxChartTotal))
	}
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	r.files = append(r.files, cluster.File{Name: name, Data: data})
	return nil
}

// readArchive reads a chart archive, refusing one that expands beyond the limits
// before Helm unpacks it.
func readArchive(fsys *inputfs.FS, path string) ([]cluster.File, error) {
	data, err := fsys.ReadFile(path, maxChartTotal)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s is not a gzip archive: %w", path, err)
	}
	n, err := io.Copy(io.Discard, io.LimitReader(zr, maxChartTotal+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if n > maxChartTotal {
		return nil, fmt.Errorf("%s expands to more than %s", path, inputfs.Size(maxChartTotal))
	}
	bfs, err := loader.LoadArchiveFiles(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make([]cluster.File, 0, len(bfs))
	for _, f := range bfs {
		if strings.HasPrefix(f.Name, "/") || strings.Contains(f.Name, "..") {
			continue
		}
		out = append(out, cluster.File{Name: f.Name, Data: f.Data})
	}
	return out, nil
}
