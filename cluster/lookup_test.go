package cluster

import "testing"

// A graph no loader set Addressing on, and a nil one, know nothing of
// addresses rather than guess.
func TestGraphWithoutAddressing(t *testing.T) {
	g := NewGraph()
	g.Add(&Resource{Address: "helm_release.x"})
	for _, g := range []*Graph{nil, g} {
		if g.ResourceOf("helm_release.x") != "" || g.NodeOf("helm_release.x") != "" || g.PartOf("helm_release.x") != "" ||
			g.InModule("module.eks") || g.ConfigAddress(`a.b["c"]`) != "" || g.InstanceKey(`a.b["c"]`) != "" || g.InConfig("main.tf") {
			t.Errorf("graph %v without Addressing answered", g)
		}
	}
}
