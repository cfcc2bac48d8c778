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
	// Addressing answers questions about addresses (see lookup.go); set by
	// the loader that builds the graph.
	Addressing Addressing
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
	// RefOutputs lists, for each module call among Refs, the outputs the
	// expressions read, sorted; "" stands for a reference to the call as a
	// whole or through a module input whose outputs are not known.
	RefOutputs map[string][]string
	// Outputs holds, for a module call whose outputs are known, what each
	// output depends on: graph addresses (resources of a local module, or the
	// caller's addresses an input stands for) and parts of the module (Parts).
	// Nil when not known: reading any output then depends on the whole module.
	Outputs map[string][]string
	// Parts divides a modelled registry module (terraform-aws-modules/eks,
	// terraform-aws-modules/vpc) into what Terraform orders separately.
	Parts []ModulePart
	// Commands are what the resource's destroy-time commands (local-exec
	// provisioners with when = destroy) remove.
	Commands []Command
	// Destroy is what the Terraform loader knows of what the resource is and
	// how terraform destroy removes it (Destroy.Kind 0 when nothing particular).
	Destroy Destroy
}

// ModulePart is a set of resources inside a module call that eksdoctor models
// without reading the module: the Fargate profiles of terraform-aws-modules/eks,
// the NAT gateways and routes of terraform-aws-modules/vpc.
type ModulePart struct {
	// Address is the call's address, "#" and the part's name
	// ("module.eks#fargate"); Name is the name (PartFargate, PartEgress, ...).
	Address, Name string
	// Prefixes are the configuration addresses inside the module, without the
	// call's, that belong to the part ("module.fargate_profile",
	// "aws_nat_gateway."); the part without prefixes holds the rest.
	Prefixes []string
	// Deps are the addresses of the parts of the same call it depends on.
	Deps []string
}

// Names of module parts that checks look for.
const (
	// PartFargate: the Fargate profiles of terraform-aws-modules/eks.
	PartFargate = "fargate"
	// PartEgress: the internet and NAT gateways, route tables, routes and
	// their associations of terraform-aws-modules/vpc.
	PartEgress = "egress"
)

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

// Reach returns everything a resource depends on, directly or transitively,
// with references to module outputs read as Terraform reads them: an output
// depends only on what its expression (and its depends_on) refers to inside
// the module, so referring to module.eks.cluster_name does not wait for the
// module's Fargate profiles, while depends_on = [module.eks] waits for all of
// it. Keys are graph addresses and module part addresses (ModulePart.Address);
// a module call reached as a whole brings all its parts.
func (g *Graph) Reach(from string) map[string]bool {
	seen := map[string]bool{}
	stack := []string{from}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, next := range g.preciseEdges(cur) {
			if !seen[next] && next != from {
				seen[next] = true
				stack = append(stack, next)
			}
		}
	}
	return seen
}

// Reaches reports whether from depends on to (a graph address or a module
// part address) in the sense of Reach.
func (g *Graph) Reaches(from, to string) bool {
	return from != to && g.Reach(from)[to]
}

// Part returns a module part by address.
func (g *Graph) Part(addr string) (*Resource, *ModulePart) {
	i := strings.IndexByte(addr, '#')
	if i < 0 {
		return nil, nil
	}
	r := g.Nodes[addr[:i]]
	if r == nil {
		return nil, nil
	}
	for k := range r.Parts {
		if r.Parts[k].Address == addr {
			return r, &r.Parts[k]
		}
	}
	return nil, nil
}

func (g *Graph) preciseEdges(addr string) []string {
	if call, part := g.Part(addr); part != nil {
		return append(append([]string(nil), part.Deps...), g.externalEdges(call)...)
	}
	r := g.Nodes[addr]
	if r == nil {
		return nil
	}
	out := g.externalEdges(r)
	for _, p := range r.Parts {
		out = append(out, p.Address)
	}
	return out
}

// externalEdges are the dependencies of a resource or module call, with each
// module call it reads only known outputs of replaced by what those outputs
// depend on.
func (g *Graph) externalEdges(r *Resource) []string {
	var out []string
	for _, d := range r.DependsOn {
		if _, ok := g.Nodes[d]; ok && d != r.Address {
			out = append(out, d)
		}
	}
	for _, d := range r.Refs {
		t, ok := g.Nodes[d]
		if !ok || d == r.Address {
			continue
		}
		if deps, ok := outputDeps(t, r.RefOutputs[d]); ok {
			out = append(out, deps...)
			continue
		}
		out = append(out, d)
	}
	return out
}

// outputDeps returns what reading some outputs of a module call depends on;
// false when any of them is not known.
func outputDeps(call *Resource, outputs []string) ([]string, bool) {
	if call.Outputs == nil || len(outputs) == 0 {
		return nil, false
	}
	var out []string
	for _, o := range outputs {
		deps, ok := call.Outputs[o]
		if !ok {
			return nil, false
		}
		out = append(out, deps...)
	}
	return out, true
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
