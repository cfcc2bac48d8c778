package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/fixapply"
	"github.com/eksdoctor/eksdoctor/internal/shared"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/report"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/source"
	"github.com/eksdoctor/eksdoctor/teardown"
)

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }, Getwd: func() (string, error) { return wd, nil }}
	code := Run(context.Background(), "eksdoctor", args, env)
	return stdout.String(), stderr.String(), code
}

func writeFiles(t *testing.T, files map[string]string) string {
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

const teardownTF = `module "vpc" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "~> 5.0"
  name    = "demo"
  cidr    = "10.0.0.0/16"
}

module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "20.24.0"

  cluster_name    = "demo"
  cluster_version = "1.30"
  vpc_id          = module.vpc.vpc_id
  subnet_ids      = module.vpc.private_subnets

  eks_managed_node_groups = {
    karpenter = {
      instance_types = ["m5.large"]
      min_size       = 2
      max_size       = 3
      desired_size   = 2
    }
  }
}

module "karpenter" {
  source  = "terraform-aws-modules/eks/aws//modules/karpenter"
  version = "20.24.0"

  cluster_name = module.eks.cluster_name
}

resource "helm_release" "karpenter" {
  namespace  = "kube-system"
  name       = "karpenter"
  repository = "oci://public.ecr.aws/karpenter"
  chart      = "karpenter"
  version    = "1.0.0"
  wait       = false

  values = [
    <<-EOT
    settings:
      clusterName: ${module.eks.cluster_name}
      interruptionQueue: ${module.karpenter.queue_name}
    EOT
  ]
}

resource "kubectl_manifest" "karpenter_node_class" {
  yaml_body = <<-YAML
    apiVersion: karpenter.k8s.aws/v1
    kind: EC2NodeClass
    metadata:
      name: default
    spec:
      role: ${module.karpenter.node_iam_role_name}
      amiSelectorTerms:
        - alias: al2023@latest
      subnetSelectorTerms:
        - tags:
            karpenter.sh/discovery: demo
      securityGroupSelectorTerms:
        - tags:
            karpenter.sh/discovery: demo
  YAML
}

resource "kubectl_manifest" "karpenter_node_pool" {
  yaml_body = <<-YAML
    apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata:
      name: default
    spec:
      template:
        spec:
          nodeClassRef:
            group: karpenter.k8s.aws
            kind: EC2NodeClass
            name: default
  YAML

  depends_on = [
    kubectl_manifest.karpenter_node_class
  ]
}
`

func TestTeardownTextTerraform(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{"main.tf": teardownTF})
	out, stderr, code := runCLI(t, "teardown", dir)
	if code != ExitFindings {
		t.Errorf("exit code = %d, want %d (teardown-order errors); stderr: %s", code, ExitFindings, stderr)
	}
	main := filepath.Join(dir, "main.tf")
	for _, want := range []string{
		"Teardown order (terraform destroy)",
		"1. Delete the NodePools and wait until no NodeClaim remains\n   - kubectl_manifest.karpenter_node_pool (NodePool/default)  " + main + ":70",
		"2. Delete the EC2NodeClasses\n   - kubectl_manifest.karpenter_node_class (EC2NodeClass/default)  " + main + ":51",
		"3. Uninstall the Karpenter controller\n   - helm_release.karpenter (Deployment/kube-system/karpenter)  " + main + ":34",
		"4. Remove the Karpenter IAM roles, interruption queue and EventBridge rules\n   - module.karpenter  " + main + ":27",
		"5. Remove the node group or Fargate profile that runs the Karpenter controller\n   - node group \"karpenter\" (in module.eks)",
		"6. Delete the EKS cluster\n   - module.eks  " + main + ":8",
		"7. Delete the network (VPC, subnets, NAT gateways)\n   - module.vpc  " + main + ":1",
		"error teardown-order  " + main + ":51\n    terraform destroy can remove the Karpenter controller (helm_release.karpenter) before kubectl_manifest.karpenter_node_class, which it must finalize",
		"warning teardown-orphans  " + main + ":70\n    kubectl_manifest.karpenter_node_pool: terraform destroy does not wait for Karpenter to finalize NodePool/default",
		"Edits that make terraform destroy follow this order\n  " + main + ":51  kubectl_manifest.karpenter_node_class\n    depends_on = [\n      helm_release.karpenter,\n    ]\n",
		"  " + main + ":51  kubectl_manifest.karpenter_node_class\n    wait = true\n",
		"Then run terraform destroy once the edits are applied.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q\n--- output:\n%s", want, out)
		}
	}
}

