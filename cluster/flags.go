package cluster

import "strings"

// checkedFlags are the command-line flags of a container whose presence a
// check reads (the Karpenter controller's cluster name).
var checkedFlags = []string{"--cluster-name"}

// CheckedFlag is the flag a check reads that the argument sets, without its
// value ("--cluster-name=prod" → "--cluster-name"); false for any other
// argument. Decoders keep only these of a container's command line.
func CheckedFlag(arg string) (string, bool) {
	for _, f := range checkedFlags {
		if arg == f || strings.HasPrefix(arg, f+"=") {
			return f, true
		}
	}
	return "", false
}

// CheckedFlags keeps, of a command line, the flags a check reads (CheckedFlag);
// nil when there are none.
func CheckedFlags(args []string) []string {
	var kept []string
	for _, a := range args {
		if f, ok := CheckedFlag(a); ok {
			kept = append(kept, f)
		}
	}
	return kept
}
