package manifest

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/strvals"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
)

// GitOps tools install Helm charts from objects of their own: an Argo CD
// Application names a chart and the values it passes (spec.source.helm), an
// ApplicationSet makes Applications from one template, a Flux HelmRelease names
// a chart of a HelmRepository (or an OCIRepository) and its values. Those
// values are values like any other: each such object becomes a
// cluster.HelmRelease, described from the knowledge base (or rendered, for a
// chart in the inputs) like a helm_release. What the tool reads from elsewhere
// (values files of another source, ConfigMaps and Secrets) is listed in the
// release's Unknown, never read, so nothing is concluded from its absence.

// LocalCharts are the Helm chart directories among the inputs, for the objects
// that install a chart from a path of their repository (an Argo CD source with
// path, a Flux chart of a GitRepository). Dirs lists them as the loader found
// them; Read returns one's files as the loader reads local charts (inside the
// inputs only). The zero value has none.
type LocalCharts struct {
	Dirs []string
	Read func(dir string) ([]cluster.File, error)
}

// InterpretGitOps adds to m.HelmReleases the Helm releases that the Argo CD
// Applications and ApplicationSets and the Flux HelmReleases among m's objects
// declare. Objects read from a running cluster are left alone: the cluster
// shows what they installed. Call it once, before releases are expanded.
func InterpretGitOps(m *cluster.Model, charts LocalCharts) {
	g := &gitops{m: m, charts: charts, read: map[string]*localChart{}}
	for _, o := range m.Objects {
		if !o.Origin.InFile() {
			continue
		}
		switch gitopsKind(o) {
		case kindApplication:
			g.application(o)
		case kindApplicationSet:
			g.applicationSet(o)
		case kindFluxRelease:
			g.fluxRelease(o)
		}
	}
	if len(g.inputs) > 0 {
		m.Inputs = append(m.Inputs, g.inputs...)
		sort.Strings(m.Inputs)
		m.Inputs = compactStrings(m.Inputs)
	}
}

type gitopsObjectKind int

const (
	_ gitopsObjectKind = iota
	kindApplication
	kindApplicationSet
	kindFluxRelease
)

func gitopsKind(o *cluster.Object) gitopsObjectKind {
	group, version, _ := strings.Cut(o.APIVersion, "/")
	switch {
	case group == "argoproj.io" && o.Kind == "Application":
		return kindApplication
	case group == "argoproj.io" && o.Kind == "ApplicationSet":
		return kindApplicationSet
	case group == "helm.toolkit.fluxcd.io" && o.Kind == "HelmRelease" && strings.HasPrefix(version, "v2"):
		return kindFluxRelease
	}
	return 0
}

type gitops struct {
	m      *cluster.Model
	charts LocalCharts
	read   map[string]*localChart // by directory, nil when unreadable
	inputs []string
	// sources are the Flux source objects by kind/namespace/name.
	sources map[string]*cluster.Object
}

// ---- Argo CD ----

// argoApp is an Application, or the Application template of an ApplicationSet.
type argoApp struct {
	o    *cluster.Object
	spec map[string]any
	// at is the path of spec inside the object ("spec", "spec.template.spec").
	at string
	// name is the Application's name (a template's may hold placeholders).
	name string
	// templated: strings may hold the ApplicationSet's {{...}} placeholders.
	templated bool
	// unknown lists what may change the Applications beyond the template.
	unknown []string
}

func (g *gitops) application(o *cluster.Object) {
	spec, _ := o.Data()["spec"].(map[string]any)
	if spec == nil {
		return
	}
	g.argo(&argoApp{o: o, spec: spec, at: "spec", name: o.Name})
}

