package report_test

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/report"
	"github.com/eksdoctor/eksdoctor/teardown"
)

// inertHTML fails when the input's text became markup in page: an element
// that loads or runs something, an event-handler attribute, a javascript:
// URL, or a script beside the page's own one.
func inertHTML(t *testing.T, page []byte) {
	t.Helper()
	scripts := 0
	z := html.NewTokenizer(bytes.NewReader(page))
	for tt := z.Next(); tt != html.ErrorToken; tt = z.Next() {
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		switch tok.Data {
		case "script":
			scripts++
		case "img", "iframe", "object", "embed":
			t.Fatalf("input reached the html as a %s element", tok.Data)
		}
		for _, a := range tok.Attr {
			if strings.HasPrefix(a.Key, "on") || strings.HasPrefix(strings.ToLower(strings.TrimSpace(a.Val)), "javascript:") {
				t.Fatalf("input reached the html as an attribute: %s=%q", a.Key, a.Val)
			}
		}
	}
	if scripts != 1 {
		t.Fatalf("html holds %d scripts", scripts)
	}
}

// TestHTMLHostileTextIsInert: text that closes the page's script and opens
// another, and text that closes an attribute's quotes to add an event
// handler, reach every place the page shows input (a finding's message,
// detail and fix, an object and its namespace, a capacity source's reasons
// in a title attribute, a cluster's name, an input file linked from the
// teardown graph), and stay text there: the page holds its own script only,
// no event handler, and a reader sees the text as it was written.
func TestHTMLHostileTextIsInert(t *testing.T) {
	const closeScript = `</script><script>alert(1)</script>`
	const breakAttr = `" onmouseover="x`
	for _, hostile := range []string{closeScript, breakAttr} {
		t.Run(hostile, func(t *testing.T) {
			origin := cluster.Origin{File: "infra/" + hostile + ".tf", Line: 7}
			fs := []lint.Finding{{
				Check: "pod-unschedulable", Severity: lint.Error,
				Object:  cluster.ObjectRef{Kind: "Deployment", Namespace: hostile, Name: "web"},
				Origin:  origin,
				Summary: "message " + hostile, Detail: "detail\n" + hostile,
				Fix: &lint.Fix{Summary: "fix " + hostile, Edits: []lint.Edit{{File: origin.File, Line: 7, Format: lint.FormatYAML, Text: hostile}}},
			}}
			item := teardown.Item{Name: "helm release " + hostile, Origin: origin}
			cs := []report.HTMLCluster{{
				Name: hostile,
				Workloads: []report.Explanation{{Object: "Deployment/" + hostile + "/web", Phases: []report.ExplainPhase{{
					Phase: "steady", Result: "refuses",
					Sources: []report.ExplainSource{{Kind: "nodepool", Name: "default", Result: "refuses", Reasons: []string{hostile}}},
				}}}},
				Teardown: &teardown.Plan{Tool: "terraform", Steps: []teardown.Step{{Stage: teardown.StageController, Items: []teardown.Item{item}}}},
				Inputs:   []string{origin.File},
			}}
			var page bytes.Buffer
			if err := report.HTML(&page, cs, fs, report.Options{}); err != nil {
				t.Fatal(err)
			}
			inertHTML(t, page.Bytes())

			// What a reader sees: the text, whole, in every place.
			doc, err := html.Parse(&page)
			if err != nil {
				t.Fatal(err)
			}
			var texts, titles, links []string
			var walk func(*html.Node)
			walk = func(n *html.Node) {
				if n.Type == html.TextNode && n.Parent != nil && n.Parent.Data != "script" {
					texts = append(texts, n.Data)
				}
				for _, a := range n.Attr {
					switch {
					case n.Data == "td" && a.Key == "title":
						titles = append(titles, a.Val)
					case n.Data == "a" && a.Key == "href" && strings.HasPrefix(a.Val, "infra/"):
						links = append(links, a.Val)
					}
				}
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c)
				}
			}
			walk(doc)
			shown := strings.Join(texts, "\x00")
			for _, want := range []string{
				"message " + hostile, "detail\n" + hostile, "fix " + hostile, hostile,
				"Deployment/" + hostile + "/web", "Cluster " + hostile, "⚠ helm release " + hostile, origin.String(),
			} {
				if !strings.Contains(shown, want) {
					t.Errorf("the page does not show %q", want)
				}
			}
			if len(titles) != 1 || titles[0] != hostile {
				t.Errorf("the cell's title attribute is %q, want %q", titles, hostile)
			}
			// The file's link is the file: its name percent-encoded.
			if len(links) != 1 {
				t.Fatalf("links to the input file: %q, want one", links)
			}
			if file, err := url.PathUnescape(links[0]); err != nil || file != origin.File {
				t.Errorf("the input file's link %q is %q, want %q", links[0], file, origin.File)
			}
		})
	}
}

