package catalog

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

const (
	eksModule        = "terraform-aws-modules/eks"
	karpenterModule  = "terraform-aws-modules/eks//modules/karpenter"
	blueprintsModule = "aws-ia/eks-blueprints-addons"
)

func reads(t *testing.T, module, constraint string) ModuleReads {
	t.Helper()
	r, ok := ModuleReadsFor(module, constraint)
	if !ok {
		t.Fatalf("ModuleReadsFor(%q, %q) not found", module, constraint)
	}
	if len(r.Releases()) == 0 {
		t.Fatalf("ModuleReadsFor(%q, %q) allows no release", module, constraint)
	}
	return r
}

// The facts below were checked in the module sources at the tags named.
func TestModuleReadsInputs(t *testing.T) {
	t.Parallel()
	v20, v21 := reads(t, eksModule, "~> 20.0"), reads(t, eksModule, "~> 21.0")
	// v20.x variables.tf declares cluster_name, v21.0.0 renamed it name.
	if p := v20.Input("cluster_name"); !p.All || p.Required {
		t.Errorf("v20 cluster_name = %+v, want declared by every release, with a default", p)
	}
	if v20.Input("name").Any {
		t.Error("v20 declares name")
	}
	if !v21.Input("name").All || v21.Input("cluster_name").Any {
		t.Errorf("v21: name %+v, cluster_name %+v", v21.Input("name"), v21.Input("cluster_name"))
	}
	// bootstrap_self_managed_addons appeared in v20.18.0; v21 sets it itself.
	if p := v20.Input("bootstrap_self_managed_addons"); !p.Any || p.All {
		t.Errorf("v20 bootstrap_self_managed_addons = %+v, want some releases", p)
	}
	if !reads(t, eksModule, "20.24.0").Input("bootstrap_self_managed_addons").All {
		t.Error("20.24.0 lacks bootstrap_self_managed_addons")
	}
	if v21.Input("bootstrap_self_managed_addons").Any {
		t.Error("v21 declares bootstrap_self_managed_addons")
	}
	if h := reads(t, eksModule, "~> 19.0").History("", "bootstrap_self_managed_addons"); h.Added != "20.18.0" || h.Removed != "" ||
		!reflect.DeepEqual(h.Ranges, []ReleaseRange{{"20.18.0", "20.37.2"}}) {
		t.Errorf("history of bootstrap_self_managed_addons for v19 = %+v", h)
	}
	// The karpenter sub-module dropped IRSA in v21.0.0.
	k21 := reads(t, karpenterModule, "~> 21.0")
	if k21.Input("enable_irsa").Any || !reads(t, karpenterModule, "~> 20.0").Input("enable_irsa").All {
		t.Error("enable_irsa: want every v20 release of the karpenter sub-module and no v21 one")
	}
	if h := k21.History("", "enable_irsa"); h.Removed != "21.0.0" || len(h.Renames) != 0 {
		t.Errorf("history of enable_irsa for v21 = %+v", h)
	}
	// Required: v17.18.0 and before had no default for these; v17.19.0 gave them one.
	old := reads(t, eksModule, "<= 17.18.0")
	for _, n := range []string{"cluster_name", "cluster_version", "subnets", "vpc_id"} {
		if !old.Input(n).Required {
			t.Errorf("v17.0-17.18 %s not required", n)
		}
		if reads(t, eksModule, "~> 17.0").Input(n).Required {
			t.Errorf("every v17 requires %s", n)
		}
	}
	if old.Input("tags").Required {
		t.Error("tags required")
	}
	if !reads(t, "terraform-aws-modules/eks//modules/node_groups", "17.5.0").Input("default_iam_role_arn").Required {
		t.Error("v17.5.0 modules/node_groups: default_iam_role_arn not required")
	}
}

