// Package fixapply applies the edits of eksdoctor's fixes to files, the way a user
// pasting them would. Tests use it to prove that every proposed fix makes its
// finding disappear without causing a new one.
package fixapply

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/manifest"
	"github.com/eksdoctor/eksdoctor/source/terraform"
)

// appliers apply each edit format to a file's content; each format's is in
// the source package that reads and writes that format.
var appliers = map[string]func(content []byte, e cluster.Edit) ([]byte, error){
	cluster.FormatYAML:   manifest.ApplyYAML,
	cluster.FormatHCL:    terraform.ApplyHCL,
	cluster.FormatValues: terraform.ApplyHelmValues,
}

// Apply applies edits to files; relative edit paths are resolved against dir, and
// edits to one file are applied bottom-up so earlier line numbers stay valid.
func Apply(dir string, edits []cluster.Edit) error {
	byFile := map[string][]cluster.Edit{}
	var order []string
	for _, e := range edits {
		if e.Format == cluster.FormatShell {
			continue
		}
		if _, ok := byFile[e.File]; !ok {
			order = append(order, e.File)
		}
		byFile[e.File] = append(byFile[e.File], e)
	}
	for _, f := range order {
		path := f
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, f)
		}
		content, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read %s: %w", f, err)
		}
		es := byFile[f]
		// Bottom-up: an edit never moves the lines of the edits above it.
		for i := 0; i < len(es); i++ {
			for j := i + 1; j < len(es); j++ {
				if es[j].Line > es[i].Line {
					es[i], es[j] = es[j], es[i]
				}
			}
		}
		for _, e := range es {
			a, ok := appliers[e.Format]
			if !ok {
				return fmt.Errorf("%s:%d: no applier for format %q", f, e.Line, e.Format)
			}
			content, err = a(content, e)
			if err != nil {
				return fmt.Errorf("%s:%d: %w", f, e.Line, err)
			}
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", f, err)
		}
	}
	return nil
}
