package testenv

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

var env *Env

// crashEnv makes the test binary crash right after starting its API server: it
// is set for the child process of TestReaperStopsTheServersOfACrashedBinary.
const crashEnv = "EKSDOCTOR_TESTENV_CRASH"

func TestMain(m *testing.M) {
	if os.Getenv(crashEnv) != "" {
		os.Exit(Main(m, Options{}, func(*Env) { panic("the test binary crashes on purpose") }))
	}
	os.Exit(Main(m, Options{}, func(e *Env) { env = e }))
}

// A test binary that dies without stopping its API server (here a panic; the
// -timeout panic and SIGKILL are the same to the reaper) leaves no process behind.
func TestReaperStopsTheServersOfACrashedBinary(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err == nil {
		t.Fatalf("the crashing test binary exited cleanly:\n%s", out.String())
	}
	match := regexp.MustCompile(`testenv: reaper \d+ watches server processes ([\d ]+) and directories (.*)\n`).FindStringSubmatch(out.String())
	if match == nil || !strings.Contains(out.String(), "crashes on purpose") {
		t.Fatalf("the child did not start its servers and crash:\n%s", out.String())
	}
	pids := strings.Fields(match[1])
	if len(pids) != 2 {
		t.Fatalf("reaper watches %v, want etcd and kube-apiserver", pids)
	}
	for _, p := range pids {
		pid, err := strconv.Atoi(p)
		if err != nil {
			t.Fatal(err)
		}
		err = wait.PollUntilContextTimeout(testContext(t), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			return !alive(pid), nil
		})
		if err != nil {
			t.Errorf("server process %d still runs after its test binary crashed", pid)
		}
	}
	dirs := strings.Fields(match[2])
	if len(dirs) != 2 {
		t.Fatalf("reaper removes %v, want the etcd data and API server certificate directories", dirs)
	}
	for _, d := range dirs {
		err := wait.PollUntilContextTimeout(testContext(t), 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			_, err := os.Stat(d)
			return os.IsNotExist(err), nil
		})
		if err != nil {
			t.Errorf("%s remains after its test binary crashed", d)
		}
	}
}

// alive reports whether a process exists and is not a zombie (an exited process
// whose new parent has not collected it yet).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(data, ')')
	return i < 0 || i+2 >= len(data) || data[i+2] != 'Z'
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestKarpenterCRDsAreServed(t *testing.T) {
	t.Parallel()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, gv := range []string{"karpenter.sh/v1", "karpenter.k8s.aws/v1"} {
		rl, err := cs.Discovery().ServerResourcesForGroupVersion(gv)
		if err != nil {
			t.Fatalf("discover %s: %v", gv, err)
		}
		var names []string
		for _, r := range rl.APIResources {
			names = append(names, r.Name)
		}
		t.Logf("%s serves %v", gv, names)
		if len(names) == 0 {
			t.Errorf("%s serves no resources", gv)
		}
	}
}

const rbacManifest = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader
rules:
  - apiGroups: [""]
    resources: [pods, nodes]
    verbs: [get, list]
  - apiGroups: [storage.k8s.io]
    resources: [volumeattachments]
    verbs: [list]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: reader
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: reader}
subjects:
  - {kind: ServiceAccount, name: somebody-else, namespace: default}
`

func TestGrantBindsOnlyTheManifestRoles(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	cfg, err := env.AddUser("grant-reader")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("list pods before Grant: got %v, want Forbidden", err)
	}
	if err := env.Grant(ctx, "grant-reader", []byte(rbacManifest), schema.GroupResource{Group: "storage.k8s.io", Resource: "volumeattachments"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("list pods after Grant: %v", err)
	}
	if _, err := cs.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("list volumeattachments removed from the grant: got %v, want Forbidden", err)
	}
	if _, err := cs.CoreV1().Secrets("").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("list secrets never granted: got %v, want Forbidden", err)
	}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}},
	}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("create pod with a read-only grant: got %v, want Forbidden", err)
	}
}

func TestKubeconfigLoadsLikeUsersDo(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	data, err := Kubeconfig(env.Config, "admin@test")
	if err != nil {
		t.Fatal(err)
	}
	cc, err := clientcmd.NewClientConfigFromBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cc.RawConfig()
	if err != nil {
		t.Fatal(err)
	}
	if raw.CurrentContext != "admin@test" {
		t.Errorf("current context = %q, want admin@test", raw.CurrentContext)
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "kube-system", metav1.GetOptions{}); err != nil {
		t.Errorf("get kube-system through the kubeconfig: %v", err)
	}
}

func TestRemoveResources(t *testing.T) {
	t.Parallel()
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods", "nodes"}, Verbs: []string{"list"}},
		{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"volumeattachments"}, Verbs: []string{"list"}},
		{APIGroups: []string{"apps"}, Resources: []string{"pods"}, Verbs: []string{"list"}},
	}
	got := removeResources(rules, []schema.GroupResource{{Group: "", Resource: "pods"}, {Group: "storage.k8s.io", Resource: "volumeattachments"}})
	want := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}},
		{APIGroups: []string{"apps"}, Resources: []string{"pods"}, Verbs: []string{"list"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("removeResources (-want +got):\n%s", diff)
	}
	if len(rules[0].Resources) != 2 {
		t.Errorf("removeResources changed its input: %v", rules[0].Resources)
	}
}

// A fuzzing worker, or a run that fuzzes with no test selected, starts no
// server; any run with tests does.
func TestOnlyFuzzing(t *testing.T) {
	set := func(name, value string) {
		t.Helper()
		old := flag.Lookup(name).Value.String()
		if err := flag.Set(name, value); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { flag.Set(name, old) })
	}
	if onlyFuzzing() {
		t.Fatal("a test run counts as only fuzzing")
	}
	set("test.fuzz", "^FuzzX$")
	if onlyFuzzing() {
		t.Error("fuzzing with tests selected counts as only fuzzing")
	}
	set("test.run", "^$")
	if !onlyFuzzing() {
		t.Error("-run='^$' -fuzz=... does not count as only fuzzing")
	}
	set("test.run", ".")
	set("test.fuzzworker", "true")
	if !onlyFuzzing() {
		t.Error("a fuzzing worker does not count as only fuzzing")
	}
}
