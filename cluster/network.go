package cluster

import (
	"sort"
	"strings"
)

// Network is what the inputs create of the network Karpenter's node classes
// select from: subnets and security groups, with the tags they give them. It
// is never the whole account: a node class may select what other
// configurations create, so an empty list means "not seen", not "none".
type Network struct {
	Subnets        []*NetworkResource
	SecurityGroups []*NetworkResource
	// Floating are tags added by resource ID (aws_ec2_tag) to a resource the
	// inputs do not show, or whose ID is not known before apply: they may tag
	// any subnet or security group.
	Floating []AddedTag
	// SubnetsOutside and SecurityGroupsOutside say why subnets (security
	// groups) other than those listed may be the cluster's: data sources that
	// read existing ones, IDs written as literals, remote state, modules not
	// modelled. Empty when the inputs appear to hold all of them.
	SubnetsOutside, SecurityGroupsOutside []string
}

// NetworkKind tells subnets and security groups apart.
type NetworkKind int

const (
	_ NetworkKind = iota
	NetworkSubnet
	NetworkSecurityGroup
)

func (k NetworkKind) String() string {
	switch k {
	case NetworkSubnet:
		return "subnet"
	case NetworkSecurityGroup:
		return "security group"
	}
	return "unknown"
}

// NetworkResource is a subnet or a security group the inputs create (or a set
// of them that share their tags: the private subnets of a VPC module call).
type NetworkResource struct {
	Kind NetworkKind
	// What names it for the user ("the private subnets of module.vpc",
	// "aws_security_group.nodes").
	What string
	// Address is its Terraform address (an instance address).
	Address string
	// ID is its ID when known before apply ("subnet-0abc"); "" otherwise.
	ID string
	// Name is a security group's name (group-name); an unknown placeholder
	// when it is not known (a name prefix with a random suffix), "" when it
	// has none.
	Name string
	// Tags are its tags; a value may be an unknown placeholder.
	// TagsUnknown, when set, is the expression of tags not known before
	// apply (a wholly unknown map merged in): any tag may be there.
	Tags        map[string]string
	TagsUnknown string
	// TagOrigins says where each tag is written, when known.
	TagOrigins map[string]Origin
	// Origin is where its tags are written (the input map, the block).
	Origin Origin
	// Refs are the expressions that stand for its ID
	// ("module.vpc.private_subnets", "aws_subnet.a"): an aws_ec2_tag whose
	// resource_id is one of them tags it.
	Refs []string
	// Conditional is the count or for_each expression, not known before
	// apply, that decides whether it exists; "" when it does.
	Conditional string
	// Decl is where a tag can be added: Block is the declaring block's
	// address, Key the argument holding the map ("private_subnet_tags",
	// "tags"); DeclUnknown when a tag cannot be added there by an edit
	// (the map is built by a function or read from elsewhere).
	Decl Decl
	// AddedBy are the aws_ec2_tag resources that add tags to it.
	AddedBy []AddedTag
	// ForNodes marks what the inputs mean nodes to use: the private subnets
	// of a VPC module, the node security group of the EKS module; a missing
	// tag is best added there.
	ForNodes bool
}

// AddedTag is one tag added by resource ID (an aws_ec2_tag resource).
type AddedTag struct {
	Key, Value string
	// ResourceID is the resource_id, as evaluated (often a placeholder).
	ResourceID string
	Address    string
	Origin     Origin
}

// Declared reports whether the inputs create any resource of a kind.
func (n *Network) Declared(k NetworkKind) bool { return len(n.Of(k)) > 0 }

// Of returns the resources of a kind.
func (n *Network) Of(k NetworkKind) []*NetworkResource {
	if k == NetworkSubnet {
		return n.Subnets
	}
	return n.SecurityGroups
}

// Outside returns why resources of a kind may come from outside the inputs.
func (n *Network) Outside(k NetworkKind) []string {
	if k == NetworkSubnet {
		return n.SubnetsOutside
	}
	return n.SecurityGroupsOutside
}

// add joins another loader's network.
func (n *Network) add(o Network) {
	n.Subnets = append(n.Subnets, o.Subnets...)
	n.SecurityGroups = append(n.SecurityGroups, o.SecurityGroups...)
	n.Floating = append(n.Floating, o.Floating...)
	n.SubnetsOutside = append(n.SubnetsOutside, o.SubnetsOutside...)
	n.SecurityGroupsOutside = append(n.SecurityGroupsOutside, o.SecurityGroupsOutside...)
}

// Sort orders every list by address.
func (n *Network) Sort() {
	for _, l := range [][]*NetworkResource{n.Subnets, n.SecurityGroups} {
		sort.SliceStable(l, func(i, j int) bool { return l[i].Address < l[j].Address })
	}
	sort.SliceStable(n.Floating, func(i, j int) bool { return n.Floating[i].Address < n.Floating[j].Address })
	sort.Strings(n.SubnetsOutside)
	sort.Strings(n.SecurityGroupsOutside)
}

// Denotes reports whether an expression (the text of a value not known
// before apply) refers to the resource: holds one of its Refs, followed by
// anything but a name's character ("module.vpc.private_subnets[0]",
// "aws_subnet.a.id").
func (r *NetworkResource) Denotes(text string) bool {
	for _, ref := range r.Refs {
		for i := 0; ; {
			j := strings.Index(text[i:], ref)
			if j < 0 {
				break
			}
			start, end := i+j, i+j+len(ref)
			if (start == 0 || !nameChar(text[start-1])) && (end == len(text) || !nameChar(text[end])) {
				return true
			}
			i = end
		}
	}
	return false
}

func nameChar(c byte) bool {
	return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
