package identity

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/cluster"
)

func TestParseRoleARN(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want ARN
		ok   bool
	}{
		{name: "plain", in: "arn:aws:iam::111122223333:role/KarpenterNodeRole-demo", want: ARN{Partition: "aws", Account: "111122223333", Path: "/", Name: "KarpenterNodeRole-demo"}, ok: true},
		{name: "path", in: "arn:aws:iam::111122223333:role/team/eks/node", want: ARN{Partition: "aws", Account: "111122223333", Path: "/team/eks/", Name: "node"}, ok: true},
		{name: "china partition", in: "arn:aws-cn:iam::111122223333:role/node", want: ARN{Partition: "aws-cn", Account: "111122223333", Path: "/", Name: "node"}, ok: true},
		{name: "placeholders", in: "arn:${AWS_PARTITION}:iam::${AWS_ACCOUNT_ID}:role/KarpenterNodeRole-${CLUSTER_NAME}", want: ARN{Partition: "${AWS_PARTITION}", Account: "${AWS_ACCOUNT_ID}", Path: "/", Name: "KarpenterNodeRole-${CLUSTER_NAME}"}, ok: true},
		{name: "placeholder with colon and slash", in: "arn:aws:iam::${var.a ? var.b : var.c}:role/${join(\"/\", [var.x])}", want: ARN{Partition: "aws", Account: "${var.a ? var.b : var.c}", Path: "/", Name: "${join(\"/\", [var.x])}"}, ok: true},
		{name: "user", in: "arn:aws:iam::111122223333:user/admin", ok: false},
		{name: "name", in: "KarpenterNodeRole-demo", ok: false},
		{name: "s3", in: "arn:aws:s3:::bucket", ok: false},
		{name: "empty role", in: "arn:aws:iam::1:role/", ok: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseRoleARN(tt.in)
			if ok != tt.ok {
				t.Fatalf("ParseRoleARN(%q) ok = %v, want %v", tt.in, ok, tt.ok)
			}
			if !ok {
				return
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("ParseRoleARN(%q) mismatch (-got +want):\n%s", tt.in, diff)
			}
		})
	}
}

// karpenterModel is a v20-style configuration: the karpenter module's node role
// (with a name prefix) and controller role, a role with an IAM path, a Fargate
// profile, and a Helm release that annotates its service account.
func karpenterModel() *cluster.Model {
	return &cluster.Model{
		Identity: cluster.Identity{
			Roles: []*cluster.IAMRole{
				{Name: "Karpenter-demo-", NamePrefix: true, ARN: "${module.karpenter.node_iam_role_arn}", Kind: cluster.RoleNode, Trust: []string{"ec2.amazonaws.com"}, Refs: []string{"module.karpenter.node_iam_role_arn", "module.karpenter.node_iam_role_name"}, Address: "module.karpenter"},
				{Name: "KarpenterController-", NamePrefix: true, ARN: "${module.karpenter.iam_role_arn}", Trust: []string{"pods.eks.amazonaws.com"}, Refs: []string{"module.karpenter.iam_role_arn", "module.karpenter.iam_role_name"}, Address: "module.karpenter"},
				{Name: "eks-node", Path: "/team/", ARN: "${aws_iam_role.node.arn}", Trust: []string{"ec2.amazonaws.com"}, Refs: []string{"aws_iam_role.node.arn", "aws_iam_role.node.name"}, Address: "aws_iam_role.node"},
			},
		},
		FargateProfiles: []*cluster.FargateProfile{{Name: "karpenter", PodExecutionRole: "arn:aws:iam::111122223333:role/fargate-pods"}},
		HelmReleases: []*cluster.HelmRelease{{Name: "karpenter", Values: map[string]any{
			"serviceAccount": map[string]any{"annotations": map[string]any{IRSAAnnotation: "arn:aws:iam::111122223333:role/karpenter-irsa"}},
		}}},
	}
}