// applicationSet reads the Application template once: every Application the
// generators make installs the same chart with the same values, except where
// the template writes placeholders, whose values are not known.
func (g *gitops) applicationSet(o *cluster.Object) {
	set, _ := o.Data()["spec"].(map[string]any)
	tmpl, _ := set["template"].(map[string]any)
	spec, _ := tmpl["spec"].(map[string]any)
	if spec == nil {
		return
	}
	md, _ := tmpl["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	a := &argoApp{o: o, spec: spec, at: "spec.template.spec", name: templateText(name, true), templated: true}
	if _, ok := set["templatePatch"]; ok {
		a.unknown = append(a.unknown, "spec.templatePatch")
	}
	gens, _ := set["generators"].([]any)
	for i, gen := range gens {
		gm, _ := gen.(map[string]any)
		for _, k := range sortedKeys(gm) {
			if sub, ok := gm[k].(map[string]any); ok && sub["template"] != nil {
				a.unknown = append(a.unknown, "spec.generators."+strconv.Itoa(i)+"."+k+".template")
			}
		}
	}
	g.argo(a)
}

// argo reads each source of an Application that installs a Helm chart. With
// spec.sources, Argo CD ignores spec.source.
func (g *gitops) argo(a *argoApp) {
	type src struct {
		s    map[string]any
		path string
	}
	var srcs []src
	if list, ok := a.spec["sources"].([]any); ok && len(list) > 0 {
		for i, it := range list {
			if s, ok := it.(map[string]any); ok {
				srcs = append(srcs, src{s, a.at + ".sources." + strconv.Itoa(i)})
			}
		}
	} else if s, ok := a.spec["source"].(map[string]any); ok {
		srcs = append(srcs, src{s, a.at + ".source"})
	}
	for _, s := range srcs {
		chart, _ := s.s["chart"].(string)
		_, hasPath := s.s["path"]
		_, hasHelm := s.s["helm"]
		switch {
		case chart != "":
			g.argoChart(a, s.s, s.path)
		case s.s["directory"] != nil || s.s["kustomize"] != nil || s.s["plugin"] != nil:
			// Another tool renders the path: a plain directory, Kustomize, a
			// plugin. Manifests among the inputs are read as manifests.
		case hasPath || hasHelm:
			g.argoPath(a, s.s, s.path)
		}
	}
}

// argoTarget is the release name and namespace Argo CD renders a source with:
// helm.releaseName, else the Application's name; helm.namespace, else the
// destination namespace, else Helm's default.
func (g *gitops) argoTarget(a *argoApp, helm map[string]any) (name, namespace string) {
	name = a.name
	if n, _ := helm["releaseName"].(string); n != "" {
		name = templateText(n, a.templated)
	}
	dest, _ := a.spec["destination"].(map[string]any)
	namespace, _ = dest["namespace"].(string)
	if n, _ := helm["namespace"].(string); n != "" {
		namespace = n
	}
	namespace = templateText(namespace, a.templated)
	if namespace == "" {
		namespace = "default"
	}
	return name, namespace
}

// argoChart reads a source that installs a chart of a Helm repository.
func (g *gitops) argoChart(a *argoApp, s map[string]any, sp string) {
	helm, _ := s["helm"].(map[string]any)
	name, ns := g.argoTarget(a, helm)
	chart, _ := s["chart"].(string)
	repo, _ := s["repoURL"].(string)
	rev, _ := s["targetRevision"].(string)
	r := newGitOpsRelease(a.o, sp, name, ns)
	r.Chart = templateText(chart, a.templated)
	r.Repository = templateText(repo, a.templated)
	r.Version = chartVersion(templateText(rev, a.templated))
	if cluster.IsUnknown(r.Chart) {
		// Which chart is installed depends on the generator: nothing of it
		// is known.
		r.Unknown = append(r.Unknown, sp+".chart")
	}
	vs := g.argoValues(a, helm, sp+".helm", nil)
	vs.unknown = append(vs.unknown, a.unknown...)
	vs.applyTo(r)
	g.m.HelmReleases = append(g.m.HelmReleases, r)
}

// argoPath reads a source that installs the chart at a path of a repository:
// the chart is read when the inputs hold that path.
func (g *gitops) argoPath(a *argoApp, s map[string]any, sp string) {
	helm, _ := s["helm"].(map[string]any)
	p, _ := s["path"].(string)
	repo, _ := s["repoURL"].(string)
	if a.templated && strings.Contains(p, "{{") {
		g.notFollowed(a.o, sp, fmt.Sprintf("%s installs what the path %s of %s holds, which depends on its generators", a.o.Ref(), p, repo), helm != nil)
		return
	}
	lc, dir, why := g.findChart(a.o, p)
	if lc == nil {
		if helm != nil || why != "" {
			g.notFollowed(a.o, sp, fmt.Sprintf("%s installs the Helm chart at path %s of %s, %s", a.o.Ref(), p, repo, orDefault(why, "which is not among the inputs")), true)
		}
		return
	}
	name, ns := g.argoTarget(a, helm)
	vs := g.argoValues(a, helm, sp+".helm", lc)
	vs.unknown = append(vs.unknown, a.unknown...)
	g.localRelease(a.o, sp, name, ns, dir, lc, vs)
}

// argoValues reads the values an Argo CD Helm source passes, in the order Argo
// CD gives them to helm template: the valueFiles, then helm.values or
// helm.valuesObject (Argo CD reads valuesObject alone when it is set), then
// the parameters (--set, --set-string with forceString, which Helm applies
// after --set). Value files of the chart read from the inputs are read; any
// other is unknown. lc is the chart when it is read from the inputs.
func (g *gitops) argoValues(a *argoApp, helm map[string]any, hp string, lc *localChart) *valueSet {
	vs := newValueSet()
	if helm == nil {
		return vs
	}
	g.argoValueFiles(a, helm, hp, lc, vs)
	g.argoInlineValues(a, helm, hp, vs)
	g.argoParameters(a, helm, hp, vs)
	if fp, ok := helm["fileParameters"].([]any); ok && len(fp) > 0 {
		vs.unknown = append(vs.unknown, hp+".fileParameters")
	}
	return vs
}

// argoValueFiles merges into vs the valueFiles of the chart lc read from the
// inputs; any other (or one named by a template) is unknown.
func (g *gitops) argoValueFiles(a *argoApp, helm map[string]any, hp string, lc *localChart, vs *valueSet) {
	files, _ := helm["valueFiles"].([]any)
	for i, f := range files {
		name, _ := f.(string)
		at := hp + ".valueFiles." + strconv.Itoa(i)
		if lc == nil || a.templated && strings.Contains(name, "{{") {
			vs.unknown = append(vs.unknown, at+" ("+name+")")
			continue
		}
		file, data, ok := lc.valuesFile(name)
		if !ok {
			vs.unknown = append(vs.unknown, at+" ("+name+")")
			continue
		}
		vals, origins, err := parseValuesText(data, file, 0, false)
		if err != nil {
			g.m.Problems = append(g.m.Problems, cluster.Problem{Origin: cluster.Origin{File: file}, Unresolved: true,
				Message: fmt.Sprintf("the values file %s of %s cannot be read as Helm values (%v); what it sets is not known", name, a.o.Ref(), err)})
			vs.unknown = append(vs.unknown, at+" ("+name+")")
			continue
		}
		g.inputs = append(g.inputs, file)
		vs.merge(vals, origins)
	}
}

// argoInlineValues merges into vs helm.valuesObject, else helm.values (a
// YAML text, whose origins are its own lines in the object's file).
func (g *gitops) argoInlineValues(a *argoApp, helm map[string]any, hp string, vs *valueSet) {
	if vo, set := helm["valuesObject"]; set && vo != nil {
		at := hp + ".valuesObject"
		vm, ok := vo.(map[string]any)
		if !ok {
			vs.unknown = append(vs.unknown, at)
		} else {
			vals, _ := templateValue(vm, a.templated, 0).(map[string]any)
			vs.merge(vals, objectOrigins(a.o, at, vals))
		}
		if text, _ := helm["values"].(string); strings.TrimSpace(text) != "" {
			g.m.Notes = append(g.m.Notes, cluster.Note{Origin: a.o.At(hp + ".values"), Subject: a.o.Ref().String(),
				Message: "helm.values is not used: Argo CD passes helm.valuesObject alone when both are set"})
		}
		return
	}
	v, set := helm["values"]
	if !set || v == nil {
		return
	}
	at := hp + ".values"
	text, ok := v.(string)
	if !ok {
		vs.unknown = append(vs.unknown, at)
		return
	}
	if strings.TrimSpace(text) == "" {
		return
	}
	org := a.o.At(at)
	// A multi-line string is a block scalar: its text starts on the
	// line after the key. A one-line string is at the key's line.
	offset, oneLine := org.Line, !strings.Contains(strings.TrimRight(text, "\n"), "\n")
	if org.Line <= 0 {
		offset = 0
	}
	vals, origins, err := parseValuesText([]byte(templateText(text, a.templated)), org.File, offset, oneLine)
	if err != nil {
		if !a.templated {
			g.m.Problems = append(g.m.Problems, cluster.Problem{Origin: org, Object: a.o.Ref(), Unresolved: true,
				Message: fmt.Sprintf("%s of %s cannot be read as Helm values (%v); what it sets is not known", at, a.o.Ref(), err)})
		}
		vs.unknown = append(vs.unknown, at)
		return
	}
	vs.merge(vals, origins)
}

// argoParameters sets in vs the helm.parameters: those without forceString
// first (--set), then those with it (--set-string).
func (g *gitops) argoParameters(a *argoApp, helm map[string]any, hp string, vs *valueSet) {
	params, _ := helm["parameters"].([]any)
	for _, forceString := range []bool{false, true} {
		for i, it := range params {
			p, _ := it.(map[string]any)
			fs, _ := p["forceString"].(bool)
			if p == nil || fs != forceString {
				continue
			}
			at := hp + ".parameters." + strconv.Itoa(i)
			name, _ := p["name"].(string)
			if name == "" {
				continue
			}
			if a.templated && strings.Contains(name, "{{") {
				vs.unknown = append(vs.unknown, at)
				continue
			}
			value := scalarText(p["value"])
			if a.templated {
				value = templateText(value, true)
			}
			if err := vs.set(name, value, forceString); err != nil {
				g.m.Problems = append(g.m.Problems, cluster.Problem{Origin: a.o.At(at), Object: a.o.Ref(), Unresolved: true,
					Message: fmt.Sprintf("Helm parameter %q of %s: %v; what it sets is not known", name, a.o.Ref(), err)})
				vs.unknown = append(vs.unknown, at)
				continue
			}
			vs.origins[setKey(name)] = a.o.At(at)
		}
	}
}

// ---- Flux ----

// fluxRelease reads a Flux HelmRelease (helm.toolkit.fluxcd.io/v2, v2beta1,
// v2beta2): the chart of spec.chart (from a HelmRepository, or a path of a
// GitRepository or Bucket) or of spec.chartRef (an OCIRepository), installed
// as spec.releaseName (else [targetNamespace-]name) in spec.targetNamespace
// (else the object's namespace), with spec.values over what spec.valuesFrom
// reads from ConfigMaps and Secrets, which is not known.
func (g *gitops) fluxRelease(o *cluster.Object) {
	spec, _ := o.Data()["spec"].(map[string]any)
	if spec == nil {
		return
	}
	ns := o.Namespace
	if ns == "" {
		ns = "default"
	}
	target, _ := spec["targetNamespace"].(string)
	name, _ := spec["releaseName"].(string)
	if name == "" {
		name = o.Name
		if target != "" {
			name = target + "-" + o.Name
		}
	}
	releaseNS := ns
	if target != "" {
		releaseNS = target
	}
	vs := fluxValues(o, spec)
	if cs, ok := lookupMap(spec, "chart", "spec"); ok {
		g.fluxChart(o, cs, ns, name, releaseNS, vs)
		return
	}
	if ref, ok := spec["chartRef"].(map[string]any); ok {
		g.fluxChartRef(o, ref, ns, name, releaseNS, vs)
	}
}

// fluxValues reads a HelmRelease's spec.values; what spec.valuesFrom reads
// from ConfigMaps and Secrets, and what post-renderers change, is unknown.
func fluxValues(o *cluster.Object, spec map[string]any) *valueSet {
	vs := newValueSet()
	if from, ok := spec["valuesFrom"].([]any); ok {
		for i, it := range from {
			ref, _ := it.(map[string]any)
			kind, _ := ref["kind"].(string)
			rn, _ := ref["name"].(string)
			// The content of a Secret stays where it is: only its name is said.
			vs.unknown = append(vs.unknown, fmt.Sprintf("spec.valuesFrom.%d (%s %s)", i, kind, rn))
		}
	}
	if v, set := spec["values"]; set && v != nil {
		if vm, ok := v.(map[string]any); ok {
			vs.merge(cluster.CopyJSON(vm).(map[string]any), objectOrigins(o, "spec.values", vm))
		} else {
			vs.unknown = append(vs.unknown, "spec.values")
		}
	}
	if pr, ok := spec["postRenderers"].([]any); ok && len(pr) > 0 {
		vs.unknown = append(vs.unknown, "spec.postRenderers")
	}
	return vs
}

// fluxChart reads the release of a HelmRelease's spec.chart.spec cs: a chart
// of a HelmRepository, or at a path of a GitRepository or Bucket among the
// inputs. ns is the HelmRelease's namespace, where sources are by default.
func (g *gitops) fluxChart(o *cluster.Object, cs map[string]any, ns, name, releaseNS string, vs *valueSet) {
	for _, k := range []string{"valuesFiles", "valuesFile"} {
		if v, set := cs[k]; set && v != nil && v != "" {
			vs.unknown = append(vs.unknown, "spec.chart.spec."+k)
		}
	}
	chart, _ := cs["chart"].(string)
	version, _ := cs["version"].(string)
	ref, _ := cs["sourceRef"].(map[string]any)
	kind, _ := ref["kind"].(string)
	rn, _ := ref["name"].(string)
	rns, _ := ref["namespace"].(string)
	if rns == "" {
		rns = ns
	}
	if chart == "" {
		return
	}
	switch kind {
	case "HelmRepository", "":
		r := newGitOpsRelease(o, "spec.chart", name, releaseNS)
		r.Chart, r.Version = chart, chartVersion(version)
		if repo := g.findSource("HelmRepository", rns, rn); repo != nil {
			r.Repository = repo.String("spec.url")
		}
		vs.applyTo(r)
		g.m.HelmReleases = append(g.m.HelmReleases, r)
	case "GitRepository", "Bucket":
		lc, dir, why := g.findChart(o, chart)
		if lc == nil {
			g.notFollowed(o, "spec.chart", fmt.Sprintf("%s installs the Helm chart at path %s of %s %s, %s", o.Ref(), chart, kind, rn, orDefault(why, "which is not among the inputs")), true)
			return
		}
		g.localRelease(o, "spec.chart", name, releaseNS, dir, lc, vs)
	default:
		g.notFollowed(o, "spec.chart", fmt.Sprintf("%s installs chart %s from %s %s, which eksdoctor does not read", o.Ref(), chart, kind, rn), true)
	}
}

// fluxChartRef reads the release of a HelmRelease's spec.chartRef ref: the
// chart an OCIRepository among the inputs names, at the version its
// spec.ref selects. ns is the HelmRelease's namespace, where sources are by
// default.
func (g *gitops) fluxChartRef(o *cluster.Object, ref map[string]any, ns, name, releaseNS string, vs *valueSet) {
	kind, _ := ref["kind"].(string)
	rn, _ := ref["name"].(string)
	rns, _ := ref["namespace"].(string)
	if rns == "" {
		rns = ns
	}
	src := g.findSource(kind, rns, rn)
	if kind != "OCIRepository" || src == nil {
		g.notFollowed(o, "spec.chartRef", fmt.Sprintf("%s installs the chart of %s %s/%s, which is not among the inputs", o.Ref(), kind, rns, rn), true)
		return
	}
	url := strings.TrimRight(src.String("spec.url"), "/")
	i := strings.LastIndexByte(url, '/')
	if i < 0 || i == len(url)-1 {
		g.notFollowed(o, "spec.chartRef", fmt.Sprintf("%s installs the chart of OCIRepository %s/%s, whose spec.url %q names no chart", o.Ref(), rns, rn, url), true)
		return
	}
	r := newGitOpsRelease(o, "spec.chartRef", name, releaseNS)
	r.Chart, r.Repository = url[i+1:], url[:i]
	switch {
	case src.String("spec.ref.digest") != "":
		r.Version = cluster.Unknown("the chart version of digest " + src.String("spec.ref.digest"))
	case src.String("spec.ref.semver") != "":
		r.Version = chartVersion(src.String("spec.ref.semver"))
	case src.String("spec.ref.tag") != "":
		r.Version = chartVersion(src.String("spec.ref.tag"))
	default:
		r.Version = cluster.Unknown("the chart version tagged latest")
	}
	vs.applyTo(r)
	g.m.HelmReleases = append(g.m.HelmReleases, r)
}

// findSource finds a Flux source object (source.toolkit.fluxcd.io) by kind,
// namespace and name; one without a namespace is in the default namespace.
func (g *gitops) findSource(kind, namespace, name string) *cluster.Object {
	if g.sources == nil {
		g.sources = map[string]*cluster.Object{}
		for _, o := range g.m.Objects {
			group, _, _ := strings.Cut(o.APIVersion, "/")
			if group != "source.toolkit.fluxcd.io" {
				continue
			}
			ns := o.Namespace
			if ns == "" {
				ns = "default"
			}
			if k := o.Kind + "/" + ns + "/" + o.Name; g.sources[k] == nil {
				g.sources[k] = o
			}
		}
	}
	return g.sources[kind+"/"+namespace+"/"+name]
}

// ---- releases ----

// newGitOpsRelease is a release an object declares at path sp. It is not
// Terraform's: Address stays empty.
func newGitOpsRelease(o *cluster.Object, sp, name, namespace string) *cluster.HelmRelease {
	return &cluster.HelmRelease{
		Name:         name,
		Namespace:    namespace,
		Values:       map[string]any{},
		ValueOrigins: map[string]cluster.Origin{},
		Origin:       o.At(sp),
		Decl:         cluster.Decl{Kind: cluster.DeclGitOps, Object: o, List: sp},
	}
}

// notFollowed says that what an object installs is not analysed.
func (g *gitops) notFollowed(o *cluster.Object, sp, what string, say bool) {
	if !say {
		return
	}
	g.m.Problems = append(g.m.Problems, cluster.Problem{Origin: o.At(sp), Object: o.Ref(), Unresolved: true,
		Message: what + ": what it creates is not analysed"})
}

// valueSet is the values a release passes, with where each key is set and the
// sources of values that cannot be read.
type valueSet struct {
	values  map[string]any
	origins map[string]cluster.Origin
	unknown []string
}

func newValueSet() *valueSet {
	return &valueSet{values: map[string]any{}, origins: map[string]cluster.Origin{}}
}

// merge merges values as Helm merges values files, with their origins.
func (vs *valueSet) merge(vals map[string]any, origins map[string]cluster.Origin) {
	mergeHelmValues(vs.values, vals, 0)
	for k, o := range origins {
		vs.origins[k] = o
	}
}

// set applies one parameter as helm template --set (or --set-string) gets it
// from Argo CD: commas in the value are escaped, unless the value is a {list}.
func (vs *valueSet) set(name, value string, forceString bool) error {
	if !(strings.HasPrefix(value, "{") && strings.HasSuffix(value, "}")) {
		value = escapeCommas(value)
	}
	if forceString {
		return strvals.ParseIntoString(name+"="+value, vs.values)
	}
	return strvals.ParseInto(name+"="+value, vs.values)
}

func (vs *valueSet) applyTo(r *cluster.HelmRelease) {
	r.Values = vs.values
	r.ValueOrigins = vs.origins
	r.Unknown = append(r.Unknown, vs.unknown...)
}

// sub is the part of a value set under a top-level key, as a subchart
// receives it.
func (vs *valueSet) sub(key string) *valueSet {
	out := newValueSet()
	if m, ok := vs.values[key].(map[string]any); ok {
		out.values = cluster.CopyJSON(m).(map[string]any)
	}
	for k, o := range vs.origins {
		if rest, ok := strings.CutPrefix(k, key+"."); ok {
			out.origins[rest] = o
		}
	}
	out.unknown = append(out.unknown, vs.unknown...)
	return out
}

// ---- charts in the inputs ----

// localChart is a chart directory of the inputs as the loader read it.
type localChart struct {
	dir   string
	files []cluster.File
}

func (lc *localChart) file(name string) ([]byte, bool) {
	for _, f := range lc.files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return nil, false
}

// valuesFile finds a values file an Argo CD source names relative to the
// chart; a file of another source ($ref/...), of another repository, or
// outside the chart is not read.
func (lc *localChart) valuesFile(name string) (string, []byte, bool) {
	if name == "" || strings.HasPrefix(name, "$") || strings.Contains(name, "://") || path.IsAbs(name) {
		return "", nil, false
	}
	clean := path.Clean(name)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", nil, false
	}
	data, ok := lc.file(clean)
	return filepath.Join(lc.dir, filepath.FromSlash(clean)), data, ok
}

