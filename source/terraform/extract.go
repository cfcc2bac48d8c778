package terraform

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/inputfs"
	"github.com/eksdoctor/eksdoctor/source/manifest"
)

// semModule is a terraform-aws-modules/eks module instance: what it is, which version's
// semantics apply, and what it says about Karpenter.
type semModule struct {
	addr    string
	kind    moduleKind
	major   int
	version string // as declared
	origin  cluster.Origin
	// Karpenter sub-module.
	namespace, serviceAccount    string
	nodeRole, controllerRole     string
	nodeRoleCreated, ctrlCreated bool
	karpenterDisabled            bool
	authDefaulted                bool
}

// builder turns resource instances into model entries.
type builder struct {
	m        *cluster.Model
	sems     []*semModule
	profiles []*resInst
	seenNG   map[string]bool
	// fsys reads local charts; nil (a plan) reads none.
	fsys *inputfs.FS
	// destroyCmds are what the destroy-time commands of resources remove, by
	// instance address.
	destroyCmds map[string][]cluster.Command
	// netw is the network being read (network.go).
	netw *netState
}

func newBuilder(fsys *inputfs.FS) *builder {
	return &builder{m: &cluster.Model{}, seenNG: map[string]bool{}, fsys: fsys}
}

func (b *builder) note(org cluster.Origin, subject, msg string) {
	b.m.Notes = append(b.m.Notes, cluster.Note{Origin: org, Subject: subject, Message: msg})
}

// sem returns the terraform-aws-eks module an address lies in, with the address
// inside it ("aws_iam_role.node[0]").
func (b *builder) sem(addr string) (*semModule, string) {
	var best *semModule
	for _, s := range b.sems {
		if strings.HasPrefix(addr, s.addr+".") && (best == nil || len(s.addr) > len(best.addr)) {
			best = s
		}
	}
	if best == nil {
		return nil, ""
	}
	return best, addr[len(best.addr)+1:]
}

var (
	innerModuleRE = regexp.MustCompile(`^module\.(eks_managed_node_group|self_managed_node_group|fargate_profile)\[("(?:[^"\\]|\\.)*")\]\.(.*)$`)
)

// keyRef renders a map key step as a caller writes it: ["k"]; an identifier key is
// also reachable as .k, which roleRefs lists too.
func keyRefs(prefix string, quoted string, suffix string) []string {
	out := []string{prefix + "[" + quoted + "]" + suffix}
	if k, err := strconv.Unquote(quoted); err == nil && isIdentifier(k) {
		out = append(out, prefix+"."+k+suffix)
	}
	return out
}

// roleSemantics returns what a role created by a terraform-aws-eks module is and the
// expressions (module outputs) that denote it.
func (b *builder) roleSemantics(addr string) (kind cluster.RoleKind, refs []string) {
	s, inner := b.sem(addr)
	if s == nil {
		return cluster.RoleUnknown, nil
	}
	A := s.addr
	switch s.kind {
	case kindEKS:
		mm := innerModuleRE.FindStringSubmatch(inner)
		if mm == nil || mm[3] != "aws_iam_role.this[0]" {
			return cluster.RoleUnknown, nil
		}
		switch mm[1] {
		case "eks_managed_node_group":
			return cluster.RoleNode, append(keyRefs(A+".eks_managed_node_groups", mm[2], ".iam_role_arn"), keyRefs(A+".eks_managed_node_groups", mm[2], ".iam_role_name")...)
		case "self_managed_node_group":
			return cluster.RoleNode, append(keyRefs(A+".self_managed_node_groups", mm[2], ".iam_role_arn"), keyRefs(A+".self_managed_node_groups", mm[2], ".iam_role_name")...)
		case "fargate_profile":
			refs = keyRefs(A+".fargate_profiles", mm[2], ".fargate_profile_pod_execution_role_arn")
			refs = append(refs, keyRefs(A+".fargate_profiles", mm[2], ".iam_role_arn")...)
			refs = append(refs, keyRefs(A+".fargate_profiles", mm[2], ".iam_role_name")...)
			return cluster.RoleFargate, refs
		}
	case kindManagedNodeGroup, kindSelfManagedNodeGroup:
		if inner == "aws_iam_role.this[0]" {
			return cluster.RoleNode, []string{A + ".iam_role_arn", A + ".iam_role_name"}
		}
	case kindFargateProfile:
		if inner == "aws_iam_role.this[0]" {
			return cluster.RoleFargate, []string{A + ".fargate_profile_pod_execution_role_arn", A + ".iam_role_arn", A + ".iam_role_name"}
		}
	case kindKarpenter:
		if s.major <= 19 {
			switch inner {
			case "aws_iam_role.this[0]":
				return cluster.RoleNode, []string{A + ".role_arn", A + ".role_name"}
			case "aws_iam_role.irsa[0]":
				return cluster.RoleController, []string{A + ".irsa_arn", A + ".irsa_name"}
			}
			return cluster.RoleUnknown, nil
		}
		switch inner {
		case "aws_iam_role.node[0]":
			return cluster.RoleNode, []string{A + ".node_iam_role_arn", A + ".node_iam_role_name"}
		case "aws_iam_role.controller[0]":
			return cluster.RoleController, []string{A + ".iam_role_arn", A + ".iam_role_name"}
		}
	case kindBlueprintsAddons:
		switch inner {
		case "aws_iam_role.karpenter[0]":
			return cluster.RoleNode, []string{A + ".karpenter.node_iam_role_arn", A + ".karpenter.node_iam_role_name"}
		case "module.karpenter.aws_iam_role.this[0]":
			return cluster.RoleController, []string{A + ".karpenter.iam_role_arn", A + ".karpenter.iam_role_name"}
		}
	}
	return cluster.RoleUnknown, nil
}

