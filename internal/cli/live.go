package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/inputfs"
	"github.com/eksdoctor/eksdoctor/source"
	"github.com/eksdoctor/eksdoctor/source/live"
)

// liveOptions are the flags of every command that reads a running cluster. They
// are named and behave as kubectl's, so that `kubectl eksdoctor cluster --context
// prod -n apps` means what a kubectl user expects (kubectl hands a plugin its
// arguments unchanged).
type liveOptions struct {
	kubeconfig     string
	context        string
	namespace      string
	requestTimeout string
	// budget is the command's budget flags: its own, or those of the files'
	// flags when the command reads both (explain, teardown).
	budget *budgetFlags
}

// budgetFlags raise the analysis budget (live.Budget) of a cluster read or a
// snapshot.
type budgetFlags live.Budget

func (b *budgetFlags) addFlags(fs *pflag.FlagSet) {
	fs.IntVar(&b.Objects, "max-objects", live.DefaultBudget.Objects, "the most objects of one cluster (a read or a snapshot) analysed; the rest is left out and said")
	fs.IntVar(&b.Pending, "max-pending", live.DefaultBudget.Pending, "the most unscheduled Pending pods of one cluster analysed; the rest are left out and said")
	fs.IntVar(&b.Workloads, "max-pending-workloads", live.DefaultBudget.Workloads, "the most workloads of one cluster whose unscheduled Pending pods are analysed")
	b.Bytes = live.DefaultBudget.Bytes
	fs.Var((*byteSize)(&b.Bytes), "max-snapshot-size", "the most bytes of a snapshot read, compressed or not, and of what a compressed one expands to (e.g. 4GiB)")
}

// byteSize is a flag holding a number of bytes, written as a number with an
// optional unit (KiB, MiB, GiB, TiB, or KB, MB, GB, TB; K, M, G and T and their
// "i" forms too).
type byteSize int64

func (b *byteSize) String() string { return inputfs.Size(int64(*b)) }

func (b *byteSize) Type() string { return "size" }

func (b *byteSize) Set(s string) error {
	n, err := parseByteSize(s)
	if err != nil {
		return err
	}
	*b = byteSize(n)
	return nil
}

var byteUnits = []struct {
	suffix string
	n      int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"B", 1},
}

func parseByteSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	unit := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, unit = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.n
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<50)/unit {
		return 0, fmt.Errorf("%q: want a positive size such as 4GiB, 800MiB or a number of bytes", s)
	}
	return n * unit, nil
}

func (o *liveOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: KUBECONFIG, then ~/.kube/config, then the in-cluster service account)")
	fs.StringVar(&o.context, "context", "", "kubeconfig context to read (default: the current context)")
	fs.StringVarP(&o.namespace, "namespace", "n", "", "read workloads, pods and events of this namespace only (default: every namespace)")
	fs.StringVar(&o.requestTimeout, "request-timeout", "", "deadline of each request to the API server, e.g. 30s, 1m, or a number of seconds (default 30s)")
	if o.budget == nil {
		o.budget = &budgetFlags{}
		o.budget.addFlags(fs)
	}
}

// given reports whether any flag that points at a cluster was set.
func (o *liveOptions) given() bool {
	return o.kubeconfig != "" || o.context != "" || o.namespace != ""
}

// parseRequestTimeout reads kubectl's --request-timeout forms: a duration ("30s",
// "1m") or a whole number of seconds. Zero means the default.
func parseRequestTimeout(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if n, err := strconv.Atoi(s); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, usagef("--request-timeout %q: want a duration such as 30s or 2m, or a number of seconds", s)
	}
	return d, nil
}

// read reads the cluster as the live source stores it (objects, not yet
// interpreted): what `snapshot` writes and what Build turns into a model.
func (o *liveOptions) read(ctx context.Context, env *Env) (*cluster.Model, error) {
	opts, err := o.liveOptions(env)
	if err != nil {
		return nil, err
	}
	// The running count is for people watching a terminal; redirected output
	// (CI logs, files) stays clean.
	if env.IsTerminal(env.Stderr) {
		opts.Progress = env.Stderr
	}
	m, err := live.Load(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("read the cluster: %w", err)
	}
	return m, nil
}

// liveOptions are the live source's options for the flags.
func (o *liveOptions) liveOptions(env *Env) (live.Options, error) {
	timeout, err := parseRequestTimeout(o.requestTimeout)
	if err != nil {
		return live.Options{}, err
	}
	return live.Options{
		Kubeconfig:    o.kubeconfig,
		Context:       o.context,
		Namespace:     o.namespace,
		Timeout:       timeout,
		Budget:        live.Budget(*o.budget),
		Clock:         env.Now,
		WrapTransport: env.WrapTransport,
	}, nil
}

// load reads the cluster and builds the model the checks and simulations read.
func (o *liveOptions) load(ctx context.Context, env *Env) (*cluster.Model, error) {
	m, err := o.read(ctx, env)
	if err != nil {
		return nil, err
	}
	return source.Build(m), nil
}

// liveMode decides whether explain and teardown read the running cluster rather
// than files. The rule, stated in their help:
//
//   - --live reads the cluster, and then no PATH (or --chart) may be given;
//   - without PATH or --chart, a cluster flag (--context, --kubeconfig, -n) reads
//     the cluster, as it does for kubectl;
//   - without PATH or --chart, running as the kubectl plugin reads the cluster;
//   - otherwise files are read (PATH, default the working directory).
func liveMode(prog string, liveFlag bool, lo *liveOptions, paths, charts []string) (bool, error) {
	files := len(paths) > 0 || len(charts) > 0
	switch {
	case liveFlag && files:
		return false, usagef("--live reads the running cluster; drop the PATH arguments and --chart, or drop --live")
	case liveFlag:
		return true, nil
	case files:
		if lo.given() {
			return false, usagef("--context, --kubeconfig and --namespace select a running cluster, which is read without PATH arguments; drop either")
		}
		return false, nil
	}
	return lo.given() || isPlugin(prog), nil
}

// loadClusters reads the running cluster, or the files at paths (default the working
// directory), as liveMode decided.
func loadClusters(ctx context.Context, env *Env, useLive bool, lo *liveOptions, paths []string, o *checkOptions, assign []source.Assignment) ([]*source.Cluster, error) {
	if useLive {
		m, err := lo.load(ctx, env)
		if err != nil {
			return nil, err
		}
		return []*source.Cluster{{Name: m.Live.Context, Model: m}}, nil
	}
	if len(paths) == 0 && len(o.charts) == 0 {
		paths = []string{"."}
	}
	roomFor(env, paths)
	opts := o.sourceOptions()
	opts.Assign = assign
	cs, err := source.Load(paths, opts)
	if err != nil {
		return nil, loadError(err)
	}
	return cs, nil
}

// liveHelp is the rule of liveMode for the commands' help.
const liveHelp = `Live mode: --live reads the running cluster (kubeconfig current context, or --context)
instead of files; it is also chosen when no PATH is given and --context, --kubeconfig or
-n/--namespace is, and when the command runs as 'kubectl eksdoctor' without PATH.`

// isPlugin reports whether the program runs as a kubectl plugin.
func isPlugin(prog string) bool { return strings.HasPrefix(progName(prog), "kubectl ") }