// findChart finds the chart a path of a repository names among the chart
// directories of the inputs: the repository's root is a directory above the
// object's file (the path is relative to it). why says why none is taken.
func (g *gitops) findChart(o *cluster.Object, p string) (*localChart, string, string) {
	if len(g.charts.Dirs) == 0 || g.charts.Read == nil {
		return nil, "", ""
	}
	rel := strings.TrimPrefix(path.Clean(strings.TrimSpace(filepath.ToSlash(p))), "/")
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, "", "a path that leaves the repository"
	}
	var found []string
	for dir := filepath.Dir(o.Origin.File); ; dir = filepath.Dir(dir) {
		want := filepath.Clean(filepath.Join(dir, filepath.FromSlash(rel)))
		for _, d := range g.charts.Dirs {
			if filepath.Clean(d) == want && !containsString(found, d) {
				found = append(found, d)
			}
		}
		if parent := filepath.Dir(dir); parent == dir {
			break
		}
	}
	switch len(found) {
	case 0:
		return nil, "", ""
	case 1:
	default:
		return nil, "", fmt.Sprintf("which several chart directories of the inputs could be (%s)", strings.Join(found, ", "))
	}
	dir := found[0]
	if lc, seen := g.read[dir]; seen {
		if lc == nil {
			return nil, "", "whose files cannot be read"
		}
		return lc, dir, ""
	}
	files, err := g.charts.Read(dir)
	if err != nil {
		g.read[dir] = nil
		return nil, "", "whose files cannot be read (" + err.Error() + ")"
	}
	lc := &localChart{dir: dir, files: files}
	g.read[dir] = lc
	return lc, dir, ""
}

