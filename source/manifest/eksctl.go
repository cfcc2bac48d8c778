package manifest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
)

// interpretEksctl reads an eksctl ClusterConfig: node groups, Fargate profiles,
// add-ons and the identity settings. eksctl authorizes the node groups and Fargate
// profiles it creates by itself (aws-auth or access entries), so those are recorded
// as implicit.
func interpretEksctl(m *cluster.Model, o *cluster.Object) {
	if !m.Cluster.Defined {
		m.Cluster = cluster.EKSCluster{
			Name:              o.Name,
			KubernetesVersion: fmt.Sprint(valueOr(o.Get("metadata.version"), "")),
			Origin:            o.Origin,
			Address:           o.Origin.File,
			Defined:           true,
		}
		if off, _ := o.Get("addonsConfig.disableDefaultAddons").(bool); off {
			m.Cluster.NoDefaultAddons = "addonsConfig.disableDefaultAddons is true"
		}
	}
	if a := eksctlAutoMode(o); a != nil && m.Cluster.AutoMode == nil {
		m.Cluster.AutoMode = a
		if a.Compute == cluster.SwitchOn && m.Cluster.NoDefaultAddons == "" {
			// eksctl installs no VPC CNI, kube-proxy or CoreDNS with Auto
			// Mode (pkg/actions/addon, known_addons.go).
			m.Cluster.NoDefaultAddons = "eksctl installs no VPC CNI, kube-proxy or CoreDNS with autoModeConfig enabled"
		}
	}
	if why := partialClusterConfig(o); why != "" {
		m.Unseen = append(m.Unseen, cluster.UnseenCapacity{What: "the rest of cluster " + o.Name + "'s compute", Why: why, Origin: o.Origin, Outside: true})
	}
	var own []eksctlGroup
	for _, group := range []struct {
		path    string
		managed bool
	}{{"managedNodeGroups", true}, {"nodeGroups", false}} {
		list, _ := o.Get(group.path).([]any)
		for i, it := range list {
			g, ok := it.(map[string]any)
			if !ok {
				continue
			}
			path := group.path + "." + strconv.Itoa(i)
			ng, err := eksctlNodeGroup(g, group.managed)
			if err != nil {
				m.Problems = append(m.Problems, cluster.Problem{Origin: o.At(path), Object: o.Ref(), Message: path + ": " + err.Error()})
				continue
			}
			ng.Origin = o.At(path)
			ng.Address = path
			m.NodeGroups = append(m.NodeGroups, ng)
			efa, _ := g["efaEnabled"].(bool)
			own = append(own, eksctlGroup{ng: ng, efa: efa})
		}
	}
	interpretEksctlDevicePlugins(m, o, own)
	profiles, _ := o.Get("fargateProfiles").([]any)
	for i, it := range profiles {
		p, ok := it.(map[string]any)
		if !ok {
			continue
		}
		path := "fargateProfiles." + strconv.Itoa(i)
		fp := &cluster.FargateProfile{Origin: o.At(path), Address: path, Decl: cluster.Decl{Kind: cluster.DeclEksctl, Object: o, List: "fargateProfiles", Index: i}}
		fp.Name, _ = p["name"].(string)
		fp.PodExecutionRole, _ = p["podExecutionRoleARN"].(string)
		sels, _ := p["selectors"].([]any)
		for j, s := range sels {
			sm, ok := s.(map[string]any)
			if !ok {
				continue
			}
			sel := cluster.FargateSelector{Labels: stringMap(sm["labels"]), Origin: o.At(path + ".selectors." + strconv.Itoa(j))}
			sel.Namespace, _ = sm["namespace"].(string)
			fp.Selectors = append(fp.Selectors, sel)
		}
		m.FargateProfiles = append(m.FargateProfiles, fp)
	}
	addons, _ := o.Get("addons").([]any)
	for i, it := range addons {
		a, ok := it.(map[string]any)
		if !ok {
			continue
		}
		path := "addons." + strconv.Itoa(i)
		ad := &cluster.Addon{Origin: o.At(path), Address: path, Decl: cluster.Decl{Kind: cluster.DeclEksctl, Object: o, List: "addons", Index: i}}
		ad.Name, _ = a["name"].(string)
		if v, ok := a["version"].(string); ok && v != "latest" {
			ad.Version = v
		}
		if cv, ok := a["configurationValues"].(string); ok && strings.TrimSpace(cv) != "" {
			ad.ConfigurationRaw = cv
			var parsed map[string]any
			if err := json.Unmarshal([]byte(cv), &parsed); err != nil {
				if v, err2 := ParseValue([]byte(cv)); err2 == nil {
					parsed, _ = v.(map[string]any)
				} else {
					m.Problems = append(m.Problems, cluster.Problem{Origin: o.At(path + ".configurationValues"), Object: o.Ref(), Message: "configurationValues is neither JSON nor YAML: " + err.Error()})
				}
			}
			ad.ConfigurationValues = parsed
		}
		m.Addons = append(m.Addons, ad)
	}
	interpretEksctlIdentity(m, o)
	interpretEksctlKarpenter(m, o)
}

