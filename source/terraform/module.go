package terraform

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/inputfs"
)

// Local modules are loaded recursively up to this depth, and a counted module or
// resource is expanded into at most maxInstances instances.
const (
	maxModuleDepth     = 8
	maxInstances       = 256
	maxModuleInstances = 512
)

// loader holds the state of one Load: files read, evaluation budget, and what it found
// that the user should know about.
type loader struct {
	root string // the directory as given
	cwd  string // its absolute path: path.cwd
	opts Options

	files     map[string][]byte
	configs   map[string]*modConfig
	texts     map[string]cluster.Origin
	templates map[string]hcl.Expression

	steps     int
	budgetHit bool
	scope     string
	forcing   int // lazy values being evaluated, nested

	problems []cluster.Problem
	notes    []cluster.Note
	// suppressions are the ignore comments of the files read.
	suppressions []cluster.Suppression
	seen         map[string]bool
	// serviceAccounts are the IRSA service accounts the karpenter sub-module trusts.
	serviceAccounts []cluster.ServiceAccountIdentity

	modules []*modInst
	// unseen is capacity declared but not known before apply.
	unseen []cluster.UnseenCapacity
	// undeclared are the names used but not declared, by module directory;
	// missingFiles the file function calls whose file does not exist.
	undeclared   map[string]*undeclaredUse
	missingFiles map[string]*undeclaredUse
}

// undeclaredUse is what a module directory refers to without declaring it.
type undeclaredUse struct {
	names   map[string]bool
	first   cluster.Origin
	firstOf map[string]cluster.Origin // by kind of name: var, local, module
}

func newLoader(dir string, opts Options) *loader {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	if opts.FS == nil {
		opts.FS = inputfs.New(append([]string{dir}, opts.VarFiles...)...)
	}
	return &loader{
		root:      dir,
		cwd:       abs,
		opts:      opts,
		files:     map[string][]byte{},
		configs:   map[string]*modConfig{},
		texts:     map[string]cluster.Origin{},
		templates: map[string]hcl.Expression{},
		seen:      map[string]bool{},
	}
}

func (l *loader) problem(org cluster.Origin, msg string) {
	key := "p" + org.String() + msg
	if l.seen[key] {
		return
	}
	l.seen[key] = true
	l.problems = append(l.problems, cluster.Problem{Origin: org, Message: msg})
}

// readProblem records a file that could not be read: a problem, unless the file is
// only outside the inputs (Terraform would read it).
func (l *loader) readProblem(file string, err error) {
	if inputfs.Unseen(err) {
		l.unresolved(cluster.Origin{File: file}, err.Error())
		return
	}
	l.problem(cluster.Origin{File: file}, err.Error())
}

// unseenCapacity records capacity the configuration declares but that cannot be
// seen before apply: placement on it is unknown.
func (l *loader) unseenCapacity(org cluster.Origin, what, why string) {
	key := "c" + what + why
	if l.seen[key] {
		return
	}
	l.seen[key] = true
	l.unseen = append(l.unseen, cluster.UnseenCapacity{What: what, Why: why, Origin: org})
}

// unresolved records input that Terraform would accept but that the loader could not
// read or evaluate; whatever depends on it is unknown.
func (l *loader) unresolved(org cluster.Origin, msg string) {
	key := "u" + org.String() + msg
	if l.seen[key] {
		return
	}
	l.seen[key] = true
	l.problems = append(l.problems, cluster.Problem{Origin: org, Message: msg, Unresolved: true})
}

func (l *loader) note(org cluster.Origin, subject, msg string) {
	key := "n" + org.String() + subject + msg
	if l.seen[key] {
		return
	}
	l.seen[key] = true
	l.notes = append(l.notes, cluster.Note{Origin: org, Subject: subject, Message: msg})
}

func (l *loader) budgetExceeded(rng hcl.Range) {
	if l.budgetHit {
		return
	}
	l.budgetHit = true
	l.problem(originOf(rng), fmt.Sprintf("the configuration needs more than %d evaluation steps; the rest is treated as unknown", maxSteps))
}

// registerText remembers where a string read from a file or written as a heredoc
// starts, so that objects decoded from it later point at the right file and line.
func (l *loader) registerText(s, file string, line int) {
	if len(s) < 16 || !strings.Contains(s, "\n") {
		return
	}
	if _, ok := l.texts[s]; !ok {
		l.texts[s] = cluster.Origin{File: file, Line: line}
	}
}

