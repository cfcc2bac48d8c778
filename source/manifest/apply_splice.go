package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// A YAML change is made as the smallest splices of the text that give the
// wanted value: the document is read with go.yaml.in/yaml/v3, whose nodes say
// where each key and value starts, and only what differs is rewritten.
//
//   - A changed scalar is replaced where it stands, in the quoting style it
//     was written in when that style can still hold the new value.
//   - A new key is added as new lines after the last line of its mapping, at
//     that mapping's indentation; a flow mapping ({a: 1}) is rewritten whole,
//     still as a flow mapping.
//   - A list that changes is rewritten over its own lines only, in the
//     sequence style the file uses (`- ` at the key's indentation, or
//     indented under it); when the new list keeps the old items and adds
//     some, only the new items are added (and an item that is a mapping is
//     changed key by key).
//   - A removed key loses its lines, and only those.
//
// Everything else — comments, key order, quotes, blank lines, anchors and
// aliases, other documents, CRLF line ends — stays byte for byte.
//
// Anchors and aliases: a value reached through an alias is changed by
// replacing the alias with the new value, so the anchored value and the other
// aliases keep what they say; a change inside an anchored value that an alias
// elsewhere refers to would change that alias too, and the result no longer
// equals the merge — every splice is checked by reading the result again and
// comparing it with the merged value, and when they differ the caller falls
// back to rendering the document whole.

// errNotMinimal says the change cannot be made by splices.
var errNotMinimal = errors.New("the change cannot be made in place")

// yamlStyle is how a file writes what a splice adds.
type yamlStyle struct {
	step      int // indentation of a mapping under its key
	seqIndent int // indentation of a block sequence's dashes under its key: 0 or more
}

// detectStyle reads the indentation a file uses: the first nested mapping
// gives the step, the first block sequence under a key whether its dashes
// sit at the key's column or under it.
func detectStyle(content []byte) yamlStyle {
	st := yamlStyle{step: 2, seqIndent: -1}
	stepSeen := false
	dec := yaml.NewDecoder(bytes.NewReader(content))
	for i := 0; i < 64; i++ {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			break
		}
		walkStyle(&n, &st, &stepSeen, 0)
		if stepSeen && st.seqIndent >= 0 {
			break
		}
	}
	if st.seqIndent < 0 {
		st.seqIndent = st.step
	}
	return st
}

func walkStyle(n *yaml.Node, st *yamlStyle, stepSeen *bool, depth int) {
	if depth > cluster.MaxValueDepth {
		return
	}
	if n.Kind == yaml.MappingNode && n.Style&yaml.FlowStyle == 0 {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Style&yaml.FlowStyle != 0 || v.Line == k.Line || len(v.Content) == 0 {
				continue
			}
			switch v.Kind {
			case yaml.MappingNode:
				if !*stepSeen && v.Content[0].Column > k.Column {
					st.step = v.Content[0].Column - k.Column
					*stepSeen = true
				}
			case yaml.SequenceNode:
				if st.seqIndent < 0 && v.Column >= k.Column {
					st.seqIndent = v.Column - k.Column
				}
			}
		}
	}
	for _, c := range n.Content {
		walkStyle(c, st, stepSeen, depth+1)
	}
}

// splicer collects the splices of one document's text.
type splicer struct {
	src    []byte
	starts []int // starts[i] is the offset of line i+1
	nl     string
	style  yamlStyle
	patch  *yaml.Node // the patch as written: its key order and quoting for what is added
	edits  []splice
}

type splice struct {
	start, end int
	text       string
}

func newSplicer(src []byte, style yamlStyle, patch *yaml.Node) *splicer {
	s := &splicer{src: src, style: style, patch: patch, nl: "\n"}
	s.starts = append(s.starts, 0)
	for i, c := range src {
		if c == '\n' {
			s.starts = append(s.starts, i+1)
		}
	}
	if i := bytes.IndexByte(src, '\n'); i > 0 && src[i-1] == '\r' {
		s.nl = "\r\n"
	}
	return s
}

func (s *splicer) lines() int { return len(s.starts) }

