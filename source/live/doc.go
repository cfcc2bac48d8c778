// Package live reads a running cluster into eksdoctor's model, and writes and reads
// snapshots of what it read.
//
// Load connects the way kubectl does (--kubeconfig, --context, KUBECONFIG, then the
// in-cluster service account) and lists only what the checks need: workloads and
// their pods (with status), nodes, FailedScheduling, FailedAttachVolume (Multi-Attach)
// and NodeClaim events, storage objects, the kube-system/aws-auth ConfigMap
// (fetched by name) and the Karpenter resources at whichever of v1 and v1beta1 the
// API server serves. Every object becomes a cluster.Object; typed workloads, pods
// and nodes are derived from the objects elsewhere, so a snapshot and a live read
// go through the same code.
//
// The package must never change the cluster and never read Secrets: it only issues
// GET requests (discovery, list, and one get), and deploy/rbac.yaml is the exact set
// of permissions it uses. Lists are paginated, each request has a deadline, transient
// failures are retried with backoff, client-side rate limits apply, and a resource
// the caller may not read (Forbidden) or the server does not serve is recorded in
// Model.Live.Skipped while the rest is read.
package live