// profileSemantics returns the module outputs that denote an instance profile.
func (b *builder) profileSemantics(addr string) []string {
	s, inner := b.sem(addr)
	if s != nil && s.kind == kindBlueprintsAddons && inner == "aws_iam_instance_profile.karpenter[0]" {
		return []string{s.addr + ".karpenter.node_instance_profile_name"}
	}
	if s == nil || s.kind != kindKarpenter || inner != "aws_iam_instance_profile.this[0]" {
		return nil
	}
	return []string{s.addr + ".instance_profile_arn", s.addr + ".instance_profile_name", s.addr + ".instance_profile_id"}
}

// nodeRolePlaceholder is the node role of a node group or Fargate profile a module
// creates, as the module output that names it.
func (b *builder) rolePlaceholder(addr string) string {
	s, inner := b.sem(addr)
	if s == nil {
		return ""
	}
	switch s.kind {
	case kindEKS:
		if mm := innerModuleRE.FindStringSubmatch(inner); mm != nil {
			switch mm[1] {
			case "eks_managed_node_group":
				return cluster.Unknown(s.addr + ".eks_managed_node_groups[" + mm[2] + "].iam_role_arn")
			case "self_managed_node_group":
				return cluster.Unknown(s.addr + ".self_managed_node_groups[" + mm[2] + "].iam_role_arn")
			case "fargate_profile":
				return cluster.Unknown(s.addr + ".fargate_profiles[" + mm[2] + "].fargate_profile_pod_execution_role_arn")
			}
		}
	case kindManagedNodeGroup, kindSelfManagedNodeGroup:
		return cluster.Unknown(s.addr + ".iam_role_arn")
	case kindFargateProfile:
		return cluster.Unknown(s.addr + ".fargate_profile_pod_execution_role_arn")
	case kindKarpenter:
		if s.major <= 19 {
			return cluster.Unknown(s.addr + ".role_arn")
		}
		return cluster.Unknown(s.addr + ".node_iam_role_arn")
	}
	return ""
}

// add turns one resource instance into model entries.
func (b *builder) add(r *resInst) {
	b.networkResource(r)
	if r.mode != "managed" {
		return
	}
	if r.conditional != "" {
		// What the resource puts in the model exists only if its count or
		// for_each says so, which is not known.
		m := b.m
		objs, ngs, fps, rels, addons := len(m.Objects), len(m.NodeGroups), len(m.FargateProfiles), len(m.HelmReleases), len(m.Addons)
		defer func() {
			for _, o := range m.Objects[objs:] {
				o.Conditional = r.conditional
			}
			for _, x := range m.NodeGroups[ngs:] {
				x.Conditional = r.conditional
			}
			for _, x := range m.FargateProfiles[fps:] {
				x.Conditional = r.conditional
			}
			for _, x := range m.HelmReleases[rels:] {
				x.Conditional = r.conditional
			}
			for _, x := range m.Addons[addons:] {
				x.Conditional = r.conditional
			}
		}()
	}
	b.addResource(r)
}

