package testenv

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/internal/shared"
)

// CRDs selects the Karpenter CustomResourceDefinitions installed in the API server.
type CRDs int

const (
	_ CRDs = iota
	// KarpenterV1 installs the current CRDs (karpenter.sh/v1, karpenter.k8s.aws/v1).
	KarpenterV1
	// KarpenterV1beta1 installs the v0.37.7 CRDs: stored as v1beta1, v1 served only
	// through Karpenter's conversion webhook, which does not run in the test.
	KarpenterV1beta1
	// NoKarpenter installs no CRDs, like a cluster without Karpenter.
	NoKarpenter
)

// crdNames are the files of the Karpenter CRDs, in the directory of each set.
var crdNames = []string{
	"karpenter.k8s.aws_ec2nodeclasses.yaml",
	"karpenter.sh_nodeclaims.yaml",
	"karpenter.sh_nodepools.yaml",
}

// dir is where the CRDs of the set are, relative to shared/corpus: Karpenter's
// generated CRDs (pkg/apis/crds of aws/karpenter-provider-aws), current and at
// v0.37.7 (see README.md).
func (c CRDs) dir() string {
	switch c {
	case KarpenterV1:
		return "karpenter-provider-aws/pkg/apis/crds"
	case KarpenterV1beta1:
		return "karpenter-provider-aws/@v0.37.7/pkg/apis/crds"
	}
	return ""
}

// Options configures Start.
type Options struct {
	// CRDs defaults to KarpenterV1.
	CRDs CRDs
	// Log receives build progress and start-up messages; os.Stderr when nil.
	Log io.Writer
	// StartTimeout bounds the start of each of etcd and kube-apiserver; 90s when
	// zero (a cold start on a busy two-core machine takes well over envtest's 20s).
	StartTimeout time.Duration
}

// Env is a running etcd and kube-apiserver.
type Env struct {
	// Config is an admin (system:masters) client configuration.
	Config *rest.Config
	// AssetsDir is where the binaries came from.
	AssetsDir string
	// StartTime is how long Start took, binaries build included.
	StartTime time.Duration

	env      *envtest.Environment
	stopOnce sync.Once
	stopErr  error
	// auditDir holds the API server's audit policy and log.
	auditDir string
}

// Start builds or finds the binaries, starts etcd and kube-apiserver, and installs the
// selected CRDs. The caller must call Stop.
func Start(opts Options) (*Env, error) {
	began := time.Now()
	log := opts.Log
	if log == nil {
		log = os.Stderr
	}
	if opts.CRDs == 0 {
		opts.CRDs = KarpenterV1
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 90 * time.Second
	}
	// The CRDs first: a missing corpus fails at once, before any build.
	crds, err := loadCRDs(opts.CRDs)
	if err != nil {
		return nil, err
	}
	if !binariesCached() {
		fmt.Fprintln(log, "testenv: building kube-apiserver and etcd from source with hack/testbin.sh; the first build takes several minutes, later runs reuse the cache")
	}
	dir, err := AssetsDir(log)
	if err != nil {
		return nil, err
	}
	// envtest logs through controller-runtime's logger, which complains on stderr
	// when nobody set it; its failures come back as errors anyway.
	ctrllog.SetLogger(logr.Discard())

	te := &envtest.Environment{
		BinaryAssetsDirectory:    dir,
		ControlPlaneStartTimeout: opts.StartTimeout,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	api := te.ControlPlane.GetAPIServer()
	api.Path = filepath.Join(dir, "kube-apiserver")
	args := api.Configure()
	// envtest advertises 127.0.0.1. The endpoint reconciler would keep publishing
	// that loopback address as the endpoints of the default kubernetes Service
	// (writes in the background of every test, through a lease loop); nothing in
	// the tests talks to that Service, so it is turned off.
	args.Set("endpoint-reconciler-type", "none")
	// Every request is recorded in the audit log (who, which verb, which
	// resource), so that tests can prove from the server's side what a
	// command did.
	auditDir, err := os.MkdirTemp("", "k8s_test_audit_")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(auditDir, "policy.yaml"), []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	args.Set("audit-policy-file", filepath.Join(auditDir, "policy.yaml"))
	args.Set("audit-log-path", filepath.Join(auditDir, "audit.log"))
	args.Set("audit-log-format", "json")
	te.ControlPlane.Etcd = &envtest.Etcd{Path: filepath.Join(dir, "etcd")}

	cfg, err := te.Start()
	if err != nil {
		// Start stops what it started when the control plane itself fails, but
		// not when a later step does.
		_ = te.Stop()
		_ = os.RemoveAll(auditDir)
		return nil, fmt.Errorf("start kube-apiserver and etcd from %s: %w", dir, err)
	}
	// The CRDs are installed after start rather than through Environment.CRDs,
	// which strips conversion webhooks from CRDs whose types the test scheme does
	// not know. The Karpenter v0.37 CRDs must keep theirs: serving v1 through a
	// webhook that is not running is the state the tests reproduce.
	if len(crds) > 0 {
		if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: crds}); err != nil {
			_ = te.Stop()
			_ = os.RemoveAll(auditDir)
			return nil, fmt.Errorf("install CRDs: %w", err)
		}
	}
	return &Env{Config: cfg, AssetsDir: dir, StartTime: time.Since(began), env: te, auditDir: auditDir}, nil
}

