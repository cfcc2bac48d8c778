// Package recall measures what eksdoctor finds of the failures users reported in
// public: testdata/recall holds one case per report — the configuration as
// reported, reduced and written anew, the link, the symptom the user saw and the
// findings eksdoctor must give — and the test runs `eksdoctor check` on each,
// as a user would, and counts what it finds.
//
// It holds tests only.
package recall