// chartMeta is what Chart.yaml (and Chart.lock) say of a chart.
type chartMeta struct {
	Name         string            `yaml:"name"`
	Version      string            `yaml:"version"`
	Dependencies []chartDependency `yaml:"dependencies"`
}

type chartDependency struct {
	Name       string   `yaml:"name"`
	Version    string   `yaml:"version"`
	Repository string   `yaml:"repository"`
	Alias      string   `yaml:"alias"`
	Condition  string   `yaml:"condition"`
	Tags       []string `yaml:"tags"`
}

func (d chartDependency) key() string {
	if d.Alias != "" {
		return d.Alias
	}
	return d.Name
}

// localRelease reads a chart of the inputs an object installs with the values
// vs. The chart itself is rendered from its files when it has templates of its
// own or charts in charts/. Each dependency of Chart.yaml that charts/ does
// not hold and that a repository serves is a release of its own, described
// from the knowledge base, with the values under its name (or alias): the
// chart's values.yaml, then what the object passes. Dependencies of those
// dependencies are not followed. When the chart is only a wrapper (no
// templates, no charts/) around one such dependency, the top-level keys that
// go to no dependency (nor global) are read by no template at all: the
// dependency's release carries them, where its chart does not read them
// either, so that they are judged.
func (g *gitops) localRelease(o *cluster.Object, sp, name, ns, dir string, lc *localChart, vs *valueSet) {
	var meta chartMeta
	chartFile := filepath.Join(dir, "Chart.yaml")
	if data, ok := lc.file("Chart.yaml"); !ok || yaml.Unmarshal(data, &meta) != nil {
		g.notFollowed(o, sp, fmt.Sprintf("%s installs the chart %s, whose Chart.yaml cannot be read", o.Ref(), dir), true)
		return
	}
	g.inputs = append(g.inputs, chartFile)
	var lock chartMeta
	if data, ok := lc.file("Chart.lock"); ok {
		_ = yaml.Unmarshal(data, &lock)
	}
	templates, vendored := false, map[string]bool{}
	for _, f := range lc.files {
		if rest, ok := strings.CutPrefix(f.Name, "templates/"); ok {
			base := path.Base(rest)
			if base != "NOTES.txt" && !strings.HasPrefix(base, "_") {
				templates = true
			}
		}
		if rest, ok := strings.CutPrefix(f.Name, "charts/"); ok {
			sub, _, _ := strings.Cut(rest, "/")
			vendored[vendoredName(sub)] = true
		}
	}
	defaults := newValueSet()
	if data, ok := lc.file("values.yaml"); ok {
		file := filepath.Join(dir, "values.yaml")
		vals, origins, err := parseValuesText(data, file, 0, false)
		if err != nil {
			g.m.Problems = append(g.m.Problems, cluster.Problem{Origin: cluster.Origin{File: file}, Unresolved: true,
				Message: fmt.Sprintf("the values.yaml of chart %s cannot be read as Helm values (%v); the values it passes to its dependencies are not known", dir, err)})
			defaults.unknown = append(defaults.unknown, file)
		} else {
			g.inputs = append(g.inputs, file)
			defaults.merge(vals, origins)
		}
	}
	// What the chart's templates and dependencies see: its values.yaml with
	// the object's values over it.
	all := newValueSet()
	all.merge(cluster.CopyJSON(defaults.values).(map[string]any), defaults.origins)
	all.merge(cluster.CopyJSON(vs.values).(map[string]any), vs.origins)
	all.unknown = append(append(all.unknown, defaults.unknown...), vs.unknown...)

	self := templates || len(vendored) > 0 || len(meta.Dependencies) == 0
	if self {
		files := lc.files
		r := newGitOpsRelease(o, sp, name, ns)
		r.Chart, r.Version = meta.Name, meta.Version
		r.ChartDir, r.ChartFiles = dir, files
		vs.applyTo(r)
		g.m.HelmReleases = append(g.m.HelmReleases, r)
	}
	// The keys Helm reads itself: each dependency's, those its conditions
	// and tags name, global.
	keys := map[string]bool{"global": true, "tags": true}
	var deps []*cluster.HelmRelease
	for _, d := range meta.Dependencies {
		keys[d.key()] = true
		for _, c := range strings.Split(d.Condition, ",") {
			root, _, _ := strings.Cut(strings.TrimSpace(c), ".")
			keys[root] = true
		}
		if d.Name == "" || vendored[d.Name] {
			continue
		}
		at := fmt.Sprintf("the dependency %s of chart %s", d.Name, dir)
		if !strings.HasPrefix(d.Repository, "https://") && !strings.HasPrefix(d.Repository, "http://") && !strings.HasPrefix(d.Repository, "oci://") {
			g.notFollowed(o, sp, fmt.Sprintf("%s installs %s (repository %q), which is not followed", o.Ref(), at, d.Repository), true)
			continue
		}
		enabled, known := dependencyEnabled(d, all.values)
		if known && !enabled {
			continue
		}
		r := newGitOpsRelease(o, sp, name, ns)
		r.Chart, r.Repository = d.Name, d.Repository
		r.Version = chartVersion(d.Version)
		if v := lockedVersion(lock, d); v != "" {
			r.Version = v
		}
		if !known {
			r.Conditional = fmt.Sprintf("the condition %s of dependency %s", d.Condition, d.key())
		}
		all.sub(d.key()).applyTo(r)
		r.Parent = d.key()
		r.Decl.Key = d.key()
		deps = append(deps, r)
	}
	if !self && len(deps) == 1 {
		strayValues(deps[0], all, keys)
	}
	g.m.HelmReleases = append(g.m.HelmReleases, deps...)
}