// lineText is line l (1-based) without its line end.
func (s *splicer) lineText(l int) string {
	if l < 1 || l > len(s.starts) {
		return ""
	}
	end := len(s.src)
	if l < len(s.starts) {
		end = s.starts[l] - 1
	}
	return strings.TrimSuffix(string(s.src[s.starts[l-1]:end]), "\r")
}

// lineEnd is the offset of the end of line l's text (before its line end).
func (s *splicer) lineEnd(l int) int { return s.starts[l-1] + len(s.lineText(l)) }

// after is the offset of the start of the line after l (the end of the text
// when l is the last line).
func (s *splicer) after(l int) int {
	if l < len(s.starts) {
		return s.starts[l]
	}
	return len(s.src)
}

// offset converts a node's line and column (in characters) to a byte offset.
func (s *splicer) offset(line, col int) int {
	if line < 1 || line > len(s.starts) {
		return len(s.src)
	}
	off := s.starts[line-1]
	for c := 1; c < col && off < len(s.src) && s.src[off] != '\n'; c++ {
		_, size := utf8.DecodeRune(s.src[off:])
		off += size
	}
	return off
}

func indentOf(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }

func blank(line string) bool { return strings.TrimSpace(line) == "" }

func comment(line string) bool { return strings.HasPrefix(strings.TrimSpace(line), "#") }

// lastLine is the last line of a slot that starts on line first and whose
// key or dash is at column indent (0-based): the lines after it that are
// blank or indented deeper, and, for a block sequence written at the key's
// column, its items. Blank lines and comments that end the run are left to
// what follows (they are not part of the value, unless it is a block scalar).
func (s *splicer) lastLine(first, indent int, v *yaml.Node) int {
	dashes := v != nil && v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle == 0 && v.Column-1 == indent
	literal := v != nil && v.Kind == yaml.ScalarNode && v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0
	last := first
	for l := first + 1; l <= s.lines(); l++ {
		t := s.lineText(l)
		if blank(t) {
			continue
		}
		in := indentOf(t)
		rest := strings.TrimLeft(t, " ")
		if in > indent || (dashes && in == indent && (rest == "-" || strings.HasPrefix(rest, "- "))) {
			if literal || !comment(t) {
				last = l
			}
			continue
		}
		break
	}
	return last
}

// headComment is the first line of the comment lines written right above
// line at the key's indentation (the comment says what the key is for, and
// goes with it), or line itself.
func (s *splicer) headComment(line, indent int) int {
	first := line
	for l := line - 1; l >= 1; l-- {
		t := s.lineText(l)
		if !comment(t) || indentOf(t) != indent {
			break
		}
		first = l
	}
	return first
}

// slot is where a value is written: after a mapping key's colon, or after a
// sequence item's dash.
type slot struct {
	head   int // offset just after the colon or the dash
	indent int // column (0-based) of the key or of the dash
	item   bool
	val    *yaml.Node
	last   int // the slot's last line
}

func (s *splicer) entrySlot(k, v *yaml.Node) (slot, error) {
	start := s.offset(k.Line, k.Column)
	end, ok := s.scalarEnd(k, start)
	if !ok {
		return slot{}, errNotMinimal
	}
	for end < len(s.src) && (s.src[end] == ' ' || s.src[end] == '\t') {
		end++
	}
	if end >= len(s.src) || s.src[end] != ':' {
		return slot{}, errNotMinimal
	}
	return slot{head: end + 1, indent: k.Column - 1, val: v, last: s.lastLine(k.Line, k.Column-1, v)}, nil
}

// itemSlot is the slot of a block sequence's item.
func (s *splicer) itemSlot(seq, it *yaml.Node) (slot, error) {
	dash := s.offset(seq.Line, seq.Column)
	// The item's dash is the last '-' before it.
	start := s.offset(it.Line, it.Column)
	d := start - 1
	for d >= 0 && s.src[d] != '-' {
		if s.src[d] != ' ' && s.src[d] != '\n' && s.src[d] != '\r' && s.src[d] != '\t' {
			return slot{}, errNotMinimal
		}
		d--
	}
	if d < dash {
		return slot{}, errNotMinimal
	}
	line := s.lineAt(d)
	return slot{head: d + 1, indent: d - s.starts[line-1], item: true, val: it, last: s.lastLine(line, d-s.starts[line-1], nil)}, nil
}

