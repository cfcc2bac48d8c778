package report_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/report"
)

var update = flag.Bool("update", false, "rewrite golden files")

// findings is a fixed set covering every shape a report renders: a fix with two
// edits, a finding without a file (live), a file-level problem without an object,
// multi-line details and every severity.
func findings() []lint.Finding {
	fs := []lint.Finding{
		{
			Check: "bootstrap-deadlock", Severity: lint.Error,
			Object:  cluster.ObjectRef{Kind: "Deployment", Namespace: "kube-system", Name: "karpenter"},
			Origin:  cluster.Origin{File: "infra/main.tf", Line: 42},
			Summary: "Deployment/kube-system/karpenter fits only Karpenter capacity: 0/1 node groups are available: 1 node group(s) had untolerated taint {karpenter.sh/controller: true}.",
			Detail:  "It must run in the bootstrap phase.\nIn the bootstrap phase:\n  - node group \"karpenter\": refuses: node(s) had untolerated taint {karpenter.sh/controller: true}",
			Fix: &lint.Fix{Summary: "tolerate karpenter.sh/controller:NoSchedule", Edits: []lint.Edit{
				{File: "infra/main.tf", Line: 50, Format: lint.FormatValues, Text: "tolerations:\n- key: karpenter.sh/controller\n  operator: Exists\n"},
				{File: "infra/values.yaml", Line: 1, Format: lint.FormatYAML, Text: "a: b\n"},
			}},
		},
		{
			Check: "invalid-input", Severity: lint.Error,
			Origin:  cluster.Origin{File: "manifests/bad file.yaml", Line: 7},
			Summary: "YAML syntax error: mapping values are not allowed in this context",
		},
		{
			Check: "teardown-orphans", Severity: lint.Warning,
			Object:  cluster.ObjectRef{Kind: "NodePool", Name: "default"},
			Origin:  cluster.Origin{File: "karpenter.yaml", Line: 1},
			Summary: "NodePool/default is applied out of band",
		},
		{
			Check: "pod-unschedulable", Severity: lint.Info,
			Object:  cluster.ObjectRef{Kind: "Pod", Namespace: "default", Name: "web-0"},
			Origin:  cluster.Origin{File: "cluster:prod"},
			Summary: "Pod/default/web-0: could not verify",
		},
	}
	lint.Sort(fs)
	return fs
}

