package lint_test

import (
	"path/filepath"
	"testing"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/lint/linttest"
)

func TestSuggest(t *testing.T) {
	for id, want := range map[string]string{
		"pod-unschedulabel":  "pod-unschedulable",
		"bootstrap-deadlok":  "bootstrap-deadlock",
		"teardown-orphan":    "teardown-orphans",
		"schema":             "karpenter-schema",
		"nodeclaim-not-regd": "nodeclaim-not-registered",
		"completely-unknown": "",
		"x":                  "",
	} {
		if got := lint.Suggest(id); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", id, got, want)
		}
	}
}

// TestFingerprint: the same finding on another line, or with other numbers in
// its wording, keeps its fingerprint; another check, object, cluster or
// wording does not.
func TestFingerprint(t *testing.T) {
	base := lint.Finding{Check: "pod-unschedulable", Cluster: "infra/prod",
		Object:  cluster.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "checkout"},
		Origin:  cluster.Origin{File: "main.tf", Line: 40},
		Summary: "Deployment/shop/checkout fits no capacity: 0/3 node groups are available"}
	fp := lint.Fingerprint(base)
	same := base
	same.Origin.Line = 97
	same.Summary = "Deployment/shop/checkout fits no capacity: 0/4 node groups are available"
	same.Detail = "other detail"
	if lint.Fingerprint(same) != fp {
		t.Error("moving the finding or changing a count changed its fingerprint")
	}
	for name, f := range map[string]func(*lint.Finding){
		"check":   func(f *lint.Finding) { f.Check = "bootstrap-deadlock" },
		"object":  func(f *lint.Finding) { f.Object.Name = "cart" },
		"cluster": func(f *lint.Finding) { f.Cluster = "infra/dev" },
		"wording": func(f *lint.Finding) {
			f.Summary = "Deployment/shop/checkout fits no capacity: 0/3 NodePools are available"
		},
	} {
		other := base
		f(&other)
		if lint.Fingerprint(other) == fp {
			t.Errorf("another %s, same fingerprint", name)
		}
	}
}

func TestDuplicateObjectFixtures(t *testing.T) {
	linttest.RunFixtures(t, filepath.Join("testdata", "input"), []string{"duplicate-object"})
}
