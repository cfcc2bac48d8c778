package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"
	"k8s.io/klog/v2"

	"github.com/eksdoctor/eksdoctor/internal/textmatch"
)

// Exit codes.
const (
	ExitOK       = 0 // nothing at or above --fail-on
	ExitFindings = 1 // findings at or above --fail-on
	ExitUsage    = 2 // usage or input errors that prevented analysis
)

// Env is what the command line needs from its surroundings, injectable in tests.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Getwd          func() (string, error)
	// IsTerminal reports whether a writer is a terminal (colors, progress).
	IsTerminal func(io.Writer) bool
	// Version overrides the build's version (tests).
	Version string
	// Now is the clock a live read records as the moment it saw the cluster,
	// which age-based checks judge by; time.Now when nil (tests fix it).
	Now func() time.Time
	// WrapTransport, when set, wraps the HTTP transport of live reads (tests
	// observe every request eksdoctor makes).
	WrapTransport func(http.RoundTripper) http.RoundTripper

	// prog is how the program was invoked, for the commands that behave
	// differently as a kubectl plugin.
	prog string
}

// OSEnv is the real environment.
func OSEnv() Env {
	return Env{
		Stdout: os.Stdout,
		Stderr: os.Stderr,
		Getenv: os.Getenv,
		Getwd:  os.Getwd,
		IsTerminal: func(w io.Writer) bool {
			f, ok := w.(*os.File)
			return ok && term.IsTerminal(int(f.Fd()))
		},
	}
}

// usageError marks errors that are the user's invocation, not the input.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// exitError carries an exit code out of a command without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// Run runs the command line and returns the process exit code. args excludes the
// program name; prog is how the program was invoked (kubectl-eksdoctor runs as a
// kubectl plugin).
func Run(ctx context.Context, prog string, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if env.Getwd == nil {
		env.Getwd = os.Getwd
	}
	if env.IsTerminal == nil {
		env.IsTerminal = func(io.Writer) bool { return false }
	}
	env.prog = prog
	quietLibraries()
	root := newRoot(prog, &env)
	root.SetArgs(args)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintf(env.Stderr, "%s: %v\n", progName(prog), err)
	return ExitUsage
}

// quietLibraries stops the libraries eksdoctor uses (the Helm SDK's chart
// coalescing, client-go) from writing their own log lines to the terminal:
// everything eksdoctor has to say goes through findings, notes and errors.
func quietLibraries() {
	log.SetOutput(io.Discard)
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)
}

func progName(prog string) string {
	base := filepath.Base(prog)
	if strings.HasPrefix(base, "kubectl-") {
		return "kubectl " + strings.TrimPrefix(base, "kubectl-")
	}
	if base == "" || base == "." {
		return "eksdoctor"
	}
	return base
}

func newRoot(prog string, env *Env) *cobra.Command {
	display := progName(prog)
	root := &cobra.Command{
		// Cobra takes a command's name from the first word of Use; the display
		// name is what usage lines and help print, "kubectl eksdoctor" for the
		// plugin.
		Use:         "eksdoctor",
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: display},
		Short:       "Find the EKS + Karpenter misconfigurations that leave pods Pending, nodes unjoined, volumes attached and destroys hanging",
		Long: `eksdoctor reads Kubernetes manifests, eksctl configs, Terraform (terraform-aws-modules/eks,
Helm releases, kubectl manifests), Helm charts and live clusters, and explains — the way
kube-scheduler and Karpenter would — which workloads will never schedule, which nodes will
never join, which volumes stay attached and which destroys will hang, with a fix in your
own format.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// `eksdoctor --version` prints what `eksdoctor version` prints.
	root.Version = identity(env).Version
	root.SetVersionTemplate(identity(env).String() + "\n")
	root.CompletionOptions.HiddenDefaultCmd = false
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{suggestFlag(c, err)} })
	// Every command, in one place.
	root.AddCommand(
		newCheckCmd(env),
		newClusterCmd(env),
		newExplainCmd(env),
		newTeardownCmd(env),
		newSnapshotCmd(env),
		newChecksCmd(env),
		newFixCmd(env),
		newServeCmd(env),
		newReportCmd(env),
		newVersionCmd(env),
	)
	if display != "eksdoctor" {
		// Help texts quote commands to type ('eksdoctor checks'); as a
		// plugin they are typed as 'kubectl eksdoctor checks'.
		for _, c := range append([]*cobra.Command{root}, root.Commands()...) {
			c.Long = strings.ReplaceAll(c.Long, "'eksdoctor ", "'"+display+" ")
			lines := strings.Split(c.Example, "\n")
			for i, l := range lines {
				if rest, ok := strings.CutPrefix(l, "  eksdoctor "); ok {
					lines[i] = "  " + display + " " + rest
				}
			}
			c.Example = strings.Join(lines, "\n")
		}
	}
	return root
}

// suggestFlag words an unknown long flag with the flag of the command it was
// probably meant to be: "unknown flag --summry; did you mean --summary?".
// Other flag errors are returned as they are.
func suggestFlag(c *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if s := textmatch.Nearest(name, names); s != "" {
		return fmt.Errorf("unknown flag --%s; did you mean --%s?", name, s)
	}
	return err
}

// Build identity, set by the release build:
//
//	-ldflags "-X github.com/eksdoctor/eksdoctor/internal/cli.buildVersion=v1.2.3
//	          -X github.com/eksdoctor/eksdoctor/internal/cli.buildCommit=<sha>
//	          -X github.com/eksdoctor/eksdoctor/internal/cli.buildDate=<RFC 3339>"
//
// Left empty, each comes from the Go build information: the module version
// (go install …@v1.2.3), the VCS revision and time (a build in a checkout).
var buildVersion, buildCommit, buildDate string

// Identity is what `eksdoctor version` prints.
type Identity struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

func identity(env *Env) Identity {
	id := Identity{Version: buildVersion, Commit: buildCommit, Date: buildDate,
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info, ok := debug.ReadBuildInfo(); ok {
		if id.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			id.Version = info.Main.Version
		}
		modified := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if id.Commit == "" {
					id.Commit = s.Value
				}
			case "vcs.time":
				if id.Date == "" {
					id.Date = s.Value
				}
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if modified && buildCommit == "" && id.Commit != "" {
			id.Commit += "-dirty"
		}
		if info.GoVersion != "" {
			id.GoVersion = info.GoVersion
		}
	}
	if env.Version != "" {
		id.Version = env.Version
	}
	if id.Version == "" {
		id.Version = "dev"
	}
	for _, f := range []*string{&id.Commit, &id.Date} {
		if *f == "" {
			*f = "unknown"
		}
	}
	return id
}

func (id Identity) String() string {
	return fmt.Sprintf("eksdoctor %s (commit %s, built %s, %s, %s)", id.Version, id.Commit, id.Date, id.GoVersion, id.Platform)
}

func newVersionCmd(env *Env) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			id := identity(env)
			switch output {
			case "text":
				fmt.Fprintln(env.Stdout, id)
			case "json":
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(id)
			default:
				return usagef("unknown output format %q (version: text or json)", output)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	completeValues(cmd, "output", []string{"text", "json"})
	return cmd
}
