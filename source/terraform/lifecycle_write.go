package terraform

import (
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// RekeyByNameEdit rewrites the count or for_each of the resource at an address
// so that each instance is keyed by its object's kind and name
// ("NodePool/default"), not by the document's text, a hash of it or its index:
// the for_each expression is replaced where it stands (a count gives way to a
// for_each, and what read the document by count.index reads each.value), and
// everything else in the block stays as written. ok is false when the keys
// need no rewrite or it cannot be written (a plan or a JSON configuration).
func RekeyByNameEdit(g *cluster.Graph, addr string) (cluster.Edit, bool) {
	if g == nil {
		return cluster.Edit{}, false
	}
	n, ok := g.Nodes[addr]
	if !ok || n.Keys == nil || n.Keys.From == "" || len(n.Keys.Rekey) == 0 || !strings.HasSuffix(n.Origin.File, ".tf") {
		return cluster.Edit{}, false
	}
	names := make([]string, 0, len(n.Keys.Rekey))
	for name := range n.Keys.Rekey {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		b.WriteString(name + " = " + n.Keys.Rekey[name] + "\n")
	}
	return BlockEdit(g, addr, b.String())
}
