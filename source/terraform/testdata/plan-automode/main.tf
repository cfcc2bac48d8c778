# EKS Auto Mode on a raw aws_eks_cluster, with its plan beside it (plan.json,
# written for the test in the shape terraform show -json gives).
resource "aws_eks_cluster" "this" {
  name                          = "auto"
  version                       = "1.33"
  role_arn                      = "arn:aws:iam::111122223333:role/auto-cluster"
  bootstrap_self_managed_addons = false

  access_config {
    authentication_mode = "API"
  }

  compute_config {
    enabled       = true
    node_pools    = ["system", "general-purpose"]
    node_role_arn = "arn:aws:iam::111122223333:role/auto-node"
  }

  kubernetes_network_config {
    elastic_load_balancing {
      enabled = true
    }
  }

  storage_config {
    block_storage {
      enabled = false
    }
  }

  vpc_config {
    subnet_ids = ["subnet-0123456789abcdef0"]
  }
}
