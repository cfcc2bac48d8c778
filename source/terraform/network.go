package terraform

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// The network the inputs create, as the node classes of Karpenter select from
// it: the subnets and security groups of terraform-aws-modules/vpc,
// terraform-aws-modules/security-group and terraform-aws-modules/eks (read by
// what each version creates for its inputs, like the rest of those modules),
// raw aws_subnet and aws_security_group resources, the tags aws_ec2_tag adds,
// and the AWS provider's default_tags. What may come from elsewhere (data
// sources, remote state, modules not modelled, subnet IDs written as
// literals) is recorded as such, so that a selector matching nothing here is
// never taken to match nothing at all.

var (
	securityGroupModuleRE = regexp.MustCompile(`^(?:(?:registry\.terraform\.io|registry\.opentofu\.org)/)?terraform-aws-modules/security-group/aws(?://modules/[^/]+)?/?$`)
	// Modules not modelled whose names say they may create subnets, or
	// security groups.
	subnetsModuleRE        = regexp.MustCompile(`(?i)vpc|subnet|network`)
	securityGroupsModuleRE = regexp.MustCompile(`(?i)vpc|security.?group|(^|[/_-])sg([/_-]|$)|eks|node-?group`)
	// Modules about something else, whose names may still say eks.
	notNetworkModuleRE = regexp.MustCompile(`(?i)iam|irsa|kms|s3|ecr|addons?\b`)
)

// vpcSubnetGroups are the subnet groups of terraform-aws-modules/vpc, each
// from its list input (NAME_subnets) with its tags input (NAME_subnet_tags).
var vpcSubnetGroups = []string{"public", "private", "intra", "database", "redshift", "elasticache", "outpost"}

// netState is what the builder collects of the network while resources are
// added, completed by finishNetwork.
type netState struct {
	added []addedTag
	// clusterSubnets are the subnet_ids a cluster is created with.
	clusterSubnets []clusterSubnets
	// writable maps a resource's configuration address to whether its tags
	// argument can take a new key by an edit (absent, or an object
	// constructor).
	writable    map[string]bool
	defaultTags any
	defaultAt   cluster.Origin
}

type addedTag struct {
	cluster.AddedTag
	// match is the text a resource's Refs are looked for in: the resource_id
	// expression and the for_each that decides it.
	match string
}

type clusterSubnets struct {
	value  any
	origin cluster.Origin
}

func (b *builder) net() *netState {
	if b.netw == nil {
		b.netw = &netState{writable: map[string]bool{}}
	}
	return b.netw
}

// moduleNetwork reads what a module call eksdoctor does not otherwise model
// creates of the network.
func (m *modInst) moduleNetwork(call *moduleCall, ci *callInst, b *builder) {
	in := modIn{ci: ci, m: m}
	cfgAddr := m.cfgPrefix + "module." + call.name
	switch {
	case vpcRegistryRE.MatchString(call.source) || vpcGitRE.MatchString(call.source):
		m.vpcNetwork(in, call, cfgAddr, b)
	case securityGroupModuleRE.MatchString(call.source):
		if create, _ := in.boolean("create", true); !create {
			return
		}
		if create, _ := in.boolean("create_sg", true); !create {
			return
		}
		name := in.str("name", "")
		tags, unknown := mergeTags(in.goInput("tags"), map[string]any{"Name": name})
		sg := &cluster.NetworkResource{
			Kind: cluster.NetworkSecurityGroup, What: "the security group of " + ci.addr, Address: ci.addr + ".aws_security_group.this[0]",
			Name: groupName(in, "use_name_prefix", name), Tags: tags, TagsUnknown: unknown,
			Origin: in.origin("tags"), Refs: []string{ci.addr + ".security_group_id"},
			Decl: in.tagsDecl("tags", cfgAddr), Conditional: in.conditional(),
		}
		b.m.Network.SecurityGroups = append(b.m.Network.SecurityGroups, sg)
	case isLocalSource(call.source) || call.missing:
	default:
		why := fmt.Sprintf("%s (%s) is not a module eksdoctor models", ci.addr, call.source)
		other := notNetworkModuleRE.MatchString(call.source)
		subnets := subnetsModuleRE.MatchString(call.source) && !other
		groups := securityGroupsModuleRE.MatchString(call.source) && !other
		for name := range call.block.Body.Attributes {
			// Inputs that say the module makes a network, or security
			// groups of its own.
			switch {
			case name == "cidr" || name == "vpc_cidr" || name == "cidr_block" || strings.HasSuffix(name, "_subnets"):
				subnets = true
			case strings.Contains(name, "security_group") || strings.HasPrefix(name, "sg_") || name == "create_sg":
				groups = true
			}
		}
		if subnets {
			b.m.Network.SubnetsOutside = append(b.m.Network.SubnetsOutside, why)
		}
		if groups {
			b.m.Network.SecurityGroupsOutside = append(b.m.Network.SecurityGroupsOutside, why)
		}
	}
}

