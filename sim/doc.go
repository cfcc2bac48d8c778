// Package sim answers "where can this pod run, and why not?" for a cluster model,
// phase by phase, the way kube-scheduler and Karpenter would: taints against
// tolerations, node selectors and required node affinity, resource requests against
// allocatable (with DaemonSet overhead), Karpenter NodePool compatibility against the
// instance-type catalog and NodePool limits, and Fargate profile selection.
//
// It is pure: no I/O, no clock, no globals it mutates. Results are deterministic.
// Rules come from k8s.io/component-helpers (tolerations, node affinity, pod requests)
// and sigs.k8s.io/karpenter/pkg/scheduling (requirement algebra) where those libraries
// have them.
package sim
