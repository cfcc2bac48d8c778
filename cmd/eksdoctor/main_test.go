package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/eksdoctor/eksdoctor/internal/cli"
)

// TestMain lets the scripts run eksdoctor as a command (testscript re-executes the
// test binary as "eksdoctor" and "kubectl-eksdoctor").
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"eksdoctor":         run("eksdoctor"),
		"kubectl-eksdoctor": run("kubectl-eksdoctor"),
	})
}

func run(prog string) func() {
	return func() {
		os.Exit(cli.Run(context.Background(), prog, os.Args[1:], cli.OSEnv()))
	}
}

// TestScripts runs the end-to-end scripts in testdata/script: the command line as
// a user drives it, exit codes included.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			repo, err := filepath.Abs(filepath.Join("..", ".."))
			if err != nil {
				return err
			}
			env.Setenv("REPO", repo)
			// The bundled examples, as the README runs them, under $WORK/examples.
			return os.CopyFS(filepath.Join(env.WorkDir, "examples"), os.DirFS(filepath.Join("..", "..", "examples")))
		},
	})
}
