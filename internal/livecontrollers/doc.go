// Package livecontrollers proves eksdoctor's live diagnosis against the
// controllers that produce the states it diagnoses. Its tests (build tag
// livecontrollers, run as a step of their own by hack/test.sh) start a cluster
// with kube-controller-manager, kube-scheduler, Karpenter's controllers with its
// kwok cloud provider and the kwok node agent (testenv.StartCluster), let the
// controllers reproduce each failure family, record what they did (events,
// conditions, taints, evictions, bindings, with times), and compare it with what
// `eksdoctor cluster`, a snapshot of the same moment and `eksdoctor serve` report.
//
// The package has no code outside its tests.
package livecontrollers
