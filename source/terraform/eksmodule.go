package terraform

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// moduleKind says what eksdoctor knows about a module call.
type moduleKind int

const (
	// kindOpaque: a registry or remote module eksdoctor does not model; its outputs
	// are unknown.
	kindOpaque moduleKind = iota
	// kindLocal: a module on disk, read and evaluated like the root.
	kindLocal
	// The terraform-aws-modules/eks module and its sub-modules, modelled by what they
	// create for their inputs.
	kindEKS
	kindKarpenter
	kindFargateProfile
	kindManagedNodeGroup
	kindSelfManagedNodeGroup
	kindAwsAuth
	// aws-ia/terraform-aws-eks-blueprints-addons and its one-chart sibling.
	kindBlueprintsAddons
	kindBlueprintsAddon
)

// eksFamily reports the kinds of terraform-aws-modules/eks, whose versions are
// majors with their own semantics.
func (k moduleKind) eksFamily() bool { return k >= kindEKS && k <= kindAwsAuth }

func (k moduleKind) String() string {
	switch k {
	case kindEKS:
		return "terraform-aws-modules/eks"
	case kindKarpenter:
		return "terraform-aws-modules/eks//modules/karpenter"
	case kindFargateProfile:
		return "terraform-aws-modules/eks//modules/fargate-profile"
	case kindManagedNodeGroup:
		return "terraform-aws-modules/eks//modules/eks-managed-node-group"
	case kindSelfManagedNodeGroup:
		return "terraform-aws-modules/eks//modules/self-managed-node-group"
	case kindAwsAuth:
		return "terraform-aws-modules/eks//modules/aws-auth"
	case kindBlueprintsAddons:
		return "aws-ia/eks-blueprints-addons"
	case kindBlueprintsAddon:
		return "aws-ia/eks-blueprints-addon"
	case kindLocal:
		return "local module"
	}
	return "module"
}

// Versions of terraform-aws-modules/eks whose semantics eksdoctor knows.
const (
	oldestMajor = 19
	newestMajor = 21
)

var subModules = map[string]moduleKind{
	"karpenter":               kindKarpenter,
	"fargate-profile":         kindFargateProfile,
	"eks-managed-node-group":  kindManagedNodeGroup,
	"self-managed-node-group": kindSelfManagedNodeGroup,
	"aws-auth":                kindAwsAuth,
	"_user_data":              kindOpaque,
	"hybrid-node-role":        kindOpaque,
	"capabilities":            kindOpaque,
}

var (
	registryRE = regexp.MustCompile(`^(?:(?:registry\.terraform\.io|registry\.opentofu\.org)/)?terraform-aws-modules/eks/aws(?://modules/([A-Za-z0-9_-]+))?/?$`)
	gitRE      = regexp.MustCompile(`(?:^|[/:@])terraform-aws-modules/terraform-aws-eks(?:\.git)?(?://modules/([A-Za-z0-9_-]+))?/?(?:\?(.*))?$`)
	refRE      = regexp.MustCompile(`(?:^|&)ref=([^&]+)`)
	majorRE    = regexp.MustCompile(`(\d+)(?:\.\d+)*`)
)

func isLocalSource(s string) bool {
	return s == "." || s == ".." || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") ||
		strings.HasPrefix(s, ".\\") || strings.HasPrefix(s, "..\\")
}

// classifyModule decides what a module call is: a terraform-aws-modules/eks module (by
// registry source, git source, or a local path to a copy of it), a local module to
// read, or an opaque one.
func classifyModule(l *loader, call *moduleCall) {
	src := call.source
	m := call.m
	switch {
	case src == "":
		call.kind = kindOpaque
	case isLocalSource(src):
		call.childPath = path.Clean(path.Join(m.pathModule, filepath.ToSlash(src)))
		call.dir = l.resolvePath(call.childPath)
		call.kind = classifyLocal(l, call)
	case blueprintsRE.MatchString(src):
		call.kind = kindBlueprintsAddons
	case blueprintsAddonRE.MatchString(src):
		call.kind = kindBlueprintsAddon
	default:
		if mm := registryRE.FindStringSubmatch(src); mm != nil {
			call.kind = kindEKS
			if mm[1] != "" {
				call.kind = subModuleKind(mm[1])
			}
			if call.version != "" {
				call.major, call.majorFrom = majorOf(call.version), "version "+call.version
			}
		} else if mm := gitRE.FindStringSubmatch(src); mm != nil {
			call.kind = kindEKS
			if mm[1] != "" {
				call.kind = subModuleKind(mm[1])
			}
			if r := refRE.FindStringSubmatch(mm[2]); r != nil {
				call.major, call.majorFrom = majorOf(r[1]), "ref "+r[1]
			}
		}
	}
	if call.major != 0 {
		call.declaredMajor = call.major
		call.major = clampMajor(l, call, call.major)
	}
}

