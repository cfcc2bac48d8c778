// Package bench generates large, realistic configurations (thousands of workloads
// with full pod specs, dozens of NodePools and node groups) and benchmarks
// eksdoctor on them. Performance is measured here, with `go test -bench` and the
// eksdoctor-bench command, never by timed unit tests.
package bench
