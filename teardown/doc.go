// Package teardown works out the order in which a configuration must be destroyed so that
// the Karpenter controller is still running while its finalizers are processed:
// karpenter.sh/termination on NodeClaims and Nodes, karpenter.k8s.aws/termination on
// EC2NodeClasses. Those finalizers are removed only by a running controller; a
// controller uninstalled first (or left without permissions, or without the node it
// runs on) leaves them stuck and the instances running outside any state.
//
// The plan is derived from the model alone: the Terraform dependency graph when the
// configuration is Terraform (terraform destroy removes a resource before everything
// it depends on) with what the Terraform loader knows of each resource
// (cluster.Destroy) and of its addresses (cluster.Addressing), the tool that manages
// each Kubernetes object, where the simulator places the Karpenter controller, and,
// for live models, the NodeClaims and Nodes still present. The plan says what must
// change in model terms (Change); the checks write the edits.
//
// It is pure: no I/O, no clock. It must not read module sources, resource
// arguments or address strings (source/terraform says what they mean, in
// cluster.Destroy and cluster.Addressing), nor write HCL (lint/teardown.go
// writes the changes through package write); its messages name the
// arguments a user would change.
package teardown
