// Package karpenter compares eksdoctor's NodePool answers with Karpenter's own
// provisioning scheduler, driven in-process at the version eksdoctor models. It
// is a module of its own so that the product's go.mod does not grow for
// Karpenter's controllers; the tests are the whole package.
package karpenter
