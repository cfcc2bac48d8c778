package manifest

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// maxLineDepth bounds how deep field lines are indexed: deep enough for
// spec.template.spec.containers.0.resources (and any NodePool requirement), and
// cheap on large inputs. Deeper paths fall back to their closest indexed parent.
const maxLineDepth = 6

// notAnObject starts the message of a document that is not a Kubernetes object at
// all (no apiVersion and kind, or not a mapping), as opposed to a broken one.
const notAnObject = "document is not a Kubernetes object: it has no apiVersion and kind"

// IsNotAnObject reports whether a problem only says that a document is not a
// Kubernetes object; directory walks ignore those (values files, CI configs).
func IsNotAnObject(p cluster.Problem) bool { return strings.HasPrefix(p.Message, notAnObject) }

// Decode reads every object in data, the contents of file. Objects keep the file and
// the line they start on; problems name the file and line of what could not be read.
func Decode(file string, data []byte) ([]*cluster.Object, []cluster.Problem) {
	return DecodeAt(file, 1, data)
}

// DecodeAt is Decode for text that starts at line firstLine of file, e.g. YAML
// embedded in a Terraform heredoc.
func DecodeAt(file string, firstLine int, data []byte) ([]*cluster.Object, []cluster.Problem) {
	return decode(file, firstLine, data, false, nil)
}

// DecodeFile is Decode for whole files read from disk, with field lines indexed
// only when a finding asks for one (Object.At): large inputs decode faster and
// keep less in memory. It keeps a reference to data.
func DecodeFile(file string, data []byte) ([]*cluster.Object, []cluster.Problem) {
	return decode(file, 1, data, true, nil)
}

// DecodeFileFrom is DecodeFile for a file that can be read again: data is not
// kept, and the few lines and contents asked for later (Object.At, Data) come
// from the document read again through reread. A document whose text has
// changed since is not used: its lines fall back to where it starts and its
// content is unknown (nil).
func DecodeFileFrom(file string, data []byte, reread func() ([]byte, error)) ([]*cluster.Object, []cluster.Problem) {
	return decode(file, 1, data, true, reread)
}

// textAgain gives a document's text when it is needed again: the text kept,
// or, given a way to read the file again, the same bytes read again (nil if
// they changed).
func textAgain(doc document, reread func() ([]byte, error)) func() []byte {
	text := doc.text
	if reread == nil {
		return func() []byte { return text }
	}
	start, n, sum := doc.start, len(text), maphash.Bytes(textSeed, text)
	return func() []byte {
		again, err := reread()
		if err != nil || len(again) < start+n || maphash.Bytes(textSeed, again[start:start+n]) != sum {
			return nil
		}
		return again[start : start+n]
	}
}

var textSeed = maphash.MakeSeed()

// MaxDocuments bounds the documents of one file, and the objects they hold (List
// items count): a file of a million empty or tiny documents costs far more to hold
// than its size suggests. The rest of a larger file is not read.
const MaxDocuments = 20_000

// maxFileValues bounds the values (keys, scalars, lists and maps) the documents of
// one file may hold, estimated from their text before parsing: parsing builds a
// node of about 200 bytes for each, and a List of half a million small items fits
// in 30 MB of JSON.
const maxFileValues = 2_000_000

// estimateValues counts an upper bound of the values a YAML or JSON text holds: each
// key, flow item and block item follows a ':', ',' or line break.
func estimateValues(text []byte) int {
	return bytes.Count(text, []byte(":")) + bytes.Count(text, []byte(",")) + bytes.Count(text, []byte("\n")) + 1
}

func decode(file string, firstLine int, data []byte, lazy bool, reread func() ([]byte, error)) ([]*cluster.Object, []cluster.Problem) {
	var objs []*cluster.Object
	var probs []cluster.Problem
	docs := splitDocuments(data)
	values := 0
	for _, doc := range docs {
		if values += estimateValues(doc.text); values > maxFileValues {
			probs = append(probs, cluster.Problem{
				Origin:  cluster.Origin{File: file, Line: firstLine - 1 + abs(doc.line)},
				Message: fmt.Sprintf("the file holds more than about %d values; the rest is not read", maxFileValues),
			})
			break
		}
		if len(objs) >= MaxDocuments || doc.line < 0 {
			probs = append(probs, cluster.Problem{
				Origin:  cluster.Origin{File: file, Line: firstLine - 1 + abs(doc.line)},
				Message: fmt.Sprintf("the file holds more than %d documents or objects; the rest is not read", MaxDocuments),
			})
			break
		}
		var again func() []byte
		if lazy {
			again = textAgain(doc, reread)
		}
		o, p := decodeDocument(file, firstLine-1+doc.line, doc.text, again)
		objs = append(objs, o...)
		probs = append(probs, p...)
	}
	return objs, probs
}

