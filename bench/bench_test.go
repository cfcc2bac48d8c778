package bench

import (
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/report"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/source"
)

var (
	largeOnce sync.Once
	largeDir  string
	largeErr  error
)

// small is what -short benchmarks run on: enough to exercise every stage.
var small = Options{Workloads: 200, NodePools: 10, NodeGroups: 5, Teams: 5, Seed: 1}

// large generates the Large configuration (small with -short) once per test binary.
func large(b *testing.B) string {
	largeOnce.Do(func() {
		largeDir, largeErr = os.MkdirTemp("", "eksdoctor-bench-")
		o := Large
		if testing.Short() {
			o = small
		}
		if largeErr == nil {
			_, largeErr = Generate(largeDir, o)
		}
	})
	if largeErr != nil {
		b.Fatal(largeErr)
	}
	return largeDir
}

func files(b *testing.B, dir string) []string {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkParse reads and decodes every file, in parallel like the check: the
// floor for any tool that understands the YAML.
func BenchmarkParse(b *testing.B) {
	dir := large(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad is source.Load: parallel parse, merge, interpretation.
func BenchmarkLoad(b *testing.B) {
	dir := large(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := source.Load([]string{dir}, source.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheck is the whole of `eksdoctor check DIR`: load, simulate, every
// check, and the text report.
func BenchmarkCheck(b *testing.B) {
	dir := large(b)
	b.ReportAllocs()
	for b.Loop() {
		m := loadOne(b, dir)
		fs := lint.Run(m, sim.New(m), lint.Checks())
		if err := report.Text(io.Discard, fs, report.TextOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChecksOnly is the analysis after loading.
func BenchmarkChecksOnly(b *testing.B) {
	dir := large(b)
	m := loadOne(b, dir)
	b.ReportAllocs()
	for b.Loop() {
		lint.Run(m, sim.New(m), lint.Checks())
	}
}

// loadOne loads a directory that holds one cluster, the generated configuration.
func loadOne(tb testing.TB, dir string) *cluster.Model {
	tb.Helper()
	cs, err := source.Load([]string{dir}, source.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	if len(cs) != 1 {
		tb.Fatalf("%s holds %d clusters, want 1", dir, len(cs))
	}
	return cs[0].Model
}
