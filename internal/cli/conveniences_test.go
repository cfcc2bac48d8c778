package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/eksdoctor/eksdoctor/bench"
)

// broken is the example configuration with errors and warnings.
const broken = "../../examples/broken"

// TestFlagSuggestion: a mistyped flag names the flag meant, as a mistyped
// check ID or command does; a flag far from every other is left as it is.
func TestFlagSuggestion(t *testing.T) {
	t.Parallel()
	_, stderr, code := runCLI(t, "check", "--summry", broken)
	if code != ExitUsage || !strings.Contains(stderr, "unknown flag --summry; did you mean --summary?") {
		t.Errorf("check --summry: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = runCLI(t, "teardown", "--outptu", "json", broken)
	if code != ExitUsage || !strings.Contains(stderr, "unknown flag --outptu; did you mean --output?") {
		t.Errorf("teardown --outptu: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = runCLI(t, "check", "--zzzzzzzz", broken)
	if code != ExitUsage || strings.Contains(stderr, "did you mean") || !strings.Contains(stderr, "unknown flag: --zzzzzzzz") {
		t.Errorf("check --zzzzzzzz: exit %d, stderr %q", code, stderr)
	}
}

// complete runs cobra's completion command and returns the candidates.
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	stdout, stderr, code := runCLI(t, append([]string{"__complete"}, args...)...)
	if code != ExitOK {
		t.Fatalf("__complete %v: exit %d: %s", args, code, stderr)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if !strings.HasPrefix(l, ":") {
			out = append(out, l)
		}
	}
	return out
}

func TestFlagValueCompletion(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"check", "-o", ""}, outputs},
		{[]string{"check", "--output", "c"}, []string{"compact"}},
		{[]string{"teardown", "-o", ""}, []string{"text", "json", "dot", "mermaid", "html"}},
		{[]string{"explain", "-o", ""}, []string{"text", "json", "mermaid"}},
		{[]string{"check", "--fail-on", ""}, []string{"error", "warning", "info", "never"}},
		{[]string{"cluster", "--min-severity", "w"}, []string{"warning"}},
		{[]string{"check", "--min-severity", ""}, []string{"error", "warning", "info"}},
		{[]string{"check", "--enable", "pod-uns"}, []string{"pod-unschedulable"}},
		{[]string{"check", "--disable", "pod-unschedulable,bootstrap-dead"}, []string{"pod-unschedulable,bootstrap-deadlock"}},
	} {
		if got := complete(t, c.args...); !slices.Equal(got, c.want) {
			t.Errorf("__complete %q = %q, want %q", c.args, got, c.want)
		}
	}
	// Every check is offered, and one already in the list is not again.
	all := complete(t, "check", "--enable", "pod-unschedulable,")
	if len(all) != len(checkIDs())-1 || slices.Contains(all, "pod-unschedulable,pod-unschedulable") {
		t.Errorf("--enable pod-unschedulable, offers %d of %d checks: %q", len(all), len(checkIDs()), all)
	}
}

const noCapacity = `apiVersion: apps/v1
kind: Deployment
metadata: {name: %s, namespace: apps}
spec:
  selector: {matchLabels: {app: x}}
  template:
    metadata: {labels: {app: x}}
    spec:
      nodeSelector: {workload: none}
      containers: [{name: c, image: x}]
`

// excludeTree has a Deployment no capacity fits at the top, in
// infra/legacy and in infra/apps.
func excludeTree(t *testing.T) string {
	return writeFiles(t, map[string]string{
		"cluster.yaml":            "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: demo, region: eu-west-1}\nmanagedNodeGroups:\n- name: system\n  instanceType: m5.large\n",
		"legacy/top.yaml":         strings.Replace(noCapacity, "%s", "top", 1),
		"infra/legacy/old.yaml":   strings.Replace(noCapacity, "%s", "old", 1),
		"infra/apps/current.yaml": strings.Replace(noCapacity, "%s", "current", 1),
	})
}

