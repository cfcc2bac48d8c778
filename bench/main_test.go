package bench

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestMain collects garbage the way the eksdoctor command does (see
// cmd/eksdoctor), so that benchmarks measure what users run.
func TestMain(m *testing.M) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(400 << 20)
	}
	os.Exit(m.Run())
}
