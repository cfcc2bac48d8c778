package live

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"
)

// Options says which cluster to read and how gently.
type Options struct {
	// Kubeconfig is the kubeconfig file; "" uses KUBECONFIG, then ~/.kube/config,
	// then the in-cluster service account, like kubectl.
	Kubeconfig string
	// Context is the kubeconfig context; "" uses the current context.
	Context string
	// Namespace limits the namespaced resources read (workloads, pods, events,
	// persistent volume claims) to one namespace; "" reads all namespaces.
	// Cluster-scoped resources and kube-system/aws-auth are always read.
	Namespace string

	// PageSize is the number of objects per list request (DefaultPageSize when 0).
	PageSize int64
	// Timeout bounds each request (DefaultTimeout when 0).
	Timeout time.Duration
	// QPS and Burst are the client-side rate limit (DefaultQPS, DefaultBurst when 0).
	QPS   float32
	Burst int

	// Budget bounds what the model keeps of the read (zero fields: the
	// default, DefaultBudget).
	Budget Budget

	// Progress, when set, receives a running count of the objects read; the CLI
	// passes the terminal so long reads show they are moving.
	Progress io.Writer

	// Clock returns the time recorded as the model's Now; time.Now when nil.
	Clock func() time.Time
	// WrapTransport, when set, wraps the HTTP transport of every request (to add
	// headers, or to observe requests in tests).
	WrapTransport func(http.RoundTripper) http.RoundTripper
}

// Defaults for Options.
const (
	DefaultPageSize = 500
	DefaultTimeout  = 30 * time.Second
	DefaultQPS      = 20
	DefaultBurst    = 40
)

// attempts is how many times a request is tried when it fails transiently;
// firstBackoff doubles between attempts.
const (
	attempts     = 4
	firstBackoff = 250 * time.Millisecond
	maxBackoff   = 10 * time.Second
)

func (o Options) withDefaults() Options {
	if o.PageSize <= 0 {
		o.PageSize = DefaultPageSize
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.QPS <= 0 {
		o.QPS = DefaultQPS
	}
	if o.Burst <= 0 {
		o.Burst = DefaultBurst
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return o
}

// inClusterContext names the context when the configuration comes from the pod's
// service account rather than a kubeconfig.
const inClusterContext = "in-cluster"

// noKubeconfig says, in place of client-go's advice to set KUBERNETES_MASTER,
// where a configuration was looked for (kubectl's order) and why each place
// gave none.
func noKubeconfig(rules *clientcmd.ClientConfigLoadingRules) error {
	state := func(file string) string {
		if _, err := os.Stat(file); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return file + ": no such file"
			}
			return err.Error()
		}
		return file + ": no cluster in it"
	}
	var tried []string
	if env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
		var files []string
		for _, f := range rules.Precedence {
			files = append(files, state(f))
		}
		tried = append(tried, "the KUBECONFIG variable ("+strings.Join(files, "; ")+"; ~/.kube/config is not read when KUBECONFIG is set)")
	} else {
		tried = append(tried, "the KUBECONFIG variable (not set)")
		for _, f := range rules.Precedence {
			tried = append(tried, state(f))
		}
	}
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	switch {
	case host == "" || port == "":
		tried = append(tried, "the in-cluster service account (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT not set: not running in a pod)")
	default:
		tried = append(tried, "the in-cluster service account (no token or CA at "+filepath.Dir(inClusterToken)+")")
	}
	return fmt.Errorf("no kubeconfig found; tried %s. Give --kubeconfig FILE, set KUBECONFIG, or run 'aws eks update-kubeconfig --name CLUSTER'", strings.Join(tried, ", "))
}

// inClusterToken is where a pod's service account token is mounted.
const inClusterToken = "/var/run/secrets/kubernetes.io/serviceaccount/token"

// Configured reports whether a client configuration can be resolved for the
// options (a kubeconfig, or the in-cluster service account), without asking
// the cluster anything.
func Configured(o Options) error {
	_, _, err := restConfig(o.withDefaults())
	return err
}

// restConfig resolves the client configuration with kubectl's loading rules and
// returns it with the name of the context it came from.
func restConfig(o Options) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: o.Context}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	cfg, err := cc.ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		return nil, "", noKubeconfig(rules)
	}
	if err != nil {
		return nil, "", fmt.Errorf("load kubeconfig: %w", err)
	}
	name := o.Context
	if name == "" {
		raw, err := cc.RawConfig()
		if err != nil {
			return nil, "", fmt.Errorf("load kubeconfig: %w", err)
		}
		name = raw.CurrentContext
	}
	if name == "" {
		name = inClusterContext
	}

	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	// One limiter for every client made from this configuration (discovery, the
	// dynamic client), so QPS bounds the read as a whole rather than per client.
	cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(o.QPS, o.Burst)
	cfg.UserAgent = "eksdoctor"
	// API warnings (deprecated versions) would be printed by client-go straight to
	// stderr, in the middle of the report; what matters is in the objects.
	cfg.WarningHandler = rest.NoWarnings{}
	if o.WrapTransport != nil {
		cfg.Wrap(o.WrapTransport)
	}
	// Outermost, so that it sees every answer, including those of a wrapper.
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return retryAfterGuard{rt} })
	return cfg, name, nil
}
