package terraform

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"go.yaml.in/yaml/v3"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// Instance keys of the resources that apply Kubernetes documents. Terraform
// tracks each instance of a resource with count or for_each by its key; an
// object whose key changes is destroyed under the old key and created under
// the new one. The keys follow the documents when they are the documents'
// text (toset of a kubectl_*_documents data source's documents), a hash of it,
// or their index in a list (count = length(documents)). Keys that are names,
// literal map keys or the data sources' manifests (keyed by the objects' self
// links) do not.

// manifestResources are the resource types whose instances apply documents.
var manifestResources = map[string]bool{"kubectl_manifest": true, "kubernetes_manifest": true}

// instanceKeys tells how the instances of a kubectl_manifest or
// kubernetes_manifest block with count or for_each are keyed; nil for any
// other block.
func (m *modInst) instanceKeys(b *hclsyntax.Block) *cluster.InstanceKeys {
	if b.Type != "resource" || len(b.Labels) != 2 || !manifestResources[b.Labels[0]] {
		return nil
	}
	if e := blockAttr(b, "count"); e != nil {
		return m.countKeys(b, e)
	}
	if e := blockAttr(b, "for_each"); e != nil {
		return m.forEachKeys(e)
	}
	return nil
}

// forEachKeys is instanceKeys for a for_each.
func (m *modInst) forEachKeys(e hcl.Expression) *cluster.InstanceKeys {
	l := m.l
	k := &cluster.InstanceKeys{Arg: "for_each", Expr: l.text(e.Range()), Origin: originOf(e.Range())}
	c := &evalCtx{m: m}
	switch x := e.(type) {
	case *hclsyntax.FunctionCallExpr:
		if x.Name != "toset" || len(x.Args) != 1 {
			break
		}
		// A set of strings is keyed by its elements.
		docs, ok := m.documentList(x.Args[0], c)
		if !ok || docs.structured {
			// A set of object values is no for_each Terraform accepts.
			return k
		}
		k.From, k.Documents = cluster.KeysContent, l.text(x.Args[0].Range())
		if coll, ok := oneLine(l.source(x.Args[0].Range())); ok && uniqueIdentities(docs.ids) {
			k.Rekey = map[string]string{"for_each": byNameFor("", "doc", coll, "doc", "", false)}
		}
		return k
	case *hclsyntax.ForExpr:
		if x.KeyExpr == nil || x.Group {
			return k
		}
		docs, ok := m.documentList(x.CollExpr, c)
		from := forKeyFrom(x)
		if !ok || from == "" || from == cluster.KeysPosition && !docs.ordered {
			// Not over a list of documents (a map of them): the keys as
			// evaluated.
			break
		}
		k.From, k.Documents = from, l.text(x.CollExpr.Range())
		coll, ok1 := oneLine(l.source(x.CollExpr.Range()))
		val, ok2 := oneLine(l.source(x.ValExpr.Range()))
		cond, ok3 := "", true
		if x.CondExpr != nil {
			cond, ok3 = oneLine(l.source(x.CondExpr.Range()))
		}
		if ok1 && ok2 && ok3 && uniqueIdentities(docs.ids) {
			k.Rekey = map[string]string{"for_each": byNameFor(x.KeyVar, x.ValVar, coll, val, cond, docs.structured)}
		}
		return k
	}
	// Any other expression (a local, a variable): the keys as evaluated.
	k.From = m.evaluatedKeysFrom(e, c)
	return k
}

// evaluatedKeysFrom tells what the keys of an evaluated for_each value are
// made of: the documents' text, a hash of it, or "" for anything else.
func (m *modInst) evaluatedKeysFrom(e hcl.Expression, c *evalCtx) string {
	v, err := m.l.eval(e, c)
	if err != nil || !v.IsKnown() {
		return ""
	}
	v = unmark(v)
	if v.IsNull() || v.LengthInt() == 0 {
		return ""
	}
	ty := v.Type()
	switch {
	case isSeq(ty):
		for _, el := range elements(v) {
			if s, ok := knownString(el); !ok || !isObjectDoc(s) {
				return ""
			}
		}
		return cluster.KeysContent
	case isMapLike(ty):
		from := ""
		for it := v.ElementIterator(); it.Next(); {
			kv, val := it.Element()
			key, _ := knownString(kv)
			f := ""
			switch s, ok := knownString(val); {
			case isObjectDoc(key):
				f = cluster.KeysContent
			case ok && isObjectDoc(s) && digestOf(s, key):
				f = cluster.KeysDigest
			}
			if f == "" || from != "" && f != from {
				return ""
			}
			from = f
		}
		return from
	}
	return ""
}

