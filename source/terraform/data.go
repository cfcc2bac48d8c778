package terraform

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"go.yaml.in/yaml/v3"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// evalData computes the data sources whose result needs no provider:
// kubectl_file_documents and kubectl_path_documents split YAML text into documents,
// aws_iam_policy_document renders its statements as JSON. Any other data source is
// unknown (cty.NilVal here).
func (m *modInst) evalData(b *hclsyntax.Block) cty.Value {
	if blockAttr(b, "for_each") != nil {
		return cty.NilVal
	}
	c := &evalCtx{m: m}
	ce := blockAttr(b, "count")
	if ce == nil {
		return m.evalDataOnce(b, c)
	}
	// With count, the value is the list of instances: data.x.y[0].documents.
	cv, err := m.l.eval(ce, c)
	n, ok := intArg(cv)
	if err != nil || !ok || n < 0 || n > maxInstances {
		if b.Labels[0] == "kubectl_path_documents" {
			// Whatever the count, the files the pattern matches are this
			// configuration's inputs, not manifests of their own.
			m.pathDocuments(b, c)
		}
		return cty.NilVal
	}
	vals := make([]cty.Value, n)
	for i := range vals {
		ic := *c
		ic.count = cty.NumberIntVal(int64(i))
		if vals[i] = m.evalDataOnce(b, &ic); vals[i] == cty.NilVal {
			return cty.NilVal
		}
	}
	return cty.TupleVal(vals)
}

func (m *modInst) evalDataOnce(b *hclsyntax.Block, c *evalCtx) cty.Value {
	switch b.Labels[0] {
	case "kubectl_file_documents":
		return m.fileDocuments(b, c)
	case "kubectl_path_documents":
		return m.pathDocuments(b, c)
	case "aws_iam_policy_document":
		return m.policyDocument(b, c)
	case "local_file", "local_sensitive_file":
		return m.localFile(b, c)
	case "template_file":
		return m.templateFile(b, c)
	}
	return cty.NilVal
}

// localFile is data "local_file": the file's content, read like file().
func (m *modInst) localFile(b *hclsyntax.Block, c *evalCtx) cty.Value {
	l := m.l
	expr := blockAttr(b, "filename")
	v, err := l.eval(expr, c)
	if err != nil || !v.IsWhollyKnown() || unmark(v).IsNull() || unmark(v).Type() != cty.String {
		return cty.NilVal
	}
	p := l.resolvePath(unmark(v).AsString())
	src, rerr := l.readFile(p)
	if rerr != nil {
		l.unresolved(originOf(expr.Range()), fmt.Sprintf("%s cannot be read: %s; its content is unknown", m.prefix+"data."+b.Labels[0]+"."+b.Labels[1], rerr))
		return cty.NilVal
	}
	content := string(src)
	if b.Labels[0] == "local_sensitive_file" {
		return cty.ObjectVal(map[string]cty.Value{"filename": cty.StringVal(p), "content": sensitiveValue()})
	}
	l.registerText(content, p, 1)
	return cty.ObjectVal(map[string]cty.Value{"filename": cty.StringVal(p), "content": cty.StringVal(content)})
}

