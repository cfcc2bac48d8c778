package terraform

import (
	"path"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/shell"
)

// What a local-exec provisioner's command applies, installs or deletes, read
// from the parsed script (shparse.go): kubectl apply|create|replace -f (files,
// directories, standard input fed by a here-document, echo or cat), helm
// install|upgrade, and at destroy time kubectl delete, kubectl wait
// --for=delete and helm uninstall. What cannot be read is said (unread), never
// guessed.

// execFile is a file a command reads, as the reader found it.
type execFile struct {
	path string
	text string
}

// execReader reads the manifests a path names: the file, or the .yaml, .yml
// and .json files of a directory (recursive: those below it too).
type execReader func(p string, recursive bool) ([]execFile, error)

// execManifest is a manifest text a command applies.
type execManifest struct {
	text string
	// file is the file it was read from; "" for text the command holds, then
	// line is the line of the script the command is on (0-based).
	file      string
	line      int
	namespace string
}

// execSet is one --set of a helm command.
type execSet struct {
	name, value string
	str         bool // --set-string
}

// execRelease is a release a helm command installs.
type execRelease struct {
	name, chart, repo, version, namespace string
	sets                                  []execSet
	values                                []execFile
	// unknown lists the values sources not known ("--set", "-f").
	unknown []string
	line    int
}

// execResult is what one provisioner's command does.
type execResult struct {
	applies  []execManifest
	releases []execRelease
	// destroy is what a destroy-time command removes.
	destroy cluster.Command
	// unread are the commands not read, each with the reason.
	unread []string
}

// maxShellDepth bounds sh -c inside sh -c.
const maxShellDepth = 4

// interpretCommand reads what a command text does. destroy is set for a
// destroy-time provisioner; env is its environment; read reads files.
func interpretCommand(text string, env map[string]string, destroy bool, read execReader) *execResult {
	res := &execResult{}
	interpretInto(res, text, env, destroy, read, 0, 0)
	res.destroy.Unread = len(res.unread) > 0
	return res
}

func interpretInto(res *execResult, text string, env map[string]string, destroy bool, read execReader, depth, lineBase int) {
	sc := parseShell(text, env)
	if sc.tooLarge {
		res.unread = append(res.unread, "the command is too large to read")
		return
	}
	for _, pl := range sc.pipelines {
		var prev *string
		prevDyn := false
		for _, c := range pl.cmds {
			words := stripPrefixes(c.words)
			out, outDyn := (*string)(nil), false
			if len(words) > 0 {
				name := words[0]
				if !name.dyn {
					stdin, stdinDyn := prev, prevDyn
					if c.stdin != nil {
						stdin, stdinDyn = c.stdin, c.stdinDyn
					} else if c.stdinFile != nil {
						stdin, stdinDyn = readStdin(c.stdinFile, read)
					}
					x := &execCmd{res: res, c: c, words: words, stdin: stdin, stdinDyn: stdinDyn, destroy: destroy, read: read, line: lineBase + c.line}
					switch base := path.Base(name.text); base {
					case "kubectl", "oc":
						x.kubectl()
					case "helm":
						x.helm()
					case "cat":
						out, outDyn = x.cat()
					case "echo":
						out, outDyn = x.echo()
					case "printf":
						out, outDyn = x.printf()
					case "sh", "bash", "zsh", "dash", "ash":
						if s, ok := x.inlineScript(); ok {
							if depth >= maxShellDepth {
								x.unread("nests shell commands too deeply to read")
							} else {
								interpretInto(res, s, nil, destroy, read, depth+1, x.line)
							}
						} else if len(words) > 1 {
							x.unread("runs a script eksdoctor does not read")
						}
					case "source", ".":
						x.unread("runs a script eksdoctor does not read")
					case "xargs", "eval", "watch", "parallel", "exec":
						if mentionsAction(words) {
							x.unread("runs kubectl or helm with arguments known only when it runs")
						}
					default:
						if strings.HasSuffix(base, ".sh") || strings.HasPrefix(name.text, "./") {
							x.unread("runs a script eksdoctor does not read")
						}
					}
				} else if mentionsAction(words) || dynamicTool(words) {
					res.unread = append(res.unread, commandText(words, lineBase+c.line)+": the program it runs is known only when it runs")
				}
			}
			prev, prevDyn = out, outDyn
		}
	}
}

