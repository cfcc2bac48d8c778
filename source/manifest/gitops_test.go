package manifest

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// gitopsModel decodes files (name → YAML) and reads their GitOps releases with
// the given charts of the inputs (chart directory → file name → content).
func gitopsModel(t testing.TB, files map[string]string, charts map[string]map[string]string) *cluster.Model {
	t.Helper()
	m := &cluster.Model{}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		objs, probs := Decode(n, []byte(files[n]))
		if len(probs) > 0 {
			t.Fatalf("%s: %+v", n, probs)
		}
		m.Objects = append(m.Objects, objs...)
	}
	InterpretGitOps(m, fakeCharts(charts))
	return m
}

func fakeCharts(charts map[string]map[string]string) LocalCharts {
	if charts == nil {
		return LocalCharts{}
	}
	var lc LocalCharts
	for d := range charts {
		lc.Dirs = append(lc.Dirs, d)
	}
	slices.Sort(lc.Dirs)
	lc.Read = func(dir string) ([]cluster.File, error) {
		files, ok := charts[dir]
		if !ok {
			return nil, errors.New("not a chart of the inputs")
		}
		var out []cluster.File
		for n, data := range files {
			out = append(out, cluster.File{Name: n, Data: []byte(data)})
		}
		slices.SortFunc(out, func(a, b cluster.File) int { return strings.Compare(a.Name, b.Name) })
		return out, nil
	}
	return lc
}

func onlyRelease(t *testing.T, m *cluster.Model) *cluster.HelmRelease {
	t.Helper()
	if len(m.HelmReleases) != 1 {
		t.Fatalf("releases = %d, want 1 (problems %+v)", len(m.HelmReleases), m.Problems)
	}
	return m.HelmReleases[0]
}

func originLines(r *cluster.HelmRelease) map[string]string {
	out := map[string]string{}
	for k, o := range r.ValueOrigins {
		out[k] = o.String()
	}
	return out
}

const argoValuesObject = `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: karpenter
  namespace: argocd
spec:
  project: default
  source:
    repoURL: public.ecr.aws/karpenter
    chart: karpenter
    targetRevision: 1.0.2
    helm:
      releaseName: kp
      valuesObject:
        settings:
          clusterName: prod
          interruptionQueueName: prod
        replicas: 1
  destination:
    server: https://kubernetes.default.svc
    namespace: karpenter
`

