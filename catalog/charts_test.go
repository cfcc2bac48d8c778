package catalog

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
)

// corpusDir finds the corpus of upstream configurations the knowledge base copies
// from (EKSDOCTOR_CORPUS, or shared/corpus beside the repository), "" when it is not
// on this machine: the tests then check the copies against the SHA-256 of their
// upstream files recorded below and derive keys from the verified copies.
func corpusDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("EKSDOCTOR_CORPUS"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		c := filepath.Join(dir, "shared", "corpus")
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			return c
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// upstreamSHA256 is the SHA-256 of each copied upstream file (see copies).
var upstreamSHA256 = map[string]string{
	"addons/eks-pod-identity-agent/values.yaml":          "97ee19dab78edb2e04ed6ec61723946ce6d7bec56d0fc8ea2faf951270b78a17",
	"charts/aws-ebs-csi-driver/values/2.10.1.yaml":       "7829b4e0289d690ff5ba91a32eda732de0e60a42631ce5fb96da19464b62ab11",
	"charts/aws-ebs-csi-driver/values/2.11.0.yaml":       "283dd69dc23d99e97a4ab5ed355517f347f8e273df83b0a3cdd1798a7fdb3d6b",
	"charts/aws-ebs-csi-driver/values/2.35.1.yaml":       "c19afc05c1cf8da9d6072fd98834022533cbb4e8e3efcc221c840dda102eb9ed",
	"charts/aws-ebs-csi-driver/values/2.36.0.yaml":       "674c05d7c62709d50712c377820169098afe0ff75d462e433c4cc797e75e7a92",
	"charts/aws-ebs-csi-driver/values/2.64.0.yaml":       "2aaba20c057bee66dc7a496d75975562b8076d5b43532a5871be7ffe37428cd2",
	"charts/eks-pod-identity-agent/values/00bc0581.yaml": "97ee19dab78edb2e04ed6ec61723946ce6d7bec56d0fc8ea2faf951270b78a17",
	"charts/karpenter/values/v0.31.4.yaml":               "4be6e2ac142fde40a40cb61c3c4e74fb7db8cabe3a47d6fd01b3a9320a85794a",
	"charts/karpenter/values/v0.32.10.yaml":              "36654a3bf4ff0ce484894af18cc71e00be3a05fa1991506b378f1b7a9d566dac",
	"charts/karpenter/values/v0.37.7.yaml":               "0cc6a640bd5b7f768af0462243299868614a42910c49b174b90dd44fa3407a07",
	"charts/karpenter/values/v1.0.0.yaml":                "dc053a71fb34319ff4adea089a0f57fe8539c904df744c75398657633b743670",
	"charts/karpenter/values/v1.0.8.yaml":                "503712499c3a974503dd67a00c9d875daa20da83d613dde926a7831a01cfeb0a",
	"charts/karpenter/values/v1.14.1.yaml":               "25daa764852e3fcf4f21cf9b82dc889a47b4b90c3803e88c40dc4cce9a4cecf7",
}

// readUpstream returns the upstream file behind a copy: from the corpus when it is
// here, else the copy itself once its hash matches the upstream file's.
func readUpstream(t *testing.T, src string) []byte {
	t.Helper()
	if corpus := corpusDir(t); corpus != "" {
		data, err := os.ReadFile(filepath.Join(corpus, filepath.FromSlash(src)))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	for kb, s := range copies {
		if s != src {
			continue
		}
		data, err := knowledgeFS.ReadFile(kb)
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != upstreamSHA256[kb] {
			t.Fatalf("%s is not a verbatim copy of %s", kb, src)
		}
		return data
	}
	t.Fatalf("no copy of %s in the knowledge base and no corpus on this machine", src)
	return nil
}

// copies maps each verbatim copy in the knowledge base to its corpus file.
var copies = map[string]string{
	"charts/karpenter/values/v0.31.4.yaml":               "karpenter-provider-aws/@v0.31.4/charts/karpenter/values.yaml",
	"charts/karpenter/values/v0.32.10.yaml":              "karpenter-provider-aws/@v0.32.10/charts/karpenter/values.yaml",
	"charts/karpenter/values/v0.37.7.yaml":               "karpenter-provider-aws/@v0.37.7/charts/karpenter/values.yaml",
	"charts/karpenter/values/v1.0.0.yaml":                "karpenter-provider-aws/@v1.0.0/charts/karpenter/values.yaml",
	"charts/karpenter/values/v1.0.8.yaml":                "karpenter-provider-aws/@v1.0.8/charts/karpenter/values.yaml",
	"charts/karpenter/values/v1.14.1.yaml":               "karpenter-provider-aws/charts/karpenter/values.yaml",
	"charts/aws-ebs-csi-driver/values/2.10.1.yaml":       "aws-ebs-csi-driver/@helm-chart-aws-ebs-csi-driver-2.10.1/charts/aws-ebs-csi-driver/values.yaml",
	"charts/aws-ebs-csi-driver/values/2.11.0.yaml":       "aws-ebs-csi-driver/@helm-chart-aws-ebs-csi-driver-2.11.0/charts/aws-ebs-csi-driver/values.yaml",
	"charts/aws-ebs-csi-driver/values/2.35.1.yaml":       "aws-ebs-csi-driver/@helm-chart-aws-ebs-csi-driver-2.35.1/charts/aws-ebs-csi-driver/values.yaml",
	"charts/aws-ebs-csi-driver/values/2.36.0.yaml":       "aws-ebs-csi-driver/@helm-chart-aws-ebs-csi-driver-2.36.0/charts/aws-ebs-csi-driver/values.yaml",
	"charts/aws-ebs-csi-driver/values/2.64.0.yaml":       "aws-ebs-csi-driver/charts/aws-ebs-csi-driver/values.yaml",
	"charts/eks-pod-identity-agent/values/00bc0581.yaml": "eks-pod-identity-agent/charts/eks-pod-identity-agent/values.yaml",
	"addons/eks-pod-identity-agent/values.yaml":          "eks-pod-identity-agent/charts/eks-pod-identity-agent/values.yaml",
}

func TestValuesFilesAreVerbatimCopies(t *testing.T) {
	t.Parallel()
	for kb, src := range copies {
		got, err := knowledgeFS.ReadFile(kb)
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(got); hex.EncodeToString(sum[:]) != upstreamSHA256[kb] {
			t.Errorf("%s does not have the SHA-256 of upstream %s", kb, src)
		}
		if corpus := corpusDir(t); corpus != "" {
			want, err := os.ReadFile(filepath.Join(corpus, filepath.FromSlash(src)))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from corpus %s", kb, src)
			}
		}
	}
}

// corpusKeys derives the keys a chart version reads from its values.yaml in the
// corpus, independently of the catalog's loader: every key path of the defaults.
func corpusKeys(t *testing.T, file string) map[string]bool {
	t.Helper()
	data := readUpstream(t, file)
	var root map[string]any
	if err := yaml.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	var walk func(m map[string]any, prefix string)
	walk = func(m map[string]any, prefix string) {
		for k, v := range m {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			keys[p] = true
			if sub, ok := v.(map[string]any); ok {
				walk(sub, p)
			}
		}
	}
	walk(root, "")
	return keys
}

// TestValuesKeysMatchCorpus is the derivation of the values-key lists: for every
// version whose values.yaml is in the corpus, the keys the catalog reports are
// exactly the corpus keys plus the chart's documented extra keys.
func TestValuesKeysMatchCorpus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		chart, version, corpus string
		extra                  []string
	}{
		{"karpenter", "0.31.4", "karpenter-provider-aws/@v0.31.4/charts/karpenter/values.yaml", nil},
		{"karpenter", "0.32.10", "karpenter-provider-aws/@v0.32.10/charts/karpenter/values.yaml", nil},
		{"karpenter", "0.37.7", "karpenter-provider-aws/@v0.37.7/charts/karpenter/values.yaml", nil},
		{"karpenter", "1.0.0", "karpenter-provider-aws/@v1.0.0/charts/karpenter/values.yaml", nil},
		{"karpenter", "1.0.8", "karpenter-provider-aws/@v1.0.8/charts/karpenter/values.yaml", nil},
		{"karpenter", "1.14.1", "karpenter-provider-aws/charts/karpenter/values.yaml", nil},
		{"aws-ebs-csi-driver", "2.10.1", "aws-ebs-csi-driver/@helm-chart-aws-ebs-csi-driver-2.10.1/charts/aws-ebs-csi-driver/values.yaml", []string{"image.containerRegistry"}},
		{"aws-ebs-csi-driver", "2.11.0", "aws-ebs-csi-driver/@helm-chart-aws-ebs-csi-driver-2.11.0/charts/aws-ebs-csi-driver/values.yaml", []string{"image.containerRegistry"}},
		{"aws-ebs-csi-driver", "2.35.1", "aws-ebs-csi-driver/@helm-chart-aws-ebs-csi-driver-2.35.1/charts/aws-ebs-csi-driver/values.yaml", []string{"image.containerRegistry"}},
		{"aws-ebs-csi-driver", "2.36.0", "aws-ebs-csi-driver/@helm-chart-aws-ebs-csi-driver-2.36.0/charts/aws-ebs-csi-driver/values.yaml", []string{"image.containerRegistry"}},
		{"aws-ebs-csi-driver", "2.64.0", "aws-ebs-csi-driver/charts/aws-ebs-csi-driver/values.yaml", []string{"image.containerRegistry"}},
	}
	for _, tt := range tests {
		c, ok := ChartFor(tt.chart, tt.version)
		if !ok || c.Assumed != "" {
			t.Fatalf("%s %s: not found exactly (%v)", tt.chart, tt.version, c)
		}
		want := corpusKeys(t, tt.corpus)
		for _, k := range tt.extra {
			want[k] = true
		}
		var wantList []string
		for k := range want {
			wantList = append(wantList, k)
		}
		sort.Strings(wantList)
		if diff := cmp.Diff(wantList, c.ValuesKeys()); diff != "" {
			t.Errorf("%s %s keys (-corpus +catalog):\n%s", tt.chart, tt.version, diff)
		}
		for _, k := range wantList {
			if got := c.ValuesKey(k); got != ChartKeyRead {
				t.Errorf("%s %s: %s is %v", tt.chart, tt.version, k, got)
			}
		}
	}
}

