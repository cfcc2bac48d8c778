package manifest

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// YAML anchors and aliases let a few hundred bytes stand for billions of nodes
// (`a: &a [x, x, x]`, `b: &b [*a, *a, *a]`, ...). Parsing into a yaml.Node tree is
// linear, since an alias stays a pointer; it is turning the tree into values that
// expands every alias. Each walk over a tree takes a Budget and spends one unit per
// node it produces: a document may expand to its own size plus a bounded allowance,
// as yaml.v3 itself bounds aliases when it decodes into Go values.
const (
	// minAliasAllowance is what any document may add through aliases.
	minAliasAllowance = 10_000
	// aliasRatio is how many times its own size a large document may add.
	aliasRatio = 4
)

// Budget counts the nodes a walk over one YAML tree produces.
type Budget struct {
	left, size int
}

// NewBudget returns the budget of the tree under n.
func NewBudget(n *yaml.Node) *Budget {
	size := countNodes(n, 0)
	return &Budget{left: size + max(minAliasAllowance, aliasRatio*size), size: size}
}

// Spend takes one node from the budget; it fails once the tree expands beyond it.
func (b *Budget) Spend() error {
	b.left--
	if b.left < 0 {
		return fmt.Errorf("YAML aliases expand the document beyond %d nodes (it has %d); it is not read", b.size+max(minAliasAllowance, aliasRatio*b.size), b.size)
	}
	return nil
}

// countNodes counts the nodes of a tree without following aliases.
func countNodes(n *yaml.Node, depth int) int {
	if n == nil || depth > 10_000 {
		return 0
	}
	c := 1
	for _, x := range n.Content {
		c += countNodes(x, depth+1)
	}
	return c
}

// CheckAliases reports an error when the YAML text expands, through aliases,
// beyond the budget of its size: for decoders that expand aliases without a bound
// of their own (go-cty-yaml behind Terraform's yamldecode). Text that does not
// parse is left to the decoder to report.
func CheckAliases(data []byte) error {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil
	}
	b := NewBudget(&root)
	limit := b.left
	if n := expanded(&root, map[*yaml.Node]int{}, limit+1, 0); n > limit {
		return fmt.Errorf("YAML aliases expand the document beyond %d nodes (it has %d); it is not read", limit, b.size)
	}
	return nil
}

// expanded returns the number of nodes n expands to, counting an alias as the
// tree it names; it stops counting past limit.
func expanded(n *yaml.Node, memo map[*yaml.Node]int, limit, depth int) int {
	if n == nil {
		return 0
	}
	if v, ok := memo[n]; ok {
		return v
	}
	if depth > 10_000 {
		return limit
	}
	memo[n] = limit // a cycle counts as too large
	c := 1
	if n.Kind == yaml.AliasNode {
		c += expanded(n.Alias, memo, limit, depth+1)
	}
	for _, x := range n.Content {
		if c >= limit {
			break
		}
		c += expanded(x, memo, limit, depth+1)
	}
	c = min(c, limit)
	memo[n] = c
	return c
}
