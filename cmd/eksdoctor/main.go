// Command eksdoctor finds EKS + Karpenter misconfigurations before apply and in
// running clusters. Installed as kubectl-eksdoctor it also works as `kubectl eksdoctor`.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"

	"github.com/eksdoctor/eksdoctor/internal/cli"
)

func main() {
	tuneGC()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Run(ctx, os.Args[0], os.Args[1:], cli.OSEnv())
	stop()
	os.Exit(code)
}

// tuneGC trades memory the run does not need for less collection: eksdoctor
// builds one model and keeps it to the end, so the default (collect whenever the
// heap doubles) spends a third of a large run marking the same objects again. A
// soft limit keeps the peak bounded. GOGC and GOMEMLIMIT still win when set.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(300 << 20)
	}
}
