package lint

import (
	"fmt"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/write"
)

// nodeclass-discovery-empty: an EC2NodeClass selects subnets or security groups by tags, IDs or names that nothing the inputs create carries, or, in a running cluster, Karpenter reports that its selectors found none.

var nodeClassDiscoveryEmpty = &Check{
	ID:       "nodeclass-discovery-empty",
	Title:    "EC2NodeClass selects subnets, security groups or AMIs the inputs never tag or create",
	Family:   "F7",
	Severity: Error,
	Doc: Doc{
		What: "An EC2NodeClass (karpenter.k8s.aws v1 and v1beta1 `subnetSelectorTerms` and `securityGroupSelectorTerms`; an AWSNodeTemplate's or a v1alpha5 Provisioner's `subnetSelector` and `securityGroupSelector`) none of whose terms matches a subnet (a security group) the inputs create. Terms are ORed, the tags of one term ANDed, a value of `*` matches any value and `*`/`?` in a value are wildcards, as in EC2's filters. The tags followed are those of terraform-aws-modules/vpc (`tags`, `NAME_subnet_tags`, `NAME_subnet_tags_per_az`, `default_security_group_tags`), terraform-aws-modules/eks (`tags` with `node_security_group_tags` on the node security group, `cluster_security_group_tags` — v21 `security_group_tags` — on the cluster security group, `cluster_tags` and EKS's own `aws:eks:cluster-name` and `kubernetes.io/cluster/NAME` on the primary security group), terraform-aws-modules/security-group, `aws_subnet` and `aws_security_group` resources, `aws_ec2_tag` resources and the AWS provider's `default_tags`. It says nothing when the inputs create no subnet (no security group), when subnets may come from elsewhere (a data source, remote state, a module it does not model, a cluster given subnet IDs), about security groups unless the inputs make both the cluster and its VPC, or when a value is not known before apply (an info finding says what could not be verified); a term by ID matches only a resource whose ID is written, so it is never an error. In a running cluster: the class's status conditions `SubnetsReady`, `SecurityGroupsReady`, `AMIsReady`, `InstanceProfileReady` (or `Ready`) are False, or Karpenter resolved no subnet or security group into its status. AMI aliases are validated by karpenter-schema; AMIs selected by tags are not created by the inputs, so they are judged only live.",
		Why:  "Karpenter launches nothing for a class whose selectors find no subnet or security group: the class's SubnetsReady (SecurityGroupsReady) condition turns False, its NodePools are not ready (NodeClassReady=False), and the pods waiting for them stay Pending while Karpenter logs that no subnets (security groups) matched the selector.",
		Fix:  "Tag what the nodes are meant to use where the inputs tag it — the VPC module's `private_subnet_tags`, the EKS module's `node_security_group_tags` (`\"karpenter.sh/discovery\" = local.name`) — or change the selector to the tags the inputs give. The fix adds the missing tags to the map as written, when it is written as a map.",
	},
	Run: runNodeClassDiscoveryEmpty,
}

func runNodeClassDiscoveryEmpty(p *Pass) {
	for _, nc := range sortedNodeClasses(p.Model) {
		for _, f := range decideDiscovery(p.Model, nc) {
			p.Report(f)
		}
	}
}

// discoveryKind is what a class selects: subnets, security groups, AMIs, or
// its instance profile.
type discoveryKind struct {
	noun      string // "subnets"
	condition string // SubnetsReady
	status    string // the status field Karpenter resolves them into
	net       cluster.NetworkKind
	terms     string // v1 and v1beta1 field
	selector  string // v1alpha field
}

var discoveryKinds = []discoveryKind{
	{noun: "subnets", condition: "SubnetsReady", status: "subnets", net: cluster.NetworkSubnet, terms: "subnetSelectorTerms", selector: "subnetSelector"},
	{noun: "security groups", condition: "SecurityGroupsReady", status: "securityGroups", net: cluster.NetworkSecurityGroup, terms: "securityGroupSelectorTerms", selector: "securityGroupSelector"},
	{noun: "AMIs", condition: "AMIsReady", status: "amis"},
	{noun: "the instance profile", condition: "InstanceProfileReady"},
}

