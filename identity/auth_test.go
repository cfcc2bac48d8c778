package identity

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/cluster"
)

const (
	nodeARN    = "arn:aws:iam::111122223333:role/KarpenterNodeRole-demo"
	fargateARN = "arn:aws:iam::111122223333:role/fargate-pods"
)

func nodeMapping(arn string) cluster.RoleMapping {
	return cluster.RoleMapping{RoleARN: arn, Username: NodeUsername, Groups: []string{"system:bootstrappers", "system:nodes"}}
}

func userAwsAuth(roles ...cluster.RoleMapping) *cluster.AwsAuth {
	return &cluster.AwsAuth{Roles: roles, Complete: true, Managed: "user"}
}

// authModel is a cluster the configuration creates, with the given mode.
func authModel(mode string, auth *cluster.AwsAuth, entries ...cluster.AccessEntry) *cluster.Model {
	return &cluster.Model{
		Cluster:  cluster.EKSCluster{Name: "demo", Defined: true},
		Identity: cluster.Identity{AuthMode: mode, AwsAuth: auth, AccessEntries: entries},
	}
}

func TestAuthorize(t *testing.T) {
	type result struct {
		Outcome  Outcome
		AwsAuth  State
		Access   State
		Problems []string
	}
	tests := []struct {
		name    string
		m       *cluster.Model
		role    string
		purpose Purpose
		want    result
	}{
		{
			name: "config map with a correct entry",
			m:    authModel(cluster.AuthConfigMap, userAwsAuth(nodeMapping(nodeARN))),
			role: "KarpenterNodeRole-demo", purpose: LinuxNode,
			want: result{Outcome: Authorized, AwsAuth: Valid, Access: Missing},
		},
		{
			name: "rolearn with a path",
			m:    authModel(cluster.AuthConfigMap, userAwsAuth(nodeMapping("arn:aws:iam::111122223333:role/eks/KarpenterNodeRole-demo"))),
			role: "KarpenterNodeRole-demo", purpose: LinuxNode,
			want: result{Outcome: Unauthorized, AwsAuth: Invalid, Access: Missing, Problems: []string{
				"its rolearn carries the IAM path /eks/; aws-auth matches the ARN without a path (arn:...:role/KarpenterNodeRole-demo)",
			}},
		},
		{
			name: "wrong username and a missing group",
			m: authModel(cluster.AuthConfigMap, userAwsAuth(cluster.RoleMapping{
				RoleARN: nodeARN, Username: "system:node:{{SessionName}}", Groups: []string{"system:nodes"},
			})),
			role: "KarpenterNodeRole-demo", purpose: LinuxNode,
			want: result{Outcome: Unauthorized, AwsAuth: Invalid, Access: Missing, Problems: []string{
				"username is system:node:{{SessionName}}, not system:node:{{EC2PrivateDNSName}}",
				"groups lack system:bootstrappers",
			}},
		},
		{
			name: "API mode ignores aws-auth",
			m:    authModel(cluster.AuthAPI, userAwsAuth(nodeMapping(nodeARN))),
			role: "KarpenterNodeRole-demo", purpose: LinuxNode,
			want: result{Outcome: Unauthorized, AwsAuth: Valid, Access: Missing},
		},
		{
			name: "omitted access entry type is STANDARD",
			m:    authModel(cluster.AuthAPI, nil, cluster.AccessEntry{PrincipalARN: nodeARN, KubernetesGroups: []string{"system:nodes"}}),
			role: "KarpenterNodeRole-demo", purpose: LinuxNode,
			want: result{Outcome: Unauthorized, AwsAuth: Missing, Access: Invalid, Problems: []string{
				"type is omitted, and EKS defaults it to STANDARD; a STANDARD entry makes the role a user, never a node (Linux node needs type EC2_LINUX); EKS also rejects its kubernetes group system:nodes (group names cannot start with system:)",
			}},
		},
		{
			name: "an access entry wins over a correct aws-auth entry",
			m:    authModel(cluster.AuthAPIAndConfigMap, userAwsAuth(nodeMapping(nodeARN)), cluster.AccessEntry{PrincipalARN: nodeARN, Type: "STANDARD"}),
			role: "KarpenterNodeRole-demo", purpose: LinuxNode,
			want: result{Outcome: Unauthorized, AwsAuth: Valid, Access: Invalid, Problems: []string{
				"type is STANDARD; a STANDARD entry makes the role a user, never a node (Linux node needs type EC2_LINUX)",
			}},
		},
		{
			name: "both modes read aws-auth when there is no access entry",
			m:    authModel(cluster.AuthAPIAndConfigMap, userAwsAuth(nodeMapping(nodeARN))),
			role: "KarpenterNodeRole-demo", purpose: LinuxNode,
			want: result{Outcome: Authorized, AwsAuth: Valid, Access: Missing},
		},
		{
			name: "EC2_LINUX entry in API mode",
			m:    authModel(cluster.AuthAPI, nil, cluster.AccessEntry{PrincipalARN: "${module.karpenter.node_iam_role_arn}", Type: "EC2_LINUX"}),
			role: "${module.karpenter.node_iam_role_name}", purpose: LinuxNode,
			want: result{Outcome: Authorized, AwsAuth: Missing, Access: Valid},
		},
		{
			name: "unknown mode, nothing anywhere",
			m:    authModel("", nil),
			role: "KarpenterNodeRole-demo", purpose: LinuxNode,
			want: result{Outcome: Unauthorized, AwsAuth: Missing, Access: Missing},
		},
		{
			name: "unknown mode, aws-auth only",
			m:    authModel("${var.authentication_mode}", userAwsAuth(nodeMapping(nodeARN))),
			role: "KarpenterNodeRole-demo", purpose: LinuxNode,
			want: result{Outcome: Unverified, AwsAuth: Valid, Access: Missing},
		},
		{
			name: "cluster created elsewhere",
			m:    &cluster.Model{},
			role: "KarpenterNodeRole-demo", purpose: LinuxNode,
			want: result{Outcome: Unverified, AwsAuth: Undetermined, Access: Undetermined},
		},
		{
			name: "eksctl cluster that declares no identity at all",
			m: func() *cluster.Model {
				m := authModel(cluster.AuthAPIAndConfigMap, nil)
				m.Cluster.Origin = cluster.Origin{File: "cluster.yaml", Line: 1}
				m.Objects = []*cluster.Object{{APIVersion: "eksctl.io/v1alpha5", Kind: "ClusterConfig", Name: "demo", Origin: cluster.Origin{File: "cluster.yaml", Line: 1}}}
				return m
			}(),
			role: "KarpenterNodeRole-demo", purpose: LinuxNode,
			want: result{Outcome: Unverified, AwsAuth: Undetermined, Access: Undetermined},
		},
		{
			name: "eksctl cluster that declares other access entries",
			m: func() *cluster.Model {
				m := authModel(cluster.AuthAPIAndConfigMap, nil, cluster.AccessEntry{PrincipalARN: "arn:aws:iam::111122223333:role/admins", Address: "accessConfig.accessEntries.0"})
				m.Cluster.Origin = cluster.Origin{File: "cluster.yaml", Line: 1}
				m.Objects = []*cluster.Object{{APIVersion: "eksctl.io/v1alpha5", Kind: "ClusterConfig", Name: "demo", Origin: cluster.Origin{File: "cluster.yaml", Line: 1}}}
				return m
			}(),
			role: "KarpenterNodeRole-demo", purpose: LinuxNode,
			want: result{Outcome: Unauthorized, AwsAuth: Missing, Access: Missing},
		},
		{
			name: "the Terraform caller's entry is not the node role's",
			m:    authModel(cluster.AuthAPI, nil, cluster.AccessEntry{PrincipalARN: "${module.eks.data.aws_iam_session_context.current[0].issuer_arn}", Type: "STANDARD"}),
			role: "KarpenterNodeRole-demo", purpose: LinuxNode,
			want: result{Outcome: Unauthorized, AwsAuth: Missing, Access: Missing},
		},
		{
			name: "access entry whose principal is not known",
			m:    authModel(cluster.AuthAPI, nil, cluster.AccessEntry{PrincipalARN: "${data.aws_iam_role.node.arn}", Type: "EC2_LINUX"}),
			role: "KarpenterNodeRole-demo", purpose: LinuxNode,
			want: result{Outcome: Unverified, AwsAuth: Missing, Access: Undetermined},
		},
		{
			name: "managed node group role reused",
			m: func() *cluster.Model {
				m := authModel(cluster.AuthAPI, nil)
				m.NodeGroups = []*cluster.NodeGroup{{Name: "system", Managed: true, NodeRole: nodeARN}}
				return m
			}(),
			role: "KarpenterNodeRole-demo", purpose: LinuxNode,
			want: result{Outcome: Authorized, AwsAuth: Valid, Access: Valid},
		},
		{
			name: "Linux entry for Windows nodes",
			m:    authModel(cluster.AuthAPI, nil, cluster.AccessEntry{PrincipalARN: nodeARN, Type: "EC2_LINUX"}),
			role: "KarpenterNodeRole-demo", purpose: WindowsNode,
			want: result{Outcome: Unauthorized, AwsAuth: Missing, Access: Invalid, Problems: []string{
				"type is EC2_LINUX; a Windows node needs EC2_WINDOWS",
			}},
		},
		{
			name: "Windows nodes need the kube-proxy group",
			m:    authModel(cluster.AuthConfigMap, userAwsAuth(nodeMapping(nodeARN))),
			role: "KarpenterNodeRole-demo", purpose: WindowsNode,
			want: result{Outcome: Unauthorized, AwsAuth: Invalid, Access: Missing, Problems: []string{"groups lack eks:kube-proxy-windows"}},
		},
		{
			name: "unknown username",
			m: authModel(cluster.AuthConfigMap, userAwsAuth(cluster.RoleMapping{
				RoleARN: nodeARN, Username: "${var.username}", Groups: []string{"system:bootstrappers", "system:nodes"},
			})),
			role: "KarpenterNodeRole-demo", purpose: LinuxNode,
			want: result{Outcome: Unverified, AwsAuth: Undetermined, Access: Missing},
		},
		{
			name: "Fargate role missing from a replaced aws-auth",
			m:    fargateModel(cluster.AuthConfigMap, userAwsAuth(nodeMapping(nodeARN))),
			role: fargateARN, purpose: FargatePods,
			// EKS's own FARGATE_LINUX entry exists, but CONFIG_MAP does not read it.
			want: result{Outcome: Unauthorized, AwsAuth: Missing, Access: Valid},
		},
		{
			name: "Fargate role in API_AND_CONFIG_MAP gets its access entry from EKS",
			m:    fargateModel(cluster.AuthAPIAndConfigMap, userAwsAuth(nodeMapping(nodeARN))),
			role: fargateARN, purpose: FargatePods,
			want: result{Outcome: Authorized, AwsAuth: Missing, Access: Valid},
		},
		{
			name: "Fargate role with eksctl mappings added to the EKS ConfigMap",
			m: fargateModel(cluster.AuthConfigMap, &cluster.AwsAuth{
				Roles: []cluster.RoleMapping{nodeMapping(nodeARN)}, Complete: true, Managed: "user", Address: "iamIdentityMappings",
			}),
			role: fargateARN, purpose: FargatePods,
			want: result{Outcome: Authorized, AwsAuth: Valid, Access: Valid},
		},
		{
			name: "Fargate mapping without node-proxier",
			m: fargateModel(cluster.AuthConfigMap, userAwsAuth(cluster.RoleMapping{
				RoleARN: fargateARN, Username: FargateUsername, Groups: []string{"system:bootstrappers", "system:nodes"},
			})),
			role: fargateARN, purpose: FargatePods,
			want: result{Outcome: Unauthorized, AwsAuth: Invalid, Access: Valid, Problems: []string{"groups lack system:node-proxier"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New(tt.m)
			a := r.Authorize(r.Resolve(tt.role), tt.purpose)
			got := result{Outcome: a.Outcome, AwsAuth: a.AwsAuth.State, Access: a.Access.State, Problems: a.Problems()}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("Authorize mismatch (-got +want):\n%s\nexplanation:\n%v", diff, a.Explain())
			}
		})
	}
}

func fargateModel(mode string, auth *cluster.AwsAuth) *cluster.Model {
	m := authModel(mode, auth)
	m.FargateProfiles = []*cluster.FargateProfile{{Name: "karpenter", PodExecutionRole: fargateARN, Selectors: []cluster.FargateSelector{{Namespace: "karpenter"}}}}
	return m
}

func TestAuthorizeExplains(t *testing.T) {
	m := authModel(cluster.AuthAPI, userAwsAuth(nodeMapping(nodeARN)))
	m.Identity.AwsAuth.Roles[0].Origin = cluster.Origin{File: "aws-auth.yaml", Line: 7}
	r := New(m)
	got := r.Authorize(r.Resolve("KarpenterNodeRole-demo"), LinuxNode).Explain()
	want := []string{
		"authentication mode API.",
		"Looked for an access entry of type EC2_LINUX for KarpenterNodeRole-demo.",
		"No access entry for it.",
		"Found aws-auth entry {rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-demo, username: system:node:{{EC2PrivateDNSName}}, groups: [system:bootstrappers, system:nodes]} at aws-auth.yaml:7, but authentication mode API ignores aws-auth.",
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("Explain mismatch (-got +want):\n%s", diff)
	}
}
