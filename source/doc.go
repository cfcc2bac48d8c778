// Package source finds and reads every input eksdoctor is given — manifests, eksctl
// ClusterConfigs, Terraform directories and plan JSON, Helm charts, live-cluster
// snapshots — and builds one cluster model from them. The packages under it each
// read one kind of input; this package decides which one a path is, merges their
// partial models, expands Helm releases and add-ons into objects, and interprets the
// objects into workloads and capacity.
package source