// vpcNetwork: terraform-aws-modules/vpc creates one subnet per entry of each
// NAME_subnets list, tagged merge({Name}, tags, NAME_subnet_tags,
// NAME_subnet_tags_per_az[az]), and manages the VPC's default security group
// (manage_default_security_group, true from v5) with merge({Name}, tags,
// default_security_group_tags).
func (m *modInst) vpcNetwork(in modIn, call *moduleCall, cfgAddr string, b *builder) {
	if create, _ := in.boolean("create_vpc", true); !create {
		return
	}
	A := in.ci.addr
	cond := in.conditional()
	for _, g := range vpcSubnetGroups {
		list, ok := in.get(g + "_subnets")
		if !ok {
			continue
		}
		c := cond
		if !list.IsKnown() {
			if t, ok := unknownText(list); ok {
				c = t
			} else {
				c = A + "." + g + "_subnets"
			}
		} else if l := unmark(list); !l.CanIterateElements() || l.LengthInt() == 0 {
			continue
		}
		tagsKey := g + "_subnet_tags"
		name := cluster.Unknown(fmt.Sprintf("%s.aws_subnet.%s[*].tags.Name", A, g))
		base, unknown := mergeTags(map[string]any{"Name": name}, in.goInput("tags"), in.goInput(tagsKey))
		subnet := func(what, addr string, tags map[string]string, unknown string) *cluster.NetworkResource {
			return &cluster.NetworkResource{
				Kind: cluster.NetworkSubnet, What: what, Address: addr, Tags: tags, TagsUnknown: unknown,
				Origin: in.origin(tagsKey), Refs: []string{A + "." + g + "_subnets", A + "." + g + "_subnet_objects"},
				Decl: in.tagsDecl(tagsKey, cfgAddr), Conditional: c,
			}
		}
		all := subnet(fmt.Sprintf("the %s subnets of %s", g, A), fmt.Sprintf("%s.aws_subnet.%s", A, g), base, unknown)
		all.ForNodes = g == "private"
		b.m.Network.Subnets = append(b.m.Network.Subnets, all)
		perAZ := in.goInput(tagsKey + "_per_az")
		switch t := perAZ.(type) {
		case map[string]any:
			for _, az := range sortedKeys(t) {
				tags, unknown := mergeTags(map[string]any{"Name": name}, in.goInput("tags"), in.goInput(tagsKey), t[az])
				s := subnet(fmt.Sprintf("the %s subnets of %s in %s", g, A, az), fmt.Sprintf("%s.aws_subnet.%s[%s]", A, g, az), tags, unknown)
				s.Origin = in.origin(tagsKey + "_per_az")
				b.m.Network.Subnets = append(b.m.Network.Subnets, s)
			}
		case string:
			if cluster.IsUnknown(t) {
				b.m.Network.Subnets[len(b.m.Network.Subnets)-1].TagsUnknown = t
			}
		}
	}
	manage := majorOf(call.version) >= 5
	if v, known := in.boolean("manage_default_security_group", manage); known {
		manage = v
	}
	sg := &cluster.NetworkResource{
		Kind: cluster.NetworkSecurityGroup, What: "the default security group of " + A, Address: A + ".aws_default_security_group.this[0]",
		Name: "default", Tags: map[string]string{}, Origin: in.origin("default_security_group_tags"),
		Refs: []string{A + ".default_security_group_id"}, Conditional: cond,
	}
	if manage {
		sg.Tags, sg.TagsUnknown = mergeTags(map[string]any{"Name": cluster.Unknown(A + ".default_security_group_name")}, in.goInput("tags"), in.goInput("default_security_group_tags"))
		sg.Decl = in.tagsDecl("default_security_group_tags", cfgAddr)
	}
	b.m.Network.SecurityGroups = append(b.m.Network.SecurityGroups, sg)
}

