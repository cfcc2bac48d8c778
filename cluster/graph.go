package cluster

import (
	"sort"
	"strings"
)

// Graph is a Terraform configuration's resources and module calls with their
// dependencies: `depends_on` and references in expressions. Terraform creates a
// resource after everything it depends on and destroys it before them.
type Graph struct {
	Nodes map[string]*Resource
	// Modules are the calls of modules eksdoctor knows the inputs of, as
	// written.
	Modules []*ModuleCall
}

// Resource is a resource, data source or module call. Addresses are the
// configuration's ("helm_release.karpenter", "module.eks", "data.aws_iam_role.x");
// resources inside a called module are represented by the module call.
type Resource struct {
	Address string
	// Type is the resource type ("helm_release") or "module" / "data.<type>".
	Type string
	Name string
	// Source and Version are set for module calls.
	Source  string
	Version string
	// Attrs holds the evaluated top-level arguments that checks need, with
	// JSON-compatible values; unknown values are placeholders (see Unknown).
	Attrs map[string]any
	// DependsOn lists explicit depends_on addresses; Refs lists addresses referenced
	// by expressions. Both are sorted and deduplicated.
	DependsOn []string
	Refs      []string
	Origin    Origin
	// Count tells whether the resource is conditionally created: "" when always,
	// otherwise the count/for_each expression as written.
	Count string
	// Keys is how the instances of a kubectl_manifest or kubernetes_manifest
	// resource with count or for_each are keyed; nil for other resources.
	Keys *InstanceKeys
	// Commands are what the resource's destroy-time commands (local-exec
	// provisioners with when = destroy) remove.
	Commands []Command
}

// What the instance keys of a resource follow (InstanceKeys.From).
const (
	// KeysContent: each key is the text of the document its instance applies.
	KeysContent = "content"
	// KeysDigest: each key is a hash or an encoding of that text.
	KeysDigest = "digest"
	// KeysPosition: each key is the index of the document in a list.
	KeysPosition = "position"
)

// InstanceKeys is the count or for_each of a resource and what its instance
// keys are made of. Terraform tracks each instance by its key: when the key of
// an object changes, the instance under the old key is destroyed and one under
// the new key created.
type InstanceKeys struct {
	// Arg is "count" or "for_each"; Expr is its expression as written, at Origin.
	Arg    string
	Expr   string
	Origin Origin
	// From is KeysContent, KeysDigest or KeysPosition when the keys change with
	// the documents the instances apply; "" when they do not (names, literal
	// keys) or that is not known.
	From string
	// Documents is the expression, as written, of the documents the keys are
	// made from; "" when not known.
	Documents string
	// Rekey holds the arguments to set, by name, with their expressions, so that
	// each instance is keyed by its object's kind and name instead ("null"
	// removes an argument); nil when that cannot be written.
	Rekey map[string]string
}

// NewGraph returns an empty graph.
func NewGraph() *Graph { return &Graph{Nodes: map[string]*Resource{}} }

// Add inserts or replaces a resource.
func (g *Graph) Add(r *Resource) { g.Nodes[r.Address] = r }

// Addresses returns every address, sorted.
func (g *Graph) Addresses() []string {
	out := make([]string, 0, len(g.Nodes))
	for a := range g.Nodes {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// Edges returns the direct dependencies of a resource (depends_on and references),
// sorted, restricted to addresses present in the graph.
func (g *Graph) Edges(addr string) []string {
	r := g.Nodes[addr]
	if r == nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, list := range [][]string{r.DependsOn, r.Refs} {
		for _, d := range list {
			if d == addr || seen[d] {
				continue
			}
			if _, ok := g.Nodes[d]; !ok {
				continue
			}
			seen[d] = true
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// DependsOn reports whether from depends on to, directly or transitively.
func (g *Graph) DependsOn(from, to string) bool {
	if from == to {
		return false
	}
	return g.Path(from, to) != nil
}

// Path returns a dependency chain from -> ... -> to, or nil when there is none.
func (g *Graph) Path(from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, next := range g.Edges(cur) {
			if _, ok := prev[next]; ok {
				continue
			}
			prev[next] = cur
			if next == to {
				path := []string{to}
				for p := cur; p != ""; p = prev[p] {
					path = append([]string{p}, path...)
				}
				return path
			}
			queue = append(queue, next)
		}
	}
	return nil
}

// OfType returns the resources of a type, sorted by address.
func (g *Graph) OfType(typ string) []*Resource {
	var out []*Resource
	for _, a := range g.Addresses() {
		if r := g.Nodes[a]; r.Type == typ {
			out = append(out, r)
		}
	}
	return out
}

// SplitModuleCall splits a Terraform address or reference into the module call
// it is in ("module.x", with its index if any) and the rest; ok is false when it
// is not inside a module call.
func SplitModuleCall(ref string) (call, rest string, ok bool) {
	if !strings.HasPrefix(ref, "module.") {
		return "", "", false
	}
	s := ref[len("module."):]
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case '.':
			if depth == 0 {
				return "module." + s[:i], s[i+1:], true
			}
		}
	}
	return "", "", false
}

// ModuleCall is a call of a module whose inputs eksdoctor knows release by
// release (terraform-aws-modules/eks and its sub-modules,
// aws-ia/eks-blueprints-addons), as written: the arguments and the keys written
// inside their values.
type ModuleCall struct {
	Address string
	// Module names the module as the catalog does
	// ("terraform-aws-modules/eks//modules/karpenter"); Constraint is the version
	// constraint the call gives ("~> 20.0", "= 20.8.4" for a git ref), "" when
	// none.
	Module, Constraint string
	Origin             Origin
	Keys               []WrittenKey
}

// WrittenKey is an argument of a module call (Path empty), or a key written
// inside an argument's value: Path is the argument's name, then the keys and
// entry names on the way ("eks_managed_node_groups", "system").
type WrittenKey struct {
	Path   []string
	Key    string
	Origin Origin
	// InCall is set when the key is written in the module block itself, not in
	// a local the block names.
	InCall bool
	// Value is the key's value as written.
	Value string
}
