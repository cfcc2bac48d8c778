// Package write turns the changes fixes propose into edits in the user's own
// format. A check says what changes in the model's terms — this object gets
// this merge patch, this release these values, this Fargate profile this
// selector, this resource must depend on that one, this role this aws-auth
// mapping or access entry, this module input key is renamed, this finalizer is
// removed — and write chooses the format from the declaration the loader
// attached to the entry (cluster.Decl, Object.Via and Manager,
// HelmRelease.Input and Decl, the origin file): a YAML merge patch for a
// manifest or an eksctl ClusterConfig, HCL for a Terraform resource, module
// input or embedded manifest, Helm values for a release, a kubectl command for
// a live object. The writers of each format stay in the source package that
// reads it (source/manifest, source/terraform, source/live); write only
// dispatches to them. Apply applies an edit of any format to a file's content,
// through the same source packages.
//
// A check never names a format or a source package: a new check with a fix
// touches its own file in lint, its line in the registry, its example and its
// fixtures, and nothing in lint for the format. A format new to eksdoctor is
// added here (and in the source package that reads it), for every check at
// once.
package write