func subModuleKind(name string) moduleKind {
	if k, ok := subModules[name]; ok {
		return k
	}
	return kindOpaque
}

func classifyLocal(l *loader, call *moduleCall) moduleKind {
	hasTF := false
	if entries, err := l.opts.FS.ReadDir(call.dir); err == nil {
		for _, e := range entries {
			if !e.IsDir() && (strings.HasSuffix(e.Name(), ".tf") || strings.HasSuffix(e.Name(), ".tf.json")) {
				hasTF = true
				break
			}
		}
	}
	if hasTF {
		cfg, err := l.readModule(call.dir)
		if err == nil {
			if k, major := signature(cfg); k != kindOpaque {
				if major != 0 {
					call.major, call.majorFrom = major, "the variables of "+call.dir
				}
				return k
			}
		}
		return kindLocal
	}
	// The directory is not there: a copy of an example that points into the
	// terraform-aws-eks repository. Recognise the module by path and inputs.
	base := path.Base(call.childPath)
	if strings.HasSuffix(path.Dir(call.childPath), "modules") {
		if k := subModuleKind(base); k != kindOpaque {
			return k
		}
	}
	switch {
	case looksLikeBlueprintsAddons(call):
		l.unresolved(originOf(call.block.DefRange()), fmt.Sprintf("the source of %smodule.%s (%s) is not in the inputs; its inputs are those of aws-ia/eks-blueprints-addons, which is assumed", call.m.prefix, call.name, call.source))
		return kindBlueprintsAddons
	case looksLikeEKS(call):
		l.unresolved(originOf(call.block.DefRange()), fmt.Sprintf("the source of %smodule.%s (%s) is not in the inputs; its inputs are those of terraform-aws-modules/eks, which is assumed", call.m.prefix, call.name, call.source))
		return kindEKS
	}
	call.missing = true
	return kindOpaque
}

// looksLikeBlueprintsAddons recognises a call of aws-ia/eks-blueprints-addons by
// its inputs: the cluster's OIDC provider and add-ons to enable.
func looksLikeBlueprintsAddons(call *moduleCall) bool {
	attrs := call.block.Body.Attributes
	if attrs["oidc_provider_arn"] == nil || attrs["cluster_name"] == nil {
		return false
	}
	for name := range attrs {
		if strings.HasPrefix(name, "enable_") || name == "eks_addons" {
			return true
		}
	}
	return false
}

// adoptSiblings gives a local call whose source is missing and whose inputs say
// nothing (a disabled copy: `create = false`) the kind of another call to the same
// source.
func (m *modInst) adoptSiblings() {
	missing := map[string][]*moduleCall{} // by source
	var sources []string
	for _, call := range m.callList {
		if !call.missing {
			continue
		}
		for _, other := range m.callList {
			if other != call && other.kind >= kindEKS && other.childPath == call.childPath {
				call.kind, call.missing = other.kind, false
				break
			}
		}
		if call.missing {
			if missing[call.source] == nil {
				sources = append(sources, call.source)
			}
			missing[call.source] = append(missing[call.source], call)
		}
	}
	// Said once per source: a test suite calls one module many times.
	for _, src := range sources {
		calls := missing[src]
		var names []string
		for _, c := range calls {
			names = append(names, m.prefix+"module."+c.name)
		}
		who := names[0]
		if len(names) > 1 {
			list := strings.Join(names, ", ")
			if len(names) > 5 {
				list = strings.Join(names[:5], ", ") + fmt.Sprintf(" and %d more", len(names)-5)
			}
			who = fmt.Sprintf("%d module calls (%s)", len(names), list)
		}
		m.l.unresolved(originOf(calls[0].block.DefRange()), "the source "+src+" of "+who+" is not in the inputs; what it creates is not analysed and its outputs are unknown")
	}
}

