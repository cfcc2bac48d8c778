package terraform

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/inputfs"
)

// modConfig is one module directory: its blocks by kind, from every .tf file in it.
type modConfig struct {
	dir       string
	files     []string
	variables map[string]*hclsyntax.Block
	locals    map[string]*hclsyntax.Attribute
	outputs   map[string]*hclsyntax.Block
	resources []*hclsyntax.Block // managed resources and data sources, in file order
	modules   []*hclsyntax.Block
	providers []*hclsyntax.Block
	// hasConfig reports whether any .tf file was found.
	hasConfig bool
	// deployable reports whether the directory configures the AWS provider or a
	// backend, as a root does and a reusable module does not (some modules still
	// configure the kubernetes and helm providers from their inputs).
	deployable bool
}

// readModule parses the .tf files of dir. Files that do not parse become problems and
// are left out; the others are still read.
func (l *loader) readModule(dir string) (*modConfig, error) {
	if cfg, ok := l.configs[dir]; ok {
		return cfg, nil
	}
	entries, err := l.opts.FS.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read terraform directory %s: %w", dir, err)
	}
	cfg := &modConfig{
		dir:       dir,
		variables: map[string]*hclsyntax.Block{},
		locals:    map[string]*hclsyntax.Attribute{},
		outputs:   map[string]*hclsyntax.Block{},
	}
	l.configs[dir] = cfg
	var names []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		if !strings.HasSuffix(name, ".tf") && !strings.HasSuffix(name, ".tf.json") {
			continue
		}
		base := strings.TrimSuffix(strings.TrimSuffix(name, ".json"), ".tf")
		if base == "override" || strings.HasSuffix(base, "_override") {
			l.unresolved(cluster.Origin{File: filepath.Join(dir, name)}, "eksdoctor does not merge override files; what "+name+" changes is not analysed")
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	seen := map[string]hcl.Range{}
	for _, name := range names {
		file := filepath.Join(dir, name)
		src, err := l.readFile(file)
		if err != nil {
			l.readProblem(file, err)
			continue
		}
		cfg.hasConfig = true
		if strings.HasSuffix(name, ".json") {
			native, err := jsonToNative(src)
			if err != nil {
				line := 1
				if n, _ := fmt.Sscanf(err.Error(), "line %d:", &line); n == 0 {
					line = 1
				}
				l.problem(cluster.Origin{File: file, Line: line}, "Terraform JSON syntax error: "+err.Error())
				continue
			}
			// Expression sources are read from the native text the ranges refer to.
			src = native
			l.files[file] = native
		}
		if line, ok := tooDeep(src); ok {
			l.problem(cluster.Origin{File: file, Line: line}, fmt.Sprintf("brackets nested deeper than %d levels; the file is not read", maxNesting))
			continue
		}
		f, diags := hclsyntax.ParseConfig(src, file, hcl.InitialPos)
		if diags.HasErrors() {
			l.diagProblems(file, diags)
			continue
		}
		cfg.files = append(cfg.files, file)
		body, ok := f.Body.(*hclsyntax.Body)
		if !ok {
			continue
		}
		if !strings.HasSuffix(file, ".json") {
			l.suppressions = append(l.suppressions, ignoreComments(src, file, body)...)
		}
		cfg.add(l, body, seen)
	}
	return cfg, nil
}

