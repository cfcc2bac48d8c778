package lint

import (
	"fmt"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// Fixes for a running cluster are kubectl commands, written by source/live; what
// a Helm release that manages an object means for them is said here.

// helmRelease returns the Helm release that owns an object, from the annotations
// Helm 3 writes on everything it installs.
func helmRelease(o *cluster.Object) (name, namespace string, ok bool) {
	name = o.Annotations["meta.helm.sh/release-name"]
	namespace = o.Annotations["meta.helm.sh/release-namespace"]
	if namespace == "" {
		namespace = o.Namespace
	}
	return name, namespace, name != ""
}

// helmNote warns that a patch of an object a Helm release manages is undone by
// the release's next upgrade.
func helmNote(o *cluster.Object) string {
	if name, ns, ok := helmRelease(o); ok {
		return fmt.Sprintf("; %s belongs to Helm release %s (namespace %s): set the same in the release's values, or its next upgrade reverts the patch", o.Ref(), name, ns)
	}
	return ""
}
