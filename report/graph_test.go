package report_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"gonum.org/v1/gonum/graph/formats/dot"
	"gonum.org/v1/gonum/graph/formats/dot/ast"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/report"
	"github.com/eksdoctor/eksdoctor/teardown"
)

// plan is a three-step teardown whose NodePool may outlive its controller, with
// names that try to break out of the graph languages.
func plan() (*teardown.Plan, []lint.Finding) {
	pool := teardown.Item{Name: `kubectl_manifest.pool"] ; evil -> x [label="`, Origin: cluster.Origin{File: "main.tf", Line: 40}}
	ctrl := teardown.Item{Name: "helm_release.karpenter", Origin: cluster.Origin{File: "main.tf", Line: 10}}
	p := &teardown.Plan{Tool: "terraform", Steps: []teardown.Step{
		{Stage: teardown.StageNodePools, Items: []teardown.Item{pool}},
		{Stage: teardown.StageController, Items: []teardown.Item{ctrl}},
		{Stage: teardown.StageCluster, Items: []teardown.Item{{Name: "module.eks\n<b>x</b>", Origin: cluster.Origin{File: "main.tf", Line: 1}}}},
	}, Hazards: []teardown.Hazard{{Subject: pool, Targets: []teardown.Item{ctrl}}}}
	fs := []lint.Finding{{Check: "teardown-order", Severity: lint.Error, Origin: pool.Origin, Summary: "may be destroyed after its controller"}}
	return p, fs
}

func TestTeardownDotParses(t *testing.T) {
	t.Parallel()
	p, fs := plan()
	var b bytes.Buffer
	if err := report.TeardownDot(&b, p, fs, "infra/prod"); err != nil {
		t.Fatal(err)
	}
	file, err := dot.ParseString(b.String())
	if err != nil {
		t.Fatalf("not valid dot: %v\n%s", err, b.String())
	}
	if len(file.Graphs) != 1 || !file.Graphs[0].Directed {
		t.Fatalf("want one digraph:\n%s", b.String())
	}
	var edges, hazards, clusters int
	var walk func(stmts []ast.Stmt)
	walk = func(stmts []ast.Stmt) {
		for _, s := range stmts {
			switch s := s.(type) {
			case *ast.EdgeStmt:
				edges++
				for _, a := range s.Attrs {
					if a.Key == "color" && a.Val == "red" {
						hazards++
					}
				}
			case *ast.Subgraph:
				clusters++
				walk(s.Stmts)
			case *ast.NodeStmt:
				if strings.Contains(s.Node.ID, "evil") {
					t.Errorf("a name became a node: %s", s.Node.ID)
				}
			}
		}
	}
	walk(file.Graphs[0].Stmts)
	// A box per step, an arrow from each step to the next, one hazard edge.
	if clusters != 3 || edges != 3 || hazards != 1 {
		t.Errorf("clusters %d, edges %d, hazard edges %d; want 3, 3, 1:\n%s", clusters, edges, hazards, b.String())
	}
	if !strings.Contains(b.String(), `label="infra/prod: teardown order (terraform destroy)"`) {
		t.Errorf("no title naming the cluster:\n%s", b.String())
	}
}

func TestTeardownMermaid(t *testing.T) {
	t.Parallel()
	p, fs := plan()
	var b bytes.Buffer
	if err := report.TeardownMermaid(&b, p, fs, ""); err != nil {
		t.Fatal(err)
	}
	golden(t, "teardown.mmd", b.Bytes())
	out := b.String()
	for _, want := range []string{
		"flowchart TD\n",
		"  s1 -->|then| s2\n",
		"  s2i1 -.->|\"may be destroyed first\"| s1i1\n",
		"  class s1i1 hazard\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("mermaid lacks %q:\n%s", want, out)
		}
	}
	// Every node label is one quoted string without a quote or tag inside.
	for _, l := range strings.Split(out, "\n") {
		if i := strings.Index(l, `["`); i >= 0 {
			label := l[i+2 : strings.LastIndex(l, `"]`)]
			if strings.ContainsAny(label, "\"<>") && !strings.Contains(label, "<br/>") {
				t.Errorf("label carries markup: %q", label)
			}
		}
	}
}

func TestExplainMermaid(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	err := report.ExplainMermaid(&b, []report.Explanation{{Object: "Deployment/shop/checkout", Phases: []report.ExplainPhase{
		{Phase: "steady", Result: "refuses", Sources: []report.ExplainSource{
			{Kind: "nodepool", Name: "default", Result: "refuses", Reasons: []string{`incompatible requirements, label "workload" does not have known values`}},
			{Kind: "node group", Name: "system", Result: "fits"},
		}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"flowchart LR\n",
		"  w1[\"Deployment/shop/checkout\"]\n",
		"  w1 -.->|\"refuses: incompatible requirements, label #quot;workload#quot; does not have known values\"| w1p1s1\n",
		"  w1 -->|\"fits\"| w1p1s2\n",
		"  class w1p1s2 fits\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("mermaid lacks %q:\n%s", want, out)
		}
	}
}

// TestHTMLCollapsesManyNodes: a running cluster's many nodes are one column
// of the capacity map, fits when one takes the pods, else the commonest reason.
func TestHTMLCollapsesManyNodes(t *testing.T) {
	var sources []report.ExplainSource
	for i := range 30 {
		s := report.ExplainSource{Kind: "node", Name: fmt.Sprintf("ip-10-0-0-%d", i), Result: "refuses", Reasons: []string{"node(s) had untolerated taint {gpu: true}"}}
		if i%10 == 0 {
			s.Reasons = []string{"Insufficient cpu"}
		}
		sources = append(sources, s)
	}
	sources = append(sources, report.ExplainSource{Kind: "nodepool", Name: "default", Result: "refuses", Reasons: []string{"x"}})
	w := []report.Explanation{{Object: "Deployment/apps/web", Phases: []report.ExplainPhase{{Phase: "steady", Result: "refuses", Sources: sources}}}}
	var b bytes.Buffer
	if err := report.HTML(&b, []report.HTMLCluster{{Name: "prod", Workloads: w}}, nil, report.Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "node ip-10-0-0-1<") || !strings.Contains(out, `<th scope="col">nodes (30)</th>`) {
		t.Errorf("nodes are not one column:\n%.2000s", out)
	}
	if !strings.Contains(out, "0/30 nodes take the pods; 27: node(s) had untolerated taint {gpu: true}") {
		t.Errorf("the nodes cell does not give the commonest reason")
	}
}