func (s *splicer) lineAt(off int) int {
	return sort.Search(len(s.starts), func(i int) bool { return s.starts[i] > off })
}

// valueStart is where a node's value starts, past its anchor and tag.
func (s *splicer) valueStart(n *yaml.Node) int {
	p := s.offset(n.Line, n.Column)
	for p < len(s.src) && (s.src[p] == '&' || s.src[p] == '!') {
		for p < len(s.src) && s.src[p] != ' ' && s.src[p] != '\n' && s.src[p] != '\r' {
			p++
		}
		for p < len(s.src) && s.src[p] == ' ' {
			p++
		}
	}
	return p
}

// scalarEnd is where a scalar, alias or flow collection that starts at start
// ends; ok is false when it does not end on its line (or cannot be told).
func (s *splicer) scalarEnd(n *yaml.Node, start int) (int, bool) {
	src := s.src
	line := s.lineAt(start)
	eol := s.lineEnd(line)
	switch {
	case n.Kind == yaml.AliasNode:
		return start + 1 + len(n.Value), start+1+len(n.Value) <= eol
	case n.Kind != yaml.ScalarNode:
		if n.Style&yaml.FlowStyle == 0 {
			return 0, false
		}
		depth := 0
		for p := start; p < eol; p++ {
			switch src[p] {
			case '"', '\'':
				q := src[p]
				for p++; p < eol && src[p] != q; p++ {
					if q == '"' && src[p] == '\\' {
						p++
					}
				}
			case '[', '{':
				depth++
			case ']', '}':
				depth--
				if depth == 0 {
					return p + 1, true
				}
			}
		}
		return 0, false
	case n.Style&yaml.DoubleQuotedStyle != 0:
		for p := start + 1; p < eol; p++ {
			if src[p] == '\\' {
				p++
			} else if src[p] == '"' {
				return p + 1, true
			}
		}
		return 0, false
	case n.Style&yaml.SingleQuotedStyle != 0:
		for p := start + 1; p < eol; p++ {
			if src[p] == '\'' {
				if p+1 < eol && src[p+1] == '\'' {
					p++
					continue
				}
				return p + 1, true
			}
		}
		return 0, false
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		return 0, false
	}
	// Plain: up to a comment or the end of the line.
	end := eol
	for p := start; p < eol; p++ {
		if src[p] == '#' && p > start && (src[p-1] == ' ' || src[p-1] == '\t') {
			end = p
			break
		}
		if src[p] == ':' && (p+1 == eol || src[p+1] == ' ') && n.Kind == yaml.ScalarNode && n.Line == line {
			// a key: ends at its colon
			end = p
			break
		}
	}
	return len(strings.TrimRight(string(src[:end]), " \t")), true
}

// value is what a node says, as the API server would decode it.
func value(n *yaml.Node) any {
	var v any
	if out, err := yaml.Marshal(n); err == nil {
		if sigsyaml.Unmarshal(out, &v) == nil {
			return cluster.Normalize(v, 0)
		}
	}
	v = nil
	if n.Decode(&v) != nil {
		return nil
	}
	// Normalize also turns yaml.v3's map[any]any into map[string]any.
	return cluster.Normalize(v, 0)
}

func same(a, b any) bool { return reflect.DeepEqual(cluster.Normalize(a, 0), cluster.Normalize(b, 0)) }

