package helm

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/manifest"
)

// DefaultKubernetesVersion is the Kubernetes version charts see in
// .Capabilities.KubeVersion when the configuration does not name one: a version EKS
// supports in standard support.
const DefaultKubernetesVersion = "1.34"

// Annotations set on synthesized objects so later steps recognize them.
const (
	ComponentAnnotation    = "eksdoctor.io/component"
	ChartVersionAnnotation = "eksdoctor.io/chart-version"
	AddonVersionAnnotation = "eksdoctor.io/addon-version"
)

// Render renders the files of a local chart (read by ReadChart from chartPath) with
// the release's values, name and namespace. Each object's origin is the template
// inside the chart that produced it (File is chartPath joined with the template path,
// Line the line in that template's rendered output, as "helm template" prints it).
// Hooks are included (their Jobs run pods too); test hooks are not, since only
// "helm test" runs them. The chart runs in a child process with time and memory
// budgets; a chart that exceeds one is a problem, and the rest goes on.
func Render(chartPath string, files []cluster.File, r *cluster.HelmRelease) ([]*cluster.Object, []cluster.Problem) {
	return render(&renderBudget{left: maxRenderTotal}, chartPath, files, r, DefaultKubernetesVersion)
}

func render(b *renderBudget, chartPath string, files []cluster.File, r *cluster.HelmRelease, kubeVersion string) ([]*cluster.Object, []cluster.Problem) {
	at := r.Origin
	if at.IsZero() {
		at = cluster.Origin{File: chartPath}
	}
	resp, err := renderIsolated(b, renderRequest{
		Files: files, Values: r.Values, Release: r.Name, Namespace: r.Namespace,
		KubeVersion: kubeVersion,
	})
	if err != nil {
		return nil, []cluster.Problem{{Origin: at, Message: fmt.Sprintf("chart %s is %s", chartPath, err)}}
	}
	if resp.Chart != "" {
		if r.Chart == "" || r.Chart == chartPath {
			r.Chart = resp.Chart
		}
		if r.Version == "" {
			r.Version = resp.Version
		}
		if r.Name == "" {
			r.Name = resp.Chart
		}
	}
	if resp.Err != "" {
		return nil, []cluster.Problem{renderProblem(resp.Chart, chartPath, at, errors.New(clip(resp.Err)))}
	}
	var objs []*cluster.Object
	var probs []cluster.Problem
	if len(resp.Missing) > 0 {
		// helm template would refuse the chart until helm dependency build
		// fetches them; what the chart itself renders is still read.
		probs = append(probs, cluster.Problem{Origin: at, Unresolved: true, Message: fmt.Sprintf("chart %s depends on charts not in its charts/ directory (%s; helm dependency build fetches them): what they create is not analysed", chartPath, strings.Join(resp.Missing, ", "))})
	}
	for _, d := range resp.Docs {
		file := filepath.Join(chartPath, filepath.FromSlash(templateRel(resp.Chart, d.Name)))
		if isArchive(chartPath) {
			file = filepath.Join(chartPath, filepath.FromSlash(d.Name))
		}
		o, p := manifest.DecodeAt(file, 1, []byte(d.Text))
		probs = append(probs, p...)
		for _, obj := range o {
			if isTestHook(obj) {
				continue
			}
			finish(obj, releaseVia(r), releaseManager(r), releaseNamespace(r, resp.Chart))
			objs = append(objs, obj)
		}
	}
	recognizeRendered(resp.Chart, resp.Version, objs)
	return objs, probs
}

func isArchive(p string) bool {
	return strings.HasSuffix(p, ".tgz") || strings.HasSuffix(p, ".tar.gz")
}

// templateRel turns the engine's "karpenter/templates/x.yaml" into the path inside
// the chart, "templates/x.yaml"; subchart templates keep their "charts/sub/" prefix.
func templateRel(chartName, name string) string {
	if rest, ok := strings.CutPrefix(name, chartName+"/"); ok {
		return rest
	}
	return name
}

type renderedDoc struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

type chartType = chart.Chart

// renderChart runs the Helm template engine the way "helm template" does, offline.
func renderChart(ch *chart.Chart, r *cluster.HelmRelease, kubeVersion string) (docs []renderedDoc, err error) {
	defer func() {
		// The engine recovers from template panics itself; value coalescing and
		// dependency processing do not, and user values are arbitrary.
		if rec := recover(); rec != nil {
			err = fmt.Errorf("rendering failed: %v", rec)
		}
	}()
	vals := copyValues(r.Values)
	if err := chartutil.ProcessDependenciesWithMerge(ch, vals); err != nil {
		return nil, fmt.Errorf("process dependencies: %w", err)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	if kv, err := chartutil.ParseKubeVersion(normalizeKubeVersion(kubeVersion)); err == nil {
		caps.KubeVersion = *kv
	}
	opts := chartutil.ReleaseOptions{
		Name:      releaseName(r, ch.Name()),
		Namespace: releaseNamespace(r, ch.Name()),
		Revision:  1,
		IsInstall: true,
	}
	top, err := chartutil.ToRenderValues(ch, vals, opts, caps)
	if err != nil {
		return nil, err
	}
	out, err := engine.Render(ch, top)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		// As Helm sorts what it renders into manifests: every template but
		// partials (_helpers.tpl) and NOTES.txt, whatever its extension.
		base := path.Base(n)
		if strings.HasPrefix(base, "_") || strings.HasSuffix(base, "NOTES.txt") {
			continue
		}
		if strings.TrimSpace(out[n]) == "" {
			continue
		}
		docs = append(docs, renderedDoc{Name: n, Text: out[n]})
	}
	return docs, nil
}