// signature recognises a copy of terraform-aws-eks or its karpenter module by the
// variables it declares.
func signature(cfg *modConfig) (moduleKind, int) {
	has := func(n string) bool { _, ok := cfg.variables[n]; return ok }
	switch {
	case has("eks_managed_node_groups") && has("fargate_profiles") && has("self_managed_node_groups"):
		switch {
		case has("manage_aws_auth_configmap"):
			return kindEKS, 19
		case has("kubernetes_version"):
			return kindEKS, 21
		case has("authentication_mode"):
			return kindEKS, 20
		}
		return kindEKS, 0
	case has("queue_name") && has("rule_name_prefix") && (has("node_iam_role_name") || has("irsa_oidc_provider_arn")):
		switch {
		case has("create_irsa"):
			return kindKarpenter, 19
		case has("enable_irsa"):
			return kindKarpenter, 20
		case has("region"):
			return kindKarpenter, 21
		}
		return kindKarpenter, 0
	}
	return kindOpaque, 0
}

func looksLikeEKS(call *moduleCall) bool {
	attrs := call.block.Body.Attributes
	named := attrs["cluster_name"] != nil || attrs["name"] != nil
	if attrs["oidc_provider_arn"] != nil {
		// An input of modules that use the cluster, not of the one that makes it.
		return false
	}
	for _, k := range []string{"eks_managed_node_groups", "self_managed_node_groups", "fargate_profiles", "cluster_addons", "addons", "access_entries", "vpc_id", "subnet_ids"} {
		if attrs[k] != nil && named {
			return true
		}
	}
	return false
}

// majorOf reads the major version from a version constraint or tag: "~> 20.24",
// ">= 19.0, < 20", "v20.8.5".
func majorOf(v string) int {
	for _, part := range strings.Split(v, ",") {
		p := strings.TrimSpace(part)
		if strings.HasPrefix(p, "<") || strings.HasPrefix(p, "!=") {
			continue
		}
		if m := majorRE.FindStringSubmatch(p); m != nil {
			n, err := strconv.Atoi(m[1])
			if err == nil {
				return n
			}
		}
	}
	return 0
}

func clampMajor(l *loader, call *moduleCall, major int) int {
	switch {
	case major < oldestMajor:
		l.note(originOf(call.block.DefRange()), "module."+call.name, fmt.Sprintf("terraform-aws-modules/eks v%d is older than v%d; v%d semantics are used", major, oldestMajor, oldestMajor))
		return oldestMajor
	case major > newestMajor:
		l.note(originOf(call.block.DefRange()), "module."+call.name, fmt.Sprintf("terraform-aws-modules/eks v%d is newer than v%d; v%d semantics are used", major, newestMajor, newestMajor))
		return newestMajor
	}
	return major
}

// versionMarkers are the inputs that exist only in some major versions; a call that
// sets one of them narrows down which version it was written for.
var versionMarkers = map[moduleKind]map[string][]int{
	kindEKS: {
		"manage_aws_auth_configmap": {19}, "create_aws_auth_configmap": {19}, "aws_auth_roles": {19},
		"aws_auth_users": {19}, "aws_auth_accounts": {19}, "aws_auth_node_iam_role_arns_non_windows": {19},
		"aws_auth_node_iam_role_arns_windows": {19}, "aws_auth_fargate_profile_pod_execution_role_arns": {19},
		"authentication_mode": {20, 21}, "access_entries": {20, 21}, "enable_cluster_creator_admin_permissions": {20, 21},
		"bootstrap_self_managed_addons": {20, 21}, "cluster_upgrade_policy": {20}, "cluster_zonal_shift_config": {20},
		"cluster_compute_config": {20}, "cluster_name": {19, 20}, "cluster_version": {19, 20}, "cluster_addons": {19, 20},
		"cluster_endpoint_public_access": {19, 20}, "cluster_endpoint_private_access": {19, 20},
		"name": {21}, "kubernetes_version": {21}, "addons": {21}, "endpoint_public_access": {21},
		"endpoint_private_access": {21}, "ip_family": {21}, "compute_config": {21}, "encryption_config": {21},
		"upgrade_policy": {21}, "zonal_shift_config": {21}, "control_plane_scaling_config": {21},
		"remote_network_config": {21}, "security_group_additional_rules": {21},
	},
	kindKarpenter: {
		"create_irsa": {19}, "irsa_name": {19}, "irsa_use_name_prefix": {19}, "irsa_policy_name": {19},
		"irsa_path": {19}, "irsa_description": {19}, "irsa_tags": {19}, "irsa_tag_key": {19}, "irsa_tag_values": {19},
		"irsa_ssm_parameter_arns": {19}, "irsa_subnet_account_id": {19}, "irsa_max_session_duration": {19},
		"irsa_permissions_boundary_arn": {19}, "enable_karpenter_instance_profile_creation": {19}, "policies": {19},
		"iam_role_additional_policies": {19}, "iam_role_attach_cni_policy": {19}, "iam_role_arn": {19},
		"irsa_oidc_provider_arn": {19, 20}, "irsa_namespace_service_accounts": {19, 20},
		"enable_v1_permissions": {20}, "enable_pod_identity": {20}, "enable_irsa": {20},
		"create_node_iam_role": {20, 21}, "node_iam_role_name": {20, 21}, "node_iam_role_use_name_prefix": {20, 21},
		"node_iam_role_arn": {20, 21}, "node_iam_role_additional_policies": {20, 21}, "create_access_entry": {20, 21},
		"access_entry_type": {20, 21}, "create_pod_identity_association": {20, 21}, "namespace": {20, 21},
		"service_account": {20, 21}, "iam_role_policies": {20, 21}, "region": {21},
	},
	kindAwsAuth: {"manage_aws_auth_configmap": {20}, "aws_auth_roles": {20}},
}

