// Package karpenterv1beta1 compares eksdoctor's answers for karpenter.sh/v1beta1
// NodePools (Karpenter v0.32 to v0.37) with Karpenter v0.37's own provisioning
// scheduler, driven in-process. eksdoctor itself builds against Karpenter v1's
// packages and one Go build holds one version of a module, so this module does
// not import eksdoctor: it builds the eksdoctor command from the repository and
// reads its `explain -o json` answer for the generated files. The tests are the
// whole package.
package karpenterv1beta1