// sarifOptions exercise what SARIF says beyond the findings: a fix as line
// changes, a suppressed finding shown, a file under the source root given by
// its absolute path and one outside it.
func sarifOptions() report.Options {
	sup := lint.Finding{Check: "helm-values-unknown", Severity: lint.Warning,
		Object:     cluster.ObjectRef{Kind: "HelmRelease", Namespace: "kube-system", Name: "karpenter"},
		Origin:     cluster.Origin{File: "/src/repo/infra/main.tf", Line: 120},
		Summary:    "helm_release.karpenter sets settings.x, which chart karpenter 1.0.8 never reads",
		Suppressed: &lint.Suppressed{By: "comment", Origin: cluster.Origin{File: "/src/repo/infra/main.tf", Line: 99}, Reason: "wrapper chart"}}
	base := lint.Finding{Check: "teardown-orphans", Severity: lint.Warning,
		Object:     cluster.ObjectRef{Kind: "NodePool", Name: "spot"},
		Origin:     cluster.Origin{File: "/elsewhere/pools.yaml", Line: 3},
		Summary:    "NodePool/spot is applied out of band",
		Suppressed: &lint.Suppressed{By: "baseline", Origin: cluster.Origin{File: "base.json"}}}
	return report.Options{
		Root:           "/src/repo",
		ShowSuppressed: true,
		Suppressed:     []lint.Finding{sup, base},
		Changes: func(f lint.Finding) []report.TextChange {
			if f.Check != "bootstrap-deadlock" {
				return nil
			}
			return []report.TextChange{
				{File: "infra/main.tf", StartLine: 50, EndLine: 52, Text: "  tolerations = []\n"},
				{File: "infra/values.yaml", StartLine: 1, EndLine: 0, Text: "a: b\n"},
			}
		},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", name, diff)
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := report.Text(&b, findings(), report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "findings.txt", b.Bytes())
	if strings.Contains(b.String(), "\x1b[") {
		t.Errorf("colors without a terminal")
	}
	b.Reset()
	if err := report.Text(&b, findings(), report.TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\x1b[31merror") {
		t.Errorf("errors are not red on a terminal")
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := report.JSON(&b, findings()); err != nil {
		t.Fatal(err)
	}
	golden(t, "findings.json", b.Bytes())

	// The documented schema: exactly these keys.
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["version"] != float64(1) {
		t.Errorf("version = %v", doc["version"])
	}
	var f map[string]any
	for _, x := range doc["findings"].([]any) {
		if m := x.(map[string]any); m["check"] == "bootstrap-deadlock" {
			f = m
		}
	}
	var keys []string
	for k := range f {
		keys = append(keys, k)
	}
	// The keys of version 1, and those added since (fingerprint).
	want := []string{"check", "detail", "fingerprint", "fix", "object", "origin", "severity", "summary"}
	if diff := cmp.Diff(want, sorted(keys)); diff != "" {
		t.Errorf("finding keys (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"error": float64(2), "warning": float64(1), "info": float64(1), "suppressed": float64(0), "baseline": float64(0)}, doc["summary"]); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}

func TestJSONHasNoFindingsAsEmptyList(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := report.JSON(&b, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"findings": []`) {
		t.Errorf("no findings must render as an empty list:\n%s", b.String())
	}
}

func TestOutputIsByteStable(t *testing.T) {
	t.Parallel()
	render := func() string {
		var b bytes.Buffer
		report.Text(&b, findings(), report.TextOptions{})
		report.JSON(&b, findings())
		report.SARIF(&b, findings(), lint.Checks(), "1.2.3")
		return b.String()
	}
	first := render()
	for i := 0; i < 5; i++ {
		if render() != first {
			t.Fatal("rendering the same findings twice gave different bytes")
		}
	}
}

// sarifSchema returns the SARIF 2.1.0 schema, fetched by hack/sarif-schema.sh
// (EKSDOCTOR_SARIF_SCHEMA points at it when the test script has run it).
func sarifSchema(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("EKSDOCTOR_SARIF_SCHEMA"); p != "" {
		return p
	}
	out, err := exec.Command(filepath.Join("..", "hack", "sarif-schema.sh")).Output()
	if err != nil {
		t.Fatalf("fetch the SARIF schema with hack/sarif-schema.sh: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func TestSARIFValidatesAgainstTheSchema(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := report.SARIF(&b, findings(), lint.Checks(), "1.2.3", sarifOptions()); err != nil {
		t.Fatal(err)
	}
	golden(t, "findings.sarif", b.Bytes())

	schemaPath := sarifSchema(t)
	c := jsonschema.NewCompiler()
	sch, err := c.Compile(schemaPath)
	if err != nil {
		t.Fatalf("compile SARIF schema: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("SARIF output does not validate against the 2.1.0 schema:\n%v", err)
	}

	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Rules []struct{ ID string } `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Locations []struct {
					PhysicalLocation *struct {
						ArtifactLocation struct{ URI string }     `json:"artifactLocation"`
						Region           *struct{ StartLine int } `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if len(run.Tool.Driver.Rules) != len(lint.Checks()) {
		t.Errorf("rules = %d, want one per check (%d)", len(run.Tool.Driver.Rules), len(lint.Checks()))
	}
	for _, r := range run.Results {
		if run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID {
			t.Errorf("result %s points at rule %d (%s)", r.RuleID, r.RuleIndex, run.Tool.Driver.Rules[r.RuleIndex].ID)
		}
	}
	// Real locations: the first result is at infra/main.tf:42; the live finding
	// has no physical location; a space in a path is escaped.
	var uris []string
	for _, r := range run.Results {
		for _, l := range r.Locations {
			if l.PhysicalLocation != nil {
				line := 0
				if l.PhysicalLocation.Region != nil {
					line = l.PhysicalLocation.Region.StartLine
				}
				uris = append(uris, l.PhysicalLocation.ArtifactLocation.URI+":"+strconv.Itoa(line))
			}
		}
	}
	// The suppressed findings follow: an absolute path under the source root
	// is relative to it; one outside it is an absolute file URI.
	want := []string{"infra/main.tf:42", "karpenter.yaml:1", "manifests/bad%20file.yaml:7", "infra/main.tf:120", "file:///elsewhere/pools.yaml:3"}
	if diff := cmp.Diff(want, uris); diff != "" {
		t.Errorf("locations (-want +got):\n%s", diff)
	}
	sarifRulesAndFixes(t, b.Bytes())
}

// sarifRulesAndFixes checks what the SARIF log out says beyond locations:
// every rule's help page exists, suppressions have their kind, and the fix
// replaces whole lines.
func sarifRulesAndFixes(t *testing.T, out []byte) {
	t.Helper()
	var doc struct {
		Runs []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID      string `json:"id"`
						HelpURI string `json:"helpUri"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID       string `json:"ruleId"`
				Suppressions []struct {
					Kind string `json:"kind"`
				} `json:"suppressions"`
				Fixes []struct {
					ArtifactChanges []struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Replacements []struct {
							DeletedRegion struct {
								StartLine, EndLine int
							} `json:"deletedRegion"`
						} `json:"replacements"`
					} `json:"artifactChanges"`
				} `json:"fixes"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc.Runs[0].Tool.Driver.Rules {
		if r.HelpURI != report.CheckDocURL(r.ID) || !strings.HasSuffix(r.HelpURI, "/docs/checks/"+r.ID+".md") {
			t.Errorf("rule %s: helpUri %q", r.ID, r.HelpURI)
		}
		if _, err := os.Stat(filepath.Join("..", "docs", "checks", r.ID+".md")); err != nil {
			t.Errorf("rule %s: helpUri names a page the repository lacks: %v", r.ID, err)
		}
	}
	var kinds []string
	fixes := 0
	for _, r := range doc.Runs[0].Results {
		for _, s := range r.Suppressions {
			kinds = append(kinds, r.RuleID+" "+s.Kind)
		}
		for _, f := range r.Fixes {
			fixes++
			if len(f.ArtifactChanges) != 2 || f.ArtifactChanges[0].ArtifactLocation.URI != "infra/main.tf" ||
				f.ArtifactChanges[0].Replacements[0].DeletedRegion.StartLine != 50 || f.ArtifactChanges[0].Replacements[0].DeletedRegion.EndLine != 53 {
				t.Errorf("fix of %s: %+v, want lines 50-52 of infra/main.tf replaced (to the start of line 53), then values.yaml", r.RuleID, f)
			}
		}
	}
	if diff := cmp.Diff([]string{"helm-values-unknown inSource", "teardown-orphans external"}, kinds); diff != "" {
		t.Errorf("suppressions (-want +got):\n%s", diff)
	}
	if fixes != 1 {
		t.Errorf("%d fixes, want the bootstrap-deadlock one", fixes)
	}
}

// TestSARIFMultitoolValidates runs Microsoft's SARIF validator (the multitool the
// schema comes with) over the output when it is installed beside the schema.
func TestSARIFMultitoolValidates(t *testing.T) {
	t.Parallel()
	tool := filepath.Join(filepath.Dir(sarifSchema(t)), "Sarif.Multitool")
	if _, err := os.Stat(tool); err != nil {
		t.Fatalf("the SARIF multitool is missing beside the schema: %v", err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "out.sarif")
	var b bytes.Buffer
	if err := report.SARIF(&b, findings(), lint.Checks(), "1.2.3", sarifOptions()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tool, "validate", in, "--output", filepath.Join(dir, "validation.sarif"))
	cmd.Env = append(os.Environ(), "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("Sarif.Multitool validate: %v\n%s", err, out)
	}
	res, err := os.ReadFile(filepath.Join(dir, "validation.sarif"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Runs []struct {
			Results []struct {
				Level   string          `json:"level"`
				RuleID  string          `json:"ruleId"`
				Message json.RawMessage `json:"message"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(res, &v); err != nil {
		t.Fatal(err)
	}
	for _, r := range v.Runs {
		for _, x := range r.Results {
			if x.Level == "error" {
				t.Errorf("multitool: %s %s", x.RuleID, x.Message)
			}
		}
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// TestBaseline: a report read back as a baseline holds each finding as many
// times as it occurs; findings beyond those are new. Reports without
// fingerprints are fingerprinted from their fields; anything else is refused
// with the line at fault.
func TestBaseline(t *testing.T) {
	t.Parallel()
	fs := findings()
	var b bytes.Buffer
	if err := report.JSON(&b, fs); err != nil {
		t.Fatal(err)
	}
	base, err := report.ReadBaseline(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	extra := fs[0]
	extra.Object.Name = "brand-new"
	again := append(append([]lint.Finding(nil), fs...), fs[0], extra)
	fresh, known := base.Split(again)
	if len(known) != len(fs) {
		t.Errorf("known: %d, want %d", len(known), len(fs))
	}
	if len(fresh) != 2 || fresh[0].Object != fs[0].Object || fresh[1].Object.Name != "brand-new" {
		t.Errorf("fresh: %+v, want the second copy of the first finding and the new one", fresh)
	}

	old := strings.ReplaceAll(b.String(), `"fingerprint"`, `"fingerprint_was_not_there"`)
	if base2, err := report.ReadBaseline([]byte(old)); err != nil || !maps.Equal(base, base2) {
		t.Errorf("a report without fingerprints: %v, %v; want the same baseline", base2, err)
	}

	for in, want := range map[string]string{
		"{\n  \"version\": 1,\n  \"findings\": 3\n}":      "line 3: findings holds a JSON number",
		"{\n  \"version\": 1,\n  \"findings\": [\n  oops": "line 4: invalid character 'o'",
		`{"findings": []}`:                "not a report written by eksdoctor",
		`{"version": 99, "findings": []}`: "newer than this eksdoctor reads",
	} {
		if _, err := report.ReadBaseline([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadBaseline(%q) = %v, want an error with %q", in, err, want)
		}
	}
}
