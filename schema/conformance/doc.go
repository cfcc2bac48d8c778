// Package conformance holds no product code: its tests check package schema against a
// real kube-apiserver (internal/testenv) with the same Karpenter CRDs installed. Every
// fixture is created there with a server-side dry run, and the fields the API server
// drops (its unknown-field warnings) and rejects (its error causes, with their
// messages) must be exactly what schema.Validate reports. Fix's output must be
// accepted outright.
package conformance
