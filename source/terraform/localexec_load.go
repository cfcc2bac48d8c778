package terraform

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/inputfs"
)

// execRun is one local-exec provisioner of a resource instance, read.
type execRun struct {
	destroy bool
	origin  cluster.Origin // the command argument
	text    string         // the command's first line, for messages
	res     *execResult
}

// commandResources are the resources whose provisioners eksdoctor reads: the
// ones that exist to run them.
var commandResources = map[string]bool{"null_resource": true, "terraform_data": true}

// localExecs reads the local-exec provisioners of a null_resource or
// terraform_data instance.
func (m *modInst) localExecs(b *hclsyntax.Block, c *evalCtx, r *resInst) []*execRun {
	l := m.l
	var out []*execRun
	var self cty.Value
	for _, pb := range b.Body.Blocks {
		if pb.Type != "provisioner" || len(pb.Labels) == 0 || pb.Labels[0] != "local-exec" {
			continue
		}
		if self == cty.NilVal {
			self = m.selfValue(b, c, r.typ)
		}
		pc := *c
		pc.self = self
		run := &execRun{origin: originOf(pb.DefRange())}
		if e := blockAttr(pb, "when"); e != nil {
			run.destroy = strings.TrimSpace(l.text(e.Range())) == "destroy"
		}
		ce := blockAttr(pb, "command")
		if ce == nil {
			continue
		}
		run.origin = originOf(ce.Range())
		v, err := l.eval(ce, &pc)
		if err != nil {
			l.evalNote(err, r.addr+".provisioner.command")
		}
		text, known := "", false
		if u := unmark(v); u.IsKnown() && !u.IsNull() && u.Type() == cty.String {
			text, known = u.AsString(), true
		}
		first := strings.TrimSpace(text)
		if i := strings.IndexByte(first, '\n'); i >= 0 {
			first = strings.TrimSpace(first[:i]) + " …"
		}
		run.text = first
		if !known {
			if strings.Contains(l.text(ce.Range()), "kubectl") || strings.Contains(l.text(ce.Range()), "helm") {
				run.res = &execResult{unread: []string{"the command is not known before apply"}}
				run.res.destroy.Unread = true
				out = append(out, run)
			}
			continue
		}
		if ie := blockAttr(pb, "interpreter"); ie != nil {
			iv, _ := l.eval(ie, &pc)
			if !shellInterpreter(unmark(iv)) {
				if strings.Contains(text, "kubectl") || strings.Contains(text, "helm") {
					run.res = &execResult{unread: []string{"runs with an interpreter that is not a POSIX shell (" + strings.TrimSpace(l.text(ie.Range())) + ")"}}
					run.res.destroy.Unread = true
					out = append(out, run)
				}
				continue
			}
		}
		env := map[string]string{}
		if ee := blockAttr(pb, "environment"); ee != nil {
			ev, _ := l.eval(ee, &pc)
			ev = unmark(ev)
			if ev.IsKnown() && !ev.IsNull() && isMapLike(ev.Type()) {
				for it := ev.ElementIterator(); it.Next(); {
					k, val := it.Element()
					val = unmark(val)
					if val.IsKnown() && !val.IsNull() && val.Type() == cty.String {
						env[k.AsString()] = val.AsString()
					}
				}
			}
		}
		dir := l.root
		if we := blockAttr(pb, "working_dir"); we != nil {
			wv, _ := l.eval(we, &pc)
			wv = unmark(wv)
			if wv.IsKnown() && !wv.IsNull() && wv.Type() == cty.String {
				dir = l.resolvePath(wv.AsString())
			} else {
				dir = ""
			}
		}
		run.res = interpretCommand(text, env, run.destroy, l.execReader(dir))
		out = append(out, run)
	}
	return out
}