// stripPrefixes drops the commands that run the rest (env, sudo, command, time,
// nohup, timeout N) and env's assignments.
func stripPrefixes(words []shWord) []shWord {
	for len(words) > 0 && !words[0].dyn {
		switch words[0].text {
		case "env", "sudo", "command", "nohup", "time", "builtin":
			words = words[1:]
			for len(words) > 0 && (assignment(words[0].text) || strings.HasPrefix(words[0].text, "-")) {
				words = words[1:]
			}
			continue
		case "timeout":
			words = words[1:]
			for len(words) > 0 && strings.HasPrefix(words[0].text, "-") {
				words = words[1:]
			}
			if len(words) > 0 {
				words = words[1:]
			}
			continue
		}
		break
	}
	return words
}

var actionWords = map[string]bool{"apply": true, "create": true, "replace": true, "delete": true, "install": true, "upgrade": true, "uninstall": true}

// mentionsAction reports whether words run kubectl or helm to change the cluster.
func mentionsAction(words []shWord) bool {
	tool, action := false, false
	for _, w := range words {
		for _, f := range strings.Fields(w.text) {
			switch b := path.Base(f); {
			case b == "kubectl" || b == "helm":
				tool = true
			case actionWords[f]:
				action = true
			}
		}
	}
	return tool && action
}

func readStdin(w *shWord, read execReader) (*string, bool) {
	if w.dyn || read == nil {
		return nil, true
	}
	fs, err := read(w.text, false)
	if err != nil || len(fs) != 1 {
		return nil, true
	}
	return &fs[0].text, false
}

// commandText renders a command for a message: its words quoted, cut short.
func commandText(words []shWord, line int) string {
	var parts []string
	n := 0
	for _, w := range words {
		t := w.text
		if w.dyn {
			t = "…"
		}
		q := shell.Quote(t)
		if w.dyn {
			q = t
		}
		n += len(q) + 1
		if n > 160 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, q)
	}
	return "`" + strings.Join(parts, " ") + "` (line " + itoa(line+1) + " of the command)"
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	if neg {
		b = append([]byte{'-'}, b...)
	}
	return string(b)
}

// execCmd is one command being read.
type execCmd struct {
	res      *execResult
	c        *shCmd
	words    []shWord
	stdin    *string
	stdinDyn bool
	destroy  bool
	read     execReader
	line     int
}

func (x *execCmd) unread(why string) {
	x.res.unread = append(x.res.unread, commandText(x.words, x.line)+" "+why)
}

// cat outputs its files, or its input.
func (x *execCmd) cat() (*string, bool) {
	var files []shWord
	for _, w := range x.words[1:] {
		if strings.HasPrefix(w.text, "-") && w.text != "-" {
			continue
		}
		files = append(files, w)
	}
	if len(files) == 0 {
		return x.stdin, x.stdinDyn
	}
	var b strings.Builder
	for _, f := range files {
		if f.text == "-" {
			if x.stdin == nil {
				return nil, true
			}
			b.WriteString(*x.stdin)
			continue
		}
		if f.dyn || x.read == nil {
			return nil, true
		}
		fs, err := x.read(f.text, false)
		if err != nil || len(fs) != 1 {
			return nil, true
		}
		b.WriteString(fs[0].text)
	}
	s := b.String()
	return &s, false
}

// echo outputs its arguments.
func (x *execCmd) echo() (*string, bool) {
	args := x.words[1:]
	for len(args) > 0 && (args[0].text == "-n" || args[0].text == "-e" || args[0].text == "-E" || args[0].text == "-ne" || args[0].text == "-en") {
		args = args[1:]
	}
	var parts []string
	dyn := false
	for _, a := range args {
		parts = append(parts, a.text)
		dyn = dyn || a.dyn
	}
	s := strings.Join(parts, " ") + "\n"
	return &s, dyn
}

