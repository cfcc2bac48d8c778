package terraform

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// ignoreComments finds the comments "# eksdoctor:ignore=ID[,ID] reason" of a
// parsed file. Each covers the block or attribute that starts on the next line
// that is not a comment (the whole resource or module when it is a block's
// first line), or that line alone when nothing starts there; a comment at the
// end of a line covers what starts on that line.
func ignoreComments(src []byte, file string, body *hclsyntax.Body) []cluster.Suppression {
	toks, diags := hclsyntax.LexConfig(src, file, hcl.InitialPos)
	if diags.HasErrors() {
		return nil
	}
	var out []cluster.Suppression
	for i, t := range toks {
		if t.Type != hclsyntax.TokenComment {
			continue
		}
		ids, reason, ok := cluster.ParseIgnoreComment(string(t.Bytes))
		if !ok {
			continue
		}
		// The next line that holds something other than comments; the
		// comment's own line when it ends one.
		next := 0
		if i > 0 && toks[i-1].Type != hclsyntax.TokenNewline && toks[i-1].Type != hclsyntax.TokenComment && toks[i-1].Range.End.Line == t.Range.Start.Line {
			next = t.Range.Start.Line
		}
		for _, u := range toks[i+1:] {
			if next > 0 {
				break
			}
			if u.Type != hclsyntax.TokenComment && u.Type != hclsyntax.TokenNewline && u.Type != hclsyntax.TokenEOF {
				next = u.Range.Start.Line
				break
			}
		}
		s := cluster.Suppression{
			Origin: cluster.Origin{File: file, Line: t.Range.Start.Line},
			File:   file, Checks: ids, Reason: reason,
		}
		if next > 0 {
			s.From, s.To = next, itemEnd(body, next)
		}
		out = append(out, s)
	}
	return out
}

// itemEnd is the last line of the outermost block or attribute that starts on
// line, or line when none does.
func itemEnd(body *hclsyntax.Body, line int) int {
	for _, b := range body.Blocks {
		r := b.Range()
		if r.Start.Line == line {
			return r.End.Line
		}
		if r.Start.Line < line && line <= r.End.Line {
			return itemEnd(b.Body, line)
		}
	}
	for _, a := range body.Attributes {
		if a.SrcRange.Start.Line == line {
			return a.SrcRange.End.Line
		}
	}
	return line
}
