package lint

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
)

// The source fixers keep what the add-on or release already sets: the user's
// configuration and, for lists the source renders from its defaults, the
// default items.
func TestSourceFieldEdits(t *testing.T) {
	tol := map[string]any{"key": "dedicated", "operator": "Equal", "value": "system", "effect": "NoSchedule"}
	ebsController := func(a *cluster.Addon, r *cluster.HelmRelease) *cluster.Workload {
		via := ""
		switch {
		case a != nil:
			via = a.Address
		case r != nil:
			via = r.Address
		}
		return &cluster.Workload{
			Object:    &cluster.Object{Kind: "Deployment", Name: "ebs-csi-controller", Namespace: "kube-system", Via: via},
			Component: "ebs-csi-controller", Addon: a, Release: r,
		}
	}
	addon := func(version string, config map[string]any, unknown ...string) *cluster.Addon {
		return &cluster.Addon{Name: "aws-ebs-csi-driver", Version: version, ConfigurationValues: config, Unknown: unknown,
			Address: `module.eks.aws_eks_addon.this["aws-ebs-csi-driver"]`, Origin: cluster.Origin{File: "main.tf", Line: 20},
			Decl: cluster.Decl{Kind: cluster.DeclConfigFile}}
	}
	release := func(values map[string]any) *cluster.HelmRelease {
		return &cluster.HelmRelease{Name: "aws-ebs-csi-driver", Namespace: "kube-system", Chart: "aws-ebs-csi-driver", Version: "2.35.1",
			Values: values, Address: "helm_release.ebs", Origin: cluster.Origin{File: "main.tf", Line: 40}}
	}
	defaults := func() []any {
		kb, ok := catalog.ChartFor("aws-ebs-csi-driver", "2.35.1")
		if !ok {
			t.Fatal("no aws-ebs-csi-driver 2.35.1 in the knowledge base")
		}
		l, _ := cluster.Lookup(kb.DefaultValues(), "controller.tolerations").([]any)
		if len(l) == 0 {
			t.Fatal("no default controller tolerations")
		}
		return cluster.CopyJSON(l).([]any)
	}
	addTol := PodChange{Field: "tolerations", Value: []any{tol}, Added: []any{tol}}
	selector := map[string]any{"kubernetes.io/os": "linux", "node-role": "system"}
	setSelector := PodChange{Field: "nodeSelector", Value: selector}
	tests := []struct {
		name   string
		w      *cluster.Workload
		change PodChange
		// want is the configuration (add-on) or values (release) the edit sets;
		// nil when no edit is expected.
		want map[string]any
	}{
		{
			name:   "add-on without configuration: the default tolerations stay",
			w:      ebsController(addon("v1.35.0-eksbuild.1", nil), nil),
			change: addTol,
			want:   map[string]any{"controller": map[string]any{"tolerations": append(defaults(), tol)}},
		},
		{
			name: "add-on with the user's configuration: kept, their list extended",
			w: ebsController(addon("v1.35.0-eksbuild.1", map[string]any{
				"controller": map[string]any{"extraVolumeTags": map[string]any{"team": "a"}, "tolerations": []any{map[string]any{"key": "x", "operator": "Exists"}}},
				"node":       map[string]any{"tolerateAllTaints": true},
			}), nil),
			change: addTol,
			want: map[string]any{
				"controller": map[string]any{"extraVolumeTags": map[string]any{"team": "a"}, "tolerations": []any{map[string]any{"key": "x", "operator": "Exists"}, tol}},
				"node":       map[string]any{"tolerateAllTaints": true},
			},
		},
		{
			name:   "add-on node selector",
			w:      ebsController(addon("v1.35.0-eksbuild.1", nil), nil),
			change: setSelector,
			want:   map[string]any{"controller": map[string]any{"nodeSelector": selector}},
		},
		{
			name:   "add-on version that rejects the key",
			w:      ebsController(addon("v1.13.0-eksbuild.3", nil), nil),
			change: addTol,
		},
		{
			name:   "add-on configuration not known before apply",
			w:      ebsController(addon("v1.35.0-eksbuild.1", nil, "configuration_values"), nil),
			change: addTol,
		},
		{
			name:   "release without values: the chart's default tolerations stay",
			w:      ebsController(nil, release(map[string]any{})),
			change: addTol,
			want:   map[string]any{"controller": map[string]any{"tolerations": append(defaults(), tol)}},
		},
		{
			name:   "release whose tolerations are one unknown expression",
			w:      ebsController(nil, release(map[string]any{"controller": map[string]any{"tolerations": "${var.tolerations}"}})),
			change: addTol,
		},
		{
			name:   "release node selector",
			w:      ebsController(nil, release(map[string]any{})),
			change: setSelector,
			want:   map[string]any{"controller": map[string]any{"nodeSelector": selector}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &cluster.Model{}
			e, where, ok := sourceFix(m, tt.w, tt.change)
			if tt.want == nil {
				if ok {
					t.Fatalf("got an edit at %s, want none:\n%s", where, e.Text)
				}
				return
			}
			if !ok {
				t.Fatal("no edit")
			}
			var got map[string]any
			switch e.Format {
			case FormatHCL:
				got = decodeConfigurationValues(t, e.Text)
			case FormatValues:
				if err := yaml.Unmarshal([]byte(e.Text), &got); err != nil {
					t.Fatal(err)
				}
			default:
				t.Fatalf("format %s", e.Format)
			}
			if diff := cmp.Diff(normalizeNumbers(tt.want), normalizeNumbers(got)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", where, diff)
			}
		})
	}
}

// decodeConfigurationValues evaluates the configuration_values an HCL edit
// sets, with jsonencode.
func decodeConfigurationValues(t *testing.T, text string) map[string]any {
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

// normalizeNumbers makes int64 and float64 forms of whole numbers compare equal.
func normalizeNumbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range t {
			out[k] = normalizeNumbers(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = normalizeNumbers(x)
		}
		return out
	case int64:
		return float64(t)
	case int:
		return float64(t)
	}
	return v
}

func TestReadInstead(t *testing.T) {
	tests := []struct {
		chart, version, key, want string
	}{
		{"karpenter", "1.0.2", "settings.interruptionQueueName", "settings.interruptionQueue"},
		{"karpenter", "0.37.0", "settings.aws.interruptionQueueName", "settings.interruptionQueue"},
		{"karpenter", "0.37.0", "settings.aws.clusterName", "settings.clusterName"},
		{"karpenter", "0.37.0", "settings.aws.clusterEndpoint", "settings.clusterEndpoint"},
		{"karpenter", "1.0.2", "tolerration", "tolerations"},
		{"karpenter", "1.1.0", "schedulerName", ""},
		{"karpenter", "1.0.2", "settings.somethingElse", ""},
	}
	for _, tt := range tests {
		kb, ok := catalog.ChartFor(tt.chart, tt.version)
		if !ok {
			t.Fatalf("no %s %s", tt.chart, tt.version)
		}
		if got := readInstead(kb, tt.key); got != tt.want {
			t.Errorf("readInstead(%s %s, %s) = %q, want %q", tt.chart, tt.version, tt.key, got, tt.want)
		}
	}
}