func TestTeardownJSONManifests(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, map[string]string{"karpenter.yaml": `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms:
    - alias: al2023@latest
  subnetSelectorTerms:
    - tags: {karpenter.sh/discovery: demo}
  securityGroupSelectorTerms:
    - tags: {karpenter.sh/discovery: demo}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
`})
	out, stderr, code := runCLI(t, "teardown", "-o", "json", dir)
	if code != ExitOK {
		t.Fatalf("exit code = %d, stderr: %s", code, stderr)
	}
	var got report.TeardownPlan
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	want := report.TeardownPlan{
		Version: 1,
		Tool:    "kubectl",
		Steps: []report.TeardownStep{
			{
				Order: 1, Stage: "nodepools", Title: "Delete the NodePools and wait until no NodeClaim remains",
				Items:    []report.TeardownItem{{Name: "NodePool/default", Objects: []string{"NodePool/default"}, Manager: "kubectl", Origin: report.TeardownFile{File: filepath.Join(dir, "karpenter.yaml"), Line: 14}}},
				Wait:     "no NodeClaim remains (kubectl get nodeclaims shows none): Karpenter has drained and terminated every node",
				Commands: []string{"kubectl delete nodepools.karpenter.sh default", "kubectl wait --for=delete nodeclaims.karpenter.sh --all --timeout=30m"},
			},
			{
				Order: 2, Stage: "nodeclasses", Title: "Delete the EC2NodeClasses",
				Items:    []report.TeardownItem{{Name: "EC2NodeClass/default", Objects: []string{"EC2NodeClass/default"}, Manager: "kubectl", Origin: report.TeardownFile{File: filepath.Join(dir, "karpenter.yaml"), Line: 1}}},
				Wait:     "the EC2NodeClasses are gone: Karpenter removed their instance profiles and launch templates",
				Commands: []string{"kubectl delete ec2nodeclasses.karpenter.k8s.aws default --wait --timeout=15m"},
			},
		},
		Hazards:  []report.TeardownHazard{},
		Edits:    []report.TeardownEdit{},
		Notes:    []string{},
		Summary:  map[string]int{"error": 0, "warning": 0, "info": 0},
		Commands: []string{"kubectl delete nodepools.karpenter.sh default", "kubectl wait --for=delete nodeclaims.karpenter.sh --all --timeout=30m", "kubectl delete ec2nodeclasses.karpenter.k8s.aws default --wait --timeout=15m"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JSON plan (-want +got):\n%s", diff)
	}
}

// With several clusters, the JSON plan is a list of each cluster's plan,
// each whole and naming its cluster.
func TestTeardownJSONSeveralClusters(t *testing.T) {
	t.Parallel()
	config := func(name string) string {
		return "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: " + name + ", region: eu-west-1}\nmanagedNodeGroups:\n  - name: ng-1\n    instanceType: m5.large\n"
	}
	dir := writeFiles(t, map[string]string{"a.yaml": config("alpha"), "b.yaml": config("beta")})
	out, stderr, code := runCLI(t, "teardown", "-o", "json", dir)
	if code != ExitOK {
		t.Fatalf("exit code = %d, stderr: %s", code, stderr)
	}
	var got []report.TeardownPlan
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not a JSON list of plans: %v\n%s", err, out)
	}
	if len(got) != 2 {
		t.Fatalf("%d plans, want 2:\n%s", len(got), out)
	}
	for i, name := range []string{"alpha", "beta"} {
		p := got[i]
		if p.Version != 1 || !strings.HasSuffix(p.Cluster, string(name[0])+".yaml") || len(p.Commands) == 0 || !strings.Contains(strings.Join(p.Commands, "\n"), "--name "+name) {
			t.Errorf("plan %d: version %d, cluster %q, commands %q; want the plan of %s", i, p.Version, p.Cluster, p.Commands, name)
		}
	}
}

func TestTeardownUsage(t *testing.T) {
	t.Parallel()
	_, stderr, code := runCLI(t, "teardown", "-o", "sarif", ".")
	if code != ExitUsage || !strings.Contains(stderr, `unknown output format "sarif" (valid: text, json, dot, mermaid, html)`) {
		t.Errorf("exit %d, stderr %q; want a usage error naming teardown's formats", code, stderr)
	}
	_, _, code = runCLI(t, "teardown", filepath.Join(t.TempDir(), "missing"))
	if code != ExitUsage {
		t.Errorf("missing path: exit %d, want %d", code, ExitUsage)
	}
}

