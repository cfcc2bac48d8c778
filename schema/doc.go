// Package schema validates Karpenter objects (NodePool, NodeClaim, EC2NodeClass,
// NodeOverlay) against the CRD schemas of real Karpenter releases, the way the API
// server would: it prunes and reports unknown fields (which the API server drops
// silently), applies defaults, and runs the OpenAPI validation, list-type checks and
// the CRDs' x-kubernetes-validations CEL rules through k8s.io/apiextensions-apiserver.
//
// It knows the v1beta1 → v1 moves (Moves) and explains each violation they cause,
// and Fix rewrites an object for the moves that are mechanical.
//
// The CRDs are embedded (crds/, with their provenance in crds/README.md) and compiled
// once, on first use. The package is pure: no I/O beyond the embedded files, no
// clock, no network. Values that are unknown before apply ("${...}" placeholders from
// Terraform) never cause a violation.
package schema
