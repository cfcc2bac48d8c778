package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// Watched are the resources a Follower keeps current between reads: every
// resource a read lists (at whichever of its versions the server serves), so
// that the model it builds after a change holds no object older than the
// change. Following them needs only the watch verb beside get and list;
// kube-system/aws-auth, read by name, is as the last full read found it.
var Watched = func() []schema.GroupVersionResource {
	var out []schema.GroupVersionResource
	seen := map[schema.GroupResource]bool{}
	for _, res := range resources {
		gr := schema.GroupResource{Group: res.group, Resource: res.resource}
		if !seen[gr] {
			seen[gr] = true
			out = append(out, gr.WithVersion(res.versions[0]))
		}
	}
	return out
}()

// listKey names one list a read makes: a resource, at whichever version the
// server serves, and the field selector it is listed with.
type listKey struct {
	gr       schema.GroupResource
	selector string
}

// key is the list a read makes of res.
func (r resource) key() listKey {
	return listKey{gr: schema.GroupResource{Group: r.group, Resource: r.resource}, selector: r.selector}
}

func (k listKey) String() string {
	return resource{group: k.gr.Group, resource: k.gr.Resource, selector: k.selector}.label()
}

// followedLists are the lists a Follower watches, one per list a read makes.
func followedLists() []listKey {
	var out []listKey
	seen := map[listKey]bool{}
	for _, res := range resources {
		k := res.key()
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

// listed is where one followed resource's list is in a read's objects.
type listed struct {
	gvr       schema.GroupVersionResource
	from, n   int
	rv        string
	namespace string
}

// A Follower keeps a read of the cluster current, as an informer does: it
// reads the cluster once, as Load does, then watches the Watched resources
// from the resourceVersion their lists were read at and applies each change
// to what it holds, so that the model of the cluster as it is now is built
// without asking the API server anything. The other resources (events,
// workloads, volumes, aws-auth...) are as the last full read found them;
// Refresh reads everything again. A watch the server ends is opened again
// from the last resourceVersion it delivered; one whose resourceVersion is
// too old for the server (410 Gone) makes the Follower read everything
// again, as an informer relists.
type Follower struct {
	opts Options
	cfg  *rest.Config
	name string
	raw  rest.Interface // watches: no request timeout

	// modelMu orders the models built: building one settles the pods and
	// objects it is made of.
	modelMu sync.Mutex

	mu sync.Mutex
	// gen counts the full reads; a watch opened on an earlier one stops.
	gen int
	// refreshed is closed when the next full read is in.
	refreshed chan struct{}
	base      *state // the last full read, without the followed lists' objects
	lists     map[listKey]*followedList
	// unfollowed are the lists whose watch the credentials do not allow,
	// until one of their watches opens.
	unfollowed map[listKey]bool
	counts     FollowCounts
}

// FollowCounts are what a Follower has done since it began.
type FollowCounts struct {
	// Reads are the full reads (the first included).
	Reads int
	// Changes are the changes watches delivered and applied.
	Changes int
	// WatchErrors are the watches that could not be opened or ended in
	// an error (each opened again after a pause).
	WatchErrors int
}

// followedList is one followed list's objects, by namespace and name.
type followedList struct {
	gvr       schema.GroupVersionResource
	namespace string
	rv        string
	objects   map[string]followedObject
}

type followedObject struct {
	content map[string]any
	pod     *cluster.Pod
}

// Follow reads the cluster the options point at, as Load does, and returns
// a Follower holding the read. Its watches start with Watch.
func Follow(ctx context.Context, opts Options) (*Follower, error) {
	opts = opts.withDefaults()
	cfg, name, err := restConfig(opts)
	if err != nil {
		return nil, err
	}
	wcfg := rest.CopyConfig(cfg)
	wcfg.Timeout = 0 // a watch stays open; the server ends it
	raw, err := rawClient(wcfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", cfg.Host, err)
	}
	f := &Follower{opts: opts, cfg: cfg, name: name, raw: raw, refreshed: make(chan struct{})}
	if err := f.Refresh(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// Refresh reads the whole cluster again and replaces what the Follower holds;
// the watches go on from the new read.
func (f *Follower) Refresh(ctx context.Context) error {
	s, err := read(ctx, f.cfg, f.name, f.opts)
	if err != nil {
		return err
	}
	lists := map[listKey]*followedList{}
	inList := make([]bool, len(s.Objects))
	for k, l := range s.lists {
		fl := &followedList{gvr: l.gvr, namespace: l.namespace, rv: l.rv, objects: make(map[string]followedObject, l.n)}
		for i := l.from; i < l.from+l.n; i++ {
			inList[i] = true
			fl.objects[objectKey(s.Objects[i])] = followedObject{content: s.Objects[i], pod: s.pods[i]}
		}
		lists[k] = fl
	}
	var objects []map[string]any
	var pods []*cluster.Pod
	for i, o := range s.Objects {
		if !inList[i] {
			objects = append(objects, o)
			pods = append(pods, s.pods[i])
		}
	}
	s.Objects, s.pods, s.lists = objects, pods, nil
	f.mu.Lock()
	defer f.mu.Unlock()
	f.base, f.lists = s, lists
	f.gen++
	f.counts.Reads++
	close(f.refreshed)
	f.refreshed = make(chan struct{})
	return nil
}

// Unfollowed names the lists the Follower cannot keep current because the
// credentials (or the server) refuse their watches, until one opens: a model
// built between full reads would hold them as the last read found them.
func (f *Follower) Unfollowed() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for k := range f.unfollowed {
		out = append(out, k.String())
	}
	sort.Strings(out)
	return out
}

// Counts returns what the Follower has done so far.
func (f *Follower) Counts() FollowCounts {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts
}

// Model builds the model of the cluster as the Follower holds it now.
func (f *Follower) Model() *cluster.Model {
	f.modelMu.Lock()
	defer f.modelMu.Unlock()
	f.mu.Lock()
	s := *f.base
	n := len(s.Objects)
	for _, l := range f.lists {
		n += len(l.objects)
	}
	s.Objects = append(make([]map[string]any, 0, n), f.base.Objects...)
	s.pods = append(make([]*cluster.Pod, 0, n), f.base.pods...)
	for _, l := range f.lists {
		for _, o := range l.objects {
			s.Objects = append(s.Objects, o.content)
			s.pods = append(s.pods, o.pod)
		}
	}
	f.mu.Unlock()
	s.Now = f.opts.Clock().UTC().Format(time.RFC3339)
	return s.model()
}

// objectKey is an object's namespace and name.
func objectKey(content map[string]any) string {
	md := metadata(content)
	ns, _ := md["namespace"].(string)
	name, _ := md["name"].(string)
	return ns + "/" + name
}

// Watch follows the changes of every list the last read made until ctx ends,
// calling changed after each change it applies (and after a read it had to
// make again).
func (f *Follower) Watch(ctx context.Context, changed func()) {
	var wg sync.WaitGroup
	for _, k := range followedLists() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.follow(ctx, k, changed)
		}()
	}
	wg.Wait()
}

// Pauses between watches of one resource after an error.
const (
	firstWatchPause = time.Second
	maxWatchPause   = time.Minute
)

// follow keeps one list's watch open (its resource at the version the read
// listed, with its selector), opening it again when it ends. A watch the
// credentials do not allow is tried again after the next full read.
func (f *Follower) follow(ctx context.Context, k listKey, changed func()) {
	pause := firstWatchPause
	// failed counts a failure and waits, each time twice as long.
	failed := func() {
		f.watchFailed()
		sleep(ctx, pause)
		pause = min(2*pause, maxWatchPause)
	}
	for ctx.Err() == nil {
		f.mu.Lock()
		gen, refreshed := f.gen, f.refreshed
		l := f.lists[k]
		var gvr schema.GroupVersionResource
		var rv, ns string
		if l != nil {
			gvr, rv, ns = l.gvr, l.rv, l.namespace
		}
		f.mu.Unlock()
		// untilRead waits for the next full read (or the end).
		untilRead := func() {
			select {
			case <-ctx.Done():
			case <-refreshed:
			}
		}
		if l == nil {
			// Not read (not served, or not allowed): nothing to follow
			// until a read lists it.
			untilRead()
			continue
		}
		applied, err := f.watch(ctx, gen, k, gvr, ns, rv, changed)
		var denied *watchDenied
		switch {
		case ctx.Err() != nil:
			return
		case errors.As(err, &denied):
			f.mu.Lock()
			if f.unfollowed == nil {
				f.unfollowed = map[listKey]bool{}
			}
			f.unfollowed[k] = true
			f.mu.Unlock()
			untilRead()
		case errors.Is(err, errExpired):
			// What the watch would resume from is gone: read everything
			// again (unless another watch just did).
			f.mu.Lock()
			stale := f.gen == gen
			f.mu.Unlock()
			if stale {
				if err := f.Refresh(ctx); err != nil {
					failed()
					continue
				}
				changed()
			}
			pause = firstWatchPause
		case err != nil:
			if applied > 0 {
				pause = firstWatchPause
			}
			failed()
		default:
			pause = firstWatchPause
		}
	}
}

func (f *Follower) watchFailed() {
	f.mu.Lock()
	f.counts.WatchErrors++
	f.mu.Unlock()
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// errExpired is a watch whose resourceVersion the server no longer has.
var errExpired = errors.New("the resourceVersion to watch from is too old")

// watchDenied is a watch the API server refuses to open for these
// credentials (Forbidden), or for this resource (MethodNotAllowed).
type watchDenied struct{ why string }

func (e *watchDenied) Error() string { return e.why }

// maxEventBytes is the most one watch event may take: an object and the
// event around it.
const maxEventBytes = maxObjectBytes + 4096

// watchEvent is one event of a watch, its object undecoded.
type watchEvent struct {
	Type   string         `json:"type"`
	Object jsontext.Value `json:"object"`
}

// watch opens one watch of list k (gvr in ns) from rv and applies its events
// while the Follower's read is still gen. It returns how many it applied, and
// nil when the server ended the watch or a new read replaced gen.
func (f *Follower) watch(ctx context.Context, gen int, k listKey, gvr schema.GroupVersionResource, ns, rv string, changed func()) (int, error) {
	req := f.raw.Get().AbsPath(listPath(gvr, ns)...).
		Param("watch", "true").
		Param("allowWatchBookmarks", "true").
		Param("resourceVersion", rv)
	if k.selector != "" {
		req = req.Param("fieldSelector", k.selector)
	}
	body, err := req.Stream(ctx)
	if err != nil {
		switch statusCode(err) {
		case http.StatusGone:
			return 0, errExpired
		case http.StatusForbidden, http.StatusMethodNotAllowed:
			return 0, &watchDenied{why: describe(err)}
		}
		return 0, err
	}
	f.mu.Lock()
	delete(f.unfollowed, k)
	f.mu.Unlock()
	defer body.Close()
	bound := &boundedReader{r: body, left: maxEventBytes}
	dec := jsontext.NewDecoder(bound)
	var d objectDecoder
	applied := 0
	for {
		bound.left = maxEventBytes
		v, err := dec.ReadValue()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return applied, nil
			}
			return applied, err
		}
		var ev watchEvent
		if err := jsonv2.Unmarshal(v, &ev); err != nil {
			return applied, fmt.Errorf("a watch event does not decode: %w", err)
		}
		switch ev.Type {
		case "ERROR":
			var st metav1.Status
			if err := jsonv2.Unmarshal(ev.Object, &st); err == nil && st.Code == http.StatusGone {
				return applied, errExpired
			}
			return applied, fmt.Errorf("the watch ended in an error: %s", ev.Object)
		case "BOOKMARK":
			// Only the resourceVersion to resume from.
			var b struct {
				Metadata struct {
					ResourceVersion string `json:"resourceVersion"`
				} `json:"metadata"`
			}
			if err := jsonv2.Unmarshal(ev.Object, &b); err != nil {
				return applied, fmt.Errorf("a watch bookmark does not decode: %w", err)
			}
			if !f.apply(gen, k, ev.Type, "", b.Metadata.ResourceVersion, followedObject{}) {
				return applied, nil
			}
			continue
		case "ADDED", "MODIFIED", "DELETED":
		default:
			return applied, fmt.Errorf("a watch event of unknown type %q", ev.Type)
		}
		content, pod, err := d.decode(ev.Object)
		if err != nil {
			return applied, fmt.Errorf("a watched object does not decode: %w", err)
		}
		next, _ := metadata(content)["resourceVersion"].(string)
		key := objectKey(content)
		prune(content)
		if !f.apply(gen, k, ev.Type, key, next, followedObject{content: content, pod: pod}) {
			return applied, nil
		}
		applied++
		changed()
	}
}

// apply applies one event to list k's objects, if the read is still gen.
func (f *Follower) apply(gen int, k listKey, typ, key, rv string, o followedObject) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	l := f.lists[k]
	if f.gen != gen || l == nil {
		return false
	}
	if rv != "" {
		l.rv = rv
	}
	switch typ {
	case "ADDED", "MODIFIED":
		l.objects[key] = o
	case "DELETED":
		delete(l.objects, key)
	default:
		return true
	}
	f.counts.Changes++
	return true
}

// boundedReader reads at most left bytes before it fails: a watch event
// that would take more is refused before it is buffered.
type boundedReader struct {
	r    io.Reader
	left int64
}

var errEventTooLarge = errors.New("a watch event takes more than " + strconv.Itoa(maxEventBytes) + " bytes, more than any object the API server stores")

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errEventTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}
