package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/eksdoctor/eksdoctor/cluster"
)

func TestTransient(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{name: "429", err: apierrors.NewTooManyRequests("slow down", 0), want: true},
		{name: "503", err: apierrors.NewServiceUnavailable("down"), want: true},
		{name: "500", err: apierrors.NewInternalError(errors.New("etcd leader changed")), want: true},
		{name: "502", err: apierrors.NewGenericServerResponse(502, "get", gr, "", "bad gateway", 0, false), want: true},
		{name: "504", err: apierrors.NewGenericServerResponse(504, "get", gr, "", "gateway timeout", 0, false), want: true},
		{name: "server timeout", err: apierrors.NewServerTimeout(gr, "list", 1), want: true},
		{name: "request deadline", err: fmt.Errorf("list: %w", context.DeadlineExceeded), want: true},
		{name: "connection refused", err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, want: true},
		{name: "connection reset", err: &net.OpError{Op: "read", Err: syscall.ECONNRESET}, want: true},
		{name: "EOF", err: io.ErrUnexpectedEOF, want: true},
		{name: "conversion webhook", err: apierrors.NewInternalError(errors.New(`conversion webhook for karpenter.sh/v1beta1, Kind=NodePool failed: service "karpenter" not found`))},
		{name: "forbidden", err: apierrors.NewForbidden(gr, "", errors.New("no"))},
		{name: "not found", err: apierrors.NewNotFound(gr, "x")},
		{name: "unauthorized", err: apierrors.NewUnauthorized("who are you")},
		{name: "bad request", err: apierrors.NewBadRequest("field selector not supported")},
		{name: "not implemented", err: apierrors.NewGenericServerResponse(501, "list", gr, "", "", 0, false)},
		{name: "other", err: errors.New("x509: certificate signed by unknown authority")},
	} {
		if got := transient(context.Background(), tc.err); got != tc.want {
			t.Errorf("%s: transient = %v, want %v", tc.name, got, tc.want)
		}
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if transient(done, apierrors.NewServiceUnavailable("down")) {
		t.Error("nothing is retried once the caller gave up")
	}
}

func TestFatal(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{name: "forbidden", err: apierrors.NewForbidden(gr, "", errors.New("no"))},
		{name: "server error", err: apierrors.NewServiceUnavailable("down")},
		{name: "unauthorized", err: apierrors.NewUnauthorized("expired token"), want: true},
		{name: "network", err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, want: true},
		{name: "a page that does not decode", err: &pageError{err: errors.New("item 3: no metadata.name")}},
	} {
		if got := fatal(ctx, tc.err); got != tc.want {
			t.Errorf("%s: fatal = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestServedVersions(t *testing.T) {
	gvr := func(g, v, r string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: g, Version: v, Resource: r}
	}
	s := served{
		resources: map[schema.GroupVersionResource]bool{
			gvr("", "v1", "pods"):                       true,
			gvr("karpenter.sh", "v1", "nodepools"):      false,
			gvr("karpenter.sh", "v1beta1", "nodepools"): false,
		},
		failed: map[schema.GroupVersion]error{{Group: "storage.k8s.io", Version: "v1"}: errors.New("timeout")},
	}
	for _, tc := range []struct {
		res        resource
		versions   []string
		namespaced bool
		why        string
	}{
		{res: resource{resource: "pods", versions: []string{"v1"}}, versions: []string{"v1"}, namespaced: true},
		{res: resource{group: "karpenter.sh", resource: "nodepools", versions: []string{"v1", "v1beta1"}}, versions: []string{"v1", "v1beta1"}},
		{res: resource{group: "karpenter.sh", resource: "nodeclaims", versions: []string{"v1", "v1beta1"}}, why: "not served by the API server (the Karpenter CRDs are not installed)"},
		{res: resource{group: "storage.k8s.io", resource: "csidrivers", versions: []string{"v1"}}, why: "discovery of storage.k8s.io/v1 failed: timeout"},
		{res: resource{group: "batch", resource: "jobs", versions: []string{"v1"}}, why: "not served by the API server"},
	} {
		versions, namespaced, why := s.versions(tc.res)
		if !slices.Equal(versions, tc.versions) || namespaced != tc.namespaced || why != tc.why {
			t.Errorf("%s: got %v %v %q, want %v %v %q", tc.res.label(), versions, namespaced, why, tc.versions, tc.namespaced, tc.why)
		}
	}
	if !s.has(schema.GroupResource{Group: "karpenter.sh", Resource: "nodepools"}) || s.has(schema.GroupResource{Group: "karpenter.sh", Resource: "nodeclaims"}) {
		t.Error("served.has")
	}
}

// deploy/rbac.yaml grants exactly what the live source reads: list on every listed
// resource, get on kube-system/aws-auth, only read verbs, never Secrets.
func TestDeployedRoleMatchesWhatIsRead(t *testing.T) {
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(string(readRBAC(t))), 4096)
	granted := map[string][]string{} // "group/resource[/namespace/name]" → verbs
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatal(err)
		}
		kind, _ := obj["kind"].(string)
		if kind != "ClusterRole" && kind != "Role" {
			continue
		}
		var role rbacv1.ClusterRole // a Role has the same rules
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &role); err != nil {
			t.Fatal(err)
		}
		for _, r := range role.Rules {
			for _, v := range r.Verbs {
				if v != "get" && v != "list" && v != "watch" {
					t.Errorf("%s %s grants %q", kind, role.Name, v)
				}
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					if res == "*" || g == "*" || res == "secrets" {
						t.Errorf("%s %s grants %s in group %q", kind, role.Name, res, g)
					}
					key := g + "/" + res
					if len(r.ResourceNames) > 0 {
						ns, _ := cluster.Lookup(obj, "metadata.namespace").(string)
						key += "/" + ns + "/" + strings.Join(r.ResourceNames, ",")
					}
					granted[key] = append(granted[key], r.Verbs...)
				}
			}
		}
	}
	want := map[string]bool{"/configmaps/kube-system/aws-auth": true}
	for _, res := range resources {
		want[res.group+"/"+res.resource] = true
	}
	var missing, extra []string
	for k := range want {
		verb := "list"
		if strings.HasPrefix(k, "/configmaps/") {
			verb = "get" // fetched by name
		}
		if !slices.Contains(granted[k], verb) {
			missing = append(missing, k+" "+verb)
		}
	}
	for k := range granted {
		if !want[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing)+len(extra) > 0 {
		t.Errorf("deploy/rbac.yaml and the live source disagree: missing %v, granted but never read %v", missing, extra)
	}
}

