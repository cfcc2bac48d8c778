package cluster

// Addressing answers what checks need to know of Terraform addresses and
// configuration files. Only source/terraform, which reads addresses, implements
// it; its loader sets it on the graph it builds (Graph.Addressing), so checks
// ask the model and never take an address apart themselves.
type Addressing interface {
	// Resource is the graph node a resource address is: the address itself,
	// or the address without its instance key; "" when neither is a node.
	Resource(g *Graph, addr string) string
	// Node is the graph node an address belongs to: the address itself, or
	// the module call it is inside; "" when neither is a node.
	Node(g *Graph, addr string) string
	// Part is the module part (ModulePart.Address) an address inside a
	// modelled module belongs to, the module call itself when the call has
	// no parts, "" when the address belongs to no node.
	Part(g *Graph, addr string) string
	// InModule reports whether an address is inside a module call (or is one).
	InModule(addr string) bool
	// InstanceKey is the last for_each key an address holds, unquoted
	// ("cluster_creator" for aws_eks_access_entry.this["cluster_creator"]);
	// "" when it holds none.
	InstanceKey(addr string) string
	// Config is an address without its instance keys, as the configuration
	// writes it.
	Config(addr string) string
	// ConfigFile reports whether a file is a Terraform configuration file
	// (as opposed to a plan, a values file, a manifest).
	ConfigFile(file string) bool
	// Owner is the graph node that stands for an instance address (a model
	// entry's): its resource without instance keys, or else the innermost
	// module call of g that holds it; "" when none does.
	Owner(g *Graph, addr string) string
	// Same reports whether two addresses or references name the same
	// configuration address.
	Same(a, b string) bool
	// Within reports whether addr is inside the module call `call`, at any
	// depth.
	Within(addr, call string) bool
	// Depth is how many module calls an address is nested in: 0 for a
	// resource or module call of the root module.
	Depth(addr string) int
	// Ref names the resource or module call at an address as the object of a
	// finding: kind "module" and the call's name for a module call of the
	// root module, the resource type and name for a root resource, the
	// resource type and the whole address inside a module; false when the
	// address is none of these.
	Ref(addr string) (ObjectRef, bool)
}

// The Graph methods below ask the graph's Addressing; on a nil graph, or one
// no loader set Addressing on, they know nothing: "" and false.

// ResourceOf is Addressing.Resource.
func (g *Graph) ResourceOf(addr string) string {
	if g == nil || g.Addressing == nil {
		return ""
	}
	return g.Addressing.Resource(g, addr)
}

// NodeOf is Addressing.Node.
func (g *Graph) NodeOf(addr string) string {
	if g == nil || g.Addressing == nil {
		return ""
	}
	return g.Addressing.Node(g, addr)
}

// PartOf is Addressing.Part.
func (g *Graph) PartOf(addr string) string {
	if g == nil || g.Addressing == nil {
		return ""
	}
	return g.Addressing.Part(g, addr)
}

// InModule is Addressing.InModule.
func (g *Graph) InModule(addr string) bool {
	return g != nil && g.Addressing != nil && g.Addressing.InModule(addr)
}

// InstanceKey is Addressing.InstanceKey; "" without Addressing.
func (g *Graph) InstanceKey(addr string) string {
	if g == nil || g.Addressing == nil {
		return ""
	}
	return g.Addressing.InstanceKey(addr)
}

// ConfigAddress is Addressing.Config; "" without Addressing.
func (g *Graph) ConfigAddress(addr string) string {
	if g == nil || g.Addressing == nil {
		return ""
	}
	return g.Addressing.Config(addr)
}

// InConfig reports whether a file is a Terraform configuration file
// (Addressing.ConfigFile).
func (g *Graph) InConfig(file string) bool {
	return g != nil && g.Addressing != nil && g.Addressing.ConfigFile(file)
}

// OwnerOf is Addressing.Owner.
func (g *Graph) OwnerOf(addr string) string {
	if g == nil || g.Addressing == nil || addr == "" {
		return ""
	}
	return g.Addressing.Owner(g, addr)
}

// Same is Addressing.Same; false without Addressing.
func (g *Graph) Same(a, b string) bool {
	return g != nil && g.Addressing != nil && g.Addressing.Same(a, b)
}

// Within is Addressing.Within; false without Addressing.
func (g *Graph) Within(addr, call string) bool {
	return g != nil && g.Addressing != nil && g.Addressing.Within(addr, call)
}

// Depth is Addressing.Depth; -1 without Addressing.
func (g *Graph) Depth(addr string) int {
	if g == nil || g.Addressing == nil {
		return -1
	}
	return g.Addressing.Depth(addr)
}

// RefOf is Addressing.Ref; false without Addressing.
func (g *Graph) RefOf(addr string) (ObjectRef, bool) {
	if g == nil || g.Addressing == nil {
		return ObjectRef{}, false
	}
	return g.Addressing.Ref(addr)
}