// eksNetwork: the security groups terraform-aws-modules/eks creates — the
// node security group (create_node_security_group, tagged merge(tags, {Name,
// kubernetes.io/cluster/NAME = owned}, node_security_group_tags)), the
// cluster security group (create_cluster_security_group, v21
// create_security_group: merge(tags, {Name}, cluster_security_group_tags, v21
// security_group_tags)) — and the cluster's primary security group, which EKS
// creates and tags with aws:eks:cluster-name and kubernetes.io/cluster/NAME,
// and the module tags with merge(tags, cluster_tags) but Name
// (create_cluster_primary_security_group_tags, v21
// create_primary_security_group_tags).
func (m *modInst) eksNetwork(in modIn, s *semModule, b *builder) {
	A := in.ci.addr
	cfgAddr := m.cfgPrefix + "module." + in.ci.call.name
	cond := in.conditional()
	nameKey, clusterSG, clusterSGTags, primaryTags := "cluster_name", "create_cluster_security_group", "cluster_security_group_tags", "create_cluster_primary_security_group_tags"
	if s.major >= 21 {
		nameKey, clusterSG, clusterSGTags, primaryTags = "name", "create_security_group", "security_group_tags", "create_primary_security_group_tags"
	}
	name := fmt.Sprint(in.str(nameKey, ""))
	owned := "kubernetes.io/cluster/" + name
	b.net().clusterSubnets = append(b.net().clusterSubnets, clusterSubnets{value: in.goInput("subnet_ids"), origin: in.origin("subnet_ids")})
	add := func(create string, r *cluster.NetworkResource) {
		c := cond
		if v, known := in.boolean(create, true); !v {
			return
		} else if !known {
			c = A + "." + create
		}
		r.Conditional = c
		b.m.Network.SecurityGroups = append(b.m.Network.SecurityGroups, r)
	}
	nodeName := name + "-node"
	if v, ok := in.str("node_security_group_name", "").(string); ok && v != "" {
		nodeName = v
	}
	tags, unknown := mergeTags(in.goInput("tags"), map[string]any{"Name": nodeName, owned: "owned"}, in.goInput("node_security_group_tags"))
	add("create_node_security_group", &cluster.NetworkResource{
		Kind: cluster.NetworkSecurityGroup, What: "the node security group of " + A, Address: A + ".aws_security_group.node[0]",
		Name: groupName(in, "node_security_group_use_name_prefix", nodeName), Tags: tags, TagsUnknown: unknown,
		Origin: in.origin("node_security_group_tags"), Refs: []string{A + ".node_security_group_id", A + ".node_security_group_arn"},
		Decl: in.tagsDecl("node_security_group_tags", cfgAddr), ForNodes: true,
	})
	clusterName := name + "-cluster"
	tags, unknown = mergeTags(in.goInput("tags"), map[string]any{"Name": clusterName}, in.goInput(clusterSGTags))
	add(clusterSG, &cluster.NetworkResource{
		Kind: cluster.NetworkSecurityGroup, What: "the cluster security group of " + A, Address: A + ".aws_security_group.cluster[0]",
		Name: groupName(in, "cluster_security_group_use_name_prefix", clusterName), Tags: tags, TagsUnknown: unknown,
		Origin: in.origin(clusterSGTags), Refs: []string{A + ".cluster_security_group_id", A + ".cluster_security_group_arn"},
		Decl: in.tagsDecl(clusterSGTags, cfgAddr),
	})
	primary := &cluster.NetworkResource{
		Kind: cluster.NetworkSecurityGroup, What: "the cluster primary security group EKS creates for " + A, Address: A + ".aws_eks_cluster.this[0].vpc_config[0].cluster_security_group_id",
		Name: cluster.Unknown(A + ".cluster_primary_security_group_id"), Origin: s.origin,
		Refs: []string{A + ".cluster_primary_security_group_id"}, Conditional: cond,
	}
	extra := map[string]any{}
	if v, _ := in.boolean(primaryTags, true); v {
		primary.Origin = in.origin("cluster_tags")
		t, u := mergeTags(in.goInput("tags"), in.goInput("cluster_tags"))
		delete(t, "Name")
		for k, v := range t {
			extra[k] = v
		}
		primary.TagsUnknown = u
	}
	primary.Tags, _ = mergeTags(extra, eksPrimaryTags(name))
	b.m.Network.SecurityGroups = append(b.m.Network.SecurityGroups, primary)
}

