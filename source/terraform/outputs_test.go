package terraform

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/eksdoctor/eksdoctor/cluster"
)

const outputsEKS = `module "vpc" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "~> 5.0"

  name               = "demo"
  cidr               = "10.0.0.0/16"
  azs                = ["eu-west-1a", "eu-west-1b"]
  private_subnets    = ["10.0.1.0/24", "10.0.2.0/24"]
  public_subnets     = ["10.0.101.0/24", "10.0.102.0/24"]
  enable_nat_gateway = true
}

module "eks" {
  source  = "terraform-aws-modules/eks/aws"
  version = "%s"

  cluster_name = "demo"
  vpc_id       = module.vpc.vpc_id
  subnet_ids   = module.vpc.private_subnets

  fargate_profiles = {
    karpenter = { selectors = [{ namespace = "karpenter" }] }
  }
}

locals {
  endpoint = module.eks.cluster_endpoint
}

resource "helm_release" "reads_outputs" {
  name  = "a"
  chart = "a"
  set {
    name  = "clusterName"
    value = module.eks.cluster_name
  }
  set {
    name  = "clusterEndpoint"
    value = local.endpoint
  }
}

resource "helm_release" "depends_on_module" {
  name       = "b"
  chart      = "b"
  depends_on = [module.eks]
}

resource "helm_release" "reads_profiles" {
  name  = "c"
  chart = "c"
  set {
    name  = "profile"
    value = module.eks.fargate_profiles["karpenter"].fargate_profile_arn
  }
}

resource "helm_release" "reads_unknown_output" {
  name  = "d"
  chart = "d"
  set {
    name  = "x"
    value = module.eks.some_output_not_modelled
  }
}

resource "helm_release" "reads_whole_module" {
  name   = "e"
  chart  = "e"
  values = [jsonencode(module.eks)]
}
`

func loadGraph(t *testing.T, files map[string]string) *cluster.Graph {
	t.Helper()
	m, err := Load(writeDir(t, files), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m.Terraform
}

func TestModuleOutputDependencies(t *testing.T) {
	t.Parallel()
	g := loadGraph(t, map[string]string{"main.tf": fmt.Sprintf(outputsEKS, "20.4.0")})
	if got, want := g.Nodes["helm_release.reads_outputs"].RefOutputs["module.eks"], []string{"cluster_endpoint", "cluster_name"}; !reflect.DeepEqual(got, want) {
		t.Errorf("outputs read (through a local too): got %v, want %v", got, want)
	}
	fargate := PartOf(g, `module.eks.module.fargate_profile["karpenter"].aws_eks_fargate_profile.this[0]`)
	if fargate != "module.eks#fargate" {
		t.Fatalf("PartOf(Fargate profile) = %q, want module.eks#fargate", fargate)
	}
	if p := PartOf(g, "module.eks.aws_eks_cluster.this[0]"); p != "module.eks#cluster" {
		t.Errorf("PartOf(cluster) = %q, want module.eks#cluster", p)
	}
	for _, c := range []struct {
		from string
		want bool
	}{
		{"helm_release.reads_outputs", false},
		{"helm_release.depends_on_module", true},
		{"helm_release.reads_profiles", true},
		{"helm_release.reads_unknown_output", true},
		{"helm_release.reads_whole_module", true},
	} {
		if got := g.Reaches(c.from, fargate); got != c.want {
			t.Errorf("%s reaches the Fargate profiles: got %v, want %v", c.from, got, c.want)
		}
		// The coarse relation still sees the whole module.
		if !g.DependsOn(c.from, "module.eks") {
			t.Errorf("%s: DependsOn(module.eks) = false", c.from)
		}
	}
	if !g.Reaches("helm_release.reads_outputs", "module.eks#cluster") {
		t.Error("cluster_name does not reach the cluster part")
	}
	// module.eks reads vpc_id and private_subnets: the VPC and subnets, not
	// the NAT gateways and routes.
	r := g.Reach("module.eks")
	if !r["module.vpc#vpc"] || !r["module.vpc#subnets"] || r["module.vpc#egress"] || r["module.vpc"] {
		t.Errorf("module.eks reaches %v; want module.vpc#vpc and #subnets only", r)
	}
	if !g.Reaches("helm_release.depends_on_module", "module.vpc#subnets") || g.Reaches("helm_release.depends_on_module", "module.vpc#egress") {
		t.Error("depends_on = [module.eks] must reach the subnets through the module's inputs, and not the NAT gateways")
	}
}

func TestModuleOutputsNotModelled(t *testing.T) {
	t.Parallel()
	// v17 outputs are not modelled: every output read is the whole module.
	g := loadGraph(t, map[string]string{"main.tf": fmt.Sprintf(outputsEKS, "17.24.0")})
	if n := g.Nodes["module.eks"]; n.Parts != nil || n.Outputs != nil {
		t.Fatalf("v17 modelled: %+v", n)
	}
	if p := PartOf(g, `module.eks.module.fargate_profile["karpenter"].aws_eks_fargate_profile.this[0]`); p != "module.eks" {
		t.Fatalf("PartOf = %q, want module.eks", p)
	}
	if !g.Reaches("helm_release.reads_outputs", "module.eks") {
		t.Error("reading an output of an unmodelled module must reach the whole module")
	}
	// An unknown vpc module version stays whole too.
	g = loadGraph(t, map[string]string{"main.tf": `module "vpc" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "1.72.0"
}

resource "aws_eks_cluster" "this" {
  name     = "x"
  role_arn = "arn"
  vpc_config {
    subnet_ids = module.vpc.private_subnets
  }
}
`})
	if g.Nodes["module.vpc"].Parts != nil || !g.Reaches("aws_eks_cluster.this", "module.vpc") {
		t.Error("terraform-aws-modules/vpc v1 must not be modelled")
	}
}

func TestLocalModuleOutputDependencies(t *testing.T) {
	t.Parallel()
	g := loadGraph(t, map[string]string{
		"main.tf": `module "net" {
  source = "./net"
  name   = "demo"
}

resource "helm_release" "a" {
  name  = "a"
  chart = "a"
  set {
    name  = "subnet"
    value = module.net.subnet_id
  }
}

resource "helm_release" "b" {
  name  = "b"
  chart = "b"
  set {
    name  = "name"
    value = module.net.name
  }
}

resource "helm_release" "c" {
  name       = "c"
  chart      = "c"
  depends_on = [module.net]
}
`,
		"net/main.tf": `variable "name" {}

resource "aws_subnet" "this" {
  vpc_id     = "vpc-1"
  cidr_block = "10.0.0.0/24"
}

resource "aws_route_table" "this" {
  vpc_id = "vpc-1"
}

output "subnet_id" {
  value = aws_subnet.this.id
}

output "name" {
  value = var.name
}
`,
	})
	for _, c := range []struct {
		from, to string
		want     bool
	}{
		{"helm_release.a", "module.net.aws_subnet.this", true},
		{"helm_release.a", "module.net.aws_route_table.this", false},
		{"helm_release.b", "module.net.aws_subnet.this", false},
		{"helm_release.b", "module.net.aws_route_table.this", false},
		{"helm_release.c", "module.net.aws_route_table.this", true},
	} {
		if got := g.Reaches(c.from, c.to); got != c.want {
			t.Errorf("Reaches(%s, %s) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}