func TestAwsAuth(t *testing.T) {
	obj := func(mapRoles string) *cluster.Object {
		return newObject(map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "aws-auth", "namespace": "kube-system"},
			"data":     map[string]any{"mapRoles": mapRoles},
		}, origin("prod"))
	}
	auth, probs := awsAuth(obj(`
- rolearn: arn:aws:iam::111122223333:role/eks-fargate-pods
  username: system:node:{{SessionName}}
  groups: [system:bootstrappers, system:nodes, system:node-proxier]
- roleARN: arn:aws:iam::111122223333:role/admins
  username: admin
`))
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	want := &cluster.AwsAuth{
		Complete: true,
		Origin:   cluster.Origin{File: "cluster:prod", Path: "data.mapRoles"},
		Roles: []cluster.RoleMapping{
			{RoleARN: "arn:aws:iam::111122223333:role/eks-fargate-pods", Username: "system:node:{{SessionName}}", Groups: []string{"system:bootstrappers", "system:nodes", "system:node-proxier"}, Origin: cluster.Origin{File: "cluster:prod", Path: "data.mapRoles.0"}},
			{RoleARN: "arn:aws:iam::111122223333:role/admins", Username: "admin", Origin: cluster.Origin{File: "cluster:prod", Path: "data.mapRoles.1"}},
		},
	}
	if diff := cmp.Diff(want, auth); diff != "" {
		t.Errorf("aws-auth (-want +got):\n%s", diff)
	}

	auth, probs = awsAuth(obj(""))
	if len(probs) != 0 || auth == nil || !auth.Complete || len(auth.Roles) != 0 {
		t.Errorf("an aws-auth without mapRoles maps nothing: %+v %v", auth, probs)
	}
	auth, probs = awsAuth(obj("rolearn: not-a-list"))
	if len(probs) != 1 || auth.Complete || probs[0].Object != (cluster.ObjectRef{Kind: "ConfigMap", Namespace: "kube-system", Name: "aws-auth"}) {
		t.Errorf("a mapRoles that is not a list: %+v %v", auth, probs)
	}
}

// The model of a state dedupes objects read by two lists and sorts everything.
func TestStateModel(t *testing.T) {
	ev := func(name string) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Event", "metadata": map[string]any{"name": name, "namespace": "default", "managedFields": []any{map[string]any{"manager": "kubelet"}}}}
	}
	m := (&state{
		Context: "c",
		Skipped: []cluster.Skipped{{Resource: "b", Reason: "x"}, {Resource: "a", Reason: "y"}},
		Objects: []map[string]any{
			ev("e2"), ev("e1"), ev("e2"),
			{"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": map[string]any{"name": "z.csi"}},
			{"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": map[string]any{"name": "a.csi"}},
			{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "aws-auth", "namespace": "default"}},
		},
	}).model()
	if diff := cmp.Diff([]string{"storage.k8s.io/v1 CSIDriver/a.csi", "storage.k8s.io/v1 CSIDriver/z.csi", "v1 ConfigMap/default/aws-auth", "v1 Event/default/e1", "v1 Event/default/e2"}, refs(m)); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a.csi", "z.csi"}, m.Live.CSIDrivers); diff != "" {
		t.Errorf("CSI drivers (-want +got):\n%s", diff)
	}
	if m.Live.Skipped[0].Resource != "a" {
		t.Errorf("skipped not sorted: %v", m.Live.Skipped)
	}
	if m.Identity.AwsAuth != nil {
		t.Error("only kube-system/aws-auth is the aws-auth ConfigMap")
	}
	if find(m, "Event", "default", "e1").Get("metadata.managedFields") != nil {
		t.Error("managedFields kept")
	}
}