// strayValues gives a wrapper chart's dependency release the top-level keys of
// the wrapper's values that no chart receives, when its chart version reads
// nothing under them (so they change nothing it renders).
func strayValues(r *cluster.HelmRelease, all *valueSet, keys map[string]bool) {
	kb, ok := catalog.ChartFor(r.Chart, plainVersion(r.Version))
	if !ok {
		return
	}
	read := kb.ValuesKeys()
	for _, k := range sortedKeys(all.values) {
		if keys[k] || cluster.IsUnknown(k) || kb.ValuesKey(k) == catalog.ChartKeyUnverified {
			continue
		}
		taken := false
		for _, rk := range read {
			if rk == k || strings.HasPrefix(rk, k+".") {
				taken = true
				break
			}
		}
		if taken {
			continue
		}
		r.Values[k] = cluster.CopyJSON(all.values[k])
		r.Stray = append(r.Stray, k)
		for key, org := range all.origins {
			if key == k || strings.HasPrefix(key, k+".") {
				r.ValueOrigins[key] = org
			}
		}
	}
}

// dependencyEnabled evaluates a dependency's condition (the first of its
// comma-separated paths that holds a boolean) and tags as Helm does; known is
// false when the value deciding it is not known.
func dependencyEnabled(d chartDependency, values map[string]any) (enabled, known bool) {
	if d.Condition != "" {
		for _, c := range strings.Split(d.Condition, ",") {
			switch v := cluster.Lookup(values, strings.TrimSpace(c)).(type) {
			case bool:
				return v, true
			case string:
				if cluster.IsUnknown(v) {
					return true, false
				}
			}
		}
	}
	tags, _ := values["tags"].(map[string]any)
	hasTrue, hasFalse := false, false
	for _, t := range d.Tags {
		switch v := tags[t].(type) {
		case bool:
			if v {
				hasTrue = true
			} else {
				hasFalse = true
			}
		case string:
			if cluster.IsUnknown(v) {
				return true, false
			}
		}
	}
	return hasTrue || !hasFalse, true
}