func TestSame(t *testing.T) {
	m := karpenterModel()
	m.Terraform = cluster.NewGraph()
	m.Terraform.Add(&cluster.Resource{Address: "data.aws_iam_role.named", Type: "data.aws_iam_role", Attrs: map[string]any{"name": "KarpenterNodeRole-demo"}})
	m.Terraform.Add(&cluster.Resource{Address: "data.aws_iam_role.node", Type: "data.aws_iam_role", Attrs: map[string]any{"name": "${var.node_role}"}})
	r := New(m)
	tests := []struct {
		name string
		a, b string
		want Match
	}{
		{name: "name and arn outputs of one role", a: "${module.karpenter.node_iam_role_name}", b: "${module.karpenter.node_iam_role_arn}", want: Yes},
		{name: "controller and node roles of the module", a: "${module.karpenter.iam_role_arn}", b: "${module.karpenter.node_iam_role_name}", want: No},
		{name: "literal prefix is not the generated name", a: "Karpenter-demo", b: "${module.karpenter.node_iam_role_name}", want: No},
		{name: "prefix with its dash", a: "Karpenter-demo-", b: "${module.karpenter.node_iam_role_arn}", want: No},
		{name: "generated name may match", a: "Karpenter-demo-20240101abcdef", b: "${module.karpenter.node_iam_role_name}", want: Maybe},
		{name: "unrelated name never matches a prefix", a: "other", b: "${module.karpenter.node_iam_role_name}", want: No},
		{name: "arn with path against name", a: "arn:aws:iam::111122223333:role/team/eks-node", b: "eks-node", want: Yes},
		{name: "resource attribute against its literal name", a: "${aws_iam_role.node.name}", b: "eks-node", want: Yes},
		{name: "accounts differ", a: "arn:aws:iam::111122223333:role/node", b: "arn:aws:iam::444455556666:role/node", want: No},
		{name: "partitions differ", a: "arn:aws:iam::111122223333:role/node", b: "arn:aws-cn:iam::111122223333:role/node", want: No},
		{name: "names differ in case only", a: "karpenternoderole-demo", b: "arn:aws:iam::111122223333:role/KarpenterNodeRole-demo", want: Yes},
		{name: "same shell placeholder", a: "KarpenterNodeRole-${CLUSTER_NAME}", b: "arn:${AWS_PARTITION}:iam::${AWS_ACCOUNT_ID}:role/KarpenterNodeRole-${CLUSTER_NAME}", want: Yes},
		{name: "known name fits the pattern", a: "KarpenterNodeRole-prod", b: "KarpenterNodeRole-${CLUSTER_NAME}", want: Maybe},
		{name: "known name cannot fit the pattern", a: "foo", b: "KarpenterNodeRole-${CLUSTER_NAME}", want: No},
		{name: "split of an arn output", a: `${split("/", module.addons.karpenter.node_iam_role_arn)[1]}`, b: "${module.addons.karpenter.node_iam_role_arn}", want: Yes},
		{name: "two variables", a: "${var.node_role_name}", b: "${var.node_role_arn}", want: Maybe},
		{name: "same variable", a: "${var.node_role}", b: "${var.node_role}", want: Yes},
		{name: "unknown against known", a: "${data.aws_iam_role.node.name}", b: "eks-node", want: Maybe},
		{name: "data source with a stated name", a: "${data.aws_iam_role.named.arn}", b: "KarpenterNodeRole-demo", want: Yes},
		{name: "data source with another name", a: "${data.aws_iam_role.named.arn}", b: "other", want: No},
		{name: "v19 outputs of one role", a: "${module.karpenter.role_name}", b: "${module.karpenter.role_arn}", want: Yes},
		{name: "empty", a: "", b: "eks-node", want: Maybe},
		{name: "the identity running Terraform", a: "${module.eks.data.aws_iam_session_context.current[0].issuer_arn}", b: "KarpenterNodeRole-demo", want: No},
		{name: "the identity running Terraform and a module role", a: "${data.aws_caller_identity.current.arn}", b: "${module.karpenter.node_iam_role_arn}", want: No},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Same(r.Resolve(tt.a), r.Resolve(tt.b))
			if got != tt.want {
				t.Errorf("Same(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if back := Same(r.Resolve(tt.b), r.Resolve(tt.a)); back != got {
				t.Errorf("Same is not symmetric: Same(%q, %q) = %v", tt.b, tt.a, back)
			}
		})
	}
}

func TestResolveKind(t *testing.T) {
	r := New(karpenterModel())
	empty := New(&cluster.Model{})
	tests := []struct {
		name string
		r    *Resolver
		in   string
		want cluster.RoleKind
	}{
		{name: "v20 controller output without declaration", r: empty, in: "${module.karpenter.iam_role_arn}", want: cluster.RoleController},
		{name: "v20 node output", r: empty, in: "${module.karpenter.node_iam_role_name}", want: cluster.RoleNode},
		{name: "v19 role_arn is the node role", r: empty, in: "${module.karpenter.role_arn}", want: cluster.RoleNode},
		{name: "v19 irsa_arn is the controller role", r: empty, in: "${module.karpenter.irsa_arn}", want: cluster.RoleController},
		{name: "other module outputs say nothing", r: empty, in: "${module.eks.cluster_iam_role_arn}", want: cluster.RoleUnknown},
		{name: "declared node role", r: r, in: "${module.karpenter.node_iam_role_arn}", want: cluster.RoleNode},
		{name: "trusted by pod identity", r: r, in: "${module.karpenter.iam_role_name}", want: cluster.RoleController},
		{name: "trusted by ec2", r: r, in: "eks-node", want: cluster.RoleNode},
		{name: "Fargate pod execution role", r: r, in: "fargate-pods", want: cluster.RoleFargate},
		{name: "service account annotation in Helm values", r: r, in: "arn:aws:iam::111122223333:role/karpenter-irsa", want: cluster.RoleController},
		{name: "unknown literal", r: r, in: "something-else", want: cluster.RoleUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.r.Resolve(tt.in)
			if got.Kind != tt.want {
				t.Errorf("Resolve(%q).Kind = %v (%s), want %v", tt.in, got.Kind, got.Why, tt.want)
			}
			if got.Kind != cluster.RoleUnknown && got.Why == "" {
				t.Errorf("Resolve(%q) gives kind %v without saying why", tt.in, got.Kind)
			}
		})
	}
}

