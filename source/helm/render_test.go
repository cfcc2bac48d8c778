package helm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/inputfs"
)

const miniChart = "testdata/karpenter-mini"

func find(t *testing.T, objs []*cluster.Object, kind, name string) *cluster.Object {
	t.Helper()
	for _, o := range objs {
		if o.Kind == kind && o.Name == name {
			return o
		}
	}
	var have []string
	for _, o := range objs {
		have = append(have, o.Ref().String())
	}
	t.Fatalf("no %s %s among %v", kind, name, have)
	return nil
}

func TestRenderLocalChart(t *testing.T) {
	t.Parallel()
	r := &cluster.HelmRelease{
		Name:      "karpenter",
		Namespace: "kube-system",
		Values: map[string]any{
			"podLabels":   map[string]any{"team": "platform"},
			"dnsPolicy":   "Default",
			"tolerations": []any{map[string]any{"key": "karpenter.sh/controller", "operator": "Exists"}},
		},
	}
	objs, probs := renderDir(t, miniChart, r)
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}

	dep := find(t, objs, "Deployment", "karpenter")
	if got, want := dep.Origin, (cluster.Origin{File: filepath.Join(miniChart, "templates", "deployment.yaml"), Line: 1}); got != want {
		t.Errorf("Deployment origin = %+v, want %+v", got, want)
	}
	if dep.Via != "helm:karpenter" || dep.Manager != "helm" {
		t.Errorf("Via, Manager = %q, %q; want helm:karpenter, helm", dep.Via, dep.Manager)
	}
	if dep.Namespace != "kube-system" {
		t.Errorf("namespace = %q, want kube-system", dep.Namespace)
	}
	if got := dep.Get("spec.template.metadata.labels"); !cmp.Equal(got, map[string]any{
		"app.kubernetes.io/name": "karpenter", "app.kubernetes.io/instance": "karpenter", "team": "platform",
	}) {
		t.Errorf("pod labels = %v", got)
	}
	if got := dep.String("spec.template.spec.dnsPolicy"); got != "Default" {
		t.Errorf("dnsPolicy = %q, want Default (the user's value)", got)
	}
	// User tolerations replace the chart's list, as Helm does with lists.
	want := []any{map[string]any{"key": "karpenter.sh/controller", "operator": "Exists"}}
	if diff := cmp.Diff(want, dep.Get("spec.template.spec.tolerations")); diff != "" {
		t.Errorf("tolerations (-want +got):\n%s", diff)
	}
	if got := dep.String("spec.template.spec.containers.0.image"); got != "public.ecr.aws/karpenter/controller:1.0.0" {
		t.Errorf("image = %q", got)
	}
	// The chart is Karpenter's: its workloads are recognized.
	if got := dep.Annotations[ComponentAnnotation]; got != "karpenter" {
		t.Errorf("component = %q, want karpenter", got)
	}
	if got := dep.Annotations[ChartVersionAnnotation]; got != "1.0.0" {
		t.Errorf("chart version = %q, want 1.0.0", got)
	}
	if l := dep.At("spec.template.spec.tolerations").Line; l <= 1 {
		t.Errorf("tolerations line = %d, want a line inside the rendered template", l)
	}

	// Hooks are pods too.
	job := find(t, objs, "Job", "karpenter-post-install-hook")
	if job.Origin.File != filepath.Join(miniChart, "templates", "post-install-hook.yaml") {
		t.Errorf("Job origin = %v", job.Origin)
	}
	if got := job.Annotations[ComponentAnnotation]; got != "karpenter-post-install-hook" {
		t.Errorf("hook component = %q", got)
	}
	if job.Namespace != "kube-system" {
		t.Errorf("Job namespace = %q, want the release namespace", job.Namespace)
	}

	// The second document of a template starts on its own line.
	cr := find(t, objs, "ClusterRole", "karpenter-core")
	if cr.Origin.Line != 6 || cr.Namespace != "" {
		t.Errorf("ClusterRole origin line %d namespace %q; want line 6, cluster-scoped", cr.Origin.Line, cr.Namespace)
	}
	find(t, objs, "ServiceAccount", "karpenter")

	// Test hooks only run on "helm test".
	for _, o := range objs {
		if o.Kind == "Pod" {
			t.Errorf("test hook %s rendered", o.Name)
		}
	}
}