func TestKarpenterValuesKeys(t *testing.T) {
	t.Parallel()
	type want map[string]ChartKeyStatus
	const (
		R = ChartKeyRead
		U = ChartKeyUnread
	)
	tests := map[string]want{
		"0.31.4":  {"settings.interruptionQueueName": U, "settings.aws.interruptionQueueName": R, "settings.aws.clusterName": R, "settings.clusterName": U, "settings.interruptionQueue": U, "schedulerName": U, "dnsPolicy": R, "settings.aws.tags.team": R},
		"0.32.10": {"settings.interruptionQueueName": U, "settings.aws.interruptionQueueName": R, "settings.clusterName": R, "settings.interruptionQueue": R, "webhook.enabled": R},
		"0.33.0":  {"settings.interruptionQueueName": U, "settings.aws.interruptionQueueName": U, "settings.aws.clusterName": U, "settings.clusterName": R, "settings.interruptionQueue": R},
		"0.37.7":  {"settings.interruptionQueueName": U, "settings.aws.interruptionQueueName": U, "settings.clusterName": R, "schedulerName": U},
		"1.0.0":   {"settings.interruptionQueueName": U, "postInstallHook.image.tag": R, "schedulerName": U},
		"1.0.8":   {"schedulerName": U, "postInstallHook": U},
		"1.1.0":   {"schedulerName": U},
		"1.1.1":   {"schedulerName": R, "settings.interruptionQueueName": U},
		"1.14.1":  {"schedulerName": R, "settings.interruptionQueueName": U, "settings.aws": U, "settings.featureGates.nodeRepair": R, "settings.featureGates.bogus": U},
	}
	common := want{
		"podLabels.team":                       R,
		"nodeSelector.karpenter.sh/controller": R,
		"tolerations[0].key":                   R,
		"tolerations.0.operator":               R,
		"affinity.nodeAffinity":                R,
		// affinity is passed through whole: below it, every key is read.
		"affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution": R,
		"controller.resources.requests.cpu":                                        R,
		"serviceAccount.annotations.eks.amazonaws.com/role-arn":                    R,
		"replicas.foo":  U,
		"nodeSelectorr": U,
	}
	for v, keys := range tests {
		c, ok := ChartFor("karpenter", v)
		if !ok || c.Assumed != "" {
			t.Fatalf("karpenter %s not known", v)
		}
		for k, w := range common {
			keys[k] = w
		}
		for k, w := range keys {
			if got := c.ValuesKey(k); got != w {
				t.Errorf("karpenter %s: %s is %v, want %v", v, k, got, w)
			}
		}
	}
	c, _ := ChartFor("cilium", "1.16.0")
	if got := c.ValuesKey("anything.at.all"); got != ChartKeyUnverified {
		t.Errorf("cilium keys are %v, want unverified", got)
	}
}

func TestChartDefaultsByVersion(t *testing.T) {
	t.Parallel()
	get := func(chart, version, key string) any {
		t.Helper()
		c, ok := ChartFor(chart, version)
		if !ok {
			t.Fatalf("%s %s not found", chart, version)
		}
		v, _ := lookupPath(c.DefaultValues(), key)
		return v
	}
	checks := []struct {
		chart, version, key string
		want                any
	}{
		{"karpenter", "0.33.0", "dnsPolicy", "Default"},
		{"karpenter", "0.34.0", "dnsPolicy", "ClusterFirst"},
		{"karpenter", "0.32.10", "dnsPolicy", "Default"},
		{"karpenter", "0.37.7", "topologySpreadConstraints", []any{map[string]any{"maxSkew": float64(1), "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}}},
		{"karpenter", "1.0.0", "topologySpreadConstraints", []any{map[string]any{"maxSkew": float64(1), "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule"}}},
		{"karpenter", "1.1.0", "schedulerName", nil},
		{"karpenter", "1.1.1", "schedulerName", "default-scheduler"},
		{"karpenter", "1.14.1", "tolerations", []any{map[string]any{"key": "CriticalAddonsOnly", "operator": "Exists"}}},
		{"aws-ebs-csi-driver", "2.10.1", "node.tolerateAllTaints", false},
		{"aws-ebs-csi-driver", "2.11.0", "node.tolerateAllTaints", true},
		{"aws-ebs-csi-driver", "0.9.0", "node.tolerateAllTaints", true},
		{"aws-ebs-csi-driver", "1.2.0", "node.tolerateAllTaints", false},
		{"aws-ebs-csi-driver", "2.35.1", "node.tolerations", []any{map[string]any{"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": float64(300)}}},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, get(c.chart, c.version, c.key)); diff != "" {
			t.Errorf("%s %s %s (-want +got):\n%s", c.chart, c.version, c.key, diff)
		}
	}
	ebs, _ := ChartFor("aws-ebs-csi-driver", "2.36.0")
	if ebs.AppVersion != "1.36.0" || !ebs.HasFeature("daemonsetTolerations") {
		t.Errorf("2.36.0 app %s features %v", ebs.AppVersion, ebs.Features)
	}
	ebs, _ = ChartFor("aws-ebs-csi-driver", "2.35.1")
	if ebs.HasFeature("daemonsetTolerations") {
		t.Error("2.35.1 appends the disruption tolerations")
	}
	k, _ := ChartFor("karpenter", "1.0.0")
	if _, ok := k.Component("karpenter-post-install-hook"); !ok || k.AppVersion != "1.0.0" {
		t.Errorf("1.0.0 components %v", k.Components)
	}
	k, _ = ChartFor("karpenter", "1.0.1")
	if _, ok := k.Component("karpenter-post-install-hook"); ok {
		t.Error("1.0.1 has the post-install hook")
	}
	comp, _ := k.Component("karpenter")
	if comp.Bootstrap == "" || comp.Fields["tolerations"] != "spec.template.spec.tolerations" {
		t.Errorf("karpenter component %+v", comp)
	}
}

func TestChartFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, version string
		chart         string
		used          string
		assumed       bool
	}{
		{"karpenter", "1.0.0", "karpenter", "1.0.0", false},
		{"oci://public.ecr.aws/karpenter/karpenter", "v1.0.8", "karpenter", "1.0.8", false},
		{"https://charts.karpenter.sh/karpenter", "0.32.1", "karpenter", "0.32.1", false},
		{"karpenter", "", "karpenter", "1.14.1", true},
		{"karpenter", "~> 1.0", "karpenter", "1.14.1", true},
		{"karpenter", "0.16.3", "karpenter", "0.16.3", false},
		{"karpenter", "3.0.0", "karpenter", "1.14.1", true},
		{"eks/aws-load-balancer-controller", "1.8.1", "aws-load-balancer-controller", "1.8.1", false},
		{"aws-ebs-csi-driver-2.36.0.tgz", "2.36.0", "aws-ebs-csi-driver", "2.36.0", false},
		{"Cilium", "1.16.5", "cilium", "1.16.5", false},
		{"metrics-server", "3.12.2", "metrics-server", "3.12.2", false},
		{"eks-pod-identity-agent", "1.3.2", "eks-pod-identity-agent", "1.3.2", false},
	}
	for _, tt := range tests {
		c, ok := ChartFor(tt.name, tt.version)
		if !ok {
			t.Errorf("ChartFor(%q, %q) not found", tt.name, tt.version)
			continue
		}
		if c.Name != tt.chart || c.Version != tt.used || (c.Assumed != "") != tt.assumed {
			t.Errorf("ChartFor(%q, %q) = %s %s assumed %q", tt.name, tt.version, c.Name, c.Version, c.Assumed)
		}
	}
	if _, ok := ChartFor("ingress-nginx", "4.0.0"); ok {
		t.Error("unknown chart found")
	}
	if got := ChartNames(); !cmp.Equal(got, []string{"aws-ebs-csi-driver", "aws-efs-csi-driver", "aws-load-balancer-controller", "cilium", "eks-pod-identity-agent", "karpenter", "metrics-server"}) {
		t.Errorf("ChartNames = %v", got)
	}
}

