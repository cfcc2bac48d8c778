package terraform

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
)

// aws-ia/terraform-aws-eks-blueprints-addons installs Helm charts (Karpenter, the
// AWS Load Balancer Controller, ...) and EKS add-ons for the inputs it is given,
// and creates the IAM roles, the Karpenter node role and interruption queue they
// need. What each release of it creates for each add-on is data
// (catalog.BlueprintsAddons); this file turns a call of the module into those
// resources, so that every check sees them as if they were written out.
// aws-ia/terraform-aws-eks-blueprints-addon (singular) installs one chart.

var (
	blueprintsRE      = regexp.MustCompile(`^(?:(?:registry\.terraform\.io|registry\.opentofu\.org)/)?aws-ia/eks-blueprints-addons/aws/?$|(?:^|[/:@])aws-ia/terraform-aws-eks-blueprints-addons(?:\.git)?/?(?:\?(.*))?$`)
	blueprintsAddonRE = regexp.MustCompile(`^(?:(?:registry\.terraform\.io|registry\.opentofu\.org)/)?aws-ia/eks-blueprints-addon/aws/?$|(?:^|[/:@])aws-ia/terraform-aws-eks-blueprints-addon(?:\.git)?/?(?:\?(.*))?$`)
)

// blueprintsVersion is the release a call installs: its version constraint, or
// the ref of a git source. When the release had to be assumed, why says why.
func blueprintsVersion(call *moduleCall) (version string, assumed bool, why string) {
	constraint, why := call.version, "is not pinned"
	if constraint != "" {
		why = "is pinned to " + constraint + ", which no release eksdoctor knows satisfies"
	}
	_, query, _ := strings.Cut(call.source, "?")
	if mm := refRE.FindStringSubmatch(query); mm != nil {
		constraint = strings.TrimPrefix(mm[1], "v")
		why = "is pinned to ref " + mm[1] + ", which is not a release eksdoctor knows"
	}
	version, assumed = catalog.BlueprintsAddonsRelease(constraint)
	return version, assumed, why
}

func (m *modInst) blueprintsAddons(in modIn, s *semModule, add func(*resInst)) {
	A := in.ci.addr
	version, assumed, why := blueprintsVersion(in.ci.call)
	if assumed {
		m.l.unresolved(s.origin, "the version of "+A+" (aws-ia/eks-blueprints-addons) "+why+"; release "+version+", the newest eksdoctor knows, is assumed")
	}
	s.version = version
	releases, _ := in.boolean("create_kubernetes_resources", true)
	clusterName := in.str("cluster_name", cluster.Unknown(A+".cluster_name"))
	for _, a := range catalog.BlueprintsAddons(version) {
		on, known := in.boolean(a.Enable, false)
		if !on && known {
			continue
		}
		cond := ""
		if !known {
			cond = "var." + a.Enable
			if v, ok := in.get(a.Enable); ok {
				if t, ok := unknownText(v); ok {
					cond = t
				}
			}
		}
		over, _ := in.get(a.Input)
		g := groupIn{val: over, text: A + "." + a.Input}
		if a.Module == "karpenter" {
			m.blueprintsKarpenter(in, s, g, clusterName, cond, add)
		}
		if releases {
			m.blueprintsRelease(in, s, a, g, clusterName, cond, add)
		}
	}
	m.blueprintsEKSAddons(in, add)
}

// blueprintsRelease adds the Helm release of add-on a, enabled (or enabled
// when cond holds), with its settings g (the add-on's input) over the
// release's defaults.
func (m *modInst) blueprintsRelease(in modIn, s *semModule, a catalog.BlueprintsAddon, g groupIn, clusterName any, cond string, add func(*resInst)) {
	A := in.ci.addr
	base := A + ".module." + a.Module
	r := newResInst(base+".helm_release.this[0]", "managed", "helm_release", "this", in.origin(a.Enable))
	r.conditional = cond
	// A fix of the release's values is written into the input.
	r.input = m.l.moduleInput(in.ci.call, A, a.Input, s.origin)
	r.vals["name"] = g.str("name", a.Release)
	r.vals["namespace"] = g.str("namespace", a.Namespace)
	r.vals["chart"] = g.str("chart", a.Chart)
	r.vals["repository"] = g.str("repository", a.Repository)
	r.vals["version"] = strings.TrimPrefix(asString(g.str("chart_version", a.Version)), "v")
	if a.Wait != nil {
		r.vals["wait"] = g.boolean("wait", *a.Wait)
	}
	if v, ok := g.goVal("values"); ok {
		r.vals["values"] = v
	}
	sets := blueprintsSets(in, a, g, clusterName)
	if g.boolean("create_role", true) {
		for _, k := range a.IRSA {
			sets = append(sets, map[string]any{"name": k, "value": cluster.Unknown(base + ".iam_role_arn"), "module": true})
		}
	}
	if v, ok := g.goVal("set"); ok {
		sets = append(sets, listOf(v)...)
	}
	r.vals["set"] = sets
	add(r)
}

