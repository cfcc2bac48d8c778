package cli

import (
	"bytes"
	"context"
	"encoding/json"
	htmlstd "html"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/eksdoctor/eksdoctor/bench"
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/report"
	"github.com/eksdoctor/eksdoctor/source"
	"github.com/eksdoctor/eksdoctor/source/live"
)

// chromium finds the headless browser: EKSDOCTOR_CHROMIUM, else chromium on
// the PATH (hack/test.sh installs Debian's package when it is missing).
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("EKSDOCTOR_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no headless Chromium: install Debian's chromium package (hack/test.sh does) or set EKSDOCTOR_CHROMIUM")
	return ""
}

// browse runs headless Chromium on a URL with more flags, and returns its
// standard output and error.
func browse(t *testing.T, bin, url string, flags ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}, flags...)
	cmd := exec.CommandContext(ctx, bin, append(args, url)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, errOut.String())
	}
	return out.String(), errOut.String()
}

// TestHTMLReportInABrowser opens the report of examples/broken in headless
// Chromium and reads the page as the browser built it: its script ran without
// an error, the capacity map says CoreDNS and ebs-csi-controller cannot run in
// the bootstrap phase (and why, in the cell), the teardown graph draws the
// steps in order with the hazard, a linked view filters the map, and the page
// keeps accessibility basics. A screenshot is kept as a test artifact.
func TestHTMLReportInABrowser(t *testing.T) {
	bin := chromium(t)
	out, errOut, code := runCLI(t, "check", "../../examples/broken", "-o", "html")
	if code != ExitFindings {
		t.Fatalf("check -o html: exit %d: %s", code, errOut)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(page, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	// Self-contained: nothing is fetched when the page is viewed.
	for _, remote := range []string{`src="http`, `href="//`, `<link `, `@import`, `url(http`} {
		if strings.Contains(out, remote) {
			t.Errorf("the report loads %q at view time", remote)
		}
	}

	dom, log := browse(t, bin, "file://"+page, "--dump-dom")
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "CONSOLE") || strings.Contains(l, "Uncaught") {
			t.Errorf("console: %s", l)
		}
	}
	doc, err := html.Parse(strings.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	body := find(doc, func(n *html.Node) bool { return n.Data == "body" })
	if attr(body, "data-ready") != "1" {
		t.Fatal("the page's script did not run to its end")
	}

	// The capacity map, bootstrap phase.
	rows, col := capacityMapCells(t, doc)
	ng, result := col("node group karpenter"), col("Result")
	for _, w := range []string{"Deployment/kube-system/coredns", "Deployment/kube-system/ebs-csi-controller"} {
		cells, ok := rows[w+" bootstrap"]
		if !ok {
			t.Errorf("no bootstrap row for %s", w)
			continue
		}
		if cells[result] != "✗ refuses" || !strings.HasPrefix(cells[ng], "✗ refuses") || !strings.Contains(cells[ng], "untolerated taint {karpenter.sh/controller: true}") {
			t.Errorf("%s, bootstrap: result %q, node group karpenter %q; want refuses, with the taint", w, cells[result], cells[ng])
		}
	}
	if cells := rows["Deployment/kube-system/coredns steady"]; len(cells) == 0 || cells[result] != "✓ fits" {
		t.Errorf("coredns, steady: %q, want it to fit once Karpenter runs", cells)
	}

	// The teardown graph: steps in order, the hazard drawn and linked.
	var steps []string
	for _, g := range findAll(doc, func(n *html.Node) bool { return n.Data == "g" && attr(n, "class") == "step" }) {
		title := find(g, func(n *html.Node) bool { return n.Data == "text" && attr(n, "class") == "step-title" })
		steps = append(steps, text(title))
	}
	want := []string{"1. Delete the NodePools", "2. Delete the EC2NodeClasses", "3. Uninstall the Karpenter controller", "4. Remove the Karpenter IAM roles", "5. Remove the node group", "6. Delete the EKS cluster", "7. Delete the network"}
	if len(steps) != len(want) {
		t.Fatalf("teardown steps %q, want %d", steps, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(steps[i], w) {
			t.Errorf("step %d is %q, want %q…", i+1, steps[i], w)
		}
	}
	if len(findAll(doc, func(n *html.Node) bool { return n.Data == "path" && attr(n, "class") == "hazard-edge" })) != 1 {
		t.Error("no hazard edge in the teardown graph")
	}
	// Each item links to its file; its line is beside.
	if links := findAll(doc, func(n *html.Node) bool { return n.Data == "a" && attr(n, "class") == "origin" }); len(links) != len(want) || attr(links[0], "href") != "../../examples/broken/main.tf" || !strings.HasSuffix(text(links[0]), "main.tf:159") {
		t.Errorf("teardown items are not linked to their file and line: %d links", len(links))
	}

	// Accessibility basics: one h1, section headings, headers with a scope,
	// answers in words and symbols, not colour alone.
	if n := len(findAll(doc, func(n *html.Node) bool { return n.Data == "h1" })); n != 1 {
		t.Errorf("%d h1", n)
	}
	if len(findAll(doc, func(n *html.Node) bool { return n.Data == "h2" })) < 2 {
		t.Error("no section headings")
	}
	for _, th := range findAll(doc, func(n *html.Node) bool { return n.Data == "th" }) {
		if attr(th, "scope") == "" {
			t.Errorf("table header without scope: %q", text(th))
			break
		}
	}
	for _, td := range findAll(doc, func(n *html.Node) bool {
		return n.Data == "td" && (attr(n, "class") == "fits" || attr(n, "class") == "refuses")
	}) {
		if s := text(td); !strings.Contains(s, "fits") && !strings.Contains(s, "refuses") {
			t.Errorf("a coloured cell without words: %q", s)
			break
		}
	}
	if find(doc, func(n *html.Node) bool { return n.Data == "svg" && attr(n, "role") == "img" }) == nil || find(doc, func(n *html.Node) bool { return n.Data == "title" && strings.HasPrefix(text(n), "Teardown order") }) == nil {
		t.Error("the graph has no role and title")
	}

	// A linked view: only namespace shop, only what no capacity takes.
	dom, _ = browse(t, bin, "file://"+page+"#ns=shop&refused=1", "--dump-dom")
	doc, err = html.Parse(strings.NewReader(dom))
	if err != nil {
		t.Fatal(err)
	}
	var shown []string
	for _, tr := range findAll(doc, func(n *html.Node) bool { return n.Data == "tr" && attr(n, "data-phase") != "" }) {
		if !hasAttr(tr, "hidden") {
			th := find(tr, func(n *html.Node) bool { return n.Data == "th" })
			shown = append(shown, strings.TrimSpace(text(th))+" "+attr(tr, "data-phase"))
		}
	}
	if strings.Join(shown, ", ") != "Deployment/shop/checkout bootstrap, Deployment/shop/checkout steady" {
		t.Errorf("#ns=shop&refused=1 shows %q", shown)
	}

	// The screenshot: what a reader sees at a glance.
	dir := os.Getenv("EKSDOCTOR_ARTIFACTS")
	if dir == "" {
		root, err := filepath.Abs(filepath.Join("..", ".."))
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, ".artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "report-examples-broken.png")
	browse(t, bin, "file://"+page, "--screenshot="+shot, "--window-size=1500,2400", "--hide-scrollbars")
	if st, err := os.Stat(shot); err != nil || st.Size() < 10000 {
		t.Fatalf("no screenshot at %s: %v", shot, err)
	}
	t.Logf("screenshot: %s", shot)
}

// capacityMapCells reads the capacity map of a report: its rows by "object
// phase" (the text of each cell), and col, the index of a column by its
// header (failing the test when there is none).
func capacityMapCells(t *testing.T, doc *html.Node) (rows map[string][]string, col func(name string) int) {
	t.Helper()
	rows = map[string][]string{}
	var header []string
	for _, tr := range findAll(doc, func(n *html.Node) bool { return n.Data == "tr" }) {
		var cells []string
		for c := tr.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && (c.Data == "td" || c.Data == "th") {
				cells = append(cells, strings.Join(strings.Fields(text(c)), " "))
			}
		}
		if len(cells) > 0 && cells[0] == "Workload" {
			header = cells
			continue
		}
		if p := attr(tr, "data-phase"); p != "" && len(cells) > 1 {
			rows[cells[0]+" "+p] = cells
		}
	}
	col = func(name string) int {
		t.Helper()
		for i, h := range header {
			if h == name {
				return i
			}
		}
		t.Fatalf("no column %q in %q", name, header)
		return 0
	}
	return rows, col
}

func find(n *html.Node, ok func(*html.Node) bool) *html.Node {
	if n.Type == html.ElementNode && ok(n) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := find(c, ok); f != nil {
			return f
		}
	}
	return nil
}

func findAll(n *html.Node, ok func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	if n.Type == html.ElementNode && ok(n) {
		out = append(out, n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		out = append(out, findAll(c, ok)...)
	}
	return out
}

func attr(n *html.Node, key string) string {
	if n == nil {
		return ""
	}
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key {
			return true
		}
	}
	return false
}

func text(n *html.Node) string {
	if n == nil {
		return ""
	}
	if n.Type == html.TextNode {
		return n.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(text(c))
	}
	return b.String()
}

// TestMermaidParsesInTheBrowser runs Mermaid's own parser (its browser build,
// from hack/mermaid.sh) in headless Chromium over the graphs eksdoctor writes:
// the teardown order and a workload's placement of examples/broken parse; a
// broken graph beside them does not (the check can fail).
func TestMermaidParsesInTheBrowser(t *testing.T) {
	bin := chromium(t)
	lib := os.Getenv("EKSDOCTOR_MERMAID")
	if lib == "" {
		// hack/mermaid.sh fetches it from npm once and prints its cached path.
		out, err := exec.Command("bash", filepath.Join("..", "..", "hack", "mermaid.sh")).Output()
		if err != nil {
			t.Fatalf("no Mermaid: EKSDOCTOR_MERMAID is not set and hack/mermaid.sh failed: %v", err)
		}
		lib = strings.TrimSpace(string(out))
	}
	js, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	teardown, errOut, code := runCLI(t, "teardown", "../../examples/broken", "-o", "mermaid")
	if code != ExitFindings {
		t.Fatalf("teardown -o mermaid: exit %d: %s", code, errOut)
	}
	explain, errOut, code := runCLI(t, "explain", "shop/checkout", "../../examples/broken", "-o", "mermaid")
	if code != ExitOK {
		t.Fatalf("explain -o mermaid: exit %d: %s", code, errOut)
	}
	graphs, err := json.Marshal([]string{teardown, explain, "flowchart TD\n  a[\"x\" --> ]] broken\n"})
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "mermaid.html")
	doc := `<!doctype html><html><body><script>` + strings.ReplaceAll(string(js), "</script", `<\/script`) + `</script><script>
(async function () {
  var out = [];
  for (const g of ` + string(graphs) + `) {
    try { await mermaid.parse(g); out.push("ok"); } catch (e) { out.push("error: " + String(e.message || e)); }
  }
  document.body.setAttribute("data-results", JSON.stringify(out));
})();
</script></body></html>`
	if err := os.WriteFile(page, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, _ := browse(t, bin, "file://"+page, "--virtual-time-budget=10000", "--dump-dom")
	m := regexp.MustCompile(`data-results="([^"]*)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the parser did not run:\n%.500s", dom)
	}
	var results []string
	if err := json.Unmarshal([]byte(htmlstd.UnescapeString(m[1])), &results); err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 || results[0] != "ok" || results[1] != "ok" || !strings.HasPrefix(results[2], "error: Parse error") {
		t.Errorf("Mermaid's parser says %q; want the teardown and explain graphs ok and the broken one refused", results)
	}
}

// The capacity map of a cluster of many nodes counts them straight from the
// verdicts (report.MapPhase): the page is the one rendering every node's
// verdict for every workload, then collapsing them, gives.
func TestCapacityMapOfManyNodesCountsThemFromTheVerdicts(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "snapshot.json")
	o := bench.SnapshotOptions{Nodes: 40, NodePools: 4, DaemonSets: 2, Pods: 400, Replicas: 10, PendingEvery: 10}
	if _, err := bench.GenerateSnapshot(file, o); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	read, err := live.ReadSnapshot(file, data)
	if err != nil {
		t.Fatal(err)
	}
	m := source.Build(read)
	cs := []*source.Cluster{{Name: "prod", Model: m}}
	env := &Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }, Getwd: func() (string, error) { return t.TempDir(), nil }, IsTerminal: func(io.Writer) bool { return false }}
	set, err := (&reportOptions{output: "html"}).resolve(env)
	if err != nil {
		t.Fatal(err)
	}
	r := runChecks(set, cs)
	s := r.sims[0]
	if !collapsesNodes(s, m.Workloads, []cluster.Phase{cluster.Steady}) {
		t.Fatal("40 nodes are not collapsed")
	}
	for _, w := range m.Workloads {
		for _, src := range report.MapPhase(s.Place(w, cluster.Steady), true).Sources {
			if src.Kind == "node" {
				t.Fatalf("%s: node %s rendered on its own", w.Ref(), src.Name)
			}
		}
	}
	var got, want bytes.Buffer
	if err := report.HTML(&got, htmlClusters(cs, r.sims, false), r.findings, set.options(r.suppressed)); err != nil {
		t.Fatal(err)
	}
	every := []report.HTMLCluster{{Name: "prod", Inputs: inputsOf(m)}}
	for _, w := range m.Workloads {
		every[0].Workloads = append(every[0].Workloads, report.Explanation{Object: w.Ref().String(), Origin: report.OriginOf(w.Object.Origin),
			Phases: []report.ExplainPhase{report.Phase(s.Place(w, cluster.Steady))}})
	}
	if err := report.HTML(&want, every, r.findings, set.options(r.suppressed)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(got.Bytes(), []byte("nodes take the pods")) {
		t.Error("the map has no column of the nodes")
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("the map counted from the verdicts differs from the one rendered node by node (%d bytes beside %d)", got.Len(), want.Len())
	}
}
