package cluster

import "testing"

func TestNetworkResourceDenotes(t *testing.T) {
	r := &NetworkResource{Refs: []string{"module.vpc.private_subnets", "aws_subnet.a"}}
	for _, tc := range []struct {
		text string
		want bool
	}{
		{text: "each.value toset(module.vpc.private_subnets)", want: true},
		{text: "module.vpc.private_subnets[0]", want: true},
		{text: "aws_subnet.a.id", want: true},
		{text: "aws_subnet.ab.id", want: false},
		{text: "module.vpc.private_subnets_cidr_blocks", want: false},
		{text: "var.subnet_id", want: false},
	} {
		if got := r.Denotes(tc.text); got != tc.want {
			t.Errorf("Denotes(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}