func TestRenderFromTerraform(t *testing.T) {
	t.Parallel()
	r := &cluster.HelmRelease{Name: "kp", Namespace: "karpenter", Address: "helm_release.karpenter", Origin: cluster.Origin{File: "main.tf", Line: 12}}
	objs, probs := renderDir(t, miniChart, r)
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	dep := find(t, objs, "Deployment", "kp")
	if dep.Via != "helm_release.karpenter" || dep.Manager != "terraform" {
		t.Errorf("Via, Manager = %q, %q", dep.Via, dep.Manager)
	}
	labels, _ := dep.Get("spec.template.metadata.labels").(map[string]any)
	if labels["app.kubernetes.io/instance"] != "kp" {
		t.Errorf("instance label = %v, want the release name", labels["app.kubernetes.io/instance"])
	}
}

func TestRenderArchive(t *testing.T) {
	t.Parallel()
	ch, err := loader.Load(miniChart)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tgz, err := chartutil.Save(ch, dir)
	if err != nil {
		t.Fatal(err)
	}
	objs, probs := renderDir(t, tgz, &cluster.HelmRelease{Name: "karpenter", Namespace: "kube-system"})
	if len(probs) != 0 {
		t.Fatalf("problems: %v", probs)
	}
	dep := find(t, objs, "Deployment", "karpenter")
	if want := filepath.Join(tgz, "karpenter", "templates", "deployment.yaml"); dep.Origin.File != want {
		t.Errorf("origin %q, want %q", dep.Origin.File, want)
	}
}

func TestRenderErrorIsProblem(t *testing.T) {
	t.Parallel()
	objs, probs := renderDir(t, "testdata/broken", &cluster.HelmRelease{Name: "b", Namespace: "default"})
	if len(objs) != 0 {
		t.Errorf("objects from a chart that does not render: %d", len(objs))
	}
	if len(probs) != 1 {
		t.Fatalf("problems = %v, want 1", probs)
	}
	p := probs[0]
	if want := (cluster.Origin{File: filepath.Join("testdata", "broken", "templates", "bad.yaml"), Line: 5}); p.Origin != want {
		t.Errorf("origin = %+v, want %+v", p.Origin, want)
	}
	if !strings.Contains(p.Message, "chart broken") || !strings.Contains(p.Message, "missing") {
		t.Errorf("message %q should name the chart and what failed", p.Message)
	}
}

func TestRenderMissingChart(t *testing.T) {
	t.Parallel()
	if _, _, err := ReadChart(inputfs.New("testdata"), "testdata/nope"); err == nil || !strings.Contains(err.Error(), "testdata/nope") {
		t.Errorf("reading a missing chart: %v", err)
	}
}

// renderDir reads a chart with only its own directory readable, and renders it.
func renderDir(t *testing.T, dir string, r *cluster.HelmRelease) ([]*cluster.Object, []cluster.Problem) {
	t.Helper()
	fsys := inputfs.New(dir)
	defer fsys.Close()
	files, left, err := ReadChart(fsys, dir)
	if err != nil || len(left) != 0 {
		t.Fatalf("ReadChart(%s): %v, left out %v", dir, err, left)
	}
	return Render(dir, files, r)
}

func TestLoadChartWithValuesFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := filepath.Join(dir, "a.yaml")
	b := filepath.Join(dir, "b.yaml")
	writeFile(t, a, "replicas: 3\nnodeSelector:\n  pool: system\n")
	writeFile(t, b, "# later files win\nnodeSelector:\n  pool: core\npodLabels:\n  app: kp\n")
	m, err := LoadChart(nil, miniChart, []string{a, b}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.HelmReleases) != 1 || m.HelmReleases[0].Name != "karpenter" || m.HelmReleases[0].Namespace != "default" {
		t.Fatalf("release = %+v", m.HelmReleases)
	}
	r := m.HelmReleases[0]
	if got := r.ValueOrigins["nodeSelector.pool"]; got.File != b || got.Line != 3 {
		t.Errorf("origin of nodeSelector.pool = %+v, want %s:3", got, b)
	}
	if got := r.ValueOrigins["replicas"]; got.File != a || got.Line != 1 {
		t.Errorf("origin of replicas = %+v, want %s:1", got, a)
	}
	dep := find(t, m.Objects, "Deployment", "karpenter")
	if got := dep.Get("spec.template.spec.nodeSelector"); !cmp.Equal(got, map[string]any{"kubernetes.io/os": "linux", "pool": "core"}) {
		t.Errorf("nodeSelector = %v", got)
	}
	if got := dep.Get("spec.replicas"); got != int64(3) {
		t.Errorf("replicas = %#v", got)
	}
	if _, err := LoadChart(nil, miniChart, []string{filepath.Join(dir, "missing.yaml")}, "", ""); err == nil {
		t.Error("a missing values file is not an error")
	}
	// A values file that does not parse is a problem at its line; the chart is
	// not rendered without it.
	writeFile(t, a, "replicas: 1\nnodeSelector: [\n")
	m, err = LoadChart(nil, miniChart, []string{a}, "", "")
	if err != nil {
		t.Fatalf("bad values file: %v, want a problem", err)
	}
	if len(m.Problems) != 1 || m.Problems[0].Origin.File != a || m.Problems[0].Origin.Line != 2 || len(m.Objects) != 0 {
		t.Errorf("bad values file: problems %v, %d objects; want one problem at %s:2 and nothing rendered", m.Problems, len(m.Objects), a)
	}
}

func TestApplySet(t *testing.T) {
	t.Parallel()
	vals := map[string]any{}
	if err := ApplySet(vals, []string{"tolerations[0].key=CriticalAddonsOnly", "tolerations[0].operator=Exists", "replicas=1"}); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"tolerations": []any{map[string]any{"key": "CriticalAddonsOnly", "operator": "Exists"}},
		"replicas":    int64(1),
	}
	if diff := cmp.Diff(want, vals); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if err := ApplySet(vals, []string{"a[=b"}); err == nil {
		t.Error("malformed --set accepted")
	}
}

func writeFile(t *testing.T, name, text string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// An umbrella chart whose dependencies are not vendored renders what it holds
// itself, and says what it does not.
func TestRenderMissingDependencies(t *testing.T) {
	t.Parallel()
	objs, probs := renderDir(t, "testdata/umbrella", &cluster.HelmRelease{Name: "u", Namespace: "default"})
	if len(objs) != 1 || objs[0].Name != "u-settings" {
		t.Errorf("objects %v, want the chart's own ConfigMap", objs)
	}
	if len(probs) != 1 || !probs[0].Unresolved || !strings.Contains(probs[0].Message, "karpenter 0.22.1 from https://charts.karpenter.sh; helm dependency build fetches them") {
		t.Errorf("problems %+v, want the missing dependency said", probs)
	}
}

// Helm renders every template but partials and NOTES.txt, whatever the file's
// extension: a .tpl template is a manifest.
func TestRenderTplTemplates(t *testing.T) {
	t.Parallel()
	objs, probs := renderDir(t, "testdata/tpl", &cluster.HelmRelease{Name: "r", Namespace: "default"})
	if len(probs) != 0 || len(objs) != 1 || objs[0].Name != "r-pool" {
		t.Errorf("objects %v, problems %v, want the ConfigMap of pool.tpl", objs, probs)
	}
}