func (b *builder) addResource(r *resInst) {
	switch r.typ {
	case "aws_eks_cluster":
		b.eksCluster(r)
	case "aws_eks_node_group":
		b.nodeGroup(r)
	case "aws_autoscaling_group":
		if s, _ := b.sem(r.addr); s != nil && (s.kind == kindEKS || s.kind == kindSelfManagedNodeGroup) {
			b.selfManagedGroup(r)
		}
	case "aws_eks_fargate_profile":
		b.fargateProfile(r)
	case "aws_eks_addon":
		b.addon(r)
	case "aws_eks_access_entry":
		b.accessEntry(r)
	case "aws_eks_access_policy_association":
		b.m.Identity.PolicyAssociations = append(b.m.Identity.PolicyAssociations, cluster.PolicyAssociation{
			PrincipalARN: str(r.vals["principal_arn"]),
			PolicyARN:    str(r.vals["policy_arn"]),
			Origin:       r.origin,
			Address:      r.addr,
		})
	case "aws_eks_pod_identity_association":
		b.podIdentity(r)
	case "aws_iam_role":
		b.iamRole(r)
	case "aws_iam_instance_profile":
		b.profiles = append(b.profiles, r)
	case "helm_release":
		b.helmRelease(r)
	case "kubectl_manifest":
		b.kubectlManifest(r)
	case "kubernetes_manifest":
		b.kubernetesManifest(r)
	case "kubernetes_config_map", "kubernetes_config_map_v1", "kubernetes_config_map_v1_data":
		b.configMap(r)
	case "kubernetes_storage_class", "kubernetes_storage_class_v1":
		b.storageClass(r)
	case "null_resource", "terraform_data":
		b.localExec(r)
	}
}

func (b *builder) eksCluster(r *resInst) {
	if b.m.Cluster.Defined {
		b.m.Problems = append(b.m.Problems, cluster.Problem{Origin: r.origin, Unresolved: true,
			Message: fmt.Sprintf("%s defines a second EKS cluster in the same configuration; its settings (authentication mode, version) are not analysed, only those of %s, though the node groups and objects of both are", r.addr, b.m.Cluster.Address)})
		return
	}
	c := cluster.EKSCluster{
		Name:              str(r.vals["name"]),
		KubernetesVersion: str(r.vals["version"]),
		Origin:            r.origin,
		Address:           r.addr,
		Defined:           true,
	}
	if s, _ := b.sem(r.addr); s != nil && s.kind == kindEKS {
		c.Address = s.addr
		c.ModuleVersion = s.version
		if c.ModuleVersion == "" {
			c.ModuleVersion = strconv.Itoa(s.major)
		}
	}
	switch v := r.vals["bootstrap_self_managed_addons"]; {
	case v == false || v == "false":
		c.NoDefaultAddons = r.addr + " sets bootstrap_self_managed_addons = false"
		if c.Address != r.addr {
			c.NoDefaultAddons = fmt.Sprintf("%s (terraform-aws-modules/eks v%s) creates the cluster with bootstrap_self_managed_addons = false", c.Address, c.ModuleVersion)
		}
	case v != nil && v != true:
		c.NoDefaultAddons = "bootstrap_self_managed_addons is not known before apply"
	}
	c.AutoMode = b.autoMode(r, c)
	b.m.Cluster = c
	mode := str(first(r.vals["access_config"])["authentication_mode"])
	id := &b.m.Identity
	switch {
	case mode != "" && !cluster.IsUnknown(mode):
		id.AuthMode = mode
		id.AuthModeDefaulted = r.x.authDefaulted
		id.AuthModeOrigin = r.at("access_config.0.authentication_mode")
	case mode == "" && !r.unknown["access_config"]:
		id.AuthMode = cluster.AuthConfigMap
		id.AuthModeDefaulted = true
		id.AuthModeOrigin = r.origin
		b.note(r.origin, r.addr, "access_config.authentication_mode is not set; the EKS default CONFIG_MAP applies")
	}
}

var effects = map[string]corev1.TaintEffect{
	"NO_SCHEDULE":        corev1.TaintEffectNoSchedule,
	"NO_EXECUTE":         corev1.TaintEffectNoExecute,
	"PREFER_NO_SCHEDULE": corev1.TaintEffectPreferNoSchedule,
	"NoSchedule":         corev1.TaintEffectNoSchedule,
	"NoExecute":          corev1.TaintEffectNoExecute,
	"PreferNoSchedule":   corev1.TaintEffectPreferNoSchedule,
}

// taintEffect converts the EKS API spelling (NO_SCHEDULE) to Kubernetes' (NoSchedule).
func taintEffect(s string) corev1.TaintEffect {
	if e, ok := effects[s]; ok {
		return e
	}
	return corev1.TaintEffect(s)
}

func taintsOf(v any) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range listOf(v) {
		tm, ok := t.(map[string]any)
		if !ok {
			continue
		}
		out = append(out, corev1.Taint{Key: str(tm["key"]), Value: str(tm["value"]), Effect: taintEffect(str(tm["effect"]))})
	}
	return out
}

func sortTaints(ts []corev1.Taint) {
	sort.SliceStable(ts, func(i, j int) bool {
		if ts[i].Key != ts[j].Key {
			return ts[i].Key < ts[j].Key
		}
		if ts[i].Effect != ts[j].Effect {
			return ts[i].Effect < ts[j].Effect
		}
		return ts[i].Value < ts[j].Value
	})
}

