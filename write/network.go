package write

import (
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/terraform"
)

// NetworkTags adds tags to a subnet or security group where the inputs tag
// it (a module input map or a resource's tags), keeping the others as
// written.
func NetworkTags(m *cluster.Model, r *cluster.NetworkResource, tags map[string]string) (cluster.Edit, bool) {
	if m == nil {
		return cluster.Edit{}, false
	}
	return terraform.TagsEdit(m.Terraform, r, tags)
}
