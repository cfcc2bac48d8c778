package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/eksdoctor/eksdoctor/report"
)

// A budget that allows no eviction, over pods that fit the one NodePool.
var drainBlockedFiles = map[string]string{
	"pdb.yaml": `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
  namespace: apps
spec:
  maxUnavailable: 0
  selector:
    matchLabels:
      app: web
`,
	"web.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: apps
spec:
  replicas: 3
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
        - name: web
          image: public.ecr.aws/eks-distro/kubernetes/pause:3.2
          resources:
            requests:
              cpu: "1"
`,
	"karpenter.yaml": `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: KarpenterNodeRole-demo
  amiSelectorTerms:
    - alias: al2023@latest
  subnetSelectorTerms:
    - tags: {karpenter.sh/discovery: demo}
  securityGroupSelectorTerms:
    - tags: {karpenter.sh/discovery: demo}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
`,
}

// teardown lists, among its hazards, the NodePool whose drain waits forever
// on pods no eviction may remove, with its cause and the fix that ends the
// drain.
func TestTeardownDrainBlocked(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, drainBlockedFiles)
	out, stderr, code := runCLI(t, "teardown", "-o", "json", dir)
	if code != ExitOK {
		t.Fatalf("exit code = %d (a warning: kubectl deletes these NodePools), stderr: %s", code, stderr)
	}
	var plan report.TeardownPlan
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	var found bool
	for _, h := range plan.Hazards {
		if h.Check != "teardown-orphans" || h.Object.Kind != "NodePool" || h.Object.Name != "default" {
			continue
		}
		found = true
		for _, want := range []string{"waits forever on the drain of the nodes of NodePool/default", "PodDisruptionBudget/apps/web (maxUnavailable 0 lets no pod go)"} {
			if !strings.Contains(h.Summary, want) {
				t.Errorf("hazard summary lacks %q:\n%s", want, h.Summary)
			}
		}
		if h.Severity != "warning" {
			t.Errorf("severity = %s, want warning (not terraform destroy)", h.Severity)
		}
		if h.Fix == nil || len(h.Fix.Edits) != 1 || !strings.Contains(h.Fix.Edits[0].Text, "terminationGracePeriod: 24h") {
			t.Errorf("fix = %+v, want a terminationGracePeriod on the NodePool", h.Fix)
		}
	}
	if !found {
		t.Errorf("no drain hazard on NodePool/default among %+v", plan.Hazards)
	}
	text, _, _ := runCLI(t, "teardown", dir)
	if !strings.Contains(text, "deleting it with kubectl waits forever") {
		t.Errorf("text plan lacks the drain hazard:\n%s", text)
	}
}

// explain names, for a workload, the budget that keeps its nodes from being
// disrupted, and for a NodePool, what pins its nodes; a NodePool nothing
// pins says so.
func TestExplainDisruptionBlocked(t *testing.T) {
	t.Parallel()
	dir := writeFiles(t, drainBlockedFiles)
	out, stderr, code := runCLI(t, "explain", "apps/web", dir, "-o", "json")
	if code != 0 {
		t.Fatalf("explain: exit %d: %s", code, stderr)
	}
	var doc report.ExplainDocument
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Explanations) != 1 {
		t.Fatalf("%v: %s", err, out)
	}
	ds := doc.Explanations[0].Disruption
	if len(ds) != 1 || ds[0].Object != "PodDisruptionBudget/apps/web" || ds[0].Cause != "pod-disruption-budget" || strings.Join(ds[0].NodePools, ",") != "default" || !strings.HasPrefix(ds[0].Drain, "forever") {
		t.Errorf("disruption of apps/web = %+v", ds)
	}
	text, _, code := runCLI(t, "explain", "nodepool/default", dir)
	if code != 0 {
		t.Fatalf("explain nodepool/default: exit %d", code)
	}
	for _, want := range []string{
		"NodePool/default  ",
		"disruption: blocked\n    - PodDisruptionBudget/apps/web pins the nodes of NodePool default: maxUnavailable 0 lets no pod go\n",
		"        Karpenter: Pdb prevents pod evictions (PodDisruptionBudget=[apps/web])\n",
		"        a drain of these nodes waits forever (no terminationGracePeriod of NodePool default ends it)\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("explain nodepool/default lacks %q:\n%s", want, text)
		}
	}
	files := map[string]string{}
	for k, v := range drainBlockedFiles {
		files[k] = v
	}
	files["pdb.yaml"] = strings.Replace(files["pdb.yaml"], "maxUnavailable: 0", "maxUnavailable: 1", 1)
	clean := writeFiles(t, files)
	text, _, _ = runCLI(t, "explain", "default", clean)
	if !strings.Contains(text, "disruption: nothing found keeps Karpenter from disrupting its nodes") {
		t.Errorf("explain default (a NodePool nothing pins):\n%s", text)
	}
}
