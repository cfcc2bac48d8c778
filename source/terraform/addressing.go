package terraform

import (
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// Addressing answers the model's questions about Terraform addresses
// (cluster.Addressing); the loaders set it on every graph they build.
type Addressing struct{}

var _ cluster.Addressing = Addressing{}

// Resource is the graph node of a resource address: the address itself, or
// the address without its instance key.
func (Addressing) Resource(g *cluster.Graph, addr string) string {
	if g == nil || addr == "" {
		return ""
	}
	if _, ok := g.Nodes[addr]; ok {
		return addr
	}
	if i := strings.IndexByte(addr, '['); i > 0 && !strings.Contains(addr[i:], ".") {
		if _, ok := g.Nodes[addr[:i]]; ok {
			return addr[:i]
		}
	}
	return ""
}

// Node is NodeOf.
func (Addressing) Node(g *cluster.Graph, addr string) string { return NodeOf(g, addr) }

// Part is PartOf.
func (Addressing) Part(g *cluster.Graph, addr string) string { return PartOf(g, addr) }

// InModule reports whether an address is inside a module call.
func (Addressing) InModule(addr string) bool { return InModule(addr) }

// InstanceKey is ForEachKey.
func (Addressing) InstanceKey(addr string) string {
	k, _ := ForEachKey(addr)
	return k
}

// Config is ConfigAddress.
func (Addressing) Config(addr string) string { return ConfigAddress(addr) }

// ConfigFile is WrittenInConfig.
func (Addressing) ConfigFile(file string) bool { return WrittenInConfig(file) }

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
