package helm

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/manifest"
)

// Expand adds to m.Objects the objects of every m.HelmReleases entry and of every
// m.Addons entry. A release whose ChartDir is set is rendered from disk; any other
// is synthesized from the knowledge base with the user's values applied (the same
// template engine reads tolerations, nodeSelector, affinity, podLabels, dnsPolicy,
// replicas, schedulerName, topologySpreadConstraints, node.tolerateAllTaints, ...).
// Add-ons are synthesized with their configuration_values applied; keys the add-on
// version rejects are left out, as EKS would refuse them. What had to be assumed
// (a version) or could not be described (a chart eksdoctor does not know) is an
// unresolved problem; values not known before apply mark the objects they render
// (Object.Unknown). Call it once per model.
func Expand(m *cluster.Model) {
	if m == nil {
		return
	}
	budget := &renderBudget{left: maxRenderTotal}
	kube := m.Cluster.KubernetesVersion
	var unknown unknownCharts
	defer unknown.report(m)
	for _, r := range m.HelmReleases {
		if r == nil || r.Rendered {
			continue // rendered when it was loaded
		}
		var d described
		if r.ChartDir != "" && r.ChartFiles != nil {
			d.objs, d.probs = render(budget, r.ChartDir, r.ChartFiles, r, kube)
			r.Rendered = true
		} else {
			d = synthesizeRelease(r, kube)
			if r.ChartDir == "" {
				// A local chart that could not be read is said by its loader.
				unknown.add(d.notKnown, r.Origin)
			}
		}
		d.add(m, r.Conditional, append(append([]string(nil), r.Unknown...), d.unknown...), releaseSubject(r))
	}
	for _, a := range m.Addons {
		if a != nil {
			d := synthesizeAddon(a, kube)
			unknown.add(d.notKnown, a.Origin)
			d.add(m, a.Conditional, d.unknown, addonSubject(a))
		}
	}
}

// described is what a release or add-on was turned into: its objects, the
// problems met, what was assumed, and what of its values is not known before
// apply.
type described struct {
	objs    []*cluster.Object
	probs   []cluster.Problem
	notes   []cluster.Note
	unknown []string
	// notKnown names the chart or add-on when eksdoctor has no description of
	// it ("chart X of helm_release.y").
	notKnown string
}

// unknownCharts collects the charts and add-ons eksdoctor has no description of,
// said once per model: a repository installs many, and each says the same.
type unknownCharts struct {
	what  []string
	first cluster.Origin
}

func (u *unknownCharts) add(what string, org cluster.Origin) {
	if what == "" {
		return
	}
	if len(u.what) == 0 {
		u.first = org
	}
	u.what = append(u.what, what)
}

func (u *unknownCharts) report(m *cluster.Model) {
	switch n := len(u.what); {
	case n == 0:
		return
	case n == 1:
		m.Problems = append(m.Problems, unresolved(u.first, u.what[0]+" is not in eksdoctor's knowledge base and not on disk; what it creates is not analysed"))
	default:
		list := strings.Join(u.what, "; ")
		if n > 10 {
			list = strings.Join(u.what[:10], "; ") + fmt.Sprintf("; and %d more", n-10)
		}
		m.Problems = append(m.Problems, unresolved(u.first, fmt.Sprintf("%d charts and add-ons are not in eksdoctor's knowledge base and not on disk; what they create is not analysed: %s", n, list)))
	}
}

// assumed records a version eksdoctor picked: a note when the user left the
// version to Helm or EKS (which pick one too), an unresolved problem otherwise.
func (d *described) assumed(org cluster.Origin, subject, what, assumed string) {
	msg := what + ": " + assumed
	if strings.HasPrefix(assumed, "no version given") {
		d.notes = append(d.notes, cluster.Note{Origin: org, Subject: subject, Message: msg})
		return
	}
	d.probs = append(d.probs, unresolved(org, msg))
}

// add puts the objects into the model, marked with whether they exist and what
// of them is not known.
func (d described) add(m *cluster.Model, conditional string, unknown []string, subject string) {
	text := ""
	if len(unknown) > 0 {
		text = strings.Join(unknown, ", ") + " of " + subject
	}
	for _, o := range d.objs {
		o.Conditional = conditional
		o.Unknown = text
	}
	m.Objects = append(m.Objects, d.objs...)
	m.Problems = append(m.Problems, d.probs...)
	m.Notes = append(m.Notes, d.notes...)
}