// htmlClusters are two clusters covering what the page draws: a capacity map
// with a collapsed row of alike workloads in two namespaces, a workload
// linked to its finding, a cell without reasons, one with them, a missing
// cell and an unknown answer; a teardown graph with a hazard; the inputs
// read; and a cluster without workloads. The findings name their cluster.
func htmlClusters() ([]report.HTMLCluster, []lint.Finding) {
	fits := report.ExplainSource{Kind: "node group", Name: "system", Result: "fits"}
	taint := report.ExplainSource{Kind: "nodepool", Name: "default", Result: "refuses", Reasons: []string{"untolerated taint {gpu: true}", "Insufficient cpu"}}
	var ws []report.Explanation
	for i := range 6 {
		ws = append(ws, report.Explanation{Object: fmt.Sprintf("Deployment/ns-%d/web-%d", i%2, i), Phases: []report.ExplainPhase{
			{Phase: "steady", Result: "fits", Sources: []report.ExplainSource{fits, taint}},
		}})
	}
	ws = append(ws,
		report.Explanation{Object: "Deployment/kube-system/karpenter", Phases: []report.ExplainPhase{
			{Phase: "bootstrap", Result: "refuses", Sources: []report.ExplainSource{taint}},
			{Phase: "steady", Result: "fits", Sources: []report.ExplainSource{fits, taint}},
		}},
		report.Explanation{Object: "ConfigMap/settings", Phases: []report.ExplainPhase{
			{Phase: "steady", Result: "unknown", Sources: []report.ExplainSource{{Kind: "fargate profile", Name: "fp", Result: "unknown", Reasons: []string{"selector reads a label set at apply time"}}}},
		}},
	)
	p, tfs := plan()
	fs := append(findings(), tfs...)
	for i := range fs {
		fs[i].Cluster = "prod"
		if fs[i].Severity == lint.Info {
			fs[i].Cluster = "staging"
		}
	}
	lint.Sort(fs)
	return []report.HTMLCluster{
		{Name: "prod", Workloads: ws, Teardown: p, Inputs: []string{"infra/main.tf", "infra/values.yaml"}},
		{Name: "staging"},
	}, fs
}

// TestHTML: the page, byte for byte (go test ./report -run TestHTML -update
// rewrites testdata/findings.html).
func TestHTML(t *testing.T) {
	cs, fs := htmlClusters()
	var b bytes.Buffer
	if err := report.HTML(&b, cs, fs, sarifOptions()); err != nil {
		t.Fatal(err)
	}
	golden(t, "findings.html", b.Bytes())
	inertHTML(t, b.Bytes())
}

// TestHTMLIsDeterministic: the page is built from maps (rows by answers,
// namespaces, anchors); the same input always gives the same bytes.
func TestHTMLIsDeterministic(t *testing.T) {
	cs, fs := htmlClusters()
	var nodes []report.ExplainSource
	for i := range 20 {
		// Tied reasons: the commonest is chosen by name, not by map order.
		nodes = append(nodes, report.ExplainSource{Kind: "node", Name: fmt.Sprint("n", i), Result: "refuses", Reasons: []string{fmt.Sprint("reason ", i%2)}})
	}
	cs[1].Workloads = []report.Explanation{{Object: "Deployment/a/b", Phases: []report.ExplainPhase{{Phase: "steady", Result: "refuses", Sources: nodes}}}}
	var first bytes.Buffer
	if err := report.HTML(&first, cs, fs, sarifOptions()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(first.String(), "0/20 nodes take the pods; 10: reason 0") {
		t.Errorf("the nodes' cell does not give the first of the commonest reasons")
	}
	for range 20 {
		var again bytes.Buffer
		if err := report.HTML(&again, cs, fs, sarifOptions()); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), again.Bytes()) {
			t.Fatalf("two runs differ:\n%s", cmp.Diff(first.String(), again.String()))
		}
	}
}