// countKeys is instanceKeys for a count: count = length(LIST), or a condition
// choosing between it and 0, where each instance applies LIST[count.index] or
// element(LIST, count.index) is keyed by position. The list indexed may be
// another one than the list counted, in the same order: a configuration
// counts documents rendered with placeholder values, known at plan, and
// applies the same documents rendered with the real ones.
func (m *modInst) countKeys(b *hclsyntax.Block, e hcl.Expression) *cluster.InstanceKeys {
	l := m.l
	k := &cluster.InstanceKeys{Arg: "count", Expr: l.text(e.Range()), Origin: originOf(e.Range())}
	length, cond, zeroFirst := e, hcl.Expression(nil), false
	if x, ok := e.(*hclsyntax.ConditionalExpr); ok {
		switch {
		case isZero(x.FalseResult):
			length, cond = x.TrueResult, x.Condition
		case isZero(x.TrueResult):
			length, cond, zeroFirst = x.FalseResult, x.Condition, true
		}
	}
	call, ok := length.(*hclsyntax.FunctionCallExpr)
	if !ok || call.Name != "length" || len(call.Args) != 1 {
		return k
	}
	list := call.Args[0]
	c := &evalCtx{m: m}
	docs, ok := m.documentList(list, c)
	if !ok || !docs.ordered {
		return k
	}
	listText := l.text(list.Range())
	uses := map[string][]indexUse{}
	n, same := 0, true
	for _, name := range sortedKeys(b.Body.Attributes) {
		if name == "count" {
			continue
		}
		for _, u := range m.indexUses(b.Body.Attributes[name].Expr) {
			if l.text(u.list.Range()) != listText {
				// Another list: the same documents in the same order.
				other, ok := m.documentList(u.list, c)
				if !ok || !other.ordered || len(other.ids) != len(docs.ids) {
					continue
				}
				same = false
			}
			uses[name] = append(uses[name], u)
			n++
		}
	}
	if n == 0 {
		return k
	}
	k.From, k.Documents = cluster.KeysPosition, listText
	coll, ok := oneLine(l.source(list.Range()))
	if !ok || !uniqueIdentities(docs.ids) || strings.Count(l.source(b.Body.Range()), "count.index") != n {
		// count.index is used otherwise too: the rewrite would leave it.
		return k
	}
	// Where the list applied is the list counted, each instance takes its
	// document; otherwise its index, stable under its new key.
	forEach := byNameFor("", "doc", coll, "doc", "", docs.structured)
	if !same {
		forEach = byNameFor("i", "doc", coll, "i", "", docs.structured)
	}
	// A condition between the count and 0 chooses between the keyed
	// documents and none; as with count, the documents are not read when
	// none are chosen (a data source with count = 0 has no element 0).
	if cond != nil {
		ct, ok := oneLine(l.source(cond.Range()))
		if !ok {
			return k
		}
		if zeroFirst {
			forEach = ct + " ? {} : " + forEach
		} else {
			forEach = ct + " ? " + forEach + " : {}"
		}
	}
	rekey := map[string]string{"count": "null", "for_each": forEach}
	for name, us := range uses {
		expr := b.Body.Attributes[name].Expr
		src := l.source(expr.Range())
		start := expr.Range().Start.Byte
		sort.Slice(us, func(i, j int) bool { return us[i].whole.Start.Byte > us[j].whole.Start.Byte })
		for _, u := range us {
			r, text := u.whole, "each.value"
			if !same {
				r = u.index.Range()
			}
			src = src[:r.Start.Byte-start] + text + src[r.End.Byte-start:]
		}
		rekey[name] = src
	}
	k.Rekey = rekey
	return k
}

// isZero tells whether an expression is the literal 0.
func isZero(e hclsyntax.Expression) bool {
	lit, ok := e.(*hclsyntax.LiteralValueExpr)
	return ok && lit.Val.Type() == cty.Number && lit.Val.RawEquals(cty.Zero)
}

// indexUse is a place that takes one element of a list by count.index:
// LIST[count.index] or element(LIST, count.index).
type indexUse struct {
	whole       hcl.Range
	list, index hclsyntax.Expression
}