// resolvePath resolves a path the way Terraform does: relative to the directory it
// runs in, the root module.
func (l *loader) resolvePath(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(l.root, p)
}

// lazy is a value computed on first use: a local, an output, a module input. Values
// that refer to themselves are reported and become unknown.
type lazy struct {
	state int // 0 not evaluated, 1 being evaluated, 2 done
	val   cty.Value
	eval  func() cty.Value
	what  string
	rng   hcl.Range
}

func (l *loader) force(z *lazy) cty.Value {
	switch z.state {
	case 2:
		return z.val
	case 1:
		l.problem(originOf(z.rng), z.what+" refers to itself")
		return unknownOf(z.what)
	}
	// Each value referring to the next one nests evaluation; a chain this long is
	// not a real configuration.
	if l.forcing >= maxDepth {
		l.problem(originOf(z.rng), fmt.Sprintf("values refer to each other more than %d levels deep; %s is treated as unknown", maxDepth, z.what))
		return unknownOf(z.what)
	}
	l.forcing++
	z.state = 1
	v := z.eval()
	z.val, z.state = v, 2
	l.forcing--
	return v
}

// modInst is one instance of a module: the root, or a local module called from it.
type modInst struct {
	l   *loader
	cfg *modConfig
	// prefix is the instance address prefix ("", `module.a.`, `module.a["x"].`),
	// cfgPrefix the configuration address prefix without instance keys.
	prefix, cfgPrefix string
	pathModule        string
	depth             int
	vars              map[string]*lazy
	locals            map[string]*lazy
	outputs           map[string]*lazy
	data              map[string]*lazy
	calls             map[string]*moduleCall
	callList          []*moduleCall
	// dependsOn is inherited from the module calls above: Terraform makes every
	// resource of a module depend on what the module call depends on.
	dependsOn []string
	// inputRefs lists, per variable, the caller addresses its input refers to;
	// inputOutputs the outputs of module calls among them it reads (refOutputs).
	inputRefs    map[string][]string
	inputOutputs map[string]refOutputs
	// conditional is the count or for_each expression, not known, that decides
	// whether this module instance exists (its call's or an enclosing one's).
	conditional string

	declaredCache map[string]bool
}

func (l *loader) newModInst(cfg *modConfig, prefix, cfgPrefix, pathModule string, depth int) *modInst {
	m := &modInst{
		l: l, cfg: cfg, prefix: prefix, cfgPrefix: cfgPrefix, pathModule: pathModule, depth: depth,
		vars: map[string]*lazy{}, locals: map[string]*lazy{}, outputs: map[string]*lazy{},
		data: map[string]*lazy{}, calls: map[string]*moduleCall{}, inputRefs: map[string][]string{},
		inputOutputs: map[string]refOutputs{},
	}
	for name, a := range cfg.locals {
		a := a
		m.locals[name] = &lazy{what: "local." + name, rng: a.SrcRange, eval: func() cty.Value {
			v, err := l.eval(a.Expr, &evalCtx{m: m})
			if err != nil {
				l.evalNote(err, "local."+name)
			}
			return v
		}}
	}
	for name, b := range cfg.outputs {
		b := b
		m.outputs[name] = &lazy{what: "output." + name, rng: b.DefRange(), eval: func() cty.Value {
			if sensitive, _ := literalBool(blockAttr(b, "sensitive")); sensitive {
				return sensitiveValue()
			}
			v, err := l.eval(blockAttr(b, "value"), &evalCtx{m: m})
			if err != nil {
				l.evalNote(err, "output."+name)
			}
			return v
		}}
	}
	for _, b := range cfg.resources {
		if b.Type != "data" {
			continue
		}
		b := b
		key := b.Labels[0] + "." + b.Labels[1]
		m.data[key] = &lazy{what: "data." + key, rng: b.DefRange(), eval: func() cty.Value { return m.evalData(b) }}
	}
	for _, b := range cfg.modules {
		call := m.newCall(b)
		m.calls[call.name] = call
		m.callList = append(m.callList, call)
	}
	m.adoptSiblings()
	l.modules = append(l.modules, m)
	return m
}