// reported are the objects of a JSON report's findings of pod-unschedulable.
func reported(t *testing.T, stdout string) []string {
	t.Helper()
	var doc struct {
		Findings []struct {
			Check  string `json:"check"`
			Object struct {
				Name string `json:"name"`
			} `json:"object"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	var out []string
	for _, f := range doc.Findings {
		if f.Check == "pod-unschedulable" {
			out = append(out, f.Object.Name)
		}
	}
	slices.Sort(out)
	return out
}

func TestExclude(t *testing.T) {
	t.Parallel()
	dir := excludeTree(t)
	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"none", nil, []string{"current", "old", "top"}},
		// Without a leading slash: at any depth.
		{"any depth", []string{"--exclude", "legacy/**"}, []string{"current"}},
		{"repeated", []string{"--exclude", "legacy/**", "--exclude", "current.yaml"}, nil},
		// With one: from the directory given (or the working directory).
		{"anchored", []string{"--exclude", "/legacy/**"}, []string{"current", "old"}},
		{"anchored nested", []string{"--exclude", "/infra/legacy/**"}, []string{"current", "top"}},
		{"dot anchored", []string{"--exclude", "./infra/*/old.yaml"}, []string{"current", "top"}},
	} {
		stdout, stderr, _ := runCLI(t, append([]string{"check", dir, "-o", "json"}, c.args...)...)
		if got := reported(t, stdout); !slices.Equal(got, c.want) {
			t.Errorf("%s: check %q reports %q, want %q\n%s", c.name, c.args, got, c.want, stderr)
		}
	}
	// The configuration's exclude means the same.
	for pattern, want := range map[string][]string{
		"legacy/**":        {"current"},
		"/legacy/**":       {"current", "old"},
		"/infra/legacy/**": {"current", "top"},
	} {
		cfg := filepath.Join(t.TempDir(), "eksdoctor.yaml")
		if err := os.WriteFile(cfg, []byte("exclude: [\""+pattern+"\"]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, _ := runCLI(t, "check", dir, "-o", "json", "--config", cfg)
		if got := reported(t, stdout); !slices.Equal(got, want) {
			t.Errorf("configuration exclude %q reports %q, want %q\n%s", pattern, got, want, stderr)
		}
	}
	// teardown and explain take it too; a malformed pattern is a usage error.
	if _, stderr, code := runCLI(t, "teardown", dir, "--exclude", "legacy/**"); code == ExitUsage {
		t.Errorf("teardown --exclude: %s", stderr)
	}
	_, stderr, code := runCLI(t, "explain", "old", dir, "--exclude", "legacy/**")
	if code != ExitUsage || !strings.Contains(stderr, "workload Deployment/apps/old is declared in") || !strings.Contains(stderr, "exclude drops") {
		t.Errorf("explain of an excluded workload: exit %d, %s", code, stderr)
	}
	if stdout, stderr, code := runCLI(t, "explain", "current", dir, "--exclude", "legacy/**"); code != ExitOK || !strings.Contains(stdout, "Deployment/apps/current") {
		t.Errorf("explain of a workload not excluded: exit %d, %s%s", code, stdout, stderr)
	}
	if _, stderr, code := runCLI(t, "check", dir, "--exclude", "legacy/[x"); code != ExitUsage || !strings.Contains(stderr, "not a valid pattern") {
		t.Errorf("malformed pattern: exit %d, %s", code, stderr)
	}
}

// TestMinSeverity: --min-severity narrows what is shown, in every format;
// --fail-on still decides the exit code on every finding.
func TestMinSeverity(t *testing.T) {
	t.Parallel()
	stdout, _, code := runCLI(t, "check", broken, "-o", "json", "--min-severity", "error")
	if code != ExitFindings {
		t.Errorf("exit %d, want 1", code)
	}
	if strings.Contains(stdout, `"severity": "warning"`) || !strings.Contains(stdout, `"severity": "error"`) {
		t.Errorf("--min-severity error shows other severities:\n%s", stdout)
	}
	// Only warnings found, only errors shown: the warnings still fail the run.
	args := []string{"check", broken, "--enable", "helm-values-unknown,teardown-orphans", "--fail-on", "warning"}
	stdout, _, code = runCLI(t, append(args, "--min-severity", "error")...)
	if code != ExitFindings || !strings.Contains(stdout, "0 errors, 0 warnings, 0 info") || !strings.Contains(stdout, "--min-severity error leaves out 3 finding(s)") {
		t.Errorf("--min-severity error --fail-on warning: exit %d\n%s", code, stdout)
	}
	stdout, _, code = runCLI(t, append(args, "--min-severity", "warning")...)
	if code != ExitFindings || !strings.Contains(stdout, "0 errors, 3 warnings, 0 info") {
		t.Errorf("--min-severity warning: exit %d\n%s", code, stdout)
	}
	for _, format := range []string{"compact", "sarif", "github", "markdown", "junit"} {
		stdout, _, _ := runCLI(t, append(args, "--min-severity", "error", "-o", format)...)
		shown := strings.Contains(stdout, "does not wait for Karpenter to finalize") || strings.Contains(stdout, "sets settings.interruptionQueueName")
		if format == "sarif" {
			shown = strings.Contains(stdout, `"ruleId"`)
		}
		if shown {
			t.Errorf("-o %s --min-severity error shows a warning:\n%s", format, stdout)
		}
	}
	stdout, _, code = runCLI(t, "teardown", broken, "-o", "json", "--min-severity", "error")
	if code != ExitFindings || strings.Contains(stdout, "teardown-orphans") || !strings.Contains(stdout, "teardown-order") {
		t.Errorf("teardown --min-severity error: exit %d\n%s", code, stdout)
	}
	if _, stderr, code := runCLI(t, "check", broken, "--min-severity", "fatal"); code != ExitUsage || !strings.Contains(stderr, "--min-severity") {
		t.Errorf("--min-severity fatal: exit %d %s", code, stderr)
	}
}

var compactLine = regexp.MustCompile(`^[^ :]+:\d+: (error|warning|info) [a-z0-9-]+: \S`)

func TestCompact(t *testing.T) {
	t.Parallel()
	stdout, _, code := runCLI(t, "check", broken, "-o", "compact")
	if code != ExitFindings {
		t.Errorf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	js, _, _ := runCLI(t, "check", broken, "-o", "json")
	var doc struct{ Findings []json.RawMessage }
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if len(lines) != len(doc.Findings) {
		t.Errorf("%d lines for %d findings:\n%s", len(lines), len(doc.Findings), stdout)
	}
	for _, l := range lines {
		if !compactLine.MatchString(l) {
			t.Errorf("not file:line: severity check: summary: %q", l)
		}
	}
	// In the order of the text report: an object's most severe first.
	if !strings.Contains(stdout, "main.tf:128: error disruption-toleration-missing: DaemonSet/kube-system/ebs-csi-node") ||
		strings.Index(stdout, "main.tf:128: error") > strings.Index(stdout, "main.tf:128: warning") {
		t.Errorf("order differs from the text report's:\n%s", stdout)
	}
	again, _, _ := runCLI(t, "check", broken, "-o", "compact")
	if again != stdout {
		t.Error("two runs differ")
	}
	if strings.Contains(stdout, "\x1b") {
		t.Error("colored without a terminal")
	}
	// --write compact=FILE writes the same.
	file := filepath.Join(t.TempDir(), "findings.txt")
	if _, stderr, _ := runCLI(t, "check", broken, "-o", "json", "--write", "compact="+file); stderr != "" {
		t.Fatal(stderr)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != stdout {
		t.Errorf("--write compact: %v\n%s", err, b)
	}
	// Names from the input are escaped as in every text format.
	dir := writeFiles(t, map[string]string{
		"cluster.yaml": "apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: demo, region: eu-west-1}\nmanagedNodeGroups:\n- name: system\n  instanceType: m5.large\n",
		"app.yaml":     strings.Replace(noCapacity, "%s", `"web\e[31m\n::error::x"`, 1),
	})
	stdout, _, _ = runCLI(t, "check", dir, "-o", "compact")
	if strings.ContainsAny(stdout, "\x1b") || !strings.Contains(stdout, `web\x1b[31m\n::error::x`) || strings.Count(stdout, "\n") != strings.Count(stdout, ": error ")+strings.Count(stdout, ": warning ")+strings.Count(stdout, ": info ") {
		t.Errorf("control characters not escaped:\n%q", stdout)
	}
}

func TestExplainSuggestsWorkloads(t *testing.T) {
	t.Parallel()
	for arg, want := range map[string]string{
		"chekout":             `no workload "chekout" in the inputs; did you mean shop/checkout?`,
		"shop/checkot":        "did you mean shop/checkout?",
		"deployment/corednss": "did you mean deployment/kube-system/coredns?",
	} {
		_, stderr, code := runCLI(t, "explain", arg, broken)
		if code != ExitUsage || !strings.Contains(stderr, want) {
			t.Errorf("explain %s: exit %d, %q, want %q", arg, code, stderr, want)
		}
	}
	_, stderr, _ := runCLI(t, "explain", "qqqqqqqqqq", broken)
	if strings.Contains(stderr, "did you mean") || !strings.Contains(stderr, "(workloads: ") {
		t.Errorf("explain of a name near none: %q", stderr)
	}
}

func TestServeHelpShowsItsOwnFlags(t *testing.T) {
	t.Parallel()
	stdout, _, _ := runCLI(t, "serve", "--help")
	for _, own := range []string{"--listen", "--interval", "--kubeconfig", "--enable", "--disable", "--config"} {
		if !strings.Contains(stdout, own) {
			t.Errorf("serve --help lacks %s", own)
		}
	}
	for _, other := range []string{"--output", "-o,", "--fail-on", "--min-severity", "--write", "--summary", "--exclude"} {
		if strings.Contains(stdout, other) {
			t.Errorf("serve --help offers %s, which serve does not use:\n%s", other, stdout)
		}
	}
	if _, stderr, code := runCLI(t, "serve", "-o", "text"); code != ExitUsage || !strings.Contains(stderr, "unknown shorthand flag") {
		t.Errorf("serve -o: exit %d %s", code, stderr)
	}
}

// TestNoKubeconfig: without any configuration, the live commands say where
// they looked, not client-go's advice to set KUBERNETES_MASTER.
func TestNoKubeconfig(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-kubeconfig")
	t.Setenv("KUBECONFIG", missing)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBERNETES_SERVICE_PORT", "")
	for _, args := range [][]string{{"cluster"}, {"snapshot", "-o", "-"}, {"serve", "--listen", "127.0.0.1:0"}, {"explain", "web", "--live"}} {
		_, stderr, code := runCLI(t, args...)
		if code != ExitUsage || strings.Contains(stderr, "KUBERNETES_MASTER") {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
		for _, want := range []string{"no kubeconfig found", "the KUBECONFIG variable (" + missing + ": no such file", "the in-cluster service account (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT not set", "--kubeconfig"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%v: %q lacks %q", args, stderr, want)
			}
		}
	}
}

// TestGroupHeadersOfALargeConfiguration: on the generated 5,000-workload
// configuration, no two group headers read alike: each names, in its first
// line, what sets it apart.
func TestGroupHeadersOfALargeConfiguration(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("generates and checks 5,000 workloads")
	}
	dir := t.TempDir()
	if _, err := bench.Generate(dir, bench.Large); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, _ := runCLI(t, "check", dir)
	var headers []string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.Contains(l, " × ") && strings.Contains(l, "one cause: ") {
			headers = append(headers, l)
		}
	}
	if len(headers) < 10 {
		t.Fatalf("%d group headers, want the many of the generated configuration:\n%s", len(headers), stderr)
	}
	seen := map[string]bool{}
	for _, h := range headers {
		// The count is not what tells groups apart.
		_, rest, _ := strings.Cut(h, " × ")
		if seen[rest] {
			t.Errorf("two group headers read %q", rest)
		}
		seen[rest] = true
		if len([]rune(h)) > 400 {
			t.Errorf("header of %d characters: %q", len([]rune(h)), h)
		}
	}
	t.Logf("%d group headers", len(headers))
}