func (b *builder) nodeGroup(r *resInst) {
	ng := &cluster.NodeGroup{
		Name:          str(r.vals["node_group_name"]),
		Managed:       true,
		Labels:        strMap(r.vals["labels"]),
		Taints:        taintsOf(r.vals["taint"]),
		InstanceTypes: strList(r.vals["instance_types"]),
		AMIType:       str(r.vals["ami_type"]),
		NodeRole:      str(r.vals["node_role_arn"]),
		Origin:        r.origin,
		Address:       r.addr,
		CreatedBy:     "terraform",
	}
	if ng.Name == "" {
		ng.Name = strings.TrimSuffix(str(r.vals["node_group_name_prefix"]), "-")
	}
	sc := first(r.vals["scaling_config"])
	ng.MinSize, ng.MaxSize, ng.DesiredSize = size(sc["min_size"]), size(sc["max_size"]), size(sc["desired_size"])
	if ng.NodeRole == "" {
		ng.NodeRole = b.rolePlaceholder(r.addr)
	}
	switch {
	case r.x.diskSet:
		ng.DiskBytes = r.x.disk
	case r.vals["launch_template"] != nil:
		// The launch template's block devices decide, which are not read.
		ng.DiskBytes = -1
	default:
		if n, ok := intOf(r.vals["disk_size"]); ok {
			ng.DiskBytes = int64(n) << 30
		} else if r.vals["disk_size"] != nil {
			ng.DiskBytes = -1
		}
	}
	for _, f := range []struct{ arg, field string }{{"labels", "labels"}, {"taint", "taints"}, {"instance_types", "instance_types"}, {"scaling_config", "scaling_config"}} {
		if r.unknown[f.arg] || isWhollyUnknown(r.vals[f.arg]) {
			ng.Unknown = append(ng.Unknown, f.field)
		}
	}
	b.applyNodeExtras(ng, r)
	b.m.NodeGroups = append(b.m.NodeGroups, ng)
}

// applyNodeExtras adds what user data does to a node group's nodes.
func (b *builder) applyNodeExtras(ng *cluster.NodeGroup, r *resInst) {
	if len(r.x.labels) > 0 && ng.Labels == nil {
		ng.Labels = map[string]string{}
	}
	for k, v := range r.x.labels {
		if _, ok := ng.Labels[k]; !ok {
			ng.Labels[k] = v
		}
	}
	for _, t := range r.x.taints {
		dup := false
		for _, o := range ng.Taints {
			if o.Key == t.Key && o.Effect == t.Effect {
				dup = true
			}
		}
		if !dup {
			ng.Taints = append(ng.Taints, t)
		}
	}
	sortTaints(ng.Taints)
	if len(ng.InstanceTypes) == 0 {
		ng.InstanceTypes = r.x.instanceTypes
	}
	if ng.AMIType == "" {
		ng.AMIType = r.x.amiType
	}
	ng.Unknown = dedupe(append(ng.Unknown, r.x.unknownFields...))
}

func size(v any) int {
	if n, ok := intOf(v); ok {
		return n
	}
	return -1
}

func isWhollyUnknown(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	_, ok = cluster.UnknownExpr(s)
	return ok
}

// selfManagedGroup is a node group a terraform-aws-eks self-managed node group module
// creates: an autoscaling group whose nodes join with the module's node role.
func (b *builder) selfManagedGroup(r *resInst) {
	ng := &cluster.NodeGroup{
		Name:        str(r.vals["name"]),
		Managed:     false,
		NodeRole:    r.x.nodeRole,
		Origin:      r.origin,
		Address:     r.addr,
		CreatedBy:   "terraform",
		MinSize:     size(r.vals["min_size"]),
		MaxSize:     size(r.vals["max_size"]),
		DesiredSize: size(r.vals["desired_capacity"]),
	}
	if ng.Name == "" {
		ng.Name = strings.TrimSuffix(str(r.vals["name_prefix"]), "-")
	}
	if ng.NodeRole == "" {
		ng.NodeRole = b.rolePlaceholder(r.addr)
	}
	if r.x.diskSet {
		ng.DiskBytes = r.x.disk
	} else {
		// A raw autoscaling group's launch template decides, which is not read.
		ng.DiskBytes = -1
	}
	b.applyNodeExtras(ng, r)
	b.m.NodeGroups = append(b.m.NodeGroups, ng)
}

func (b *builder) fargateProfile(r *resInst) {
	fp := &cluster.FargateProfile{
		Name:             str(r.vals["fargate_profile_name"]),
		PodExecutionRole: str(r.vals["pod_execution_role_arn"]),
		Origin:           r.origin,
		Address:          r.addr,
	}
	if fp.PodExecutionRole == "" {
		fp.PodExecutionRole = b.rolePlaceholder(r.addr)
	}
	for i, s := range listOf(r.vals["selector"]) {
		sm, ok := s.(map[string]any)
		if !ok {
			continue
		}
		fp.Selectors = append(fp.Selectors, cluster.FargateSelector{
			Namespace: str(sm["namespace"]),
			Labels:    strMap(sm["labels"]),
			Origin:    r.at("selector." + strconv.Itoa(i)),
		})
	}
	if r.unknown["selector"] || isWhollyUnknown(r.vals["selector"]) {
		fp.Unknown = append(fp.Unknown, "selectors")
	}
	b.m.FargateProfiles = append(b.m.FargateProfiles, fp)
}

