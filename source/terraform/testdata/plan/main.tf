module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "~> 20.24"

  cluster_name        = "demo"
  cluster_version     = "1.30"
  authentication_mode = "API"

  eks_managed_node_groups = {
    karpenter = {
      instance_types = ["m5.large"]
      min_size       = 2
      max_size       = 3
      desired_size   = 2
      labels         = { "karpenter.sh/controller" = "true" }
      taints = {
        karpenter = { key = "karpenter.sh/controller", value = "true", effect = "NO_SCHEDULE" }
      }
    }
  }

  fargate_profiles = {
    kube-system = {
      selectors = [{ namespace = "kube-system" }]
    }
  }

  cluster_addons = {
    coredns = {
      configuration_values = jsonencode({
        tolerations = [{ key = "karpenter.sh/controller", operator = "Exists" }]
      })
    }
  }
}

module "karpenter" {
  source  = "terraform-aws-modules/eks/aws//modules/karpenter"
  version = "~> 20.24"

  cluster_name                    = module.eks.cluster_name
  node_iam_role_use_name_prefix   = false
  node_iam_role_name              = "demo-karpenter"
  create_pod_identity_association = true
}

resource "helm_release" "karpenter" {
  name       = "karpenter"
  namespace  = "kube-system"
  repository = "oci://public.ecr.aws/karpenter"
  chart      = "karpenter"
  version    = "1.0.6"
  wait       = false
  values = [<<-EOT
    settings:
      clusterName: demo
    tolerations:
      - key: karpenter.sh/controller
        operator: Exists
    EOT
  ]
  depends_on = [module.eks, module.karpenter]
}

resource "kubectl_manifest" "node_class" {
  yaml_body = <<-YAML
    apiVersion: karpenter.k8s.aws/v1
    kind: EC2NodeClass
    metadata:
      name: default
    spec:
      role: demo-karpenter
      amiSelectorTerms:
        - alias: al2023@latest
  YAML
  wait       = true
  depends_on = [helm_release.karpenter]
}

resource "aws_eks_access_entry" "admin" {
  cluster_name  = "demo"
  principal_arn = "arn:aws:iam::111122223333:role/admin"
  type          = "STANDARD"
}
