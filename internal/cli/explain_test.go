package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/eksdoctor/eksdoctor/report"
)

// explain quotes Karpenter's own message for a pod no NodePool takes, word
// for word, in the steady phase only (Karpenter is not running in the
// bootstrap phase).
func TestExplainQuotesKarpenter(t *testing.T) {
	t.Parallel()
	out, errOut, code := runCLI(t, "explain", "shop/checkout", "../../examples/broken", "-o", "json")
	if code != 0 {
		t.Fatalf("explain: exit %d: %s", code, errOut)
	}
	var doc report.ExplainDocument
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Explanations) != 1 || doc.Version != 1 {
		t.Fatalf("%v: %s", err, out)
	}
	ex := doc.Explanations
	want := `incompatible requirements, label "workload" does not have known values`
	got := map[string]string{}
	for _, ph := range ex[0].Phases {
		got[ph.Phase] = ph.Karpenter
	}
	if got["steady"] != want || got["bootstrap"] != "" {
		t.Errorf("karpenter by phase = %q, want steady %q and no bootstrap message", got, want)
	}
	text, _, _ := runCLI(t, "explain", "shop/checkout", "../../examples/broken")
	if !strings.Contains(text, "Karpenter would log: "+want+"\n") {
		t.Errorf("text output does not quote Karpenter:\n%s", text)
	}
}