func TestGitOpsApplicationValuesObject(t *testing.T) {
	t.Parallel()
	m := gitopsModel(t, map[string]string{"argocd/app.yaml": argoValuesObject}, nil)
	r := onlyRelease(t, m)
	type fields struct {
		Name, Namespace, Chart, Repository, Version, ChartDir string
		Origin                                                cluster.Origin
		Unknown                                               []string
	}
	got := fields{r.Name, r.Namespace, r.Chart, r.Repository, r.Version, r.ChartDir, r.Origin, r.Unknown}
	want := fields{
		Name: "kp", Namespace: "karpenter", Chart: "karpenter", Repository: "public.ecr.aws/karpenter", Version: "1.0.2",
		Origin: cluster.Origin{File: "argocd/app.yaml", Line: 8, Path: "spec.source"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("release (-want +got):\n%s", diff)
	}
	wantValues := map[string]any{"settings": map[string]any{"clusterName": "prod", "interruptionQueueName": "prod"}, "replicas": int64(1)}
	if diff := cmp.Diff(wantValues, r.Values); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	wantLines := map[string]string{
		"settings":                       "argocd/app.yaml:15",
		"settings.clusterName":           "argocd/app.yaml:16",
		"settings.interruptionQueueName": "argocd/app.yaml:17",
		"replicas":                       "argocd/app.yaml:18",
	}
	if diff := cmp.Diff(wantLines, originLines(r)); diff != "" {
		t.Errorf("value origins (-want +got):\n%s", diff)
	}
	if r.Address != "" {
		t.Errorf("a GitOps release has no Terraform address: %q", r.Address)
	}
}

func TestGitOpsApplicationMergeOrder(t *testing.T) {
	t.Parallel()
	app := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: lbc
spec:
  source:
    repoURL: https://aws.github.io/eks-charts
    chart: aws-load-balancer-controller
    targetRevision: 1.8.1
    helm:
      valueFiles:
        - values-prod.yaml
        - $values/lbc.yaml
      values: |
        clusterName: from-values
        region: us-east-1
      parameters:
        - name: replicaCount
          value: "3"
        - name: podLabels.team
          value: "007"
          forceString: true
        - name: podLabels.team
          value: "8"
        - name: clusterName
          value: a,b
        - name: nodeSelector.kubernetes\.io/os
          value: linux
  destination:
    namespace: kube-system
`
	m := gitopsModel(t, map[string]string{"app.yaml": app}, nil)
	r := onlyRelease(t, m)
	want := map[string]any{
		// values text, then the parameters (--set, then --set-string).
		"clusterName":  "a,b",
		"region":       "us-east-1",
		"replicaCount": int64(3),
		"podLabels":    map[string]any{"team": "007"},
		"nodeSelector": map[string]any{"kubernetes.io/os": "linux"},
	}
	if diff := cmp.Diff(want, r.Values); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	wantUnknown := []string{"spec.source.helm.valueFiles.0 (values-prod.yaml)", "spec.source.helm.valueFiles.1 ($values/lbc.yaml)"}
	if diff := cmp.Diff(wantUnknown, r.Unknown); diff != "" {
		t.Errorf("unknown (-want +got):\n%s", diff)
	}
	lines := originLines(r)
	for k, want := range map[string]string{
		"region":                        "app.yaml:16", // the block scalar's second line
		"clusterName":                   "app.yaml:25", // the parameter wins
		"replicaCount":                  "app.yaml:18",
		"podLabels.team":                "app.yaml:20", // --set-string applies last
		"nodeSelector.kubernetes.io/os": "app.yaml:27",
	} {
		if lines[k] != want {
			t.Errorf("origin of %s = %s, want %s", k, lines[k], want)
		}
	}
}

func TestGitOpsApplicationValuesObjectReplacesValues(t *testing.T) {
	t.Parallel()
	app := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: lbc
spec:
  source:
    repoURL: https://aws.github.io/eks-charts
    chart: aws-load-balancer-controller
    targetRevision: 1.8.1
    helm:
      values: |
        region: us-east-1
        clusterName: from-values
      valuesObject:
        clusterName: from-object
      parameters:
        - name: replicaCount
          value: "1"
`
	m := gitopsModel(t, map[string]string{"app.yaml": app}, nil)
	r := onlyRelease(t, m)
	want := map[string]any{"clusterName": "from-object", "replicaCount": int64(1)}
	if diff := cmp.Diff(want, r.Values); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if len(m.Notes) != 1 || !strings.Contains(m.Notes[0].Message, "valuesObject alone") {
		t.Errorf("notes = %+v, want one saying helm.values is not used", m.Notes)
	}
	if r.Namespace != "default" {
		t.Errorf("namespace = %q, want Helm's default", r.Namespace)
	}
}

func TestGitOpsApplicationSources(t *testing.T) {
	t.Parallel()
	app := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: addons
spec:
  source:
    repoURL: https://ignored.example
    chart: ignored
    targetRevision: 1.0.0
  sources:
    - repoURL: https://git.example/values.git
      targetRevision: main
      ref: values
    - repoURL: oci://public.ecr.aws/karpenter
      chart: karpenter
      targetRevision: ">=1.0.0 <1.1.0"
      helm:
        valueFiles: [$values/karpenter.yaml]
        valuesObject:
          settings:
            clusterName: c
    - repoURL: https://git.example/manifests.git
      path: manifests
      targetRevision: main
  destination:
    namespace: karpenter
`
	m := gitopsModel(t, map[string]string{"app.yaml": app}, nil)
	r := onlyRelease(t, m)
	if r.Chart != "karpenter" || r.Origin.Path != "spec.sources.1" || r.Name != "addons" {
		t.Errorf("release = %s from %s named %s, want karpenter from spec.sources.1 named addons", r.Chart, r.Origin.Path, r.Name)
	}
	if !cluster.IsUnknown(r.Version) {
		t.Errorf("version of a range = %q, want not known", r.Version)
	}
	if diff := cmp.Diff([]string{"spec.sources.1.helm.valueFiles.0 ($values/karpenter.yaml)"}, r.Unknown); diff != "" {
		t.Errorf("unknown (-want +got):\n%s", diff)
	}
	if len(m.Problems) > 0 {
		t.Errorf("a path of plain manifests is not a chart: %+v", m.Problems)
	}
}

func TestGitOpsApplicationSetPlaceholders(t *testing.T) {
	t.Parallel()
	set := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: karpenter
  namespace: argocd
spec:
  generators:
    - list:
        elements:
          - cluster: search-prod
  template:
    metadata:
      name: "{{cluster}}-karpenter"
    spec:
      destination:
        namespace: karpenter
      source:
        chart: karpenter
        repoURL: public.ecr.aws/karpenter
        targetRevision: 1.0.2
        helm:
          valuesObject:
            settings:
              clusterName: "{{cluster}}"
              featureGates:
                drift: false
          parameters:
            - name: settings.interruptionQueue
              value: "{{cluster}}-karpenter"
`
	m := gitopsModel(t, map[string]string{"set.yaml": set}, nil)
	r := onlyRelease(t, m)
	if !cluster.IsUnknown(r.Name) || r.Namespace != "karpenter" || r.Version != "1.0.2" {
		t.Errorf("release %q in %q at %q, want a name not known in karpenter at 1.0.2", r.Name, r.Namespace, r.Version)
	}
	keys := cluster.ValuesKeys(r.Values)
	want := []string{"settings.clusterName", "settings.featureGates.drift", "settings.interruptionQueue"}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	for _, k := range []string{"settings.clusterName", "settings.interruptionQueue"} {
		if s, _ := cluster.Lookup(r.Values, k).(string); !cluster.IsUnknown(s) {
			t.Errorf("%s = %q, want a value not known", k, s)
		}
	}
	if v := cluster.Lookup(r.Values, "settings.featureGates.drift"); v != false {
		t.Errorf("drift = %v, want false", v)
	}
	if o := r.ValueOrigins["settings.featureGates.drift"]; o.File != "set.yaml" || o.Line <= 0 {
		t.Errorf("drift origin = %+v, want a line of set.yaml", o)
	}
}

func TestGitOpsApplicationSetTemplatedChart(t *testing.T) {
	t.Parallel()
	set := `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: addons
spec:
  generators:
    - clusters: {}
  template:
    metadata:
      name: "{{name}}-addon"
    spec:
      destination:
        namespace: "{{metadata.labels.ns}}"
      source:
        chart: "{{metadata.labels.chart}}"
        repoURL: https://charts.example
        targetRevision: "{{metadata.labels.version}}"
        helm:
          values: |
            replicas: {{metadata.labels.replicas}}
            image:
              tag: "v1"
`
	m := gitopsModel(t, map[string]string{"set.yaml": set}, nil)
	r := onlyRelease(t, m)
	if !cluster.IsUnknown(r.Chart) || !cluster.IsUnknown(r.Version) || !cluster.IsUnknown(r.Namespace) {
		t.Errorf("chart %q version %q namespace %q: want all not known", r.Chart, r.Version, r.Namespace)
	}
	if !slices.Contains(r.Unknown, "spec.template.spec.source.chart") {
		t.Errorf("unknown = %v, want the chart", r.Unknown)
	}
	if s, _ := r.Values["replicas"].(string); !cluster.IsUnknown(s) {
		t.Errorf("replicas = %v, want not known", r.Values["replicas"])
	}
	if cluster.Lookup(r.Values, "image.tag") != "v1" {
		t.Errorf("image.tag = %v, want v1", cluster.Lookup(r.Values, "image.tag"))
	}
}

func TestGitOpsWrapperChart(t *testing.T) {
	t.Parallel()
	app := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: karpenter
  namespace: argocd
spec:
  source:
    repoURL: https://git.example/add-ons.git
    path: add-ons/karpenter
    targetRevision: HEAD
    helm:
      valueFiles: [values-prod.yaml, ../shared.yaml]
      parameters:
        - name: karpetner.clusterName
          value: prod
        - name: kp.clusterEndpoint
          value: https://example
  destination:
    namespace: karpenter
`
	charts := map[string]map[string]string{
		"add-ons/karpenter": {
			"Chart.yaml": `apiVersion: v2
name: karpenter
version: 0.1.0
dependencies:
  - name: karpenter
    alias: kp
    version: "~0.36"
    repository: oci://public.ecr.aws/karpenter
  - name: metrics-server
    version: 3.12.1
    repository: https://kubernetes-sigs.github.io/metrics-server/
    condition: metrics.enabled
  - name: common
    version: 1.0.0
    repository: file://../common
`,
			"Chart.lock": `dependencies:
  - name: karpenter
    version: 0.36.2
    repository: oci://public.ecr.aws/karpenter
`,
			"values.yaml": `kp:
  settings:
    clusterName: default
metrics:
  enabled: false
global:
  region: us-west-2
`,
			"values-prod.yaml": `kp:
  replicas: 2
`,
		},
	}
	m := gitopsModel(t, map[string]string{"argocd/karpenter.yaml": app}, charts)
	r := onlyRelease(t, m)
	if r.Chart != "karpenter" || r.Repository != "oci://public.ecr.aws/karpenter" || r.Version != "0.36.2" || r.Name != "karpenter" || r.Namespace != "karpenter" {
		t.Errorf("release = %+v", r)
	}
	if r.ChartDir != "" {
		t.Errorf("the dependency is described from the knowledge base, not rendered from %s", r.ChartDir)
	}
	want := map[string]any{
		"settings":        map[string]any{"clusterName": "default"},
		"clusterEndpoint": "https://example",
		"replicas":        int64(2),
		// Passed to no chart (metrics is read by a condition, global by every
		// chart): no template reads it.
		"karpetner": map[string]any{"clusterName": "prod"},
	}
	if diff := cmp.Diff(want, r.Values); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	lines := originLines(r)
	for k, want := range map[string]string{
		"settings.clusterName":  filepath.Join("add-ons/karpenter", "values.yaml") + ":3",
		"replicas":              filepath.Join("add-ons/karpenter", "values-prod.yaml") + ":2",
		"clusterEndpoint":       "argocd/karpenter.yaml:16",
		"karpetner.clusterName": "argocd/karpenter.yaml:14",
	} {
		if lines[k] != want {
			t.Errorf("origin of %s = %s, want %s", k, lines[k], want)
		}
	}
	if diff := cmp.Diff([]string{"spec.source.helm.valueFiles.1 (../shared.yaml)"}, r.Unknown); diff != "" {
		t.Errorf("unknown (-want +got):\n%s", diff)
	}
	var notFollowed []string
	for _, p := range m.Problems {
		notFollowed = append(notFollowed, p.Message)
	}
	if len(notFollowed) != 1 || !strings.Contains(notFollowed[0], "common") || !strings.Contains(notFollowed[0], "not followed") {
		t.Errorf("problems = %q, want the file:// dependency not followed", notFollowed)
	}
	for _, f := range []string{"add-ons/karpenter/Chart.yaml", "add-ons/karpenter/values-prod.yaml", "add-ons/karpenter/values.yaml"} {
		if !slices.Contains(m.Inputs, filepath.FromSlash(f)) {
			t.Errorf("inputs %v lack %s", m.Inputs, f)
		}
	}
}

func TestGitOpsChartWithTemplates(t *testing.T) {
	t.Parallel()
	app := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: web
spec:
  source:
    repoURL: https://git.example/apps.git
    path: charts/web
    helm:
      valuesObject:
        replicas: 3
  destination:
    namespace: web
`
	charts := map[string]map[string]string{
		"repo/charts/web": {
			"Chart.yaml":                "apiVersion: v2\nname: web\nversion: 1.2.3\n",
			"values.yaml":               "replicas: 1\n",
			"templates/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\n",
		},
		"repo/other/web": {"Chart.yaml": "name: web\n"},
	}
	m := gitopsModel(t, map[string]string{"repo/argocd/web.yaml": app}, charts)
	r := onlyRelease(t, m)
	if r.ChartDir != "repo/charts/web" || len(r.ChartFiles) != 3 || r.Chart != "web" || r.Version != "1.2.3" {
		t.Errorf("release = %s %s from %s with %d files, want the local chart web 1.2.3", r.Chart, r.Version, r.ChartDir, len(r.ChartFiles))
	}
	if diff := cmp.Diff(map[string]any{"replicas": int64(3)}, r.Values); diff != "" {
		t.Errorf("values are the Application's, the chart's own are its defaults (-want +got):\n%s", diff)
	}
}

func TestGitOpsChartNotInInputs(t *testing.T) {
	t.Parallel()
	app := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: guestbook
spec:
  source:
    repoURL: https://github.com/argoproj/argocd-example-apps.git
    path: helm-guestbook
    helm:
      values: |
        replicaCount: 2
  destination:
    namespace: default
`
	m := gitopsModel(t, map[string]string{"app.yaml": app}, nil)
	if len(m.HelmReleases) != 0 {
		t.Fatalf("releases = %+v, want none", m.HelmReleases)
	}
	if len(m.Problems) != 1 || !m.Problems[0].Unresolved || !strings.Contains(m.Problems[0].Message, "helm-guestbook") {
		t.Errorf("problems = %+v, want the chart said not analysed", m.Problems)
	}
}

const fluxFiles = `apiVersion: source.toolkit.fluxcd.io/v1beta2
kind: HelmRepository
metadata:
  name: karpenter
  namespace: flux-system
spec:
  type: oci
  url: oci://public.ecr.aws/karpenter
---
apiVersion: v1
kind: Secret
metadata:
  name: karpenter-values
  namespace: flux-system
stringData:
  values.yaml: |
    settings:
      clusterName: secret-cluster-name
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: karpenter
  namespace: flux-system
spec:
  targetNamespace: karpenter
  chart:
    spec:
      chart: karpenter
      version: 1.0.2
      sourceRef:
        kind: HelmRepository
        name: karpenter
  valuesFrom:
    - kind: Secret
      name: karpenter-values
  postRenderers:
    - kustomize: {}
  values:
    settings:
      interruptionQueue: ${CLUSTER_NAME}
    replicas: 1
`

func TestGitOpsFluxHelmRelease(t *testing.T) {
	t.Parallel()
	m := gitopsModel(t, map[string]string{"flux.yaml": fluxFiles}, nil)
	r := onlyRelease(t, m)
	if r.Name != "karpenter-karpenter" || r.Namespace != "karpenter" || r.Chart != "karpenter" || r.Version != "1.0.2" || r.Repository != "oci://public.ecr.aws/karpenter" {
		t.Errorf("release %s/%s = %s %s from %s", r.Namespace, r.Name, r.Chart, r.Version, r.Repository)
	}
	want := map[string]any{"settings": map[string]any{"interruptionQueue": "${CLUSTER_NAME}"}, "replicas": int64(1)}
	if diff := cmp.Diff(want, r.Values); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"spec.valuesFrom.0 (Secret karpenter-values)", "spec.postRenderers"}, r.Unknown); diff != "" {
		t.Errorf("unknown (-want +got):\n%s", diff)
	}
	if got := r.ValueOrigins["replicas"].String(); got != "flux.yaml:42" {
		t.Errorf("origin of replicas = %s, want flux.yaml:42", got)
	}
	// The Secret's content is never read.
	dump := fmt.Sprintf("%+v %+v %+v", r, m.Problems, m.Notes)
	if strings.Contains(dump, "secret-cluster-name") {
		t.Errorf("the Secret's values were read: %s", dump)
	}
}

func TestGitOpsFluxDefaultsAndRanges(t *testing.T) {
	t.Parallel()
	files := `apiVersion: helm.toolkit.fluxcd.io/v2beta1
kind: HelmRelease
metadata:
  name: metrics-server
  namespace: kube-system
spec:
  releaseName: ms
  chart:
    spec:
      chart: metrics-server
      version: 3.x
      sourceRef:
        kind: HelmRepository
        name: not-in-inputs
---
apiVersion: source.toolkit.fluxcd.io/v1beta2
kind: OCIRepository
metadata:
  name: podinfo
  namespace: apps
spec:
  url: oci://ghcr.io/stefanprodan/charts/podinfo
  ref:
    tag: 6.5.4
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: podinfo
  namespace: apps
spec:
  chartRef:
    kind: OCIRepository
    name: podinfo
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: from-git
  namespace: apps
spec:
  chart:
    spec:
      chart: ./charts/nowhere
      sourceRef:
        kind: GitRepository
        name: apps
`
	m := gitopsModel(t, map[string]string{"flux.yaml": files}, nil)
	if len(m.HelmReleases) != 2 {
		t.Fatalf("releases = %d, want 2", len(m.HelmReleases))
	}
	ms, podinfo := m.HelmReleases[0], m.HelmReleases[1]
	if ms.Name != "ms" || ms.Namespace != "kube-system" || ms.Repository != "" || !cluster.IsUnknown(ms.Version) {
		t.Errorf("metrics-server = %+v", ms)
	}
	if podinfo.Name != "podinfo" || podinfo.Chart != "podinfo" || podinfo.Repository != "oci://ghcr.io/stefanprodan/charts" || podinfo.Version != "6.5.4" {
		t.Errorf("podinfo = %+v", podinfo)
	}
	if len(m.Problems) != 1 || !strings.Contains(m.Problems[0].Message, "./charts/nowhere") {
		t.Errorf("problems = %+v, want the GitRepository chart said not analysed", m.Problems)
	}
}

func TestGitOpsLiveObjectsAreLeftAlone(t *testing.T) {
	t.Parallel()
	objs, _ := Decode("app.yaml", []byte(argoValuesObject))
	objs[0].Origin = cluster.Origin{File: "cluster:test"}
	m := &cluster.Model{Objects: objs}
	InterpretGitOps(m, LocalCharts{})
	if len(m.HelmReleases) != 0 {
		t.Errorf("a running cluster's Application became a release: %+v", m.HelmReleases)
	}
}

func TestGitOpsValuesEdit(t *testing.T) {
	t.Parallel()
	objs := func(text string) *cluster.Object {
		o, probs := Decode("app.yaml", []byte(text))
		if len(probs) > 0 || len(o) == 0 {
			t.Fatalf("decode: %+v", probs)
		}
		return o[len(o)-1]
	}
	rename := map[string]any{"settings": map[string]any{"interruptionQueueName": nil, "interruptionQueue": "prod"}}
	multi := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: k
spec:
  sources:
    - repoURL: https://git.example/values.git
      ref: values
    - chart: karpenter
      repoURL: public.ecr.aws/karpenter
      targetRevision: 1.0.2
      helm:
        valuesObject:
          settings:
            interruptionQueueName: prod
            clusterName: prod
`
	params := strings.Replace(argoValuesObject, "      valuesObject:", "      parameters:\n        - name: settings.interruptionQueueName\n          value: prod\n      valuesObject:", 1)
	text := strings.Replace(argoValuesObject, "      valuesObject:\n        settings:\n          clusterName: prod\n          interruptionQueueName: prod\n        replicas: 1\n", "      values: |\n        settings:\n          interruptionQueueName: prod\n", 1)
	for _, tc := range []struct {
		name   string
		decl   cluster.Decl
		values map[string]any
		ok     bool
		want   string
	}{
		{name: "valuesObject", decl: cluster.Decl{Object: objs(argoValuesObject), List: "spec.source"}, values: rename, ok: true,
			want: "spec:\n  source:\n    helm:\n      valuesObject:\n        settings:\n          interruptionQueue: prod\n          interruptionQueueName: null\n"},
		{name: "a source of spec.sources", decl: cluster.Decl{Object: objs(multi), List: "spec.sources.1"}, values: rename, ok: true,
			want: "interruptionQueue: prod"},
		{name: "a parameter sets the key", decl: cluster.Decl{Object: objs(params), List: "spec.source"}, values: rename},
		{name: "values text", decl: cluster.Decl{Object: objs(text), List: "spec.source"}, values: rename},
		{name: "a dependency of a chart of the inputs", decl: cluster.Decl{Object: objs(argoValuesObject), List: "spec.source", Key: "karpenter"}, values: rename},
		{name: "flux", decl: cluster.Decl{Object: objs(fluxFiles), List: "spec.chart"}, values: rename, ok: true,
			want: "spec:\n  values:\n    settings:\n      interruptionQueue: prod\n      interruptionQueueName: null\n"},
		{name: "not a GitOps object", decl: cluster.Decl{Object: objs("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), List: "spec.source"}, values: rename},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, ok := GitOpsValuesEdit(tc.decl, tc.values)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v (%+v)", ok, tc.ok, e)
			}
			if !ok {
				return
			}
			if e.Format != cluster.FormatYAML || e.File != "app.yaml" || e.Line != tc.decl.Object.Origin.Line {
				t.Errorf("edit at %s:%d in %s, want a YAML patch of the object at app.yaml:%d", e.File, e.Line, e.Format, tc.decl.Object.Origin.Line)
			}
			if !strings.Contains(e.Text, tc.want) {
				t.Errorf("edit:\n%s\nwant it to hold:\n%s", e.Text, tc.want)
			}
		})
	}
	o := objs(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: k
spec:
  template:
    spec:
      source:
        chart: karpenter
        helm:
          valuesObject:
            settings:
              interruptionQueueName: "{{cluster}}"
`)
	if _, ok := GitOpsValuesEdit(cluster.Decl{Object: o, List: "spec.template.spec.source"}, map[string]any{"settings": map[string]any{"interruptionQueue": cluster.Unknown("cluster")}}); ok {
		t.Errorf("a placeholder was written back as a value not known")
	}
	if _, ok := GitOpsValuesEdit(cluster.Decl{Object: o, List: "spec.template.spec.source"}, map[string]any{"replicas": int64(2)}); !ok {
		t.Errorf("a known value was not written to the template")
	}
}

func TestSetKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"a.b":                            "a.b",
		`nodeSelector.kubernetes\.io/os`: "nodeSelector.kubernetes.io/os",
		"tolerations[0].key":             "tolerations.0.key",
		"a[":                             "a",
	} {
		if got := setKey(in); got != want {
			t.Errorf("setKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzGitOpsRelease(f *testing.F) {
	f.Add([]byte(argoValuesObject))
	f.Add([]byte(fluxFiles))
	f.Add([]byte("apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nspec:\n  template:\n    metadata: {name: '{{a}}'}\n    spec:\n      source: {chart: '{{x}}', helm: {values: \"a: {{b}}\\n{{c}}: [\", parameters: [{name: 'a[99999999]', value: '{x'}, {name: '{{n}}'}]}}\n"))
	f.Add([]byte("apiVersion: argoproj.io/v1alpha1\nkind: Application\nspec:\n  sources: [1, {path: ../../x, helm: {}}, {path: charts/c, helm: {valueFiles: [v.yaml, /etc/passwd, $values/x]}}]\n"))
	f.Add([]byte("apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nspec:\n  chartRef: {kind: OCIRepository, name: x}\n  chart: {spec: {sourceRef: {kind: GitRepository}, chart: '.'}}\n  values: [1]\n  valuesFrom: [{kind: Secret}]\n"))
	charts := map[string]map[string]string{
		"charts/c": {
			"Chart.yaml":  "name: c\ndependencies: [{name: karpenter, repository: 'https://charts.karpenter.sh', version: 0.6.5, condition: 'a.b,c'}, {name: x}]\n",
			"values.yaml": "a: &a [*a]\n",
			"v.yaml":      "karpenter: {x: 1}\n",
		},
		".": {"Chart.yaml": "name: root\n"},
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, probs := Decode("fuzz.yaml", data)
		m := &cluster.Model{Objects: objs, Problems: probs}
		start := time.Now()
		InterpretGitOps(m, fakeCharts(charts))
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("InterpretGitOps took %v", d)
		}
		for _, r := range m.HelmReleases {
			if r.Values == nil || r.ValueOrigins == nil || r.Address != "" {
				t.Fatalf("release = %+v", r)
			}
		}
		for _, o := range m.Objects {
			for _, p := range []string{"spec.source", "spec.sources.0", "spec.sources.-1", "spec.sources.9", "spec.template.spec.source", "spec.chart", "spec"} {
				GitOpsValuesEdit(cluster.Decl{Object: o, List: p}, map[string]any{"a": map[string]any{"b": nil}, "c": 1})
			}
		}
	})
}