// blueprintsSets gives the set values the module passes add-on a's release
// (those whose flag allows them), each from the module's inputs or a value
// only known after apply, unless the add-on's input overrides it.
func blueprintsSets(in modIn, a catalog.BlueprintsAddon, g groupIn, clusterName any) []any {
	A := in.ci.addr
	var sets []any
	for _, st := range a.Set {
		if f := strings.TrimPrefix(st.When, "!"); f != "" {
			on, _ := in.boolean(f, a.Flags[f])
			if on == strings.HasPrefix(st.When, "!") {
				continue
			}
		}
		value := any(st.Value)
		switch st.Value {
		case "cluster_name":
			value = clusterName
		case "cluster_endpoint":
			value = in.str("cluster_endpoint", cluster.Unknown(A+".cluster_endpoint"))
		case "region":
			value = cluster.Unknown("data.aws_region.current.name")
		case "queue_name":
			if on, _ := in.boolean("karpenter_enable_spot_termination", true); !on {
				continue
			}
			value = cluster.Unknown(A + ".module.karpenter_sqs.queue_name")
		case "node_instance_profile":
			value = cluster.Unknown(A + ".aws_iam_instance_profile.karpenter[0].name")
		case "vpc_id":
			value = in.str("vpc_id", cluster.Unknown(A+".vpc_id"))
		}
		if st.Input != "" {
			value = g.str(st.Input, asString(value))
		}
		sets = append(sets, map[string]any{"name": st.Name, "value": value, "module": true})
	}
	return sets
}

// blueprintsEKSAddons adds the EKS add-ons of the eks_addons input, created
// like terraform-aws-eks creates them.
func (m *modInst) blueprintsEKSAddons(in modIn, add func(*resInst)) {
	A := in.ci.addr
	v, ok := in.get("eks_addons")
	if !ok {
		return
	}
	list, known := entries(v)
	if !known {
		m.l.unresolved(in.origin("eks_addons"), A+".eks_addons is not known statically; the add-ons it installs are not analysed")
	}
	for _, e := range list {
		g := groupIn{val: e.val, text: A + ".eks_addons[" + quoteKey(e.key) + "]"}
		r := newResInst(A+".aws_eks_addon.this["+quoteKey(e.key)+"]", "managed", "aws_eks_addon", "this", in.entryOrigin("eks_addons", e.key))
		r.vals["addon_name"] = g.str("name", e.key)
		if av, ok := g.goVal("addon_version"); ok {
			r.vals["addon_version"] = av
		}
		if cv, ok := g.goVal("configuration_values"); ok {
			r.vals["configuration_values"] = cv
		}
		add(r)
	}
}