func TestEveryRangeHasProvenanceAndComponents(t *testing.T) {
	t.Parallel()
	kb, err := knowledge()
	if err != nil {
		t.Fatal(err)
	}
	for _, cf := range kb.charts {
		for _, r := range cf.Versions {
			c, err := kb.buildChart(cf, &r, r.Representative, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Components) == 0 {
				t.Errorf("%s %s: no components", cf.Name, r.describe())
			}
			if cf.Upstream == "" {
				t.Errorf("%s: no upstream", cf.Name)
			}
		}
	}
	for _, af := range kb.addons {
		if af.Upstream == "" || len(af.Components) == 0 {
			t.Errorf("add-on %s: upstream %q components %d", af.Name, af.Upstream, len(af.Components))
		}
	}
}

func TestVersionOrder(t *testing.T) {
	t.Parallel()
	ordered := []string{"0.9.0", "v0.32.10", "0.33.0", "1.0.0-rc.1", "1.0.0", "v1.13.0-eksbuild.3", "v1.14.0", "v1.14.0-eksbuild.1", "v1.14.0-eksbuild.2", "1.14.1", "2.0.0"}
	for i := range ordered {
		for j := range ordered {
			if got := ChartVersionLess(ordered[i], ordered[j]); got != (i < j) {
				t.Errorf("ChartVersionLess(%s, %s) = %v", ordered[i], ordered[j], got)
			}
		}
	}
	for _, bad := range []string{"", "latest", "1.2.3.4", "1.x", "v-1.0.0", "1.0.0-eksbuild.x"} {
		if _, ok := parseVersion(bad); ok {
			t.Errorf("parseVersion(%q) accepted", bad)
		}
	}
}

// ---- Karpenter charts before 0.31 and aws-ebs-csi-driver charts before 2.10 ----

// oldCopies are values files copied from upstream tags the corpus does not hold, each
// with the git blob id of the upstream file: git -C <repo> rev-parse <ref>:<path>.
var oldCopies = []struct{ file, repo, ref, path, blob string }{
	{"charts/karpenter/values/v0.2.4.yaml", "aws/karpenter-provider-aws", "v0.2.4", "charts/karpenter/values.yaml", "03dbbd58843fa808bab8c689a2d623f52c30a806"},
	{"charts/karpenter/values/v0.5.6.yaml", "aws/karpenter-provider-aws", "v0.5.6", "charts/karpenter/values.yaml", "2bdfce6442788fa739a44b4ec9ac8aa205571676"},
	{"charts/karpenter/values/v0.16.3.yaml", "aws/karpenter-provider-aws", "v0.16.3", "charts/karpenter/values.yaml", "b384ef93bec702d361449661705ad620fa627476"},
	{"charts/karpenter/values/v0.25.0.yaml", "aws/karpenter-provider-aws", "v0.25.0", "charts/karpenter/values.yaml", "abdd90b5eb77fddbcb34b6253b827802ab4d54c8"},
	{"charts/aws-ebs-csi-driver/values/0.1.0.yaml", "kubernetes-sigs/aws-ebs-csi-driver", "v0.4.0", "aws-ebs-csi-driver/values.yaml", "3e8ab2aea511e61e8361d1e5692d59b2ee8a4933"},
	{"charts/aws-ebs-csi-driver/values/1.0.3.yaml", "kubernetes-sigs/aws-ebs-csi-driver", "helm-chart-aws-ebs-csi-driver-1.0.3", "charts/aws-ebs-csi-driver/values.yaml", "c1f510dd509a23b088f971a52dcd5fe1114ab4d9"},
	{"charts/aws-ebs-csi-driver/values/1.2.4.yaml", "kubernetes-sigs/aws-ebs-csi-driver", "helm-chart-aws-ebs-csi-driver-1.2.4", "charts/aws-ebs-csi-driver/values.yaml", "8a6e62a397138edf99bfa638ec864aae2b6918ac"},
	{"charts/aws-efs-csi-driver/values/2.2.4.yaml", "kubernetes-sigs/aws-efs-csi-driver", "helm-chart-aws-efs-csi-driver-2.2.4", "charts/aws-efs-csi-driver/values.yaml", "8c72dc5a3ddfba7e677a328f733a741218402cef"},
	{"charts/aws-efs-csi-driver/values/2.5.5.yaml", "kubernetes-sigs/aws-efs-csi-driver", "helm-chart-aws-efs-csi-driver-2.5.5", "charts/aws-efs-csi-driver/values.yaml", "bdae2156f9892bf530daf0dcb4ac39d295c84bd8"},
	{"charts/aws-efs-csi-driver/values/3.0.8.yaml", "kubernetes-sigs/aws-efs-csi-driver", "helm-chart-aws-efs-csi-driver-3.0.8", "charts/aws-efs-csi-driver/values.yaml", "a9e549fb851006c3787ec6eb2756384f62c45964"},
	{"charts/aws-efs-csi-driver/values/4.4.1.yaml", "kubernetes-sigs/aws-efs-csi-driver", "helm-chart-aws-efs-csi-driver-4.4.1", "charts/aws-efs-csi-driver/values.yaml", "08cf7422e7ccd824c9839199299ad69533bf5386"},
}

func gitBlobID(data []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

func TestOldValuesCopiesAreUpstreamBlobs(t *testing.T) {
	t.Parallel()
	for _, c := range oldCopies {
		data, err := knowledgeFS.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		if got := gitBlobID(data); got != c.blob {
			t.Errorf("%s is blob %s, not %s (%s@%s:%s)", c.file, got, c.blob, c.repo, c.ref, c.path)
		}
	}
}

// TestOldValuesSnapshotKeys: a version whose range uses its own copy unchanged reads
// exactly the copy's keys (derived here independently of the loader).
func TestOldValuesSnapshotKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		chart, version, file string
		extra                []string
	}{
		{"karpenter", "0.2.4", "charts/karpenter/values/v0.2.4.yaml", nil},
		{"karpenter", "0.5.6", "charts/karpenter/values/v0.5.6.yaml", nil},
		{"karpenter", "0.16.3", "charts/karpenter/values/v0.16.3.yaml", nil},
		{"karpenter", "0.25.0", "charts/karpenter/values/v0.25.0.yaml", nil},
		{"aws-ebs-csi-driver", "1.0.3", "charts/aws-ebs-csi-driver/values/1.0.3.yaml", []string{"image.containerRegistry"}},
		{"aws-ebs-csi-driver", "1.2.4", "charts/aws-ebs-csi-driver/values/1.2.4.yaml", []string{"image.containerRegistry"}},
	}
	for _, tt := range tests {
		c, ok := ChartFor(tt.chart, tt.version)
		if !ok || c.Assumed != "" || c.Version != tt.version {
			t.Fatalf("%s %s: not found exactly", tt.chart, tt.version)
		}
		data, err := knowledgeFS.ReadFile(tt.file)
		if err != nil {
			t.Fatal(err)
		}
		var root map[string]any
		if err := yaml.Unmarshal(data, &root); err != nil {
			t.Fatal(err)
		}
		want := append([]string(nil), tt.extra...)
		var walk func(m map[string]any, prefix string)
		walk = func(m map[string]any, prefix string) {
			for k, v := range m {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				want = append(want, p)
				if sub, ok := v.(map[string]any); ok {
					walk(sub, p)
				}
			}
		}
		walk(root, "")
		sort.Strings(want)
		if diff := cmp.Diff(want, c.ValuesKeys()); diff != "" {
			t.Errorf("%s %s keys (-copy +catalog):\n%s", tt.chart, tt.version, diff)
		}
	}
}

