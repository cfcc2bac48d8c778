package catalog

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
)

func TestAddonAccepts(t *testing.T) {
	t.Parallel()
	const (
		A = AddonAccepted
		R = AddonRejected
		U = AddonUnverified
	)
	tests := []struct {
		addon, version, key string
		want                AddonAcceptance
	}{
		{"aws-ebs-csi-driver", "v1.14.0-eksbuild.1", "controller.tolerations", A},
		{"aws-ebs-csi-driver", "v1.14.0-eksbuild.1", "controller.tolerations[0].key", A},
		{"aws-ebs-csi-driver", "v1.14.0-eksbuild.1", "node.tolerations", A},
		{"aws-ebs-csi-driver", "v1.13.0-eksbuild.3", "controller.tolerations", R},
		{"aws-ebs-csi-driver", "v1.13.0-eksbuild.3", "node.tolerateAllTaints", A},
		{"aws-ebs-csi-driver", "v1.10.0-eksbuild.1", "node.tolerateAllTaints", A},
		{"aws-ebs-csi-driver", "v1.9.0-eksbuild.1", "node.tolerateAllTaints", R},
		{"aws-ebs-csi-driver", "v1.35.0-eksbuild.1", "controller.nodeSelector", U},
		{"coredns", "v1.8.7-eksbuild.3", "tolerations", R},
		{"coredns", "v1.8.7-eksbuild.3", "nodeSelector", A},
		{"coredns", "v1.8.7-eksbuild.5", "tolerations", U},
		{"coredns", "v1.9.3-eksbuild.2", "tolerations", R},
		{"coredns", "v1.9.3-eksbuild.2", "affinity", R},
		{"coredns", "v1.9.3-eksbuild.3", "tolerations", A},
		{"coredns", "v1.9.3-eksbuild.3", "affinity.nodeAffinity", A},
		{"coredns", "v1.10.1-eksbuild.4", "tolerations", A},
		{"coredns", "v1.11.1-eksbuild.4", "computeType", A},
		{"coredns", "v1.11.1-eksbuild.4", "somethingElse", U},
		{"kube-proxy", "v1.29.0-eksbuild.1", "tolerations", R},
		{"kube-proxy", "v1.29.0-eksbuild.1", "resources", U},
		{"snapshot-controller", "v8.0.0-eksbuild.1", "tolerations", R},
		{"aws-mountpoint-s3-csi-driver", "v1.10.0-eksbuild.1", "controller.tolerations", R},
		{"aws-mountpoint-s3-csi-driver", "v1.5.1-eksbuild.1", "node.tolerateAllTaints", R},
		{"aws-mountpoint-s3-csi-driver", "v1.5.1-eksbuild.1", "tolerations", R},
		{"aws-mountpoint-s3-csi-driver", "v1.8.0-eksbuild.1", "node.tolerateAllTaints", A},
		{"aws-mountpoint-s3-csi-driver", "v1.8.0-eksbuild.1", "node.tolerations[0].key", A},
		{"aws-mountpoint-s3-csi-driver", "v1.8.0-eksbuild.1", "node.nodeSelector", R},
		{"aws-mountpoint-s3-csi-driver", "v1.15.0-eksbuild.1", "controller.nodeSelector", R},
		{"aws-mountpoint-s3-csi-driver", "v2.0.0-eksbuild.1", "controller.tolerations", R},
		{"aws-mountpoint-s3-csi-driver", "v2.0.0-eksbuild.1", "controller.tolerations[0].key", R},
		{"aws-mountpoint-s3-csi-driver", "v2.0.0-eksbuild.1", "node.tolerations", A},
		{"aws-mountpoint-s3-csi-driver", "v2.0.0-eksbuild.1", "node.tolerateAllTaints", A},
		{"aws-mountpoint-s3-csi-driver", "v2.0.0-eksbuild.1", "node.defaultTolerations", R},
		{"aws-mountpoint-s3-csi-driver", "v2.0.0-eksbuild.1", "controller.nodeSelector", U},
	}
	for _, tt := range tests {
		a, ok := AddonFor(tt.addon, tt.version)
		if !ok {
			t.Fatalf("AddonFor(%s, %s) not found", tt.addon, tt.version)
		}
		if a.Assumed != "" {
			t.Errorf("%s %s assumed: %s", tt.addon, tt.version, a.Assumed)
		}
		if got := a.Accepts(tt.key); got != tt.want {
			t.Errorf("%s %s accepts %s = %v, want %v", tt.addon, tt.version, tt.key, got, tt.want)
		}
	}
}