func TestModuleReadsKeys(t *testing.T) {
	t.Parallel()
	all, v18up := reads(t, eksModule, ""), reads(t, eksModule, ">= 18.0")
	// Every release reads taints from a node group (node_groups.tf, try(each.value.taints, ...))
	// and none reads taint.
	if p := v18up.Key("eks_managed_node_groups.*", "taints"); !p.All || !p.Closed {
		t.Errorf("taints = %+v, want read by every release since v18, keys closed", p)
	}
	if p := all.Key("eks_managed_node_groups.*", "taint"); p.Any {
		t.Errorf("taint = %+v, want never read", p)
	}
	if n := all.Nearest("eks_managed_node_groups.*", "taint"); n != "taints" {
		t.Errorf("nearest to taint = %q", n)
	}
	// A taint entry is read for key, value and effect (the dynamic "taint" block of the
	// eks-managed-node-group sub-module).
	for _, k := range []string{"key", "value", "effect"} {
		if p := v18up.Key("eks_managed_node_groups.*.taints.*", k); !p.All || !p.Closed {
			t.Errorf("taint %s = %+v", k, p)
		}
	}
	// Labels are free-form: passed whole to the node group's labels.
	if p := v18up.Key("eks_managed_node_groups.*.labels", "team"); p.Any || p.Closed {
		t.Errorf("labels = %+v, want not closed", p)
	}
	// v17 node groups: the node_groups sub-module reads k8s_labels, v18 labels.
	if !reads(t, eksModule, "~> 17.0").Key("node_groups.*", "k8s_labels").All || v18up.Key("eks_managed_node_groups.*", "k8s_labels").Any {
		t.Error("k8s_labels")
	}
	// Access entries (v20+), through local.flattened_access_entries.
	v20 := reads(t, eksModule, "~> 20.0")
	for path, keys := range map[string][]string{
		"access_entries.*":                                    {"principal_arn", "type", "kubernetes_groups", "policy_associations", "user_name"},
		"access_entries.*.policy_associations.*":              {"policy_arn", "access_scope"},
		"access_entries.*.policy_associations.*.access_scope": {"type", "namespaces"},
	} {
		for _, k := range keys {
			if p := v20.Key(path, k); !p.All || !p.Closed {
				t.Errorf("v20 %s %s = %+v", path, k, p)
			}
		}
	}
	// cluster_addons: resolve_conflicts until v19, its two successors from v20.0.0.
	if v20.Key("cluster_addons.*", "resolve_conflicts").Any || !v20.Key("cluster_addons.*", "resolve_conflicts_on_create").All {
		t.Error("v20 cluster_addons resolve_conflicts")
	}
	if !reads(t, eksModule, "~> 19.0").Key("cluster_addons.*", "resolve_conflicts").All {
		t.Error("v19 cluster_addons resolve_conflicts")
	}
	// Blueprints add-on objects: try(var.karpenter.chart_version, ...).
	bp := reads(t, blueprintsModule, "~> 1.16")
	if p := bp.Key("karpenter", "chart_version"); !p.All || !p.Closed {
		t.Errorf("karpenter.chart_version = %+v", p)
	}
	if bp.Key("karpenter", "chart_versions").Any || bp.Nearest("karpenter", "chart_versions") != "chart_version" {
		t.Error("karpenter.chart_versions")
	}
	if p := bp.Key("eks_addons.*", "most_recent"); !p.All || !p.Closed {
		t.Errorf("eks_addons.*.most_recent = %+v", p)
	}
}

func TestModuleReadsHistory(t *testing.T) {
	t.Parallel()
	v21 := reads(t, eksModule, "~> 21.0")
	h := v21.History("", "cluster_name")
	if h.Removed != "21.0.0" || h.Added != "" || !reflect.DeepEqual(h.Ranges, []ReleaseRange{{"17.0.0", "20.37.2"}}) {
		t.Errorf("history of cluster_name = %+v", h)
	}
	if len(h.Renames) != 1 || h.Renames[0].New != "name" || h.Renames[0].Release != "21.0.0" ||
		!strings.HasPrefix(h.Renames[0].Doc, "docs/UPGRADE-21.0.md@v") {
		t.Errorf("renames of cluster_name = %+v", h.Renames)
	}
	if n := v21.Nearest("", "kubernetes_verison"); n != "kubernetes_version" {
		t.Errorf("nearest to kubernetes_verison = %q", n)
	}
	if n := reads(t, eksModule, "~> 20.0").Nearest("", "Cluster_Name"); n != "cluster_name" {
		t.Errorf("nearest to Cluster_Name = %q", n)
	}
	// The other way: a v20 user writing v21's name.
	h = reads(t, eksModule, "~> 20.0").History("", "name")
	if h.Added != "21.0.0" || len(h.Renames) != 1 || h.Renames[0].Old != "cluster_name" {
		t.Errorf("history of name for v20 = %+v", h)
	}
	// A key under a renamed input: addons.* was cluster_addons.* before v21, which read
	// resolve_conflicts until v19; UPGRADE-20.0.md names its replacements.
	h = v21.History("addons.*", "resolve_conflicts")
	if h.Removed != "20.0.0" || !reflect.DeepEqual(h.Ranges, []ReleaseRange{{"18.0.0", "19.21.0"}}) {
		t.Errorf("history of addons.*.resolve_conflicts = %+v", h)
	}
	var news []string
	for _, r := range h.Renames {
		news = append(news, r.New)
	}
	if !reflect.DeepEqual(news, []string{"resolve_conflicts_on_create", "resolve_conflicts_on_update"}) {
		t.Errorf("renames of resolve_conflicts = %+v", h.Renames)
	}
	// A node group key renamed with the sub-module input it feeds.
	h = v21.History("eks_managed_node_groups.*", "cluster_version")
	if h.Removed != "21.0.0" || len(h.Renames) != 1 || h.Renames[0].New != "kubernetes_version" || h.Renames[0].Via != "modules/eks-managed-node-group" {
		t.Errorf("history of eks_managed_node_groups.*.cluster_version = %+v", h)
	}
	// The karpenter sub-module's v20 renames.
	h = reads(t, karpenterModule, "~> 20.0").History("", "irsa_name")
	if h.Removed != "20.0.0" || len(h.Renames) != 1 || h.Renames[0].New != "iam_role_name" {
		t.Errorf("history of irsa_name = %+v", h)
	}
}

