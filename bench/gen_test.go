package bench

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGenerateIsValidAndDeterministic: the generated configuration loads without a
// problem, has the requested size, and is the same bytes for the same seed.
func TestGenerateIsValidAndDeterministic(t *testing.T) {
	t.Parallel()
	o := Options{Workloads: 40, NodePools: 6, NodeGroups: 4, Teams: 3, Seed: 7}
	a, b := t.TempDir(), t.TempDir()
	if _, err := Generate(a, o); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(b, o); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(a, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(a, p)
		x, _ := os.ReadFile(p)
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil || string(x) != string(y) {
			t.Errorf("%s differs between two runs with the same seed", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	m := loadOne(t, a)
	if len(m.Problems) > 0 {
		t.Errorf("problems: %+v", m.Problems[0])
	}
	// Besides the generated workloads: the three add-ons EKS installs with the
	// cluster (the VPC CNI, kube-proxy, CoreDNS).
	if len(m.Workloads) != o.Workloads+3 || len(m.NodePools) != o.NodePools || len(m.NodeGroups) != o.NodeGroups {
		t.Errorf("got %d workloads, %d NodePools, %d node groups; want %d (and EKS's 3 add-ons), %d, %d",
			len(m.Workloads), len(m.NodePools), len(m.NodeGroups), o.Workloads, o.NodePools, o.NodeGroups)
	}
}