func TestAddonCheckConfig(t *testing.T) {
	t.Parallel()
	a, _ := AddonFor("aws-ebs-csi-driver", "v1.13.0-eksbuild.3")
	got := a.CheckConfig(map[string]any{
		"controller": map[string]any{"tolerations": []any{}, "extraVolumeTags": map[string]any{"a": "b"}},
		"node":       map[string]any{"tolerateAllTaints": false},
	})
	want := []AddonConfigVerdict{
		{Key: "controller.extraVolumeTags", Acceptance: AddonUnverified},
		{Key: "controller.tolerations", Acceptance: AddonRejected},
		{Key: "node.tolerateAllTaints", Acceptance: AddonAccepted},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestAddonFor(t *testing.T) {
	t.Parallel()
	a, ok := AddonFor("coredns", "")
	if !ok || a.Assumed == "" || a.Version != "v1.11.1-eksbuild.4" {
		t.Errorf("coredns unpinned: %v %q %q", ok, a.Version, a.Assumed)
	}
	if a.Namespace != "kube-system" {
		t.Errorf("namespace %q", a.Namespace)
	}
	a, ok = AddonFor("aws-ebs-csi-driver", "v1.36.0-eksbuild.1")
	if !ok || a.Chart != "aws-ebs-csi-driver 2.36.0" || !a.HasFeature("daemonsetTolerations") {
		t.Errorf("ebs add-on: %v %q %v", ok, a.Chart, a.Features)
	}
	if v, _ := lookupPath(a.DefaultValues(), "node.tolerateAllTaints"); v != true {
		t.Errorf("add-on tolerateAllTaints default %v, want true", v)
	}
	a, _ = AddonFor("aws-ebs-csi-driver", "v1.11.0-eksbuild.1")
	if v, _ := lookupPath(a.DefaultValues(), "node.tolerateAllTaints"); v != true {
		t.Errorf("add-on v1.11 tolerateAllTaints default %v, want true although chart 2.10 defaulted false", v)
	}
	if _, ok := AddonFor("no-such-addon", ""); ok {
		t.Error("unknown add-on found")
	}
	want := []string{"amazon-cloudwatch-observability", "aws-ebs-csi-driver", "aws-efs-csi-driver", "aws-mountpoint-s3-csi-driver", "coredns", "eks-pod-identity-agent", "kube-proxy", "metrics-server", "snapshot-controller", "vpc-cni"}
	if got := AddonNames(); !cmp.Equal(got, want) {
		t.Errorf("AddonNames = %v", got)
	}
	c, _ := AddonFor("vpc-cni", "v1.18.0-eksbuild.1")
	comp, ok := c.Component("aws-node")
	if !ok || comp.NodeCritical == "" || comp.Bootstrap == "" {
		t.Errorf("aws-node component %+v", comp)
	}
}

func TestConcurrentLookups(t *testing.T) {
	t.Parallel()
	done := make(chan bool)
	for i := 0; i < 8; i++ {
		go func() {
			ChartFor("karpenter", "0.33.0")
			AddonFor("aws-ebs-csi-driver", "v1.36.0-eksbuild.1")
			done <- true
		}()
	}
	for i := 0; i < 8; i++ {
		<-done
	}
}

func TestAddonUpgrade(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addon, version string
		keys           []string
		want           string
		ok             bool
	}{
		{addon: "aws-ebs-csi-driver", version: "v1.13.0-eksbuild.3", keys: []string{"controller.tolerations"}, want: "v1.14.0-eksbuild.1", ok: true},
		{addon: "aws-ebs-csi-driver", version: "v1.9.0-eksbuild.1", keys: []string{"node.tolerateAllTaints"}, want: "v1.10.0-eksbuild.1", ok: true},
		{addon: "aws-ebs-csi-driver", version: "v1.9.0-eksbuild.1", keys: []string{"node.tolerateAllTaints", "controller.tolerations"}, want: "v1.14.0-eksbuild.1", ok: true},
		{addon: "coredns", version: "v1.9.3-eksbuild.2", keys: []string{"tolerations"}, want: "v1.9.3-eksbuild.3", ok: true},
		// v1.8.7-eksbuild.4 may accept tolerations, but that is not sourced.
		{addon: "coredns", version: "v1.8.7-eksbuild.3", keys: []string{"tolerations"}, want: "v1.9.3-eksbuild.3", ok: true},
		{addon: "kube-proxy", version: "v1.29.0-eksbuild.1", keys: []string{"tolerations"}},
		{addon: "snapshot-controller", version: "v8.0.0-eksbuild.1", keys: []string{"tolerations"}},
		// Newer than the version asked about, even when that one accepts the keys.
		{addon: "aws-ebs-csi-driver", version: "v1.35.0-eksbuild.1", keys: []string{"controller.tolerations"}, want: "v1.36.0", ok: true},
		{addon: "no-such-addon", version: "v1.0.0", keys: []string{"tolerations"}},
		{addon: "aws-mountpoint-s3-csi-driver", version: "v1.5.1-eksbuild.1", keys: []string{"node.tolerations"}, want: "v1.8.0", ok: true},
		// No known version lets the v2 controller be given tolerations (containers-roadmap#2676).
		{addon: "aws-mountpoint-s3-csi-driver", version: "v2.0.0-eksbuild.1", keys: []string{"controller.tolerations"}},
	}
	for _, tt := range tests {
		got, ok := AddonUpgrade(tt.addon, tt.version, tt.keys...)
		if got != tt.want || ok != tt.ok {
			t.Errorf("AddonUpgrade(%s, %s, %v) = %q, %v; want %q, %v", tt.addon, tt.version, tt.keys, got, ok, tt.want, tt.ok)
		}
	}
}

// renderAddon renders an add-on version of the knowledge base with the Helm engine, as
// source/helm does (release namespace: the add-on's), and returns its objects by
// "Kind/name".
func renderAddon(t *testing.T, name, version string, config map[string]any) (*Addon, map[string]map[string]any) {
	t.Helper()
	a, ok := AddonFor(name, version)
	if !ok {
		t.Fatalf("%s %s not known", name, version)
	}
	ann := map[string]string{}
	for _, f := range a.Features {
		ann["eksdoctor.io/feature-"+f] = "true"
	}
	ch := &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: a.Name, Version: strings.TrimPrefix(a.Version, "v"), AppVersion: a.AppVersion, Type: "application", Annotations: ann},
		Values:   a.DefaultValues(),
	}
	for n, data := range a.Templates {
		ch.Templates = append(ch.Templates, &chart.File{Name: n, Data: data})
	}
	if config == nil {
		config = map[string]any{}
	}
	top, err := chartutil.ToRenderValues(ch, config, chartutil.ReleaseOptions{Name: a.Name, Namespace: a.Namespace, IsInstall: true}, chartutil.DefaultCapabilities)
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
	return a, objs
}