func (b *builder) addon(r *resInst) {
	a := &cluster.Addon{
		Name:    str(r.vals["addon_name"]),
		Version: str(r.vals["addon_version"]),
		Origin:  r.origin,
		Address: r.addr,
	}
	if s, inner := b.sem(r.addr); s != nil && s.kind == kindEKS && strings.HasPrefix(inner, "aws_eks_addon.before_compute[") {
		a.BeforeCompute = true
	}
	if cluster.IsUnknown(a.Version) {
		a.Unknown = append(a.Unknown, "addon_version")
	}
	cv, present := r.vals["configuration_values"]
	raw := str(cv)
	switch {
	case !present || cv == nil:
	case isWhollyUnknown(raw) || r.unknown["configuration_values"] && raw == "":
		a.Unknown = append(a.Unknown, "configuration_values")
		a.ConfigurationRaw = raw
	default:
		a.ConfigurationRaw = raw
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			b.m.Problems = append(b.m.Problems, cluster.Problem{Origin: r.at("configuration_values"), Message: "configuration_values of " + r.addr + " is not valid JSON: " + err.Error()})
			break
		}
		if m, ok := normalizeJSON(v).(map[string]any); ok {
			a.ConfigurationValues = m
		}
		if strings.Contains(raw, "${") {
			a.Unknown = append(a.Unknown, "configuration_values")
		}
	}
	if r.x.configRaw != "" {
		a.ConfigurationRaw = r.x.configRaw
	}
	b.m.Addons = append(b.m.Addons, a)
}

func (b *builder) accessEntry(r *resInst) {
	e := cluster.AccessEntry{
		PrincipalARN:     str(r.vals["principal_arn"]),
		Type:             str(r.vals["type"]),
		Username:         str(r.vals["user_name"]),
		KubernetesGroups: strList(r.vals["kubernetes_groups"]),
		Origin:           r.origin,
		Address:          r.addr,
		Implicit:         r.x.implicit,
	}
	if s, inner := b.sem(r.addr); s != nil {
		switch {
		case s.kind == kindKarpenter && inner == "aws_eks_access_entry.node[0]":
			e.Implicit = true
		case (s.kind == kindSelfManagedNodeGroup && inner == "aws_eks_access_entry.this[0]") ||
			(s.kind == kindEKS && strings.HasPrefix(inner, "module.self_managed_node_group[") && strings.HasSuffix(inner, ".aws_eks_access_entry.this[0]")):
			e.Implicit = true
		}
	}
	if e.PrincipalARN == "" {
		if s, inner := b.sem(r.addr); s != nil && s.kind == kindKarpenter && inner == "aws_eks_access_entry.node[0]" {
			e.PrincipalARN = s.nodeRole
		}
	}
	b.m.Identity.AccessEntries = append(b.m.Identity.AccessEntries, e)
}

func (b *builder) podIdentity(r *resInst) {
	sa := cluster.ServiceAccountIdentity{
		Namespace: str(r.vals["namespace"]),
		Name:      str(r.vals["service_account"]),
		RoleARN:   str(r.vals["role_arn"]),
		Mechanism: "pod-identity",
		Origin:    r.origin,
	}
	if s, inner := b.sem(r.addr); sa.RoleARN == "" && s != nil && s.kind == kindKarpenter && inner == "aws_eks_pod_identity_association.karpenter[0]" {
		sa.RoleARN = s.controllerRole
	}
	b.m.Identity.ServiceAccounts = append(b.m.Identity.ServiceAccounts, sa)
}