func releaseSubject(r *cluster.HelmRelease) string {
	if r.Address != "" {
		return r.Address
	}
	return "helm release " + r.Name
}

func chartRef(r *cluster.HelmRelease) string {
	if r.Repository != "" && !strings.Contains(r.Chart, "://") {
		return strings.TrimRight(r.Repository, "/") + "/" + r.Chart
	}
	return r.Chart
}

// unresolved is an info problem: what eksdoctor could not describe or assumed.
func unresolved(org cluster.Origin, msg string) cluster.Problem {
	return cluster.Problem{Origin: org, Message: msg, Unresolved: true}
}

// synthesizeRelease describes a release whose chart is not on disk.
func synthesizeRelease(r *cluster.HelmRelease, kube string) (d described) {
	subject := releaseSubject(r)
	if cluster.IsUnknown(r.Chart) || r.Chart == "" {
		d.probs = append(d.probs, unresolved(r.Origin, "the chart of "+subject+" is not known before apply; the objects it creates are not analysed"))
		return d
	}
	version := r.Version
	if cluster.IsUnknown(version) {
		version = ""
	}
	kb, ok := catalog.ChartFor(chartRef(r), version)
	if !ok {
		kb, ok = catalog.ChartFor(r.Chart, version)
	}
	if !ok {
		d.notKnown = fmt.Sprintf("chart %s of %s", chartRef(r), subject)
		return d
	}
	switch {
	case cluster.IsUnknown(r.Version):
		d.probs = append(d.probs, unresolved(r.Origin, fmt.Sprintf("the version of chart %s of %s is not known before apply; the newest version eksdoctor knows, %s, is assumed", kb.Name, subject, kb.Version)))
	case kb.Assumed != "":
		d.assumed(r.Origin, subject, "chart "+kb.Name+" of "+subject, kb.Assumed)
	}
	defaults := kb.DefaultValues()
	values := copyValues(r.Values)
	for _, k := range dropUnknownStructures(values, defaults, "") {
		d.unknown = append(d.unknown, "value "+k)
	}
	ch := buildChart(kb.Name, kb.Version, kb.AppVersion, kb.Features, kb.Templates, defaults)
	rel := *r
	rel.Values = values
	objs, probs, dropped, err := renderKnown(ch, &rel, kube, r.Origin)
	for _, k := range dropped {
		d.unknown = append(d.unknown, "value "+k)
	}
	var uv *unknownRenderError
	if errors.As(err, &uv) {
		d.probs = append(d.probs, unresolved(r.Origin, fmt.Sprintf("chart %s %s of %s does not render with values not known before apply (%s); the release's objects are not analysed", kb.Name, kb.Version, subject, strings.Join(uv.keys, ", "))))
		return d
	}
	if err != nil {
		// The knowledge base holds reduced copies of the chart's templates: a
		// failure may be theirs, not the chart's.
		d.probs = append(d.probs, unresolved(r.Origin, fmt.Sprintf("eksdoctor's description of chart %s %s cannot render these values (%v); the release's objects are not analysed", kb.Name, kb.Version, clip(err.Error()))))
		return d
	}
	for _, o := range objs {
		finish(o, releaseVia(r), releaseManager(r), releaseNamespace(r, kb.Name))
		setAnnotation(o, ChartVersionAnnotation, kb.Version)
		if c, ok := kb.Component(o.Annotations[ComponentAnnotation]); ok {
			o.Lines = fieldLines(c, r.ValueOrigins, r.Origin)
		}
	}
	d.objs, d.probs = objs, append(d.probs, probs...)
	return d
}

// fromVersionLookup reports whether an unknown add-on version comes only from the
// aws_eks_addon_version data source.
func fromVersionLookup(version string) bool {
	exprs := cluster.UnknownExprs(version)
	for _, e := range exprs {
		if !strings.Contains(e, "data.aws_eks_addon_version.") {
			return false
		}
	}
	return len(exprs) > 0
}