// TestOldKarpenterRanges: every Karpenter chart from the first published (0.1.1, in the
// Helm repository of the gh-pages branch) to 0.31 resolves to its own range, which reads
// the keys of that release, the cluster name above all.
func TestOldKarpenterRanges(t *testing.T) {
	t.Parallel()
	const (
		R = ChartKeyRead
		U = ChartKeyUnread
	)
	tests := []struct {
		version, rng string
		keys         map[string]ChartKeyStatus
	}{
		{"0.1.3", ">= 0.1.0, < 0.2.0", map[string]ChartKeyStatus{"clusterName": U, "controller.clusterName": U, "tolerations": U}},
		{"v0.2.3", ">= 0.2.0, < 0.2.4", map[string]ChartKeyStatus{"controller.tolerations": U}},
		{"0.2.5", ">= 0.2.4, < 0.2.6", map[string]ChartKeyStatus{"controller.tolerations": R, "controller.nodeSelector.role": R, "tolerations": U, "controller.clusterName": U, "webhook.tolerations": U, "serviceAccount.annotations.eks.amazonaws.com/role-arn": R}},
		{"0.2.6", ">= 0.2.6, < 0.2.7", map[string]ChartKeyStatus{"webhook.tolerations": R, "controller.env": R, "controller.replicas": U}},
		{"0.3.3", ">= 0.2.7, < 0.3.4", map[string]ChartKeyStatus{"controller.clusterName": U, "webhook.affinity": R}},
		{"0.4.1", ">= 0.3.4, < 0.4.3", map[string]ChartKeyStatus{"controller.clusterName": U}},
		{"0.4.3", ">= 0.4.3, < 0.5.0", map[string]ChartKeyStatus{"controller.clusterName": R, "controller.clusterEndpoint": R, "defaultProvisioner.create": R, "clusterName": U}},
		{"0.5.0", ">= 0.5.0, < 0.5.1", map[string]ChartKeyStatus{"controller.clusterName": R, "defaultProvisioner.create": U, "controller.replicas": U}},
		{"0.5.3", ">= 0.5.1, < 0.5.4", map[string]ChartKeyStatus{"controller.replicas": R, "webhook.hostNetwork": R, "aws.defaultInstanceProfile": U}},
		{"0.5.5", ">= 0.5.4, < 0.5.6", map[string]ChartKeyStatus{"additionalLabels.team": R, "aws.defaultInstanceProfile": U}},
		{"0.6.1", ">= 0.5.6, < 0.6.2", map[string]ChartKeyStatus{"aws.defaultInstanceProfile": R, "controller.clusterName": R, "clusterName": U, "tolerations": U, "replicas": U}},
		{"0.8.0", ">= 0.6.2, < 0.8.2", map[string]ChartKeyStatus{"clusterName": R, "clusterEndpoint": R, "aws.defaultInstanceProfile": R, "controller.clusterName": U, "tolerations": R, "webhook.hostNetwork": R, "hostNetwork": U, "dnsPolicy": U, "topologySpreadConstraints": U, "logEncoding": U}},
		{"0.8.2", ">= 0.8.2, < 0.9.0-rc.0", map[string]ChartKeyStatus{"logEncoding": R, "topologySpreadConstraints": U}},
		{"0.9.0-rc.1", ">= 0.9.0-rc.0, < 0.9.1", map[string]ChartKeyStatus{"topologySpreadConstraints": R, "extraVolumes": U}},
		{"0.9.0", ">= 0.9.0-rc.0, < 0.9.1", map[string]ChartKeyStatus{"topologySpreadConstraints": R, "podDisruptionBudget.maxUnavailable": R, "dnsPolicy": U}},
		{"0.10.0", ">= 0.9.1, < 0.10.1", map[string]ChartKeyStatus{"extraVolumes": R, "dnsPolicy": U}},
		{"0.10.1", ">= 0.10.1, < 0.11.0", map[string]ChartKeyStatus{"dnsPolicy": R, "controller.batchMaxDuration": U}},
		{"0.13.2", ">= 0.11.0, < 0.14.0-rc.0", map[string]ChartKeyStatus{"controller.batchMaxDuration": R, "hostNetwork": U, "webhook.hostNetwork": R}},
		{"0.14.0", ">= 0.14.0-rc.0, < 0.16.0", map[string]ChartKeyStatus{"hostNetwork": R, "webhook.hostNetwork": U, "revisionHistoryLimit": R}},
		{"0.16.3", ">= 0.16.0, < 0.19.0", map[string]ChartKeyStatus{"clusterName": R, "clusterEndpoint": R, "aws.defaultInstanceProfile": R, "settings.clusterName": U, "settings.aws.clusterName": U, "webhook.image": R, "controller.image": R}},
		{"0.18.1", ">= 0.16.0, < 0.19.0", map[string]ChartKeyStatus{"clusterName": R, "settings.aws.clusterName": U}},
		{"0.19.0", ">= 0.19.0, < 0.19.1", map[string]ChartKeyStatus{"settings.aws.clusterName": R, "settings.aws.enableInterruptionHandling": R, "settings.aws.interruptionQueueName": U, "clusterName": U, "aws.defaultInstanceProfile": U, "webhook.image": U}},
		{"0.21.1", ">= 0.19.1, < 0.22.1", map[string]ChartKeyStatus{"settings.aws.interruptionQueueName": R, "settings.aws.enableInterruptionHandling": U, "controller.sidecarContainer": U}},
		{"0.23.0", ">= 0.22.1, < 0.24.0", map[string]ChartKeyStatus{"controller.sidecarContainer": R, "controller.metrics.port": U}},
		{"0.24.0", ">= 0.24.0, < 0.25.0", map[string]ChartKeyStatus{"controller.metrics.port": R, "extraObjects": U}},
		{"0.25.0", ">= 0.25.0, < 0.26.0", map[string]ChartKeyStatus{"settings.aws.clusterName": R, "settings.clusterName": U, "clusterName": U, "controller.image.tag": U, "extraObjects": R}},
		{"0.26.1", ">= 0.26.0, < 0.27.0", map[string]ChartKeyStatus{"controller.image.tag": R, "settings.featureGates.driftEnabled": U, "settings.aws.nodeNameConvention": R, "settings.aws.assumeRoleARN": U}},
		{"0.27.0", ">= 0.27.0, < 0.27.1", map[string]ChartKeyStatus{"settings.featureGates.driftEnabled": R, "settings.aws.clusterName": R}},
		{"0.27.5", ">= 0.27.1, < 0.28.0", map[string]ChartKeyStatus{"extraObjects": R, "settings.aws.assumeRoleARN": U}},
		{"0.29.2", ">= 0.28.0, < 0.30.0", map[string]ChartKeyStatus{"extraObjects": U, "settings.aws.nodeNameConvention": U, "settings.aws.assumeRoleARN": U, "podSecurityContext.fsGroup": R}},
		{"0.30.0", ">= 0.30.0, < 0.32.0", map[string]ChartKeyStatus{"settings.aws.assumeRoleARN": R, "settings.aws.clusterName": R, "settings.clusterName": U}},
	}
	for _, tt := range tests {
		c, ok := ChartFor("https://charts.karpenter.sh/karpenter", tt.version)
		if !ok || c.Assumed != "" || c.Range != tt.rng {
			t.Errorf("karpenter %s: range %q assumed %q, want %q", tt.version, c.Range, c.Assumed, tt.rng)
			continue
		}
		if _, ok := c.Component("karpenter"); !ok {
			t.Errorf("karpenter %s: no controller component", tt.version)
		}
		for k, want := range tt.keys {
			if got := c.ValuesKey(k); got != want {
				t.Errorf("karpenter %s: %s is %v, want %v", tt.version, k, got, want)
			}
		}
	}
	c, _ := ChartFor("karpenter", "0.0.9")
	if c.Version != "0.1.3" || c.Assumed == "" {
		t.Errorf("karpenter 0.0.9 described as %s (assumed %q)", c.Version, c.Assumed)
	}
	c, _ = ChartFor("karpenter", "0.5.6")
	if w, ok := c.Component("karpenter-webhook"); !ok || w.ValuesPrefix != "webhook" {
		t.Errorf("karpenter 0.5.6 webhook component %+v", w)
	}
	c, _ = ChartFor("karpenter", "0.6.2")
	if _, ok := c.Component("karpenter-webhook"); ok {
		t.Error("karpenter 0.6.2 has a webhook Deployment")
	}
}

func TestOldChartDefaults(t *testing.T) {
	t.Parallel()
	cao := []any{map[string]any{"key": "CriticalAddonsOnly", "operator": "Exists"}}
	noExec := map[string]any{"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": float64(300)}
	checks := []struct {
		chart, version, key string
		want                any
	}{
		{"karpenter", "0.5.6", "controller.replicas", float64(1)},
		{"karpenter", "0.5.6", "controller.clusterName", ""},
		{"karpenter", "0.8.0", "dnsPolicy", nil},
		{"karpenter", "0.8.0", "replicas", float64(1)},
		{"karpenter", "0.8.0", "tolerations", []any{}},
		{"karpenter", "0.8.0", "topologySpreadConstraints", nil},
		{"karpenter", "0.12.1", "dnsPolicy", "ClusterFirst"},
		{"karpenter", "0.13.2", "tolerations", []any{}},
		{"karpenter", "0.14.0-rc.0", "dnsPolicy", "Default"},
		{"karpenter", "0.14.0", "tolerations", cao},
		{"karpenter", "0.15.0", "replicas", float64(1)},
		{"karpenter", "0.16.3", "replicas", float64(2)},
		{"karpenter", "0.16.3", "clusterName", ""},
		{"karpenter", "0.16.3", "controller.image", ""},
		{"karpenter", "0.25.0", "dnsPolicy", "Default"},
		{"karpenter", "0.25.0", "settings.aws.clusterName", ""},
		{"karpenter", "0.26.1", "affinity.podAntiAffinity", nil},
		{"karpenter", "0.29.2", "affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution", []any{map[string]any{"topologyKey": "kubernetes.io/hostname"}}},
		{"aws-ebs-csi-driver", "0.3.0", "node.tolerateAllTaints", nil},
		{"aws-ebs-csi-driver", "0.7.0", "node.tolerateAllTaints", true},
		{"aws-ebs-csi-driver", "0.9.15", "tolerateAllTaints", true},
		{"aws-ebs-csi-driver", "0.10.0", "node.tolerateAllTaints", false},
		{"aws-ebs-csi-driver", "1.0.3", "tolerateAllTaints", false},
		{"aws-ebs-csi-driver", "1.2.4", "node.tolerateAllTaints", false},
		{"aws-ebs-csi-driver", "2.5.0", "node.tolerateAllTaints", false},
		{"aws-ebs-csi-driver", "2.12.1", "controller.tolerations", []any{}},
		{"aws-ebs-csi-driver", "2.12.1", "node.tolerations", []any{noExec}},
		{"aws-ebs-csi-driver", "2.18.0", "controller.tolerations", []any{map[string]any{"key": "CriticalAddonsOnly", "operator": "Exists"}, map[string]any{"effect": "NoExecute", "operator": "Exists", "tolerationSeconds": float64(300)}}},
	}
	for _, c := range checks {
		kb, ok := ChartFor(c.chart, c.version)
		if !ok || kb.Assumed != "" {
			t.Fatalf("%s %s not known", c.chart, c.version)
		}
		got, _ := lookupPath(kb.DefaultValues(), c.key)
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s %s %s (-want +got):\n%s", c.chart, c.version, c.key, diff)
		}
	}
}

