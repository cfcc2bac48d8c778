// Package fixapply applies the edits of eksdoctor's fixes to files, the way a user
// pasting them would. Tests use it to prove that every proposed fix makes its
// finding disappear without causing a new one.
package fixapply

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/inputfs"
	"github.com/eksdoctor/eksdoctor/internal/outputfs"
	"github.com/eksdoctor/eksdoctor/write"
)

// Apply applies edits to files; relative edit paths are resolved against dir, and
// edits to one file are applied bottom-up so earlier line numbers stay valid.
func Apply(dir string, edits []cluster.Edit) error {
	cs, err := Contents(dir, edits)
	if err != nil {
		return err
	}
	for _, c := range cs {
		path := c.File
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, c.File)
		}
		if err := outputfs.WriteFile(path, c.After, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", c.File, err)
		}
	}
	return nil
}

// perFile groups the edits that change files (not shell ones) by file, in
// the order files first appear.
func perFile(edits []cluster.Edit) (order []string, byFile map[string][]cluster.Edit) {
	byFile = map[string][]cluster.Edit{}
	for _, e := range edits {
		if e.Format == cluster.FormatShell {
			continue
		}
		if _, ok := byFile[e.File]; !ok {
			order = append(order, e.File)
		}
		byFile[e.File] = append(byFile[e.File], e)
	}
	return order, byFile
}

// applyAll applies the edits of one file to its content, bottom-up: an edit
// never moves the lines of the edits above it.
func applyAll(content []byte, f string, es []cluster.Edit) ([]byte, error) {
	es = append([]cluster.Edit(nil), es...)
	sort.SliceStable(es, func(i, j int) bool { return es[i].Line > es[j].Line })
	for _, e := range es {
		var err error
		if content, err = write.Apply(content, e); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", f, e.Line, err)
		}
	}
	return content, nil
}

// Change is what an edit does to a file's lines: lines Start..End (1-based,
// included) become Text (whole lines); End = Start-1 inserts before Start.
type Change struct {
	File       string
	Start, End int
	Text       string
}

// Content is a file's content before and after edits.
type Content struct {
	File          string
	Before, After []byte
}

// Contents works out, without writing anything, each file's content after the
// edits, in the order files first appear. Shell edits change no file.
// Relative paths are resolved against dir.
func Contents(dir string, edits []cluster.Edit) ([]Content, error) {
	var out []Content
	order, byFile := perFile(edits)
	for _, f := range order {
		path := f
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, f)
		}
		before, err := inputfs.ReadOne(path, inputfs.MaxManifest)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		after, err := applyAll(before, f, byFile[f])
		if err != nil {
			return nil, err
		}
		out = append(out, Content{File: f, Before: before, After: after})
	}
	return out, nil
}

// Changes works out, without writing anything, what applying edits would do
// to each file, as the smallest run of changed lines per file.
func Changes(dir string, edits []cluster.Edit) ([]Change, error) {
	cs, err := Contents(dir, edits)
	if err != nil {
		return nil, err
	}
	var out []Change
	for _, c := range cs {
		if ch, ok := lineChange(c.Before, c.After); ok {
			ch.File = c.File
			out = append(out, ch)
		}
	}
	return out, nil
}

// lineChange is the run of lines that differs between two contents.
func lineChange(before, after []byte) (Change, bool) {
	a, b := strings.SplitAfter(string(before), "\n"), strings.SplitAfter(string(after), "\n")
	if a[len(a)-1] == "" {
		a = a[:len(a)-1]
	}
	if b[len(b)-1] == "" {
		b = b[:len(b)-1]
	}
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	if p == len(a) && p == len(b) {
		return Change{}, false
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return Change{Start: p + 1, End: len(a) - s, Text: strings.Join(b[p:len(b)-s], "")}, true
}
