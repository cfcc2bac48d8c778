package bench

import (
	"os"
	"testing"

	"github.com/eksdoctor/eksdoctor/internal/cli"
)

// TestMain uses memory the way the eksdoctor command does (cli.TuneMemory), so
// that benchmarks measure what users run.
func TestMain(m *testing.M) {
	stop := cli.TuneMemory(os.Getenv)
	code := m.Run()
	stop()
	os.Exit(code)
}
