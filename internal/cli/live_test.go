package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/eksdoctor/eksdoctor/report"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// reportJSON is the documented JSON report (SPEC §5).
type reportJSON struct {
	Version  int `json:"version"`
	Findings []struct {
		Check    string `json:"check"`
		Severity string `json:"severity"`
		Object   struct {
			Kind      string `json:"kind"`
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"object"`
		Origin struct {
			File string `json:"file"`
			Line int    `json:"line"`
		} `json:"origin"`
		Summary string `json:"summary"`
		Detail  string `json:"detail"`
		Fix     *struct {
			Summary string `json:"summary"`
			Edits   []struct {
				Format string `json:"format"`
				Text   string `json:"text"`
			} `json:"edits"`
		} `json:"fix"`
	} `json:"findings"`
	Summary map[string]int `json:"summary"`
}

func parseReport(t *testing.T, r liveRun) reportJSON {
	t.Helper()
	var rep reportJSON
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("the JSON report does not parse: %v\n%s", err, r)
	}
	return rep
}

// findingKeys renders "check severity Kind/namespace/name" for the findings of
// the given checks (all checks when none), sorted.
func findingKeys(rep reportJSON, checks ...string) []string {
	var out []string
	for _, f := range rep.Findings {
		if len(checks) > 0 && !contains(checks, f.Check) {
			continue
		}
		ref := f.Object.Kind + "/"
		if f.Object.Namespace != "" {
			ref += f.Object.Namespace + "/"
		}
		out = append(out, f.Check+" "+f.Severity+" "+ref+f.Object.Name)
	}
	sort.Strings(out)
	return out
}

// text returns everything a finding says.
func findingText(rep reportJSON, check, object string) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		ref := f.Object.Kind + "/"
		if f.Object.Namespace != "" {
			ref += f.Object.Namespace + "/"
		}
		if f.Check != check || ref+f.Object.Name != object {
			continue
		}
		b.WriteString(f.Summary + "\n" + f.Detail + "\n")
		if f.Fix != nil {
			b.WriteString(f.Fix.Summary + "\n")
			for _, e := range f.Fix.Edits {
				b.WriteString(e.Text + "\n")
			}
		}
	}
	return b.String()
}

// liveIDs are the checks whose findings the live tests assert exactly: the live
// checks and the checks that judge live Pending pods and DaemonSets.
var liveIDs = []string{
	"bootstrap-deadlock", "disruption-daemonset-evicted", "disruption-toleration-missing",
	"finalizer-stuck", "live-resource-skipped", "nodeclaim-not-registered",
	"pod-unschedulable", "volumeattachment-stale",
}

// wantLive is what `eksdoctor cluster` must find in the fixture, as an admin.
var wantLive = []string{
	"bootstrap-deadlock error Deployment/kube-system/coredns",
	"disruption-daemonset-evicted error DaemonSet/kube-system/ebs-csi-node",
	"disruption-toleration-missing error DaemonSet/kube-system/ebs-csi-node",
	"finalizer-stuck error NodeClaim/default-x7k2p",
	"nodeclaim-not-registered error EC2NodeClass/default",
	"pod-unschedulable error Deployment/apps/web",
	"volumeattachment-stale error VolumeAttachment/csi-2b3c4d5e6f7a",
}

// `eksdoctor cluster` reads the cluster of the kubeconfig and reports every live
// finding once, with the scheduler's and Karpenter's own words, exit code 1.
func TestClusterReportsTheLiveFindings(t *testing.T) {
	liveFixture(t)
	kc := kubeconfigFor(t, apiServer.Config)
	r := runLive(t, "eksdoctor", nil, false, "cluster", "--kubeconfig", kc, "-o", "json")
	if r.code != ExitFindings {
		t.Fatalf("exit %d, want %d\n%s", r.code, ExitFindings, r)
	}
	rep := parseReport(t, r)
	if diff := cmp.Diff(wantLive, findingKeys(rep, liveIDs...)); diff != "" {
		t.Errorf("live findings (-want +got):\n%s\nall:\n%s", diff, strings.Join(findingKeys(rep), "\n"))
	}
	// A mixed cluster: pods Pending on the Fargate taint that no profile selects
	// are an EC2 capacity problem, not a Fargate one.
	if got := findingKeys(rep, "fargate-profile-mismatch"); len(got) > 0 {
		t.Errorf("fargate-profile-mismatch in a cluster with EC2 nodes: %v", got)
	}
	seen := map[string]bool{}
	for _, k := range findingKeys(rep) {
		if seen[k] {
			t.Errorf("reported twice: %s", k)
		}
		seen[k] = true
	}
	for _, f := range rep.Findings {
		if f.Origin.File != "cluster:test" {
			t.Errorf("%s %s: origin %q, want the context cluster:test", f.Check, f.Object.Name, f.Origin.File)
		}
	}
	for _, c := range []struct{ check, object string }{
		{"pod-unschedulable", "Deployment/apps/web"},
		{"bootstrap-deadlock", "Deployment/kube-system/coredns"},
	} {
		text := findingText(rep, c.check, c.object)
		for _, want := range []string{
			`kube-scheduler: "0/3 nodes are available: 1 node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}, 1 node(s) had untolerated taint {karpenter.sh/controller: true}, 1 node(s) had untolerated taint {karpenter.sh/disrupted: }.`,
			"(FailedScheduling event from default-scheduler",
			`node "ip-10-0-1-10.ec2.internal": refuses: node(s) had untolerated taint {karpenter.sh/controller: true}`,
			`node "fargate-ip-10-0-3-30.ec2.internal": refuses: node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("%s %s does not say %q:\n%s", c.check, c.object, want, text)
			}
		}
	}
	for _, c := range []struct{ check, object, want string }{
		{"pod-unschedulable", "Deployment/apps/web", "2 pod(s) Pending"},
		{"pod-unschedulable", "Deployment/apps/web", `label "workload" does not have known values`},
		{"pod-unschedulable", "Deployment/apps/web", `kubectl patch nodepool.karpenter.sh default --type merge -p '{"spec":{"template":{"metadata":{"labels":{"workload":"web"}}}}}'`},
		{"bootstrap-deadlock", "Deployment/kube-system/coredns", `fit only Karpenter capacity (nodepool "default")`},
		{"bootstrap-deadlock", "Deployment/kube-system/coredns", `kubectl patch deployment coredns -n kube-system --type merge -p '{"spec":{"template":{"spec":{"tolerations":[{"key":"CriticalAddonsOnly","operator":"Exists"},{"effect":"NoSchedule","key":"karpenter.sh/controller","operator":"Equal","value":"true"}]}}}}'`},
		{"finalizer-stuck", "NodeClaim/default-x7k2p", "instance(s) i-0fedcba9876543210 keep running"},
		{"finalizer-stuck", "NodeClaim/default-x7k2p", "Deployment kube-system/karpenter has 0 of 1 pods ready: pod karpenter-6b7f9d8c5-k8r2p is Running, container controller CrashLoopBackOff"},
		{"finalizer-stuck", "NodeClaim/default-x7k2p", "Its Node ip-10-0-2-20.ec2.internal is being deleted too"},
		{"finalizer-stuck", "NodeClaim/default-x7k2p", "aws ec2 terminate-instances --instance-ids i-0fedcba9876543210"},
		{"nodeclaim-not-registered", "EC2NodeClass/default", "aws-auth does not map node role KarpenterNodeRole-demo"},
		{"nodeclaim-not-registered", "EC2NodeClass/default", `Registered Unknown (NodeNotFound: Node not registered with cluster)`},
		{"nodeclaim-not-registered", "EC2NodeClass/default", "aws eks create-access-entry --cluster-name demo --principal-arn arn:aws:iam::111122223333:role/KarpenterNodeRole-demo --type EC2_LINUX"},
		{"volumeattachment-stale", "VolumeAttachment/csi-2b3c4d5e6f7a", "attached to node ip-10-0-9-99.ec2.internal, which no longer exists; waiting for it: apps/cache-0"},
		{"volumeattachment-stale", "VolumeAttachment/csi-2b3c4d5e6f7a", `The attach/detach controller (FailedAttachVolume) on apps/cache-0: "Multi-Attach error for volume \"pvc-2b3c4d5e\"`},
		{"disruption-daemonset-evicted", "DaemonSet/kube-system/ebs-csi-node", "has no pod on node ip-10-0-2-20.ec2.internal, which Karpenter is draining (karpenter.sh/disrupted:NoSchedule), while pods still use volumes there: apps/db-0 (claim data-db-0)"},
	} {
		if text := findingText(rep, c.check, c.object); !strings.Contains(text, c.want) {
			t.Errorf("%s %s does not say %q:\n%s", c.check, c.object, c.want, text)
		}
	}
	// The VolumeAttachment of db-0 is in use on the node being drained: not stale.
	if text := findingText(rep, "volumeattachment-stale", "VolumeAttachment/csi-1a2b3c4d5e6f"); text != "" {
		t.Errorf("an attachment in use is reported stale:\n%s", text)
	}
	if rep.Summary["error"] == 0 {
		t.Errorf("summary %v", rep.Summary)
	}

	text := runLive(t, "eksdoctor", nil, false, "cluster", "--kubeconfig", kc)
	for _, want := range []string{
		"Deployment/apps/web  cluster:test\n",
		"error   pod-unschedulable  Deployment/apps/web: 2 pod(s) Pending",
		"error   finalizer-stuck  NodeClaim/default-x7k2p has been deleting",
	} {
		if !strings.Contains(text.stdout, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	if text.code != ExitFindings {
		t.Errorf("text: exit %d, want %d", text.code, ExitFindings)
	}
	never := runLive(t, "eksdoctor", nil, false, "cluster", "--kubeconfig", kc, "--fail-on", "never", "-o", "json")
	if never.code != ExitOK {
		t.Errorf("--fail-on never: exit %d, want 0", never.code)
	}
}

// A user bound only to deploy/rbac.yaml reads everything the checks need: the
// report is byte for byte the admin's, and nothing is skipped.
func TestClusterWithOnlyTheDeployedRole(t *testing.T) {
	liveFixture(t)
	ctx := testContext(t)
	cfg, err := apiServer.AddUser("cli-reader")
	if err != nil {
		t.Fatal(err)
	}
	if err := apiServer.Grant(ctx, "cli-reader", readRBAC(t)); err != nil {
		t.Fatal(err)
	}
	log := &requestLog{t: t}
	reader := runLive(t, "eksdoctor", log, false, "cluster", "--kubeconfig", kubeconfigFor(t, cfg), "-o", "json")
	admin := runLive(t, "eksdoctor", nil, false, "cluster", "--kubeconfig", kubeconfigFor(t, apiServer.Config), "-o", "json")
	if reader.code != admin.code {
		t.Errorf("exit %d as the deployed role, %d as admin", reader.code, admin.code)
	}
	if diff := cmp.Diff(admin.stdout, reader.stdout); diff != "" {
		t.Errorf("report as admin (-) and as the deployed role (+):\n%s", diff)
	}
	if keys := findingKeys(parseReport(t, reader), "live-resource-skipped"); len(keys) > 0 {
		t.Errorf("deploy/rbac.yaml does not grant everything eksdoctor reads: %v", keys)
	}
	checkReadOnly(t, log.requests())
}

// A resource the credentials may not list is skipped: the run completes, says
// what it could not read (an info finding per resource, in text and JSON), and
// reports nothing it could not see.
func TestClusterSurvivesForbiddenResources(t *testing.T) {
	liveFixture(t)
	ctx := testContext(t)
	cfg, err := apiServer.AddUser("cli-partial")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []schema.GroupResource{{Resource: "pods"}, {Group: "storage.k8s.io", Resource: "volumeattachments"}}
	if err := apiServer.Grant(ctx, "cli-partial", readRBAC(t), forbidden...); err != nil {
		t.Fatal(err)
	}
	kc := kubeconfigFor(t, cfg)
	r := runLive(t, "eksdoctor", nil, false, "cluster", "--kubeconfig", kc, "-o", "json")
	if r.code != ExitFindings && r.code != ExitOK {
		t.Fatalf("exit %d: the run did not complete\n%s", r.code, r)
	}
	rep := parseReport(t, r)
	want := []string{
		"live-resource-skipped info Resource/pods",
		"live-resource-skipped info Resource/volumeattachments.storage.k8s.io",
	}
	if diff := cmp.Diff(want, findingKeys(rep, "live-resource-skipped")); diff != "" {
		t.Errorf("skipped resources (-want +got):\n%s", diff)
	}
	if text := findingText(rep, "live-resource-skipped", "Resource/pods"); !strings.Contains(text, `could not read pods: forbidden: pods is forbidden: User "cli-partial" cannot list resource "pods"`) || !strings.Contains(text, "Pending pods (pod-unschedulable, bootstrap-deadlock)") {
		t.Errorf("the pods finding does not say what and why:\n%s", text)
	}
	// Without pods there is nothing Pending and nothing evicted to report, and
	// what does not depend on pods is still found.
	for _, id := range []string{"pod-unschedulable", "bootstrap-deadlock", "disruption-daemonset-evicted", "volumeattachment-stale"} {
		if keys := findingKeys(rep, id); len(keys) > 0 {
			t.Errorf("%s reported without the resources it needs: %v", id, keys)
		}
	}
	for _, k := range []string{"nodeclaim-not-registered error EC2NodeClass/default", "disruption-toleration-missing error DaemonSet/kube-system/ebs-csi-node"} {
		if !contains(findingKeys(rep), k) {
			t.Errorf("missing %q: the readable resources were not analysed\n%s", k, strings.Join(findingKeys(rep), "\n"))
		}
	}

	text := runLive(t, "eksdoctor", nil, false, "cluster", "--kubeconfig", kc)
	for _, want := range []string{"Resource/pods  cluster:test\n", "info    live-resource-skipped  could not read pods: forbidden", "could not read volumeattachments.storage.k8s.io: forbidden"} {
		if !strings.Contains(text.stdout, want) {
			t.Errorf("text report lacks %q:\n%s", want, text.stdout)
		}
	}
}

// Credentials that may read nothing: the report says what could not be read,
// and the run exits 2 (nothing could be analysed), never 0 as if the cluster
// were healthy; the same for its snapshot.
func TestClusterThatCanReadNothing(t *testing.T) {
	liveFixture(t)
	cfg, err := apiServer.AddUser("cli-nobody")
	if err != nil {
		t.Fatal(err)
	}
	kc := kubeconfigFor(t, cfg)
	r := runLive(t, "eksdoctor", nil, false, "cluster", "--kubeconfig", kc)
	if r.code != ExitUsage {
		t.Errorf("exit %d, want %d\n%s", r.code, ExitUsage, r)
	}
	if !strings.Contains(r.stdout, "live-resource-skipped  could not read pods: forbidden") {
		t.Errorf("the report does not say what could not be read:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "nothing could be analysed: no resource of the cluster could be read") {
		t.Errorf("stderr does not say why the run failed: %q", r.stderr)
	}
	snap := filepath.Join(t.TempDir(), "nothing.json")
	if s := runLive(t, "eksdoctor", nil, false, "snapshot", "--kubeconfig", kc, "-o", snap); s.code != ExitOK {
		t.Fatalf("snapshot: %s", s)
	}
	c := runLive(t, "eksdoctor", nil, false, "check", snap)
	if c.code != ExitUsage || !strings.Contains(c.stderr, "nothing could be analysed") {
		t.Errorf("check of its snapshot: exit %d, want %d\n%s", c.code, ExitUsage, c)
	}
}

// `eksdoctor check` on a snapshot written by `eksdoctor snapshot` reports byte
// for byte what `eksdoctor cluster` reports on the same state, in every format.
func TestSnapshotThenCheckEqualsCluster(t *testing.T) {
	liveFixture(t)
	kc := kubeconfigFor(t, apiServer.Config)
	dir := t.TempDir()
	file := filepath.Join(dir, "f.json.gz")
	s := runLive(t, "eksdoctor", nil, false, "snapshot", "-o", file, "--kubeconfig", kc)
	if s.code != ExitOK || s.stdout != "" {
		t.Fatalf("snapshot: %s", s)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
		t.Errorf("%s is not gzip-compressed", file)
	}
	for _, format := range []string{"json", "text", "sarif"} {
		live := runLive(t, "eksdoctor", nil, false, "cluster", "--kubeconfig", kc, "-o", format)
		offline := runLive(t, "eksdoctor", nil, false, "check", file, "-o", format)
		if live.code != offline.code {
			t.Errorf("-o %s: cluster exits %d, check on its snapshot %d", format, live.code, offline.code)
		}
		if live.stdout != offline.stdout {
			t.Errorf("-o %s: cluster (-) and check on its snapshot (+) differ:\n%s", format, cmp.Diff(live.stdout, offline.stdout))
		}
	}
	// teardown too: the snapshot keeps the hazards of the running cluster
	// (finalizer-stuck) and its exit code.
	for _, format := range []string{"json", "text"} {
		live := runLive(t, "eksdoctor", nil, false, "teardown", "--live", "--kubeconfig", kc, "-o", format)
		offline := runLive(t, "eksdoctor", nil, false, "teardown", file, "-o", format)
		if live.code != offline.code || live.code != ExitFindings {
			t.Errorf("teardown -o %s: --live exits %d, on its snapshot %d; want %d", format, live.code, offline.code, ExitFindings)
		}
		if !strings.Contains(offline.stdout, "finalizer-stuck") {
			t.Errorf("teardown -o %s of the snapshot lacks the stuck finalizer:\n%s", format, offline.stdout)
		}
		if live.stdout != offline.stdout {
			t.Errorf("teardown -o %s: --live (-) and on its snapshot (+) differ:\n%s", format, cmp.Diff(live.stdout, offline.stdout))
		}
	}
	plain := filepath.Join(dir, "f.json")
	if r := runLive(t, "eksdoctor", nil, false, "snapshot", "-o", plain, "--kubeconfig", kc); r.code != ExitOK {
		t.Fatalf("snapshot: %s", r)
	}
	text, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(text), "{\n \"kind\": \"EKSDoctorSnapshot\",") || strings.Contains(string(text), "never-read-by-eksdoctor") {
		t.Errorf("plain snapshot: not a readable snapshot, or it holds what must never be read:\n%.300s", text)
	}
	if r := runLive(t, "eksdoctor", nil, false, "snapshot", "--kubeconfig", kc); r.code != ExitUsage || !strings.Contains(r.stderr, "snapshot needs -o FILE") {
		t.Errorf("snapshot without -o: %s", r)
	}
}

// explain reads the cluster when asked (--live) or when a cluster flag is
// given without PATH, and quotes the scheduler beside eksdoctor's explanation.
func TestExplainLive(t *testing.T) {
	liveFixture(t)
	kc := kubeconfigFor(t, apiServer.Config)
	for _, args := range [][]string{
		{"explain", "deployment/apps/web", "--live", "--kubeconfig", kc},
		{"explain", "web", "--kubeconfig", kc},
		{"explain", "web", "-n", "apps", "--kubeconfig", kc},
	} {
		r := runLive(t, "eksdoctor", nil, false, args...)
		if r.code != ExitOK {
			t.Errorf("%v: %s", args, r)
			continue
		}
		for _, want := range []string{
			"Deployment/apps/web  cluster:test\n",
			"in the cluster as it is: refuses\n",
			"pods: 2, running 0, Pending 2 (web-5d8f7c9b6-abcde, web-5d8f7c9b6-fghij)\n",
			`    kube-scheduler: "0/3 nodes are available: 1 node(s) had untolerated taint {eks.amazonaws.com/compute-type: fargate}`,
			"    eksdoctor, for pod web-5d8f7c9b6-abcde: refuses\n",
			"      - node \"ip-10-0-1-10.ec2.internal\": refuses\n          node(s) had untolerated taint {karpenter.sh/controller: true}\n",
			`label "workload" does not have known values`,
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%v: output lacks %q:\n%s", args, want, r.stdout)
			}
		}
		if strings.Contains(r.stdout, "bootstrap phase") {
			t.Errorf("%v: a running cluster has no bootstrap phase to show:\n%s", args, r.stdout)
		}
	}

	r := runLive(t, "eksdoctor", nil, false, "explain", "pod/kube-system/coredns-5d78c9869d-x4t7z", "--live", "--kubeconfig", kc, "-o", "json")
	if r.code != ExitOK {
		t.Fatalf("explain a pod: %s", r)
	}
	var doc report.ExplainDocument
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	docs := doc.Explanations
	if len(docs) != 1 || docs[0].Object != "Pod/kube-system/coredns-5d78c9869d-x4t7z" || docs[0].Pods == nil ||
		!strings.Contains(docs[0].Pods.Scheduler, "untolerated taint {karpenter.sh/controller: true}") ||
		len(docs[0].Phases) != 1 || docs[0].Phases[0].Result != "fits" {
		t.Errorf("explain of a Pending pod: %s", r.stdout)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"explain", "web", ".", "--live", "--kubeconfig", kc}, "--live reads the running cluster"},
		{[]string{"explain", "web", ".", "--context", "test"}, "--context, --kubeconfig and --namespace select a running cluster, which is read without PATH arguments"},
		{[]string{"explain", "nothing-called-this", "--live", "--kubeconfig", kc}, `no workload "nothing-called-this" in the cluster`},
		{[]string{"explain", "web", "-n", "kube-system", "--kubeconfig", kc}, `no workload "web" in namespace kube-system of the cluster`},
		{[]string{"cluster", "--kubeconfig", kc, "--request-timeout", "soon"}, `--request-timeout "soon"`},
	} {
		r := runLive(t, "eksdoctor", nil, false, c.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: want exit %d and %q; got %s", c.args, ExitUsage, c.want, r)
		}
	}
}

