package live

import (
	"strconv"

	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// The aws-auth ConfigMap maps IAM roles to Kubernetes users and groups; it is the
// only ConfigMap eksdoctor reads.
const (
	awsAuthNamespace = "kube-system"
	awsAuthName      = "aws-auth"
)

// mapRole is one entry of aws-auth's mapRoles, a YAML list kept in a string.
type mapRole struct {
	RoleARN  string   `json:"rolearn"`
	Username string   `json:"username"`
	Groups   []string `json:"groups"`
}

// awsAuth decodes the role mappings of the aws-auth ConfigMap. A mapRoles value that
// does not decode is a problem of the input; the mapping is then marked incomplete
// rather than dropped, so checks know they cannot rely on it.
func awsAuth(o *cluster.Object) (*cluster.AwsAuth, []cluster.Problem) {
	at := o.At("data.mapRoles")
	auth := &cluster.AwsAuth{Complete: true, Origin: at}
	text := o.String("data.mapRoles")
	if text == "" {
		return auth, nil
	}
	var roles []mapRole
	if err := yaml.Unmarshal([]byte(text), &roles); err != nil {
		auth.Complete = false
		return auth, []cluster.Problem{{
			Origin:  at,
			Object:  o.Ref(),
			Message: "aws-auth mapRoles is not a YAML list of {rolearn, username, groups}: " + err.Error(),
		}}
	}
	for i, r := range roles {
		auth.Roles = append(auth.Roles, cluster.RoleMapping{
			RoleARN:  r.RoleARN,
			Username: r.Username,
			Groups:   r.Groups,
			Origin:   o.At("data.mapRoles." + strconv.Itoa(i)),
		})
	}
	return auth, nil
}