type document struct {
	line  int // 1-based line of the first line of text within the input
	start int // offset of text within the input
	text  []byte
}

// splitDocuments cuts a YAML stream at its "---" separators so that each document is
// parsed on its own: a syntax error in one cannot hide the rest.
func splitDocuments(data []byte) []document {
	var docs []document
	start, startLine, line := 0, 1, 1
	for i := 0; i < len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		next := len(data)
		if end >= 0 {
			next = i + end + 1
		}
		l := data[i:next]
		if isSeparator(l) {
			docs = append(docs, document{line: startLine, start: start, text: data[start:i]})
			start, startLine = next, line+1
			if len(docs) > MaxDocuments {
				// Past the limit: a marker document says where reading stopped.
				return append(docs, document{line: -line})
			}
		}
		i = next
		line++
	}
	docs = append(docs, document{line: startLine, start: start, text: data[start:]})
	return docs
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func isSeparator(l []byte) bool {
	if !bytes.HasPrefix(l, []byte("---")) {
		return false
	}
	rest := bytes.TrimRight(l[3:], "\r\n")
	return len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '#'
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): `)

// decodeDocument decodes one document; again, when set, gives its text again
// later and field lines are indexed only then.
func decodeDocument(file string, offset int, text []byte, again func() []byte) ([]*cluster.Object, []cluster.Problem) {
	lazy := again != nil
	if isBlank(text) {
		return nil, nil
	}
	var root yaml.Node
	if err := yaml.Unmarshal(text, &root); err != nil {
		line := offset
		msg := err.Error()
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			n, _ := strconv.Atoi(m[1])
			line = offset + n - 1
			msg = msg[len(m[0]):]
		} else {
			msg = strings.TrimPrefix(msg, "yaml: ")
		}
		return nil, []cluster.Problem{{
			Origin:  cluster.Origin{File: file, Line: line},
			Message: "YAML syntax error: " + msg,
		}}
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return nil, nil
	}
	node := root.Content[0]
	if node.Kind == yaml.ScalarNode && node.Tag == "!!null" {
		return nil, nil
	}
	c := converter{offset: offset - 1, budget: NewBudget(&root)}
	if !lazy {
		c.lines = map[string]int{}
	}
	v, err := c.value(node, "", 0)
	if err != nil {
		return nil, []cluster.Problem{{Origin: cluster.Origin{File: file, Line: offset - 1 + node.Line}, Message: err.Error()}}
	}
	content, ok := v.(map[string]any)
	if !ok {
		return nil, []cluster.Problem{{
			Origin:  cluster.Origin{File: file, Line: offset - 1 + node.Line},
			Message: notAnObject + fmt.Sprintf(" (found %s)", describe(v)),
		}}
	}
	if lazy && isList(content) {
		// Items of a List still start where they are written.
		c.lines = listItemLines(node, offset-1)
	}
	objs, probs := objectsFrom(file, offset-1+node.Line, content, c.lines)
	if lazy {
		for i, o := range objs {
			o.Lines = nil
			o.LineIndex = lineIndex(again, offset, i, len(objs) > 1 || isList(content))
			o.ContentFunc = contentOf(again, i, isList(content))
		}
	}
	return objs, probs
}

func listItemLines(node *yaml.Node, offset int) map[string]int {
	lines := map[string]int{}
	for i := 0; i+1 < len(node.Content); i += 2 {
		if node.Content[i].Value != "items" {
			continue
		}
		for j, it := range node.Content[i+1].Content {
			lines["items."+strconv.Itoa(j)] = it.Line + offset
		}
	}
	return lines
}

// contentOf re-reads a document's text for its item-th object.
func contentOf(again func() []byte, item int, inList bool) func() map[string]any {
	return func() map[string]any {
		text := again()
		if text == nil {
			return nil
		}
		v, err := parseYAMLValue(text)
		if err != nil {
			return nil
		}
		m, _ := v.(map[string]any)
		if !inList {
			return m
		}
		items, _ := m["items"].([]any)
		if item < len(items) {
			it, _ := items[item].(map[string]any)
			return it
		}
		return nil
	}
}

func isList(content map[string]any) bool {
	kind, _ := content["kind"].(string)
	_, ok := content["items"].([]any)
	return ok && strings.HasSuffix(kind, "List")
}

// lineIndex re-reads a document's text to index the lines of its fields; for the
// item-th object of a List, the lines under items.<item>.
func lineIndex(again func() []byte, offset, item int, inList bool) func() map[string]int {
	return func() map[string]int {
		var root yaml.Node
		text := again()
		if text == nil || yaml.Unmarshal(text, &root) != nil || len(root.Content) == 0 {
			return map[string]int{}
		}
		c := converter{lines: map[string]int{}, offset: offset - 1, budget: NewBudget(&root)}
		if _, err := c.value(root.Content[0], "", 0); err != nil {
			return map[string]int{}
		}
		if !inList {
			return c.lines
		}
		prefix := "items." + strconv.Itoa(item) + "."
		sub := map[string]int{}
		for k, l := range c.lines {
			if rest, ok := strings.CutPrefix(k, prefix); ok {
				sub[rest] = l
			}
		}
		return sub
	}
}

// isBlank reports whether a document holds only blank lines and comments.
func isBlank(text []byte) bool {
	for l := range bytes.Lines(text) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			return false
		}
	}
	return true
}

// ObjectsFrom builds the objects of content already decoded (a kubernetes_manifest
// written as an HCL object): the object itself, or the items of a List, starting at
// file:line.
func ObjectsFrom(file string, line int, content map[string]any) ([]*cluster.Object, []cluster.Problem) {
	return objectsFrom(file, line, content, map[string]int{})
}

// objectsFrom builds the objects of one document: the document itself, or the items
// of a List.
func objectsFrom(file string, line int, content map[string]any, lines map[string]int) ([]*cluster.Object, []cluster.Problem) {
	kind, _ := content["kind"].(string)
	apiVersion, _ := content["apiVersion"].(string)
	if items, ok := content["items"].([]any); ok && strings.HasSuffix(kind, "List") {
		var objs []*cluster.Object
		var probs []cluster.Problem
		byItem := itemLines(lines)
		for i, it := range items {
			if i >= MaxDocuments {
				probs = append(probs, cluster.Problem{Origin: cluster.Origin{File: file, Line: line}, Message: fmt.Sprintf("the List holds more than %d items; the rest is not read", MaxDocuments)})
				break
			}
			prefix := "items." + strconv.Itoa(i)
			m, ok := it.(map[string]any)
			itemLine := line
			if l, ok := lines[prefix]; ok {
				itemLine = l
			}
			if !ok {
				probs = append(probs, cluster.Problem{Origin: cluster.Origin{File: file, Line: itemLine, Path: prefix}, Message: fmt.Sprintf("List item %d is %s, not an object", i, describe(it))})
				continue
			}
			sub := byItem[i]
			if sub == nil {
				sub = map[string]int{}
			}
			o, p := objectsFrom(file, itemLine, m, sub)
			objs = append(objs, o...)
			probs = append(probs, p...)
		}
		return objs, probs
	}
	if kind == "" || apiVersion == "" {
		missing := "kind"
		if kind != "" {
			missing = "apiVersion"
		} else if apiVersion == "" {
			missing = "apiVersion and kind"
		}
		msg := "document has no " + missing + "; it is not a Kubernetes object"
		if missing == "apiVersion and kind" {
			msg = notAnObject
		}
		return nil, []cluster.Problem{{Origin: cluster.Origin{File: file, Line: line}, Message: msg}}
	}
	o := &cluster.Object{
		APIVersion: apiVersion,
		Kind:       kind,
		Content:    content,
		Origin:     cluster.Origin{File: file, Line: line},
		Lines:      lines,
		Manager:    "kubectl",
	}
	if md, ok := content["metadata"].(map[string]any); ok {
		o.Name, _ = md["name"].(string)
		o.Namespace, _ = md["namespace"].(string)
		o.Labels = stringMap(md["labels"])
		// Only the annotations checks read, as of a running cluster's objects.
		o.Annotations = cluster.CheckedAnnotations(stringMap(md["annotations"]))
		if o.Name == "" {
			if gn, ok := md["generateName"].(string); ok {
				o.Name = gn
			}
		}
	}
	o.ClearNamespace()
	return []*cluster.Object{o}, nil
}

// itemLines splits the field lines of a List by item: "items.3.metadata.name"
// becomes "metadata.name" of item 3, in one pass.
func itemLines(lines map[string]int) map[int]map[string]int {
	out := map[int]map[string]int{}
	for k, l := range lines {
		rest, ok := strings.CutPrefix(k, "items.")
		if !ok {
			continue
		}
		idx, field, ok := strings.Cut(rest, ".")
		if !ok {
			continue
		}
		i, err := strconv.Atoi(idx)
		if err != nil {
			continue
		}
		if out[i] == nil {
			out[i] = map[string]int{}
		}
		out[i][field] = l
	}
	return out
}

func stringMap(v any) map[string]string {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		switch t := v.(type) {
		case string:
			out[k] = t
		case nil:
			out[k] = ""
		default:
			out[k] = fmt.Sprint(t)
		}
	}
	return out
}

func describe(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case nil:
		return "nothing"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// converter turns a yaml.Node tree into JSON-compatible values and records the line
// of every field path up to maxLineDepth.
type converter struct {
	lines  map[string]int
	offset int
	depth  int // alias expansion depth
	// budget bounds the nodes aliases may expand the document to.
	budget *Budget
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (c *converter) value(n *yaml.Node, path string, depth int) (any, error) {
	if err := c.budget.Spend(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n.Line+c.offset, err)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return c.value(n.Content[0], path, depth)
	case yaml.AliasNode:
		c.depth++
		defer func() { c.depth-- }()
		if c.depth > 32 || n.Alias == nil {
			return nil, fmt.Errorf("line %d: alias nested too deeply", n.Line+c.offset)
		}
		return c.value(n.Alias, path, maxLineDepth+1)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Tag == "!!merge" || (k.Kind == yaml.ScalarNode && k.Value == "<<" && k.Tag != "!!str") {
				if err := c.merge(m, v, path, depth); err != nil {
					return nil, err
				}
				continue
			}
			key := k.Value
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: mapping keys must be strings", k.Line+c.offset)
			}
			var p string
			if c.lines != nil && depth < maxLineDepth {
				p = join(path, key)
				c.lines[p] = k.Line + c.offset
			}
			val, err := c.value(v, p, depth+1)
			if err != nil {
				return nil, err
			}
			m[key] = val
		}
		return m, nil
	case yaml.SequenceNode:
		l := make([]any, len(n.Content))
		for i, it := range n.Content {
			var p string
			if c.lines != nil && depth < maxLineDepth {
				p = join(path, strconv.Itoa(i))
				c.lines[p] = it.Line + c.offset
			}
			val, err := c.value(it, p, depth+1)
			if err != nil {
				return nil, err
			}
			l[i] = val
		}
		return l, nil
	case yaml.ScalarNode:
		return scalar(n), nil
	}
	return nil, nil
}

func (c *converter) merge(dst map[string]any, v *yaml.Node, path string, depth int) error {
	val, err := c.value(v, path, depth)
	if err != nil {
		return err
	}
	var srcs []any
	if l, ok := val.([]any); ok {
		srcs = l
	} else {
		srcs = []any{val}
	}
	for _, s := range srcs {
		if m, ok := s.(map[string]any); ok {
			for k, x := range m {
				if _, exists := dst[k]; !exists {
					dst[k] = x
				}
			}
		}
	}
	return nil
}

func scalar(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		switch strings.ToLower(n.Value) {
		case "true", "yes", "on", "y":
			return true
		}
		return false
	case "!!int":
		s := strings.ReplaceAll(n.Value, "_", "")
		if i, err := strconv.ParseInt(s, 0, 64); err == nil {
			return i
		}
		if strings.HasPrefix(s, "0o") {
			if i, err := strconv.ParseInt(s[2:], 8, 64); err == nil {
				return i
			}
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
		return n.Value
	case "!!float":
		s := strings.ToLower(strings.ReplaceAll(n.Value, "_", ""))
		if strings.Contains(s, "inf") || strings.Contains(s, "nan") {
			// Not representable in JSON; Kubernetes never uses them.
			return n.Value
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
		return n.Value
	}
	return n.Value
}

// parseYAMLValue parses a YAML document into JSON-compatible values.
func parseYAMLValue(text []byte) (any, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(text, &root); err != nil {
		return nil, fmt.Errorf("YAML syntax error: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	c := converter{lines: map[string]int{}, budget: NewBudget(&root)}
	return c.value(&root, "", maxLineDepth)
}

// ParseValue parses a YAML or JSON value, e.g. Helm values or an add-on's
// configuration, into JSON-compatible values.
func ParseValue(data []byte) (any, error) { return decodeValue(data) }