// teardown --live prints the safe order for the cluster as it is, what blocks
// each step now and the commands to run, and reports the stuck finalizer.
func TestTeardownLive(t *testing.T) {
	liveFixture(t)
	kc := kubeconfigFor(t, apiServer.Config)
	r := runLive(t, "eksdoctor", nil, false, "teardown", "--live", "--kubeconfig", kc)
	if r.code != ExitFindings {
		t.Fatalf("exit %d, want %d (the stuck NodeClaim is an error)\n%s", r.code, ExitFindings, r)
	}
	// The steps, in order, each with its blockers and commands.
	want := []string{
		"1. Delete the NodePools and wait until no NodeClaim remains\n",
		"   - NodePool/default  cluster:test\n",
		"       still present: NodeClaim default-q9w8e (finalizers karpenter.sh/termination)\n",
		"       still present: NodeClaim default-x7k2p (deleting; finalizers karpenter.sh/termination)\n",
		"   blocked now: the Karpenter controller is not ready (Deployment kube-system/karpenter has 0 of 1 pods ready)",
		"   blocked now: NodeClaim default-x7k2p is stuck being deleted (finalizer karpenter.sh/termination), instance i-0fedcba9876543210 still runs",
		"   $ kubectl delete nodepools.karpenter.sh default\n",
		"   $ kubectl wait --for=delete nodeclaims.karpenter.sh --all --timeout=30m\n",
		"2. Delete the EC2NodeClasses\n",
		"   blocked now: 2 NodeClaim(s) still exist (default-q9w8e, default-x7k2p)",
		"   $ kubectl delete ec2nodeclasses.karpenter.k8s.aws default --wait --timeout=15m\n",
		"3. Uninstall the Karpenter controller\n",
		"   - helm release karpenter (namespace kube-system) (Deployment/kube-system/karpenter), managed by helm  cluster:test\n",
		"   $ helm uninstall karpenter --namespace kube-system --wait\n",
		"4. Remove the node group or Fargate profile that runs the Karpenter controller\n",
		"   - node group \"system\", managed by aws\n",
		"       still present: node ip-10-0-1-10.ec2.internal runs karpenter-6b7f9d8c5-k8r2p\n",
		"   $ aws eks delete-nodegroup --cluster-name demo --nodegroup-name system\n",
		"Hazards\n",
		"  error finalizer-stuck  cluster:test\n    NodeClaim/default-x7k2p has been deleting",
		"Note: eksdoctor only prints these commands; it changes nothing in the cluster.\n",
	}
	pos := 0
	for _, w := range want {
		i := strings.Index(r.stdout[pos:], w)
		if i < 0 {
			t.Errorf("teardown plan lacks, or has out of order, %q:\n%s", w, r.stdout)
			continue
		}
		pos += i + len(w)
	}
	if strings.Contains(r.stdout, "kubectl delete -f cluster:") {
		t.Errorf("a command names the cluster as a file:\n%s", r.stdout)
	}

	j := runLive(t, "eksdoctor", nil, false, "teardown", "--live", "--kubeconfig", kc, "-o", "json")
	var plan report.TeardownPlan
	if err := json.Unmarshal([]byte(j.stdout), &plan); err != nil {
		t.Fatalf("%v\n%s", err, j)
	}
	var stages []string
	for _, st := range plan.Steps {
		stages = append(stages, st.Stage)
	}
	if diff := cmp.Diff([]string{"nodepools", "nodeclasses", "karpenter-controller", "controller-compute"}, stages); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
	if len(plan.Steps) > 0 && len(plan.Steps[0].Blockers) != 2 {
		t.Errorf("NodePool step blockers = %q, want the controller and the stuck NodeClaim", plan.Steps[0].Blockers)
	}
	if len(plan.Hazards) != 1 || plan.Hazards[0].Check != "finalizer-stuck" {
		t.Errorf("hazards = %+v, want the stuck NodeClaim", plan.Hazards)
	}
}

