package sim

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/bench"
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
