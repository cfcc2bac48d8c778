package catalog

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAddonAccepts(t *testing.T) {
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
	want := []string{"aws-ebs-csi-driver", "aws-efs-csi-driver", "aws-mountpoint-s3-csi-driver", "coredns", "eks-pod-identity-agent", "kube-proxy", "metrics-server", "snapshot-controller", "vpc-cni"}
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
	}
	for _, tt := range tests {
		got, ok := AddonUpgrade(tt.addon, tt.version, tt.keys...)
		if got != tt.want || ok != tt.ok {
			t.Errorf("AddonUpgrade(%s, %s, %v) = %q, %v; want %q, %v", tt.addon, tt.version, tt.keys, got, ok, tt.want, tt.ok)
		}
	}
}
