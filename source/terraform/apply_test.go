package terraform

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/cluster"
)

const eksModule = `module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "~> 20.0"

  # Fargate profiles for the controller
  fargate_profiles = {
    karpenter = {
      selectors = [
        { namespace = "karpenter" }
      ]
    }
    kube-system = {
      selectors = [{ namespace = "kube-system" }]
    }
  }
}

resource "helm_release" "karpenter" {
  namespace = "karpenter"
  chart     = "karpenter"
  values = [
    <<-EOT
    settings:
      clusterName: ${module.eks.cluster_name}
    EOT
  ]

  lifecycle {
    ignore_changes = [repository_password]
  }
}
`

func TestApplyHCL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		edit cluster.Edit
		want string
	}{
		{
			name: "replace an argument",
			in:   eksModule,
			edit: cluster.Edit{Line: 18, Text: `namespace = "kube-system"`},
			want: strings.Replace(eksModule, `namespace = "karpenter"
  chart`, `namespace = "kube-system"
  chart`, 1),
		},
		{
			name: "add arguments at the end of the block",
			in:   eksModule,
			edit: cluster.Edit{Line: 18, Text: "version = \"1.0.1\"\ndepends_on = [module.eks]\n"},
			want: strings.Replace(eksModule, `    ignore_changes = [repository_password]
  }
}`, `    ignore_changes = [repository_password]
  }
  version    = "1.0.1"
  depends_on = [module.eks]
}`, 1),
		},
		{
			name: "merge one entry of a map",
			in:   eksModule,
			edit: cluster.Edit{Line: 1, Text: `fargate_profiles = {
  karpenter = {
    selectors = [
      { namespace = "karpenter" },
      { namespace = "kube-system", labels = { "app.kubernetes.io/name" = "karpenter" } },
    ]
  }
}`},
			want: strings.Replace(eksModule, `      selectors = [
        { namespace = "karpenter" }
      ]`, `      selectors = [
        { namespace = "karpenter" },
        { namespace = "kube-system", labels = { "app.kubernetes.io/name" = "karpenter" } },
      ]`, 1),
		},
		{
			name: "add a map entry",
			in:   eksModule,
			edit: cluster.Edit{Line: 1, Text: `fargate_profiles = { karpenter-2 = { selectors = [{ namespace = "jobs" }] } }`},
			want: strings.Replace(eksModule, `      selectors = [{ namespace = "kube-system" }]
    }
  }`, `      selectors = [{ namespace = "kube-system" }]
    }
    karpenter-2 = { selectors = [{ namespace = "jobs" }] }
  }`, 1),
		},
		{
			name: "remove an argument and a map entry",
			in:   eksModule,
			edit: cluster.Edit{Line: 1, Text: "version = null\nfargate_profiles = { kube-system = null }\n"},
			want: strings.Replace(strings.Replace(eksModule, "  source  = \"terraform-aws-modules/eks/aws\"\n  version = \"~> 20.0\"\n", "  source  = \"terraform-aws-modules/eks/aws\"\n", 1), `    kube-system = {
      selectors = [{ namespace = "kube-system" }]
    }
`, "", 1),
		},
		{
			name: "append a nested block",
			in:   eksModule,
			edit: cluster.Edit{Line: 18, Text: "set {\n  name  = \"podLabels.team\"\n  value = \"platform\"\n}\n"},
			want: strings.Replace(eksModule, `    ignore_changes = [repository_password]
  }
}`, `    ignore_changes = [repository_password]
  }
  set {
    name  = "podLabels.team"
    value = "platform"
  }
}`, 1),
		},
		{
			name: "edit a nested block",
			in:   eksModule,
			edit: cluster.Edit{Line: 28, Text: `ignore_changes = [repository_password, values]`},
			want: strings.Replace(eksModule, `ignore_changes = [repository_password]`, `ignore_changes = [repository_password, values]`, 1),
		},
		{
			name: "replace a heredoc",
			in:   eksModule,
			edit: cluster.Edit{Line: 18, Text: "values = [\n  <<-EOT\n  settings:\n    clusterName: demo\n  EOT\n]\n"},
			want: strings.Replace(eksModule, "  values = [\n    <<-EOT\n    settings:\n      clusterName: ${module.eks.cluster_name}\n    EOT\n  ]", "  values = [\n    <<-EOT\n    settings:\n      clusterName: demo\n    EOT\n  ]", 1),
		},
		{
			name: "append a resource",
			in:   eksModule,
			edit: cluster.Edit{Text: "resource \"aws_eks_access_entry\" \"node\" {\n  cluster_name  = module.eks.cluster_name\n  principal_arn = module.karpenter.node_iam_role_arn\n  type          = \"EC2_LINUX\"\n}\n"},
			want: eksModule + "\nresource \"aws_eks_access_entry\" \"node\" {\n  cluster_name  = module.eks.cluster_name\n  principal_arn = module.karpenter.node_iam_role_arn\n  type          = \"EC2_LINUX\"\n}\n",
		},
		{
			name: "set inside a map entry",
			in:   eksModule,
			edit: cluster.Edit{Line: 7, Text: "name = \"karpenter\"\nselectors = [{ namespace = \"kube-system\" }]\n"},
			want: strings.Replace(eksModule, `      selectors = [
        { namespace = "karpenter" }
      ]
    }`, `      selectors = [{ namespace = "kube-system" }]
      name = "karpenter"
    }`, 1),
		},
		{
			name: "one-line block",
			in:   "resource \"aws_eks_access_entry\" \"node\" {}\n",
			edit: cluster.Edit{Line: 1, Text: `type = "EC2_LINUX"`},
			want: "resource \"aws_eks_access_entry\" \"node\" {\n  type = \"EC2_LINUX\"\n}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.edit.Format = cluster.FormatHCL
			got, err := ApplyHCL([]byte(tt.in), tt.edit)
			if err != nil {
				t.Fatalf("applyHCL: %v", err)
			}
			if diff := cmp.Diff(string(got), tt.want); diff != "" {
				t.Errorf("applyHCL mismatch (-got +want):\n%s", diff)
			}
		})
	}
}

func TestApplyHCLErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		edit cluster.Edit
		want string
	}{
		{name: "no block at the line", in: eksModule, edit: cluster.Edit{Line: 3, Text: `x = 1`}, want: "no block or map entry starts at line 3"},
		{name: "block into a map entry", in: eksModule, edit: cluster.Edit{Line: 7, Text: "set {\n}\n"}, want: "a map entry takes no blocks"},
		{name: "edit is not HCL", in: eksModule, edit: cluster.Edit{Line: 1, Text: `x = = 1`}, want: "the edit is not HCL"},
		{name: "file is not HCL", in: "module {", edit: cluster.Edit{Line: 1, Text: `x = 1`}, want: "the file does not parse"},
		{name: "appended text is not HCL", in: eksModule, edit: cluster.Edit{Text: `resource "x" {`}, want: "the edited file does not parse"},
		{name: "computed object key", in: eksModule, edit: cluster.Edit{Line: 1, Text: `fargate_profiles = { (local.k) = {} }`}, want: "object keys in an edit must be names or literal strings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ApplyHCL([]byte(tt.in), tt.edit)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("applyHCL error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestApplyHelmValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		edit cluster.Edit
		want string
	}{
		{
			name: "append a document to the values list",
			in:   eksModule,
			edit: cluster.Edit{Line: 18, Text: "tolerations:\n- key: CriticalAddonsOnly\n  operator: Exists\n"},
			want: strings.Replace(eksModule, "    EOT\n  ]\n", "    EOT\n    , <<-EOT\n    tolerations:\n    - key: CriticalAddonsOnly\n      operator: Exists\n    EOT\n  ]\n", 1),
		},
		{
			name: "add a values list",
			in:   "resource \"helm_release\" \"x\" {\n  chart = \"karpenter\"\n}\n",
			edit: cluster.Edit{Line: 1, Text: "replicas: 1\n"},
			want: "resource \"helm_release\" \"x\" {\n  chart = \"karpenter\"\n  values = [\n    <<-EOT\n    replicas: 1\n    EOT\n  ]\n}\n",
		},
		{
			name: "values from an expression",
			in:   "resource \"helm_release\" \"x\" {\n  values = local.values\n}\n",
			edit: cluster.Edit{Line: 1, Text: "replicas: 1\n"},
			want: "resource \"helm_release\" \"x\" {\n  values = concat(local.values, [\n    <<-EOT\n    replicas: 1\n    EOT\n  ])\n}\n",
		},
		{
			name: "merge into a values file",
			in:   "settings:\n  clusterName: demo\nreplicas: 2\n",
			edit: cluster.Edit{File: "values.yaml", Line: 1, Text: "settings:\n  interruptionQueue: demo\nreplicas: null\n"},
			want: "settings:\n  clusterName: demo\n  interruptionQueue: demo\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.edit.Format = cluster.FormatValues
			got, err := ApplyHelmValues([]byte(tt.in), tt.edit)
			if err != nil {
				t.Fatalf("applyHelmValues: %v", err)
			}
			if diff := cmp.Diff(string(got), tt.want); diff != "" {
				t.Errorf("applyHelmValues mismatch (-got +want):\n%s\ngot:\n%s", diff, got)
			}
		})
	}
}