// decideDiscovery is the one decision for a node class, from the inputs and
// from a running cluster alike: what Karpenter reports of its selectors
// (status conditions, resolved status) when the class is read live, else
// what its selectors match among the subnets and security groups the inputs
// create.
func decideDiscovery(m *cluster.Model, nc *cluster.NodeClass) []Finding {
	if nc.Object == nil || nc.AutoMode() || nc.BuiltIn() || !strings.HasPrefix(nc.APIVersion, "karpenter.") {
		return nil
	}
	ref := nc.Object.Ref()
	pools := classPools(m, nc)
	var out []Finding
	liveObj := !nc.Object.Origin.InFile()
	reported := false
	for _, k := range discoveryKinds {
		if c, ok := falseCondition(nc, k.condition); ok {
			reported = true
			out = append(out, Finding{
				Object:  ref,
				Origin:  nc.Object.At("status.conditions"),
				Summary: fmt.Sprintf("%s: Karpenter found no usable %s for the class: %s", ref, k.noun, c),
				Detail:  fmt.Sprintf("%s%s", conditionWords(c), poolsLine(pools, k.noun)),
			})
			continue
		}
		if liveObj {
			if empty, ok := statusEmpty(nc, k); ok && empty {
				reported = true
				out = append(out, Finding{
					Object:  ref,
					Origin:  nc.Object.At("status"),
					Summary: fmt.Sprintf("%s: Karpenter resolved no %s for the class (status.%s is empty)", ref, k.noun, k.status),
					Detail:  "The class's selectors match nothing Karpenter can use." + poolsLine(pools, k.noun),
				})
			}
			continue
		}
		if _, ok := classCondition(nc, k.condition); ok || k.net == 0 {
			continue
		}
		if f, ok := staticDiscovery(m, nc, k, pools); ok {
			out = append(out, f)
		}
	}
	if c, ok := falseCondition(nc, "Ready"); ok && !reported {
		out = append(out, Finding{
			Object:  ref,
			Origin:  nc.Object.At("status.conditions"),
			Summary: fmt.Sprintf("%s: the class is not ready: %s", ref, c),
			Detail:  conditionWords(c) + poolsLine(pools, "nodes"),
		})
	}
	return out
}

func classCondition(nc *cluster.NodeClass, typ string) (cluster.Condition, bool) {
	for _, c := range nc.Conditions {
		if c.Type == typ {
			return c, true
		}
	}
	return cluster.Condition{}, false
}

func falseCondition(nc *cluster.NodeClass, typ string) (cluster.Condition, bool) {
	c, ok := classCondition(nc, typ)
	return c, ok && c.Status == "False"
}

func conditionWords(c cluster.Condition) string {
	s := fmt.Sprintf("Karpenter sets %s=False on the class", c.Type)
	if c.Reason != "" {
		s += " (" + c.Reason + ")"
	}
	if c.Message != "" {
		s += ": " + c.Message
	}
	return s + "."
}

// statusEmpty reports whether Karpenter keeps a status for the class that
// resolves none of a kind (ok is false when the class has no status, or the
// kind has no status field).
func statusEmpty(nc *cluster.NodeClass, k discoveryKind) (bool, bool) {
	if k.status == "" || k.net == 0 {
		return false, false
	}
	st, _ := nc.Object.Get("status").(map[string]any)
	if len(st) == 0 {
		return false, false
	}
	if _, ok := classCondition(nc, k.condition); ok {
		return false, false
	}
	// Karpenter fills the fields together: one resolved while another is
	// empty says that one found nothing.
	other := "securityGroups"
	if k.status == "securityGroups" {
		other = "subnets"
	}
	if l, _ := st[other].([]any); len(l) == 0 {
		return false, false
	}
	l, _ := st[k.status].([]any)
	return len(l) == 0, true
}