// partialClusterConfig tells a ClusterConfig that adds node groups to a cluster
// made elsewhere from one that describes a cluster: a template whose name is
// filled in later (envsubst, as tutorials and workshops do before eksctl create
// nodegroup -f) that holds nothing but node groups or Fargate profiles. Its
// capacity is not all the cluster has; it says why.
func partialClusterConfig(o *cluster.Object) string {
	if !strings.Contains(o.Name, "$") && !strings.Contains(o.Name, "{{") {
		return ""
	}
	for k := range o.Content {
		switch k {
		case "apiVersion", "kind", "metadata", "managedNodeGroups", "nodeGroups", "fargateProfiles":
		default:
			return ""
		}
	}
	return "this ClusterConfig is a template that only adds node groups to a cluster defined elsewhere (eksctl create nodegroup -f), whose other capacity it does not show"
}

func valueOr(v any, def any) any {
	if v == nil {
		return def
	}
	return v
}

func eksctlNodeGroup(g map[string]any, managed bool) (*cluster.NodeGroup, error) {
	ng := &cluster.NodeGroup{Managed: managed, MinSize: -1, MaxSize: -1, DesiredSize: -1, CreatedBy: "eksctl"}
	ng.Name, _ = g["name"].(string)
	ng.Labels = stringMap(g["labels"])
	if it, ok := g["instanceType"].(string); ok && it != "" && it != "mixed" {
		ng.InstanceTypes = []string{it}
	}
	ng.InstanceTypes = append(ng.InstanceTypes, stringList(g["instanceTypes"])...)
	if d, ok := g["instancesDistribution"].(map[string]any); ok {
		ng.InstanceTypes = append(ng.InstanceTypes, stringList(d["instanceTypes"])...)
	}
	ng.AMIType, _ = g["amiFamily"].(string)
	ng.Zones = stringList(g["availabilityZones"])
	for key, dst := range map[string]*int{"minSize": &ng.MinSize, "maxSize": &ng.MaxSize, "desiredCapacity": &ng.DesiredSize} {
		if v, ok := g[key].(int64); ok {
			*dst = int(v)
		}
	}
	if iam, ok := g["iam"].(map[string]any); ok {
		ng.NodeRole, _ = iam["instanceRoleARN"].(string)
	}
	taints, err := eksctlTaints(g["taints"])
	if err != nil {
		return nil, err
	}
	ng.Taints = taints
	// eksctl gives every node group an 80 GiB volume unless volumeSize says
	// otherwise.
	ng.DiskBytes = 80 << 30
	if v, ok := g["volumeSize"].(int64); ok && v > 0 {
		ng.DiskBytes = v << 30
	} else if _, set := g["volumeSize"]; set {
		ng.DiskBytes = -1
	}
	return ng, nil
}

