// Package karpenterv1beta1 tests the live source against a cluster whose Karpenter
// CRDs are those of Karpenter v0.37: objects stored as v1beta1, and v1 served only
// through the Karpenter controller's conversion webhook. It also covers a cluster
// from which the Karpenter CRDs have been removed. The package has only tests; it
// lives apart from package live because each test package gets one API server and
// these CRDs cannot coexist with the current ones.
package karpenterv1beta1