func TestOldEBSRanges(t *testing.T) {
	t.Parallel()
	const (
		R = ChartKeyRead
		U = ChartKeyUnread
	)
	tests := []struct {
		version, rng string
		features     []string
		keys         map[string]ChartKeyStatus
	}{
		{"0.1.0", ">= 0.1.0, < 0.3.0", nil, map[string]ChartKeyStatus{"image.tag": R, "tolerations": U, "nodeSelector.role": U, "node.tolerateAllTaints": U}},
		{"0.3.0", ">= 0.3.0, < 0.5.0", []string{"controllerTolerateAll", "nodeTolerateAll", "kubeSystem"}, map[string]ChartKeyStatus{"tolerations": R, "node.tolerations": R, "node.tolerateAllTaints": U, "tolerateAllTaints": U, "controller.tolerations": U}},
		{"0.5.0", ">= 0.5.0, < 0.6.0", []string{"amd64Only", "nodeFargateAffinity"}, nil},
		{"0.6.1", ">= 0.6.0, < 0.6.2", []string{"nodeTolerateAll"}, nil},
		{"0.7.0", ">= 0.6.2, < 0.7.1", []string{"tolerateAllTaintsValue"}, map[string]ChartKeyStatus{"node.tolerateAllTaints": R, "tolerateAllTaints": R, "node.nodeSelector": U}},
		{"0.9.10", ">= 0.7.1, < 0.9.11", []string{"nodeNodeSelector", "kubeSystem"}, map[string]ChartKeyStatus{"node.nodeSelector.role": R, "topologySpreadConstraints": U}},
		{"0.9.11", ">= 0.9.11, < 0.9.12", []string{"topologySpread", "kubeSystem"}, map[string]ChartKeyStatus{"topologySpreadConstraints": R, "controller.extraVars": U}},
		{"0.9.13", ">= 0.9.12, < 0.9.14", []string{"topologySpread"}, nil},
		{"0.9.14", ">= 0.9.14, < 0.10.0", []string{"legacyTolerations", "nodeLegacyTolerations"}, map[string]ChartKeyStatus{"controller.extraVars": R}},
		{"0.10.3", ">= 0.10.0, < 1.1.0", []string{"legacyTolerations", "nodeLegacyTolerations"}, map[string]ChartKeyStatus{"controller.tolerations": U, "tolerations": R}},
		{"1.1.0", ">= 1.1.0, < 1.2.3", []string{"controllerValues", "nodeHostNetwork"}, map[string]ChartKeyStatus{"controller.tolerations": R, "tolerations": R, "node.logLevel": U}},
		{"1.2.3", ">= 1.2.3, < 1.2.4", []string{"controllerValues"}, nil},
		{"1.2.4", ">= 1.2.4, < 2.0.0", []string{"windowsAlways"}, map[string]ChartKeyStatus{"node.enableWindows": U}},
		{"2.0.0", ">= 2.0.0, < 2.0.1", []string{"legacyTolerations", "nodeLegacyTolerations", "windowsAlways"}, map[string]ChartKeyStatus{"tolerations": U, "controller.tolerations": R, "node.enableWindows": U}},
		{"2.5.0", ">= 2.0.1, < 2.8.0", []string{"nodeFargateAffinity"}, map[string]ChartKeyStatus{"node.enableWindows": R}},
		{"2.9.0", ">= 2.8.0, < 2.10.0", []string{"nodeLegacyTolerations"}, nil},
		{"2.11.1", ">= 2.11.1, < 2.12.0", []string{"nodeNoExecuteToleration"}, map[string]ChartKeyStatus{"useOldCSIDriver": R}},
		{"2.12.1", ">= 2.12.0, < 2.13.0", []string{"legacyTolerations"}, nil},
		{"2.15.0", ">= 2.13.0, < 2.19.0", nil, nil},
		{"2.19.0", ">= 2.19.0, < 2.35.0", []string{"agentNotReadyToleration"}, nil},
	}
	for _, tt := range tests {
		c, ok := ChartFor("aws-ebs-csi-driver", tt.version)
		if !ok || c.Assumed != "" || c.Range != tt.rng {
			t.Errorf("aws-ebs-csi-driver %s: range %q, want %q", tt.version, c.Range, tt.rng)
			continue
		}
		for _, f := range tt.features {
			if !c.HasFeature(f) {
				t.Errorf("aws-ebs-csi-driver %s: no feature %s (%v)", tt.version, f, c.Features)
			}
		}
		for k, want := range tt.keys {
			if got := c.ValuesKey(k); got != want {
				t.Errorf("aws-ebs-csi-driver %s: %s is %v, want %v", tt.version, k, got, want)
			}
		}
	}
	for _, v := range []string{"2.12.1", "2.15.0", "2.19.0"} {
		if c, _ := ChartFor("aws-ebs-csi-driver", v); c.HasFeature("nodeLegacyTolerations") || c.HasFeature("daemonsetTolerations") {
			t.Errorf("aws-ebs-csi-driver %s features %v", v, c.Features)
		}
	}
	if c, _ := ChartFor("aws-ebs-csi-driver", "2.18.0"); c.HasFeature("agentNotReadyToleration") || c.HasFeature("legacyTolerations") {
		t.Errorf("aws-ebs-csi-driver 2.18.0 features %v", c.Features)
	}
}

// renderKnowledge renders a chart version of the knowledge base with the Helm engine, as
// source/helm does, and returns its objects by "Kind/name".
func renderKnowledge(t *testing.T, name, version string, values map[string]any) map[string]map[string]any {
	t.Helper()
	c, ok := ChartFor(name, version)
	if !ok {
		t.Fatalf("%s %s not known", name, version)
	}
	ann := map[string]string{}
	for _, f := range c.Features {
		ann["eksdoctor.io/feature-"+f] = "true"
	}
	ch := &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: c.Name, Version: c.Version, AppVersion: c.AppVersion, Type: "application", Annotations: ann},
		Values:   c.DefaultValues(),
	}
	for n, data := range c.Templates {
		ch.Templates = append(ch.Templates, &chart.File{Name: n, Data: data})
	}
	if values == nil {
		values = map[string]any{}
	}
	top, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{Name: "rel", Namespace: "relns", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.Render(ch, top)
	if err != nil {
		t.Fatalf("%s %s: %v", name, version, err)
	}
	objs := map[string]map[string]any{}
	for n, text := range out {
		if strings.HasPrefix(filepath.Base(n), "_") {
			continue
		}
		dec := yaml.NewDecoder(strings.NewReader(text))
		for {
			var o map[string]any
			if err := dec.Decode(&o); err != nil {
				if err.Error() != "EOF" {
					t.Fatalf("%s %s %s: %v\n%s", name, version, n, err, text)
				}
				break
			}
			if o == nil {
				continue
			}
			md, _ := o["metadata"].(map[string]any)
			objs[fmt.Sprintf("%v/%v", o["kind"], md["name"])] = o
		}
	}
	return objs
}

func podSpec(t *testing.T, objs map[string]map[string]any, ref string) map[string]any {
	t.Helper()
	o, ok := objs[ref]
	if !ok {
		keys := make([]string, 0, len(objs))
		for k := range objs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		t.Fatalf("no %s in %v", ref, keys)
	}
	spec, _ := lookupPath(o, "spec.template.spec")
	m, _ := spec.(map[string]any)
	return m
}

// envOf lists "container=NAME=value" for the given variable of every container.
func envOf(spec map[string]any, name string) []string {
	var out []string
	cs, _ := spec["containers"].([]any)
	for _, c := range cs {
		cm, _ := c.(map[string]any)
		env, _ := cm["env"].([]any)
		for _, e := range env {
			em, _ := e.(map[string]any)
			if em["name"] == name {
				out = append(out, fmt.Sprintf("%v=%v", cm["name"], em["value"]))
			}
		}
	}
	return out
}

func tolerationKeys(spec map[string]any) []string {
	var out []string
	ts, _ := spec["tolerations"].([]any)
	for _, x := range ts {
		m, _ := x.(map[string]any)
		out = append(out, fmt.Sprintf("%v:%v:%v", m["key"], m["operator"], m["effect"]))
	}
	return out
}