// TestTeardownLiveModel feeds the plan a model as the live source builds it:
// NodeClaims with finalizers appear under their NodePool.
func TestTeardownLiveModel(t *testing.T) {
	t.Parallel()
	m := source.Build(&cluster.Model{
		Live: &cluster.Live{Context: "prod"},
		Objects: []*cluster.Object{{
			APIVersion: "karpenter.sh/v1", Kind: "NodePool", Name: "default", Manager: "cluster",
			Content: map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "default"}, "spec": map[string]any{"template": map[string]any{"spec": map[string]any{"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}}}}},
		}},
		NodeClaims: []*cluster.NodeClaim{{Name: "default-x7k2p", NodePool: "default", Deleting: true, Finalizers: []string{"karpenter.sh/termination"}}},
	})
	var out bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }, Getwd: func() (string, error) { return t.TempDir(), nil }, IsTerminal: func(io.Writer) bool { return false }}
	set, err := (&reportOptions{output: "text"}).resolve(env)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeTeardown(env, set, m, ""); err != nil {
		t.Fatalf("teardown: %v", err)
	}
	if want := "   - NodePool/default\n       still present: NodeClaim default-x7k2p (deleting; finalizers karpenter.sh/termination)\n"; !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%s", want, out.String())
	}
}

// corpusDirs returns the Terraform directories of a copy of the reference corpus.
func corpusDirs(t *testing.T, root string) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".tf") {
			seen[filepath.Dir(p)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
	var out []string
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// TestTeardownCorpusOrder plans the teardown of every Terraform directory of the
// corpus, applies the plan's edits to a copy of the files, reloads it, and checks
// that the order now follows the dependency graph: no later step depends on an
// earlier one, every NodePool and EC2NodeClass depends on the controller, the
// controller on its IAM resources and on its compute, and no teardown-order hazard
// is left.
func TestTeardownCorpusOrder(t *testing.T) {
	t.Parallel()
	src, err := filepath.Abs(shared.Dir(t, "corpus"))
	if err != nil {
		t.Fatal(err)
	}
	// The examples call their module as ../..: copy the whole tree so relative
	// sources resolve as they do in place.
	root := filepath.Join(t.TempDir(), "corpus")
	copyTree(t, src, root)
	dirs := corpusDirs(t, root)
	if len(dirs) < 20 {
		t.Fatalf("found %d Terraform directories under %s, want the corpus", len(dirs), root)
	}
	withControllers := 0
	for _, dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		// Not in parallel: each counts withControllers, checked after the loop.
		t.Run(rel, func(t *testing.T) {
			m := loadOne(t, dir)
			if m.Terraform == nil {
				t.Fatalf("no Terraform graph")
			}
			plan := teardown.New(sim.New(m))
			if plan.Tool != "terraform" {
				t.Errorf("tool = %q, want terraform", plan.Tool)
			}
			var edits []lint.Edit
			written := lint.TeardownEdits(m, plan)
			if len(written) != len(plan.Changes) {
				t.Fatalf("%d changes written as %d edits: a resource to change has no position", len(plan.Changes), len(written))
			}
			for _, e := range written {
				edits = append(edits, e.Edit)
			}
			if err := fixapply.Apply(dir, edits); err != nil {
				t.Fatalf("apply the plan's edits: %v", err)
			}
			fixed := loadOne(t, dir)
			after := teardown.New(sim.New(fixed))
			if v := after.OrderViolations(fixed.Terraform); len(v) > 0 {
				t.Errorf("after the edits the order contradicts the graph:\n  %s", strings.Join(v, "\n  "))
			}
			for _, h := range after.Hazards {
				if h.Kind.Order() {
					t.Errorf("after the edits: %s: %s", h.Kind, h.Message)
				}
			}
			g := fixed.Terraform
			controllers := addresses(after.Step(teardown.StageController))
			if len(controllers) > 0 {
				withControllers++
			}
			for _, st := range []teardown.Stage{teardown.StageNodePools, teardown.StageNodeClasses} {
				for _, cr := range addresses(after.Step(st)) {
					for _, c := range controllers {
						if !g.DependsOn(cr, c) {
							t.Errorf("%s does not depend on %s after the edits", cr, c)
						}
					}
				}
			}
			for _, c := range controllers {
				for _, st := range []teardown.Stage{teardown.StageKarpenterAWS, teardown.StageHostCompute} {
					for _, a := range addresses(after.Step(st)) {
						if a != c && !g.DependsOn(c, a) {
							t.Errorf("%s does not depend on %s after the edits", c, a)
						}
					}
				}
			}
		})
	}
	if withControllers < 10 {
		t.Errorf("only %d corpus directories install Karpenter in Terraform; the corpus has more", withControllers)
	}
}

func addresses(s *teardown.Step) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, it := range s.Items {
		if it.Address != "" {
			out = append(out, it.Address)
		}
	}
	return out
}

// loadOne loads a directory that holds one cluster.
func loadOne(t *testing.T, dir string) *cluster.Model {
	t.Helper()
	cs, err := source.Load([]string{dir}, source.Options{})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if len(cs) != 1 {
		t.Fatalf("%s holds %d clusters, want 1", dir, len(cs))
	}
	return cs[0].Model
}
