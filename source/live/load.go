package live

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// resource is one list the live source makes.
type resource struct {
	group    string
	resource string
	// versions in order of preference. Karpenter's v1 and v1beta1 are two views
	// of the same stored objects, so only the first one that can be read is.
	versions []string
	// selector is a field selector; it also names the list in Skipped.
	selector string
	// needs names a resource that must be served for this list to be worth
	// making: NodeClaim events only exist with NodeClaims.
	needs *schema.GroupResource
	// providerOf marks a cloud provider's resource of Karpenter (its node
	// class): when the resource it names (Karpenter's NodePools) is served and
	// this one is not, the cluster runs Karpenter with another provider (or
	// EKS Auto Mode), so there is simply none to read, not a skipped read.
	providerOf *schema.GroupResource
	// optional marks a resource only some clusters serve (EKS Auto Mode's
	// node classes): not being served is not a gap in what was read.
	optional bool
}

func (r resource) groupResource() schema.GroupResource {
	return schema.GroupResource{Group: r.group, Resource: r.resource}
}

// label is how Skipped names the list: kubectl's resource.group, plus the selector.
func (r resource) label() string {
	s := r.groupResource().String()
	if r.selector != "" {
		s += " (" + r.selector + ")"
	}
	return s
}

// resources is everything Load lists, and exactly what deploy/rbac.yaml grants.
var resources = []resource{
	{group: "", resource: "pods", versions: []string{"v1"}},
	{group: "", resource: "nodes", versions: []string{"v1"}},
	{group: "", resource: "events", versions: []string{"v1"}, selector: "reason=FailedScheduling"},
	{group: "", resource: "events", versions: []string{"v1"}, selector: "involvedObject.kind=NodeClaim", needs: &schema.GroupResource{Group: "karpenter.sh", Resource: "nodeclaims"}},
	// Multi-Attach errors name the pods waiting for a volume still attached
	// elsewhere.
	{group: "", resource: "events", versions: []string{"v1"}, selector: "reason=FailedAttachVolume"},
	// Karpenter names the NodeClaim it expects a Pending pod to run on.
	{group: "", resource: "events", versions: []string{"v1"}, selector: "reason=Nominated", needs: &schema.GroupResource{Group: "karpenter.sh", Resource: "nodeclaims"}},
	{group: "", resource: "persistentvolumes", versions: []string{"v1"}},
	{group: "", resource: "persistentvolumeclaims", versions: []string{"v1"}},
	{group: "apps", resource: "deployments", versions: []string{"v1"}},
	{group: "apps", resource: "statefulsets", versions: []string{"v1"}},
	{group: "apps", resource: "daemonsets", versions: []string{"v1"}},
	{group: "apps", resource: "replicasets", versions: []string{"v1"}},
	{group: "batch", resource: "jobs", versions: []string{"v1"}},
	{group: "batch", resource: "cronjobs", versions: []string{"v1"}},
	{group: "storage.k8s.io", resource: "volumeattachments", versions: []string{"v1"}},
	{group: "storage.k8s.io", resource: "csidrivers", versions: []string{"v1"}},
	{group: "storage.k8s.io", resource: "storageclasses", versions: []string{"v1"}},
	{group: "scheduling.k8s.io", resource: "priorityclasses", versions: []string{"v1"}},
	// The budgets that keep Karpenter from evicting pods, with their status.
	{group: "policy", resource: "poddisruptionbudgets", versions: []string{"v1"}},
	{group: "karpenter.sh", resource: "nodepools", versions: []string{"v1", "v1beta1"}},
	{group: "karpenter.sh", resource: "nodeclaims", versions: []string{"v1", "v1beta1"}},
	{group: "karpenter.k8s.aws", resource: "ec2nodeclasses", versions: []string{"v1", "v1beta1"}, providerOf: &schema.GroupResource{Group: "karpenter.sh", Resource: "nodepools"}},
	// EKS Auto Mode's node classes.
	{group: "eks.amazonaws.com", resource: "nodeclasses", versions: []string{"v1"}, optional: true},
}

// listsAtOnce is how many lists run at once; the rate limiter still bounds requests.
const listsAtOnce = 4

// Load reads the cluster the options point at into a model. It fails only when the
// cluster cannot be reached or the credentials are rejected; resources it may not
// read, or that the server does not serve, are listed in Model.Live.Skipped.
func Load(ctx context.Context, opts Options) (*cluster.Model, error) {
	opts = opts.withDefaults()
	cfg, name, err := restConfig(opts)
	if err != nil {
		return nil, err
	}
	s, err := read(ctx, cfg, name, opts)
	if err != nil {
		return nil, err
	}
	return s.model(), nil
}