func addonSubject(a *cluster.Addon) string {
	if a.Address != "" {
		return a.Address
	}
	return "EKS add-on " + a.Name
}

func addonVia(a *cluster.Addon) string {
	if a.Address != "" {
		return a.Address
	}
	return "eks-addon:" + a.Name
}

// synthesizeAddon describes the workloads an EKS add-on creates.
func synthesizeAddon(a *cluster.Addon, kube string) (d described) {
	subject := addonSubject(a)
	version := a.Version
	if cluster.IsUnknown(version) {
		version = ""
	}
	if cluster.IsUnknown(a.Name) {
		d.probs = append(d.probs, unresolved(a.Origin, fmt.Sprintf("the name of EKS add-on %s is not known before apply (%s); its workloads are not analysed", subject, a.Name)))
		return d
	}
	kb, ok := catalog.AddonFor(a.Name, version)
	if !ok {
		d.notKnown = fmt.Sprintf("EKS add-on %s (%s)", a.Name, subject)
		return d
	}
	switch {
	case cluster.IsUnknown(a.Version) && fromVersionLookup(a.Version):
		// data.aws_eks_addon_version: the default (or most recent) version for
		// the cluster, as when no version is given.
		d.notes = append(d.notes, cluster.Note{Origin: a.Origin, Subject: subject, Message: fmt.Sprintf("add-on %s: the version is looked up at apply time; the newest version eksdoctor knows, %s, is assumed", kb.Name, kb.Version)})
	case cluster.IsUnknown(a.Version):
		d.probs = append(d.probs, unresolved(a.Origin, fmt.Sprintf("the version of add-on %s (%s) is not known before apply; the newest version eksdoctor knows, %s, is assumed", kb.Name, subject, kb.Version)))
	case kb.Assumed != "":
		d.assumed(a.Origin, subject, "add-on "+kb.Name+" ("+subject+")", kb.Assumed)
	}
	for _, u := range a.Unknown {
		if u == "configuration_values" {
			d.unknown = append(d.unknown, "configuration_values")
		}
	}
	config := copyValues(a.ConfigurationValues)
	for _, v := range kb.CheckConfig(config) {
		if v.Acceptance == catalog.AddonRejected {
			// EKS rejects the configuration (addon-toleration-unsupported says
			// so); the key is left out, as EKS would not apply it.
			deletePath(config, v.Key)
		}
	}
	defaults := kb.DefaultValues()
	for _, k := range dropUnknownStructures(config, defaults, "") {
		d.unknown = append(d.unknown, "configuration key "+k)
	}
	ch := buildChart(kb.Name, kb.Version, kb.AppVersion, kb.Features, kb.Templates, defaults)
	rel := &cluster.HelmRelease{Name: kb.Name, Namespace: kb.Namespace, Values: config}
	objs, probs, dropped, err := renderKnown(ch, rel, kube, a.Origin)
	for _, k := range dropped {
		d.unknown = append(d.unknown, "configuration key "+k)
	}
	var uv *unknownRenderError
	if errors.As(err, &uv) {
		d.probs = append(d.probs, unresolved(a.Origin, fmt.Sprintf("EKS add-on %s %s (%s) cannot be described with configuration not known before apply (%s); its workloads are not analysed", kb.Name, kb.Version, subject, strings.Join(uv.keys, ", "))))
		return d
	}
	if err != nil {
		d.probs = append(d.probs, cluster.Problem{Origin: a.Origin, Message: fmt.Sprintf("EKS add-on %s %s with this configuration cannot be described: %v", kb.Name, kb.Version, err)})
		return d
	}
	for _, o := range objs {
		finish(o, addonVia(a), "eks", kb.Namespace)
		setAnnotation(o, AddonVersionAnnotation, kb.Version)
		setTemplateAnnotations(o, a.PodAnnotations)
	}
	d.objs, d.probs = objs, append(d.probs, probs...)
	return d
}

