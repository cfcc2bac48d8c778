package lint_test

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/lint/linttest"
	"github.com/eksdoctor/eksdoctor/sim"
)

// The Helm and EKS add-on cases are built as models (a helm_release or add-on as
// the Terraform loader describes it) and expanded by the chart knowledge base, so
// the chart history the check relies on is the one of the embedded values files
// (corpus aws-ebs-csi-driver @2.10.1, 2.11.0, 2.35.1, 2.36.0).

const karpenterManifests = `apiVersion: karpenter.k8s.aws/v1
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
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: gp3
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: ebs.csi.aws.com
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: default}
spec:
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: "postgres:16"}]
  volumeClaimTemplates:
    - metadata: {name: data}
      spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Gi}}}
`

// chartCase describes the inputs; build makes a fresh model from them, so a fix
// can be applied to the inputs and the analysis re-run from scratch.
type chartCase struct {
	karpenter string
	release   *cluster.HelmRelease
	addon     *cluster.Addon
}

func (c chartCase) build(t *testing.T) *cluster.Model {
	t.Helper()
	docs := karpenterManifests
	if strings.HasPrefix(c.karpenter, "0.") {
		// Karpenter before 1.0 serves v1beta1, not v1.
		docs = strings.NewReplacer(
			"karpenter.k8s.aws/v1\n", "karpenter.k8s.aws/v1beta1\n",
			"karpenter.sh/v1\n", "karpenter.sh/v1beta1\n",
			"  amiSelectorTerms:\n    - alias: al2023@latest\n", "  amiFamily: AL2023\n",
			"nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}", "nodeClassRef: {name: default}",
		).Replace(docs)
	}
	objs := linttest.Decode(t, "karpenter.yaml", docs)
	part := &cluster.Model{
		Objects: objs,
		NodeGroups: []*cluster.NodeGroup{{
			Name: "karpenter", Managed: true, InstanceTypes: []string{"m5.large"}, MinSize: 2, MaxSize: 3, DesiredSize: 2,
			Labels: map[string]string{"karpenter.sh/controller": "true"}, Address: "module.eks", CreatedBy: "terraform",
			Origin: cluster.Origin{File: "main.tf", Line: 80},
		}},
		HelmReleases: []*cluster.HelmRelease{{
			Name: "karpenter", Namespace: "kube-system", Chart: "karpenter", Repository: "oci://public.ecr.aws/karpenter",
			Version: c.karpenter, Address: "helm_release.karpenter", Origin: cluster.Origin{File: "main.tf", Line: 140},
			Values: map[string]any{"nodeSelector": map[string]any{"karpenter.sh/controller": "true"}, "dnsPolicy": "Default"},
		}},
	}
	if c.release != nil {
		r := *c.release
		r.Values = copyValues(c.release.Values)
		part.HelmReleases = append(part.HelmReleases, &r)
	}
	if c.addon != nil {
		a := *c.addon
		if c.addon.ConfigurationValues != nil {
			a.ConfigurationValues = copyValues(c.addon.ConfigurationValues)
		}
		part.Addons = append(part.Addons, &a)
	}
	return linttest.Build(part)
}

