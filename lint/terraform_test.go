package lint_test

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/internal/shared"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/lint/linttest"
)

// terraformChecks are the checks the Terraform fixtures assert exactly.
var terraformChecks = []string{
	"addon-toleration-unsupported",
	"bootstrap-deadlock",
	"fargate-profile-mismatch",
	"helm-values-unknown",
	"karpenter-schema",
	"pod-unschedulable",
}

func wantedFindings(fs []lint.Finding, wants []string) []lint.Finding {
	var out []lint.Finding
	for _, f := range fs {
		if contains(wants, f.Check+" "+f.Severity.String()+" "+f.Object.String()) {
			out = append(out, f)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func anyFinding(fs []lint.Finding, ok func(lint.Finding) bool) bool {
	for _, f := range fs {
		if ok(f) {
			return true
		}
	}
	return false
}

func fixContains(f lint.Finding, text string) bool {
	if f.Fix == nil {
		return false
	}
	if strings.Contains(f.Fix.Summary, text) {
		return true
	}
	for _, e := range f.Fix.Edits {
		if strings.Contains(e.Text, text) {
			return true
		}
	}
	return false
}

func detailed(fs []lint.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("\n  " + f.Check + " " + f.Summary + "\n    " + strings.ReplaceAll(f.Detail, "\n", "\n    "))
	}
	return b.String()
}

func fixes(fs []lint.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		if f.Fix == nil {
			b.WriteString("\n  " + f.Check + ": no fix")
			continue
		}
		b.WriteString("\n  " + f.Check + ": " + f.Fix.Summary)
		for _, e := range f.Fix.Edits {
			b.WriteString("\n    " + e.File + " (" + e.Format + ")\n      " + strings.ReplaceAll(e.Text, "\n", "\n      "))
		}
	}
	return b.String()
}

func TestTerraformHelmValuesFixtures(t *testing.T) {
	linttest.RunFixtures(t, filepath.Join("testdata", "terraform", "helmvalues"), terraformChecks)
}

// ---- reference configurations ----

// edit is a textual change of one file of a copy of a reference configuration;
// old must occur exactly once.
type edit struct{ file, old, new string }

// corpusVariant copies a reference configuration of shared/corpus (rel is its
// path there) into a new temporary directory, keeping the name of its directory
// (the configurations derive names from path.cwd), applies the edits and returns
// the directory to analyse.
func corpusVariant(t *testing.T, rel string, edits ...edit) string {
	t.Helper()
	src := filepath.Join(shared.Dir(t, "corpus"), rel)
	root := t.TempDir()
	dst := filepath.Join(root, filepath.Base(src))
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	for _, e := range edits {
		p := filepath.Join(dst, e.file)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(data), e.old); n != 1 {
			t.Fatalf("%s: %q occurs %d times, want once", e.file, e.old, n)
		}
		if err := os.WriteFile(p, []byte(strings.Replace(string(data), e.old, e.new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// variantCase is a reference configuration, possibly changed, and what the
// Terraform checks must say about it.
type variantCase struct {
	name  string
	rel   string
	edits []edit
	// want lists the findings of terraformChecks ("check severity object");
	// nothing else may be an error.
	want []string
	// also lists errors of other checks the configuration truly has.
	also []string
	// fixText are texts one of the wanted findings' fixes must contain, in format.
	fixText []string
	format  string
	at      string
	// fix lists the checks whose fixes are applied and verified.
	fix []string
}

func runVariants(t *testing.T, cases []variantCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := corpusVariant(t, tc.rel, tc.edits...)
			got := linttest.Run(t, dir)
			want := append([]string(nil), tc.want...)
			sort.Strings(want)
			if diff := cmp.Diff(want, describe(got, terraformChecks)); diff != "" {
				t.Fatalf("findings (-want +got):\n%s\nall findings:%s", diff, linttest.Describe(got))
			}
			for _, f := range linttest.AtLeast(got, lint.Error) {
				if d := f.Check + " " + f.Severity.String() + " " + f.Object.String(); !contains(tc.want, d) && !contains(tc.also, d) {
					t.Errorf("an error the case does not want: %s %s %s", f.Check, f.Object, f.Summary)
				}
			}
			wanted := wantedFindings(got, tc.want)
			if tc.at != "" && !anyFinding(wanted, func(f lint.Finding) bool { return strings.HasSuffix(f.Origin.String(), tc.at) }) {
				t.Errorf("no finding at %s:%s", tc.at, linttest.Describe(wanted))
			}
			for _, text := range tc.fixText {
				if !anyFinding(wanted, func(f lint.Finding) bool { return fixContains(f, text) }) {
					t.Errorf("no fix contains %q:%s", text, fixes(wanted))
				}
			}
			if tc.format != "" {
				for _, f := range wanted {
					if f.Fix == nil {
						continue
					}
					for _, e := range f.Fix.Edits {
						if e.Format != tc.format {
							t.Errorf("%s fix edit %s:%d is %s, want %s", f.Check, e.File, e.Line, e.Format, tc.format)
						}
					}
				}
			}
			for _, id := range tc.fix {
				after := linttest.ApplyFixes(t, dir, id, got)
				if left := describe(after, []string{id}); len(left) > 0 {
					t.Errorf("after the fixes, %s still reports %v", id, left)
				}
			}
		})
	}
}

const mng = "terraform-aws-eks-blueprints/patterns/karpenter-mng"

// The blueprints karpenter-mng pattern taints its only node group
// karpenter.sh/controller=true:NoSchedule and lets only Karpenter and CoreDNS
// (through configuration_values) tolerate it. As published it works; an add-on
// Terraform waits for that does not tolerate the taint fits only Karpenter
// capacity, which does not exist yet.
func TestBlueprintsKarpenterMNG(t *testing.T) {
	addEBS := func(entry string) edit {
		return edit{file: "eks.tf", old: "    vpc-cni                = {}\n", new: "    vpc-cni                = {}\n    " + entry + "\n"}
	}
	runVariants(t, []variantCase{
		{name: "as published", rel: mng},
		{
			name:  "with the aws-ebs-csi-driver add-on",
			rel:   mng,
			edits: []edit{addEBS("aws-ebs-csi-driver     = {}")},
			want:  []string{"bootstrap-deadlock error Deployment/kube-system/ebs-csi-controller"},
			at:    "eks.tf:34",
			// The override keeps the add-on's default tolerations, which a
			// tolerations list in the configuration replaces.
			fixText: []string{
				"configuration_values = jsonencode(",
				"controller = {",
				`key = "CriticalAddonsOnly"`,
				"tolerationSeconds = 300",
				`key = "karpenter.sh/controller"`,
			},
			format: "hcl",
			fix:    []string{"bootstrap-deadlock"},
		},
		{
			name:    "with an aws-ebs-csi-driver add-on too old for controller.tolerations",
			rel:     mng,
			edits:   []edit{addEBS(`aws-ebs-csi-driver     = { addon_version = "v1.13.0-eksbuild.3" }`)},
			want:    []string{"addon-toleration-unsupported error Deployment/kube-system/ebs-csi-controller", "bootstrap-deadlock error Deployment/kube-system/ebs-csi-controller"},
			fixText: []string{`addon_version = "v1.14.0-eksbuild.1"`, `key = "karpenter.sh/controller"`},
			format:  "hcl",
			fix:     []string{"addon-toleration-unsupported"},
		},
		{
			name: "without the CoreDNS toleration",
			rel:  mng,
			edits: []edit{{file: "eks.tf", old: `    coredns = {
      configuration_values = jsonencode({
        tolerations = [
          # Allow CoreDNS to run on the same nodes as the Karpenter controller
          # for use during cluster creation when Karpenter nodes do not yet exist
          {
            key    = "karpenter.sh/controller"
            value  = "true"
            effect = "NoSchedule"
          }
        ]
      })
    }`, new: `    coredns = {}`}},
			want: []string{"bootstrap-deadlock error Deployment/kube-system/coredns"},
			// CoreDNS's default tolerations stay.
			fixText: []string{`key = "node-role.kubernetes.io/control-plane"`, `key = "CriticalAddonsOnly"`, `key = "karpenter.sh/controller"`},
			format:  "hcl",
			fix:     []string{"bootstrap-deadlock"},
		},
		{
			name: "without the Karpenter controller's toleration",
			rel:  mng,
			edits: []edit{{file: "karpenter.tf", old: `      - key: karpenter.sh/controller
        operator: Exists
        effect: NoSchedule
`, new: ""}},
			// The controller fits nothing in either phase (it never runs on its own
			// nodes): bootstrap-deadlock reports it, and pod-unschedulable leaves
			// the same root cause to it.
			want: []string{"bootstrap-deadlock error Deployment/karpenter/karpenter"},
			// Top-level tolerations of the Karpenter chart, keeping the one the
			// values already have.
			fixText: []string{"tolerations:", "key: CriticalAddonsOnly", "key: karpenter.sh/controller"},
			format:  "values",
			fix:     []string{"bootstrap-deadlock"},
		},
	})
}

// The other reference configurations: clean where they work, and the defects
// they are known to have.
func TestTerraformReferenceConfigurations(t *testing.T) {
	runVariants(t, []variantCase{
		{name: "terraform-aws-eks karpenter example", rel: "terraform-aws-eks/examples/karpenter"},
		{name: "blueprints karpenter pattern", rel: "terraform-aws-eks-blueprints/patterns/karpenter"},
		{
			// Profiles per availability zone, keyed by a data source, select
			// kube-system: CoreDNS (computeType Fargate) runs there.
			name: "terraform-aws-eks v19.21.0 fargate_profile example",
			rel:  "terraform-aws-eks/@v19.21.0/examples/fargate_profile",
		},
		{
			name: "terraform-aws-eks v19.21.0 karpenter example",
			rel:  "terraform-aws-eks/@v19.21.0/examples/karpenter",
			want: []string{"helm-values-unknown warning HelmRelease/karpenter/karpenter"},
			// module.eks reads only the VPC and subnet IDs of module.vpc:
			// nothing orders the NodePool before the NAT gateway and routes.
			also:    []string{"teardown-order error NodePool/default"},
			at:      "main.tf:191",
			fixText: []string{"interruptionQueue: ${module.karpenter.queue_name}"},
			format:  "values",
			fix:     []string{"helm-values-unknown"},
		},
		{
			// karpenter-blueprints still sets spec.template.spec.kubelet on a v1
			// NodePool (FACTS.md): the fix moves it to the EC2NodeClass, both
			// written back into their kubectl_manifest yaml_body.
			name:    "karpenter-blueprints cluster",
			rel:     "karpenter-blueprints/cluster/terraform",
			want:    []string{"karpenter-schema error NodePool/default"},
			also:    []string{"teardown-order error NodePool/default"},
			at:      "karpenter.tf:115",
			fixText: []string{"yaml_body = <<-YAML", "group: karpenter.k8s.aws", "systemReserved:"},
			format:  "hcl",
			fix:     []string{"karpenter-schema"},
		},
	})
}

func TestTerraformSchedulingFixtures(t *testing.T) {
	linttest.RunFixtures(t, filepath.Join("testdata", "terraform", "scheduling"), terraformChecks)
}

// Pods meant for Fargate that no profile selects fit nothing: that is one root
// cause, reported once by fargate-profile-mismatch. When that check does not
// run, or the object opts out of it, the scheduling checks report the pods
// themselves, so disabling one check never hides the problem.
func TestFargateMismatchIsOneError(t *testing.T) {
	all := func() []string {
		var ids []string
		for _, c := range lint.Checks() {
			ids = append(ids, c.ID)
		}
		return ids
	}
	without := func(skip ...string) []string {
		var ids []string
		for _, x := range all() {
			if !slices.Contains(skip, x) {
				ids = append(ids, x)
			}
		}
		return ids
	}
	const ref = "Deployment/kube-system/karpenter"
	tests := []struct {
		name    string
		fixture string
		// annotate adds the ignore annotation for fargate-profile-mismatch to
		// the Karpenter Deployment manifest.
		annotate bool
		checks   []string
		want     []string
	}{
		{
			name:    "eksctl, all checks",
			fixture: "eksctl-karpenter-namespace-mismatch",
			checks:  all(),
			want:    []string{"fargate-profile-mismatch error " + ref},
		},
		{
			name:    "eksctl, fargate-profile-mismatch disabled",
			fixture: "eksctl-karpenter-namespace-mismatch",
			checks:  without("fargate-profile-mismatch"),
			want:    []string{"bootstrap-deadlock error " + ref},
		},
		{
			name:     "eksctl, the Deployment ignores fargate-profile-mismatch",
			fixture:  "eksctl-karpenter-namespace-mismatch",
			annotate: true,
			checks:   all(),
			want:     []string{"bootstrap-deadlock error " + ref},
		},
		{
			name:    "eksctl, fargate-profile-mismatch and bootstrap-deadlock disabled",
			fixture: "eksctl-karpenter-namespace-mismatch",
			checks:  without("fargate-profile-mismatch", "bootstrap-deadlock"),
			want:    []string{"pod-unschedulable error " + ref},
		},
		{
			name:    "terraform, all checks",
			fixture: "tf-v20-karpenter-in-kube-system",
			checks:  all(),
			want:    []string{"fargate-profile-mismatch error " + ref},
		},
		{
			name:    "terraform, fargate-profile-mismatch disabled",
			fixture: "tf-v20-karpenter-in-kube-system",
			checks:  without("fargate-profile-mismatch"),
			want:    []string{"bootstrap-deadlock error " + ref},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := linttest.Extract(t, filepath.Join("testdata", "terraform", "noise", tt.fixture+".txtar"))
			if tt.annotate {
				p := filepath.Join(dir, "karpenter.yaml")
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				old := "  namespace: kube-system\n  labels:\n"
				if strings.Count(string(data), old) != 1 {
					t.Fatalf("karpenter.yaml has no single %q", old)
				}
				data = []byte(strings.Replace(string(data), old, "  namespace: kube-system\n  annotations:\n    eksdoctor.io/ignore: fargate-profile-mismatch\n  labels:\n", 1))
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var errs []lint.Finding
			for _, f := range linttest.AtLeast(linttest.Run(t, dir, tt.checks...), lint.Error) {
				// The cause under test is the Karpenter controller's: CoreDNS,
				// which EKS installs, is Pending beside it for reasons of its own.
				if f.Object.String() == ref {
					errs = append(errs, f)
				}
			}
			got := describe(errs, tt.checks)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTerraformSchemaFixtures(t *testing.T) {
	linttest.RunFixtures(t, filepath.Join("testdata", "terraform", "schema"), terraformChecks)
}

func TestModuleInputFixtures(t *testing.T) {
	linttest.RunFixtures(t, filepath.Join("testdata", "terraform", "inputs"), []string{"module-input-unknown"})
}

// A module used but never called is an error Terraform gives before planning,
// unless a tool beside the directory may write declarations when it runs.
func TestTerraformInvalidFixtures(t *testing.T) {
	linttest.RunFixtures(t, filepath.Join("testdata", "terraform", "invalid"), []string{"invalid-input", "input-unresolved"})
}