// trust reads the principals of an assume-role policy and classifies the role:
// ec2.amazonaws.com is a node role, eks-fargate-pods.amazonaws.com a Fargate pod
// execution role, pods.eks.amazonaws.com or a federated (OIDC) principal a role for
// pods such as the Karpenter controller.
func trust(policy any) ([]string, cluster.RoleKind) {
	s := str(policy)
	if s == "" || isWhollyUnknown(s) {
		return nil, cluster.RoleUnknown
	}
	var doc struct {
		Statement json.RawMessage
	}
	if err := json.Unmarshal([]byte(s), &doc); err != nil {
		return nil, cluster.RoleUnknown
	}
	var stmts []map[string]any
	if err := json.Unmarshal(doc.Statement, &stmts); err != nil {
		var one map[string]any
		if json.Unmarshal(doc.Statement, &one) == nil {
			stmts = []map[string]any{one}
		}
	}
	set := map[string]bool{}
	var ec2, fargate, pods bool
	for _, st := range stmts {
		if eff := str(st["Effect"]); eff != "" && eff != "Allow" {
			continue
		}
		p, ok := st["Principal"].(map[string]any)
		if !ok {
			continue
		}
		for typ, ids := range p {
			for _, id := range strList(ids) {
				set[id] = true
				switch {
				case typ == "Federated":
					pods = true
				case strings.HasPrefix(id, "eks-fargate-pods."):
					fargate = true
				case strings.HasPrefix(id, "ec2."):
					ec2 = true
				case strings.HasPrefix(id, "pods.eks."):
					pods = true
				}
			}
		}
	}
	kind := cluster.RoleUnknown
	switch {
	case fargate:
		kind = cluster.RoleFargate
	case ec2:
		kind = cluster.RoleNode
	case pods:
		kind = cluster.RoleController
	}
	return sortedKeys(set), kind
}

func (b *builder) iamRole(r *resInst) {
	role := &cluster.IAMRole{
		Path:    str(r.vals["path"]),
		Origin:  r.origin,
		Address: r.addr,
	}
	if n := str(r.vals["name"]); n != "" {
		role.Name = n
	} else if p := str(r.vals["name_prefix"]); p != "" {
		role.Name, role.NamePrefix = p, true
	}
	role.Trust, role.Kind = trust(r.vals["assume_role_policy"])
	kind, refs := b.roleSemantics(r.addr)
	if kind != cluster.RoleUnknown {
		role.Kind = kind
	}
	role.Refs = append(refs, r.addr+".arn", r.addr+".name", r.addr+".id")
	if arn := str(r.vals["arn"]); arn != "" && !cluster.IsUnknown(arn) {
		role.ARN = arn
	} else {
		role.ARN = cluster.Unknown(role.Refs[0])
		if len(refs) == 0 {
			role.ARN = cluster.Unknown(r.addr + ".arn")
		}
	}
	b.m.Identity.Roles = append(b.m.Identity.Roles, role)
}

// linkProfiles adds the expressions naming an instance profile to the role in it, so
// that an EC2NodeClass instanceProfile leads to its role.
func (b *builder) linkProfiles() {
	for _, p := range b.profiles {
		role := str(p.vals["role"])
		if role == "" {
			continue
		}
		refs := append(b.profileSemantics(p.addr), p.addr+".name", p.addr+".arn", p.addr+".id")
		for _, r := range b.m.Identity.Roles {
			if r.Name == role && !r.NamePrefix || refersTo(role, r.Refs) {
				r.Refs = append(r.Refs, refs...)
				break
			}
		}
	}
}

func refersTo(value string, refs []string) bool {
	e, ok := cluster.UnknownExpr(value)
	if !ok {
		return false
	}
	for _, r := range refs {
		if r == e {
			return true
		}
	}
	return false
}

// unknownObject is a manifest resource whose object is not known before apply:
// said, and, when its name says it is Karpenter's (a NodePool or Provisioner
// read from elsewhere), capacity that cannot be seen.
func (b *builder) unknownObject(r *resInst, attr string) {
	b.m.Problems = append(b.m.Problems, cluster.Problem{Origin: r.at(attr), Unresolved: true,
		Message: fmt.Sprintf("the object %s applies is not known before apply (%s); it is not analysed", r.addr, attr)})
	name := strings.ToLower(r.addr)
	for _, word := range []string{"karpenter", "nodepool", "node_pool", "provisioner"} {
		if strings.Contains(name, word) {
			b.m.Unseen = append(b.m.Unseen, cluster.UnseenCapacity{What: "the object of " + r.addr, Why: "its " + attr + " is not known before apply, and it may be a NodePool", Origin: r.at(attr), SteadyOnly: true})
			return
		}
	}
}

func (b *builder) kubectlManifest(r *resInst) {
	body := str(r.vals["yaml_body"])
	if strings.TrimSpace(body) == "" || isWhollyUnknown(strings.TrimSpace(body)) {
		b.unknownObject(r, "yaml_body")
		return
	}
	objs, probs := decodeObjects(body, r.textOrigin("yaml_body"))
	ns := str(r.vals["override_namespace"])
	r.flatten(objs, probs)
	for _, o := range objs {
		o.Via, o.Manager = r.addr, "terraform"
		if ns != "" && !cluster.ClusterScoped(o.Kind) {
			o.Namespace = ns
			if md, ok := o.Content["metadata"].(map[string]any); ok {
				md["namespace"] = ns
			}
		}
	}
	b.m.Objects = append(b.m.Objects, objs...)
	b.m.Problems = append(b.m.Problems, probs...)
}

