package sim

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/eksdoctor/eksdoctor/bench"
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source"
)

// PlacePodFitting keeps every source PlacePod finds fitting, in PlacePod's
// order, and Result when it is Fits; it passes over the nodes and NodePools
// that set a selected label to another value or are another NodePool named,
// and keeps those without the label.
func TestPlacePodFittingKeepsWhatFits(t *testing.T) {
	o, err := bench.SnapshotOptions{Nodes: 60, NodePools: 6, DaemonSets: 2, Pods: 3_000, Replicas: 10, PendingEvery: 20}.Shape("unique-pools")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "snapshot.json")
	if _, err := bench.GenerateSnapshot(file, o); err != nil {
		t.Fatal(err)
	}
	cs, err := source.Load([]string{file}, source.Options{})
	if err != nil || len(cs) != 1 {
		t.Fatalf("%v (%d clusters)", err, len(cs))
	}
	m := cs[0].Model
	// One node without the teams' label: kept by every selector of it.
	unlabelled := *m.Nodes[0]
	unlabelled.Name = "ip-10-9-9-9.ec2.internal"
	unlabelled.Labels = map[string]string{"kubernetes.io/hostname": unlabelled.Name}
	m.Nodes = append(m.Nodes, &unlabelled)
	s := New(m)
	fits, refuses, skipped := 0, 0, 0
	for _, p := range m.Pods {
		if p.Status.Phase != "Pending" {
			continue
		}
		whole, fitting := s.PlacePod(p), s.PlacePodFitting(p)
		if diff := cmp.Diff(names(whole.Fitting()), names(fitting.Fitting())); diff != "" {
			t.Fatalf("%s: fitting sources (-PlacePod +PlacePodFitting):\n%s", p.Object.Name, diff)
		}
		switch whole.Result() {
		case Fits:
			fits++
			if fitting.Result() != Fits {
				t.Fatalf("%s: PlacePodFitting says %v where PlacePod fits", p.Object.Name, fitting.Result())
			}
		default:
			refuses++
		}
		kept := map[*Source]bool{}
		for _, v := range fitting.Verdicts {
			kept[v.Source] = true
		}
		sel := selectedLabels(p.Spec.NodeSelector)
		for _, v := range whole.Verdicts {
			src := v.Source
			conflict := src.Node != nil && labelsConflict(src.Node.Labels, sel) || src.NodePool != nil && labelConflict(src.NodePool, sel)
			if kept[src] == conflict {
				t.Fatalf("%s: %s kept %v, its labels conflict %v", p.Object.Name, src.Name, kept[src], conflict)
			}
			if conflict {
				skipped++
			}
		}
		if !kept[s.sourceOf(&unlabelled, Source{})] {
			t.Fatalf("%s: the node without the label was passed over", p.Object.Name)
		}
	}
	if fits == 0 || refuses == 0 || skipped == 0 {
		t.Errorf("%d Pending pods fit, %d do not, %d sources passed over: want some of each", fits, refuses, skipped)
	}
}

func names(vs []Verdict) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Source.Name)
	}
	return out
}

// NodePools share the instance types they admit when they differ only in
// what instance types do not read (name, custom labels, limits), and not
// when a requirement of an instance key differs, however it is written
// (bounds of Gt included).
func TestNodePoolsShareTheTypesTheyAdmit(t *testing.T) {
	cpu := func(op corev1.NodeSelectorOperator, v string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: "karpenter.k8s.aws/instance-cpu", Operator: op, Values: []string{v}}
	}
	a := nodePool("a", map[string]string{"team": "a"}, nil, cpu(corev1.NodeSelectorOpGt, "4"))
	b := nodePool("b", map[string]string{"team": "b"}, nil, cpu(corev1.NodeSelectorOpGt, "4"))
	b.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")}
	c := nodePool("c", map[string]string{"team": "a"}, nil, cpu(corev1.NodeSelectorOpGt, "16"))
	d := nodePool("d", map[string]string{"team": "a", "node.kubernetes.io/instance-type": "m5.8xlarge"}, nil, cpu(corev1.NodeSelectorOpGt, "4"))
	s := New(&cluster.Model{NodePools: []*cluster.NodePool{a, b, c, d}, NodeClasses: []*cluster.NodeClass{defaultClass}})
	ta, tb, tc, td := s.pool(a).types, s.pool(b).types, s.pool(c).types, s.pool(d).types
	if len(ta) == 0 || &ta[0] != &tb[0] {
		t.Errorf("a and b differ only in name, label and limits: %d and %d types, shared %v", len(ta), len(tb), len(ta) > 0 && len(tb) > 0 && &ta[0] == &tb[0])
	}
	if len(tc) == 0 || len(tc) >= len(ta) {
		t.Errorf("more than 16 vCPUs admits %d types, more than 4 %d: want fewer, and some", len(tc), len(ta))
	}
	if len(td) != 1 || td[0].it.Name != "m5.8xlarge" {
		t.Errorf("a NodePool labelled with an instance type admits %d types, want m5.8xlarge alone", len(td))
	}
	for _, st := range tc {
		if st.vcpus <= 16 {
			t.Errorf("%s (%d vCPUs) admitted for more than 16", st.it.Name, st.vcpus)
		}
	}
	// b's limit of 8 CPUs leaves out the types larger than that; a has none.
	over := 0
	for i, st := range tb {
		if s.pool(b).overLimit[i] != (st.vcpus > 8) {
			t.Errorf("%s (%d vCPUs) over b's 8-CPU limit: %v", st.it.Name, st.vcpus, s.pool(b).overLimit[i])
		}
		if s.pool(a).overLimit[i] {
			over++
		}
	}
	if over != 0 {
		t.Errorf("a has no limit, yet %d types are over it", over)
	}
}