// classPools are the NodePools that use a class (the Provisioner itself for
// an inline one).
func classPools(m *cluster.Model, nc *cluster.NodeClass) []string {
	var out []string
	for _, np := range m.NodePools {
		if nc.Inline {
			if np.Object == nc.Object {
				out = append(out, np.Object.Ref().String())
			}
			continue
		}
		if np.NodeClassRef.Name == nc.Name && (np.NodeClassRef.Kind == "" || np.NodeClassRef.Kind == nc.Object.Kind) && np.Object != nil {
			out = append(out, np.Object.Ref().String())
		}
	}
	sort.Strings(out)
	return out
}

func poolsLine(pools []string, noun string) string {
	if len(pools) == 0 {
		return "\nNo NodePool of the inputs uses the class."
	}
	return fmt.Sprintf("\nKarpenter launches no node for %s while the class has no %s (NodeClassReady=False): pods that only they can hold stay Pending.", strings.Join(pools, ", "), noun)
}

// selectorTerm is one term of a selector: tags (ANDed), an ID or a name.
type selectorTerm struct {
	path string // field path of the term
	tags map[string]string
	id   string
	name string
	// unknown is set when the term is not known before apply.
	unknown bool
}

func (t selectorTerm) String() string {
	switch {
	case t.id != "":
		return "id " + t.id
	case t.name != "":
		return "name " + t.name
	}
	keys := tagKeys(t.tags)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + t.tags[k]
	}
	return "tags {" + strings.Join(parts, ", ") + "}"
}

// selectorTerms reads a class's terms for a kind; ok is false when it has
// none or they are not known.
func selectorTerms(nc *cluster.NodeClass, k discoveryKind) ([]selectorTerm, bool) {
	o := nc.Object
	spec := "spec"
	if nc.Inline {
		spec = "spec.provider"
	}
	if v := o.Get(spec + "." + k.terms); v != nil {
		l, ok := v.([]any)
		if !ok || len(l) == 0 {
			return nil, false
		}
		var out []selectorTerm
		for i, it := range l {
			tm, ok := it.(map[string]any)
			t := selectorTerm{path: fmt.Sprintf("%s.%s.%d", spec, k.terms, i)}
			if !ok {
				t.unknown = true
				out = append(out, t)
				continue
			}
			t.id, _ = tm["id"].(string)
			t.name, _ = tm["name"].(string)
			if tags, ok := tm["tags"].(map[string]any); ok {
				t.tags = stringTags(tags)
			}
			if t.id == "" && t.name == "" && len(t.tags) == 0 || holdsUnknownValue(tm["tags"]) && t.tags == nil {
				t.unknown = true
			}
			out = append(out, t)
		}
		return out, true
	}
	sel, ok := o.Get(spec + "." + k.selector).(map[string]any)
	if !ok || len(sel) == 0 {
		return nil, false
	}
	t := selectorTerm{path: spec + "." + k.selector, tags: stringTags(sel)}
	var out []selectorTerm
	for _, key := range []string{"aws-ids", "aws::ids"} {
		if ids, ok := t.tags[key]; ok {
			delete(t.tags, key)
			for _, id := range strings.Split(ids, ",") {
				out = append(out, selectorTerm{path: t.path, id: strings.TrimSpace(id)})
			}
		}
	}
	for key, v := range t.tags {
		if strings.Contains(v, ",") || strings.HasPrefix(key, "aws::") {
			// Lists of values and the other aws:: keys of the older
			// selectors are not followed.
			t.unknown = true
		}
	}
	if len(t.tags) > 0 || t.unknown {
		out = append(out, t)
	}
	return out, len(out) > 0
}

func stringTags(m map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = fmt.Sprint(v)
	}
	return out
}

func holdsUnknownValue(v any) bool {
	s, ok := v.(string)
	return ok && cluster.IsUnknown(s)
}

// selects is a tri-state answer.
type selects int

const (
	selectsNo selects = iota + 1
	selectsMaybe
	selectsYes
)