func TestOldKarpenterRender(t *testing.T) {
	t.Parallel()
	cao := []string{"CriticalAddonsOnly:Exists:<nil>"}
	t.Run("0.16.3 reads clusterName", func(t *testing.T) {
		t.Parallel()
		spec := podSpec(t, renderKnowledge(t, "karpenter", "0.16.3", map[string]any{"clusterName": "prod", "settings": map[string]any{"clusterName": "ignored"}}), "Deployment/rel-karpenter")
		if got := envOf(spec, "CLUSTER_NAME"); !cmp.Equal(got, []string{"controller=prod", "webhook=prod"}) {
			t.Errorf("CLUSTER_NAME %v", got)
		}
		if spec["dnsPolicy"] != "Default" || !cmp.Equal(tolerationKeys(spec), cao) {
			t.Errorf("dnsPolicy %v tolerations %v", spec["dnsPolicy"], tolerationKeys(spec))
		}
		spec = podSpec(t, renderKnowledge(t, "karpenter", "0.16.3", map[string]any{"settings": map[string]any{"aws": map[string]any{"clusterName": "prod"}}}), "Deployment/rel-karpenter")
		if got := envOf(spec, "CLUSTER_NAME"); len(got) != 0 {
			t.Errorf("0.16.3 took settings.aws.clusterName: %v", got)
		}
	})
	t.Run("0.8.0 ClusterFirst, webhook.hostNetwork", func(t *testing.T) {
		t.Parallel()
		objs := renderKnowledge(t, "karpenter", "0.8.0", map[string]any{"clusterName": "x", "webhook": map[string]any{"hostNetwork": true}, "dnsPolicy": "Default", "hostNetwork": false})
		spec := podSpec(t, objs, "Deployment/rel-karpenter")
		if _, ok := spec["dnsPolicy"]; ok || spec["hostNetwork"] != true || len(tolerationKeys(spec)) != 0 || len(envOf(spec, "CLUSTER_NAME")) != 2 {
			t.Errorf("spec %v", spec)
		}
		if r, _ := lookupPath(objs["Deployment/rel-karpenter"], "spec.replicas"); r != 1 {
			t.Errorf("replicas %v", r)
		}
	})
	t.Run("0.12.1 dnsPolicy ClusterFirst", func(t *testing.T) {
		t.Parallel()
		spec := podSpec(t, renderKnowledge(t, "karpenter", "0.12.1", nil), "Deployment/rel-karpenter")
		if spec["dnsPolicy"] != "ClusterFirst" || len(envOf(spec, "CLUSTER_NAME")) != 0 {
			t.Errorf("spec %v", spec)
		}
	})
	t.Run("0.5.6 two Deployments, controller.clusterName", func(t *testing.T) {
		t.Parallel()
		objs := renderKnowledge(t, "karpenter", "0.5.6", map[string]any{"controller": map[string]any{"clusterName": "prod", "tolerations": []any{map[string]any{"key": "a", "operator": "Exists"}}}, "tolerations": []any{map[string]any{"key": "ignored", "operator": "Exists"}}})
		ctrl := podSpec(t, objs, "Deployment/karpenter-controller")
		hook := podSpec(t, objs, "Deployment/karpenter-webhook")
		if got := envOf(ctrl, "CLUSTER_NAME"); !cmp.Equal(got, []string{"manager=prod"}) {
			t.Errorf("controller CLUSTER_NAME %v", got)
		}
		if got := envOf(hook, "CLUSTER_NAME"); !cmp.Equal(got, []string{"webhook=prod"}) {
			t.Errorf("webhook CLUSTER_NAME %v", got)
		}
		if !cmp.Equal(tolerationKeys(ctrl), []string{"a:Exists:<nil>"}) || len(tolerationKeys(hook)) != 0 {
			t.Errorf("tolerations %v %v", tolerationKeys(ctrl), tolerationKeys(hook))
		}
		aff, _ := lookupPath(ctrl, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms")
		if !strings.Contains(fmt.Sprint(aff), "karpenter.sh/provisioner-name") {
			t.Errorf("affinity %v", aff)
		}
		for ref, comp := range map[string]string{"Deployment/karpenter-controller": "karpenter", "Deployment/karpenter-webhook": "karpenter-webhook"} {
			if got, _ := lookupPath(objs[ref], "metadata.annotations"); fmt.Sprint(got) != "map[eksdoctor.io/component:"+comp+"]" {
				t.Errorf("%s annotations %v", ref, got)
			}
		}
	})
	t.Run("0.3.3 no cluster name in the chart", func(t *testing.T) {
		t.Parallel()
		objs := renderKnowledge(t, "karpenter", "0.3.3", map[string]any{"controller": map[string]any{"clusterName": "prod"}})
		if got := envOf(podSpec(t, objs, "Deployment/karpenter-controller"), "CLUSTER_NAME"); len(got) != 0 {
			t.Errorf("CLUSTER_NAME %v", got)
		}
	})
	t.Run("0.1.3 static manifest", func(t *testing.T) {
		t.Parallel()
		objs := renderKnowledge(t, "karpenter", "0.1.3", map[string]any{"tolerations": []any{map[string]any{"key": "a", "operator": "Exists"}}})
		spec := podSpec(t, objs, "Deployment/karpenter")
		if ns, _ := lookupPath(objs["Deployment/karpenter"], "metadata.namespace"); ns != "karpenter" || len(tolerationKeys(spec)) != 0 || spec["affinity"] != nil {
			t.Errorf("namespace %v spec %v", ns, spec)
		}
	})
	t.Run("0.25.0 settings era", func(t *testing.T) {
		t.Parallel()
		spec := podSpec(t, renderKnowledge(t, "karpenter", "0.25.0", map[string]any{"clusterName": "ignored"}), "Deployment/rel-karpenter")
		cs, _ := spec["containers"].([]any)
		c0, _ := cs[0].(map[string]any)
		if c0["image"] != "public.ecr.aws/karpenter/controller:v0.25.0" || len(cs) != 1 || len(envOf(spec, "CLUSTER_NAME")) != 0 || !cmp.Equal(tolerationKeys(spec), cao) || spec["dnsPolicy"] != "Default" {
			t.Errorf("spec %v", spec)
		}
		spec = podSpec(t, renderKnowledge(t, "karpenter", "0.25.0", map[string]any{"controller": map[string]any{"image": "example.com/karpenter:v1"}}), "Deployment/rel-karpenter")
		if cs, _ := spec["containers"].([]any); cs[0].(map[string]any)["image"] != "example.com/karpenter:v1" {
			t.Errorf("image %v", cs)
		}
	})
	t.Run("0.27.0 anti-affinity through tpl", func(t *testing.T) {
		t.Parallel()
		spec := podSpec(t, renderKnowledge(t, "karpenter", "0.27.0", nil), "Deployment/rel-karpenter")
		sel, _ := lookupPath(spec, "affinity.podAntiAffinity")
		if !strings.Contains(fmt.Sprint(sel), "values:[rel]") {
			t.Errorf("podAntiAffinity %v", sel)
		}
	})
}

func TestOldEBSRender(t *testing.T) {
	t.Parallel()
	const (
		all     = "<nil>:Exists:<nil>"
		cao     = "CriticalAddonsOnly:Exists:<nil>"
		noExec  = "<nil>:Exists:NoExecute"
		agent   = "ebs.csi.aws.com/agent-not-ready:Exists:<nil>"
		disrupt = "karpenter.sh/disrupted:Exists:<nil>"
	)
	off := map[string]any{"node": map[string]any{"tolerateAllTaints": false}, "tolerateAllTaints": false}
	tests := []struct {
		version      string
		values       map[string]any
		ctrl, node   []string
		win          []string
		ns           string
		nodeSelector string
	}{
		{"0.1.0", nil, []string{cao}, []string{cao}, nil, "kube-system", "map[beta.kubernetes.io/os:linux]"},
		{"0.3.0", off, []string{all}, []string{all}, nil, "kube-system", "map[beta.kubernetes.io/os:linux]"},
		{"0.5.0", nil, []string{all}, []string{all}, nil, "kube-system", "map[kubernetes.io/arch:amd64 kubernetes.io/os:linux]"},
		{"0.9.0", nil, []string{all}, []string{all}, nil, "kube-system", "map[kubernetes.io/os:linux]"},
		{"0.9.0", off, nil, nil, nil, "kube-system", "map[kubernetes.io/os:linux]"},
		{"0.9.15", off, []string{cao, noExec}, []string{cao, noExec}, nil, "relns", "map[kubernetes.io/os:linux]"},
		{"1.0.3", nil, []string{cao, noExec}, []string{cao, noExec}, nil, "relns", "map[kubernetes.io/os:linux]"},
		{"1.2.4", nil, []string{cao, noExec}, []string{cao, noExec}, []string{cao, noExec}, "relns", "map[kubernetes.io/os:linux]"},
		{"2.5.0", nil, []string{cao, noExec}, []string{cao, noExec}, nil, "relns", "map[kubernetes.io/os:linux]"},
		{"2.10.1", nil, []string{cao, noExec}, []string{cao, noExec}, nil, "relns", "map[kubernetes.io/os:linux]"},
		{"2.11.0", off, []string{cao, noExec}, []string{noExec}, nil, "relns", "map[kubernetes.io/os:linux]"},
		{"2.11.0", nil, []string{cao, noExec}, []string{all}, nil, "relns", "map[kubernetes.io/os:linux]"},
		{"2.12.1", off, []string{cao, noExec}, []string{noExec}, nil, "relns", "map[kubernetes.io/os:linux]"},
		{"2.18.0", off, []string{cao, noExec}, []string{noExec}, nil, "relns", "map[kubernetes.io/os:linux]"},
		{"2.25.0", map[string]any{"node": map[string]any{"tolerateAllTaints": false, "enableWindows": true}}, []string{cao, noExec}, []string{noExec, agent}, []string{noExec}, "relns", "map[kubernetes.io/os:linux]"},
		{"2.36.0", map[string]any{"node": map[string]any{"tolerateAllTaints": false, "enableWindows": true}}, []string{cao, noExec}, []string{noExec, agent, "ToBeDeletedByClusterAutoscaler:Exists:<nil>", disrupt, "karpenter.sh/disruption:Exists:<nil>"}, []string{noExec, agent, "ToBeDeletedByClusterAutoscaler:Exists:<nil>", disrupt, "karpenter.sh/disruption:Exists:<nil>"}, "relns", "map[kubernetes.io/os:linux]"},
	}
	for _, tt := range tests {
		name := tt.version
		if tt.values != nil {
			name += " " + fmt.Sprint(tt.values)
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			objs := renderKnowledge(t, "aws-ebs-csi-driver", tt.version, tt.values)
			ctrlRef := "Deployment/ebs-csi-controller"
			if tt.version == "0.1.0" {
				ctrlRef = "StatefulSet/ebs-csi-controller"
			}
			ctrl := podSpec(t, objs, ctrlRef)
			node := podSpec(t, objs, "DaemonSet/ebs-csi-node")
			if got := tolerationKeys(ctrl); !cmp.Equal(got, tt.ctrl) {
				t.Errorf("controller tolerations %v, want %v", got, tt.ctrl)
			}
			if got := tolerationKeys(node); !cmp.Equal(got, tt.node) {
				t.Errorf("node tolerations %v, want %v", got, tt.node)
			}
			if ns, _ := lookupPath(objs["DaemonSet/ebs-csi-node"], "metadata.namespace"); ns != tt.ns {
				t.Errorf("namespace %v", ns)
			}
			if got := fmt.Sprint(node["nodeSelector"]); got != tt.nodeSelector {
				t.Errorf("node nodeSelector %s", got)
			}
			if w, ok := objs["DaemonSet/ebs-csi-node-windows"]; ok != (tt.win != nil) {
				t.Errorf("windows DaemonSet rendered: %v", ok)
			} else if ok {
				spec, _ := lookupPath(w, "spec.template.spec")
				if got := tolerationKeys(spec.(map[string]any)); !cmp.Equal(got, tt.win) {
					t.Errorf("windows tolerations %v, want %v", got, tt.win)
				}
			}
		})
	}
}