// reader holds the clients and results of one read.
type reader struct {
	opts     Options
	dyn      dynamic.Interface
	progress *progress

	raw rest.Interface

	mu      sync.Mutex
	objects []map[string]any
	// pods are the typed pods of objects, index for index (nil for the
	// objects that are not pods).
	pods    []*cluster.Pod
	skipped []cluster.Skipped
	// lists are the lists read (see Follower): where their objects are in
	// objects, and the resourceVersion they were read at.
	lists map[listKey]listed
}

func (r *reader) skip(resource, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.skipped = append(r.skipped, cluster.Skipped{Resource: resource, Reason: reason})
}

// add adds the objects of one list, of res at gvr in ns.
func (r *reader) add(res resource, gvr schema.GroupVersionResource, ns string, p decodedPage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lists == nil {
		r.lists = map[listKey]listed{}
	}
	r.lists[res.key()] = listed{gvr: gvr, from: len(r.objects), n: len(p.objects), rv: p.rv, namespace: ns}
	r.addObjects(p)
}

// addObjects adds objects read by other means than a list.
func (r *reader) addObjects(p decodedPage) {
	r.objects = append(r.objects, p.objects...)
	r.pods = append(r.pods, p.pods...)
}

func read(ctx context.Context, cfg *rest.Config, contextName string, opts Options) (*state, error) {
	r := &reader{opts: opts, progress: newProgress(opts.Progress)}
	var err error
	if r.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("connect to %s: %w", cfg.Host, err)
	}
	if r.raw, err = rawClient(cfg); err != nil {
		return nil, fmt.Errorf("connect to %s: %w", cfg.Host, err)
	}
	served, err := r.discover(ctx, cfg)
	if err != nil {
		return nil, err
	}

	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(listsAtOnce)
	g.Go(func() error { return r.getAwsAuth(gctx) })
	for _, res := range resources {
		if res.needs != nil && !served.has(*res.needs) {
			continue
		}
		versions, namespaced, why := served.versions(res)
		if len(versions) == 0 {
			if (res.optional || res.providerOf != nil && served.has(*res.providerOf)) && !served.failedFor(res) {
				continue
			}
			r.skip(res.label(), why)
			continue
		}
		g.Go(func() error { return r.list(gctx, res, versions, namespaced) })
	}
	err = g.Wait()
	r.progress.done()
	if err != nil {
		return nil, err
	}
	return &state{
		Context:   contextName,
		Server:    cfg.Host,
		Namespace: opts.Namespace,
		Now:       opts.Clock().UTC().Format(time.RFC3339),
		Skipped:   r.skipped,
		Objects:   r.objects,
		pods:      r.pods,
		lists:     r.lists,
		budget:    opts.Budget,
	}, nil
}

// served is what discovery says the API server serves.
type served struct {
	// resources maps group/version/resource to whether it is namespaced.
	resources map[schema.GroupVersionResource]bool
	// failed maps the group versions whose discovery failed to why.
	failed map[schema.GroupVersion]error
}

// failedFor reports whether the discovery of a group version of res failed.
func (s served) failedFor(res resource) bool {
	for _, v := range res.versions {
		if _, ok := s.failed[schema.GroupVersion{Group: res.group, Version: v}]; ok {
			return true
		}
	}
	return false
}

func (s served) has(gr schema.GroupResource) bool {
	for gvr := range s.resources {
		if gvr.GroupResource() == gr {
			return true
		}
	}
	return false
}

// versions returns the versions of res the server serves, in res's order, and
// whether it is namespaced; when there are none it says why.
func (s served) versions(res resource) ([]string, bool, string) {
	var out []string
	namespaced := false
	var failed []string
	for _, v := range res.versions {
		gvr := schema.GroupVersionResource{Group: res.group, Version: v, Resource: res.resource}
		if ns, ok := s.resources[gvr]; ok {
			out = append(out, v)
			namespaced = ns
		} else if err, ok := s.failed[gvr.GroupVersion()]; ok {
			failed = append(failed, fmt.Sprintf("discovery of %s failed: %v", gvr.GroupVersion(), err))
		}
	}
	if len(out) > 0 {
		return out, namespaced, ""
	}
	if len(failed) > 0 {
		return nil, false, strings.Join(failed, "; ")
	}
	why := "not served by the API server"
	switch res.group {
	case "karpenter.sh", "karpenter.k8s.aws":
		why += " (the Karpenter CRDs are not installed)"
	}
	return nil, false, why
}