// eksPrimaryTags are the tags EKS gives a cluster's primary security group.
func eksPrimaryTags(name string) map[string]any {
	return map[string]any{"aws:eks:cluster-name": name, "kubernetes.io/cluster/" + name: "owned"}
}

// networkResource reads the network resources and data sources of a
// configuration.
func (b *builder) networkResource(r *resInst) {
	n := &b.m.Network
	if r.mode == "data" {
		why := fmt.Sprintf("%s reads %s the inputs do not create (%s)", r.addr, strings.TrimPrefix(r.typ, "aws_"), r.origin)
		switch r.typ {
		case "aws_subnet", "aws_subnets", "aws_subnet_ids", "aws_vpc", "aws_vpcs":
			n.SubnetsOutside = append(n.SubnetsOutside, why)
		case "aws_security_group", "aws_security_groups":
			n.SecurityGroupsOutside = append(n.SecurityGroupsOutside, why)
		case "terraform_remote_state":
			why = fmt.Sprintf("%s reads another configuration's state (%s)", r.addr, r.origin)
			n.SubnetsOutside = append(n.SubnetsOutside, why)
			n.SecurityGroupsOutside = append(n.SecurityGroupsOutside, why)
		}
		return
	}
	cfg := configAddress(r.addr)
	decl := cluster.Decl{Kind: cluster.DeclResource, Block: cfg, Key: "tags"}
	if !b.net().writable[cfg] {
		decl.Kind = cluster.DeclUnknown
	}
	switch r.typ {
	case "aws_subnet", "aws_default_subnet":
		tags, unknown := mergeTags(r.vals["tags"])
		n.Subnets = append(n.Subnets, &cluster.NetworkResource{
			Kind: cluster.NetworkSubnet, What: r.addr, Address: r.addr, ID: literalID(r.vals["id"]), Tags: tags, TagsUnknown: unknown,
			Origin: r.at("tags"), Refs: []string{cfg}, Conditional: r.conditional, Decl: decl,
		})
	case "aws_security_group", "aws_default_security_group":
		tags, unknown := mergeTags(r.vals["tags"])
		name, _ := r.vals["name"].(string)
		if r.typ == "aws_default_security_group" {
			name = "default"
		} else if name == "" {
			name = cluster.Unknown(r.addr + ".name")
		}
		n.SecurityGroups = append(n.SecurityGroups, &cluster.NetworkResource{
			Kind: cluster.NetworkSecurityGroup, What: r.addr, Address: r.addr, Name: name, Tags: tags, TagsUnknown: unknown,
			Origin: r.at("tags"), Refs: []string{cfg}, Conditional: r.conditional, Decl: decl,
		})
	case "aws_ec2_tag":
		t := addedTag{AddedTag: cluster.AddedTag{
			Key: fmt.Sprint(orAny(str(r.vals["key"]), cluster.Unknown(r.addr+".key"))), Value: fmt.Sprint(orAny(str(r.vals["value"]), cluster.Unknown(r.addr+".value"))),
			ResourceID: fmt.Sprint(r.vals["resource_id"]), Address: r.addr, Origin: r.origin,
		}}
		t.match = t.ResourceID + " " + r.conditional
		b.net().added = append(b.net().added, t)
	case "aws_eks_cluster":
		if s, _ := b.sem(r.addr); s != nil && !r.flat {
			// The module's inputs say what it creates (eksNetwork).
			return
		}
		name := fmt.Sprint(r.vals["name"])
		vc := firstBlock(r.vals["vpc_config"])
		b.net().clusterSubnets = append(b.net().clusterSubnets, clusterSubnets{value: vc["subnet_ids"], origin: r.at("vpc_config.0.subnet_ids")})
		tags, _ := mergeTags(eksPrimaryTags(name))
		n.SecurityGroups = append(n.SecurityGroups, &cluster.NetworkResource{
			Kind: cluster.NetworkSecurityGroup, What: "the cluster primary security group EKS creates for " + r.addr, Address: r.addr + ".vpc_config[0].cluster_security_group_id",
			Name: cluster.Unknown(cfg + ".vpc_config[0].cluster_security_group_id"), Tags: tags, Origin: r.origin,
			Refs: []string{cfg + ".vpc_config"}, Conditional: r.conditional,
		})
	}
}