func copyValues(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

func runChecks(m *cluster.Model) []lint.Finding { return lint.Run(m, sim.New(m), lint.Checks()) }

func ebsRelease(version string, values map[string]any) *cluster.HelmRelease {
	return &cluster.HelmRelease{
		Name: "aws-ebs-csi-driver", Namespace: "kube-system", Chart: "aws-ebs-csi-driver",
		Repository: "https://kubernetes-sigs.github.io/aws-ebs-csi-driver", Version: version, Values: values,
		Address: "helm_release.ebs_csi_driver", Origin: cluster.Origin{File: "main.tf", Line: 170},
	}
}

const f3 = "disruption-toleration-missing"

func TestDisruptionHelmAndAddons(t *testing.T) {
	tolerateNone := map[string]any{"node": map[string]any{"tolerateAllTaints": false}}
	tests := []struct {
		name   string
		in     chartCase
		want   []string // check severity object
		detail []string // substrings of the first finding's detail
		fix    string   // substring of the fix summary
	}{
		{
			name:   "chart 2.10.1 defaults",
			in:     chartCase{karpenter: "1.0.0", release: ebsRelease("2.10.1", nil)},
			want:   []string{f3 + " error DaemonSet/kube-system/ebs-csi-node"},
			detail: []string{"karpenter.sh/disrupted:NoSchedule (Karpenter v1.0.0, from chart version of helm_release.karpenter)", "chart 2.10.1 renders node.tolerateAllTaints: false (the chart default)", "from 1.0.0 to 2.10.x", "StatefulSet/default/db"},
			fix:    "set node.tolerateAllTaints: true",
		},
		{
			name: "chart 2.11.0 defaults",
			in:   chartCase{karpenter: "1.0.0", release: ebsRelease("2.11.0", nil)},
		},
		{
			name:   "chart 2.11.0 with tolerateAllTaints false",
			in:     chartCase{karpenter: "1.0.0", release: ebsRelease("2.11.0", tolerateNone)},
			want:   []string{f3 + " error DaemonSet/kube-system/ebs-csi-node"},
			detail: []string{"(set in the values)", "charts before 2.36.0 add no toleration"},
			fix:    "add karpenter.sh/disrupted:NoSchedule to node.tolerations",
		},
		{
			name:   "chart 2.35.1 with tolerateAllTaints false",
			in:     chartCase{karpenter: "1.6.0", release: ebsRelease("2.35.1", tolerateNone)},
			want:   []string{f3 + " error DaemonSet/kube-system/ebs-csi-node"},
			detail: []string{"{operator: Exists, effect: NoExecute, tolerationSeconds: 300} matches only NoExecute taints", "preStop hook (driver v1.35.0) does not recognise karpenter.sh/disrupted"},
			fix:    "node.tolerations",
		},
		{
			name: "chart 2.35.1 with tolerateAllTaints false and user tolerations",
			in: chartCase{karpenter: "1.6.0", release: ebsRelease("2.35.1", map[string]any{"node": map[string]any{
				"tolerateAllTaints": false,
				"tolerations":       []any{map[string]any{"key": "dedicated", "operator": "Equal", "value": "storage", "effect": "NoSchedule"}},
			}})},
			want: []string{f3 + " error DaemonSet/kube-system/ebs-csi-node"},
			fix:  "node.tolerations",
		},
		{
			name:   "chart 2.35.1 with tolerateAllTaints false under Karpenter v0.37",
			in:     chartCase{karpenter: "0.37.0", release: ebsRelease("2.35.1", tolerateNone)},
			want:   []string{f3 + " error DaemonSet/kube-system/ebs-csi-node", f3 + " warning Deployment/kube-system/karpenter"},
			detail: []string{"karpenter.sh/disruption=disrupting:NoSchedule (Karpenter v0.37.0"},
			fix:    "karpenter.sh/disruption:NoSchedule and karpenter.sh/disrupted:NoSchedule",
		},
		{
			name: "chart 2.36.0 with tolerateAllTaints false",
			in:   chartCase{karpenter: "1.6.0", release: ebsRelease("2.36.0", tolerateNone)},
		},
		{
			name: "chart 2.36.0 defaults",
			in:   chartCase{karpenter: "1.6.0", release: ebsRelease("2.36.0", nil)},
		},
		{
			name: "cilium with its tolerations overridden",
			in: chartCase{karpenter: "1.6.0", release: &cluster.HelmRelease{
				Name: "cilium", Namespace: "kube-system", Chart: "cilium", Repository: "https://helm.cilium.io/", Version: "1.16.5",
				Address: "helm_release.cilium", Origin: cluster.Origin{File: "main.tf", Line: 200},
				Values: map[string]any{"tolerations": []any{map[string]any{"key": "node.cilium.io/agent-not-ready", "operator": "Exists"}}},
			}},
			want: []string{f3 + " error DaemonSet/kube-system/cilium"},
			fix:  "add karpenter.sh/disrupted:NoSchedule to tolerations in the cilium values",
		},
		{
			name: "cilium defaults",
			in: chartCase{karpenter: "1.6.0", release: &cluster.HelmRelease{
				Name: "cilium", Namespace: "kube-system", Chart: "cilium", Repository: "https://helm.cilium.io/", Version: "1.16.5",
				Address: "helm_release.cilium", Origin: cluster.Origin{File: "main.tf", Line: 200},
			}},
		},
		{
			name: "EKS add-on with tolerateAllTaints false",
			in: chartCase{karpenter: "1.6.0", addon: &cluster.Addon{
				Name: "aws-ebs-csi-driver", Version: "v1.35.0-eksbuild.1", ConfigurationValues: tolerateNone,
				Address: "module.eks", Origin: cluster.Origin{File: "main.tf", Line: 66}, Decl: cluster.Decl{Kind: cluster.DeclConfigFile},
			}},
			want:   []string{f3 + " error DaemonSet/kube-system/ebs-csi-node"},
			detail: []string{"The EKS add-on's configuration_values set node.tolerateAllTaints: false"},
			fix:    "add karpenter.sh/disrupted:NoSchedule to node.tolerations in the add-on configuration",
		},
		{
			name: "EKS add-on that accepts no tolerations list",
			in: chartCase{karpenter: "1.6.0", addon: &cluster.Addon{
				Name: "aws-ebs-csi-driver", Version: "v1.12.0-eksbuild.1", ConfigurationValues: tolerateNone,
				Address: "aws_eks_addon.ebs", Origin: cluster.Origin{File: "addons.tf", Line: 1}, Decl: cluster.Decl{Kind: cluster.DeclConfigFile},
			}},
			want: []string{f3 + " error DaemonSet/kube-system/ebs-csi-node"},
			fix:  "accepts no node.tolerations",
		},
		{
			name: "EKS add-on defaults",
			in: chartCase{karpenter: "1.6.0", addon: &cluster.Addon{
				Name: "aws-ebs-csi-driver", Version: "v1.35.0-eksbuild.1", Address: "module.eks", Origin: cluster.Origin{File: "main.tf", Line: 66},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := runChecks(tt.in.build(t))
			got := describe(before, []string{f3})
			want := append([]string(nil), tt.want...)
			sort.Strings(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("findings (-want +got):\n%s%s", diff, detailsOf(before))
			}
			if len(tt.want) == 0 {
				return
			}
			var errFinding *lint.Finding
			for i, f := range before {
				if f.Check == f3 && f.Severity == lint.Error {
					errFinding = &before[i]
				}
			}
			if errFinding == nil {
				t.Fatalf("no error finding")
			}
			for _, s := range tt.detail {
				if !strings.Contains(errFinding.Summary+"\n"+errFinding.Detail, s) {
					t.Errorf("detail lacks %q:\n%s", s, errFinding.Detail)
				}
			}
			if errFinding.Fix == nil || len(errFinding.Fix.Edits) != 1 {
				t.Fatalf("fix = %+v, want one edit", errFinding.Fix)
			}
			if text := errFinding.Fix.Edits[0].Text; strings.Contains(text, "!!") {
				t.Errorf("fix text carries YAML tags:\n%s", text)
			}
			if !strings.Contains(errFinding.Fix.Summary, tt.fix) {
				t.Errorf("fix summary = %q, want it to mention %q", errFinding.Fix.Summary, tt.fix)
			}
			fixed := applyChartFix(t, tt.in, errFinding.Fix.Edits[0])
			after := runChecks(fixed.build(t))
			if left := describe(after, []string{f3}); len(left) > len(tt.want)-1 || containsError(after) {
				t.Errorf("after the fix %q, still:%s", errFinding.Fix.Edits[0].Text, detailsOf(after))
			}
			if n := newFindings(before, after); len(n) > 0 {
				t.Errorf("the fix caused new findings: %v", n)
			}
		})
	}
}

func containsError(fs []lint.Finding) bool {
	for _, f := range fs {
		if f.Check == f3 && f.Severity == lint.Error {
			return true
		}
	}
	return false
}

func newFindings(before, after []lint.Finding) []string {
	was := map[string]bool{}
	for _, f := range before {
		was[f.Check+" "+f.Object.String()] = true
	}
	var out []string
	for _, f := range after {
		if k := f.Check + " " + f.Object.String(); !was[k] {
			out = append(out, k+": "+f.Summary)
		}
	}
	return out
}

func detailsOf(fs []lint.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("\n  " + f.Severity.String() + " " + f.Check + " " + f.Object.String() + ": " + f.Summary + "\n    " + strings.ReplaceAll(f.Detail, "\n", "\n    "))
	}
	return b.String()
}

// applyChartFix applies a values or add-on configuration edit to the inputs the
// way the user would: values are merged into the release's values (lists are
// replaced); the HCL configuration_values attribute is evaluated with jsonencode.
func applyChartFix(t *testing.T, in chartCase, e lint.Edit) chartCase {
	t.Helper()
	out := in
	switch e.Format {
	case lint.FormatValues:
		if in.release == nil || e.File != in.release.Origin.File || e.Line != in.release.Origin.Line {
			t.Fatalf("values edit at %s:%d does not point at the release", e.File, e.Line)
		}
		var patch map[string]any
		if err := yaml.Unmarshal([]byte(e.Text), &patch); err != nil {
			t.Fatalf("values edit is not YAML: %v\n%s", err, e.Text)
		}
		r := *in.release
		r.Values = mergeValues(copyValues(in.release.Values), patch)
		out.release = &r
	case lint.FormatHCL:
		if in.addon == nil || e.File != in.addon.Origin.File || e.Line != in.addon.Origin.Line {
			t.Fatalf("HCL edit at %s:%d does not point at the add-on", e.File, e.Line)
		}
		a := *in.addon
		a.ConfigurationValues = evalConfigurationValues(t, e.Text)
		out.addon = &a
	default:
		t.Fatalf("unexpected edit format %q", e.Format)
	}
	return out
}

func mergeValues(dst, src map[string]any) map[string]any {
	if dst == nil {
		dst = map[string]any{}
	}
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				dst[k] = mergeValues(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
	return dst
}

func evalConfigurationValues(t *testing.T, text string) map[string]any {
	t.Helper()
	f, diags := hclsyntax.ParseConfig([]byte(text), "edit.tf", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("HCL edit does not parse: %v\n%s", diags, text)
	}
	attr, ok := f.Body.(*hclsyntax.Body).Attributes["configuration_values"]
	if !ok {
		t.Fatalf("HCL edit sets no configuration_values:\n%s", text)
	}
	v, diags := attr.Expr.Value(&hcl.EvalContext{Functions: map[string]function.Function{"jsonencode": stdlib.JSONEncodeFunc}})
	if diags.HasErrors() {
		t.Fatalf("configuration_values does not evaluate: %v", diags)
	}
	out := map[string]any{}
	if err := json.Unmarshal([]byte(v.AsString()), &out); err != nil {
		t.Fatalf("configuration_values is not JSON: %v", err)
	}
	return out
}