// ---- aws-efs-csi-driver charts 2.2.0 and later ----

// portsOf lists "name:containerPort:hostPort" for the ports of a pod spec's first container.
func portsOf(spec map[string]any) []string {
	var out []string
	cs, _ := spec["containers"].([]any)
	if len(cs) == 0 {
		return nil
	}
	c0, _ := cs[0].(map[string]any)
	ps, _ := c0["ports"].([]any)
	for _, p := range ps {
		pm, _ := p.(map[string]any)
		hp := pm["hostPort"]
		if hp == nil {
			hp = 0
		}
		out = append(out, fmt.Sprintf("%v:%v:%v", pm["name"], pm["containerPort"], hp))
	}
	return out
}

// TestEFSControllerHostNetwork renders the aws-efs-csi-driver controller at versions on
// both sides of every hostNetwork change: with hostNetwork the healthz port (9909) is a
// host port, so two replicas cannot share a node.
func TestEFSControllerHostNetwork(t *testing.T) {
	t.Parallel()
	const (
		healthHost = "healthz:9909:9909"
		health     = "healthz:9909:0"
		cao        = "CriticalAddonsOnly:Exists:<nil>"
		agent      = "efs.csi.aws.com/agent-not-ready:Exists:<nil>"
	)
	tests := []struct {
		version     string
		values      map[string]any
		rng         string
		hostNetwork any // nil: not rendered
		ports       []string
		replicas    any
		tolerations []string
		name        string
	}{
		{"2.2.0", nil, ">= 2.2.0, < 2.2.7", true, []string{healthHost}, 2, nil, "efs-csi-controller"},
		{"2.2.6", nil, ">= 2.2.0, < 2.2.7", true, []string{healthHost}, 2, nil, "efs-csi-controller"},
		{"2.2.7", nil, ">= 2.2.7, < 2.3.0", nil, []string{health}, 2, nil, "efs-csi-controller"},
		{"2.4.1", map[string]any{"controller": map[string]any{"hostNetwork": true}}, ">= 2.3.0, < 2.4.2", nil, []string{health}, 2, nil, "efs-csi-controller"},
		{"2.4.2", nil, ">= 2.4.2, < 2.4.3", true, []string{healthHost}, 2, nil, "efs-csi-controller"},
		{"2.4.8", nil, ">= 2.4.7, < 2.4.9", true, []string{healthHost}, 2, nil, "efs-csi-controller"},
		{"2.4.8", map[string]any{"controller": map[string]any{"healthPort": 9919}}, ">= 2.4.7, < 2.4.9", true, []string{"healthz:9919:9919"}, 2, nil, "efs-csi-controller"},
		{"2.4.9", nil, ">= 2.4.9, < 2.5.0", nil, []string{health}, 2, nil, "efs-csi-controller"},
		{"2.5.1", nil, ">= 2.5.1, < 2.5.2", nil, []string{health}, 2, []string{cao}, "efs-csi-controller"},
		{"2.5.5", nil, ">= 2.5.2, < 2.5.6", nil, []string{health}, 2, []string{cao, agent}, "efs-csi-controller"},
		{"2.5.6", nil, ">= 2.5.6, < 3.0.1", false, []string{health}, 2, []string{cao, agent}, "efs-csi-controller"},
		{"2.5.6", map[string]any{"controller": map[string]any{"hostNetwork": true}}, ">= 2.5.6, < 3.0.1", true, []string{healthHost}, 2, []string{cao, agent}, "efs-csi-controller"},
		{"3.0.8", map[string]any{"replicaCount": 3}, ">= 3.0.1, < 3.1.1", false, []string{health}, 3, []string{cao, agent}, "efs-csi-controller"},
		{"3.1.1", map[string]any{"replicaCount": 3}, ">= 3.1.1, < 4.4.0", false, []string{health}, 2, []string{cao, agent}, "efs-csi-controller"},
		{"4.3.0", map[string]any{"controller": map[string]any{"enableMetrics": true, "hostNetwork": true}}, ">= 3.1.1, < 4.4.0", true, []string{healthHost}, 2, []string{cao, agent}, "efs-csi-controller"},
		{"4.4.1", nil, ">= 4.4.0, < 5.0.0", false, []string{health}, 2, []string{cao, agent}, "efs-csi-controller"},
		{"4.4.1", map[string]any{"controller": map[string]any{"enableMetrics": true, "hostNetwork": true, "name": "efs-ctrl"}}, ">= 4.4.0, < 5.0.0", true, []string{healthHost, "metrics:3301:3301"}, 2, []string{cao, agent}, "efs-ctrl"},
	}
	for _, tt := range tests {
		name := tt.version
		if tt.values != nil {
			name += " " + fmt.Sprint(tt.values)
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, ok := ChartFor("aws-efs-csi-driver", tt.version)
			if !ok || c.Assumed != "" || c.Range != tt.rng {
				t.Fatalf("range %q, want %q (assumed %q)", c.Range, tt.rng, c.Assumed)
			}
			objs := renderKnowledge(t, "aws-efs-csi-driver", tt.version, tt.values)
			ref := "Deployment/" + tt.name
			spec := podSpec(t, objs, ref)
			if got := spec["hostNetwork"]; got != tt.hostNetwork {
				t.Errorf("hostNetwork %v, want %v", got, tt.hostNetwork)
			}
			if got := portsOf(spec); !cmp.Equal(got, tt.ports) {
				t.Errorf("ports %v, want %v", got, tt.ports)
			}
			if got, _ := lookupPath(objs[ref], "spec.replicas"); fmt.Sprint(got) != fmt.Sprint(tt.replicas) {
				t.Errorf("replicas %v, want %v", got, tt.replicas)
			}
			if got := tolerationKeys(spec); !cmp.Equal(got, tt.tolerations) {
				t.Errorf("tolerations %v, want %v", got, tt.tolerations)
			}
			if ns, _ := lookupPath(objs[ref], "metadata.namespace"); ns != "relns" {
				t.Errorf("namespace %v", ns)
			}
			if got := fmt.Sprint(spec["nodeSelector"]); got != "map[kubernetes.io/os:linux]" {
				t.Errorf("nodeSelector %s", got)
			}
		})
	}
}

