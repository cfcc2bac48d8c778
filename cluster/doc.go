// Package cluster is eksdoctor's in-memory model of an EKS cluster and everything
// around it: Kubernetes objects and the workloads they define, the capacity that can
// run them (node groups, Fargate profiles, Karpenter NodePools, Nodes), the identities
// that let nodes join, the Helm releases and EKS add-ons that install components, and
// the Terraform dependency graph that decides the order of apply and destroy.
//
// Loaders (package source/...) build partial models; Merge joins them. The model is
// plain data: it does no I/O and knows nothing about checks. Values a loader could not
// resolve statically are kept as unknown (see Unknown) rather than guessed.
package cluster
