// Package testenv runs a real kube-apiserver and etcd for eksdoctor's integration
// tests, through controller-runtime's envtest, with the Karpenter CRDs installed.
// The CRDs are Karpenter's own, read from the reference corpus shared/corpus beside
// the repository (README.md names them); Start fails when it is not found.
//
// The binaries come from hack/testbin.sh, which builds them from Go source and caches
// them (there is no binary download on the machines the project is tested on); Start
// runs the script when they are missing, so a fresh `go test ./...` works, only slowly
// the first time. KUBEBUILDER_ASSETS, when set, names a directory that already holds
// kube-apiserver and etcd and is used as is.
//
// One API server serves a whole test package: Main starts it from TestMain, shares it
// with every test and stops it at the end, also when the package is interrupted or is
// about to hit its -timeout, so no process outlives the test binary. Tests get an
// admin rest.Config, client-certificate users, and Grant, which binds a user to the
// roles of an RBAC manifest (optionally with some resources removed, to make them
// Forbidden).
//
// The package is for tests only; nothing in the product imports it.
package testenv