func isBlock(n *yaml.Node) bool {
	return (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && n.Style&yaml.FlowStyle == 0 && len(n.Content) > 0
}

// mapping makes a block mapping say want.
func (s *splicer) mapping(n *yaml.Node, want map[string]any, sl *slot, depth int) error {
	if depth > cluster.MaxValueDepth {
		return errNotMinimal
	}
	if !isBlock(n) || n.Kind != yaml.MappingNode {
		if sl == nil {
			return errNotMinimal
		}
		return s.replace(*sl, want)
	}
	mark := len(s.edits)
	explicit := map[string]bool{}
	merged := false
	var last int
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		es, err := s.entrySlot(k, v)
		if err != nil {
			return err
		}
		last = max(last, es.last)
		if k.Tag == "!!merge" || (k.Value == "<<" && k.Style == 0) {
			merged = true
			continue
		}
		explicit[k.Value] = true
		w, keep := want[k.Value]
		if !keep {
			if i == 0 && sl != nil && sl.item {
				// The first key of a sequence item shares the dash's line.
				s.edits = s.edits[:mark]
				return s.replace(*sl, want)
			}
			s.edits = append(s.edits, splice{s.starts[s.headComment(k.Line, k.Column-1)-1], s.after(es.last), ""})
			continue
		}
		if same(value(v), w) {
			continue
		}
		if err := s.set(es, w, depth+1); err != nil {
			return err
		}
	}
	if len(explicit) > 0 && len(want) == 0 && !merged && sl != nil {
		s.edits = s.edits[:mark]
		return s.replace(*sl, want)
	}
	var added []string
	full, _ := value(n).(map[string]any)
	for k, w := range want {
		if explicit[k] {
			continue
		}
		if merged && full != nil && full[k] != nil && same(full[k], w) {
			continue
		}
		added = append(added, k)
	}
	if len(added) == 0 {
		return nil
	}
	s.sortKeys(added, want)
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range added {
		m.Content = append(m.Content, keyNode(k), s.node(want[k]))
	}
	lines := s.block(m, n.Content[0].Column-1)
	at := s.after(last)
	text := strings.Join(lines, s.nl) + s.nl
	if at == len(s.src) && len(s.src) > 0 && s.src[len(s.src)-1] != '\n' {
		text = s.nl + strings.TrimSuffix(text, s.nl)
	}
	s.edits = append(s.edits, splice{at, at, text})
	return nil
}

// set makes the value of a slot say w, changing as little as it can.
func (s *splicer) set(sl slot, w any, depth int) error {
	v := sl.val
	if wm, ok := w.(map[string]any); ok && isBlock(v) && v.Kind == yaml.MappingNode {
		return s.mapping(v, wm, &sl, depth)
	}
	if wl, ok := w.([]any); ok && isBlock(v) && v.Kind == yaml.SequenceNode {
		return s.sequence(v, wl, sl, depth)
	}
	return s.replace(sl, w)
}

