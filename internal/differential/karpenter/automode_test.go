package karpenter

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/eksdoctor/eksdoctor/catalog"
)

// EKS Auto Mode runs Karpenter with a provider of its own, outside the
// cluster: its NodePools name an eks.amazonaws.com NodeClass and its instance
// types carry eks.amazonaws.com/instance-* labels where the self-managed
// provider's carry karpenter.k8s.aws/instance-*. Its scheduling is
// Karpenter's (the NodePool API is karpenter.sh/v1), so the harness asks
// Karpenter's scheduler again with instance types labelled the Auto Mode way
// and the scenarios rewritten for Auto Mode: NodePool requirements on
// eks.amazonaws.com keys, pods that select them — and some pods that keep the
// self-managed provider's keys, which no Auto Mode NodePool knows.
//
// Karpenter's well-known labels are process-wide, and the self-managed run
// registers karpenter.k8s.aws's: the Auto Mode run is the same test in a
// process of its own (EKSDOCTOR_DIFF_AUTOMODE=1).

// autoMode is set in the process that runs the comparison the Auto Mode way.
var autoMode = os.Getenv("EKSDOCTOR_DIFF_AUTOMODE") == "1"

// TestKarpenterSchedulerAutoMode runs TestKarpenterScheduler the Auto Mode way,
// in a process of its own, with the same settings.
func TestKarpenterSchedulerAutoMode(t *testing.T) {
	if autoMode {
		// This process is the Auto Mode run: TestKarpenterScheduler is it.
		return
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestKarpenterScheduler$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "EKSDOCTOR_DIFF_AUTOMODE=1")
	out, err := cmd.CombinedOutput()
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		t.Log(line)
	}
	if err != nil {
		t.Fatalf("the Auto Mode comparison failed: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: TestKarpenterScheduler") {
		t.Fatal("the Auto Mode comparison did not run TestKarpenterScheduler")
	}
}

// autoModeKeys maps the self-managed provider's instance labels to Auto
// Mode's (karpenter.k8s.aws/instance-family → eks.amazonaws.com/instance-family).
func autoModeKeys() map[string]string {
	out := map[string]string{}
	for ours, aws := range catalog.AutoMode().InstanceLabels {
		out[aws] = ours
	}
	return out
}

// autoModeNodeClass is the node class every Auto Mode NodePool uses: Auto
// Mode's built-in default, as a running cluster shows it.
const autoModeNodeClass = `apiVersion: eks.amazonaws.com/v1
kind: NodeClass
metadata:
  name: default
spec:
  role: AmazonEKSAutoNodeRole
status:
  conditions:
  - type: Ready
    status: "True"
    reason: Ready
`

// toAutoMode rewrites a scenario for Auto Mode: its NodePools on the default
// eks.amazonaws.com NodeClass with their requirements on Auto Mode's keys; the
// pods' and DaemonSets' requirements too, except one in four of the pods',
// drawn from r, that keep the self-managed provider's key.
func toAutoMode(r *rand.Rand, sc *scenario) *scenario {
	keys := autoModeKeys()
	for _, np := range sc.nodePools {
		spec := &np.Spec.Template.Spec
		spec.NodeClassRef = &karpv1.NodeClassReference{Group: "eks.amazonaws.com", Kind: "NodeClass", Name: "default"}
		for i := range spec.Requirements {
			if k, ok := keys[spec.Requirements[i].Key]; ok {
				spec.Requirements[i].Key = k
			}
		}
	}
	rewrite := func(spec *corev1.PodSpec, keep func() bool) {
		a := spec.Affinity
		if a == nil || a.NodeAffinity == nil {
			return
		}
		exprs := func(es []corev1.NodeSelectorRequirement) {
			for i := range es {
				if k, ok := keys[es[i].Key]; ok && !keep() {
					es[i].Key = k
				}
			}
		}
		if req := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution; req != nil {
			for _, t := range req.NodeSelectorTerms {
				exprs(t.MatchExpressions)
			}
		}
		for _, p := range a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
			exprs(p.Preference.MatchExpressions)
		}
	}
	for _, ds := range sc.daemonSets {
		rewrite(&ds.Spec.Template.Spec, func() bool { return false })
	}
	for _, d := range sc.deployments {
		rewrite(&d.Spec.Template.Spec, func() bool { return r.IntN(4) == 0 })
	}
	return sc
}