// printf outputs its arguments when the format is %s (with or without a
// newline) or has no directive.
func (x *execCmd) printf() (*string, bool) {
	args := x.words[1:]
	if len(args) == 0 || args[0].dyn {
		return nil, true
	}
	f := args[0].text
	switch {
	case f == "%s" || f == `%s\n` || f == "%s\n":
		var b strings.Builder
		dyn := false
		for _, a := range args[1:] {
			b.WriteString(a.text)
			dyn = dyn || a.dyn
			if f != "%s" {
				b.WriteByte('\n')
			}
		}
		s := b.String()
		return &s, dyn
	case !strings.Contains(f, "%") && !strings.Contains(f, `\`):
		return &f, false
	}
	return nil, true
}

// inlineScript returns the script of sh -c SCRIPT.
func (x *execCmd) inlineScript() (string, bool) {
	args := x.words[1:]
	for i, a := range args {
		if a.text == "-c" && i+1 < len(args) {
			if args[i+1].dyn {
				return "", false
			}
			return args[i+1].text, true
		}
		if !strings.HasPrefix(a.text, "-") {
			return "", false
		}
	}
	return "", false
}

// flagArgs splits arguments into flags (name without dashes -> values) and
// positional words. valued names the flags that take a value.
func flagArgs(args []shWord, valued map[string]bool) (map[string][]shWord, []shWord) {
	flags := map[string][]shWord{}
	var pos []shWord
	for i := 0; i < len(args); i++ {
		a := args[i]
		t := a.text
		switch {
		case t == "--":
			pos = append(pos, args[i+1:]...)
			return flags, pos
		case strings.HasPrefix(t, "--") && !a.dyn:
			name, val, hasVal := strings.Cut(t[2:], "=")
			switch {
			case hasVal:
				flags[name] = append(flags[name], shWord{text: val, dyn: a.dyn})
			case valued[name] && i+1 < len(args):
				i++
				flags[name] = append(flags[name], args[i])
			default:
				flags[name] = append(flags[name], shWord{text: ""})
			}
		case strings.HasPrefix(t, "-") && len(t) > 1 && !a.dyn:
			name := t[1:2]
			rest := t[2:]
			switch {
			case valued[name] && rest != "":
				flags[name] = append(flags[name], shWord{text: strings.TrimPrefix(rest, "="), dyn: a.dyn})
			case valued[name] && i+1 < len(args):
				i++
				flags[name] = append(flags[name], args[i])
			default:
				for _, ch := range t[1:] {
					flags[string(ch)] = append(flags[string(ch)], shWord{})
				}
			}
		default:
			pos = append(pos, a)
		}
	}
	return flags, pos
}

func flagValues(flags map[string][]shWord, names ...string) []shWord {
	var out []shWord
	for _, n := range names {
		out = append(out, flags[n]...)
	}
	return out
}

func lastFlag(flags map[string][]shWord, names ...string) (shWord, bool) {
	v := flagValues(flags, names...)
	if len(v) == 0 {
		return shWord{}, false
	}
	return v[len(v)-1], true
}

var kubectlValued = map[string]bool{
	"n": true, "namespace": true, "kubeconfig": true, "context": true, "cluster": true, "user": true,
	"s": true, "server": true, "token": true, "l": true, "selector": true, "o": true, "output": true,
	"field-selector": true, "timeout": true, "for": true, "f": true, "filename": true, "k": true,
	"kustomize": true, "field-manager": true, "grace-period": true, "c": true, "container": true,
	"request-timeout": true, "as": true, "as-group": true, "certificate-authority": true,
	"client-key": true, "client-certificate": true, "password": true, "username": true, "v": true,
	"log-file": true, "cache-dir": true, "prune-allowlist": true, "overrides": true, "p": true,
	"patch": true, "type": true, "template": true, "sort-by": true, "L": true, "tls-server-name": true,
}

// kubectl reads kubectl apply, create, replace, delete and wait.
func (x *execCmd) kubectl() {
	flags, pos := flagArgs(x.words[1:], kubectlValued)
	if len(pos) == 0 || pos[0].dyn {
		if len(pos) > 0 && x.c.nested || len(pos) > 0 {
			x.unread("runs a kubectl command known only when it runs")
		}
		return
	}
	verb := pos[0].text
	switch verb {
	case "apply", "create", "replace":
		if x.destroy {
			return
		}
		if verb == "apply" && len(pos) > 1 {
			// kubectl apply set-last-applied, edit-last-applied, view-last-applied.
			return
		}
		if dr, ok := lastFlag(flags, "dry-run"); ok && dr.text != "none" {
			return
		}
		if x.c.nested {
			x.unread("applies manifests inside a loop or condition, which eksdoctor does not follow")
			return
		}
		if len(flagValues(flags, "k", "kustomize")) > 0 {
			x.unread("applies a kustomization (-k), which eksdoctor does not build")
			return
		}
		files := flagValues(flags, "f", "filename")
		if len(files) == 0 {
			// kubectl create namespace x and the like create nothing eksdoctor
			// looks at.
			return
		}
		ns := ""
		if n, ok := lastFlag(flags, "n", "namespace"); ok {
			if n.dyn {
				x.unread("applies into a namespace known only when it runs")
				return
			}
			ns = n.text
		}
		recursive := len(flagValues(flags, "R", "recursive")) > 0
		for _, f := range files {
			x.applyFile(f, ns, recursive)
		}
	case "delete":
		if !x.destroy {
			return
		}
		if x.c.nested {
			x.unread("deletes inside a loop or condition, which eksdoctor does not follow")
			return
		}
		x.delete(flags, pos[1:])
	case "wait":
		if !x.destroy {
			return
		}
		f, ok := lastFlag(flags, "for")
		if !ok || f.text != "delete" {
			return
		}
		for _, p := range pos[1:] {
			if p.dyn {
				continue
			}
			t, _, _ := strings.Cut(p.text, "/")
			for _, r := range strings.Split(t, ",") {
				x.res.destroy.WaitsFor = appendUniq(x.res.destroy.WaitsFor, kindOfResource(r))
			}
		}
		x.res.destroy.Text = x.text()
	}
}

func (x *execCmd) text() string {
	var parts []string
	for _, w := range x.words {
		if w.dyn {
			parts = append(parts, "…")
			continue
		}
		parts = append(parts, shell.Quote(w.text))
	}
	return strings.Join(parts, " ")
}

func appendUniq(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func (x *execCmd) applyFile(f shWord, ns string, recursive bool) {
	switch {
	case f.text == "-":
		if x.stdin == nil || x.stdinDyn {
			x.unread("applies from standard input whose text is known only when it runs")
			return
		}
		x.res.applies = append(x.res.applies, execManifest{text: *x.stdin, line: x.line, namespace: ns})
	case f.dyn:
		x.unread("applies a file named only when it runs")
	case strings.Contains(f.text, "://"):
		x.unread("applies a manifest from " + f.text + ", which eksdoctor does not fetch")
	case cluster.IsUnknown(f.text):
		x.unread("applies a file whose name is known only after apply")
	case x.read == nil:
		x.unread("applies " + f.text + ", which is not read here")
	default:
		fs, err := x.read(f.text, recursive)
		if err != nil {
			x.unread("applies " + f.text + ", which cannot be read: " + err.Error())
			return
		}
		for _, file := range fs {
			x.res.applies = append(x.res.applies, execManifest{text: file.text, file: file.path, namespace: ns})
		}
	}
}

// delete reads kubectl delete TYPE NAME..., TYPE/NAME, TYPE --all, -f FILE.
func (x *execCmd) delete(flags map[string][]shWord, args []shWord) {
	wait := true
	if w, ok := lastFlag(flags, "wait"); ok && w.text == "false" {
		wait = false
	}
	fg := false
	if c, ok := lastFlag(flags, "cascade"); ok && c.text == "foreground" {
		fg = true
	}
	all := len(flagValues(flags, "all", "l", "selector")) > 0
	var dels []cluster.CommandDelete
	add := func(kind, name string, every bool) {
		for i := range dels {
			if dels[i].Kind == kind {
				if every {
					dels[i].All = true
				} else if name != "" {
					dels[i].Names = append(dels[i].Names, name)
				}
				return
			}
		}
		d := cluster.CommandDelete{Kind: kind, All: every, Wait: wait, Foreground: fg}
		if name != "" && !every {
			d.Names = []string{name}
		}
		dels = append(dels, d)
	}
	for _, f := range flagValues(flags, "f", "filename") {
		var texts []string
		switch {
		case f.text == "-" && x.stdin != nil && !x.stdinDyn:
			texts = []string{*x.stdin}
		case f.dyn || f.text == "-" || strings.Contains(f.text, "://") || x.read == nil:
			x.unread("deletes manifests known only when it runs")
			continue
		default:
			fs, err := x.read(f.text, len(flagValues(flags, "R", "recursive")) > 0)
			if err != nil {
				x.unread("deletes " + f.text + ", which cannot be read: " + err.Error())
				continue
			}
			for _, file := range fs {
				texts = append(texts, file.text)
			}
		}
		for _, t := range texts {
			objs, _ := decodeObjects(t, cluster.Origin{})
			for _, o := range objs {
				add(o.Kind, o.Name, o.Name == "" || cluster.IsUnknown(o.Name))
			}
		}
	}
	var kinds []string
	for i, a := range args {
		if a.dyn && i == 0 {
			x.unread("deletes a resource type known only when it runs")
			return
		}
		if t, n, ok := strings.Cut(a.text, "/"); ok {
			add(kindOfResource(t), n, a.dyn || cluster.IsUnknown(n))
			continue
		}
		if i == 0 {
			for _, r := range strings.Split(a.text, ",") {
				kinds = append(kinds, kindOfResource(r))
				if all {
					add(kindOfResource(r), "", true)
				}
			}
			continue
		}
		for _, k := range kinds {
			add(k, a.text, a.dyn || cluster.IsUnknown(a.text))
		}
	}
	if len(dels) == 0 {
		return
	}
	x.res.destroy.Deletes = append(x.res.destroy.Deletes, dels...)
	x.res.destroy.Text = x.text()
}

// kindOfResource turns a resource as kubectl accepts it (nodepools,
// nodepool.karpenter.sh, NodePool) into the kind, for the kinds eksdoctor
// follows; others are returned as written.
func kindOfResource(r string) string {
	base, _, _ := strings.Cut(strings.ToLower(r), ".")
	switch base {
	case "nodepool", "nodepools":
		return "NodePool"
	case "nodeclaim", "nodeclaims":
		return "NodeClaim"
	case "ec2nodeclass", "ec2nodeclasses", "ec2nc", "ec2ncs":
		return "EC2NodeClass"
	case "provisioner", "provisioners":
		return "Provisioner"
	case "awsnodetemplate", "awsnodetemplates":
		return "AWSNodeTemplate"
	case "machine", "machines":
		return "Machine"
	case "node", "nodes", "no":
		return "Node"
	}
	return r
}

var helmValued = map[string]bool{
	"n": true, "namespace": true, "version": true, "set": true, "set-string": true, "set-json": true,
	"set-file": true, "set-literal": true, "f": true, "values": true, "repo": true, "timeout": true,
	"kubeconfig": true, "kube-context": true, "description": true, "post-renderer": true,
	"post-renderer-args": true, "username": true, "password": true, "ca-file": true, "cert-file": true,
	"key-file": true, "kube-apiserver": true, "kube-token": true, "kube-as-user": true,
	"kube-as-group": true, "kube-ca-file": true, "registry-config": true, "repository-cache": true,
	"repository-config": true, "o": true, "output": true, "history-max": true, "max-history": true,
	"labels": true, "l": true, "name-template": true, "cascade": true,
}

// helm reads helm install, upgrade and uninstall.
func (x *execCmd) helm() {
	flags, pos := flagArgs(x.words[1:], helmValued)
	if len(pos) == 0 || pos[0].dyn {
		if len(pos) > 0 {
			x.unread("runs a helm command known only when it runs")
		}
		return
	}
	verb := pos[0].text
	switch verb {
	case "install", "upgrade":
		if x.destroy {
			return
		}
		if x.c.nested {
			x.unread("installs inside a loop or condition, which eksdoctor does not follow")
			return
		}
		x.helmInstall(flags, pos[1:])
	case "uninstall", "delete", "del", "un":
		if !x.destroy {
			return
		}
		if x.c.nested {
			x.unread("uninstalls inside a loop or condition, which eksdoctor does not follow")
			return
		}
		for _, p := range pos[1:] {
			if p.dyn {
				x.unread("uninstalls a release named only when it runs")
				continue
			}
			x.res.destroy.Uninstalls = appendUniq(x.res.destroy.Uninstalls, p.text)
		}
		x.res.destroy.Text = x.text()
	}
}

// helmInstall reads the release a helm install or upgrade with these flags
// and positional arguments (after the verb) installs: its name, chart,
// repository, version and namespace, its --set values and values files.
func (x *execCmd) helmInstall(flags map[string][]shWord, args []shWord) {
	if len(flagValues(flags, "generate-name", "g")) > 0 {
		args = append([]shWord{{text: "", dyn: true}}, args...)
	}
	if len(args) < 2 || args[1].dyn || cluster.IsUnknown(args[1].text) {
		x.unread("installs a chart known only when it runs")
		return
	}
	rel := execRelease{name: args[0].text, chart: args[1].text, line: x.line}
	if args[0].dyn {
		x.unread("installs a release named only when it runs")
		return
	}
	if v, ok := lastFlag(flags, "version"); ok && !v.dyn {
		rel.version = v.text
	}
	if v, ok := lastFlag(flags, "repo"); ok && !v.dyn {
		rel.repo = v.text
	}
	if v, ok := lastFlag(flags, "n", "namespace"); ok {
		if v.dyn {
			x.unread("installs into a namespace known only when it runs")
			return
		}
		rel.namespace = v.text
	}
	if strings.HasPrefix(rel.chart, "oci://") {
		i := strings.LastIndexByte(rel.chart, '/')
		rel.repo, rel.chart = rel.chart[:i], rel.chart[i+1:]
	} else if i := strings.IndexByte(rel.chart, '/'); i > 0 && !strings.HasPrefix(rel.chart, ".") && !strings.HasPrefix(rel.chart, "/") && strings.Count(rel.chart, "/") == 1 && rel.repo == "" {
		// repo/chart: a repository added with helm repo add.
		rel.repo, rel.chart = rel.chart[:i], rel.chart[i+1:]
	}
	rel.helmSets(flags)
	x.helmValues(&rel, flags)
	x.res.releases = append(x.res.releases, rel)
}

// helmSets reads the --set and --set-string values; those known only when
// the command runs, and --set-json, --set-file and --set-literal, are listed
// as unknown.
func (rel *execRelease) helmSets(flags map[string][]shWord) {
	for _, kind := range []string{"set", "set-string"} {
		for _, s := range flags[kind] {
			if s.dyn {
				rel.unknown = appendUniq(rel.unknown, "--"+kind)
				continue
			}
			for _, kv := range splitSet(s.text) {
				k, v, _ := strings.Cut(kv, "=")
				rel.sets = append(rel.sets, execSet{name: k, value: v, str: kind == "set-string"})
			}
		}
	}
	for _, kind := range []string{"set-json", "set-file", "set-literal"} {
		if len(flags[kind]) > 0 {
			rel.unknown = appendUniq(rel.unknown, "--"+kind)
		}
	}
}

// helmValues reads the values files given with -f ("-" is the command's
// input, when known); those it cannot read are listed as unknown.
func (x *execCmd) helmValues(rel *execRelease, flags map[string][]shWord) {
	for _, f := range flagValues(flags, "f", "values") {
		if f.text == "-" && x.stdin != nil && !x.stdinDyn {
			rel.values = append(rel.values, execFile{text: *x.stdin})
			continue
		}
		if f.dyn || f.text == "-" || strings.Contains(f.text, "://") || x.read == nil || cluster.IsUnknown(f.text) {
			rel.unknown = appendUniq(rel.unknown, "-f "+f.text)
			continue
		}
		fs, err := x.read(f.text, false)
		if err != nil || len(fs) != 1 {
			rel.unknown = appendUniq(rel.unknown, "-f "+f.text)
			continue
		}
		rel.values = append(rel.values, fs[0])
	}
}

// splitSet splits a --set value at the commas that separate assignments
// (a\,b escapes one).
func splitSet(s string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s):
			cur.WriteByte(s[i])
			cur.WriteByte(s[i+1])
			i++
		case s[i] == ',':
			// A comma inside {a,b} belongs to a list value.
			if strings.Count(cur.String(), "{") > strings.Count(cur.String(), "}") {
				cur.WriteByte(',')
				continue
			}
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(s[i])
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// dynamicTool reports whether a command whose program is known only when it
// runs ($KUBECTL) is given an action that changes the cluster.
func dynamicTool(words []shWord) bool {
	for _, w := range words[1:] {
		if !w.dyn && actionWords[w.text] {
			return true
		}
	}
	return false
}
