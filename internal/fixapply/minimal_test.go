package fixapply_test

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/lint/linttest"
	"github.com/eksdoctor/eksdoctor/source/manifest"
	"github.com/eksdoctor/eksdoctor/source/terraform"
)

// strict are the appliers without their fallbacks: each fails rather than
// render a document whole.
var strict = map[string]func([]byte, cluster.Edit) ([]byte, error){
	cluster.FormatYAML:   manifest.SpliceYAML,
	cluster.FormatHCL:    terraform.SpliceHCL,
	cluster.FormatValues: terraform.SpliceHelmValues,
}

// TestFixesAreMinimal applies, one by one, every edit of every fix that the
// checks propose for every lint fixture, this package's own fixtures and
// examples/broken, and asserts that the edit changes no line outside the
// object, block or map entry it edits, that YAML edits give what the merge
// patch gives, and that added heredocs keep their content indented.
func TestFixesAreMinimal(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "lint", "testdata", "*", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	own, _ := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	paths = append(paths, own...)
	sort.Strings(paths)
	edits := 0
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		family := filepath.Base(filepath.Dir(p))
		if family == "testdata" {
			family = "fixapply" // this package's own
		}
		name := family + "/" + strings.TrimSuffix(filepath.Base(p), ".txtar")
		fx, err := linttest.ParseFixture(name, data)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if fx.Live {
			continue // a running cluster: its fixes are commands
		}
		t.Run(name, func(t *testing.T) {
			fs, dir := fx.Findings(t, false)
			edits += checkEdits(t, dir, fs)
		})
	}
	t.Run("examples/broken", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "..", "examples", "broken"))); err != nil {
			t.Fatal(err)
		}
		edits += checkEdits(t, dir, linttest.Run(t, dir))
	})
	t.Logf("%d edits checked: %v", edits, perFormat)
	if flagRunAll() {
		// Every format, many times over: the check is not vacuous.
		for f, least := range map[string]int{cluster.FormatYAML: 40, cluster.FormatHCL: 100, cluster.FormatValues: 10} {
			if perFormat[f] < least {
				t.Errorf("only %d %s edits checked; the fixtures propose at least %d", perFormat[f], f, least)
			}
		}
	}
}

// perFormat counts the edits checked, by format.
var perFormat = map[string]int{}

func checkEdits(t *testing.T, dir string, fs []lint.Finding) int {
	t.Helper()
	n := 0
	for _, f := range fs {
		if f.Fix == nil {
			continue
		}
		for _, e := range f.Fix.Edits {
			if e.Format == cluster.FormatShell {
				continue
			}
			n++
			perFormat[e.Format]++
			checkEdit(t, dir, f, e)
		}
	}
	return n
}

func checkEdit(t *testing.T, dir string, f lint.Finding, e cluster.Edit) {
	t.Helper()
	path := e.File
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	where := f.Check + " " + f.Object.String() + ": " + e.File + ":" + strconv.Itoa(e.Line)
	after, err := strict[e.Format](before, e)
	if err != nil {
		t.Errorf("%s: the edit is not made in place: %v\nedit:\n%s", where, err, e.Text)
		return
	}
	start, end, changed := changedLines(before, after)
	if !changed {
		return
	}
	lo, hi := editSpan(t, before, e)
	if start < lo || end > hi {
		t.Errorf("%s: lines %d-%d changed, outside the edited lines %d-%d\nbefore:\n%s\nafter:\n%s", where, start, end, lo, hi, before, after)
	}
	if e.Format == cluster.FormatYAML {
		want, err := manifest.MergedYAML(before, e)
		if err != nil {
			t.Fatal(err)
		}
		objs, _ := manifest.Decode("", after)
		var got map[string]any
		for _, o := range objs {
			if o.Origin.Line == e.Line {
				got = o.Content
			}
		}
		if !reflect.DeepEqual(cluster.Normalize(got, 0), cluster.Normalize(want, 0)) {
			t.Errorf("%s: the edited object is not what the merge patch gives\nafter:\n%s", where, after)
		}
	}
	checkHeredocs(t, where, before, after)
}

