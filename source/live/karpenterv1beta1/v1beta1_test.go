package karpenterv1beta1

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/testenv"
	"github.com/eksdoctor/eksdoctor/source/live"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(testenv.Main(m, testenv.Options{CRDs: testenv.KarpenterV1beta1}, func(e *testenv.Env) { env = e }))
}

// v1beta1Objects are the shapes of Karpenter v0.37's examples/v1beta1.
const v1beta1Objects = `
apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: general-purpose
spec:
  template:
    spec:
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["on-demand"]
      nodeClassRef:
        apiVersion: karpenter.k8s.aws/v1beta1
        kind: EC2NodeClass
        name: default
      kubelet:
        maxPods: 110
  disruption:
    consolidationPolicy: WhenUnderutilized
    expireAfter: 720h
---
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiFamily: AL2
  role: KarpenterNodeRole-demo
  subnetSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
  securityGroupSelectorTerms:
    - tags:
        karpenter.sh/discovery: demo
---
apiVersion: karpenter.sh/v1beta1
kind: NodeClaim
metadata:
  name: general-purpose-q8w4z
spec:
  nodeClassRef:
    name: default
  requirements:
    - key: karpenter.sh/nodepool
      operator: In
      values: ["general-purpose"]
`

type recorder struct {
	t        *testing.T
	next     http.RoundTripper
	mu       sync.Mutex
	requests []string
}

func (r *recorder) wrap(next http.RoundTripper) http.RoundTripper { r.next = next; return r }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	line := req.Method + " " + req.URL.RequestURI()
	r.mu.Lock()
	r.requests = append(r.requests, line)
	r.mu.Unlock()
	if req.Method != http.MethodGet {
		r.t.Errorf("eksdoctor issued a request that is not a GET: %s", line)
		return nil, fmt.Errorf("refused in test: %s", line)
	}
	return r.next.RoundTrip(req)
}

func (r *recorder) count(prefix string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, l := range r.requests {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

func load(t *testing.T, ctx context.Context, rec *recorder) *cluster.Model {
	t.Helper()
	data, err := testenv.Kubeconfig(env.Config, "v1beta1")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := live.Load(ctx, live.Options{
		Kubeconfig:    path,
		Clock:         func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
		WrapTransport: rec.wrap,
	})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return m
}

// The subtests run in order: the second removes the CRDs the first reads through.
func TestKarpenterAPIVersions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := env.Apply(ctx, []byte(v1beta1Objects)); err != nil {
		t.Fatal(err)
	}

	t.Run("v1 fails without the conversion webhook, v1beta1 is read", func(t *testing.T) {
		rec := &recorder{t: t}
		m := load(t, ctx, rec)
		var got []string
		for _, o := range m.Objects {
			if strings.HasPrefix(o.APIVersion, "karpenter.") {
				got = append(got, o.APIVersion+" "+o.Kind+" "+o.Name)
			}
		}
		want := []string{
			"karpenter.k8s.aws/v1beta1 EC2NodeClass default",
			"karpenter.sh/v1beta1 NodeClaim general-purpose-q8w4z",
			"karpenter.sh/v1beta1 NodePool general-purpose",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Karpenter objects (-want +got):\n%s", diff)
		}
		for _, o := range m.Objects {
			if o.Kind == "NodePool" && o.Get("spec.template.spec.kubelet.maxPods") != int64(110) {
				t.Errorf("v1beta1 fields must be kept as stored: %v", o.Get("spec"))
			}
		}

		var skipped []string
		for _, s := range m.Live.Skipped {
			skipped = append(skipped, s.Resource)
			t.Logf("skipped %s: %s", s.Resource, s.Reason)
			if !strings.Contains(s.Reason, "conversion webhook") || !strings.HasSuffix(s.Reason, "/v1beta1 instead") {
				t.Errorf("%s: reason %q should give the webhook failure and the version read instead", s.Resource, s.Reason)
			}
		}
		wantSkipped := []string{"ec2nodeclasses.karpenter.k8s.aws/v1", "nodeclaims.karpenter.sh/v1", "nodepools.karpenter.sh/v1"}
		if diff := cmp.Diff(wantSkipped, skipped); diff != "" {
			t.Errorf("skipped (-want +got):\n%s", diff)
		}
		// A failing conversion webhook is not a transient failure: one request each.
		for _, p := range []string{"GET /apis/karpenter.sh/v1/nodepools?", "GET /apis/karpenter.sh/v1/nodeclaims?", "GET /apis/karpenter.k8s.aws/v1/ec2nodeclasses?"} {
			if n := rec.count(p); n != 1 {
				t.Errorf("%s requested %d times, want 1", p, n)
			}
		}
	})

	// Karpenter with another cloud provider (kwok, Azure) or EKS Auto Mode
	// serves NodePools and NodeClaims but no EC2NodeClass: there is none to
	// read, which is not a read that failed.
	t.Run("with another provider's node class", func(t *testing.T) {
		deleteCRDs(t, ctx, "karpenter.k8s.aws", "ec2nodeclasses.karpenter.k8s.aws")
		rec := &recorder{t: t}
		m := load(t, ctx, rec)
		for _, s := range m.Live.Skipped {
			if strings.HasPrefix(s.Resource, "ec2nodeclasses") {
				t.Errorf("reported as skipped: %s: %s", s.Resource, s.Reason)
			}
		}
		if n := rec.count("GET /apis/karpenter.sh/v1beta1/nodepools?"); n == 0 {
			t.Error("the NodePools were not listed")
		}
		if n := rec.count("GET /apis/karpenter.k8s.aws"); n != 0 {
			t.Errorf("listed EC2NodeClasses that are not served (%d requests)", n)
		}
	})

	t.Run("without the Karpenter CRDs", func(t *testing.T) {
		deleteCRDs(t, ctx, "karpenter.", "nodepools.karpenter.sh", "nodeclaims.karpenter.sh")

		rec := &recorder{t: t}
		m := load(t, ctx, rec)
		const why = "not served by the API server (the Karpenter CRDs are not installed)"
		want := []cluster.Skipped{
			{Resource: "ec2nodeclasses.karpenter.k8s.aws", Reason: why},
			{Resource: "nodeclaims.karpenter.sh", Reason: why},
			{Resource: "nodepools.karpenter.sh", Reason: why},
		}
		if diff := cmp.Diff(want, m.Live.Skipped); diff != "" {
			t.Errorf("skipped (-want +got):\n%s", diff)
		}
		if n := rec.count("GET /apis/karpenter"); n != 0 {
			t.Errorf("listed Karpenter resources that are not served (%d requests)", n)
		}
		if n := rec.count("GET /api/v1/events?fieldSelector=involvedObject.kind%3DNodeClaim"); n != 0 {
			t.Errorf("listed NodeClaim events without NodeClaims (%d requests)", n)
		}
	})
}

// deleteCRDs deletes CRDs and waits until discovery serves no API group whose
// name begins with prefix.
func deleteCRDs(t *testing.T, ctx context.Context, prefix string, names ...string) {
	t.Helper()
	ext, err := apiextensionsclient.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if err := ext.ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		groups, err := dc.ServerGroups()
		if err != nil {
			return false, nil
		}
		for _, g := range groups.Groups {
			if strings.HasPrefix(g.Name, prefix) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("API groups %s* are still served after deleting %v: %v", prefix, names, err)
	}
}
