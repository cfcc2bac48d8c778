// Package manifest reads Kubernetes manifests and eksctl ClusterConfig files: YAML
// (multi-document), JSON and List kinds, keeping each object's file and line and the
// lines of its fields. Decoding problems become cluster.Problems naming file and line;
// one bad document never hides the others.
//
// Interpret turns the objects of a model into typed model entries (workloads,
// NodePools, EC2NodeClasses, node groups from eksctl, aws-auth mappings). Both are
// used by the other sources too: objects embedded in Terraform or rendered from a
// Helm chart go through the same decoder.
package manifest