func TestEFSNodeDaemonSet(t *testing.T) {
	t.Parallel()
	const all = "<nil>:Exists:<nil>"
	tests := []struct {
		version      string
		values       map[string]any
		hostNetwork  any
		nodeSelector string
		notIn        string // the values of the compute-type NotIn expression, "" when none
		priority     string
	}{
		{"2.2.0", nil, true, "map[beta.kubernetes.io/os:linux]", "[fargate]", "system-node-critical"},
		{"2.2.9", map[string]any{"node": map[string]any{"affinity": map[string]any{}}}, true, "map[beta.kubernetes.io/os:linux]", "[fargate]", "system-node-critical"},
		{"2.3.0", nil, true, "map[kubernetes.io/os:linux]", "[fargate]", "system-node-critical"},
		{"2.4.2", nil, true, "map[kubernetes.io/os:linux]", "[fargate]", "system-node-critical"},
		{"2.4.3", nil, true, "map[kubernetes.io/os:linux]", "[fargate]", "system-node-critical"},
		{"2.4.8", map[string]any{"node": map[string]any{"affinity": nil}}, true, "map[kubernetes.io/os:linux]", "", "system-node-critical"},
		{"2.4.9", nil, nil, "map[kubernetes.io/os:linux]", "[fargate]", "system-node-critical"},
		{"2.5.0", nil, true, "map[kubernetes.io/os:linux]", "[fargate]", "system-node-critical"},
		{"2.5.6", map[string]any{"node": map[string]any{"priorityClassName": "ignored"}}, true, "map[kubernetes.io/os:linux]", "[fargate]", "system-node-critical"},
		{"3.0.1", map[string]any{"node": map[string]any{"priorityClassName": "custom"}}, true, "map[kubernetes.io/os:linux]", "[fargate]", "custom"},
		{"3.1.1", nil, true, "map[kubernetes.io/os:linux]", "[fargate hybrid]", "system-node-critical"},
		{"4.4.1", map[string]any{"node": map[string]any{"nodeSelector": map[string]any{"efs": "yes"}}}, true, "map[efs:yes kubernetes.io/os:linux]", "[fargate hybrid]", "system-node-critical"},
	}
	for _, tt := range tests {
		name := tt.version
		if tt.values != nil {
			name += " " + fmt.Sprint(tt.values)
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			objs := renderKnowledge(t, "aws-efs-csi-driver", tt.version, tt.values)
			spec := podSpec(t, objs, "DaemonSet/efs-csi-node")
			if got := spec["hostNetwork"]; got != tt.hostNetwork {
				t.Errorf("hostNetwork %v, want %v", got, tt.hostNetwork)
			}
			wantPorts := []string{"healthz:9809:0"}
			if tt.hostNetwork == true {
				wantPorts = []string{"healthz:9809:9809"}
			}
			if got := portsOf(spec); !cmp.Equal(got, wantPorts) {
				t.Errorf("ports %v, want %v", got, wantPorts)
			}
			if got := tolerationKeys(spec); !cmp.Equal(got, []string{all}) {
				t.Errorf("tolerations %v", got)
			}
			if got := fmt.Sprint(spec["nodeSelector"]); got != tt.nodeSelector {
				t.Errorf("nodeSelector %s, want %s", got, tt.nodeSelector)
			}
			got := ""
			if terms, ok := lookupPath(spec, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"); ok {
				exprs, _ := lookupPath(terms.([]any)[0].(map[string]any), "matchExpressions")
				e := exprs.([]any)[0].(map[string]any)
				if e["key"] == "eks.amazonaws.com/compute-type" && e["operator"] == "NotIn" {
					got = fmt.Sprint(e["values"])
				}
			}
			if got != tt.notIn {
				t.Errorf("compute-type NotIn %q, want %q", got, tt.notIn)
			}
			if spec["priorityClassName"] != tt.priority {
				t.Errorf("priorityClassName %v", spec["priorityClassName"])
			}
			if ns, _ := lookupPath(objs["DaemonSet/efs-csi-node"], "metadata.namespace"); ns != "relns" {
				t.Errorf("namespace %v", ns)
			}
		})
	}
}

func TestEFSValuesKeys(t *testing.T) {
	t.Parallel()
	const (
		R = ChartKeyRead
		U = ChartKeyUnread
	)
	tests := map[string]map[string]ChartKeyStatus{
		"2.2.6": {"controller.hostNetwork": U, "controller.podLabels": U, "node.affinity": U, "replicaCount": R, "controller.replicaCount": U, "controller.volMetricsOptIn": R, "node.priorityClassName": U},
		"2.4.2": {"node.affinity": U, "controller.securityContext": U},
		"2.4.8": {"node.affinity.nodeAffinity": R, "node.affinity.podAntiAffinity": R, "controller.hostNetwork": U, "controller.securityContext.runAsUser": R},
		"2.5.6": {"controller.hostNetwork": R, "controller.podLabels.team": R, "controller.podLabel": U, "controller.podLabel.team": U, "controller.priorityClassName": R, "node.priorityClassName": U, "node.podLabels": U},
		"3.0.8": {"controller.podLabels": R, "controller.podLabel": U, "node.priorityClassName": R, "node.podLabels.team": R, "replicaCount": R, "controller.name": U},
		"3.1.1": {"controller.name": R, "controller.replicaCount": R, "replicaCount": U, "controller.topologySpreadConstraints": R, "controller.enableMetrics": U, "controller.updateStrategy": R},
		"4.4.1": {"controller.enableMetrics": R, "controller.updateStrategy": U, "node.unmountTimeout": R},
	}
	common := map[string]ChartKeyStatus{
		"controller.tolerations[0].key":    R,
		"controller.nodeSelector.role":     R,
		"controller.affinity.nodeAffinity": R,
		"node.tolerations":                 R,
		"node.nodeSelector.role":           R,
		"controller.healthPort":            R,
		"node.healthPort":                  R,
		"controller.tolerationz":           U,
	}
	for v, keys := range tests {
		c, ok := ChartFor("aws-efs-csi-driver", v)
		if !ok || c.Assumed != "" {
			t.Fatalf("aws-efs-csi-driver %s not known", v)
		}
		for k, w := range common {
			keys[k] = w
		}
		for k, want := range keys {
			if got := c.ValuesKey(k); got != want {
				t.Errorf("aws-efs-csi-driver %s: %s is %v, want %v", v, k, got, want)
			}
		}
	}
	// The copies' own versions read exactly their keys plus the keys the templates read
	// beyond them.
	for _, tt := range []struct {
		version, file string
		add, remove   []string
	}{
		{"2.2.4", "charts/aws-efs-csi-driver/values/2.2.4.yaml", nil, nil},
		{"2.5.5", "charts/aws-efs-csi-driver/values/2.5.5.yaml", nil, nil},
		{"3.0.8", "charts/aws-efs-csi-driver/values/3.0.8.yaml", []string{"controller.podLabels"}, []string{"controller.podLabel"}},
	} {
		c, _ := ChartFor("aws-efs-csi-driver", tt.version)
		data, err := knowledgeFS.ReadFile(tt.file)
		if err != nil {
			t.Fatal(err)
		}
		var root map[string]any
		if err := yaml.Unmarshal(data, &root); err != nil {
			t.Fatal(err)
		}
		want := map[string]bool{}
		var walk func(m map[string]any, prefix string)
		walk = func(m map[string]any, prefix string) {
			for k, v := range m {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				want[p] = true
				if sub, ok := v.(map[string]any); ok {
					walk(sub, p)
				}
			}
		}
		walk(root, "")
		for _, k := range tt.add {
			want[k] = true
		}
		for _, k := range tt.remove {
			delete(want, k)
		}
		var wantList []string
		for k := range want {
			wantList = append(wantList, k)
		}
		sort.Strings(wantList)
		if diff := cmp.Diff(wantList, c.ValuesKeys()); diff != "" {
			t.Errorf("aws-efs-csi-driver %s keys (-copy +catalog):\n%s", tt.version, diff)
		}
	}
}

// TestEFSControllerPrivileged: Fargate refuses the controller for its privileged
// efs-plugin container too, except in 2.4.7-2.4.8 (aws-efs-csi-driver#1179 reports only
// hostNetwork and host ports with chart 2.4.8).
func TestEFSControllerPrivileged(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		version string
		values  map[string]any
		want    any
	}{
		{"2.2.6", nil, true},
		{"2.4.6", nil, true},
		{"2.4.7", nil, false},
		{"2.4.8", nil, false},
		{"2.4.9", nil, true},
		{"2.5.6", nil, true},
		{"3.0.1", map[string]any{"controller": map[string]any{"containerSecurityContext": map[string]any{"privileged": false}}}, false},
		{"4.4.1", nil, true},
	} {
		spec := podSpec(t, renderKnowledge(t, "aws-efs-csi-driver", tt.version, tt.values), "Deployment/efs-csi-controller")
		cs, _ := spec["containers"].([]any)
		got, _ := lookupPath(cs[0].(map[string]any), "securityContext.privileged")
		if got != tt.want {
			t.Errorf("aws-efs-csi-driver %s %v: efs-plugin privileged %v, want %v", tt.version, tt.values, got, tt.want)
		}
	}
}
