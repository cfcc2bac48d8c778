package source

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// A document that does not parse next to a template placeholder is a template
// (filled in by sed, envsubst, Helm or Terraform before it is applied): what
// eksdoctor cannot read yet, not a broken manifest. One that does not parse with
// no placeholder near is invalid input.
func TestTemplatesAreNotBrokenManifests(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"nodepool.yaml": "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  template:\n    spec:\n      requirements: {{ .Values.requirements }}\n      - bad\n",
		// Far from the placeholder on line 1, the error is the file's own.
		"broken.yaml": "# ${NAME}\n" + strings.Repeat("# filler\n", 20) + "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, c := range cs {
		for _, p := range c.Model.Problems {
			got[filepath.Base(p.Origin.File)] = p.Unresolved
			if p.Unresolved && !strings.Contains(p.Message, "this document is a template (it holds {{ .Values.requirements }})") {
				t.Errorf("template message: %s", p.Message)
			}
		}
	}
	if unresolved, ok := got["nodepool.yaml"]; !ok || !unresolved {
		t.Errorf("nodepool.yaml: problem %v (unresolved %v), want an unresolved one", ok, unresolved)
	}
	if unresolved, ok := got["broken.yaml"]; !ok || unresolved {
		t.Errorf("broken.yaml: problem %v (unresolved %v), want invalid input", ok, unresolved)
	}
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const deploymentYAML = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app, namespace: default}\nspec:\n  selector: {matchLabels: {app: x}}\n  template:\n    metadata: {labels: {app: x}}\n    spec:\n      containers: [{name: c, image: x}]\n"

// A manifest joins the configuration whose directory holds it before one that
// only shares a prefix with it; with a single configuration, manifests beside it
// (a gitops/ folder next to terraform/) join it.
func TestManifestsJoinTheConfigurationThatHoldsThem(t *testing.T) {
	release := "provider \"aws\" {}\nresource \"helm_release\" \"x\" {\n  name = \"x\"\n  chart = \"x\"\n}\n"
	dir := writeTree(t, map[string]string{
		"main.tf":       release,
		"app.yaml":      deploymentYAML,
		"child/main.tf": release,
	})
	cs, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	workloads := map[string]int{}
	for _, c := range cs {
		name, _ := filepath.Rel(dir, c.Name)
		workloads[name] = len(c.Model.Workloads)
	}
	if workloads["."] != 1 || workloads["child"] != 0 || len(cs) != 2 {
		t.Errorf("workloads by cluster %v, want the Deployment in the parent's", workloads)
	}

	dir = writeTree(t, map[string]string{
		"terraform/main.tf": release,
		"gitops/app.yaml":   deploymentYAML,
	})
	cs, err = Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || len(cs[0].Model.Workloads) != 1 {
		t.Errorf("got %d clusters, want the manifests beside the only configuration to join it", len(cs))
	}
}

// A ClusterConfig template that only adds node groups (eksctl create nodegroup
// -f with $EKS_CLUSTER_NAME) shows part of the cluster's capacity: the rest is
// capacity that cannot be seen. A ClusterConfig template that describes the
// cluster (with iam, addons, ...) does not.
func TestNodeGroupOnlyClusterConfigTemplate(t *testing.T) {
	for _, tc := range []struct {
		text   string
		unseen int
	}{
		{"apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: $EKS_CLUSTER_NAME, region: $AWS_REGION}\nmanagedNodeGroups:\n- name: graviton\n", 1},
		{"apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: demo, region: eu-west-1}\nmanagedNodeGroups:\n- name: graviton\n", 0},
		{"apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata:\n  name: ${CLUSTER_NAME}\n  region: eu-west-1\niam: {withOIDC: true}\nmanagedNodeGroups:\n- name: graviton\n", 0},
	} {
		dir := writeTree(t, map[string]string{"cluster.yaml": tc.text})
		cs, err := Load([]string{dir}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := len(cs[0].Model.Unseen); got != tc.unseen {
			t.Errorf("%q: %d unseen capacity, want %d", tc.text, got, tc.unseen)
		}
	}
}

// Hidden directories are read (a workshop's .workshop/terraform); what tools
// keep beside a configuration (.git, .terraform, node_modules) is not.
func TestHiddenDirectories(t *testing.T) {
	dir := writeTree(t, map[string]string{
		".workshop/terraform/app.yaml":  deploymentYAML,
		".terraform/modules/x/app.yaml": strings.Replace(deploymentYAML, "name: app", "name: cached", 1),
		".git/app.yaml":                 strings.Replace(deploymentYAML, "name: app", "name: git", 1),
	})
	cs, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		for _, w := range c.Model.Workloads {
			names = append(names, w.Object.Name)
		}
	}
	if strings.Join(names, " ") != "app" {
		t.Errorf("workloads %v, want only the one under .workshop", names)
	}
}