func (cfg *modConfig) add(l *loader, body *hclsyntax.Body, seen map[string]hcl.Range) {
	dup := func(key string, rng hcl.Range) bool {
		if first, ok := seen[key]; ok {
			l.problem(originOf(rng), fmt.Sprintf("duplicate %s; the first definition at %s:%d is used", key, first.Filename, first.Start.Line))
			return true
		}
		seen[key] = rng
		return false
	}
	for _, b := range body.Blocks {
		switch b.Type {
		case "variable":
			if len(b.Labels) == 1 && !dup("variable "+b.Labels[0], b.DefRange()) {
				cfg.variables[b.Labels[0]] = b
			}
		case "locals":
			for _, name := range sortedKeys(b.Body.Attributes) {
				a := b.Body.Attributes[name]
				if !dup("local value "+name, a.SrcRange) {
					cfg.locals[name] = a
				}
			}
		case "output":
			if len(b.Labels) == 1 && !dup("output "+b.Labels[0], b.DefRange()) {
				cfg.outputs[b.Labels[0]] = b
			}
		case "resource":
			if len(b.Labels) == 2 && !dup("resource "+b.Labels[0]+"."+b.Labels[1], b.DefRange()) {
				cfg.resources = append(cfg.resources, b)
			}
		case "data":
			if len(b.Labels) == 2 && !dup("data source "+b.Labels[0]+"."+b.Labels[1], b.DefRange()) {
				cfg.resources = append(cfg.resources, b)
			}
		case "module":
			if len(b.Labels) == 1 && !dup("module "+b.Labels[0], b.DefRange()) {
				cfg.modules = append(cfg.modules, b)
			}
		case "provider":
			cfg.providers = append(cfg.providers, b)
			if len(b.Labels) == 1 && (b.Labels[0] == "aws" || strings.HasPrefix(b.Labels[0], "terraform-")) {
				cfg.deployable = true
			}
		case "terraform":
			for _, nb := range b.Body.Blocks {
				if nb.Type == "backend" || nb.Type == "cloud" {
					cfg.deployable = true
				}
			}
		}
	}
}

// maxNesting bounds how deeply brackets may nest in a file the loader parses: the HCL
// parser recurses on them, and no real configuration comes close.
const maxNesting = 512

// tooDeep reports whether brackets nest deeper than maxNesting, with the line where.
func tooDeep(src []byte) (int, bool) {
	depth, line := 0, 1
	for _, c := range src {
		switch c {
		case '\n':
			line++
		case '(', '[', '{':
			depth++
			if depth > maxNesting {
				return line, true
			}
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return 0, false
}

// readFile reads a regular file of bounded size and keeps its text for expression
// sources.
func (l *loader) readFile(file string) ([]byte, error) {
	if src, ok := l.files[file]; ok {
		return src, nil
	}
	src, err := l.opts.FS.ReadFile(file, inputfs.MaxConfig)
	if err != nil {
		return nil, readError(file, err)
	}
	l.files[file] = src
	return src, nil
}

// missingError is a file that does not exist.
type missingError string

func (e missingError) Error() string        { return "file " + string(e) + " does not exist" }
func (e missingError) Is(target error) bool { return target == fs.ErrNotExist }

// readError words a failed read for a problem or note: what was tried and why it
// failed, never what the file holds.
func readError(file string, err error) error {
	var tl *inputfs.TooLargeError
	switch {
	case inputfs.Unseen(err), errors.As(err, &tl):
		return err
	case errors.Is(err, fs.ErrNotExist):
		return missingError(file)
	case errors.Is(err, inputfs.ErrNotRegular):
		return fmt.Errorf("%s is not a regular file", file)
	}
	return fmt.Errorf("read %s: %w", file, errors.Unwrap(err))
}

// diagProblems turns HCL diagnostics into problems naming file and line.
func (l *loader) diagProblems(file string, diags hcl.Diagnostics) {
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		org := cluster.Origin{File: file}
		if d.Subject != nil {
			org = originOf(*d.Subject)
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		l.problem(org, "Terraform syntax error: "+msg)
	}
}

func originOf(rng hcl.Range) cluster.Origin {
	return cluster.Origin{File: rng.Filename, Line: rng.Start.Line}
}

// blockAttr returns a block's attribute expression, nil when absent.
func blockAttr(b *hclsyntax.Block, name string) hcl.Expression {
	if b == nil {
		return nil
	}
	if a, ok := b.Body.Attributes[name]; ok {
		return a.Expr
	}
	return nil
}
