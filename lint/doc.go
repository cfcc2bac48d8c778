// Package lint holds eksdoctor's checks. A Check is a value with an ID, a title, a
// default severity, documentation with a before/after example, and a Run function
// that reads the model and the simulation and reports Findings. Checks are listed in
// one explicit sorted registry (registry.go); there is no self-registration.
//
// A fix says what changes in the model's terms through package write, which
// picks the format from the entry's declaration: checks name no format and
// import no source package, and ask the model (cluster.Graph) what they need
// to know of Terraform addresses.
//
// Checks are pure: they do no I/O and report deterministically. IDs are part of the
// product's contract (JSON output, SARIF rules, the ignore annotation) and never
// change.
package lint
