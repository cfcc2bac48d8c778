package live

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/shell"
)

// Changes to a running cluster, written as the kubectl commands a user runs: the writer of the cluster's own format. eksdoctor only prints them.

// CompactJSON renders a patch without HTML escaping, keys sorted.
func CompactJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "{}"
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// kubectlResource names an object's resource for kubectl: the lowercase kind,
// qualified by its API group unless the group is a core one.
func kubectlResource(o *cluster.Object) string {
	kind := strings.ToLower(o.Kind)
	g := ""
	if i := strings.IndexByte(o.APIVersion, '/'); i >= 0 {
		g = o.APIVersion[:i]
	}
	switch g {
	case "", "apps", "batch":
		return kind
	}
	return kind + "." + g
}

// target is "deployment web -n apps".
func target(o *cluster.Object) string {
	s := kubectlResource(o) + " " + shell.Quote(o.Name)
	if o.Namespace != "" {
		s += " -n " + shell.Quote(o.Namespace)
	}
	return s
}

// PatchEdit is a command that merges patch into a live object.
func PatchEdit(o *cluster.Object, patch map[string]any) cluster.Edit {
	return cluster.Edit{Format: cluster.FormatShell, Text: fmt.Sprintf("kubectl patch %s --type merge -p %s", target(o), shell.Quote(CompactJSON(patch)))}
}

// RemoveFinalizerCommand is a JSON patch command that removes one finalizer by its
// position, with a test that the position still holds it, so that no other
// finalizer is dropped if the list changed in between.
func RemoveFinalizerCommand(o *cluster.Object, finalizer string) (string, bool) {
	for i, f := range o.Finalizers() {
		if f != finalizer {
			continue
		}
		path := fmt.Sprintf("/metadata/finalizers/%d", i)
		patch := []any{
			map[string]any{"op": "test", "path": path, "value": f},
			map[string]any{"op": "remove", "path": path},
		}
		return fmt.Sprintf("kubectl patch %s --type json -p %s", target(o), shell.Quote(CompactJSON(patch))), true
	}
	return "", false
}