// shellInterpreter reports whether a local-exec interpreter is a POSIX shell
// given the command with -c (or the default, when not set).
func shellInterpreter(v cty.Value) bool {
	if v.IsNull() {
		return true
	}
	if !v.IsKnown() || !v.CanIterateElements() {
		return false
	}
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		e = unmark(e)
		if !e.IsKnown() || e.IsNull() || e.Type() != cty.String {
			return false
		}
		switch path.Base(e.AsString()) {
		case "sh", "bash", "zsh", "dash", "ash":
			return true
		}
		return false
	}
	return true
}

// selfValue is what self means in a provisioner: the resource's own arguments
// (triggers, input), its id and output not known before apply.
func (m *modInst) selfValue(b *hclsyntax.Block, c *evalCtx, typ string) cty.Value {
	attrs := map[string]cty.Value{"id": cty.UnknownVal(cty.String)}
	for _, name := range sortedKeys(b.Body.Attributes) {
		if skipArgs[name] {
			continue
		}
		v, _ := m.l.eval(b.Body.Attributes[name].Expr, c)
		attrs[name] = v
	}
	if typ == "terraform_data" {
		if v, ok := attrs["input"]; ok {
			attrs["output"] = v
		} else {
			attrs["output"] = cty.NullVal(cty.DynamicPseudoType)
		}
	}
	return cty.ObjectVal(attrs)
}

