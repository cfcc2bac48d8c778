package manifest

import (
	"fmt"
	"strings"

	goversion "github.com/hashicorp/go-version"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// interpretEksctlKarpenter reads the karpenter section of an eksctl
// ClusterConfig. eksctl create cluster then installs the Karpenter chart
// itself once the node groups exist (pkg/karpenter/karpenter.go, v0.230.0):
// release karpenter of oci://public.ecr.aws/karpenter/karpenter in namespace
// karpenter, at the section's version, waiting up to ten minutes for it, with
// values of its own — the cluster name and endpoint, the default instance
// profile (under settings.aws before chart 0.33), the interruption queue named
// after the cluster, and a service account annotated with the IRSA role it
// creates (eksctl-CLUSTER-iamservice-role). It also creates the node role
// eksctl-KarpenterNodeRole-CLUSTER inside the instance profile
// eksctl-KarpenterNodeInstanceProfile-CLUSTER (unless the section names
// another profile) and maps that role in aws-auth (pkg/actions/karpenter).
func interpretEksctlKarpenter(m *cluster.Model, o *cluster.Object) {
	k, ok := o.Get("karpenter").(map[string]any)
	if !ok {
		return
	}
	name := o.Name
	version := strings.TrimPrefix(strings.TrimSpace(fmt.Sprint(valueOr(k["version"], ""))), "v")
	profile := "eksctl-KarpenterNodeInstanceProfile-" + name
	if p, ok := k["defaultInstanceProfile"].(string); ok && strings.TrimSpace(p) != "" {
		profile = p
	}
	createSA, _ := k["createServiceAccount"].(bool)
	controllerRole := "eksctl-" + name + "-iamservice-role"
	endpoint := cluster.Unknown("the endpoint of cluster " + name)
	settings := map[string]any{
		"defaultInstanceProfile": profile,
		"clusterName":            name,
		"clusterEndpoint":        endpoint,
		"interruptionQueueName":  name,
	}
	if before(version, "0.33.0") {
		settings = map[string]any{"aws": settings}
	}
	values := map[string]any{
		"clusterName":     name,
		"clusterEndpoint": endpoint,
		"aws":             map[string]any{"defaultInstanceProfile": profile},
		"settings":        settings,
		"serviceAccount": map[string]any{
			"create":      createSA,
			"name":        "karpenter",
			"annotations": map[string]any{"eks.amazonaws.com/role-arn": "arn:aws:iam::" + cluster.Unknown("the account of cluster "+name) + ":role/" + controllerRole},
		},
	}
	wait := true
	at := o.At("karpenter")
	r := &cluster.HelmRelease{
		Name:        "karpenter",
		Namespace:   "karpenter",
		Chart:       "karpenter",
		Repository:  "oci://public.ecr.aws/karpenter",
		Version:     version,
		Values:      values,
		InstalledBy: "eksctl (the karpenter section of " + o.Origin.File + ")",
		Preset:      cluster.ValuesKeys(values),
		Wait:        &wait,
		Origin:      at,
	}
	m.HelmReleases = append(m.HelmReleases, r)

	nodeRole := "eksctl-KarpenterNodeRole-" + name
	m.Identity.Roles = append(m.Identity.Roles,
		&cluster.IAMRole{
			Name: nodeRole, Kind: cluster.RoleNode, Trust: []string{"ec2.amazonaws.com"},
			Refs: []string{profile}, Origin: at, Address: "karpenter",
			MappedAsNode: "the aws-auth entry eksctl adds for the Karpenter node role it creates",
		},
		&cluster.IAMRole{
			Name: controllerRole, Kind: cluster.RoleController, Origin: at, Address: "karpenter",
		},
	)
	if m.Karpenter.NodeRole == "" {
		m.Karpenter.NodeRole = nodeRole
	}
	if m.Karpenter.ControllerRole == "" {
		m.Karpenter.ControllerRole = controllerRole
	}
}

// before reports whether version v is known and older than w.
func before(v, w string) bool {
	a, err := goversion.NewVersion(v)
	if err != nil {
		return false
	}
	b, err := goversion.NewVersion(w)
	return err == nil && a.LessThan(b)
}