// sequence makes a block sequence say want: items kept and some added when it
// can, else the whole list over its lines.
func (s *splicer) sequence(n *yaml.Node, want []any, sl slot, depth int) error {
	if depth > cluster.MaxValueDepth {
		return errNotMinimal
	}
	if len(want) < len(n.Content) {
		return s.replace(sl, want)
	}
	var slots []slot
	for i, it := range n.Content {
		is, err := s.itemSlot(n, it)
		if err != nil {
			return err
		}
		if same(value(it), want[i]) {
			slots = append(slots, is)
			continue
		}
		if _, ok := want[i].(map[string]any); !ok || it.Kind != yaml.MappingNode || !isBlock(it) {
			return s.replace(sl, want)
		}
		slots = append(slots, is)
	}
	mark := len(s.edits)
	for i, is := range slots {
		if same(value(is.val), want[i]) {
			continue
		}
		if err := s.mapping(is.val, want[i].(map[string]any), &is, depth+1); err != nil {
			s.edits = s.edits[:mark]
			return s.replace(sl, want)
		}
	}
	if len(want) == len(n.Content) {
		return nil
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	for _, w := range want[len(n.Content):] {
		seq.Content = append(seq.Content, s.node(w))
	}
	last := slots[len(slots)-1].last
	lines := s.block(seq, slots[0].indent)
	at := s.after(last)
	text := strings.Join(lines, s.nl) + s.nl
	if at == len(s.src) && len(s.src) > 0 && s.src[len(s.src)-1] != '\n' {
		text = s.nl + strings.TrimSuffix(text, s.nl)
	}
	s.edits = append(s.edits, splice{at, at, text})
	return nil
}

// replace writes w as the whole value of a slot.
func (s *splicer) replace(sl slot, w any) error {
	v := sl.val
	nu := s.reuse(v, w, 0)
	headLine := s.lineAt(sl.head)
	inline := !isBlock(nu) || v.Style&yaml.FlowStyle != 0
	// A scalar, alias or flow value on one line is replaced where it stands.
	if v.Kind != yaml.MappingNode && v.Kind != yaml.SequenceNode || v.Style&yaml.FlowStyle != 0 {
		start := s.valueStart(v)
		if end, ok := s.scalarEnd(v, start); ok && inline && sl.last == s.lineAt(start) {
			if v.Kind == yaml.AliasNode {
				start = s.offset(v.Line, v.Column)
			}
			s.edits = append(s.edits, splice{start, end, s.inline(nu, false)})
			return nil
		}
	}
	end := s.lineEnd(sl.last)
	if sl.last == headLine {
		// Keep a comment that ends the line.
		if c := commentAt(s.src[sl.head:end]); c >= 0 {
			end = sl.head + c
			for end > sl.head && (s.src[end-1] == ' ' || s.src[end-1] == '\t') {
				end--
			}
		}
	}
	var text string
	switch {
	case inline:
		text = " " + s.inline(nu, false)
	case sl.item:
		lines := s.block(nu, sl.indent+2)
		lines[0] = strings.TrimLeft(lines[0], " ")
		text = " " + strings.Join(lines, s.nl)
	default:
		indent := sl.indent + s.style.step
		if nu.Kind == yaml.SequenceNode {
			indent = sl.indent + s.style.seqIndent
			if v.Kind == yaml.SequenceNode && isBlock(v) {
				indent = v.Column - 1
			}
		} else if v.Kind == yaml.MappingNode && isBlock(v) {
			indent = v.Content[0].Column - 1
		}
		text = s.nl + strings.Join(s.block(nu, indent), s.nl)
	}
	s.edits = append(s.edits, splice{sl.head, end, text})
	return nil
}

// commentAt is where a comment starts in a line's rest, or -1.
func commentAt(b []byte) int {
	inQ := byte(0)
	for i, c := range b {
		switch {
		case inQ != 0:
			if c == inQ {
				inQ = 0
			}
		case c == '"' || c == '\'':
			inQ = c
		case c == '#' && (i == 0 || b[i-1] == ' ' || b[i-1] == '\t'):
			return i
		}
	}
	return -1
}

// keepQuotes is the style a new string takes in place of an old scalar: the
// old quotes when they can hold it, else plain (quoted when it must be).
func keepQuotes(old yaml.Style, v string) yaml.Style {
	switch {
	case old&yaml.DoubleQuotedStyle != 0:
		return yaml.DoubleQuotedStyle
	case old&yaml.SingleQuotedStyle != 0 && !strings.ContainsAny(v, "\n\r"):
		return yaml.SingleQuotedStyle
	}
	return 0
}

// sortKeys orders new keys as the patch writes them, the others by name.
func (s *splicer) sortKeys(keys []string, want map[string]any) {
	rank := map[string]int{}
	if src := s.source(want); src != nil && src.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(src.Content); i += 2 {
			rank[src.Content[i].Value] = i + 1
		}
	} else if s.patch != nil {
		// The keys of the first patch mapping that has them all.
		var find func(n *yaml.Node, depth int) bool
		find = func(n *yaml.Node, depth int) bool {
			if n == nil || depth > cluster.MaxValueDepth {
				return false
			}
			if n.Kind == yaml.MappingNode {
				r := map[string]int{}
				for i := 0; i+1 < len(n.Content); i += 2 {
					r[n.Content[i].Value] = i + 1
				}
				all := true
				for _, k := range keys {
					if r[k] == 0 {
						all = false
					}
				}
				if all {
					rank = r
					return true
				}
			}
			for _, c := range n.Content {
				if find(c, depth+1) {
					return true
				}
			}
			return false
		}
		find(s.patch, 0)
	}
	sort.SliceStable(keys, func(i, j int) bool {
		ri, rj := rank[keys[i]], rank[keys[j]]
		if (ri == 0) != (rj == 0) {
			return ri != 0
		}
		if ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
}

// source is the part of the patch, as written, that says exactly v.
func (s *splicer) source(v any) *yaml.Node {
	if s.patch == nil {
		return nil
	}
	want := cluster.Normalize(v, 0)
	var found *yaml.Node
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		if found != nil || depth > cluster.MaxValueDepth {
			return
		}
		if (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && reflect.DeepEqual(value(n), want) {
			found = n
			return
		}
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	switch want.(type) {
	case map[string]any, []any:
		walk(s.patch, 0)
	}
	return found
}

func keyNode(k string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k} }

// node is v as a YAML node, as the patch writes it when it does.
func (s *splicer) node(v any) *yaml.Node {
	if n := s.source(v); n != nil {
		return n
	}
	switch t := cluster.Normalize(v, 0).(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		s.sortKeys(keys, t)
		m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, k := range keys {
			m.Content = append(m.Content, keyNode(k), s.node(t[k]))
		}
		return m
	case []any:
		q := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, e := range t {
			q.Content = append(q.Content, s.node(e))
		}
		return q
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	default:
		var n yaml.Node
		if err := n.Encode(t); err != nil {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: fmt.Sprint(t)}
		}
		n.Style = 0
		return &n
	}
}

// reuse is w as a YAML node made of the old node's parts where they still
// hold: keys and values that stay keep their text (quotes, flow style,
// aliases), so rewriting a flow mapping or a whole list changes only what
// differs in it.
func (s *splicer) reuse(old *yaml.Node, w any, depth int) *yaml.Node {
	if depth > cluster.MaxValueDepth {
		return s.node(w)
	}
	if old.Kind != yaml.AliasNode && old.Anchor == "" && same(value(old), w) {
		return old
	}
	switch t := cluster.Normalize(w, 0).(type) {
	case map[string]any:
		if old.Kind != yaml.MappingNode || old.Anchor != "" {
			break
		}
		m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: old.Style}
		kept := map[string]bool{}
		for i := 0; i+1 < len(old.Content); i += 2 {
			k := old.Content[i]
			if wv, ok := t[k.Value]; ok && !kept[k.Value] && k.Tag != "!!merge" {
				kept[k.Value] = true
				m.Content = append(m.Content, k, s.reuse(old.Content[i+1], wv, depth+1))
			}
		}
		var added []string
		for k := range t {
			if !kept[k] {
				added = append(added, k)
			}
		}
		s.sortKeys(added, t)
		for _, k := range added {
			m.Content = append(m.Content, keyNode(k), s.node(t[k]))
		}
		return m
	case []any:
		if old.Kind != yaml.SequenceNode || old.Anchor != "" {
			break
		}
		q := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: old.Style}
		for i, wv := range t {
			if i < len(old.Content) {
				q.Content = append(q.Content, s.reuse(old.Content[i], wv, depth+1))
			} else {
				// A new item is quoted as the items before it are.
				nu := s.node(wv)
				if n := len(old.Content); n > 0 && old.Content[n-1].Kind == yaml.ScalarNode && nu.Kind == yaml.ScalarNode && nu.Tag == "!!str" && nu.Style == 0 {
					nu.Style = keepQuotes(old.Content[n-1].Style, nu.Value)
				}
				q.Content = append(q.Content, nu)
			}
		}
		return q
	default:
		nu := s.node(w)
		if old.Kind == yaml.ScalarNode && nu.Kind == yaml.ScalarNode && nu.Tag == "!!str" {
			nu.Style = keepQuotes(old.Style, nu.Value)
		}
		return nu
	}
	return s.node(w)
}

