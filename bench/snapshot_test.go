package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/source"
)

var (
	snapOnce sync.Once
	snapFile string
	snapErr  error
)

// snapshot generates the 10k-pod snapshot (a tenth of it with -short) once
// per test binary.
func snapshot(b *testing.B) string {
	snapOnce.Do(func() {
		dir, err := os.MkdirTemp("", "eksdoctor-snapshot-")
		if err != nil {
			snapErr = err
			return
		}
		o := SnapshotMedium
		if testing.Short() {
			o = SnapshotOptions{Nodes: 50, NodePools: 5, DaemonSets: 3, Pods: 1_000, Replicas: 10, PendingEvery: 50}
		}
		snapFile = filepath.Join(dir, "snapshot.json")
		_, snapErr = GenerateSnapshot(snapFile, o)
	})
	if snapErr != nil {
		b.Fatal(snapErr)
	}
	return snapFile
}

// BenchmarkSnapshotParse decodes the snapshot's JSON into generic values and
// nothing else: the floor beside which the analysis is measured.
func BenchmarkSnapshotParse(b *testing.B) {
	file := snapshot(b)
	for b.Loop() {
		data, err := os.ReadFile(file)
		if err != nil {
			b.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnapshotCheck reads the snapshot and runs every check, as
// `eksdoctor check snapshot.json` does.
func BenchmarkSnapshotCheck(b *testing.B) {
	file := snapshot(b)
	for b.Loop() {
		cs, err := source.Load([]string{file}, source.Options{})
		if err != nil {
			b.Fatal(err)
		}
		m := cs[0].Model
		if fs := lint.Run(m, sim.New(m), lint.Checks()); len(fs) == 0 {
			b.Fatal("the snapshot's defects were not found")
		}
	}
}

// TestSnapshotShapesCompose checks that shape words combine, each changing
// its own part of the snapshot, and that the generated snapshot of every
// word reads with the nodes, NodePools and Pending pods the shape says.
func TestSnapshotShapesCompose(t *testing.T) {
	small := SnapshotOptions{Nodes: 40, NodePools: 4, DaemonSets: 4, Pods: 1_000, Replicas: 10, PendingEvery: 50}
	for _, tc := range []struct {
		shape string
		want  SnapshotOptions
	}{
		{"", small},
		{"uniform", small},
		{"thin", SnapshotOptions{Nodes: 40, NodePools: 4, DaemonSets: 4, Pods: 1_000, Replicas: 10, PendingEvery: 50, PendingWorkloads: 2}},
		{"unique-pools", SnapshotOptions{Nodes: 40, NodePools: 20, DaemonSets: 4, Pods: 1_000, Replicas: 10, PendingEvery: 50, UniqueNodes: true}},
		{"thin-unique-sparse", SnapshotOptions{Nodes: 80, NodePools: 4, DaemonSets: 2, Pods: 1_000, Replicas: 10, PendingEvery: 50, PendingWorkloads: 2, UniqueNodes: true}},
	} {
		got, err := small.Shape(tc.shape)
		if err != nil {
			t.Fatalf("%q: %v", tc.shape, err)
		}
		if got != tc.want {
			t.Errorf("%q: %+v, want %+v", tc.shape, got, tc.want)
		}
	}
	for _, bad := range []string{"thin-thin", "wide", "thin-", "-unique"} {
		if _, err := small.Shape(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	for _, shape := range []string{"pools", "sparse"} {
		o, _ := small.Shape(shape)
		file := filepath.Join(t.TempDir(), shape+".json")
		if _, err := GenerateSnapshot(file, o); err != nil {
			t.Fatal(err)
		}
		m := loadOne(t, file)
		pods, pending := 0, 0
		for _, p := range m.Pods {
			pods++
			if p.Status.Phase == "Pending" {
				pending++
			}
		}
		if len(m.Nodes) != o.Nodes || len(m.NodePools) != o.NodePools || pods != o.Pods || pending == 0 {
			t.Errorf("%s: %d nodes, %d NodePools, %d pods (%d Pending); want %d, %d, %d and some Pending",
				shape, len(m.Nodes), len(m.NodePools), pods, pending, o.Nodes, o.NodePools, o.Pods)
		}
	}
}
