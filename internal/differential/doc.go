// Package differential holds the tests that compare eksdoctor's placement
// answers with the real schedulers' on generated, seeded scenarios: the
// kube-scheduler built from k8s.io/kubernetes, run against the test
// kube-apiserver, here; Karpenter's provisioning scheduler, driven in-process,
// in the test-only module under karpenter/, so that the product's go.mod does
// not grow for it.
//
// EKSDOCTOR_DIFF_SCENARIOS sets how many scenarios run (a short run by
// default) and EKSDOCTOR_DIFF_SEED the seed; a disagreement names both, and
// the scenario it names runs alone with EKSDOCTOR_DIFF_ONLY.
package differential