func (b *builder) kubernetesManifest(r *resInst) {
	var objs []*cluster.Object
	var probs []cluster.Problem
	switch {
	case r.manifestAt != nil:
		objs, probs = decodeObjects(r.manifestAt.text, r.manifestAt.origin)
	default:
		man, ok := r.vals["manifest"].(map[string]any)
		if !ok {
			b.unknownObject(r, "manifest")
			return
		}
		// An HCL object is already values: no text round trip, where the
		// placeholders of unknown parts would have to survive YAML quoting.
		org := r.at("manifest")
		objs, probs = manifest.ObjectsFrom(org.File, org.Line, man)
		for _, o := range objs {
			lines := map[string]int{}
			prefix := "manifest."
			for p, l := range r.lines {
				if rest, ok := strings.CutPrefix(p, prefix); ok {
					lines[rest] = l
				}
			}
			o.Lines = lines
		}
	}
	r.flatten(objs, probs)
	for _, o := range objs {
		o.Via, o.Manager = r.addr, "terraform"
	}
	b.m.Objects = append(b.m.Objects, objs...)
	b.m.Problems = append(b.m.Problems, probs...)
}

// storageClass reads a StorageClass the kubernetes provider's typed resource
// declares (kubernetes_storage_class_v1): its name, annotations, provisioner,
// parameters and binding mode.
func (b *builder) storageClass(r *resInst) {
	meta := first(r.vals["metadata"])
	man := map[string]any{"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": map[string]any{}}
	md := man["metadata"].(map[string]any)
	if n, ok := meta["name"]; ok {
		md["name"] = n
	}
	if a, ok := meta["annotations"].(map[string]any); ok {
		md["annotations"] = a
	}
	for from, to := range map[string]string{"storage_provisioner": "provisioner", "parameters": "parameters", "volume_binding_mode": "volumeBindingMode", "reclaim_policy": "reclaimPolicy", "allow_volume_expansion": "allowVolumeExpansion"} {
		if v, ok := r.vals[from]; ok && v != nil {
			man[to] = v
		}
	}
	objs, probs := manifest.ObjectsFrom(r.origin.File, r.origin.Line, man)
	for _, o := range objs {
		o.Lines = map[string]int{}
		for from, to := range map[string]string{"storage_provisioner": "provisioner", "volume_binding_mode": "volumeBindingMode", "metadata.name": "metadata.name"} {
			if l, ok := r.lines[from]; ok {
				o.Lines[to] = l
			}
		}
		o.Via, o.Manager = r.addr, "terraform"
	}
	r.flatten(objs, probs)
	b.m.Objects = append(b.m.Objects, objs...)
	b.m.Problems = append(b.m.Problems, probs...)
}

// flatten points objects and problems decoded from a plan at the resource: the lines
// of a text inside a JSON string are not lines of the plan file.
func (r *resInst) flatten(objs []*cluster.Object, probs []cluster.Problem) {
	if !r.flat {
		return
	}
	for _, o := range objs {
		o.Origin = r.origin
		o.Lines = nil
	}
	for i := range probs {
		probs[i].Origin = cluster.Origin{File: r.origin.File, Line: r.origin.Line, Path: probs[i].Origin.Path}
	}
}

// configMap reads an aws-auth ConfigMap managed with the kubernetes provider.
func (b *builder) configMap(r *resInst) {
	md := first(r.vals["metadata"])
	if str(md["name"]) != "aws-auth" || str(md["namespace"]) != "kube-system" {
		return
	}
	aa := &cluster.AwsAuth{Managed: "user", Origin: r.origin, Address: r.addr, Complete: true}
	data, _ := r.vals["data"].(map[string]any)
	mr, present := data["mapRoles"]
	switch {
	case r.unknown["data"] && data == nil, isWhollyUnknown(str(r.vals["data"])):
		aa.Complete = false
	case !present:
	default:
		text := str(mr)
		if text == "" || isWhollyUnknown(text) {
			aa.Complete = false
			break
		}
		org := r.textOrigin("data.mapRoles")
		if org.Line == r.origin.Line {
			org = r.at("data")
		}
		if r.flat {
			org = r.origin
		}
		roles, complete, err := mapRoles(text, org)
		if err != nil {
			b.m.Problems = append(b.m.Problems, yamlProblem(org, "mapRoles of "+r.addr, text, err))
			aa.Complete = false
			break
		}
		for i := range roles {
			switch key := "data.mapRoles." + strconv.Itoa(i); {
			case i < len(r.x.mapOrigins):
				roles[i].Origin = r.x.mapOrigins[i]
			case r.flat:
				roles[i].Origin.Line = r.origin.Line
			case r.lines[key] > 0:
				// Written as yamlencode([...]): the entry's line in the .tf file.
				roles[i].Origin.Line = r.lines[key]
			}
		}
		aa.Roles = roles
		aa.Complete = complete
	}
	if b.m.Identity.AwsAuth != nil {
		b.m.Identity.AwsAuth.Roles = append(b.m.Identity.AwsAuth.Roles, aa.Roles...)
		b.m.Identity.AwsAuth.Complete = b.m.Identity.AwsAuth.Complete && aa.Complete
		b.note(r.origin, r.addr, "aws-auth is managed by more than one resource")
		return
	}
	b.m.Identity.AwsAuth = aa
}

