package cluster

// Edit formats.
const (
	FormatYAML   = "yaml"   // a YAML merge patch for the object that starts at File:Line
	FormatHCL    = "hcl"    // HCL to set in the block at File:Line
	FormatValues = "values" // Helm values to merge into the release at File:Line
	FormatShell  = "shell"  // a command to run
)

// Edit is one change: Text, in Format, applied at File:Line. For FormatYAML the
// text is a merge patch (RFC 7386: maps merge, lists are replaced whole, so lists
// in a fix are complete) for the object that starts at that line.
//
// Each format is written and applied by the source package that reads it:
// source/manifest for YAML, source/terraform for HCL and Helm values, the live
// source's kubectl commands for shell.
type Edit struct {
	File   string
	Line   int
	Format string
	Text   string
}