// tagForms records, for the network resources of a module, whether their
// tags argument can take a key by an edit.
func (m *modInst) tagForms(blk *hclsyntax.Block, b *builder) {
	if blk.Type != "resource" {
		return
	}
	switch blk.Labels[0] {
	case "aws_subnet", "aws_security_group", "aws_default_security_group", "aws_default_subnet":
	default:
		return
	}
	a, ok := blk.Body.Attributes["tags"]
	_, obj := objectCons(a)
	b.net().writable[m.cfgPrefix+blk.Labels[0]+"."+blk.Labels[1]] = !ok || obj
}

func objectCons(a *hclsyntax.Attribute) (*hclsyntax.ObjectConsExpr, bool) {
	if a == nil {
		return nil, false
	}
	o, ok := a.Expr.(*hclsyntax.ObjectConsExpr)
	return o, ok
}

// defaultTags reads the default_tags of the root's AWS provider (the one
// without an alias), which every resource it creates carries.
func (m *modInst) defaultTags(b *builder) {
	for _, p := range m.cfg.providers {
		if len(p.Labels) != 1 || p.Labels[0] != "aws" || p.Body.Attributes["alias"] != nil {
			continue
		}
		for _, nb := range p.Body.Blocks {
			if nb.Type != "default_tags" {
				continue
			}
			a, ok := nb.Body.Attributes["tags"]
			if !ok {
				continue
			}
			v, _ := m.l.eval(a.Expr, &evalCtx{m: m})
			b.net().defaultTags = toGo(v, "default_tags of the aws provider")
			b.net().defaultAt = originOf(a.SrcRange)
		}
	}
}

// finishNetwork adds the provider's default tags and the tags aws_ec2_tag
// adds to what they tag, and records what may come from outside.
func (b *builder) finishNetwork() {
	n := &b.m.Network
	st := b.net()
	all := append(append([]*cluster.NetworkResource(nil), n.Subnets...), n.SecurityGroups...)
	if st.defaultTags != nil {
		for _, r := range all {
			tags, unknown := mergeTags(st.defaultTags)
			for k, v := range r.Tags {
				tags[k] = v
			}
			r.Tags = tags
			if r.TagsUnknown == "" {
				r.TagsUnknown = unknown
			}
			for k := range tags {
				if _, ok := r.TagOrigins[k]; !ok {
					if r.TagOrigins == nil {
						r.TagOrigins = map[string]cluster.Origin{}
					}
					r.TagOrigins[k] = st.defaultAt
				}
			}
		}
	}
	for _, t := range st.added {
		matched := false
		for _, r := range all {
			if !tagsResource(t, r) {
				continue
			}
			matched = true
			r.AddedBy = append(r.AddedBy, t.AddedTag)
			if cluster.IsUnknown(t.Key) {
				if r.TagsUnknown == "" {
					r.TagsUnknown = t.Address
				}
				continue
			}
			if r.Tags == nil {
				r.Tags = map[string]string{}
			}
			r.Tags[t.Key] = t.Value
			if r.TagOrigins == nil {
				r.TagOrigins = map[string]cluster.Origin{}
			}
			r.TagOrigins[t.Key] = t.Origin
		}
		if !matched {
			n.Floating = append(n.Floating, t.AddedTag)
		}
	}
	for _, cs := range st.clusterSubnets {
		for _, v := range valuesOf(cs.value) {
			s := fmt.Sprint(v)
			if s == "" || s == "<nil>" {
				continue
			}
			if !cluster.IsUnknown(s) {
				n.SubnetsOutside = append(n.SubnetsOutside, fmt.Sprintf("the cluster is given subnet %s by ID (%s)", s, cs.origin))
				continue
			}
			inside := false
			for _, r := range n.Subnets {
				if r.Denotes(s) {
					inside = true
				}
			}
			if !inside {
				n.SubnetsOutside = append(n.SubnetsOutside, fmt.Sprintf("the cluster's subnets come from %s (%s)", strings.Join(cluster.UnknownExprs(s), ", "), cs.origin))
			}
		}
	}
	if len(n.SecurityGroups) > 0 && !b.m.Cluster.Defined {
		// The cluster, and the security group EKS makes with it, is made
		// elsewhere.
		n.SecurityGroupsOutside = append(n.SecurityGroupsOutside, "the EKS cluster is not made by these inputs: the security group EKS creates with it is not seen")
	}
	if len(n.SecurityGroups) > 0 && (len(n.Subnets) == 0 || len(n.SubnetsOutside) > 0) {
		// A VPC made elsewhere brings security groups of its own.
		n.SecurityGroupsOutside = append(n.SecurityGroupsOutside, "the VPC is not (or not only) made by these inputs: security groups may be made with it")
	}
	n.Sort()
}

