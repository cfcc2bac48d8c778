package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/shared"
	"github.com/eksdoctor/eksdoctor/internal/testenv"
	eksschema "github.com/eksdoctor/eksdoctor/schema"
	"github.com/eksdoctor/eksdoctor/source/manifest"
)

// env serves the current (v1) CRDs to the whole package.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{CRDs: testenv.KarpenterV1}, func(e *testenv.Env) { env = e }))
}

// verdict is what one side says about an object.
type verdict struct {
	// Dropped lists the fields pruned as unknown.
	Dropped []string
	// Rejected lists the rejected fields as "path Kind".
	Rejected []string
	// Messages are the rejections as the API server words them.
	Messages []string
}

func (v *verdict) sort() {
	sort.Strings(v.Dropped)
	sort.Strings(v.Rejected)
	sort.Strings(v.Messages)
}

// apiServer creates objects with a server-side dry run and reports its verdict.
type apiServer struct {
	client dynamic.Interface
	mu     sync.Mutex
	warns  []string
}

func (s *apiServer) HandleWarningHeader(_ int, _ string, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.warns = append(s.warns, text)
}

func (s *apiServer) takeWarnings() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.warns
	s.warns = nil
	return w
}

func newAPIServer(t *testing.T, cfg *rest.Config) *apiServer {
	t.Helper()
	s := &apiServer{}
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = s
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("dynamic client: %v", err)
	}
	s.client = client
	return s
}

var resources = map[string]string{"NodePool": "nodepools", "NodeClaim": "nodeclaims", "EC2NodeClass": "ec2nodeclasses"}

// verdict creates obj with dryRun=All and fieldValidation=Warn, so unknown fields come
// back as warnings and the object is validated as the API server stores it.
func (s *apiServer) verdict(t *testing.T, obj *cluster.Object) verdict {
	t.Helper()
	group, version, _ := strings.Cut(obj.APIVersion, "/")
	gvr := schema.GroupVersionResource{Group: group, Version: version, Resource: resources[obj.Kind]}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.takeWarnings()
	_, err := s.client.Resource(gvr).Create(ctx, &unstructured.Unstructured{Object: obj.Content},
		metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationWarn})
	var v verdict
	for _, msg := range s.takeWarnings() {
		if f, ok := strings.CutPrefix(msg, `unknown field "`); ok {
			v.Dropped = append(v.Dropped, dotted(strings.TrimSuffix(f, `"`)))
		}
	}
	var status *apierrors.StatusError
	switch {
	case err == nil:
	case errors.As(err, &status) && status.ErrStatus.Details != nil:
		for _, c := range status.ErrStatus.Details.Causes {
			// Validate runs the CEL rules even when the schema already failed, so
			// this notice has no counterpart.
			if strings.Contains(c.Message, "some validation rules were not checked") {
				continue
			}
			v.Rejected = append(v.Rejected, fmt.Sprintf("%s %s", dotted(c.Field), kindOf(metav1.CauseType(c.Type))))
			v.Messages = append(v.Messages, c.Field+": "+c.Message)
		}
	default:
		t.Fatalf("dry-run create %s/%s: %v", obj.Kind, obj.Name, err)
	}
	v.sort()
	return v
}

func kindOf(t metav1.CauseType) eksschema.Kind {
	switch t {
	case metav1.CauseTypeFieldValueRequired:
		return eksschema.Required
	case metav1.CauseTypeFieldValueNotSupported:
		return eksschema.NotSupported
	case metav1.CauseTypeFieldValueDuplicate:
		return eksschema.Duplicate
	case metav1.CauseTypeForbidden:
		return eksschema.Forbidden
	}
	return eksschema.Invalid
}

func dotted(p string) string {
	return strings.NewReplacer("[", ".", "]", "").Replace(p)
}

// validate is Validate's verdict. Violations the API server accepts by design (an
// instance profile ARN) are not part of it.
func validate(obj *cluster.Object) verdict {
	var v verdict
	for _, x := range eksschema.Validate(obj) {
		switch {
		case x.Kind == eksschema.UnknownField:
			v.Dropped = append(v.Dropped, x.Path)
		case x.Accepted:
		default:
			v.Rejected = append(v.Rejected, fmt.Sprintf("%s %s", x.Path, x.Kind))
			v.Messages = append(v.Messages, x.Message)
		}
	}
	v.sort()
	return v
}

// upstream returns the path of rel, a glob pattern of upstream files relative to
// shared/corpus, where they are kept (see ../testdata/README.md).
func upstream(t *testing.T, rel string) string {
	t.Helper()
	return filepath.Join(shared.Dir(t, "corpus"), filepath.FromSlash(rel))
}

// The upstream manifests the tests send to the API server: Karpenter's own
// examples, current and at v0.37.7, and aws-samples/karpenter-blueprints.
const (
	examplesV1      = "karpenter-provider-aws/examples/v1/*.yaml"
	examplesV1beta1 = "karpenter-provider-aws/@v0.37.7/examples/v1beta1/*.yaml"
	blueprints      = "karpenter-blueprints/blueprints"
)

