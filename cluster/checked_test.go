package cluster

import (
	"slices"
	"testing"
)

// TestCheckedFlags: of a command line, the flags checks read are kept without
// their values, whether written as one argument or two; nothing else is.
func TestCheckedFlags(t *testing.T) {
	t.Parallel()
	got := CheckedFlags([]string{"/karpenter", "--cluster-name=prod", "--log-level", "debug", "--cluster-name", "prod", "--cluster-names=x", "--cluster-name-x"})
	if want := []string{"--cluster-name", "--cluster-name"}; !slices.Equal(got, want) {
		t.Errorf("CheckedFlags = %q, want %q", got, want)
	}
	if got := CheckedFlags([]string{"--config=/etc/app.yaml"}); got != nil {
		t.Errorf("CheckedFlags of no checked flag = %q, want nil", got)
	}
}

func TestCheckedEnv(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{"CLUSTER_NAME": true, "CLUSTER_NAME_X": false, "cluster_name": false, "AWS_REGION": false} {
		if got := CheckedEnv(name); got != want {
			t.Errorf("CheckedEnv(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestCheckedAnnotations: only the annotations checks read are kept; a map
// that holds only those is returned as it is, one that holds none as nil.
func TestCheckedAnnotations(t *testing.T) {
	t.Parallel()
	mixed := map[string]string{"meta.helm.sh/release-name": "karpenter", "eksdoctor.io/ignore": "pod-unschedulable x", "prometheus.io/port": "9090"}
	got := CheckedAnnotations(mixed)
	if len(got) != 2 || got["meta.helm.sh/release-name"] != "karpenter" || got["eksdoctor.io/ignore"] == "" {
		t.Errorf("CheckedAnnotations(mixed) = %v", got)
	}
	if len(mixed) != 3 {
		t.Errorf("the map given was changed: %v", mixed)
	}
	only := map[string]string{"helm.sh/hook": "post-install"}
	if got := CheckedAnnotations(only); len(got) != 1 || got["helm.sh/hook"] != "post-install" {
		t.Errorf("CheckedAnnotations(only checked) = %v", got)
	}
	if got := CheckedAnnotations(map[string]string{"owner": "team-a"}); got != nil {
		t.Errorf("CheckedAnnotations(none checked) = %v, want nil", got)
	}
}
