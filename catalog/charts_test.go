package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
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
		{"karpenter", "0.16.3", "karpenter", "0.31.4", true},
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
	if got := ChartNames(); !cmp.Equal(got, []string{"aws-ebs-csi-driver", "aws-load-balancer-controller", "cilium", "eks-pod-identity-agent", "karpenter", "metrics-server"}) {
		t.Errorf("ChartNames = %v", got)
	}
}

func TestEveryRangeHasProvenanceAndComponents(t *testing.T) {
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