// Running as `kubectl eksdoctor`: usage says so, and explain and teardown read
// the cluster of KUBECONFIG without PATH, --live or --kubeconfig, as kubectl
// users expect.
func TestKubectlPlugin(t *testing.T) {
	liveFixture(t)
	help := runLive(t, "kubectl-eksdoctor", nil, false, "cluster", "--help")
	for _, want := range []string{"kubectl eksdoctor cluster [flags]", "kubectl eksdoctor cluster --context prod -n apps -o json", "-n, --namespace string", "--context string", "--request-timeout string"} {
		if !strings.Contains(help.stdout, want) {
			t.Errorf("plugin help lacks %q:\n%s", want, help.stdout)
		}
	}
	if strings.Contains(help.stdout, "\n  eksdoctor ") || strings.Contains(help.stdout, "'eksdoctor ") || strings.Contains(help.stdout, "kubectl kubectl") {
		t.Errorf("plugin help still says eksdoctor alone:\n%s", help.stdout)
	}
	root := runLive(t, "kubectl-eksdoctor", nil, false, "--help")
	if !strings.Contains(root.stdout, "kubectl eksdoctor [command]") {
		t.Errorf("plugin usage:\n%s", root.stdout)
	}

	t.Setenv("KUBECONFIG", kubeconfigFor(t, apiServer.Config))
	r := runLive(t, "kubectl-eksdoctor", nil, false, "explain", "web", "-n", "apps")
	if r.code != ExitOK || !strings.Contains(r.stdout, "pods: 2, running 0, Pending 2") {
		t.Errorf("kubectl eksdoctor explain web -n apps did not read the cluster: %s", r)
	}
	r = runLive(t, "kubectl-eksdoctor", nil, false, "teardown", "--namespace=apps", "--context=test")
	if !strings.Contains(r.stdout, "1. Delete the NodePools") {
		t.Errorf("kubectl eksdoctor teardown did not read the cluster: %s", r)
	}
	r = runLive(t, "kubectl-eksdoctor", nil, false, "cluster", "--context", "nope")
	if r.code != ExitUsage || !strings.HasPrefix(r.stderr, "kubectl eksdoctor: read the cluster: ") || !strings.Contains(r.stderr, `"nope"`) {
		t.Errorf("unknown context: %s", r)
	}
}