func TestMountpointS3AddonWorkloads(t *testing.T) {
	t.Parallel()
	const (
		all    = "<nil>:Exists:<nil>"
		cao    = "CriticalAddonsOnly:Exists:<nil>"
		noExec = "<nil>:Exists:NoExecute"
		gpu    = "nvidia.com/gpu:Exists:NoSchedule"
	)
	gpuTol := []any{map[string]any{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}}
	tests := []struct {
		version    string
		config     map[string]any
		node       []string
		notIn      string
		controller bool
	}{
		{"v1.5.1-eksbuild.1", nil, []string{cao, noExec}, "", false},
		{"v1.7.0-eksbuild.1", nil, []string{cao, noExec}, "[fargate]", false},
		{"v1.10.0-eksbuild.1", nil, []string{cao, noExec}, "[fargate]", false},
		{"v1.10.0-eksbuild.1", map[string]any{"node": map[string]any{"tolerateAllTaints": true}}, []string{all}, "[fargate]", false},
		{"v1.15.0-eksbuild.1", map[string]any{"node": map[string]any{"tolerations": gpuTol}}, []string{cao, noExec, gpu}, "[fargate hybrid]", false},
		{"v2.0.0-eksbuild.1", nil, []string{all}, "[fargate hybrid]", true},
	}
	for _, tt := range tests {
		name := tt.version
		if tt.config != nil {
			name += " " + fmt.Sprint(tt.config)
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a, objs := renderAddon(t, "aws-mountpoint-s3-csi-driver", tt.version, tt.config)
			if a.Assumed != "" {
				t.Fatalf("assumed: %s", a.Assumed)
			}
			node := podSpec(t, objs, "DaemonSet/s3-csi-node")
			if got := tolerationKeys(node); !cmp.Equal(got, tt.node) {
				t.Errorf("s3-csi-node tolerations %v, want %v", got, tt.node)
			}
			got := ""
			if v, ok := lookupPath(node, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms"); ok {
				e := v.([]any)[0].(map[string]any)["matchExpressions"].([]any)[0].(map[string]any)
				got = fmt.Sprint(e["values"])
			}
			if got != tt.notIn {
				t.Errorf("s3-csi-node compute-type NotIn %q, want %q", got, tt.notIn)
			}
			ctrl, ok := objs["Deployment/s3-csi-controller"]
			if ok != tt.controller {
				t.Fatalf("s3-csi-controller rendered: %v", ok)
			}
			_, comp := a.Component("s3-csi-controller")
			if comp != tt.controller {
				t.Errorf("s3-csi-controller component: %v", comp)
			}
			if !ok {
				return
			}
			spec := podSpec(t, objs, "Deployment/s3-csi-controller")
			if got := tolerationKeys(spec); len(got) != 0 {
				t.Errorf("s3-csi-controller tolerations %v, want none", got)
			}
			if ns, _ := lookupPath(ctrl, "metadata.namespace"); ns != "kube-system" {
				t.Errorf("s3-csi-controller namespace %v", ns)
			}
			if r, _ := lookupPath(ctrl, "spec.replicas"); fmt.Sprint(r) != "1" {
				t.Errorf("s3-csi-controller replicas %v", r)
			}
			if got := fmt.Sprint(spec["nodeSelector"]); got != "map[kubernetes.io/os:linux]" {
				t.Errorf("s3-csi-controller nodeSelector %s", got)
			}
		})
	}
}