// templateFile is data "template_file" (the deprecated template provider): the
// template rendered with its vars, as templatefile renders a file.
func (m *modInst) templateFile(b *hclsyntax.Block, c *evalCtx) cty.Value {
	l := m.l
	tv, err := l.eval(blockAttr(b, "template"), c)
	if err != nil || !tv.IsWhollyKnown() || unmark(tv).IsNull() || unmark(tv).Type() != cty.String {
		return cty.NilVal
	}
	text := unmark(tv).AsString()
	org, known := l.texts[text]
	if !known {
		org = originOf(blockAttr(b, "template").Range())
	}
	// The template is parsed under a name of its own, so that the source text of
	// its expressions (for placeholders) is read from the template, not the file.
	name := org.File + "#template_file." + b.Labels[1]
	tmpl, diags := hclsyntax.ParseTemplate([]byte(text), name, hcl.Pos{Line: max(org.Line, 1), Column: 1, Byte: 0})
	if diags.HasErrors() {
		l.unresolved(originOf(b.DefRange()), fmt.Sprintf("the template of %s does not parse; its result is unknown", m.prefix+"data.template_file."+b.Labels[1]))
		return cty.NilVal
	}
	l.files[name] = []byte(text)
	tc := &evalCtx{m: m, templateOnly: true}
	if e := blockAttr(b, "vars"); e != nil {
		vars, err := l.eval(e, c)
		if err != nil || !vars.IsKnown() {
			return cty.NilVal
		}
		vars = unmark(vars)
		if !vars.IsNull() && isMapLike(vars.Type()) {
			for it := vars.ElementIterator(); it.Next(); {
				k, v := it.Element()
				tc = tc.bind(k.AsString(), v)
			}
		}
	}
	out, verr := l.eval(tmpl, tc)
	if verr != nil || !out.IsKnown() || unmark(out).Type() != cty.String {
		return cty.NilVal
	}
	rendered := unmark(out).AsString()
	l.registerText(rendered, org.File, max(org.Line, 1))
	return cty.ObjectVal(map[string]cty.Value{"rendered": cty.StringVal(rendered), "template": tv})
}

func (m *modInst) fileDocuments(b *hclsyntax.Block, c *evalCtx) cty.Value {
	l := m.l
	expr := blockAttr(b, "content")
	if expr == nil {
		return cty.NilVal
	}
	v, err := l.eval(expr, c)
	if err != nil || !v.IsKnown() {
		return cty.NilVal
	}
	v = unmark(v)
	if v.IsNull() || v.Type() != cty.String {
		return cty.NilVal
	}
	org := l.textOrigin(v.AsString(), expr)
	docs := l.splitDocs(v.AsString(), org, true)
	return documentsValue(docs)
}

func (m *modInst) pathDocuments(b *hclsyntax.Block, c *evalCtx) cty.Value {
	l := m.l
	pv, err := l.eval(blockAttr(b, "pattern"), c)
	if err != nil || !pv.IsWhollyKnown() || unmark(pv).IsNull() || unmark(pv).Type() != cty.String {
		return cty.NilVal
	}
	pattern := l.resolvePath(unmark(pv).AsString())
	files, gerr := l.glob(pattern)
	if gerr != nil {
		l.unresolved(originOf(blockAttr(b, "pattern").Range()), fmt.Sprintf("the pattern %s of %s cannot be listed: %s; its documents are unknown", pattern, m.prefix+"data.kubectl_path_documents."+b.Labels[1], gerr))
		return cty.NilVal
	}
	vars := cty.EmptyObjectVal
	if e := blockAttr(b, "vars"); e != nil {
		vars, err = l.eval(e, c)
		if err != nil || !vars.IsKnown() {
			return cty.NilVal
		}
		vars = unmark(vars)
	}
	noTemplate := false
	if e := blockAttr(b, "disable_template"); e != nil {
		dv, _ := l.eval(e, c)
		noTemplate, _ = knownBool(dv)
	}
	var docs []doc
	for _, f := range files {
		var text string
		if noTemplate {
			src, rerr := l.readFile(f)
			if rerr != nil {
				return cty.NilVal
			}
			text = string(src)
		} else {
			tmpl, terr := l.template(f)
			if terr != nil {
				return cty.NilVal
			}
			tc := &evalCtx{m: m, templateOnly: true}
			if !vars.IsNull() && isMapLike(vars.Type()) {
				for it := vars.ElementIterator(); it.Next(); {
					k, v := it.Element()
					tc = tc.bind(k.AsString(), v)
				}
			}
			out, verr := l.eval(tmpl, tc)
			if verr != nil || !out.IsKnown() || unmark(out).Type() != cty.String {
				return cty.NilVal
			}
			text = unmark(out).AsString()
		}
		docs = append(docs, l.splitDocs(text, cluster.Origin{File: f, Line: 1}, true)...)
	}
	return documentsValue(docs)
}