// block renders a non-empty collection as block YAML lines at indent.
func (s *splicer) block(n *yaml.Node, indent int) []string {
	pad := strings.Repeat(" ", indent)
	var out []string
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := s.scalar(n.Content[i], false), n.Content[i+1]
			switch {
			case !isBlock(v):
				out = append(out, pad+k+": "+s.inline(v, false))
			case v.Kind == yaml.MappingNode:
				out = append(out, pad+k+":")
				out = append(out, s.block(v, indent+s.style.step)...)
			default:
				out = append(out, pad+k+":")
				out = append(out, s.block(v, indent+s.style.seqIndent)...)
			}
		}
		return out
	}
	for _, it := range n.Content {
		if !isBlock(it) {
			out = append(out, pad+"- "+s.inline(it, false))
			continue
		}
		sub := s.block(it, indent+2)
		sub[0] = pad + "- " + strings.TrimLeft(sub[0], " ")
		out = append(out, sub...)
	}
	return out
}

// inline renders a scalar, or a collection in flow style.
func (s *splicer) inline(n *yaml.Node, flow bool) string {
	switch n.Kind {
	case yaml.MappingNode:
		var parts []string
		for i := 0; i+1 < len(n.Content); i += 2 {
			parts = append(parts, s.scalar(n.Content[i], true)+": "+s.inline(n.Content[i+1], true))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case yaml.SequenceNode:
		var parts []string
		for _, c := range n.Content {
			parts = append(parts, s.inline(c, true))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case yaml.AliasNode:
		if n.Alias != nil {
			return s.inline(n.Alias, flow)
		}
	}
	return s.scalar(n, flow)
}

// scalar renders a scalar: quoted as it was written, plain when plain reads
// back the same to both YAML readers eksdoctor's users have (YAML 1.1 and
// 1.2), double-quoted otherwise.
func (s *splicer) scalar(n *yaml.Node, flow bool) string {
	v := n.Value
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		return doubleQuoted(v)
	case n.Style&yaml.SingleQuotedStyle != 0 && !strings.ContainsAny(v, "\n\r"):
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	}
	switch n.ShortTag() {
	case "!!str":
	case "!!null":
		return "null"
	default:
		return v
	}
	if plainSafe(v, flow) {
		return v
	}
	return doubleQuoted(v)
}

func doubleQuoted(v string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return `""`
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func plainSafe(v string, flow bool) bool {
	if v == "" || v != strings.TrimSpace(v) || strings.ContainsAny(v, "\n\r\t") || (flow && strings.ContainsAny(v, ",[]{}")) {
		return false
	}
	doc := []byte("k: " + v + "\n")
	var a map[string]any
	if yaml.Unmarshal(doc, &a) != nil || a["k"] != v {
		return false
	}
	var b map[string]any
	return sigsyaml.Unmarshal(doc, &b) == nil && b["k"] == v
}

// apply makes the splices, last first.
func (s *splicer) apply() ([]byte, error) {
	es := append([]splice(nil), s.edits...)
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].start != es[j].start {
			return es[i].start > es[j].start
		}
		return es[i].end > es[j].end
	})
	out := append([]byte{}, s.src...)
	prev := len(s.src) + 1
	for _, e := range es {
		if e.end > prev {
			return nil, errNotMinimal
		}
		out = append(out[:e.start:e.start], append([]byte(e.text), out[e.end:]...)...)
		prev = e.start
	}
	return out, nil
}