// tagsResource reports whether an aws_ec2_tag tags a resource: its
// resource_id is the resource's literal ID, or refers to it.
func tagsResource(t addedTag, r *cluster.NetworkResource) bool {
	if !cluster.IsUnknown(t.ResourceID) {
		return r.ID != "" && t.ResourceID == r.ID
	}
	return r.Denotes(t.match)
}

// mergeTags merges tag maps as Terraform's merge() does, later ones winning;
// a part that is not known before apply makes the result's unknown
// expression.
func mergeTags(parts ...any) (map[string]string, string) {
	out := map[string]string{}
	unknown := ""
	for _, p := range parts {
		switch t := p.(type) {
		case map[string]any:
			for k, v := range t {
				if v == nil {
					continue
				}
				out[k] = fmt.Sprint(v)
			}
		case map[string]string:
			for k, v := range t {
				out[k] = v
			}
		case string:
			if cluster.IsUnknown(t) && unknown == "" {
				unknown = t
			}
		}
	}
	return out, unknown
}

// goInput is a module input in the model's form; nil when not set.
func (in modIn) goInput(name string) any {
	v, ok := in.get(name)
	if !ok {
		return nil
	}
	return toGo(v, in.ci.addr+"."+name)
}

// tagsDecl is where a tag is added to the map input name of a module call:
// the call's block, unless the input is written as something an edit would
// replace whole (a function call, a reference).
func (in modIn) tagsDecl(name, cfgAddr string) cluster.Decl {
	a, ok := in.ci.call.block.Body.Attributes[name]
	if _, obj := objectCons(a); ok && !obj {
		return cluster.Decl{}
	}
	return cluster.Decl{Kind: cluster.DeclModule, Block: cfgAddr, Key: name}
}

// conditional is the count or for_each of the call, when it decides whether
// the instance exists and is not known.
func (in modIn) conditional() string {
	if in.ci.call.known {
		return ""
	}
	return in.ci.call.countText
}

// groupName is a security group's name: the name, or an unknown placeholder
// when the module appends a random suffix (use_name_prefix, true unless
// written false).
func groupName(in modIn, prefixInput string, name any) string {
	if v, known := in.boolean(prefixInput, true); v || !known {
		return cluster.Unknown(in.ci.addr + " name prefix " + fmt.Sprint(name))
	}
	return fmt.Sprint(name)
}

// configAddress is an instance address without its instance keys.
func configAddress(addr string) string {
	var b strings.Builder
	depth := 0
	inQuote := false
	for i := 0; i < len(addr); i++ {
		c := addr[i]
		switch {
		case inQuote:
			if c == '\\' {
				i++
			} else if c == '"' {
				inQuote = false
			}
		case c == '"' && depth > 0:
			inQuote = true
		case c == '[':
			depth++
		case c == ']':
			depth--
		case depth == 0:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func literalID(v any) string {
	if s, ok := v.(string); ok && !cluster.IsUnknown(s) {
		return s
	}
	return ""
}

func firstBlock(v any) map[string]any {
	switch t := v.(type) {
	case []any:
		if len(t) > 0 {
			m, _ := t[0].(map[string]any)
			return m
		}
	case map[string]any:
		return t
	}
	return nil
}

// valuesOf is a list's elements, or a value that is not a list alone.
func valuesOf(v any) []any {
	switch t := v.(type) {
	case []any:
		return t
	case nil:
		return nil
	}
	return []any{v}
}

// TagsEdit adds tags to the map argument a network resource's tags are
// declared in (a module input such as private_subnet_tags, or a resource's
// tags): an object constructor merges key by key, so the other tags stay as
// written and a tag of the same key is replaced.
func TagsEdit(g *cluster.Graph, r *cluster.NetworkResource, tags map[string]string) (cluster.Edit, bool) {
	if r == nil || r.Decl.Kind == cluster.DeclUnknown || r.Decl.Key == "" || len(tags) == 0 {
		return cluster.Edit{}, false
	}
	v := map[string]any{}
	for k, t := range tags {
		v[k] = t
	}
	return BlockEdit(g, r.Decl.Block, r.Decl.Key+" = "+Literal(v, 0))
}