// objects decodes the Karpenter objects of fixture files; objects holding values
// unknown before apply ("${...}") are left out, since the API server would judge the
// placeholder text and Validate deliberately does not.
func objects(t *testing.T, patterns ...string) []*cluster.Object {
	t.Helper()
	var out []*cluster.Object
	for _, p := range patterns {
		files, err := filepath.Glob(p)
		if err != nil || len(files) == 0 {
			t.Fatalf("no fixtures match %s (%v)", p, err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatalf("read fixture: %v", err)
			}
			objs, probs := manifest.Decode(f, data)
			if len(probs) > 0 {
				t.Fatalf("decode %s: %v", f, probs)
			}
			for _, o := range objs {
				if _, ok := resources[o.Kind]; ok && !hasPlaceholder(o.Content) {
					out = append(out, o)
				}
			}
		}
	}
	return out
}

func hasPlaceholder(v any) bool {
	switch t := v.(type) {
	case string:
		return cluster.IsUnknown(t)
	case map[string]any:
		for k, e := range t {
			if cluster.IsUnknown(k) || hasPlaceholder(e) {
				return true
			}
		}
	case []any:
		for _, e := range t {
			if hasPlaceholder(e) {
				return true
			}
		}
	}
	return false
}

func withAPIVersion(o *cluster.Object, apiVersion string) *cluster.Object {
	c := *o
	c.APIVersion = apiVersion
	c.Content = map[string]any{}
	for k, v := range o.Content {
		c.Content[k] = v
	}
	c.Content["apiVersion"] = apiVersion
	return &c
}

func fixed(o *cluster.Object) *cluster.Object {
	f := eksschema.Fix(o)
	c := *o
	c.Content = f.Object
	c.APIVersion, _ = f.Object["apiVersion"].(string)
	return &c
}

// agree checks that Validate and the API server say the same about every object.
func agree(t *testing.T, s *apiServer, objs []*cluster.Object) {
	t.Helper()
	if len(objs) == 0 {
		t.Fatal("no objects to compare")
	}
	for _, o := range objs {
		want := s.verdict(t, o)
		got := validate(o)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s %s/%s (%s): Validate disagrees with the API server (-server +Validate):\n%s", o.Origin.File, o.Kind, o.Name, o.APIVersion, diff)
		}
	}
}

func TestV1AgreesWithAPIServer(t *testing.T) {
	s := newAPIServer(t, env.Config)
	objs := objects(t,
		"../testdata/invalid/v1.yaml",
		upstream(t, examplesV1),
		upstream(t, blueprints+"/*/*.yaml"),
		upstream(t, blueprints+"/*/*/*.yaml"),
	)
	// v1beta1 objects with nothing but the apiVersion changed: every move shows.
	for _, o := range objects(t, "../testdata/moves/v1beta1.yaml", upstream(t, examplesV1beta1)) {
		group, _, _ := strings.Cut(o.APIVersion, "/")
		objs = append(objs, withAPIVersion(o, group+"/v1"))
	}
	agree(t, s, objs)
}

// What Fix produces is accepted as it is, apart from what needs a decision (the
// Ubuntu family) or is wrong in other ways than the v1 moves (the invalid fixtures).
func TestFixIsAccepted(t *testing.T) {
	s := newAPIServer(t, env.Config)
	for _, o := range objects(t, "../testdata/moves/v1beta1.yaml", upstream(t, examplesV1beta1)) {
		f := fixed(o)
		v := s.verdict(t, f)
		if o.Kind == "EC2NodeClass" && o.Content["spec"].(map[string]any)["amiFamily"] == "Ubuntu" {
			continue
		}
		if diff := cmp.Diff(verdict{}, v); diff != "" {
			t.Errorf("%s %s/%s: the API server does not accept Fix's output (-want +got):\n%s", o.Origin.File, o.Kind, o.Name, diff)
		}
		if diff := cmp.Diff(v, validate(f)); diff != "" {
			t.Errorf("%s %s/%s: Validate disagrees with the API server on Fix's output (-server +Validate):\n%s", o.Origin.File, o.Kind, o.Name, diff)
		}
	}
}

// The v1beta1 fixtures are judged by an API server with the v0.37.7 CRDs.
func TestV1beta1AgreesWithAPIServer(t *testing.T) {
	e, err := testenv.Start(testenv.Options{CRDs: testenv.KarpenterV1beta1})
	if err != nil {
		t.Fatalf("start an API server with the v1beta1 CRDs: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("stop the v1beta1 API server: %v", err)
		}
	})
	s := newAPIServer(t, e.Config)
	agree(t, s, objects(t,
		"../testdata/invalid/v1beta1.yaml",
		"../testdata/moves/v1beta1.yaml",
		upstream(t, examplesV1beta1),
	))
}