// mapRoles decodes the mapRoles YAML of aws-auth; each entry keeps its line.
func mapRoles(text string, org cluster.Origin) ([]cluster.RoleMapping, bool, error) {
	safe, p := protect(text)
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(safe), &root); err != nil {
		return nil, false, fmt.Errorf("%s", p.restoreString(strings.TrimPrefix(err.Error(), "yaml: ")))
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return nil, true, nil
	}
	seq := root.Content[0]
	if seq.Kind == yaml.ScalarNode && seq.Tag == "!!null" {
		return nil, true, nil
	}
	if seq.Kind != yaml.SequenceNode {
		return nil, false, fmt.Errorf("mapRoles must be a list")
	}
	var out []cluster.RoleMapping
	budget := manifest.NewBudget(&root)
	for i, item := range seq.Content {
		v, err := nodeValue(budget, item, "", map[string]int{}, 0, 0, 0)
		if err != nil {
			return nil, false, err
		}
		e, _ := p.restore(v).(map[string]any)
		out = append(out, cluster.RoleMapping{
			RoleARN:  str(e["rolearn"]),
			Username: str(e["username"]),
			Groups:   strList(e["groups"]),
			Origin:   cluster.Origin{File: org.File, Line: org.Line + item.Line - 1, Path: "mapRoles." + strconv.Itoa(i)},
		})
	}
	return out, true, nil
}

// autoMode reads EKS Auto Mode from an aws_eks_cluster (written, read from a
// plan, or as terraform-aws-eks makes it): its three switches, the built-in
// NodePools and their node role, and bootstrap_self_managed_addons. Nil when
// the cluster writes none of the three settings.
func (b *builder) autoMode(r *resInst, c cluster.EKSCluster) *cluster.AutoMode {
	cc, ccSet := r.vals["compute_config"]
	storage := first(first(r.vals["storage_config"])["block_storage"])
	lb := first(first(r.vals["kubernetes_network_config"])["elastic_load_balancing"])
	if !ccSet && storage == nil && lb == nil {
		return nil
	}
	a := &cluster.AutoMode{
		From:          r.addr,
		Origin:        r.at("compute_config"),
		Compute:       switchOf(first(cc), "enabled", r.unknown["compute_config"] || cluster.IsUnknown(str(cc))),
		BlockStorage:  switchOf(storage, "enabled", false),
		LoadBalancing: switchOf(lb, "enabled", false),
		Ignored:       r.x.autoIgnored,
	}
	if r.x.autoFrom != "" {
		a.From = r.x.autoFrom
	}
	if !ccSet {
		a.Origin = r.origin
	}
	a.NodePoolsAt = cluster.Decl{Kind: cluster.DeclResource, Block: r.addr, Key: "compute_config"}
	if r.x.autoInput != "" {
		a.NodePoolsAt = cluster.Decl{Kind: cluster.DeclModule, Block: c.Address, Key: r.x.autoInput}
	}
	if m := first(cc); m != nil {
		switch pools := m["node_pools"].(type) {
		case []any:
			a.NodePoolsSet = true
			for _, p := range pools {
				if s, ok := p.(string); ok && !cluster.IsUnknown(s) {
					a.NodePools = append(a.NodePools, s)
				} else {
					a.NodePoolsUnknown = true
				}
			}
			sort.Strings(a.NodePools)
		case string:
			a.NodePoolsSet, a.NodePoolsUnknown = true, true
		}
		a.NodeRole = str(m["node_role_arn"])
	}
	switch v := r.vals["bootstrap_self_managed_addons"]; {
	case v == false || v == "false":
		a.BootstrapAddons = cluster.SwitchOff
	case v == true || v == "true":
		a.BootstrapAddons = cluster.SwitchOn
	case v == nil:
		// The provider's default is true.
		a.BootstrapAddons = cluster.SwitchUnset
	default:
		a.BootstrapAddons = cluster.SwitchUnknown
	}
	return a
}

// switchOf reads a boolean setting of a block.
func switchOf(block map[string]any, key string, unknown bool) cluster.Switch {
	if unknown {
		return cluster.SwitchUnknown
	}
	v, ok := block[key]
	switch {
	case !ok || v == nil:
		return cluster.SwitchUnset
	case v == true:
		return cluster.SwitchOn
	case v == false:
		return cluster.SwitchOff
	}
	return cluster.SwitchUnknown
}