// evalNote records an evaluation error where it matters: the value is unknown from
// now on, and the finding says why.
//
// A name the module does not declare is said once per module directory, at its
// first use: Terraform rejects the directory as it is, but repositories often
// hold only part of what runs (Terragrunt, AWS Proton and service brokers write
// the declarations at run time), so it is what eksdoctor cannot see, not a
// broken input.
func (l *loader) evalNote(err *evalError, subject string) {
	if err == nil || l.budgetHit {
		return
	}
	if name := err.undeclared; name != "" {
		dir := filepath.Dir(err.rng.Filename)
		if l.undeclared == nil {
			l.undeclared = map[string]*undeclaredUse{}
		}
		u := l.undeclared[dir]
		org := originOf(err.rng)
		if u == nil {
			u = &undeclaredUse{names: map[string]bool{}, first: org}
			l.undeclared[dir] = u
		}
		u.names[name] = true
		if org.File < u.first.File || org.File == u.first.File && org.Line < u.first.Line {
			u.first = org
		}
		kind, _, _ := strings.Cut(name, ".")
		if u.firstOf == nil {
			u.firstOf = map[string]cluster.Origin{}
		}
		if f, ok := u.firstOf[kind]; !ok || org.File < f.File || org.File == f.File && org.Line < f.Line {
			u.firstOf[kind] = org
		}
		return
	}
	l.unresolved(originOf(err.rng), subject+" could not be evaluated ("+err.msg+"); it is treated as unknown")
}

