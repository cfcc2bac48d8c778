package cluster

import (
	"slices"
	"strings"
)

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

// checkedEnv are the environment variables of a container some check reads
// (the Karpenter controller's cluster name).
var checkedEnv = []string{"CLUSTER_NAME"}

// CheckedEnv reports whether a check reads the environment variable:
// decoders keep only these of a configuration's containers, and only their
// values of a running cluster's.
func CheckedEnv(name string) bool { return slices.Contains(checkedEnv, name) }

// checkedAnnotations are the annotations some check reads.
var checkedAnnotations = map[string]bool{
	"meta.helm.sh/release-name":                     true,
	"meta.helm.sh/release-namespace":                true,
	"helm.sh/hook":                                  true,
	"kubernetes.io/config.mirror":                   true,
	"volume.kubernetes.io/storage-provisioner":      true,
	"volume.beta.kubernetes.io/storage-provisioner": true,
	"storageclass.kubernetes.io/is-default-class":   true,
	// Volume binding: a claim bound for good, the node a claim waits for.
	"pv.kubernetes.io/bind-completed":    true,
	"volume.kubernetes.io/selected-node": true,
	"eks.amazonaws.com/role-arn":         true,
	"eks.amazonaws.com/compute-type":     true,
	// Karpenter never evicts pods (nor disrupts nodes) annotated so.
	"karpenter.sh/do-not-disrupt": true,
	"karpenter.sh/do-not-evict":   true,
}

// checkedAnnotationPrefixes are prefixes of annotations some check reads.
var checkedAnnotationPrefixes = []string{"eksdoctor.io/"}

// CheckedAnnotation reports whether a check reads the annotation: decoders
// keep only these of a running cluster's objects and of pod templates.
func CheckedAnnotation(key string) bool {
	if checkedAnnotations[key] {
		return true
	}
	for _, p := range checkedAnnotationPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// CheckedAnnotations keeps the annotations checks read (CheckedAnnotation):
// the map itself when it holds only those, nil when it holds none.
func CheckedAnnotations(a map[string]string) map[string]string {
	n := 0
	for k := range a {
		if CheckedAnnotation(k) {
			n++
		}
	}
	if n == len(a) {
		return a
	}
	if n == 0 {
		return nil
	}
	out := make(map[string]string, n)
	for k, v := range a {
		if CheckedAnnotation(k) {
			out[k] = v
		}
	}
	return out
}