// -n reads one namespace, like kubectl: workloads elsewhere are neither read nor
// reported, and the controller's state, in another namespace, is unknown.
func TestClusterNamespace(t *testing.T) {
	liveFixture(t)
	log := &requestLog{t: t}
	r := runLive(t, "eksdoctor", log, false, "cluster", "--kubeconfig", kubeconfigFor(t, apiServer.Config), "-n", "apps", "-o", "json")
	rep := parseReport(t, r)
	got := findingKeys(rep, liveIDs...)
	want := []string{
		"finalizer-stuck info NodeClaim/default-x7k2p",
		"nodeclaim-not-registered error EC2NodeClass/default",
		"pod-unschedulable error Deployment/apps/web",
		"volumeattachment-stale error VolumeAttachment/csi-2b3c4d5e6f7a",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings with -n apps (-want +got):\n%s\n%s", diff, r)
	}
	if text := findingText(rep, "finalizer-stuck", "NodeClaim/default-x7k2p"); !strings.Contains(text, `the read was restricted to namespace "apps"`) {
		t.Errorf("finalizer-stuck does not say why it could not verify:\n%s", text)
	}
	for _, l := range log.requests() {
		if strings.Contains(l, "/pods") && !strings.Contains(l, "/namespaces/apps/pods") {
			t.Errorf("pods read outside namespace apps: %s", l)
		}
	}
}

