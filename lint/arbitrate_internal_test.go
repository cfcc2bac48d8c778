package lint

import (
	"strings"
	"testing"

	"github.com/eksdoctor/eksdoctor/cluster"
)

func TestArbitrateKeepsOneFindingPerCause(t *testing.T) {
	low := &Check{ID: "low"}
	high := &Check{ID: "high", Supersedes: []*Check{low}}
	other := &Check{ID: "other"}
	web := podsCause(cluster.ObjectRef{Kind: "Deployment", Namespace: "apps", Name: "web"})
	api := podsCause(cluster.ObjectRef{Kind: "Deployment", Namespace: "apps", Name: "api"})
	fs := []Finding{
		{Check: "low", Summary: "web low", causes: []string{web}},
		{Check: "low", Summary: "api low", causes: []string{api}},
		{Check: "low", Summary: "both low", causes: []string{web, api}},
		{Check: "low", Summary: "no cause"},
		{Check: "high", Summary: "web high", causes: []string{web}},
		{Check: "other", Summary: "api other", causes: []string{api}},
	}
	var got []string
	for _, f := range arbitrate(fs, []*Check{low, high, other}) {
		got = append(got, f.Summary)
	}
	// "web low" is superseded; "both low" still explains api, which no
	// superseding finding explains; "api other" explains api but does not
	// supersede "low".
	want := "api low|both low|no cause|web high|api other"
	if strings.Join(got, "|") != want {
		t.Errorf("arbitrate kept %q, want %q", strings.Join(got, "|"), want)
	}
	// Without the superseding check in the run, nothing is dropped.
	if n := len(arbitrate(append([]Finding(nil), fs...), []*Check{low, other})); n != len(fs) {
		t.Errorf("without the superseding check, arbitrate kept %d of %d findings", n, len(fs))
	}
}

func TestSupersededChecksAreRegistered(t *testing.T) {
	for _, c := range registry {
		for _, s := range c.Supersedes {
			if _, ok := Lookup(s.ID); !ok || s == c {
				t.Errorf("%s supersedes %q, which is not another registered check", c.ID, s.ID)
			}
		}
	}
}