// eksctlTaints accepts both forms eksctl has supported: a list of {key, value,
// effect} and the older map of key to "value:Effect".
func eksctlTaints(v any) ([]corev1.Taint, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case []any:
		var out []corev1.Taint
		for i, it := range t {
			m, ok := it.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("taints.%d is not an object", i)
			}
			key, _ := m["key"].(string)
			value, _ := m["value"].(string)
			effect, _ := m["effect"].(string)
			e, err := TaintEffect(effect)
			if err != nil {
				return nil, fmt.Errorf("taints.%d: %w", i, err)
			}
			out = append(out, corev1.Taint{Key: key, Value: value, Effect: e})
		}
		return out, nil
	case map[string]any:
		var out []corev1.Taint
		for _, k := range sortedKeys(t) {
			s, _ := t[k].(string)
			value, effect, found := strings.Cut(s, ":")
			if !found {
				effect, value = value, ""
			}
			e, err := TaintEffect(effect)
			if err != nil {
				return nil, fmt.Errorf("taints.%s: %w", k, err)
			}
			out = append(out, corev1.Taint{Key: k, Value: value, Effect: e})
		}
		return out, nil
	}
	return nil, fmt.Errorf("taints must be a list or a map, found %s", describe(v))
}

// TaintEffect accepts Kubernetes spelling (NoSchedule) and the EKS API spelling
// used by node groups (NO_SCHEDULE).
func TaintEffect(s string) (corev1.TaintEffect, error) {
	switch strings.ToUpper(strings.ReplaceAll(s, "_", "")) {
	case "NOSCHEDULE":
		return corev1.TaintEffectNoSchedule, nil
	case "NOEXECUTE":
		return corev1.TaintEffectNoExecute, nil
	case "PREFERNOSCHEDULE":
		return corev1.TaintEffectPreferNoSchedule, nil
	}
	return "", fmt.Errorf("unknown taint effect %q (want NoSchedule, NoExecute or PreferNoSchedule)", s)
}

func interpretEksctlIdentity(m *cluster.Model, o *cluster.Object) {
	mode, _ := o.Get("accessConfig.authenticationMode").(string)
	if mode != "" {
		if m.Identity.AuthMode == "" || m.Identity.AuthModeDefaulted {
			m.Identity.AuthMode, m.Identity.AuthModeDefaulted, m.Identity.AuthModeOrigin = mode, false, o.At("accessConfig.authenticationMode")
		}
	} else if m.Identity.AuthMode == "" {
		// eksctl creates new clusters with both access entries and aws-auth.
		m.Identity.AuthMode, m.Identity.AuthModeDefaulted, m.Identity.AuthModeOrigin = cluster.AuthAPIAndConfigMap, true, o.Origin
	}
	entries, _ := o.Get("accessConfig.accessEntries").([]any)
	for i, it := range entries {
		e, ok := it.(map[string]any)
		if !ok {
			continue
		}
		path := "accessConfig.accessEntries." + strconv.Itoa(i)
		ae := cluster.AccessEntry{Origin: o.At(path), Address: path, Decl: cluster.Decl{Kind: cluster.DeclEksctl, Object: o, List: "accessConfig.accessEntries", Index: i}}
		ae.PrincipalARN, _ = e["principalARN"].(string)
		ae.Type, _ = e["type"].(string)
		ae.Username, _ = e["username"].(string)
		ae.KubernetesGroups = stringList(e["kubernetesGroups"])
		m.Identity.AccessEntries = append(m.Identity.AccessEntries, ae)
		policies, _ := e["accessPolicies"].([]any)
		for j, pit := range policies {
			pm, ok := pit.(map[string]any)
			if !ok {
				continue
			}
			at := path + ".accessPolicies." + strconv.Itoa(j)
			arn, _ := pm["policyARN"].(string)
			m.Identity.PolicyAssociations = append(m.Identity.PolicyAssociations, cluster.PolicyAssociation{PrincipalARN: ae.PrincipalARN, PolicyARN: arn, Origin: o.At(at), Address: at})
		}
	}
	maps, _ := o.Get("iamIdentityMappings").([]any)
	for i, it := range maps {
		e, ok := it.(map[string]any)
		if !ok {
			continue
		}
		arn, _ := e["arn"].(string)
		if !strings.Contains(arn, ":role/") {
			continue
		}
		path := "iamIdentityMappings." + strconv.Itoa(i)
		rm := cluster.RoleMapping{RoleARN: arn, Origin: o.At(path)}
		rm.Username, _ = e["username"].(string)
		rm.Groups = stringList(e["groups"])
		if m.Identity.AwsAuth == nil {
			m.Identity.AwsAuth = &cluster.AwsAuth{Complete: true, Managed: "user", Origin: o.At("iamIdentityMappings"), Address: "iamIdentityMappings"}
		}
		m.Identity.AwsAuth.Roles = append(m.Identity.AwsAuth.Roles, rm)
	}
	for _, path := range []string{"iam.serviceAccounts", "iam.podIdentityAssociations"} {
		list, _ := o.Get(path).([]any)
		for i, it := range list {
			e, ok := it.(map[string]any)
			if !ok {
				continue
			}
			sa := cluster.ServiceAccountIdentity{Origin: o.At(path + "." + strconv.Itoa(i))}
			if path == "iam.serviceAccounts" {
				sa.Mechanism = "irsa"
				sa.Name = fmt.Sprint(valueOr(cluster.Lookup(e, "metadata.name"), ""))
				sa.Namespace = fmt.Sprint(valueOr(cluster.Lookup(e, "metadata.namespace"), "default"))
				sa.RoleARN, _ = e["attachRoleARN"].(string)
			} else {
				sa.Mechanism = "pod-identity"
				sa.Name, _ = e["serviceAccountName"].(string)
				sa.Namespace, _ = e["namespace"].(string)
				sa.RoleARN, _ = e["roleARN"].(string)
			}
			if sa.RoleARN == "" {
				if rn, ok := e["roleName"].(string); ok {
					sa.RoleARN = rn
				}
			}
			m.Identity.ServiceAccounts = append(m.Identity.ServiceAccounts, sa)
		}
	}
	sort.SliceStable(m.Identity.AccessEntries, func(i, j int) bool {
		return m.Identity.AccessEntries[i].PrincipalARN < m.Identity.AccessEntries[j].PrincipalARN
	})
}