// execReader reads the files a command names, relative to the directory it
// runs in, inside the inputs only.
func (l *loader) execReader(dir string) execReader {
	return func(p string, recursive bool) ([]execFile, error) {
		if dir == "" && !filepath.IsAbs(p) {
			return nil, errors.New("the directory the command runs in is not known")
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		p = filepath.Clean(p)
		if l.opts.FS != nil && l.opts.FS.IsDir(p) {
			return l.readManifestDir(p, recursive)
		}
		src, err := l.readFile(p)
		if err != nil {
			return nil, err
		}
		return []execFile{{path: p, text: string(src)}}, nil
	}
}

func manifestExt(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// readManifestDir reads the manifests of a directory as kubectl apply -f DIR
// does: its .yaml, .yml and .json files in name order, those of its
// subdirectories too with -R.
func (l *loader) readManifestDir(dir string, recursive bool) ([]execFile, error) {
	var names []string
	if recursive {
		err := l.opts.FS.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if len(names) >= maxFilesetFiles {
				return fs.SkipAll
			}
			if !d.IsDir() && manifestExt(p) {
				names = append(names, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	} else {
		ents, err := l.opts.FS.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			if !e.IsDir() && manifestExt(e.Name()) && len(names) < maxFilesetFiles {
				names = append(names, filepath.Join(dir, e.Name()))
			}
		}
	}
	sort.Strings(names)
	var out []execFile
	for _, n := range names {
		src, err := l.readFile(n)
		if err != nil {
			if inputfs.Unseen(err) {
				continue
			}
			return nil, err
		}
		out = append(out, execFile{path: n, text: string(src)})
	}
	return out, nil
}

// localExec puts what the provisioners of a null_resource or terraform_data
// apply into the model, and keeps what its destroy-time ones delete for the
// teardown plan.
func (b *builder) localExec(r *resInst) {
	for _, run := range r.execs {
		res := run.res
		if res == nil {
			continue
		}
		for _, u := range res.unread {
			what := "what it applies or installs is not analysed"
			if run.destroy {
				what = "what it deletes on destroy is not known"
			}
			b.m.Problems = append(b.m.Problems, cluster.Problem{Origin: run.origin, Unresolved: true,
				Message: fmt.Sprintf("the %slocal-exec command of %s cannot be read in full: %s; %s", whenWord(run.destroy), r.addr, u, what)})
		}
		if run.destroy {
			cmd := res.destroy
			if len(cmd.Deletes) == 0 && len(cmd.Uninstalls) == 0 && len(cmd.WaitsFor) == 0 && !cmd.Unread {
				continue
			}
			cmd.Origin = run.origin
			if cmd.Text == "" {
				cmd.Text = run.text
			}
			if b.destroyCmds == nil {
				b.destroyCmds = map[string][]cluster.Command{}
			}
			b.destroyCmds[r.addr] = append(b.destroyCmds[r.addr], cmd)
			continue
		}
		for _, a := range res.applies {
			org := run.origin
			if a.file != "" {
				org = cluster.Origin{File: a.file, Line: 1}
			}
			objs, probs := decodeObjects(a.text, org)
			for _, o := range objs {
				if a.file == "" {
					// The text is inside the command: its lines are not
					// lines of the file.
					o.Origin, o.Lines, o.LineIndex = run.origin, nil, nil
				}
				o.Via, o.Manager = r.addr, cluster.ManagerCommand
				if a.namespace != "" && o.Namespace == "" && !cluster.ClusterScoped(o.Kind) {
					o.Namespace = a.namespace
					if md, ok := o.Content["metadata"].(map[string]any); ok {
						md["namespace"] = a.namespace
					}
				}
			}
			if a.file == "" {
				for i := range probs {
					probs[i].Origin = cluster.Origin{File: run.origin.File, Line: run.origin.Line, Path: probs[i].Origin.Path}
				}
			}
			b.m.Objects = append(b.m.Objects, objs...)
			b.m.Problems = append(b.m.Problems, probs...)
		}
		for _, rel := range res.releases {
			b.commandRelease(r, run, rel)
		}
	}
}

func whenWord(destroy bool) string {
	if destroy {
		return "destroy-time "
	}
	return ""
}

// commandRelease models a release a helm command installs, through the same
// reading as a helm_release (values files in order, then --set).
func (b *builder) commandRelease(r *resInst, run *execRun, rel execRelease) {
	org := cluster.Origin{File: run.origin.File, Line: run.origin.Line}
	s := newResInst("", "managed", "helm_release", rel.name, org)
	s.dir = r.dir
	s.vals["name"] = rel.name
	s.vals["chart"] = rel.chart
	if rel.repo != "" {
		s.vals["repository"] = rel.repo
	}
	if rel.version != "" {
		s.vals["version"] = rel.version
	}
	// helm's namespace is the kubeconfig's, "default" unless it says otherwise.
	s.vals["namespace"] = rel.namespace
	if rel.namespace == "" {
		s.vals["namespace"] = "default"
	}
	var values []any
	for i, f := range rel.values {
		values = append(values, f.text)
		p := "values." + strconv.Itoa(i)
		if f.path != "" {
			s.texts[p] = cluster.Origin{File: f.path, Line: 1}
		}
	}
	if len(values) > 0 {
		s.vals["values"] = values
	}
	var sets []any
	for _, st := range rel.sets {
		e := map[string]any{"name": st.name, "value": st.value}
		if st.str {
			e["type"] = "string"
		}
		sets = append(sets, e)
	}
	if len(sets) > 0 {
		s.vals["set"] = sets
	}
	s.flat = false
	n := len(b.m.HelmReleases)
	b.helmRelease(s)
	if len(b.m.HelmReleases) == n {
		return
	}
	hr := b.m.HelmReleases[n]
	hr.Address = ""
	hr.DependsOn = append([]string(nil), r.dependsOn...)
	hr.InstalledBy = "helm, run by a local-exec provisioner of " + r.addr
	hr.Unknown = append(hr.Unknown, rel.unknown...)
}

// attachCommands gives the graph's resources what their destroy-time commands
// remove (every instance's, once).
func (b *builder) attachCommands() {
	g := b.m.Terraform
	if g == nil {
		return
	}
	for _, addr := range sortedKeys(b.destroyCmds) {
		n := g.Nodes[graphNode(g, addr)]
		if n == nil {
			continue
		}
	next:
		for _, c := range b.destroyCmds[addr] {
			for _, x := range n.Commands {
				if x.Origin == c.Origin && x.Text == c.Text {
					continue next
				}
			}
			n.Commands = append(n.Commands, c)
		}
	}
}
