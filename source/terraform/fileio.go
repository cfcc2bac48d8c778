package terraform

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/inputfs"
)

// maxFilesetFiles bounds the files fileset and kubectl_path_documents look at.
const maxFilesetFiles = 10_000

func pathArg(l *loader, e *hclsyntax.FunctionCallExpr, args []cty.Value) (string, *evalError) {
	s, err := stringArgs(e, args[:1], 1)
	if err != nil {
		return "", err
	}
	if s == nil || strings.Contains(s[0], "${") {
		return "", nil
	}
	return l.resolvePath(s[0]), nil
}

func fnFile(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 1, 1); err != nil {
		return cty.NilVal, err
	}
	p, err := pathArg(l, e, args)
	if err != nil || p == "" {
		return l.unknownAt(e), err
	}
	src, rerr := l.readFile(p)
	if rerr != nil {
		return l.unreadable(e, rerr), nil
	}
	if !utf8.Valid(src) {
		return cty.NilVal, errAt(e.Range(), "file: %s is not UTF-8 text", p)
	}
	s := string(src)
	l.registerText(s, p, 1)
	return cty.StringVal(s), nil
}

func fnFileExists(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 1, 1); err != nil {
		return cty.NilVal, err
	}
	p, err := pathArg(l, e, args)
	if err != nil || p == "" {
		return l.unknownAt(e), err
	}
	st, serr := l.opts.FS.Stat(p)
	var oe *inputfs.OutsideError
	if errors.As(serr, &oe) {
		return l.unreadable(e, serr), nil
	}
	return cty.BoolVal(serr == nil && st.Mode().IsRegular()), nil
}

func fnFileBase64(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 1, 1); err != nil {
		return cty.NilVal, err
	}
	p, err := pathArg(l, e, args)
	if err != nil || p == "" {
		return l.unknownAt(e), err
	}
	src, rerr := l.readFile(p)
	if rerr != nil {
		return l.unreadable(e, rerr), nil
	}
	return cty.StringVal(base64.StdEncoding.EncodeToString(src)), nil
}

func fnAbspath(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	s, err := stringArgs(e, args, 1)
	if err != nil || s == nil {
		return l.unknownAt(e), err
	}
	if filepath.IsAbs(s[0]) {
		return cty.StringVal(filepath.Clean(s[0])), nil
	}
	return cty.StringVal(filepath.Join(l.cwd, s[0])), nil
}

// fnFileset is Terraform's fileset(path, pattern): files under path matching a glob
// with ** for any number of directories, relative to path, sorted.
func fnFileset(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	s, err := stringArgs(e, args, 2)
	if err != nil || s == nil || strings.Contains(s[0]+s[1], "${") {
		return l.unknownAt(e), err
	}
	base := l.resolvePath(s[0])
	matches, ferr := l.globFiles(base, s[1])
	if ferr != nil {
		var oe *inputfs.OutsideError
		if errors.As(ferr, &oe) {
			return l.unreadable(e, ferr), nil
		}
		return cty.NilVal, errAt(e.Range(), "fileset: %s", ferr)
	}
	if len(matches) == 0 {
		return cty.SetValEmpty(cty.String), nil
	}
	vals := make([]cty.Value, len(matches))
	for i, m := range matches {
		vals[i] = cty.StringVal(m)
	}
	return cty.SetVal(vals), nil
}