// termMatch says whether a term selects a resource, and when it does not,
// why (for the detail).
func termMatch(t selectorTerm, r *cluster.NetworkResource, floating []cluster.AddedTag) (selects, string) {
	switch {
	case t.unknown:
		return selectsMaybe, ""
	case t.id != "":
		if cluster.IsUnknown(t.id) && r.Denotes(t.id) {
			return selectsYes, ""
		}
		if cluster.IsUnknown(t.id) || r.ID == "" {
			return selectsMaybe, ""
		}
		if r.ID == t.id {
			return selectsYes, ""
		}
		return selectsNo, "its ID is " + r.ID
	case t.name != "":
		if r.Name == "" {
			return selectsNo, "it has no name"
		}
		if cluster.IsUnknown(t.name) || cluster.IsUnknown(r.Name) {
			return selectsMaybe, ""
		}
		if ec2Glob(t.name, r.Name) {
			return selectsYes, ""
		}
		return selectsNo, fmt.Sprintf("its name is %q", r.Name)
	}
	result := selectsYes
	var why []string
	for _, key := range tagKeys(t.tags) {
		want := t.tags[key]
		have, ok := r.Tags[key]
		switch {
		case ok:
			switch {
			case want == "*" || !cluster.IsUnknown(want) && !cluster.IsUnknown(have) && ec2Glob(want, have):
			case want == have:
			case cluster.IsUnknown(want) || cluster.IsUnknown(have):
				result = min(result, selectsMaybe)
				why = append(why, fmt.Sprintf("%s = %s", key, have))
			default:
				result = selectsNo
				why = append(why, fmt.Sprintf("%s = %q", key, have))
			}
		case cluster.IsUnknown(key) || r.TagsUnknown != "" || unknownKey(r.Tags) || floatingTag(floating, key):
			result = min(result, selectsMaybe)
			if r.TagsUnknown != "" {
				why = append(why, "its tags merge "+r.TagsUnknown)
			} else {
				why = append(why, "a tag key is not known")
			}
		default:
			result = selectsNo
			why = append(why, "no tag "+key)
		}
	}
	if result == selectsYes {
		return result, ""
	}
	return result, strings.Join(why, ", ")
}

func unknownKey(tags map[string]string) bool {
	for k := range tags {
		if cluster.IsUnknown(k) {
			return true
		}
	}
	return false
}

// floatingTag reports whether a tag added by an ID not known may be the key.
func floatingTag(fl []cluster.AddedTag, key string) bool {
	for _, t := range fl {
		if t.Key == key || cluster.IsUnknown(t.Key) {
			return true
		}
	}
	return false
}

// ec2Glob matches a value as EC2's filters do: * any run, ? one character.
func ec2Glob(pattern, s string) bool {
	if !strings.ContainsAny(pattern, "*?") {
		return pattern == s
	}
	p, v := []rune(pattern), []rune(s)
	// Classic two-pointer wildcard match, backtracking to the last *.
	pi, vi, star, mark := 0, 0, -1, 0
	for vi < len(v) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == v[vi]):
			pi++
			vi++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, vi
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			vi = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// staticDiscovery judges a class's selectors of a kind against what the
// inputs create.
func staticDiscovery(m *cluster.Model, nc *cluster.NodeClass, k discoveryKind, pools []string) (Finding, bool) {
	n := &m.Network
	if !n.Declared(k.net) {
		// Made elsewhere: nothing to compare with.
		return Finding{}, false
	}
	terms, ok := selectorTerms(nc, k)
	if !ok {
		return Finding{}, false
	}
	resolveClusterName(m, terms)
	ref := nc.Object.Ref()
	res := n.Of(k.net)
	best := selectsNo
	var why, maybe, first []string
	for _, t := range terms {
		for _, r := range res {
			got, reason := termMatch(t, r, n.Floating)
			best = max(best, got)
			switch {
			case got == selectsNo:
				line := fmt.Sprintf("%s: %s%s", r.What, reason, originWords(r.Origin))
				why = append(why, line)
				if r.ForNodes {
					first = append(first, line)
				}
			case got == selectsMaybe && reason != "":
				maybe = append(maybe, fmt.Sprintf("%s: %s%s", r.What, reason, originWords(r.Origin)))
			}
		}
	}
	outside := n.Outside(k.net)
	switch {
	case best == selectsYes || len(outside) > 0:
		return Finding{}, false
	case best == selectsMaybe && len(maybe) == 0:
		// A term by ID, or a term not known: nothing the inputs show
		// decides it.
		return Finding{}, false
	case best == selectsMaybe:
		return Finding{
			Severity: Info,
			Object:   ref,
			Origin:   nc.Object.At(terms[0].path),
			Summary:  fmt.Sprintf("%s: could not verify that its %s select any of the %s the inputs create: a value is not known before apply", ref, selectorField(nc, k), k.noun),
			Detail:   fmt.Sprintf("Terms: %s. Not known before apply:\n  %s", termList(terms), strings.Join(distinctLines(maybe), "\n  ")),
		}, true
	}
	first = append(first, why...)
	instead := ""
	if len(first) > 0 {
		instead = ": " + first[0]
	}
	f := Finding{
		Object:  ref,
		Origin:  nc.Object.At(terms[0].path),
		Summary: fmt.Sprintf("%s: %s %s match none of the %s the inputs create%s", ref, selectorField(nc, k), termList(terms), k.noun, instead),
		Detail: fmt.Sprintf("No %s the inputs create matches a term:\n  %s\nKarpenter would find no %s: the class's %s condition turns False and it logs that no %s matched the selector.%s",
			strings.TrimSuffix(k.noun, "s"), strings.Join(distinctLines(why), "\n  "), k.noun, k.condition, k.noun, poolsLine(pools, k.noun)),
		Fix: discoveryFix(m, nc, k, terms, res),
	}
	return f, true
}