func TestModuleReadsFor(t *testing.T) {
	t.Parallel()
	all := reads(t, eksModule, "")
	if !all.Every() || reads(t, eksModule, "~> 20.0").Every() {
		t.Error("Every")
	}
	rs := all.Releases()
	if rs[0] != "17.0.0" || len(rs) < 260 {
		t.Errorf("releases: %d from %s", len(rs), rs[0])
	}
	for _, tc := range []struct {
		constraint, first, last, prefix string
	}{
		{"~> 20.0", "20.0.0", "20.37.2", "20."},
		{">= 19.21, < 21", "19.21.0", "20.37.2", ""},
		{"20.24.0", "20.24.0", "20.24.0", "20.24.0"},
		{"~> 18.31.0", "18.31.0", "18.31.2", "18.31."},
	} {
		rs := reads(t, eksModule, tc.constraint).Releases()
		if rs[0] != tc.first || rs[len(rs)-1] != tc.last {
			t.Errorf("%q allows %s..%s", tc.constraint, rs[0], rs[len(rs)-1])
		}
		for _, r := range rs {
			if !strings.HasPrefix(r, tc.prefix) {
				t.Errorf("%q allows %s", tc.constraint, r)
			}
		}
	}
	// Registry spellings of the same module.
	for _, m := range []string{"terraform-aws-modules/eks/aws", "registry.terraform.io/terraform-aws-modules/eks/aws//modules/karpenter/"} {
		if _, ok := ModuleReadsFor(m, "~> 20.0"); !ok {
			t.Errorf("%s not found", m)
		}
	}
	// The karpenter sub-module appeared in v18.31.0; fargate-profile replaced fargate in v18.
	if r, ok := ModuleReadsFor(karpenterModule, "~> 17.0"); !ok || len(r.Releases()) != 0 {
		t.Errorf("karpenter sub-module in v17: %v %v", ok, r.Releases())
	}
	if rs := reads(t, "terraform-aws-modules/eks//modules/fargate", "").Releases(); rs[len(rs)-1] != "17.24.0" {
		t.Errorf("modules/fargate until %s", rs[len(rs)-1])
	}
	for _, bad := range [][2]string{{"terraform-aws-modules/vpc", ""}, {eksModule, "~> banana"}} {
		if _, ok := ModuleReadsFor(bad[0], bad[1]); ok {
			t.Errorf("ModuleReadsFor(%q, %q) found", bad[0], bad[1])
		}
	}
	var zero ModuleReads
	if zero.Input("x").Any || zero.Key("a.*", "b").Closed || zero.Nearest("", "x") != "" || len(zero.Releases()) != 0 {
		t.Error("zero value")
	}
}

func TestModuleInputsProvenance(t *testing.T) {
	t.Parallel()
	commit := regexp.MustCompile(`commit: [0-9a-f]{40}\}`)
	for name, data := range map[string][]byte{"terraform-aws-eks": eksInputsYAML, "eks-blueprints-addons": blueprintsInputsYAML} {
		s := string(data)
		if !strings.Contains(s, "go run ./hack/moduleinputs ") || !strings.Contains(s, "source: github.com/") {
			t.Errorf("%s: header lacks the command or the source", name)
		}
		if n := strings.Count(s, "{version: "); n == 0 || len(commit.FindAllString(s, -1)) != n {
			t.Errorf("%s: a release without its commit", name)
		}
	}
	if n := len(eksInputsYAML) + len(blueprintsInputsYAML); n > 1<<20 {
		t.Errorf("module inputs data is %d bytes", n)
	}
	idx, err := moduleInputs()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{eksModule, karpenterModule, blueprintsModule, eksModule + "//modules/eks-managed-node-group",
		eksModule + "//modules/self-managed-node-group", eksModule + "//modules/fargate-profile", eksModule + "//modules/aws-auth",
		eksModule + "//modules/node_groups", eksModule + "//modules/fargate"} {
		if idx[m] == nil {
			t.Errorf("%s missing", m)
		}
	}
}