// Charts Argo CD and Flux install are said, once: eksdoctor does not render them.
func TestGitOpsCharts(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"apps.yaml": `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: karpenter, namespace: argocd}
spec:
  source: {repoURL: public.ecr.aws/karpenter, chart: karpenter, targetRevision: 1.0.8}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: metrics-server, namespace: flux-system}
spec:
  chart:
    spec: {chart: metrics-server, sourceRef: {kind: HelmRepository, name: metrics-server}}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: manifests, namespace: argocd}
spec:
  source: {repoURL: https://example.com/repo.git, path: k8s}
`,
	})
	cs, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "2 Helm charts are installed by Argo CD or Flux objects, which eksdoctor does not render: what they create is not analysed: karpenter (Application/argocd/karpenter), metrics-server (HelmRelease/flux-system/metrics-server)"
	var got []string
	for _, p := range cs[0].Model.Problems {
		got = append(got, p.Message)
	}
	if len(got) != 1 || got[0] != want {
		t.Errorf("problems %q, want %q", got, want)
	}
}

// A workload whose values are envsubst placeholders (a port, a quantity) parses
// as YAML: it is read without them, marked, not as invalid input.
func TestEnvsubstTemplateWorkload(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"deployment-template.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: \"${NAME}\"\nspec:\n  selector: {matchLabels: {app: x}}\n  template:\n    metadata: {labels: {app: x}}\n    spec:\n      containers:\n      - name: c\n        image: nginx\n        ports:\n        - containerPort: ${PORT}\n",
		"broken.yaml":              deploymentYAML + "---\n" + strings.Replace(deploymentYAML, "containers: [{name: c, image: x}]", "containers: [{name: c, image: x, ports: [{containerPort: eighty}]}]", 1),
	})
	cs, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range cs[0].Model.Problems {
		got = append(got, fmt.Sprintf("%s unresolved=%v", filepath.Base(p.Origin.File), p.Unresolved))
	}
	sort.Strings(got)
	if want := []string{"broken.yaml unresolved=false"}; !cmp.Equal(got, want) {
		t.Errorf("problems %v, want %v", got, want)
	}
	// The template's workload is read without its placeholders, marked.
	for _, w := range cs[0].Model.Workloads {
		if w.Object.Name == "${NAME}" && !strings.Contains(w.Object.Unknown, "containerPort") {
			t.Errorf("template workload Unknown = %q", w.Object.Unknown)
		}
	}
}

// A file found in a directory that names no apiVersion and kind is not a
// manifest, broken or not; one that does is.
func TestNonManifestFilesDoNotParse(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"tsconfig.json": "{\n  // comments\n  \"compilerOptions\": {\"strict\": true},\n}\n",
		"broken.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n   namespace: y\n",
	})
	cs, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, p := range cs[0].Model.Problems {
		files = append(files, filepath.Base(p.Origin.File))
	}
	if !cmp.Equal(files, []string{"broken.yaml"}) {
		t.Errorf("problems in %v, want only broken.yaml", files)
	}
}

