// Package schema validates Karpenter objects (NodePool, NodeClaim, EC2NodeClass,
// NodeOverlay) against the CRD schemas of real Karpenter releases, the way the API
// server does on create, with k8s.io/apiextensions-apiserver: it prunes unknown fields
// and reports them (the API server drops them silently for most clients), drops
// nulls, applies defaults, then runs the OpenAPI schema validation, the list-type
// checks and the CRDs' x-kubernetes-validations CEL rules.
//
// Validate judges an object by its own apiVersion (v1beta1 by Karpenter v0.37.7, v1 by
// the current CRDs); ValidateFor judges it by one release's CRDs (ReleaseFor maps a
// chart version to one), which is where "v1beta1 is not served by Karpenter 1.1"
// comes from. Each Violation carries the API server's message, a Kind, and, for the
// v1beta1 → v1 changes, the Move it comes from and a hint with the fix. Moves is that
// table as data; Fix rewrites an object for the moves that need no decision and
// returns what belongs on the EC2NodeClass as a merge patch (ApplyMergePatch).
//
// The CRDs are embedded (crds/, provenance in crds/README.md), parsed on first use and
// each served version compiled on first validation. The package is pure: it reads
// nothing but its embedded files, and values unknown before apply ("${...}"
// placeholders from Terraform) never cause a violation.
package schema