// writtenAtRunTime names the tool that may write a directory's declarations
// when it runs, from the files it keeps beside it or above it: Terragrunt
// (terragrunt.hcl, whose generate blocks write .tf files) and AWS Proton (a
// template bundle's manifest.yaml, whose variables Proton declares). "" when
// there is none.
func (l *loader) writtenAtRunTime(dir string) string {
	if l.opts.FS == nil {
		return "a tool"
	}
	for d, i := dir, 0; i < 64; d, i = filepath.Dir(d), i+1 {
		for _, f := range []struct{ name, tool string }{
			{"terragrunt.hcl", "Terragrunt"}, {"terragrunt.hcl.json", "Terragrunt"}, {"root.hcl", "Terragrunt"},
			{"manifest.yaml", "AWS Proton"}, {".proton", "AWS Proton"},
		} {
			if _, err := l.opts.FS.Stat(filepath.Join(d, f.name)); err == nil {
				return f.tool
			}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return ""
}

func pronoun(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// reportUndeclared says, once per module directory, which names it uses without
// declaring them and which files it reads that do not exist.
func (l *loader) reportUndeclared() {
	list := func(u *undeclaredUse, sep string) (string, string) {
		names := sortedKeys(u.names)
		text := strings.Join(names, sep)
		if len(names) > 8 {
			text = strings.Join(names[:8], sep) + fmt.Sprintf("%sand %d more", sep, len(names)-8)
		}
		if len(names) > 1 {
			return text, "are"
		}
		return text, "is"
	}
	for _, dir := range sortedKeys(l.undeclared) {
		u := l.undeclared[dir]
		// A module call is what a configuration is built from, not something
		// a wrapper passes in: when nothing writes declarations beside the
		// directory, a module it uses but never calls is an error Terraform
		// gives before planning anything. Variables and locals stay unknown:
		// copies of a directory often leave out the file that declares them,
		// and CI or a wrapper often writes it.
		calls := &undeclaredUse{names: map[string]bool{}}
		for n := range u.names {
			if strings.HasPrefix(n, "module.") {
				calls.names[n] = true
			}
		}
		by := l.writtenAtRunTime(dir)
		if len(calls.names) > 0 && by == "" {
			names, verb := list(calls, ", ")
			l.problems = append(l.problems, cluster.Problem{Origin: u.firstOf["module"],
				Message: fmt.Sprintf("%s %s used in %s but never called there: Terraform rejects the configuration (Reference to undeclared module) before planning anything; every value that uses %s is treated as unknown", names, verb, dir, pronoun(len(calls.names)))})
			for n := range calls.names {
				delete(u.names, n)
			}
			if len(u.names) == 0 {
				continue
			}
			delete(u.firstOf, "module")
			u.first = cluster.Origin{}
			for _, k := range sortedKeys(u.firstOf) {
				if f := u.firstOf[k]; u.first.File == "" || f.File < u.first.File || f.File == u.first.File && f.Line < u.first.Line {
					u.first = f
				}
			}
		}
		names, verb := list(u, ", ")
		if by == "" {
			by = "Terraform rejects the directory unless something writes the declarations at run time, as Terragrunt or AWS Proton do"
		} else {
			by = by + " may write the declarations at run time"
		}
		l.unresolved(u.first, fmt.Sprintf("%s %s used in %s but not declared there (%s); every value that uses them is treated as unknown", names, verb, dir, by))
	}
	for _, dir := range sortedKeys(l.missingFiles) {
		calls, _ := list(l.missingFiles[dir], "; ")
		n := len(l.missingFiles[dir].names)
		what := "a file that does not exist"
		if n > 1 {
			what = fmt.Sprintf("%d files that do not exist", n)
		}
		l.unresolved(l.missingFiles[dir].first, fmt.Sprintf("%s reads %s (generated later, or kept elsewhere); each value is treated as unknown: %s", dir, what, calls))
	}
}

func (m *modInst) variable(name string) (cty.Value, bool) {
	z, ok := m.vars[name]
	if !ok {
		return cty.NilVal, false
	}
	return m.l.force(z), true
}

func (m *modInst) local(name string) (cty.Value, bool) {
	z, ok := m.locals[name]
	if !ok {
		return cty.NilVal, false
	}
	return m.l.force(z), true
}

// defineVariables sets up the module's input variables: value from the caller (or the
// tfvars for the root), else the default, else unknown; then the declared type.
func (m *modInst) defineVariables(input func(name string) (func() cty.Value, bool)) {
	l := m.l
	for name, b := range m.cfg.variables {
		name, b := name, b
		m.vars[name] = &lazy{what: "var." + name, rng: b.DefRange(), eval: func() cty.Value {
			if sensitive, _ := literalBool(blockAttr(b, "sensitive")); sensitive {
				return sensitiveValue()
			}
			var v cty.Value
			if get, ok := input(name); ok {
				v = get()
			} else if def := blockAttr(b, "default"); def != nil {
				dv, err := l.eval(def, &evalCtx{m: m})
				if err != nil {
					l.evalNote(err, "var."+name)
				}
				v = dv
			} else {
				return unknownIn(m.prefix+"var."+name, m.prefix)
			}
			if v.IsKnown() && unmark(v).IsNull() {
				if nb, ok := literalBool(blockAttr(b, "nullable")); ok && !nb {
					if def := blockAttr(b, "default"); def != nil {
						v, _ = l.eval(def, &evalCtx{m: m})
					}
				}
			}
			return l.applyType(b, v, "var."+name)
		}}
	}
}

func literalBool(expr hcl.Expression) (bool, bool) {
	if lit, ok := expr.(*hclsyntax.LiteralValueExpr); ok && lit.Val.Type() == cty.Bool {
		return lit.Val.True(), true
	}
	return false, false
}

// applyType converts a variable value to its declared type, applying optional
// attribute defaults, as Terraform does before the module sees it.
func (l *loader) applyType(b *hclsyntax.Block, v cty.Value, what string) (out cty.Value) {
	texpr := blockAttr(b, "type")
	if texpr == nil {
		return v
	}
	// Terraform still reads the legacy bare list and map as list(any) and
	// map(any).
	switch hcl.ExprAsKeyword(texpr) {
	case "list":
		return l.convertType(b, v, cty.List(cty.DynamicPseudoType), what)
	case "map":
		return l.convertType(b, v, cty.Map(cty.DynamicPseudoType), what)
	}
	ty, defaults, diags := typeexpr.TypeConstraintWithDefaults(texpr)
	if diags.HasErrors() {
		l.diagProblems(texpr.Range().Filename, diags)
		return v
	}
	if defaults != nil && v.IsKnown() {
		func() {
			defer func() { recover() }()
			v = defaults.Apply(v)
		}()
	}
	return l.convertType(b, v, ty, what)
}

// convertType converts a variable's value to its type; a value that does not
// convert is unknown, and said.
func (l *loader) convertType(b *hclsyntax.Block, v cty.Value, ty cty.Type, what string) (out cty.Value) {
	defer func() {
		if r := recover(); r != nil {
			out = v
		}
	}()
	if !v.IsKnown() {
		return v
	}
	c, err := convert.Convert(v, ty)
	if err != nil {
		l.unresolved(originOf(b.DefRange()), fmt.Sprintf("the value of %s does not match its declared type %s (%s); it is treated as unknown", what, typeexpr.TypeString(ty), err))
		return unknownOf(what)
	}
	return c
}

// rootVariables reads terraform.tfvars, *.auto.tfvars and the explicit tfvars files, in
// Terraform's order; later files win.
func (l *loader) rootVariables(m *modInst) {
	values := map[string]cty.Value{}
	var files []string
	for _, name := range []string{"terraform.tfvars", "terraform.tfvars.json"} {
		if l.opts.FS.IsRegular(filepath.Join(l.root, name)) {
			files = append(files, filepath.Join(l.root, name))
		}
	}
	if entries, err := l.opts.FS.ReadDir(l.root); err == nil {
		var auto []string
		for _, e := range entries {
			n := e.Name()
			if !e.IsDir() && (strings.HasSuffix(n, ".auto.tfvars") || strings.HasSuffix(n, ".auto.tfvars.json")) {
				auto = append(auto, n)
			}
		}
		sort.Strings(auto)
		for _, n := range auto {
			files = append(files, filepath.Join(l.root, n))
		}
	}
	files = append(files, l.opts.VarFiles...)
	for _, f := range files {
		for k, v := range l.readTFVars(f) {
			values[k] = v
		}
	}
	// A variable that a variables file of the repository sets, one Terraform
	// does not read by itself (env/prod.tfvars), takes whichever value the run
	// passes with -var-file: it is unknown here unless eksdoctor was given that
	// file. A directory that configures no provider and no backend and has no
	// variables file is a reusable module analysed on its own: its callers set
	// its variables, so none is known from its default.
	chosen := l.environmentVariables(files)
	library := !m.cfg.deployable && len(files) == 0 && len(chosen) == 0
	m.defineVariables(func(name string) (func() cty.Value, bool) {
		if v, ok := values[name]; ok {
			return func() cty.Value { return v }, true
		}
		if src, ok := chosen[name]; ok {
			l.note(cluster.Origin{File: src}, "var."+name, fmt.Sprintf("var.%s is set by %s, which Terraform reads only when a run passes it with -var-file: its value is unknown here (pass the file with --var-file to use it)", name, src))
			return func() cty.Value { return unknownOf("var." + name) }, true
		}
		if library {
			return func() cty.Value { return unknownOf("var." + name) }, true
		}
		return nil, false
	})
	for _, name := range sortedKeys(values) {
		if _, ok := m.cfg.variables[name]; !ok {
			l.note(cluster.Origin{File: l.root}, "var."+name, "a tfvars file sets "+name+", which no variable declares")
		}
	}
}

// environmentVariables finds the variables files under the root that Terraform does
// not read by itself (read tells which it did) and returns the variables they set,
// each with the file (or "one of N files") that sets it.
func (l *loader) environmentVariables(read []string) map[string]string {
	seen := map[string]bool{}
	for _, f := range read {
		seen[filepath.Clean(f)] = true
	}
	var envFiles []string
	l.opts.FS.WalkDir(l.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d == nil {
			return nil
		}
		if d.IsDir() {
			if p != l.root && (strings.HasPrefix(d.Name(), ".") || hasTFFiles(l.opts.FS, p)) {
				return filepath.SkipDir // another configuration's
			}
			return nil
		}
		n := d.Name()
		if (strings.HasSuffix(n, ".tfvars") || strings.HasSuffix(n, ".tfvars.json")) && !seen[filepath.Clean(p)] {
			envFiles = append(envFiles, p)
		}
		return nil
	})
	out := map[string]string{}
	for _, f := range envFiles {
		for name := range l.readTFVars(f) {
			if _, ok := out[name]; !ok {
				out[name] = f
			}
		}
	}
	return out
}

func hasTFFiles(fsys *inputfs.FS, dir string) bool {
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

func (l *loader) readTFVars(file string) map[string]cty.Value {
	out := map[string]cty.Value{}
	src, err := l.readFile(file)
	if err != nil {
		l.readProblem(file, err)
		return out
	}
	if strings.HasSuffix(file, ".json") {
		var raw map[string]any
		if err := json.Unmarshal(src, &raw); err != nil {
			l.problem(cluster.Origin{File: file, Line: 1}, "invalid JSON tfvars: "+err.Error())
			return out
		}
		for k, v := range raw {
			out[k] = fromGo(normalizeJSON(v))
		}
		return out
	}
	if line, deep := tooDeep(src); deep {
		l.problem(cluster.Origin{File: file, Line: line}, fmt.Sprintf("brackets nested deeper than %d levels; the file is not read", maxNesting))
		return out
	}
	f, diags := hclsyntax.ParseConfig(src, file, hcl.InitialPos)
	if diags.HasErrors() {
		l.diagProblems(file, diags)
		return out
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return out
	}
	for _, b := range body.Blocks {
		l.problem(originOf(b.DefRange()), "tfvars files hold only assignments; block "+b.Type+" is ignored")
	}
	for name, a := range body.Attributes {
		v, err := l.eval(a.Expr, &evalCtx{})
		if err != nil {
			l.problem(originOf(a.SrcRange), "invalid value for "+name+": "+err.msg)
			continue
		}
		out[name] = v
	}
	return out
}

// normalizeJSON turns encoding/json numbers (float64) that are whole into int64.
func normalizeJSON(v any) any {
	switch t := v.(type) {
	case float64:
		if t == float64(int64(t)) {
			return int64(t)
		}
		return t
	case []any:
		for i := range t {
			t[i] = normalizeJSON(t[i])
		}
	case map[string]any:
		for k := range t {
			t[k] = normalizeJSON(t[k])
		}
	}
	return v
}

// instKey is one instance of a counted block: its address suffix and count/each.
type instKey struct {
	suffix                  string
	count, eachKey, eachVal cty.Value
}

// expand evaluates a block's count or for_each. known is false when the instances
// cannot be known statically; the block is then treated as one instance whose
// count.index/each are unknown.
func (m *modInst) expand(b *hclsyntax.Block) (keys []instKey, countText string, known bool) {
	l := m.l
	c := &evalCtx{m: m}
	if expr := blockAttr(b, "count"); expr != nil {
		countText = l.text(expr.Range())
		v, err := l.eval(expr, c)
		if err != nil {
			l.evalNote(err, m.prefix+blockAddr(b)+".count")
		}
		n, ok := intArg(v)
		if !v.IsKnown() || !ok || n < 0 || n > maxInstances {
			return []instKey{{count: unknownIn("count.index", m.prefix)}}, countText, false
		}
		for i := 0; i < n; i++ {
			keys = append(keys, instKey{suffix: "[" + strconv.Itoa(i) + "]", count: cty.NumberIntVal(int64(i))})
		}
		return keys, countText, true
	}
	if expr := blockAttr(b, "for_each"); expr != nil {
		countText = l.text(expr.Range())
		unknown := []instKey{{eachKey: unknownIn("each.key", m.prefix), eachVal: unknownIn("each.value", m.prefix)}}
		v, err := l.eval(expr, c)
		if err != nil {
			l.evalNote(err, m.prefix+blockAddr(b)+".for_each")
		}
		if !v.IsKnown() {
			return unknown, countText, false
		}
		v = unmark(v)
		if v.IsNull() || v.LengthInt() > maxInstances {
			return unknown, countText, false
		}
		ty := v.Type()
		switch {
		case isMapLike(ty):
			for it := v.ElementIterator(); it.Next(); {
				k, e := it.Element()
				keys = append(keys, instKey{suffix: keyText(k), eachKey: k, eachVal: e})
			}
		case isSeq(ty):
			for it := v.ElementIterator(); it.Next(); {
				_, e := it.Element()
				if !e.IsKnown() {
					return unknown, countText, false
				}
				s, err := convert.Convert(unmark(e), cty.String)
				if err != nil || s.IsNull() {
					return unknown, countText, false
				}
				keys = append(keys, instKey{suffix: keyText(s), eachKey: s, eachVal: s})
			}
			sort.Slice(keys, func(i, j int) bool { return keys[i].eachKey.AsString() < keys[j].eachKey.AsString() })
		default:
			return unknown, countText, false
		}
		return keys, countText, true
	}
	return []instKey{{}}, "", true
}

// blockAddr is the configuration address of a resource, data or module block.
func blockAddr(b *hclsyntax.Block) string {
	switch {
	case b.Type == "data" && len(b.Labels) == 2:
		return "data." + b.Labels[0] + "." + b.Labels[1]
	case b.Type == "module" && len(b.Labels) == 1:
		return "module." + b.Labels[0]
	case len(b.Labels) == 2:
		return b.Labels[0] + "." + b.Labels[1]
	}
	return strings.Join(append([]string{b.Type}, b.Labels...), ".")
}

func (k instKey) ctx(m *modInst) *evalCtx {
	return &evalCtx{m: m, count: k.count, eachKey: k.eachKey, eachVal: k.eachVal}
}

// moduleCall is a module block.
type moduleCall struct {
	m               *modInst
	name            string
	block           *hclsyntax.Block
	source, version string
	kind            moduleKind
	// major is the terraform-aws-modules/eks major version whose semantics apply;
	// majorFrom says how it was decided.
	major     int
	majorFrom string
	// declaredMajor is the major version the call declares, before clamping to
	// the versions whose semantics are modelled.
	declaredMajor int
	candidates    []int
	missing       bool   // a local source that is not on disk and not recognised
	dir           string // the directory of a local module
	childPath     string // path.module inside a local module

	resolved  bool
	insts     []*callInst
	countText string
	known     bool
}

// callInst is one instance of a module call.
type callInst struct {
	call   *moduleCall
	addr   string // module.name or module.name[key], with the caller's prefix
	key    instKey
	inputs map[string]*lazy
	child  *modInst
}

func (m *modInst) newCall(b *hclsyntax.Block) *moduleCall {
	call := &moduleCall{m: m, name: b.Labels[0], block: b}
	if s, ok := literalString(blockAttr(b, "source")); ok {
		call.source = s
	} else if expr := blockAttr(b, "source"); expr != nil {
		// OpenTofu (1.8 and later) evaluates variables and locals in module
		// sources before anything else; Terraform rejects them.
		m.l.unresolved(originOf(expr.Range()), fmt.Sprintf("the source of %smodule.%s is an expression (%s), which OpenTofu evaluates early and Terraform rejects; what the module creates is not analysed and its outputs are unknown", m.prefix, b.Labels[0], m.l.text(expr.Range())))
	}
	if s, ok := literalString(blockAttr(b, "version")); ok {
		call.version = s
	}
	classifyModule(m.l, call)
	return call
}

// metaArgs are the arguments of a module block that are not module inputs.
var metaArgs = map[string]bool{"source": true, "version": true, "count": true, "for_each": true, "depends_on": true, "providers": true}

// instances evaluates a module call's count/for_each once and sets up each instance:
// its inputs (evaluated lazily in the caller) and, for a local module, the child.
func (call *moduleCall) instances() []*callInst {
	if call.resolved {
		return call.insts
	}
	call.resolved = true
	m := call.m
	keys, countText, known := m.expand(call.block)
	call.countText, call.known = countText, known
	base := m.prefix + "module." + call.name
	for _, k := range keys {
		ci := &callInst{call: call, addr: base + k.suffix, key: k, inputs: map[string]*lazy{}}
		for name, a := range call.block.Body.Attributes {
			if metaArgs[name] {
				continue
			}
			a, k := a, k
			ci.inputs[name] = &lazy{what: ci.addr + "." + name, rng: a.SrcRange, eval: func() cty.Value {
				v, err := m.l.eval(a.Expr, k.ctx(m))
				if err != nil {
					m.l.evalNote(err, ci.addr+"."+name)
				}
				return v
			}}
		}
		call.insts = append(call.insts, ci)
	}
	if call.kind == kindLocal && m.depth < maxModuleDepth {
		cfg, err := m.l.readModule(call.dir)
		if err != nil {
			m.l.problem(originOf(call.block.DefRange()), err.Error())
			return call.insts
		}
		deps := append(append([]string(nil), m.dependsOn...), m.addresses(blockAttr(call.block, "depends_on"))...)
		for _, ci := range call.insts {
			if len(m.l.modules) >= maxModuleInstances {
				m.l.problem(originOf(call.block.DefRange()), fmt.Sprintf("more than %d module instances; %s and the modules after it are not read", maxModuleInstances, ci.addr))
				break
			}
			child := m.l.newModInst(cfg, ci.addr+".", m.cfgPrefix+"module."+call.name+".", call.childPath, m.depth+1)
			child.dependsOn = deps
			child.conditional = m.conditional
			if !call.known {
				child.conditional = call.countText
			}
			ci := ci
			child.defineVariables(func(name string) (func() cty.Value, bool) {
				z, ok := ci.inputs[name]
				if !ok {
					return nil, false
				}
				return func() cty.Value { return m.l.force(z) }, true
			})
			for name, a := range call.block.Body.Attributes {
				if !metaArgs[name] {
					child.inputRefs[name], child.inputOutputs[name] = m.refsAndOutputs(a.Expr)
				}
			}
			for name := range call.block.Body.Attributes {
				if !metaArgs[name] {
					if _, ok := cfg.variables[name]; !ok {
						m.l.unresolved(originOf(call.block.Body.Attributes[name].SrcRange), "module "+call.name+" ("+call.source+") declares no variable "+name+" (Terraform rejects the argument unless something writes the declaration at run time); the value is not passed on")
					}
				}
			}
			ci.child = child
		}
	} else if call.kind == kindLocal {
		m.l.unresolved(originOf(call.block.DefRange()), base+" is nested deeper than "+strconv.Itoa(maxModuleDepth)+" levels of local modules; what it creates is not analysed and its outputs are unknown")
	}
	return call.insts
}

// input returns the evaluated input of a module call instance.
func (ci *callInst) input(name string) (cty.Value, bool) {
	z, ok := ci.inputs[name]
	if !ok {
		return cty.NilVal, false
	}
	return ci.call.m.l.force(z), true
}

// output returns a local module's output, in its caller's words: unknowns that stand
// for something inside the module are named by the output ("module.x.role_arn").
func (ci *callInst) output(name string) (cty.Value, bool) {
	if ci.child == nil {
		return cty.NilVal, false
	}
	z, ok := ci.child.outputs[name]
	if !ok {
		return cty.NilVal, false
	}
	v := ci.child.l.force(z)
	if v.IsWhollyKnown() {
		return v, true
	}
	scope := ci.child.prefix
	return renameLeaves(v, ci.addr+"."+name, func(u cty.Value) bool {
		s := unknownScope(u)
		return s == "" || strings.HasPrefix(s, scope)
	}), true
}

func (ci *callInst) outputsObject() cty.Value {
	vals := map[string]cty.Value{}
	if ci.child == nil {
		return unknownOf(ci.addr)
	}
	for name := range ci.child.outputs {
		v, _ := ci.output(name)
		vals[name] = v
	}
	return cty.ObjectVal(vals)
}

// moduleRef resolves module.<name>... : a local module's outputs are evaluated; any
// other module's outputs are unknown.
func (m *modInst) moduleRef(name string, t hcl.Traversal, rng hcl.Range) (cty.Value, *evalError) {
	call, ok := m.calls[name]
	if !ok {
		return cty.NilVal, undeclaredAt(rng, "module."+name)
	}
	full := m.prefix + traversalText(t)
	if call.kind != kindLocal {
		return unknownIn(full, m.prefix), nil
	}
	insts := call.instances()
	if !call.known || len(insts) == 0 && call.countText == "" {
		return unknownIn(full, m.prefix), nil
	}
	rest := t[2:]
	text := m.prefix + "module." + name
	var ci *callInst
	if call.countText == "" {
		ci = insts[0]
	} else {
		if len(rest) == 0 {
			if blockAttr(call.block, "count") != nil {
				vals := make([]cty.Value, len(insts))
				for i, x := range insts {
					vals[i] = x.outputsObject()
				}
				return cty.TupleVal(vals), nil
			}
			vals := map[string]cty.Value{}
			for _, x := range insts {
				vals[x.key.eachKey.AsString()] = x.outputsObject()
			}
			return cty.ObjectVal(vals), nil
		}
		idx, ok := rest[0].(hcl.TraverseIndex)
		if !ok {
			return cty.NilVal, errAt(rng, "module %s has several instances; select one with an index", name)
		}
		suffix := keyText(idx.Key)
		for _, x := range insts {
			if x.key.suffix == suffix {
				ci = x
			}
		}
		if ci == nil {
			return cty.NilVal, errAt(rng, "module %s has no instance %s", name, suffix)
		}
		text += suffix
		rest = rest[1:]
	}
	if len(rest) == 0 {
		return ci.outputsObject(), nil
	}
	attr, ok := rest[0].(hcl.TraverseAttr)
	if !ok {
		return cty.NilVal, errAt(rng, "a module output is selected by name")
	}
	v, ok := ci.output(attr.Name)
	if !ok {
		if ci.child == nil {
			return unknownIn(full, m.prefix), nil
		}
		return cty.NilVal, errAt(rng, "module %s has no output %q", name, attr.Name)
	}
	return m.l.applyTraversal(v, text+"."+attr.Name, rest[1:], rng)
}

// staticData returns the value of a data source that can be computed without a
// provider (kubectl_file_documents, aws_iam_policy_document), selected by the first
// three steps of t.
func (m *modInst) staticData(t hcl.Traversal) (cty.Value, bool) {
	if len(t) < 3 {
		return cty.NilVal, false
	}
	typ, ok1 := t[1].(hcl.TraverseAttr)
	name, ok2 := t[2].(hcl.TraverseAttr)
	if !ok1 || !ok2 {
		return cty.NilVal, false
	}
	z, ok := m.data[typ.Name+"."+name.Name]
	if !ok {
		return cty.NilVal, false
	}
	v := m.l.force(z)
	if v == cty.NilVal {
		return cty.NilVal, false
	}
	return v, true
}