// lockedVersion is the version Chart.lock resolved a dependency to.
func lockedVersion(lock chartMeta, d chartDependency) string {
	for _, l := range lock.Dependencies {
		if l.Name == d.Name && l.Repository == d.Repository && exactVersion.MatchString(l.Version) {
			return l.Version
		}
	}
	return ""
}

// vendoredName is the chart name of an entry of charts/: a directory, or an
// archive name-version.tgz.
func vendoredName(entry string) string {
	name, ok := strings.CutSuffix(entry, ".tgz")
	if !ok {
		return entry
	}
	for i := 1; i < len(name); i++ {
		if name[i] == '-' && exactVersion.MatchString(name[i+1:]) {
			return name[:i]
		}
	}
	return name
}

// ---- versions ----

var exactVersion = regexp.MustCompile(`^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// chartVersion is the chart version a GitOps tool installs for what the user
// wrote: the version itself when it is exact, "" when none is given, and not
// known when it is a range (the tool takes the newest version in it).
func chartVersion(v string) string {
	v = strings.TrimSpace(v)
	switch {
	case v == "" || v == "*":
		return ""
	case cluster.IsUnknown(v), exactVersion.MatchString(v):
		return v
	}
	return cluster.Unknown("the newest chart version matching " + plainText(v))
}

// plainVersion is a version the knowledge base can look up; "" when unknown.
func plainVersion(v string) string {
	if cluster.IsUnknown(v) {
		return ""
	}
	return v
}

// ---- values ----

// maxValuesDepth bounds how deep values are copied.
const maxValuesDepth = 64

// mergeHelmValues merges src into dst as Helm merges values files: maps key by
// key, any other value replaced.
func mergeHelmValues(dst, src map[string]any, depth int) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok && depth < maxValuesDepth {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeHelmValues(dm, sm, depth+1)
				continue
			}
		}
		dst[k] = v
	}
}

// objectOrigins records where each key of values written in an object at path
// is: its line when the object indexes it, else its closest indexed parent's.
func objectOrigins(o *cluster.Object, at string, vals map[string]any) map[string]cluster.Origin {
	out := map[string]cluster.Origin{}
	var walk func(m map[string]any, key string, depth int)
	walk = func(m map[string]any, key string, depth int) {
		if depth > maxValuesDepth {
			return
		}
		for k, v := range m {
			dotted := joinKey(key, k)
			out[dotted] = o.At(at + "." + dotted)
			if sub, ok := v.(map[string]any); ok {
				walk(sub, dotted, depth+1)
			}
		}
	}
	walk(vals, "", 0)
	return out
}

func joinKey(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// parseValuesText reads Helm values written as YAML text, with the origin of
// every dotted key. Lines count from offset (the text's first line is
// offset+1); oneLine puts every key at line offset, for text written on one line.
func parseValuesText(data []byte, file string, offset int, oneLine bool) (map[string]any, map[string]cluster.Origin, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, nil, fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	origins := map[string]cluster.Origin{}
	if len(root.Content) == 0 {
		return map[string]any{}, origins, nil
	}
	node := root.Content[0]
	if node.Kind == yaml.ScalarNode && node.ShortTag() == "!!null" {
		return map[string]any{}, origins, nil
	}
	if node.Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("line %d: values must be a mapping", node.Line)
	}
	line := func(n int) int {
		if oneLine {
			return offset
		}
		return offset + n
	}
	v, err := valuesNode(NewBudget(&root), node, file, "", origins, line, 0)
	if err != nil {
		return nil, nil, err
	}
	m, _ := v.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m, origins, nil
}

func valuesNode(b *Budget, n *yaml.Node, file, key string, origins map[string]cluster.Origin, line func(int) int, depth int) (any, error) {
	if depth > maxValuesDepth {
		return nil, fmt.Errorf("line %d: values nested too deeply", n.Line)
	}
	if err := b.Spend(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n.Line, err)
	}
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, nil
		}
		return valuesNode(b, n.Alias, file, key, nil, line, depth+1)
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.Tag != "!!str" {
				merged, err := valuesNode(b, val, file, key, nil, line, depth+1)
				if err != nil {
					return nil, err
				}
				mm, _ := merged.(map[string]any)
				for mk, mv := range mm {
					if _, exists := m[mk]; !exists {
						m[mk] = mv
					}
				}
				continue
			}
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: values keys must be strings", k.Line)
			}
			p := joinKey(key, k.Value)
			if origins != nil {
				origins[p] = cluster.Origin{File: file, Line: line(k.Line), Path: p}
			}
			x, err := valuesNode(b, val, file, p, origins, line, depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = x
		}
		return m, nil
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, it := range n.Content {
			x, err := valuesNode(b, it, file, key, nil, line, depth+1)
			if err != nil {
				return nil, err
			}
			l = append(l, x)
		}
		return l, nil
	case yaml.ScalarNode:
		return scalar(n), nil
	}
	return nil, nil
}

// setKey renders a --set name as a dotted values key: escaped dots belong to
// the key, list indexes are path elements ("a[0].b" is "a.0.b").
func setKey(name string) string {
	var parts []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			parts = append(parts, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c == '\\' && i+1 < len(name):
			i++
			cur.WriteByte(name[i])
		case c == '.':
			flush()
		case c == '[':
			flush()
			j := strings.IndexByte(name[i:], ']')
			if j < 0 {
				cur.WriteString(name[i+1:])
				i = len(name)
				continue
			}
			parts = append(parts, name[i+1:i+j])
			i += j
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return strings.Join(parts, ".")
}

// escapeCommas escapes the commas --set would split on, as Argo CD does.
func escapeCommas(s string) string {
	var b strings.Builder
	prev := byte(0)
	for i := 0; i < len(s); i++ {
		if s[i] == ',' && prev != '\\' {
			b.WriteString(`\,`)
		} else {
			b.WriteByte(s[i])
		}
		prev = s[i]
	}
	return b.String()
}

// scalarText is a parameter value as Argo CD passes it: a string.
func scalarText(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case map[string]any, []any:
		return ""
	}
	return fmt.Sprint(v)
}

// ---- ApplicationSet placeholders ----

// argoPlaceholder is a placeholder of an ApplicationSet template ({{cluster}},
// {{ .metadata.labels.env }}).
var argoPlaceholder = regexp.MustCompile(`(?s)\{\{.*?\}\}`)

// templateText turns the placeholders of an ApplicationSet template into
// values not known: the generators fill them, one Application at a time.
func templateText(s string, templated bool) string {
	if !templated || !strings.Contains(s, "{{") {
		return s
	}
	return argoPlaceholder.ReplaceAllStringFunc(s, func(p string) string {
		return cluster.Unknown(plainText(strings.TrimSpace(p[2 : len(p)-2])))
	})
}

// templateValue copies a value, turning placeholders into values not known.
func templateValue(v any, templated bool, depth int) any {
	if depth > maxValuesDepth {
		return cluster.Unknown("values nested too deeply")
	}
	switch t := v.(type) {
	case string:
		return templateText(t, templated)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[templateText(k, templated)] = templateValue(x, templated, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = templateValue(x, templated, depth+1)
		}
		return out
	}
	return cluster.CopyJSON(v)
}

// plainText keeps the characters of an expression that cannot end or nest a
// placeholder, so it reads as one value not known.
func plainText(s string) string {
	if len(s) > 80 {
		s = s[:80]
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '{', '}', '\n', '\r', '\t':
			return ' '
		}
		return r
	}, s)
}

// ---- writing values ----

// GitOpsValuesEdit merges values into the values of a release a GitOps object
// declares, as a YAML merge patch of the object: d.Object is the Argo CD
// Application or ApplicationSet or the Flux HelmRelease, d.List the path of
// the release's source in it ("spec.source", "spec.sources.1",
// "spec.template.spec.source", "spec.chart"), d.Key the dependency the release
// is, for a chart of the inputs that wraps it ("" for the chart itself). The
// values go where they win over every other values source of the object:
// Argo CD's helm.valuesObject, Flux's spec.values. ok is false, and nothing is
// written, when that place would not do what the values say: a key a Helm
// parameter sets (parameters win over valuesObject), values written as
// helm.values text (Argo CD would ignore it once valuesObject is set), values
// a wrapper chart passes to a dependency, an ApplicationSet value made from a
// placeholder, an object that is not a manifest file of its own.
func GitOpsValuesEdit(d cluster.Decl, values map[string]any) (cluster.Edit, bool) {
	o := d.Object
	if o == nil || o.Via != "" || !IsManifestFile(o.Origin.File) || d.Key != "" || len(values) == 0 {
		return cluster.Edit{}, false
	}
	kind := gitopsKind(o)
	switch kind {
	case kindFluxRelease:
		if d.List != "spec.chart" && d.List != "spec.chartRef" {
			return cluster.Edit{}, false
		}
		return PatchEdit(o, map[string]any{"spec": map[string]any{"values": cluster.CopyJSON(values)}}), true
	case kindApplication, kindApplicationSet:
	default:
		return cluster.Edit{}, false
	}
	if kind == kindApplicationSet && holdsUnknownValue(values) {
		return cluster.Edit{}, false
	}
	src, ok := o.Get(d.List).(map[string]any)
	if !ok {
		return cluster.Edit{}, false
	}
	helm, _ := src["helm"].(map[string]any)
	if text, _ := helm["values"].(string); strings.TrimSpace(text) != "" && helm["valuesObject"] == nil {
		return cluster.Edit{}, false
	}
	params, _ := helm["parameters"].([]any)
	for _, k := range patchKeys(values) {
		for _, it := range params {
			p, _ := it.(map[string]any)
			name, _ := p["name"].(string)
			pk := setKey(name)
			if pk == k || strings.HasPrefix(pk, k+".") || strings.HasPrefix(k, pk+".") {
				return cluster.Edit{}, false
			}
		}
	}
	list, index, isItem := splitSourcePath(d.List)
	if !isItem {
		return PatchEdit(o, nestPatch(d.List+".helm.valuesObject", cluster.CopyJSON(values))), true
	}
	items, ok := o.Get(list).([]any)
	if !ok || index >= len(items) {
		return cluster.Edit{}, false
	}
	items = cluster.CopyJSON(items).([]any)
	item, _ := items[index].(map[string]any)
	h, _ := item["helm"].(map[string]any)
	if h == nil {
		h = map[string]any{}
		item["helm"] = h
	}
	old, _ := h["valuesObject"].(map[string]any)
	h["valuesObject"] = cluster.MergePatch(old, values)
	return PatchEdit(o, nestPatch(list, items)), true
}

// splitSourcePath splits "spec.sources.1" into the list and the index.
func splitSourcePath(p string) (string, int, bool) {
	i := strings.LastIndexByte(p, '.')
	if i < 0 {
		return p, 0, false
	}
	n, err := strconv.Atoi(p[i+1:])
	if err != nil || n < 0 {
		return p, 0, false
	}
	return p[:i], n, true
}

// patchKeys lists the dotted keys a values patch sets or removes.
func patchKeys(values map[string]any) []string {
	var out []string
	var walk func(m map[string]any, prefix string, depth int)
	walk = func(m map[string]any, prefix string, depth int) {
		for _, k := range sortedKeys(m) {
			key := joinKey(prefix, k)
			if sub, ok := m[k].(map[string]any); ok && len(sub) > 0 && depth < maxValuesDepth {
				walk(sub, key, depth+1)
				continue
			}
			out = append(out, key)
		}
	}
	walk(values, "", 0)
	return out
}

func holdsUnknownValue(v any) bool {
	switch t := v.(type) {
	case string:
		return cluster.IsUnknown(t)
	case map[string]any:
		for _, x := range t {
			if holdsUnknownValue(x) {
				return true
			}
		}
	case []any:
		for _, x := range t {
			if holdsUnknownValue(x) {
				return true
			}
		}
	}
	return false
}

// ---- small helpers ----

func lookupMap(m map[string]any, keys ...string) (map[string]any, bool) {
	for _, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			return nil, false
		}
		m = next
	}
	return m, true
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func compactStrings(sorted []string) []string {
	out := sorted[:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}