// indexUses are the places in an expression that take one element of a list
// by count.index.
func (m *modInst) indexUses(e hcl.Expression) []indexUse {
	l := m.l
	node, ok := e.(hclsyntax.Node)
	if !ok {
		return nil
	}
	var out []indexUse
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		switch x := n.(type) {
		case *hclsyntax.IndexExpr:
			if l.text(x.Key.Range()) == "count.index" {
				out = append(out, indexUse{whole: x.Range(), list: x.Collection, index: x.Key})
			}
		case *hclsyntax.FunctionCallExpr:
			if x.Name == "element" && len(x.Args) == 2 && l.text(x.Args[1].Range()) == "count.index" {
				out = append(out, indexUse{whole: x.Range(), list: x.Args[0], index: x.Args[1]})
			}
		}
		return nil
	})
	return out
}

// docList is what documentList finds: the kind/name of each document (""
// when not known), whether the list is ordered (a list, not a set: its
// indexes follow the documents' order), and whether its elements are objects
// rather than text.
type docList struct {
	ids        []string
	ordered    bool
	structured bool
}

// documentList evaluates an expression that should be a list or set of
// Kubernetes documents: ok when every element is the text of an object, or
// every element an object value (with a kind and metadata).
func (m *modInst) documentList(e hcl.Expression, c *evalCtx) (docList, bool) {
	v, err := m.l.eval(e, c)
	if err != nil || !v.IsKnown() {
		return docList{}, false
	}
	v = unmark(v)
	if v.IsNull() || !isSeq(v.Type()) || v.LengthInt() == 0 {
		return docList{}, false
	}
	out := docList{ordered: !v.Type().IsSetType()}
	for i, el := range elements(v) {
		id, structured, ok := documentID(el)
		if !ok || i > 0 && structured != out.structured {
			return docList{}, false
		}
		out.structured = structured
		out.ids = append(out.ids, id)
	}
	return out, true
}

// documentID tells whether a value is a Kubernetes document, as text or as an
// object value, and names it kind/name ("" when that is not known).
func documentID(v cty.Value) (id string, structured, ok bool) {
	if s, isText := knownString(v); isText {
		if !isObjectDoc(s) {
			return "", false, false
		}
		var obj struct {
			Kind     string `yaml:"kind"`
			Metadata struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(s), &obj); err == nil && obj.Kind != "" && obj.Metadata.Name != "" {
			id = obj.Kind + "/" + obj.Metadata.Name
		}
		return id, false, true
	}
	if !v.IsKnown() {
		return "", false, false
	}
	v = unmark(v)
	if v.IsNull() || !v.Type().IsObjectType() && !v.Type().IsMapType() {
		return "", false, false
	}
	kind, meta := attrOf(v, "kind"), attrOf(v, "metadata")
	k, kok := knownString(kind)
	if !kok || k == "" || meta == cty.NilVal || !meta.IsKnown() || unmark(meta).IsNull() || !isMapLike(unmark(meta).Type()) {
		return "", false, false
	}
	if n, ok := knownString(attrOf(unmark(meta), "name")); ok && n != "" {
		id = k + "/" + n
	}
	return id, true, true
}

// attrOf is an attribute of an object or an element of a map; cty.NilVal when
// absent.
func attrOf(v cty.Value, name string) cty.Value {
	v = unmark(v)
	switch {
	case v.Type().IsObjectType():
		if v.Type().HasAttribute(name) {
			return v.GetAttr(name)
		}
	case v.Type().IsMapType():
		if k := cty.StringVal(name); v.HasIndex(k).True() {
			return v.Index(k)
		}
	}
	return cty.NilVal
}

// forKeyFrom tells what the key of an object for expression over documents is
// made of: the document (content), a hash or an encoding of it (digest), its
// index (position), or "" for anything else (a name read from it, a constant).
func forKeyFrom(x *hclsyntax.ForExpr) string {
	if x.KeyVar != "" && isVar(x.KeyExpr, x.KeyVar) {
		return cluster.KeysPosition
	}
	if f, ok := x.KeyExpr.(*hclsyntax.FunctionCallExpr); ok && f.Name == "tostring" && len(f.Args) == 1 && x.KeyVar != "" && isVar(f.Args[0], x.KeyVar) {
		return cluster.KeysPosition
	}
	whole, hashed := wholeDocument(x.KeyExpr, x.ValVar)
	switch {
	case whole && hashed:
		return cluster.KeysDigest
	case whole:
		return cluster.KeysContent
	}
	return ""
}

// textFuncs keep the whole of the text they are given, changed or not: a key
// made with them changes whenever the text does.
var textFuncs = map[string]bool{
	"trimspace": true, "chomp": true, "trim": true, "trimprefix": true, "trimsuffix": true,
	"replace": true, "lower": true, "upper": true, "tostring": true,
	"yamlencode": true, "jsonencode": true, "yamldecode": true, "jsondecode": true,
}

