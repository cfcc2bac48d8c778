package lint_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/identity"
	"github.com/eksdoctor/eksdoctor/internal/shared"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/lint/linttest"
	"github.com/eksdoctor/eksdoctor/sim"
)

// The F2 and F4 checks, whose findings the twin fixtures assert exactly.
var nodeIdentityChecks = []string{
	"controller-role-as-node-role",
	"fargate-profile-mismatch",
	"fargate-role-unauthorized",
	"fargate-unsupported",
	"node-role-unauthorized",
}

// findingsOf renders the findings of the given checks as "check severity object".
func findingsOf(fs []lint.Finding, ids []string) []string {
	out := []string{}
	for _, f := range fs {
		for _, id := range ids {
			if f.Check == id {
				out = append(out, f.Check+" "+f.Severity.String()+" "+f.Object.String())
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestIdentityFixtures(t *testing.T) {
	linttest.RunFixtures(t, filepath.Join("testdata", "identity"), nodeIdentityChecks)
}

// copyTree copies a testdata directory into dst, keeping its relative path, so
// that a Terraform example's local module sources ("../..") resolve inside the
// temporary directory, never next to it.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// TestReferenceConfigurations loads the configurations known to work, and the
// Fargate-era terraform-aws-eks examples, copied from shared/corpus (see
// testdata/identity/README.md), and checks the F2/F4 findings on each: none on
// the references, the known field failure on the v20.8 example.
func TestReferenceConfigurations(t *testing.T) {
	root := shared.Dir(t, "corpus")
	tests := []struct {
		dir  string
		want []string
		// nodeClasses is how many EC2NodeClasses the configuration has; each
		// node role must be authorized, not merely unverifiable.
		nodeClasses int
		// onFargate is set when the Karpenter controller runs on Fargate.
		onFargate bool
	}{
		{dir: "terraform-aws-eks/examples/karpenter", nodeClasses: 1},
		// The release reads only module.eks.cluster_name and cluster_endpoint,
		// which do not wait for the module's Fargate profiles: it races them.
		{dir: "terraform-aws-eks-blueprints/patterns/karpenter", nodeClasses: 1, onFargate: true, want: []string{"fargate-unsupported warning Deployment/karpenter/karpenter"}},
		{dir: "terraform-aws-eks-blueprints/patterns/karpenter-mng", nodeClasses: 1},
		{dir: "terraform-aws-eks-blueprints/patterns/bottlerocket", nodeClasses: 1},
		{dir: "terraform-aws-eks-blueprints/patterns/fargate-serverless"},
		{dir: "terraform-aws-eks-blueprints/patterns/stateful"},
		{dir: "terraform-aws-eks-blueprints/patterns/wireguard-with-cilium"},
		// Two clusters: each eksctl ClusterConfig is one.
		{dir: "karpenter-provider-aws/extracted-eksctl/step02-create-cluster.eksctl.yaml"},
		// CoreDNS, which EKS installs, runs on Fargate only if the profile's
		// namespace ${KARPENTER_NAMESPACE} is kube-system (the guide's value):
		// not known here, so not verified.
		{dir: "karpenter-provider-aws/extracted-eksctl/step02-create-cluster-fargate.eksctl.yaml", want: []string{"fargate-profile-mismatch info Deployment/kube-system/coredns"}},
		// Fargate only, with the kube-proxy and vpc-cni add-ons' DaemonSets.
		{dir: "terraform-aws-eks/tests/eks-fargate-profile"},
		{dir: "terraform-aws-eks/@v19.21.0/examples/karpenter", nodeClasses: 1, onFargate: true},
		{dir: "terraform-aws-eks/@v20.4.0/examples/karpenter", nodeClasses: 1, onFargate: true},
		// v20.8 added the Fargate toleration to the Karpenter values.
		{dir: "terraform-aws-eks/@v20.8.5/examples/karpenter", nodeClasses: 1, onFargate: true, want: []string{"fargate-unsupported warning Deployment/karpenter/karpenter"}},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			tmp := t.TempDir()
			dir := filepath.Join(tmp, filepath.FromSlash(tt.dir))
			src := filepath.Join(root, filepath.FromSlash(tt.dir))
			if st, err := os.Stat(src); err == nil && !st.IsDir() {
				// One file of a directory: a directory of its own.
				dir = filepath.Join(tmp, "config")
				os.MkdirAll(dir, 0o755)
				dir = filepath.Join(dir, filepath.Base(src))
				copyTree(t, src, dir)
				dir = filepath.Dir(dir)
			} else {
				copyTree(t, src, dir)
			}
			m := linttest.Load(t, dir)
			if len(m.Workloads) == 0 && len(m.NodeClasses) == 0 && len(m.FargateProfiles) == 0 && !m.Cluster.Defined {
				t.Fatalf("nothing was loaded from %s", tt.dir)
			}
			res := identity.New(m)
			if len(m.NodeClasses) != tt.nodeClasses {
				t.Errorf("got %d EC2NodeClasses, want %d", len(m.NodeClasses), tt.nodeClasses)
			}
			for _, nc := range m.NodeClasses {
				ncr, _ := res.NodeClassRole(nc)
				if a := res.NodeAuthorization(ncr.Role, ncr.Windows); a.Outcome != identity.Authorized {
					t.Errorf("node role of EC2NodeClass/%s: %v, want authorized:\n%s", nc.Name, a.Outcome, strings.Join(a.Explain(), "\n"))
				}
			}
			for _, fp := range m.FargateProfiles {
				if fp.PodExecutionRole == "" {
					// eksctl creates the role and authorizes it.
					continue
				}
				if a := res.Authorize(res.Resolve(fp.PodExecutionRole), identity.FargatePods); a.Outcome != identity.Authorized {
					t.Errorf("pod execution role of Fargate profile %q: %v, want authorized:\n%s", fp.Name, a.Outcome, strings.Join(a.Explain(), "\n"))
				}
			}
			if c := m.Karpenter.Controller; tt.onFargate != (c != nil && sim.New(m).Place(c, cluster.Bootstrap).Fargate != nil) {
				t.Errorf("Karpenter controller on Fargate: got %v, want %v", !tt.onFargate, tt.onFargate)
			}
			got := linttest.Run(t, dir)
			want := append([]string{}, tt.want...)
			sort.Strings(want)
			if diff := cmp.Diff(findingsOf(got, nodeIdentityChecks), want); diff != "" {
				t.Errorf("F2/F4 findings (-got +want):\n%s\nall findings:%s", diff, linttest.Describe(got))
			}
		})
	}
}
