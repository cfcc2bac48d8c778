// Package identity answers who a node is in an EKS cluster: which IAM role an
// EC2NodeClass or a Fargate profile makes its nodes assume, what kind of role that
// is (node, controller, Fargate pod execution role), and whether the cluster's
// authentication mode lets that role in as a node through an aws-auth mapping or
// an access entry.
//
// Role references are compared the way IAM and EKS compare them: by name taken
// from the ARN (the IAM path and partition are not part of the name), case-
// insensitively, and with values unknown before apply kept as such. Two unknown
// values are the same role when they come from the same expression; an unknown
// and a known value are "maybe" the same unless the known value cannot match the
// unknown's pattern. Nothing here ever turns "maybe" into "no".
//
// The package is pure: a model in, answers out. It does no I/O and reports no
// findings; package lint turns its answers into findings and fixes.
package identity