// buildChart assembles an in-memory chart from knowledge-base data. Template
// features become chart annotations, which the reduced templates read.
func buildChart(name, version, appVersion string, features []string, templates map[string][]byte, values map[string]any) *chart.Chart {
	ann := map[string]string{}
	for _, f := range features {
		ann["eksdoctor.io/feature-"+f] = "true"
	}
	ch := &chart.Chart{
		Metadata: &chart.Metadata{
			APIVersion:  chart.APIVersionV2,
			Name:        name,
			Version:     version,
			AppVersion:  appVersion,
			Type:        "application",
			Annotations: ann,
		},
		Values: values,
	}
	names := make([]string, 0, len(templates))
	for n := range templates {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ch.Templates = append(ch.Templates, &chart.File{Name: n, Data: templates[n]})
	}
	return ch
}

// decodeSynthesized decodes knowledge-base output and points every object at the
// user's declaration: the synthesized text itself is nowhere on disk.
func decodeSynthesized(docs []renderedDoc, at cluster.Origin) ([]*cluster.Object, []cluster.Problem) {
	var objs []*cluster.Object
	var probs []cluster.Problem
	for _, d := range docs {
		o, p := manifest.DecodeAt(d.Name, 1, []byte(d.Text))
		for _, x := range p {
			// A values-induced YAML error inside synthesized text: report it at
			// the release, with the engine's words.
			probs = append(probs, cluster.Problem{Origin: at, Message: "values produce invalid YAML in " + d.Name + ": " + x.Message})
		}
		for _, obj := range o {
			obj.Origin = at
			obj.Lines = nil
			objs = append(objs, obj)
		}
	}
	return objs, probs
}

// fieldLines maps the object fields a component's values set to the lines where the
// user set those values, when they are in the declaration's own file.
func fieldLines(c *catalog.ChartComponent, origins map[string]cluster.Origin, at cluster.Origin) map[string]int {
	if len(origins) == 0 || len(c.Fields) == 0 {
		return nil
	}
	lines := map[string]int{}
	// Several values keys may set one field (node.tolerations and
	// node.tolerateAllTaints both make the tolerations): the key named like the
	// field wins, else the first written, whatever the map's order.
	named := map[string]bool{}
	for _, key := range slices.Sorted(maps.Keys(c.Fields)) {
		field := c.Fields[key]
		full := key
		if c.ValuesPrefix != "" {
			full = c.ValuesPrefix + "." + key
		}
		org, ok := origins[full]
		if !ok || org.Line <= 0 || (org.File != "" && org.File != at.File) {
			continue
		}
		isNamed := lastSegment(key) == lastSegment(field)
		if l, seen := lines[field]; seen && (named[field] || (!isNamed && l <= org.Line)) {
			continue
		}
		lines[field], named[field] = org.Line, isNamed
	}
	if len(lines) == 0 {
		return nil
	}
	return lines
}

// lastSegment is what follows a dotted path's last dot.
func lastSegment(path string) string { return path[strings.LastIndexByte(path, '.')+1:] }

