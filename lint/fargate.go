package lint

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/write"
)

// The F2 checks. EKS runs a pod on Fargate only when a profile selects it at
// creation: its namespace matches a selector's and it carries every label of that
// selector (* and ? wildcards). Such pods are mutated to use fargate-scheduler and
// get a Fargate node each; every other pod sees Fargate nodes as tainted
// eks.amazonaws.com/compute-type=fargate:NoSchedule.

// fargateTaint is the taint of every Fargate node.
var fargateTaint = corev1.Taint{Key: "eks.amazonaws.com/compute-type", Value: "fargate", Effect: corev1.TaintEffectNoSchedule}

// maxFargateSelectors is the EKS limit on selectors per profile.
const maxFargateSelectors = write.MaxFargateSelectors

func sortedProfiles(m *cluster.Model) []*cluster.FargateProfile {
	out := append([]*cluster.FargateProfile(nil), m.FargateProfiles...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func profileRef(fp *cluster.FargateProfile) cluster.ObjectRef {
	return cluster.ObjectRef{Kind: "FargateProfile", Name: fp.Name}
}

func labelSetText(m map[string]string) string {
	if len(m) == 0 {
		return "no labels"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return "labels {" + strings.Join(parts, ", ") + "}"
}

func selectorText(s cluster.FargateSelector) string {
	if len(s.Labels) == 0 {
		return fmt.Sprintf("{namespace: %s}", s.Namespace)
	}
	return fmt.Sprintf("{namespace: %s, %s}", s.Namespace, labelSetText(s.Labels))
}

// fargateNodes estimates how many Fargate nodes exist: one per pod a profile
// selects.
func fargateNodes(p *Pass) int {
	n := 0
	for _, w := range p.Model.Workloads {
		if w.IsDaemonSet() || w.Replicas <= 0 {
			continue
		}
		if sim.ProfileFor(p.Model.FargateProfiles, w.Template.Namespace, templateLabels(w), w.Template.Annotations) != nil {
			n += int(w.Replicas)
		}
	}
	return n
}

func untoleratedMessage(n int) string {
	if n == 0 {
		return "kube-scheduler reports `no nodes available to schedule pods` (and `0/N nodes are available: N node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}` once other pods run on Fargate)"
	}
	return fmt.Sprintf("kube-scheduler reports `0/%d nodes are available: %d node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}` (one Fargate node per pod a profile selects)", n, n)
}

// fargateTaintEvent is what the default scheduler says of Fargate nodes when it
// refuses a pod no profile took.
const fargateTaintEvent = "untolerated taint {eks.amazonaws.com/compute-type: fargate}"

// newProfileEdit declares a Fargate profile next to the existing ones.
func newProfileEdit(m *cluster.Model, name string, sel cluster.FargateSelector) (Edit, bool) {
	for _, fp := range m.FargateProfiles {
		if fp.Name == name {
			return Edit{}, false
		}
	}
	fps := sortedProfiles(m)
	if len(fps) == 0 {
		return Edit{}, false
	}
	return write.NewFargateProfile(m, fps[0], name, sel, false)
}