// eksctlAutoMode reads autoModeConfig as eksctl sends it: compute, load
// balancing and block storage switched together, bootstrapSelfManagedAddons
// false, the built-in NodePools both when nodePools is not written (none
// when it is an empty list), and the node role eksctl creates unless
// nodeRoleARN names one. Nil when the config has no autoModeConfig.
func eksctlAutoMode(o *cluster.Object) *cluster.AutoMode {
	cfg, ok := o.Get("autoModeConfig").(map[string]any)
	if !ok {
		return nil
	}
	sw := cluster.SwitchUnset
	switch v := cfg["enabled"]; {
	case v == true:
		sw = cluster.SwitchOn
	case v == false:
		sw = cluster.SwitchOff
	case v != nil:
		sw = cluster.SwitchUnknown
	}
	a := &cluster.AutoMode{
		Compute: sw, BlockStorage: sw, LoadBalancing: sw,
		BootstrapAddons: cluster.SwitchOff,
		From:            "eksctl autoModeConfig of cluster " + o.Name,
		Origin:          o.At("autoModeConfig"),
		NodePoolsAt:     cluster.Decl{Kind: cluster.DeclEksctl, Object: o, List: "autoModeConfig", Key: "nodePools"},
	}
	pools, written := cfg["nodePools"].([]any)
	switch {
	case written:
		a.NodePoolsSet = true
		for _, p := range pools {
			if s, ok := p.(string); ok {
				a.NodePools = append(a.NodePools, s)
			}
		}
		sort.Strings(a.NodePools)
	case sw == cluster.SwitchOn:
		a.NodePools = catalog.AutoMode().BuiltinNodePoolNames()
	}
	if role, _ := cfg["nodeRoleARN"].(string); role != "" {
		a.NodeRole = role
	} else if len(a.NodePools) > 0 {
		a.NodeRole = "${the node role eksctl creates for cluster " + o.Name + "}"
	}
	return a
}