// checkHeredocs asserts that no line of after is a lone comma that before did
// not have, and that every <<- heredoc added keeps its content indented at
// least as far as its opener's line.
func checkHeredocs(t *testing.T, where string, before, after []byte) {
	t.Helper()
	had := map[string]int{}
	for _, l := range strings.Split(string(before), "\n") {
		had[strings.TrimSpace(l)]++
	}
	lines := strings.Split(string(after), "\n")
	commas := 0
	for i, l := range lines {
		if strings.TrimSpace(l) == "," {
			commas++
		}
		tl := strings.TrimSpace(l)
		j := strings.Index(tl, "<<-")
		if j < 0 || strings.ContainsAny(tl[j:], " \t\"") {
			continue
		}
		marker := tl[j+3:]
		pad := l[:len(l)-len(strings.TrimLeft(l, " "))]
		for k := i + 1; k < len(lines) && strings.TrimSpace(lines[k]) != marker; k++ {
			if strings.TrimSpace(lines[k]) != "" && !strings.HasPrefix(lines[k], pad) {
				t.Errorf("%s: heredoc content at line %d is not indented to its opener (%q):\n%s", where, k+1, pad, after)
				break
			}
		}
	}
	if commas > had[","] {
		t.Errorf("%s: the edit leaves a line with a lone comma:\n%s", where, after)
	}
}

// changedLines is the run of lines of before that differ from after (end =
// start-1 when lines are only inserted before start).
func changedLines(before, after []byte) (start, end int, changed bool) {
	a, b := strings.SplitAfter(string(before), "\n"), strings.SplitAfter(string(after), "\n")
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	if p == len(a) && p == len(b) {
		return 0, 0, false
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return p + 1, len(a) - s, true
}

// editSpan is the lines an edit may change: the YAML document of the object,
// the Terraform block or map entry, the values file; an edit that appends to
// a Terraform file may change only its end.
func editSpan(t *testing.T, content []byte, e cluster.Edit) (int, int) {
	t.Helper()
	lines := strings.Split(string(content), "\n")
	n := len(lines)
	switch {
	case e.Format == cluster.FormatYAML:
		end := n
		for l := e.Line + 1; l <= n; l++ {
			if tl := strings.TrimRight(lines[l-1], "\r"); tl == "---" || strings.HasPrefix(tl, "--- ") {
				end = l - 1
				break
			}
		}
		return e.Line, end
	case e.Format == cluster.FormatValues && !strings.HasSuffix(e.File, ".tf"):
		return 1, n
	case e.Line == 0:
		return n, n
	}
	f, diags := hclsyntax.ParseConfig(content, e.File, hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("%s does not parse: %v", e.File, diags)
	}
	body := f.Body.(*hclsyntax.Body)
	if r, ok := blockSpan(body, e.Line); ok {
		return r.Start.Line, r.End.Line
	}
	if r, ok := entrySpan(body, e.Line); ok {
		return r.Start.Line, r.End.Line
	}
	t.Fatalf("%s:%d: no block or map entry there", e.File, e.Line)
	return 0, 0
}

func blockSpan(body *hclsyntax.Body, line int) (hcl.Range, bool) {
	for _, b := range body.Blocks {
		if b.TypeRange.Start.Line == line {
			return b.Range(), true
		}
		if r, ok := blockSpan(b.Body, line); ok {
			return r, true
		}
	}
	return hcl.Range{}, false
}

func entrySpan(body *hclsyntax.Body, line int) (hcl.Range, bool) {
	var found hcl.Range
	ok := false
	var walk func(e hclsyntax.Expression)
	walk = func(e hclsyntax.Expression) {
		if ok {
			return
		}
		switch x := e.(type) {
		case *hclsyntax.ObjectConsExpr:
			for _, it := range x.Items {
				if it.KeyExpr.Range().Start.Line == line {
					found, ok = hcl.RangeBetween(it.KeyExpr.Range(), it.ValueExpr.Range()), true
					return
				}
				walk(it.ValueExpr)
			}
		case *hclsyntax.TupleConsExpr:
			for _, v := range x.Exprs {
				walk(v)
			}
		case *hclsyntax.FunctionCallExpr:
			for _, v := range x.Args {
				walk(v)
			}
		}
	}
	var visit func(b *hclsyntax.Body)
	visit = func(b *hclsyntax.Body) {
		for _, a := range b.Attributes {
			walk(a.Expr)
		}
		for _, bl := range b.Blocks {
			visit(bl.Body)
		}
	}
	visit(body)
	return found, ok
}

// flagRunAll reports whether no -run filter narrows the subtests.
func flagRunAll() bool {
	f := flag.Lookup("test.run")
	if f == nil {
		return true
	}
	switch f.Value.String() {
	case "", "TestFixesAreMinimal", "TestFixesAreMinimal$", "^TestFixesAreMinimal$":
		return true
	}
	return false
}