// blueprintsKarpenter creates what enable_karpenter creates besides the release:
// the controller's IRSA role, the node role and its instance profile.
func (m *modInst) blueprintsKarpenter(in modIn, s *semModule, g groupIn, clusterName any, cond string, add func(*resInst)) {
	A := in.ci.addr
	node := groupIn{text: A + ".karpenter_node"}
	node.val, _ = in.get("karpenter_node")
	s.namespace = asString(g.str("namespace", "karpenter"))
	s.serviceAccount = asString(g.str("service_account_name", "karpenter"))
	if g.boolean("create_role", true) {
		r := newResInst(A+".module.karpenter.aws_iam_role.this[0]", "managed", "aws_iam_role", "this", in.origin("enable_karpenter"))
		r.conditional = cond
		name := asString(g.str("role_name", "karpenter"))
		r.setName(name, g.boolean("role_name_use_prefix", true))
		r.vals["path"] = g.str("role_path", "/")
		r.vals["assume_role_policy"] = trustPolicy("Federated", cluster.Unknown(A+".oidc_provider_arn"))
		add(r)
		s.controllerRole, s.ctrlCreated = cluster.Unknown(A+".karpenter.iam_role_arn"), true
		m.irsaServiceAccounts([]string{s.namespace + ":" + s.serviceAccount}, s.controllerRole, in.origin("enable_karpenter"))
	}
	nodeName := asString(node.str("iam_role_name", "karpenter-"+asString(clusterName)))
	if node.boolean("create_iam_role", true) {
		r := newResInst(A+".aws_iam_role.karpenter[0]", "managed", "aws_iam_role", "karpenter", in.origin("karpenter_node"))
		r.conditional = cond
		r.setName(nodeName, node.boolean("iam_role_use_name_prefix", true))
		r.vals["path"] = node.str("iam_role_path", "/")
		r.vals["assume_role_policy"] = trustPolicy("Service", "ec2.amazonaws.com")
		add(r)
		s.nodeRole, s.nodeRoleCreated = cluster.Unknown(A+".karpenter.node_iam_role_arn"), true
	} else {
		s.nodeRole = asString(node.str("iam_role_arn", ""))
	}
	if node.boolean("create_instance_profile", true) {
		p := newResInst(A+".aws_iam_instance_profile.karpenter[0]", "managed", "aws_iam_instance_profile", "karpenter", in.origin("karpenter_node"))
		p.conditional = cond
		p.vals["role"] = cluster.Unknown(A + ".karpenter.node_iam_role_name")
		if !s.nodeRoleCreated {
			p.vals["role"] = s.nodeRole
		}
		add(p)
	}
}

// blueprintsAddon is aws-ia/eks-blueprints-addon: one Helm release, with the IRSA
// role ARN set under set_irsa_names.
func (m *modInst) blueprintsAddon(in modIn, s *semModule, add func(*resInst)) {
	A := in.ci.addr
	if on, _ := in.boolean("create_release", true); !on {
		return
	}
	g := groupIn{val: inputsObject(in.ci), text: A}
	r := newResInst(A+".helm_release.this[0]", "managed", "helm_release", "this", s.origin)
	for k, key := range map[string]string{"name": "name", "namespace": "namespace", "chart": "chart", "repository": "repository", "version": "chart_version"} {
		if v, ok := g.goVal(key); ok {
			r.vals[k] = v
		}
	}
	if r.vals["namespace"] == nil {
		r.vals["namespace"] = "default"
	}
	r.vals["wait"] = g.boolean("wait", false)
	if v, ok := g.goVal("values"); ok {
		r.vals["values"] = v
	}
	var sets []any
	if v, ok := g.goVal("set"); ok {
		sets = append(sets, listOf(v)...)
	}
	if g.boolean("create_role", false) {
		if v, ok := g.goVal("set_irsa_names"); ok {
			for _, k := range listOf(v) {
				sets = append(sets, map[string]any{"name": k, "value": cluster.Unknown(A + ".iam_role_arn"), "module": true})
			}
		}
	}
	r.vals["set"] = sets
	add(r)
}

// moduleInput is an input of a module call as written, for an edit that keeps it.
func (l *loader) moduleInput(call *moduleCall, addr, name string, org cluster.Origin) *cluster.ModuleInput {
	in := &cluster.ModuleInput{Module: addr, Name: name, Origin: org}
	a, ok := call.block.Body.Attributes[name]
	if !ok {
		return in
	}
	obj, ok := a.Expr.(*hclsyntax.ObjectConsExpr)
	if !ok {
		in.Expr = l.source(a.Expr.Range())
		return in
	}
	for _, item := range obj.Items {
		if k, ok := staticKey(item.KeyExpr); !ok || k != "values" {
			continue
		}
		if tup, ok := item.ValueExpr.(*hclsyntax.TupleConsExpr); ok {
			for _, e := range tup.Exprs {
				in.Values = append(in.Values, l.source(e.Range()))
			}
		} else {
			in.ValuesExpr = l.source(item.ValueExpr.Range())
		}
	}
	return in
}

// asString renders a value the model keeps as a string.
func asString(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case nil:
		return ""
	case int64:
		return strconv.FormatInt(t, 10)
	}
	return str(v)
}