type doc struct {
	text string
	org  cluster.Origin
}

// splitDocs cuts YAML text at its "---" separators, dropping empty documents, and
// remembers where each document starts. The kubectl provider's documents
// (loose) split at every line that starts with "---", the rest of the line
// ignored ("----" too); YAML itself needs "---" alone or before a space.
func (l *loader) splitDocs(s string, org cluster.Origin, loose bool) []doc {
	var out []doc
	lines := strings.SplitAfter(s, "\n")
	var cur strings.Builder
	start := 0
	flush := func() {
		t := cur.String()
		if strings.TrimSpace(stripComments(t)) != "" {
			d := doc{text: t, org: cluster.Origin{File: org.File, Line: org.Line + start}}
			l.registerTextAlways(t, d.org)
			out = append(out, d)
		}
		cur.Reset()
	}
	for i, ln := range lines {
		trimmed := strings.TrimRight(ln, "\r\n")
		if strings.HasPrefix(trimmed, "---") && (loose || len(trimmed) == 3 || trimmed[3] == ' ' || trimmed[3] == '\t' || trimmed[3] == '#') {
			flush()
			start = i + 1
			continue
		}
		cur.WriteString(ln)
	}
	flush()
	return out
}

func stripComments(s string) string {
	var b strings.Builder
	for _, ln := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(ln); t != "" && !strings.HasPrefix(t, "#") {
			b.WriteString(t)
		}
	}
	return b.String()
}

// registerTextAlways is registerText for documents, which may be short.
func (l *loader) registerTextAlways(s string, org cluster.Origin) {
	if _, ok := l.texts[s]; !ok {
		l.texts[s] = org
	}
}