// globFiles lists the files under base whose path relative to base matches
// pattern, as fileset does; only files under the inputs are seen.
func (l *loader) globFiles(base, pattern string) ([]string, error) {
	pattern = path.Clean(strings.ReplaceAll(pattern, "\\", "/"))
	if _, err := path.Match(strings.ReplaceAll(pattern, "**", "*"), ""); err != nil {
		return nil, err
	}
	if !l.opts.FS.Contains(base) {
		return nil, &inputfs.OutsideError{Path: base}
	}
	var out []string
	seen := 0
	err := l.opts.FS.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == base && d == nil {
				var oe *inputfs.OutsideError
				if errors.As(err, &oe) || errors.Is(err, fs.ErrNotExist) {
					// fileset of a directory that is not there is empty.
					return filepath.SkipAll
				}
				return err
			}
			return nil
		}
		seen++
		if seen > maxFilesetFiles {
			return fs.SkipAll
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, rerr := filepath.Rel(base, p)
		if rerr != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if globMatch(strings.Split(pattern, "/"), strings.Split(rel, "/")) {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}

// glob lists the files matching a filepath.Match pattern, as filepath.Glob does,
// reading only under the inputs.
func (l *loader) glob(pattern string) ([]string, error) {
	if _, err := filepath.Match(pattern, ""); err != nil {
		return nil, err
	}
	dir := pattern
	for strings.ContainsAny(dir, `*?[\`) {
		dir = filepath.Dir(dir)
	}
	if !l.opts.FS.Contains(dir) {
		return nil, &inputfs.OutsideError{Path: dir}
	}
	depth := strings.Count(pattern, string(filepath.Separator)) - strings.Count(dir, string(filepath.Separator))
	var out []string
	err := l.opts.FS.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && d == nil {
				return filepath.SkipAll
			}
			return nil
		}
		if len(out) > maxFilesetFiles {
			return fmt.Errorf("more than %d files match", maxFilesetFiles)
		}
		if d.IsDir() && strings.Count(p, string(filepath.Separator))-strings.Count(dir, string(filepath.Separator)) >= depth && p != dir {
			return filepath.SkipDir
		}
		if ok, _ := filepath.Match(pattern, p); ok && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

func globMatch(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if globMatch(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// unreadable is the value of a file function call whose file cannot be read: unknown,
// as Terraform's own value could be anything, with a finding that names the call and
// the path it tried (never what is there).
//
// Files that do not exist are said once per directory that reads them: a
// repository often keeps only part of what a configuration reads (generated
// files, files of another repository), and each says the same.
func (l *loader) unreadable(e *hclsyntax.FunctionCallExpr, err error) cty.Value {
	if errors.Is(err, fs.ErrNotExist) {
		org := originOf(e.Range())
		if l.missingFiles == nil {
			l.missingFiles = map[string]*undeclaredUse{}
		}
		dir := filepath.Dir(org.File)
		u := l.missingFiles[dir]
		if u == nil {
			u = &undeclaredUse{names: map[string]bool{}, first: org}
			l.missingFiles[dir] = u
		}
		u.names[l.text(e.Range())+" ("+err.Error()+")"] = true
		if org.File < u.first.File || org.File == u.first.File && org.Line < u.first.Line {
			u.first = org
		}
		return l.unknownAt(e)
	}
	l.unresolved(originOf(e.Range()), fmt.Sprintf("%s cannot be read: %s; its value is treated as unknown", l.text(e.Range()), err))
	return l.unknownAt(e)
}

// fnTemplateFile renders a template file with the given variables; it sees nothing
// else, as in Terraform.
func fnTemplateFile(l *loader, e *hclsyntax.FunctionCallExpr, c *evalCtx, args []cty.Value) (cty.Value, *evalError) {
	if err := argCount(e, args, 2, 2); err != nil {
		return cty.NilVal, err
	}
	p, err := pathArg(l, e, args)
	if err != nil || p == "" {
		return l.unknownAt(e), err
	}
	tmpl, terr := l.template(p)
	if terr != nil {
		if terr.read != nil {
			return l.unreadable(e, terr.read), nil
		}
		return cty.NilVal, terr
	}
	vars := unmark(args[1])
	tc := &evalCtx{m: c.m, templateOnly: true, depth: c.depth}
	if !vars.IsNull() {
		if !isMapLike(vars.Type()) {
			return cty.NilVal, errAt(e.Range(), "templatefile: variables must be a map")
		}
		for it := vars.ElementIterator(); it.Next(); {
			k, v := it.Element()
			tc = tc.bind(k.AsString(), v)
		}
	}
	out, verr := l.eval(tmpl, tc)
	if verr != nil {
		return cty.NilVal, verr
	}
	if out.IsKnown() && !unmark(out).IsNull() && unmark(out).Type() == cty.String {
		l.registerText(unmark(out).AsString(), p, 1)
	}
	return out, nil
}

func (l *loader) template(p string) (hcl.Expression, *evalError) {
	if t, ok := l.templates[p]; ok {
		if t == nil {
			return nil, errAt(hcl.Range{Filename: p}, "template %s does not parse", p)
		}
		return t, nil
	}
	src, err := l.readFile(p)
	if err != nil {
		return nil, &evalError{rng: hcl.Range{Filename: p}, msg: "templatefile: " + err.Error(), read: err}
	}
	if line, deep := tooDeep(src); deep {
		l.problem(cluster.Origin{File: p, Line: line}, fmt.Sprintf("brackets nested deeper than %d levels; the template is not read", maxNesting))
		l.templates[p] = nil
		return nil, errAt(hcl.Range{Filename: p}, "template %s is nested too deeply", p)
	}
	expr, diags := hclsyntax.ParseTemplate(src, p, hcl.InitialPos)
	if diags.HasErrors() {
		l.diagProblems(p, diags)
		l.templates[p] = nil
		return nil, errAt(hcl.Range{Filename: p}, "template %s does not parse", p)
	}
	l.templates[p] = expr
	return expr, nil
}