// Stop stops kube-apiserver and etcd and removes their data. It is safe to call more
// than once and from several goroutines.
func (e *Env) Stop() error {
	if e == nil {
		return nil
	}
	e.stopOnce.Do(func() {
		e.stopErr = e.env.Stop()
		if e.auditDir != "" {
			_ = os.RemoveAll(e.auditDir)
		}
	})
	return e.stopErr
}

// tempDirs are the directories envtest created for etcd's data and the API
// server's certificates; Stop removes them.
func (e *Env) tempDirs() []string {
	var out []string
	if cp := e.env.ControlPlane; cp.Etcd != nil {
		out = append(out, cp.Etcd.DataDir)
	}
	if api := e.env.ControlPlane.APIServer; api != nil {
		out = append(out, api.CertDir)
	}
	if e.auditDir != "" {
		out = append(out, e.auditDir)
	}
	return out
}

// loadCRDs decodes the CRDs of one set from shared/corpus, where the upstream
// files are kept beside the repository.
func loadCRDs(set CRDs) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	rel := set.dir()
	if rel == "" {
		return nil, nil
	}
	corpus, ok := shared.Find("corpus")
	if !ok {
		return nil, errors.New("the Karpenter CRDs are read from shared/corpus, which was not found beside the repository: set EKSDOCTOR_SHARED to the directory that holds corpus/")
	}
	dir := filepath.Join(corpus, filepath.FromSlash(rel))
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, name := range crdNames {
		file := filepath.Join(dir, name)
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("read CRD: %w", err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("decode CRD %s: %w", file, err)
		}
		out = append(out, crd)
	}
	return out, nil
}

// stopMargin is how long before the test binary's -timeout Main stops the API
// server: the testing package panics at the deadline without running deferred
// calls, which would leave etcd and kube-apiserver running.
const stopMargin = 20 * time.Second

// Main runs a test package against one API server: call it from TestMain as
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m, testenv.Options{}, func(e *testenv.Env) { env = e })) }
//
// It starts the server, hands it to ready, runs the tests and stops the server. An
// API server that cannot start fails the package with the reason (tests are not
// skipped). A run that only fuzzes starts no server (ready is not called).
// The server is also stopped on SIGINT/SIGTERM and shortly before the
// package's -timeout.
func Main(m *testing.M, opts Options, ready func(*Env)) int {
	// go test's own deadline runs from the start of the binary, which may include
	// a build of the servers, so the watchdog is armed from here too.
	began := time.Now()
	if !flag.Parsed() {
		flag.Parse()
	}
	log := opts.Log
	if log == nil {
		log = os.Stderr
	}
	if onlyFuzzing() {
		// Fuzz targets parse bytes and need no server; a fuzzing run starts a
		// worker process per processor, each of which would start one.
		return m.Run()
	}
	env, err := Start(opts)
	if err != nil {
		fmt.Fprintf(log, "testenv: the integration tests need a running kube-apiserver and etcd, and they could not be started: %v\n", err)
		return 1
	}
	fmt.Fprintf(log, "testenv: kube-apiserver and etcd ready in %s (%s)\n", env.StartTime.Round(time.Millisecond), env.AssetsDir)

	// Main's own cleanup does not run when a test panics or the binary is killed;
	// the reaper, a separate process, covers those cases.
	stopReaper, err := startReaper(env.AssetsDir, env.tempDirs(), log)
	if err != nil {
		fmt.Fprintf(log, "testenv: %v\n", err)
		_ = env.Stop()
		return 1
	}
	var once sync.Once
	var stopErr error
	shutdown := func() error {
		once.Do(func() {
			stopErr = env.Stop()
			stopReaper()
		})
		return stopErr
	}

	done := make(chan struct{})
	defer close(done)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case s := <-sigs:
			fmt.Fprintf(log, "testenv: %s: stopping kube-apiserver and etcd\n", s)
			_ = shutdown()
			os.Exit(1)
		case <-done:
		}
	}()
	if d := testTimeout(); d > 2*stopMargin {
		t := time.AfterFunc(time.Until(began.Add(d-stopMargin)), func() {
			fmt.Fprintf(log, "testenv: the package is about to reach -timeout %s: stopping kube-apiserver and etcd\n", d)
			_ = shutdown()
		})
		defer t.Stop()
	}

	ready(env)
	code := m.Run()
	if err := shutdown(); err != nil {
		fmt.Fprintf(log, "testenv: stop kube-apiserver and etcd: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// onlyFuzzing reports whether the test binary runs as a fuzzing worker, or
// fuzzes with no test selected (-run='^$' -fuzz=...): no test then needs the
// server, and the package's fuzz targets must not.
func onlyFuzzing() bool {
	flagValue := func(name string) string {
		if f := flag.Lookup(name); f != nil {
			return f.Value.String()
		}
		return ""
	}
	return flagValue("test.fuzzworker") == "true" || (flagValue("test.fuzz") != "" && flagValue("test.run") == "^$")
}

// testTimeout returns the -test.timeout of the running test binary, 0 if none.
func testTimeout() time.Duration {
	f := flag.Lookup("test.timeout")
	if f == nil {
		return 0
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return 0
	}
	d, _ := g.Get().(time.Duration)
	return d
}

// errNotStarted is returned by helpers used before Start.
var errNotStarted = errors.New("test API server is not running")

func (e *Env) check() error {
	if e == nil || e.env == nil || e.Config == nil {
		return errNotStarted
	}
	return nil
}