// Progress goes to stderr only when stderr is a terminal, so redirected output
// stays clean.
func TestClusterProgressOnlyOnATerminal(t *testing.T) {
	liveFixture(t)
	kc := kubeconfigFor(t, apiServer.Config)
	tty := runLive(t, "eksdoctor", nil, true, "cluster", "--kubeconfig", kc, "-o", "json")
	if !strings.Contains(tty.stderr, "reading cluster: ") || !strings.HasSuffix(tty.stderr, " objects\n") {
		t.Errorf("no progress on a terminal: %q", tty.stderr)
	}
	if strings.Contains(tty.stdout, "reading cluster") {
		t.Error("progress written to stdout")
	}
	piped := runLive(t, "eksdoctor", nil, false, "cluster", "--kubeconfig", kc, "-o", "json")
	if piped.stderr != "" {
		t.Errorf("stderr not a terminal, yet: %q", piped.stderr)
	}
}

// Every live command only reads: each request is a GET, no Secret is touched,
// and the only ConfigMap read is kube-system/aws-auth.
func TestLiveCommandsOnlyRead(t *testing.T) {
	liveFixture(t)
	kc := kubeconfigFor(t, apiServer.Config)
	dir := t.TempDir()
	for _, args := range [][]string{
		{"cluster", "--kubeconfig", kc},
		{"cluster", "--kubeconfig", kc, "-n", "apps"},
		{"snapshot", "-o", filepath.Join(dir, "s.json"), "--kubeconfig", kc},
		{"explain", "web", "--live", "--kubeconfig", kc},
		{"teardown", "--live", "--kubeconfig", kc},
	} {
		log := &requestLog{t: t}
		r := runLive(t, "eksdoctor", log, false, args...)
		if r.code == ExitUsage {
			t.Errorf("%v: %s", args, r)
		}
		reqs := log.requests()
		if len(reqs) < 10 {
			t.Errorf("%v: only %d requests recorded: %v", args, len(reqs), reqs)
		}
		checkReadOnly(t, reqs)
	}
}

func checkReadOnly(t *testing.T, reqs []string) {
	t.Helper()
	for _, l := range reqs {
		if !strings.HasPrefix(l, "GET ") {
			t.Errorf("not a read: %s", l)
		}
		if strings.Contains(l, "secrets") {
			t.Errorf("Secrets requested: %s", l)
		}
		if strings.Contains(l, "configmaps") && !strings.HasPrefix(l, "GET /api/v1/namespaces/kube-system/configmaps/aws-auth") {
			t.Errorf("a ConfigMap other than kube-system/aws-auth read: %s", l)
		}
	}
}

func readRBAC(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