// hashFuncs digest or encode the whole of their text.
var hashFuncs = map[string]bool{
	"md5": true, "sha1": true, "sha256": true, "sha512": true,
	"base64sha256": true, "base64sha512": true, "base64encode": true, "textencodebase64": true,
	"uuidv5": true,
}

// wholeDocument tells whether an expression is the variable name or a chain
// of text and hash functions over the whole of it (md5(trimspace(d))), and
// whether a hash is part of the chain. yamldecode(d).metadata.name is not:
// it reads a part of the document.
func wholeDocument(e hclsyntax.Expression, name string) (whole, hashed bool) {
	if isVar(e, name) {
		return true, false
	}
	f, ok := e.(*hclsyntax.FunctionCallExpr)
	if !ok || len(f.Args) == 0 {
		return false, false
	}
	arg := f.Args[0]
	if f.Name == "uuidv5" && len(f.Args) == 2 {
		arg = f.Args[1]
	}
	if !textFuncs[f.Name] && !hashFuncs[f.Name] {
		return false, false
	}
	whole, hashed = wholeDocument(arg, name)
	return whole, hashed || hashFuncs[f.Name]
}

// isVar tells whether an expression is exactly a variable.
func isVar(e hclsyntax.Expression, name string) bool {
	t, ok := e.(*hclsyntax.ScopeTraversalExpr)
	return ok && len(t.Traversal) == 1 && t.Traversal.RootName() == name
}

// byNameFor writes a for expression that keys each document by its kind and
// name, with the variables, value and condition of the one it replaces; the
// documents are text to decode, or object values when structured.
func byNameFor(keyVar, valVar, coll, val, cond string, structured bool) string {
	vars := valVar
	if keyVar != "" {
		vars = keyVar + ", " + valVar
	}
	obj := "yamldecode(" + valVar + ")"
	if structured {
		obj = valVar
	}
	s := fmt.Sprintf(`{ for %s in %s : "${%s.kind}/${%s.metadata.name}" => %s`, vars, coll, obj, obj, val)
	if cond != "" {
		s += " if " + cond
	}
	return s + " }"
}

// oneLine is an expression's source when it is on one line, which a rewrite
// can place anywhere.
func oneLine(src string) (string, bool) {
	return src, src != "" && !strings.ContainsAny(src, "\n\r")
}

func knownString(v cty.Value) (string, bool) {
	if !v.IsKnown() {
		return "", false
	}
	v = unmark(v)
	if v.IsNull() || v.Type() != cty.String {
		return "", false
	}
	return v.AsString(), true
}

var (
	docKindRE = regexp.MustCompile(`(?m)^kind:[ \t]*["']?[A-Za-z]`)
	docMetaRE = regexp.MustCompile(`(?m)^metadata:`)
)

// isObjectDoc tells whether a string is the YAML or JSON text of one
// Kubernetes object: a mapping with a kind and metadata. Text with values not
// known yet may not parse; it counts when its top-level lines say so.
func isObjectDoc(s string) bool {
	if !strings.Contains(s, "kind") || !strings.Contains(s, "metadata") {
		return false
	}
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(s), &obj); err == nil {
		kind, _ := obj["kind"].(string)
		_, meta := obj["metadata"].(map[string]any)
		return kind != "" && meta
	}
	return docKindRE.MatchString(s) && docMetaRE.MatchString(s)
}

// uniqueIdentities tells whether every document has a kind and a name, and no
// two the same: keys made of them are then distinct.
func uniqueIdentities(ids []string) bool {
	seen := map[string]bool{}
	for _, id := range ids {
		if id == "" || seen[id] {
			return false
		}
		seen[id] = true
	}
	return true
}

// digestOf tells whether key is a hash or the base64 encoding of text, as
// Terraform's md5, sha1, sha256, sha512, base64sha256, base64sha512 and
// base64encode write them.
func digestOf(text, key string) bool {
	b := []byte(text)
	m5, s1, s256, s512 := md5.Sum(b), sha1.Sum(b), sha256.Sum256(b), sha512.Sum512(b)
	for _, d := range []string{
		hex.EncodeToString(m5[:]), hex.EncodeToString(s1[:]), hex.EncodeToString(s256[:]), hex.EncodeToString(s512[:]),
		base64.StdEncoding.EncodeToString(s256[:]), base64.StdEncoding.EncodeToString(s512[:]), base64.StdEncoding.EncodeToString(b),
	} {
		if key == d {
			return true
		}
	}
	return false
}