func TestNodeClassRole(t *testing.T) {
	m := karpenterModel()
	m.Terraform = cluster.NewGraph()
	m.Terraform.Add(&cluster.Resource{Address: "aws_iam_instance_profile.node", Type: "aws_iam_instance_profile", Attrs: map[string]any{"name": "eks-node-profile", "role": "${aws_iam_role.node.name}"}})
	m.Terraform.Add(&cluster.Resource{Address: "module.karpenter", Type: "module", Source: "terraform-aws-modules/eks/aws//modules/karpenter"})
	r := New(m)
	tests := []struct {
		name       string
		nc         cluster.NodeClass
		wantRole   string // the role's String()
		wantField  string
		wantKind   cluster.RoleKind
		unresolved bool
		windows    bool
	}{
		{name: "role output", nc: cluster.NodeClass{Role: "${module.karpenter.node_iam_role_name}"}, wantRole: "module.karpenter.node_iam_role_arn", wantField: "spec.role", wantKind: cluster.RoleNode},
		{name: "instance profile resource by name", nc: cluster.NodeClass{InstanceProfile: "eks-node-profile"}, wantRole: "eks-node", wantField: "spec.instanceProfile", wantKind: cluster.RoleNode},
		{name: "instance profile resource by reference", nc: cluster.NodeClass{InstanceProfile: "${aws_iam_instance_profile.node.name}"}, wantRole: "eks-node", wantField: "spec.instanceProfile", wantKind: cluster.RoleNode},
		{name: "v19 module instance profile", nc: cluster.NodeClass{InstanceProfile: "${module.karpenter.instance_profile_name}"}, wantRole: "module.karpenter.node_iam_role_arn", wantField: "spec.instanceProfile", wantKind: cluster.RoleNode},
		{name: "unknown instance profile", nc: cluster.NodeClass{InstanceProfile: "KarpenterNodeInstanceProfile-demo"}, wantField: "spec.instanceProfile", unresolved: true},
		{name: "windows alias", nc: cluster.NodeClass{Role: "eks-node", AMISelectorTerms: []map[string]any{{"alias": "windows2022@latest"}}}, wantRole: "eks-node", wantField: "spec.role", wantKind: cluster.RoleNode, windows: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := r.NodeClassRole(&tt.nc)
			if !ok {
				t.Fatalf("NodeClassRole found no role field")
			}
			type summary struct {
				Role       string
				Field      string
				Kind       cluster.RoleKind
				Unresolved bool
				Windows    bool
			}
			gs := summary{Field: got.Field, Kind: got.Role.Kind, Unresolved: got.Unresolved != "", Windows: got.Windows}
			if !got.Role.IsZero() {
				gs.Role = got.Role.String()
			}
			want := summary{Role: tt.wantRole, Field: tt.wantField, Kind: tt.wantKind, Unresolved: tt.unresolved, Windows: tt.windows}
			if diff := cmp.Diff(gs, want); diff != "" {
				t.Errorf("NodeClassRole mismatch (-got +want):\n%s", diff)
			}
		})
	}
	if _, ok := r.NodeClassRole(&cluster.NodeClass{}); ok {
		t.Errorf("NodeClassRole of a node class without role or instanceProfile reported a role")
	}
}

// A name built around a reference ("KarpenterNodeRole-${module.eks.cluster_name}")
// is a pattern, not the role the reference names; a value that is the
// reference, or a function of it, names that role.
func TestResolvePatterns(t *testing.T) {
	r := New(&cluster.Model{})
	for _, tc := range []struct{ in, ref, name string }{
		{"KarpenterNodeRole-${module.eks.cluster_name}", "", "KarpenterNodeRole-${module.eks.cluster_name}"},
		{"${module.karpenter.node_iam_role_name}", "module.karpenter.node_iam_role_name", ""},
		{`${split("/", module.addons.karpenter.node_iam_role_arn)[1]}`, "module.addons.karpenter.node_iam_role_arn", ""},
	} {
		got := r.Resolve(tc.in)
		if got.Ref != tc.ref || got.Name != tc.name || got.String() == "" {
			t.Errorf("Resolve(%q) = ref %q name %q (%s), want ref %q name %q", tc.in, got.Ref, got.Name, got, tc.ref, tc.name)
		}
	}
}