// discover asks the API server which resources it serves. Groups whose discovery
// fails (typically an aggregated API whose backend is down) are remembered, so
// that only the lists that needed them are skipped.
func (r *reader) discover(ctx context.Context, cfg *rest.Config) (served, error) {
	dcfg := rest.CopyConfig(cfg)
	dcfg.Timeout = r.opts.Timeout
	dc, err := discovery.NewDiscoveryClientForConfig(dcfg)
	if err != nil {
		return served{}, fmt.Errorf("connect to %s: %w", cfg.Host, err)
	}
	s := served{resources: map[schema.GroupVersionResource]bool{}, failed: map[schema.GroupVersion]error{}}
	var lists []*metav1.APIResourceList
	err = retry(ctx, r.opts.Timeout, func(context.Context) error {
		var err error
		_, lists, err = dc.ServerGroupsAndResources()
		if failed, ok := discovery.GroupDiscoveryFailedErrorGroups(err); ok {
			s.failed = failed
			return nil
		}
		return err
	})
	if err != nil {
		return served{}, fmt.Errorf("discover the API of %s: %w", cfg.Host, err)
	}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, res := range l.APIResources {
			if strings.Contains(res.Name, "/") || !canList(res.Verbs) {
				continue // subresources, and resources that cannot be listed
			}
			s.resources[gv.WithResource(res.Name)] = res.Namespaced
		}
	}
	return s, nil
}

func canList(verbs metav1.Verbs) bool {
	for _, v := range verbs {
		if v == "list" {
			return true
		}
	}
	return false
}

// list reads every object of res, page by page, at the first of versions the
// server can serve. A Forbidden or not-served resource is skipped; so is one the
// server keeps failing on (e.g. a conversion webhook that is down), after trying
// the next version.
func (r *reader) list(ctx context.Context, res resource, versions []string, namespaced bool) error {
	for i, v := range versions {
		gvr := schema.GroupVersionResource{Group: res.group, Version: v, Resource: res.resource}
		ns := ""
		if namespaced {
			ns = r.opts.Namespace
		}
		items, err := r.listPages(ctx, gvr, ns, res.selector)
		if err == nil {
			r.add(res, gvr, ns, items)
			return nil
		}
		if fatal(ctx, err) {
			return fmt.Errorf("list %s: %w", res.label(), err)
		}
		reason := describe(err)
		if apierrors.IsForbidden(err) || i == len(versions)-1 {
			r.skip(res.label(), reason)
			return nil
		}
		// Another version may still be readable: record why this one was not.
		r.skip(fmt.Sprintf("%s/%s", res.label(), v), fmt.Sprintf("%s; read %s/%s instead", reason, res.group, versions[i+1]))
	}
	return nil
}

// getAwsAuth fetches kube-system/aws-auth by name: reading it through a list of
// ConfigMaps would need permission to read every ConfigMap. A cluster without it
// (access entries only) is not an error.
func (r *reader) getAwsAuth(ctx context.Context) error {
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	var cm *unstructured.Unstructured
	err := retry(ctx, r.opts.Timeout, func(ctx context.Context) error {
		var err error
		cm, err = r.dyn.Resource(gvr).Namespace(awsAuthNamespace).Get(ctx, awsAuthName, metav1.GetOptions{})
		return err
	})
	switch {
	case err == nil:
		r.mu.Lock()
		r.addObjects(decodedPage{objects: []map[string]any{cm.Object}, pods: []*cluster.Pod{nil}})
		r.mu.Unlock()
		r.progress.add(1)
		return nil
	case apierrors.IsNotFound(err):
		return nil
	case fatal(ctx, err):
		return fmt.Errorf("get configmap %s/%s: %w", awsAuthNamespace, awsAuthName, err)
	}
	r.skip("configmaps "+awsAuthNamespace+"/"+awsAuthName, describe(err))
	return nil
}

// fatal reports whether an error ends the whole read rather than one list: the
// caller gave up, the credentials were rejected, or the server could not be
// talked to at all (no HTTP status) even after retries.
func fatal(ctx context.Context, err error) bool {
	if ctx.Err() != nil || apierrors.IsUnauthorized(err) {
		return true
	}
	var we *waitError
	var pe *pageError
	if errors.As(err, &we) || errors.As(err, &pe) {
		return false // this list is given up; the others may still be read
	}
	var status apierrors.APIStatus
	return !errors.As(err, &status)
}

// describe renders why a list was skipped, starting with the kind of refusal.
func describe(err error) string {
	var we *waitError
	var pe *pageError
	switch {
	case errors.As(err, &we):
		return we.Error()
	case errors.As(err, &pe):
		return pe.Error()
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return err.Error()
	}
	st := status.Status()
	switch {
	case apierrors.IsForbidden(err):
		return "forbidden: " + st.Message
	case apierrors.IsNotFound(err):
		return "not found: " + st.Message
	}
	return fmt.Sprintf("HTTP %d %s: %s", st.Code, http.StatusText(int(st.Code)), st.Message)
}
