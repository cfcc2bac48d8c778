package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/internal/testenv"
	"github.com/eksdoctor/eksdoctor/source/live"
)

// renderChart renders deploy/chart with the Helm SDK, as `helm template
// eksdoctor deploy/chart -n default` does, and returns its objects.
func renderChart(t *testing.T, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	objs, err := testenv.RenderChart(values)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestChart: deploy/chart renders, for serve (with and without a
// ServiceMonitor) and as a CronJob, objects the API server accepts as they are
// (strictly decoded, then created in dry-run by the test API server), running
// eksdoctor with flags it has, under RBAC that is deploy/rbac.yaml's plus watch
// on exactly what serve watches.
func TestChart(t *testing.T) {
	liveFixture(t)
	dyn, err := dynamic.NewForConfig(apiServer.Config)
	if err != nil {
		t.Fatal(err)
	}
	strict := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	for name, values := range map[string]map[string]any{
		"serve":                nil,
		"serve+servicemonitor": {"serviceMonitor": map[string]any{"enabled": true}, "namespace": "apps", "extraArgs": []any{"--disable=teardown-orphans"}},
		"cronjob":              {"mode": "cronjob", "namespace": "apps"},
	} {
		t.Run(name, func(t *testing.T) {
			objs := renderChart(t, values)
			kinds := map[string]*unstructured.Unstructured{}
			for _, o := range objs {
				kinds[o.GetKind()] = o
				if o.GetKind() == "ServiceMonitor" {
					continue // the Prometheus Operator's CRD: checked below
				}
				raw, _ := o.MarshalJSON()
				if _, _, err := strict.Decode(raw, nil, nil); err != nil {
					t.Errorf("%s/%s does not decode strictly: %v", o.GetKind(), o.GetName(), err)
				}
				gvk := o.GroupVersionKind()
				mapping := map[string]string{"ServiceAccount": "serviceaccounts", "ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings",
					"Role": "roles", "RoleBinding": "rolebindings", "Deployment": "deployments", "Service": "services", "CronJob": "cronjobs"}[gvk.Kind]
				if mapping == "" {
					t.Fatalf("unexpected kind %s", gvk.Kind)
				}
				ri := dyn.Resource(schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: mapping})
				var err error
				if ns := o.GetNamespace(); ns != "" {
					_, err = ri.Namespace(ns).Create(context.Background(), o.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				} else {
					_, err = ri.Create(context.Background(), o.DeepCopy(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
				}
				if err != nil {
					t.Errorf("the API server refuses %s/%s: %v", gvk.Kind, o.GetName(), err)
				}
			}

			// The command each workload runs parses with eksdoctor's own flags.
			var args []string
			var workload string
			switch {
			case kinds["Deployment"] != nil:
				workload = "Deployment"
				c, _, _ := unstructured.NestedSlice(kinds["Deployment"].Object, "spec", "template", "spec", "containers")
				args, _, _ = unstructured.NestedStringSlice(c[0].(map[string]any), "args")
			case kinds["CronJob"] != nil:
				workload = "CronJob"
				c, _, _ := unstructured.NestedSlice(kinds["CronJob"].Object, "spec", "jobTemplate", "spec", "template", "spec", "containers")
				args, _, _ = unstructured.NestedStringSlice(c[0].(map[string]any), "args")
			default:
				t.Fatal("no workload rendered")
			}
			env := &Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }, Getwd: os.Getwd}
			root := newRoot("eksdoctor", env)
			cmd, rest, err := root.Find(args)
			if err != nil || len(rest) != 0 && cmd.Name() == "eksdoctor" {
				t.Fatalf("%s runs %q: %v", workload, args, err)
			}
			if err := cmd.ParseFlags(args[1:]); err != nil {
				t.Errorf("%s runs %q: %v", workload, args, err)
			}
			want := map[string]string{"Deployment": "serve", "CronJob": "cluster"}[workload]
			if cmd.Name() != want {
				t.Errorf("%s runs %s, want %s", workload, cmd.Name(), want)
			}
			if workload == "CronJob" && !slices.Contains(args, "--output=json") {
				t.Errorf("the CronJob does not write JSON: %q", args)
			}

			if sm := kinds["ServiceMonitor"]; sm != nil {
				port, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
				sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
				svcSel := kinds["Service"].GetLabels()
				if sm.GetAPIVersion() != "monitoring.coreos.com/v1" || len(port) != 1 || port[0].(map[string]any)["port"] != "http-metrics" {
					t.Errorf("ServiceMonitor: %v", sm.Object)
				}
				for k, v := range sel {
					if svcSel[k] != v {
						t.Errorf("the ServiceMonitor selects %s=%s, the Service is labelled %v", k, v, svcSel)
					}
				}
			} else if name == "serve+servicemonitor" {
				t.Error("serviceMonitor.enabled renders no ServiceMonitor")
			}

			// RBAC: deploy/rbac.yaml's reader, plus watch on what serve watches.
			var role rbacv1.ClusterRole
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(kinds["ClusterRole"].Object, &role); err != nil {
				t.Fatal(err)
			}
			if diff := rbacDiff(t, role.Rules); diff != "" {
				t.Error(diff)
			}
		})
	}
}

// rbacDiff compares the chart's rules with deploy/rbac.yaml's reader and the
// resources serve watches.
func rbacDiff(t *testing.T, rules []rbacv1.PolicyRule) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var base []rbacv1.PolicyRule
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		var r rbacv1.ClusterRole
		if err := yaml.Unmarshal(doc, &r); err == nil && r.Kind == "ClusterRole" {
			base = r.Rules
		}
	}
	grants := func(rs []rbacv1.PolicyRule) map[string][]string {
		out := map[string][]string{}
		for _, r := range rs {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					out[g+"/"+res] = append(out[g+"/"+res], r.Verbs...)
				}
			}
		}
		for k := range out {
			sort.Strings(out[k])
		}
		return out
	}
	want := grants(base)
	for _, gvr := range live.Watched {
		k := gvr.Group + "/" + gvr.Resource
		want[k] = append(want[k], "watch")
		sort.Strings(want[k])
	}
	got := grants(rules)
	var diffs []string
	for k, v := range want {
		if strings.Join(got[k], ",") != strings.Join(v, ",") {
			diffs = append(diffs, k+": chart "+strings.Join(got[k], ",")+", want "+strings.Join(v, ","))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, k+": chart grants "+strings.Join(v, ",")+", which eksdoctor does not need")
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "\n")
}
