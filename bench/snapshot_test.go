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