func deletePath(m map[string]any, key string) {
	parts := strings.Split(key, ".")
	for i, p := range parts {
		if i == len(parts)-1 {
			delete(m, p)
			return
		}
		next, ok := m[p].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
}

// ChartDefaults returns the object a well-known chart version creates for a
// component when the user sets no values, e.g. to read its default tolerations when
// a fix must keep them. The version is resolved as in catalog.ChartFor.
func ChartDefaults(chartName, version, component string) (*cluster.Object, bool) {
	r := &cluster.HelmRelease{Name: chartBaseName(chartName), Namespace: "kube-system", Chart: chartName, Version: version}
	return pick(synthesizeRelease(r, DefaultKubernetesVersion).objs, component)
}

// AddonDefaults returns the object an EKS add-on version creates for a component with
// no configuration_values.
func AddonDefaults(addon, version, component string) (*cluster.Object, bool) {
	return pick(synthesizeAddon(&cluster.Addon{Name: addon, Version: version}, DefaultKubernetesVersion).objs, component)
}

func pick(objs []*cluster.Object, component string) (*cluster.Object, bool) {
	for _, o := range objs {
		if o.Annotations[ComponentAnnotation] == component {
			return o, true
		}
	}
	return nil, false
}

// chartBaseName is the release name a chart reference suggests
// ("oci://public.ecr.aws/karpenter/karpenter" → "karpenter").
func chartBaseName(ref string) string {
	ref = strings.TrimRight(ref, "/")
	if i := strings.LastIndexByte(ref, '/'); i >= 0 {
		ref = ref[i+1:]
	}
	if ref == "" {
		return "release"
	}
	return ref
}

// structuralKeys are values that must be maps or lists wherever they appear.
var structuralKeys = map[string]bool{
	"tolerations": true, "affinity": true, "nodeSelector": true, "topologySpreadConstraints": true,
	"podLabels": true, "podAnnotations": true, "resources": true,
}

// dropUnknownStructures removes values that are a single unresolved Terraform
// expression ("${var.tolerations}") where the chart expects a map or a list: the
// templates cannot use them, and an unresolved value must not become an input error.
// The chart default applies instead; the dropped keys are returned, sorted.
// unknownRenderError is a chart that does not render, or renders what does not
// decode, with values not known before apply, nor without them.
type unknownRenderError struct{ keys []string }

func (e *unknownRenderError) Error() string {
	return "does not render with values not known before apply (" + strings.Join(e.keys, ", ") + ")"
}

// renderKnown renders a chart and decodes its objects. Values not known before
// apply (a conditional, a variable) may be what breaks the rendering: then it
// renders again without them, on the chart's defaults, and returns their keys.
func renderKnown(ch *chart.Chart, rel *cluster.HelmRelease, kube string, at cluster.Origin) ([]*cluster.Object, []cluster.Problem, []string, error) {
	docs, err := renderChart(ch, rel, kube)
	var objs []*cluster.Object
	var probs []cluster.Problem
	if err == nil {
		objs, probs = decodeSynthesized(docs, at)
	}
	if err == nil && len(probs) == 0 {
		return objs, nil, nil, nil
	}
	stripped, keys := withoutUnknownValues(rel.Values, "")
	if len(keys) == 0 {
		return objs, probs, nil, err
	}
	again := *rel
	again.Values = stripped
	if docs, err := renderChart(ch, &again, kube); err == nil {
		if objs, probs := decodeSynthesized(docs, at); len(probs) == 0 {
			return objs, nil, keys, nil
		}
	}
	return nil, nil, nil, &unknownRenderError{keys: keys}
}

// withoutUnknownValues copies values without those not known before apply, and
// lists their keys.
func withoutUnknownValues(vals map[string]any, prefix string) (map[string]any, []string) {
	out := make(map[string]any, len(vals))
	var keys []string
	for k, v := range vals {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		switch t := v.(type) {
		case string:
			if cluster.IsUnknown(t) {
				keys = append(keys, p)
				continue
			}
		case map[string]any:
			sub, subKeys := withoutUnknownValues(t, p)
			out[k], keys = sub, append(keys, subKeys...)
			continue
		}
		out[k] = v
	}
	sort.Strings(keys)
	return out, keys
}

func dropUnknownStructures(vals, defaults map[string]any, prefix string) []string {
	var dropped []string
	for k, v := range vals {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		def := defaults[k]
		switch t := v.(type) {
		case string:
			if _, ok := cluster.UnknownExpr(t); !ok {
				continue
			}
			switch def.(type) {
			case map[string]any, []any:
				delete(vals, k)
				dropped = append(dropped, p)
				continue
			}
			if structuralKeys[k] {
				delete(vals, k)
				dropped = append(dropped, p)
			}
		case map[string]any:
			sub, _ := def.(map[string]any)
			dropped = append(dropped, dropUnknownStructures(t, sub, p)...)
		}
	}
	sort.Strings(dropped)
	return dropped
}

// setTemplateAnnotations sets annotations on the pod template of a workload
// object (one without a template is left as it is).
func setTemplateAnnotations(o *cluster.Object, ann map[string]string) {
	if len(ann) == 0 || o.Content == nil {
		return
	}
	spec, _ := o.Content["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	if tmpl == nil {
		return
	}
	meta, _ := tmpl["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		tmpl["metadata"] = meta
	}
	cur, _ := meta["annotations"].(map[string]any)
	if cur == nil {
		cur = map[string]any{}
		meta["annotations"] = cur
	}
	for k, v := range ann {
		cur[k] = v
	}
}
