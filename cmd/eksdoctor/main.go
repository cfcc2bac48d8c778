// Command eksdoctor finds EKS + Karpenter misconfigurations before apply and in
// running clusters. Installed as kubectl-eksdoctor it also works as `kubectl eksdoctor`.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/eksdoctor/eksdoctor/internal/cli"
)

func main() {
	stopPacing := cli.TuneMemory(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Run(ctx, os.Args[0], os.Args[1:], cli.OSEnv())
	stop()
	stopPacing()
	os.Exit(code)
}