// resolveClusterName replaces, in tag values, the expression of the
// cluster's name (module.eks.cluster_name) by the name, when it is known.
func resolveClusterName(m *cluster.Model, terms []selectorTerm) {
	name := m.Cluster.Name
	expr, ok := write.ClusterNameExpr(m.Cluster)
	if !ok || name == "" || cluster.IsUnknown(name) {
		return
	}
	for _, t := range terms {
		for k, v := range t.tags {
			if v == cluster.Unknown(expr) {
				t.tags[k] = name
			}
		}
	}
}

func selectorField(nc *cluster.NodeClass, k discoveryKind) string {
	if nc.Object.Get("spec."+k.terms) != nil {
		return k.terms
	}
	return k.selector
}

func termList(ts []selectorTerm) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = t.String()
	}
	return strings.Join(parts, " or ")
}

func originWords(o cluster.Origin) string {
	if s := o.String(); s != "" {
		return " (" + s + ")"
	}
	return ""
}

func distinctLines(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// discoveryFix tags what the nodes are meant to use with the first tag
// term's tags, where the inputs tag it; else changes the term to the tags a
// resource of the inputs has.
func discoveryFix(m *cluster.Model, nc *cluster.NodeClass, k discoveryKind, terms []selectorTerm, res []*cluster.NetworkResource) *Fix {
	var term *selectorTerm
	for i := range terms {
		if len(terms[i].tags) > 0 && terms[i].id == "" && terms[i].name == "" {
			term = &terms[i]
			break
		}
	}
	if term == nil {
		return nil
	}
	for _, v := range term.tags {
		if strings.ContainsAny(v, "*?") || cluster.IsUnknown(v) {
			return nil
		}
	}
	for k := range term.tags {
		if cluster.IsUnknown(k) {
			return nil
		}
	}
	cands := append([]*cluster.NetworkResource(nil), res...)
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].ForNodes && !cands[j].ForNodes })
	for _, r := range cands {
		if r.Decl.Kind == cluster.DeclUnknown {
			continue
		}
		tags := map[string]string{}
		for key, v := range term.tags {
			if r.Tags[key] != v {
				tags[key] = v
			}
		}
		if e, ok := write.NetworkTags(m, r, tags); ok {
			return &Fix{
				Summary: fmt.Sprintf("tag %s with %s in %s", r.What, tagWords(tags), r.Decl.Key),
				Edits:   []Edit{e},
			}
		}
	}
	return nil
}

func tagWords(tags map[string]string) string {
	keys := tagKeys(tags)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s = %q", k, tags[k])
	}
	return strings.Join(parts, ", ")
}

func tagKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
