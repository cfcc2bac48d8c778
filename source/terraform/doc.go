// Package terraform reads Terraform configurations, without a terraform binary,
// providers or network, into a partial cluster model: node groups, Fargate profiles,
// EKS add-ons, Helm releases, Kubernetes objects embedded in kubectl_manifest and
// kubernetes_manifest, identities (IAM roles, access entries, aws-auth), the Karpenter
// installation, and the resource dependency graph. It also reads the JSON form of a
// plan (terraform show -json).
//
// Both syntaxes are read: native (.tf) and JSON (.tf.json, as CDK for Terraform writes
// it, rewritten into native syntax on the same lines). HCL is evaluated here: variables (defaults and tfvars), locals, the common
// functions, templates and heredocs, for expressions, conditionals and splats. Values
// that exist only after apply (module outputs, data sources, resource attributes, an
// unknown count or for_each) stay unknown; in the model they read as
// cluster.Unknown("<expression>"), also when embedded in a larger string, so that
// checks can follow references ("${module.karpenter.node_iam_role_name}") without the
// loader guessing. Evaluation is bounded in steps and depth and never fails the load:
// what cannot be evaluated is unknown, with a note saying why.
//
// Local modules are read recursively with their inputs. The
// terraform-aws-modules/eks module and its sub-modules (karpenter, fargate-profile,
// eks-managed-node-group, self-managed-node-group, aws-auth) are not read: the package
// knows, for v19, v20 and v21, which resources they create for their inputs and models
// those resources at the addresses the module gives them
// ("module.eks.module.eks_managed_node_group[\"x\"].aws_eks_node_group.this[0]"), the
// same addresses a plan shows. Any other remote module is opaque.
//
// Model entries carry the address of the resource instance that creates them. Graph
// nodes are keyed by configuration address (no instance keys); Addresses.Node maps an
// entry's address to its node (the resource, or the module call that creates it).
//
// The package does I/O only to read the configuration, tfvars and the files the
// configuration reads; it builds no workloads or NodePools (package manifest
// interprets the objects) and reports no findings.
package terraform