// computeTypeNotIn returns the values of a required compute-type NotIn expression of a pod
// spec's node affinity, "" when there is none.
func computeTypeNotIn(spec map[string]any) string {
	terms, ok := lookupPath(spec, "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms")
	if !ok {
		return ""
	}
	for _, t := range terms.([]any) {
		exprs, _ := t.(map[string]any)["matchExpressions"].([]any)
		for _, e := range exprs {
			m := e.(map[string]any)
			if m["key"] == "eks.amazonaws.com/compute-type" && m["operator"] == "NotIn" {
				return fmt.Sprint(m["values"])
			}
		}
	}
	return ""
}

// TestCloudWatchObservabilityDaemonSets: the DaemonSets of the amazon-cloudwatch-observability
// add-on tolerate every taint from 1.7.0 and keep off Fargate nodes only from 1.9.0
// (aws/amazon-cloudwatch-agent-operator#183).
func TestCloudWatchObservabilityDaemonSets(t *testing.T) {
	t.Parallel()
	const all = "<nil>:Exists:<nil>"
	type ds struct {
		tolerations []string
		notIn       string
		hostNetwork any
		priority    any
	}
	tests := []struct {
		version string
		config  map[string]any
		agent   ds
		fluent  ds
		manager []string
		dcgm    bool
		neuron  bool
	}{
		{"v1.2.1-eksbuild.1", nil, ds{nil, "", nil, nil}, ds{nil, "", true, nil}, nil, false, false},
		{"v1.6.0-eksbuild.1", map[string]any{"tolerations": []any{map[string]any{"operator": "Exists"}}}, ds{nil, "", nil, nil}, ds{nil, "", true, nil}, nil, true, true},
		{"v1.7.0-eksbuild.1", nil, ds{[]string{all}, "", nil, nil}, ds{[]string{all}, "", true, nil}, []string{all}, true, true},
		{"v1.8.0-eksbuild.1", nil, ds{[]string{all}, "", nil, nil}, ds{[]string{all}, "", true, nil}, []string{all}, true, true},
		{"v1.9.0-eksbuild.1", nil, ds{[]string{all}, "[fargate]", nil, nil}, ds{[]string{all}, "[fargate]", true, nil}, []string{all}, true, true},
		{"v2.1.0-eksbuild.1", nil, ds{[]string{all}, "[fargate]", true, nil}, ds{[]string{all}, "[fargate]", true, nil}, []string{all}, true, true},
		{"v3.0.0-eksbuild.1", nil, ds{[]string{all}, "[fargate]", true, "system-node-critical"}, ds{[]string{all}, "[fargate]", true, "system-node-critical"}, nil, true, true},
		{"v3.7.0-eksbuild.1", map[string]any{"agent": map[string]any{"tolerations": []any{map[string]any{"key": "a", "operator": "Exists"}}}}, ds{[]string{"a:Exists:<nil>"}, "[fargate]", true, "system-node-critical"}, ds{[]string{all}, "[fargate]", true, "system-node-critical"}, nil, true, true},
		{"v4.2.1-eksbuild.1", map[string]any{"dcgmExporter": map[string]any{"enabled": false}}, ds{[]string{all}, "[fargate]", true, "system-node-critical"}, ds{[]string{all}, "[fargate]", true, "system-node-critical"}, nil, true, true},
		{"v6.4.0-eksbuild.1", map[string]any{"dcgmExporter": map[string]any{"enabled": false}, "manager": map[string]any{"tolerations": nil}}, ds{[]string{all}, "[fargate]", true, "system-node-critical"}, ds{[]string{all}, "[fargate]", true, "system-node-critical"}, []string{all}, false, true},
	}
	for _, tt := range tests {
		name := tt.version
		if tt.config != nil {
			name += " " + fmt.Sprint(tt.config)
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a, objs := renderAddon(t, "amazon-cloudwatch-observability", tt.version, tt.config)
			if a.Assumed != "" || a.Namespace != "amazon-cloudwatch" {
				t.Fatalf("assumed %q namespace %q", a.Assumed, a.Namespace)
			}
			for ref, want := range map[string]ds{"DaemonSet/cloudwatch-agent": tt.agent, "DaemonSet/fluent-bit": tt.fluent} {
				spec := podSpec(t, objs, ref)
				if got := tolerationKeys(spec); !cmp.Equal(got, want.tolerations) {
					t.Errorf("%s tolerations %v, want %v", ref, got, want.tolerations)
				}
				if got := computeTypeNotIn(spec); got != want.notIn {
					t.Errorf("%s compute-type NotIn %q, want %q", ref, got, want.notIn)
				}
				if spec["hostNetwork"] != want.hostNetwork || spec["priorityClassName"] != want.priority {
					t.Errorf("%s hostNetwork %v priorityClassName %v", ref, spec["hostNetwork"], spec["priorityClassName"])
				}
				if ns, _ := lookupPath(objs[ref], "metadata.namespace"); ns != "amazon-cloudwatch" {
					t.Errorf("%s namespace %v", ref, ns)
				}
			}
			mgr := podSpec(t, objs, "Deployment/amazon-cloudwatch-observability-controller-manager")
			if got := tolerationKeys(mgr); !cmp.Equal(got, tt.manager) {
				t.Errorf("controller manager tolerations %v, want %v", got, tt.manager)
			}
			for ref, want := range map[string]bool{"DaemonSet/dcgm-exporter": tt.dcgm, "DaemonSet/neuron-monitor": tt.neuron} {
				o, ok := objs[ref]
				if ok != want {
					t.Errorf("%s rendered %v, want %v", ref, ok, want)
					continue
				}
				if !ok {
					continue
				}
				spec, _ := lookupPath(o, "spec.template.spec")
				aff := fmt.Sprint(spec)
				if !strings.Contains(aff, "node.kubernetes.io/instance-type") {
					t.Errorf("%s without the instance-type affinity", ref)
				}
				wantFargate := tt.agent.notIn
				if got := computeTypeNotIn(spec.(map[string]any)); got != wantFargate {
					t.Errorf("%s compute-type NotIn %q, want %q", ref, got, wantFargate)
				}
			}
		})
	}
}
