package lint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// Fixes for a running cluster are kubectl commands: the writer of the cluster's own format.

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

// shellQuote quotes a word for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`{}[]*?!;&|<>()#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// compactJSON renders a patch without HTML escaping, keys sorted.
func compactJSON(v any) string {
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

// kubectlTarget is "deployment web -n apps".
func kubectlTarget(o *cluster.Object) string {
	s := kubectlResource(o) + " " + shellQuote(o.Name)
	if o.Namespace != "" {
		s += " -n " + shellQuote(o.Namespace)
	}
	return s
}

// livePatch is a command that merges patch into a live object.
func livePatch(o *cluster.Object, patch map[string]any) Edit {
	return Edit{Format: FormatShell, Text: fmt.Sprintf("kubectl patch %s --type merge -p %s", kubectlTarget(o), shellQuote(compactJSON(patch)))}
}

// removeFinalizer is a JSON patch command that removes one finalizer by its
// position, with a test that the position still holds it, so that no other
// finalizer is dropped if the list changed in between.
func removeFinalizer(o *cluster.Object, finalizer string) (string, bool) {
	for i, f := range objectFinalizers(o) {
		if f != finalizer {
			continue
		}
		path := fmt.Sprintf("/metadata/finalizers/%d", i)
		patch := []any{
			map[string]any{"op": "test", "path": path, "value": f},
			map[string]any{"op": "remove", "path": path},
		}
		return fmt.Sprintf("kubectl patch %s --type json -p %s", kubectlTarget(o), shellQuote(compactJSON(patch))), true
	}
	return "", false
}

// helmNote warns that a patch of an object a Helm release manages is undone by
// the release's next upgrade.
func helmNote(o *cluster.Object) string {
	if name, ns, ok := helmRelease(o); ok {
		return fmt.Sprintf("; %s belongs to Helm release %s (namespace %s): set the same in the release's values, or its next upgrade reverts the patch", o.Ref(), name, ns)
	}
	return ""
}