// Charts no release renders and helmfiles are said: what they install is not
// analysed.
func TestUnrenderedChartsAndHelmfiles(t *testing.T) {
	dir := writeTree(t, map[string]string{
		"charts/pools/Chart.yaml":          "apiVersion: v2\nname: pools\nversion: 0.1.0\n",
		"charts/pools/templates/pool.yaml": "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: x}\n",
		"helmfile.yaml":                    "releases:\n- name: karpenter\n  chart: oci://public.ecr.aws/karpenter/karpenter\n",
		"app.yaml":                         deploymentYAML,
	})
	cs, err := Load([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range cs[0].Model.Problems {
		if !p.Unresolved {
			t.Errorf("problem %+v", p)
		}
		got = append(got, filepath.Base(p.Origin.File))
	}
	sort.Strings(got)
	if want := []string{"Chart.yaml", "helmfile.yaml"}; !cmp.Equal(got, want) {
		t.Errorf("said of %v, want %v", got, want)
	}
}

// Files read from a directory are not kept in memory: the lines and contents
// findings ask for later are read again, and a file changed since is not
// trusted (its fields fall back to the object's first line, its content is
// unknown).
func TestFilesAreReadAgainForLines(t *testing.T) {
	doc := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  selector: {matchLabels: {app: x}}\n  template:\n    metadata: {labels: {app: x}}\n    spec:\n      tolerations:\n      - {operator: Exists}\n      containers: [{name: c, image: x}]\n"
	dir := writeTree(t, map[string]string{"a.yaml": "# first\n---\n" + doc})
	workload := func() *cluster.Workload {
		t.Helper()
		cs, err := Load([]string{dir}, Options{})
		if err != nil || len(cs) != 1 || len(cs[0].Model.Workloads) != 1 {
			t.Fatalf("load: %v, %d clusters", err, len(cs))
		}
		return cs[0].Model.Workloads[0]
	}
	w := workload()
	if got := w.Object.At("spec.template.spec.tolerations").Line; got != 12 {
		t.Errorf("tolerations at line %d, want 12", got)
	}
	if name := cluster.Lookup(w.Object.Data(), "metadata.name"); name != "api" {
		t.Errorf("content read again names %v", name)
	}

	w = workload()
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("# first\n---\n"+strings.Replace(doc, "name: api", "name: abc", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := w.Object.At("spec.template.spec.tolerations").Line; got != 3 {
		t.Errorf("changed file: tolerations at line %d, want the object's first line 3", got)
	}
	if c := w.Object.Data(); c != nil {
		t.Errorf("changed file: content %v, want unknown", c)
	}
}

// A cluster entry of the configuration file that declares the capacity
// complete leaves nothing presumed outside the inputs: not the node groups of
// a GitOps repository given alone (the manifests' own cluster), not the
// NodePools of a Karpenter the inputs install, not the rest of a node-group
// template's cluster, not the NodePools of an EKS Auto Mode cluster that
// enables no built-in NodePool. Auto Mode's built-in NodePools are seen.
func TestCapacityComplete(t *testing.T) {
	const nodePool = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: default}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n"
	const karpenter = "provider \"aws\" {}\nresource \"helm_release\" \"karpenter\" {\n  name = \"karpenter\"\n  namespace = \"kube-system\"\n  repository = \"oci://public.ecr.aws/karpenter\"\n  chart = \"karpenter\"\n  version = \"1.0.8\"\n}\n"
	for _, tc := range []struct {
		name    string
		files   map[string]string
		cluster string // the cluster entry names it, relative to the tree
		// outside is how much capacity is presumed outside the inputs when
		// nothing is declared; want the unseen capacity left when the
		// capacity is declared complete.
		outside int
		want    []string
	}{
		{"gitops alone", map[string]string{"gitops/nodepool.yaml": nodePool, "gitops/app.yaml": deploymentYAML}, LooseCluster, 1, nil},
		{"karpenter without NodePools", map[string]string{"infra/main.tf": karpenter}, "infra", 2, nil},
		{"node-group template", map[string]string{"cluster.yaml": "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: $EKS_CLUSTER_NAME, region: $AWS_REGION}\nmanagedNodeGroups:\n- name: graviton\n"}, "cluster.yaml", 1, nil},
		{"auto mode", map[string]string{"cluster.yaml": "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: demo, region: eu-west-1}\nautoModeConfig: {enabled: true}\n"}, "cluster.yaml", 0, nil},
		{"auto mode without built-in NodePools", map[string]string{"cluster.yaml": "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: demo, region: eu-west-1}\nautoModeConfig: {enabled: true, nodePools: []}\n"}, "cluster.yaml", 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeTree(t, tc.files)
			name := tc.cluster
			if name != LooseCluster {
				name = filepath.Join(dir, name)
			}
			unseen := func(as []Assignment) []string {
				cs, err := Load([]string{dir}, Options{Assign: as})
				if err != nil {
					t.Fatal(err)
				}
				if len(cs) != 1 {
					t.Fatalf("%d clusters, want 1", len(cs))
				}
				var out []string
				for _, u := range cs[0].Model.Unseen {
					out = append(out, u.What)
				}
				return out
			}
			if got := unseen(nil); len(got) != len(tc.want)+tc.outside {
				t.Errorf("undeclared: unseen %q, want %d presumed outside the inputs besides %q", got, tc.outside, tc.want)
			}
			if got := unseen([]Assignment{{Cluster: name, CapacityComplete: true}}); !cmp.Equal(got, tc.want) {
				t.Errorf("declared complete: unseen %q, want %q", got, tc.want)
			}
			// An entry naming another cluster declares nothing of this one.
			if got := unseen([]Assignment{{Cluster: "elsewhere", CapacityComplete: true}}); len(got) != len(tc.want)+tc.outside {
				t.Errorf("declared for another cluster: unseen %q, want %d presumed outside the inputs besides %q", got, tc.outside, tc.want)
			}
		})
	}
}

// The manifests' own cluster can be named: manifests a configuration is
// nearest to are assigned to it, and a cluster entry may declare its capacity.
func TestAssignToManifestsCluster(t *testing.T) {
	release := "provider \"aws\" {}\nresource \"helm_release\" \"x\" {\n  name = \"x\"\n  chart = \"x\"\n}\n"
	dir := writeTree(t, map[string]string{"infra/main.tf": release, "gitops/app.yaml": deploymentYAML})
	cs, err := Load([]string{dir}, Options{Assign: []Assignment{{Cluster: LooseCluster, Include: []string{filepath.Join(dir, "gitops", "**")}, CapacityComplete: true}}})
	if err != nil {
		t.Fatal(err)
	}
	workloads := map[string]int{}
	for _, c := range cs {
		workloads[filepath.Base(c.Name)] = len(c.Model.Workloads)
		if c.Name == LooseCluster && len(c.Model.Unseen) != 0 {
			t.Errorf("manifests: unseen %v, want none (declared complete)", c.Model.Unseen)
		}
	}
	if !cmp.Equal(workloads, map[string]int{"infra": 0, LooseCluster: 1}) {
		t.Errorf("workloads by cluster %v, want the Deployment in the manifests' cluster", workloads)
	}
	_, err = Load([]string{dir}, Options{Assign: []Assignment{{Cluster: "nowhere", Include: []string{"app.yaml"}}}})
	if err == nil || !strings.Contains(err.Error(), "(they are: "+filepath.Join(dir, "infra")+"; manifests puts it in a cluster of its own)") {
		t.Errorf("assignment to an unknown cluster: %v", err)
	}
}
