// Package helm turns Helm releases and EKS add-ons into the Kubernetes objects they
// create. A chart on disk (directory or .tgz) is rendered with the Helm SDK, offline
// (no cluster, no repository, Capabilities defaulted to a recent EKS Kubernetes
// version); a release whose chart is not on disk, and every EKS add-on, is described
// from the built-in knowledge base in package catalog, with the user's values or
// configuration_values applied by the same template engine.
//
// Every object keeps where it came from: rendered objects point at the template
// inside the chart, synthesized ones at the helm_release or add-on that asked for
// them. What the package had to assume (a version, a chart it does not know) is
// recorded as a cluster.Note; a chart that does not render is a cluster.Problem.
// The package never contacts a cluster or a registry.
package helm