func normalizeKubeVersion(v string) string {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	if v == "" || cluster.IsUnknown(v) {
		v = DefaultKubernetesVersion
	}
	if strings.Count(v, ".") == 1 {
		v += ".0"
	}
	return "v" + v
}

var templateLineRE = regexp.MustCompile(`([A-Za-z0-9_.\-/]+\.(?:yaml|yml|tpl|txt|json)):(\d+)`)

// renderProblem names the chart and the template and line Helm reports.
func renderProblem(chartName, chartPath string, at cluster.Origin, err error) cluster.Problem {
	msg := clip(err.Error())
	p := cluster.Problem{Origin: at, Message: fmt.Sprintf("chart %s does not render: %s", chartName, msg)}
	if m := templateLineRE.FindStringSubmatch(msg); m != nil && chartPath != "" {
		line, _ := strconv.Atoi(m[2])
		file := filepath.Join(chartPath, filepath.FromSlash(templateRel(chartName, m[1])))
		if isArchive(chartPath) {
			file = filepath.Join(chartPath, filepath.FromSlash(m[1]))
		}
		p.Origin = cluster.Origin{File: file, Line: line}
	}
	return p
}

func isTestHook(o *cluster.Object) bool {
	for _, h := range strings.Split(o.Annotations["helm.sh/hook"], ",") {
		switch strings.TrimSpace(h) {
		case "test", "test-success", "test-failure":
			return true
		}
	}
	return false
}

func releaseName(r *cluster.HelmRelease, chartName string) string {
	if r.Name != "" && !cluster.IsUnknown(r.Name) {
		return r.Name
	}
	return chartName
}

func releaseNamespace(r *cluster.HelmRelease, _ string) string {
	if r.Namespace != "" && !cluster.IsUnknown(r.Namespace) {
		return r.Namespace
	}
	return "default"
}

func releaseVia(r *cluster.HelmRelease) string {
	if r.Address != "" {
		return r.Address
	}
	return "helm:" + r.Name
}

func releaseManager(r *cluster.HelmRelease) string {
	if r.Address != "" {
		return "terraform"
	}
	return "helm"
}

// finish sets what every object from a release or add-on carries: who produced it,
// who manages it, and the namespace Helm or EKS installs it into.
func finish(o *cluster.Object, via, manager, namespace string) {
	o.Via = via
	o.Manager = manager
	o.ClearNamespace()
	if o.Namespace == "" && !cluster.ClusterScoped(o.Kind) {
		o.Namespace = namespace
		if md, ok := o.Content["metadata"].(map[string]any); ok {
			md["namespace"] = namespace
		}
	}
}

// setAnnotation writes an annotation both on the object and in its content, so the
// rest of the pipeline sees the same object whichever it reads.
func setAnnotation(o *cluster.Object, k, v string) {
	if o.Annotations == nil {
		o.Annotations = map[string]string{}
	}
	o.Annotations[k] = v
	md, ok := o.Content["metadata"].(map[string]any)
	if !ok {
		md = map[string]any{}
		o.Content["metadata"] = md
	}
	ann, ok := md["annotations"].(map[string]any)
	if !ok {
		ann = map[string]any{}
		md["annotations"] = ann
	}
	ann[k] = v
}

// recognizeRendered marks the workloads of a rendered well-known chart with their
// component and the chart version, as synthesized ones are.
func recognizeRendered(name, version string, objs []*cluster.Object) {
	kb, ok := catalog.ChartFor(name, version)
	if !ok {
		return
	}
	for _, o := range objs {
		if !isWorkloadKind(o.Kind) {
			continue
		}
		if id := matchComponent(kb.Components, o); id != "" && o.Annotations[ComponentAnnotation] == "" {
			setAnnotation(o, ComponentAnnotation, id)
		}
		if o.Annotations[ComponentAnnotation] != "" {
			setAnnotation(o, ChartVersionAnnotation, version)
		}
	}
}

func isWorkloadKind(k string) bool {
	switch k {
	case "Deployment", "DaemonSet", "StatefulSet", "Job", "CronJob", "ReplicaSet", "Pod":
		return true
	}
	return false
}

// matchComponent finds the component of a rendered workload by kind, and by name
// when several components share a kind.
func matchComponent(comps []catalog.ChartComponent, o *cluster.Object) string {
	var sameKind []catalog.ChartComponent
	for _, c := range comps {
		if c.Kind == o.Kind {
			sameKind = append(sameKind, c)
		}
	}
	if len(sameKind) == 1 {
		return sameKind[0].ID
	}
	for _, c := range sameKind {
		if c.Name == o.Name || c.ID == o.Name {
			return c.ID
		}
	}
	return ""
}

// copyValues deep-copies user values so rendering never changes the model.
func copyValues(v map[string]any) map[string]any {
	out := map[string]any{}
	for k, x := range v {
		out[k] = copyValue(x)
	}
	return out
}

func copyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return copyValues(t)
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = copyValue(x)
		}
		return out
	case map[string]string:
		out := map[string]any{}
		for k, x := range t {
			out[k] = x
		}
		return out
	case []string:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = x
		}
		return out
	}
	return v
}