// documentsValue is the value of a kubectl_*_documents data source: documents in
// order, and manifests keyed by the provider's self link
// ("/apis/<apiVersion>/namespaces/<ns>/<kind>s/<name>"). The provider re-serialises
// the manifests; the documents are kept as written so that their lines are known.
func documentsValue(docs []doc) cty.Value {
	list := make([]cty.Value, 0, len(docs))
	manifests := map[string]cty.Value{}
	for _, d := range docs {
		list = append(list, cty.StringVal(d.text))
		var meta struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
			Metadata   struct {
				Name      string `yaml:"name"`
				Namespace string `yaml:"namespace"`
			} `yaml:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(d.text), &meta); err == nil {
			manifests[selfLink(meta.APIVersion, meta.Metadata.Namespace, meta.Kind, meta.Metadata.Name)] = cty.StringVal(d.text)
		}
	}
	docsVal := cty.ListValEmpty(cty.String)
	if len(list) > 0 {
		docsVal = cty.ListVal(list)
	}
	manVal := cty.MapValEmpty(cty.String)
	if len(manifests) > 0 {
		manVal = cty.MapVal(manifests)
	}
	return cty.ObjectVal(map[string]cty.Value{
		"documents": docsVal,
		"manifests": manVal,
		"id":        cty.DynamicVal,
	})
}

func selfLink(apiVersion, namespace, kind, name string) string {
	var b strings.Builder
	if apiVersion == "v1" {
		b.WriteString("/api")
	} else {
		b.WriteString("/apis")
	}
	if apiVersion != "" {
		b.WriteString("/" + apiVersion)
	}
	if namespace != "" {
		b.WriteString("/namespaces/" + namespace)
	}
	if kind != "" {
		suffix := "s"
		if strings.HasSuffix(kind, "s") {
			suffix = "es"
		}
		b.WriteString("/" + strings.ToLower(kind) + suffix)
	}
	if name != "" {
		b.WriteString("/" + name)
	}
	return b.String()
}

// policyDocument renders an aws_iam_policy_document's statements as the JSON the
// provider produces, so that trust policies written this way can be classified.
func (m *modInst) policyDocument(b *hclsyntax.Block, c *evalCtx) cty.Value {
	l := m.l
	for _, name := range []string{"source_policy_documents", "override_policy_documents", "source_json", "override_json"} {
		if blockAttr(b, name) != nil {
			return cty.NilVal
		}
	}
	r := newResInst("data.aws_iam_policy_document."+b.Labels[1], "data", b.Labels[0], b.Labels[1], originOf(b.DefRange()))
	l.evalBody(b.Body, c, r.vals, "", r)
	if r.unknown["statement"] {
		return cty.NilVal
	}
	var stmts []any
	for _, s := range listOf(r.vals["statement"]) {
		sm, ok := s.(map[string]any)
		if !ok {
			continue
		}
		st := map[string]any{"Effect": "Allow"}
		if v := str(sm["effect"]); v != "" {
			st["Effect"] = v
		}
		if v := str(sm["sid"]); v != "" {
			st["Sid"] = v
		}
		for arg, key := range map[string]string{"actions": "Action", "not_actions": "NotAction", "resources": "Resource", "not_resources": "NotResource"} {
			if v := strList(sm[arg]); len(v) > 0 {
				st[key] = oneOrList(v)
			}
		}
		for arg, key := range map[string]string{"principals": "Principal", "not_principals": "NotPrincipal"} {
			p := map[string][]string{}
			for _, pr := range listOf(sm[arg]) {
				pm, _ := pr.(map[string]any)
				t := str(pm["type"])
				p[t] = append(p[t], strList(pm["identifiers"])...)
			}
			if len(p) > 0 {
				out := map[string]any{}
				for t, ids := range p {
					sort.Strings(ids)
					out[t] = oneOrList(ids)
				}
				st[key] = out
			}
		}
		cond := map[string]map[string]any{}
		for _, c := range listOf(sm["condition"]) {
			cm, _ := c.(map[string]any)
			test, variable := str(cm["test"]), str(cm["variable"])
			if cond[test] == nil {
				cond[test] = map[string]any{}
			}
			cond[test][variable] = oneOrList(strList(cm["values"]))
		}
		if len(cond) > 0 {
			st["Condition"] = cond
		}
		stmts = append(stmts, st)
	}
	doc := map[string]any{"Version": "2012-10-17", "Statement": stmts}
	if v := str(r.vals["version"]); v != "" {
		doc["Version"] = v
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return cty.NilVal
	}
	text := strings.TrimSpace(buf.String())
	var min bytes.Buffer
	if err := json.Compact(&min, []byte(text)); err != nil {
		return cty.NilVal
	}
	return cty.ObjectVal(map[string]cty.Value{
		"json":          cty.StringVal(text),
		"minified_json": cty.StringVal(min.String()),
		"id":            cty.DynamicVal,
	})
}

func oneOrList(v []string) any {
	if len(v) == 1 {
		return v[0]
	}
	out := make([]any, len(v))
	for i, s := range v {
		out[i] = s
	}
	return out
}

// Reading JSON-compatible values.

func listOf(v any) []any {
	switch t := v.(type) {
	case []any:
		return t
	case map[string]any:
		return []any{t}
	}
	return nil
}

func str(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case int64, float64, bool:
		return fmt.Sprint(t)
	}
	return ""
}

func strList(v any) []string {
	switch t := v.(type) {
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			if s := str(e); s != "" {
				out = append(out, s)
			}
		}
		return out
	case string:
		if t != "" {
			return []string{t}
		}
	}
	return nil
}

func strMap(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		out[k] = str(e)
	}
	return out
}

func first(v any) map[string]any {
	switch t := v.(type) {
	case []any:
		if len(t) > 0 {
			m, _ := t[0].(map[string]any)
			return m
		}
	case map[string]any:
		return t
	}
	return nil
}

func boolOf(v any) (bool, bool) {
	b, ok := v.(bool)
	return b, ok
}

func intOf(v any) (int, bool) {
	switch t := v.(type) {
	case int64:
		return int(t), true
	case float64:
		if t == float64(int(t)) {
			return int(t), true
		}
	case int:
		return t, true
	}
	return 0, false
}