// inferMajors decides the terraform-aws-modules/eks version of the calls of a module
// that do not declare one: from the inputs they set, else from another call into the
// same copy of the repository, else the newest version. Each decision is a note.
func (m *modInst) inferMajors() {
	l := m.l
	decided := map[string]int{}
	var pending []*moduleCall
	for _, call := range m.callList {
		if !call.kind.eksFamily() {
			continue
		}
		if call.major != 0 {
			decided[repoRoot(call)] = call.major
			continue
		}
		cands := []int{19, 20, 21}
		var used []string
		for name := range call.block.Body.Attributes {
			if vs, ok := versionMarkers[call.kind][name]; ok {
				next := intersect(cands, vs)
				if len(next) > 0 {
					cands = next
					used = append(used, name)
				}
			}
		}
		if call.kind == kindAwsAuth {
			cands = []int{20}
		}
		sort.Strings(used)
		if len(cands) == 1 {
			call.major = cands[0]
			call.majorFrom = "inferred from the inputs " + strings.Join(used, ", ")
			if len(used) == 0 {
				call.majorFrom = "the only version with this sub-module"
			}
			decided[repoRoot(call)] = call.major
			continue
		}
		call.major = cands[len(cands)-1]
		call.majorFrom = ""
		pending = append(pending, call)
		call.candidates = cands
	}
	// Calls into the same copy of the repository share a version: one decided by
	// its inputs, else the newest version all their inputs allow.
	common := map[string][]int{}
	for _, call := range pending {
		root := repoRoot(call)
		if c, ok := common[root]; ok {
			if next := intersect(c, call.candidates); len(next) > 0 {
				common[root] = next
			}
		} else {
			common[root] = call.candidates
		}
	}
	for _, call := range pending {
		if v, ok := decided[repoRoot(call)]; ok && contains(call.candidates, v) {
			call.major = v
			call.majorFrom = "the version of the other modules from the same source"
		} else if c := common[repoRoot(call)]; contains(call.candidates, c[len(c)-1]) {
			call.major = c[len(c)-1]
			call.majorFrom = "assumed: the newest version the inputs allow"
		} else {
			call.majorFrom = "assumed: the newest version the inputs allow"
		}
	}
	for _, call := range m.callList {
		if !call.kind.eksFamily() || call.version != "" || strings.Contains(call.majorFrom, "ref ") {
			continue
		}
		l.note(originOf(call.block.DefRange()), m.prefix+"module."+call.name,
			fmt.Sprintf("%s version is not declared; v%d semantics are used (%s)", call.kind, call.major, call.majorFrom))
	}
}

// repoRoot identifies the copy of terraform-aws-eks a call uses, so that the
// karpenter sub-module of an example is read with the version of its eks module.
func repoRoot(call *moduleCall) string {
	if isLocalSource(call.source) {
		p := call.childPath
		if i := strings.LastIndex(p, "/modules/"); i >= 0 {
			p = p[:i]
		} else if strings.HasPrefix(p, "modules/") {
			p = "."
		}
		return "local:" + path.Clean(p)
	}
	s := call.source
	if i := strings.Index(s, "//"); i >= 0 && !strings.Contains(s[:i], ":") {
		s = s[:i]
	}
	return s + "@" + call.version
}

func intersect(a, b []int) []int {
	var out []int
	for _, x := range a {
		if contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func contains(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// attrRange returns the range of a module call argument.
func (call *moduleCall) attrRange(name string) (hcl.Range, bool) {
	if a, ok := call.block.Body.Attributes[name]; ok {
		return a.SrcRange, true
	}
	return hcl.Range{}, false
}