// spliceObject changes the mapping that starts at line at (1-based, in text;
// 0 for the document's root) to say want, by splices of text; the result is
// read again and must say want.
func spliceObject(text []byte, at int, want map[string]any, patch *yaml.Node, style yamlStyle) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return nil, err
	}
	obj, sl := findMapping(&doc, at)
	if obj == nil {
		return nil, errNotMinimal
	}
	s := newSplicer(text, style, patch)
	var err error
	if sl != nil {
		is, ierr := s.itemSlot(sl, obj)
		if ierr != nil {
			return nil, ierr
		}
		err = s.mapping(obj, want, &is, 0)
	} else {
		err = s.mapping(obj, want, nil, 0)
	}
	if err != nil {
		return nil, err
	}
	out, err := s.apply()
	if err != nil {
		return nil, err
	}
	var again yaml.Node
	if err := yaml.Unmarshal(out, &again); err != nil {
		return nil, fmt.Errorf("%w: %v", errNotMinimal, err)
	}
	if got, _ := findMapping(&again, at); got == nil || !same(value(got), want) {
		return nil, errNotMinimal
	}
	return out, nil
}

// findMapping is the outermost mapping that starts at line at (the root when
// at is 0), with the block sequence it is an item of, if any.
func findMapping(doc *yaml.Node, at int) (*yaml.Node, *yaml.Node) {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		if at == 0 {
			if doc.Content[0].Kind == yaml.MappingNode {
				return doc.Content[0], nil
			}
			return nil, nil
		}
	}
	var found, parent *yaml.Node
	var walk func(n, p *yaml.Node, depth int)
	walk = func(n, p *yaml.Node, depth int) {
		if found != nil || depth > cluster.MaxValueDepth {
			return
		}
		if n.Kind == yaml.MappingNode && n.Line == at && (p == nil || p.Kind != yaml.MappingNode) {
			found = n
			if p != nil && p.Kind == yaml.SequenceNode && isBlock(p) {
				parent = p
			}
			return
		}
		for _, c := range n.Content {
			walk(c, n, depth+1)
		}
	}
	walk(doc, nil, 0)
	return found, parent
}
