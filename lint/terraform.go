package lint

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/schema"
)

// Fixes in Terraform: objects embedded in kubectl_manifest and kubernetes_manifest
// resources are rewritten where they are declared, since a YAML merge patch cannot
// be applied to a .tf file.

// objectPatch merges an RFC 7386 patch into an object in the format it is written
// in: a YAML merge patch for an object of a manifest file (or of a YAML file a
// kubectl_manifest reads with file()), the rewritten yaml_body of the
// kubectl_manifest or manifest of the kubernetes_manifest that declares it. ok is
// false when the object's declaration cannot be edited that way (objects a chart
// or an EKS add-on creates, objects from a Terraform plan, resources created with
// count or for_each).
func objectPatch(m *cluster.Model, o *cluster.Object, patch map[string]any) (Edit, bool) {
	if o.Via == "" {
		if !isManifestFile(o.Origin.File) {
			return Edit{}, false
		}
		return yamlPatch(o, patch), true
	}
	if m == nil || m.Terraform == nil {
		return Edit{}, false
	}
	n, ok := m.Terraform.Nodes[o.Via]
	if !ok || n.Type != "kubectl_manifest" && n.Type != "kubernetes_manifest" {
		return Edit{}, false
	}
	if !strings.HasSuffix(n.Origin.File, ".tf") {
		// A plan (or JSON configuration): nothing a user edits by hand.
		return Edit{}, false
	}
	if o.Origin.File != n.Origin.File && isManifestFile(o.Origin.File) {
		// yaml_body = file("nodepool.yaml"): the object is written in that file.
		return yamlPatch(o, patch), true
	}
	merged := schema.ApplyMergePatch(o.Content, patch)
	if n.Type == "kubernetes_manifest" {
		// The applier merges object constructors key by key, so keys the patch
		// removes are written as null; a manifest written as yamldecode(...) is
		// replaced whole.
		return blockEdit(m, o.Via, "manifest = "+terraformValue(withRemovals(merged, patch), 0)+"\n")
	}
	body := strings.TrimRight(yamlText(merged), "\n")
	if strings.Contains(body, "%{") {
		// A template directive inside the text would change its meaning.
		return Edit{}, false
	}
	for _, line := range strings.Split(body, "\n") {
		if strings.TrimSpace(line) == "YAML" {
			// An indented heredoc ends at the first line that is its marker
			// once trimmed.
			return Edit{}, false
		}
	}
	// Unknown values are kept as ${expr}, which inside the heredoc is the
	// interpolation of the expression the user wrote.
	return blockEdit(m, o.Via, "yaml_body = <<-YAML\n"+body+"\nYAML\n")
}

// yamlPatch is a YAML merge patch for the object that starts at its origin.
func yamlPatch(o *cluster.Object, patch map[string]any) Edit {
	return Edit{File: o.Origin.File, Line: o.Origin.Line, Format: FormatYAML, Text: yamlText(patch)}
}

func isManifestFile(f string) bool {
	f = strings.ToLower(f)
	return strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".yml") || strings.HasSuffix(f, ".json") && !strings.HasSuffix(f, ".tf.json")
}

// withRemovals overlays the nulls of a merge patch onto the merged object, so a
// key-by-key merge into the old object removes what the patch removes.
func withRemovals(merged map[string]any, patch map[string]any) map[string]any {
	out := make(map[string]any, len(merged))
	for k, v := range merged {
		out[k] = v
	}
	for k, pv := range patch {
		switch t := pv.(type) {
		case nil:
			out[k] = nil
		case map[string]any:
			if sub, ok := out[k].(map[string]any); ok {
				out[k] = withRemovals(sub, t)
			}
		}
	}
	return out
}

// blockEdit is an HCL edit of the block a graph address is declared by.
func blockEdit(m *cluster.Model, addr, text string) (Edit, bool) {
	if m == nil || m.Terraform == nil {
		return Edit{}, false
	}
	n, ok := m.Terraform.Nodes[addr]
	if !ok || n.Origin.File == "" || n.Origin.Line <= 0 {
		return Edit{}, false
	}
	return Edit{File: n.Origin.File, Line: n.Origin.Line, Format: FormatHCL, Text: text}, true
}

// ---- HCL values ----

var hclIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// hclValue renders a JSON-like value as an HCL expression, keys sorted. Every
// string is literal: "${" is escaped.
func hclValue(v any, indent int) string { return hclRender(v, indent, false) }

// terraformValue renders a value read from a Terraform configuration back into
// it: the unknown values the model keeps as ${expr} stay interpolations of the
// expressions the user wrote.
func terraformValue(v any, indent int) string { return hclRender(v, indent, true) }

// rawHCL is an expression written into rendered HCL as it is.
type rawHCL string

func hclRender(v any, indent int, refs bool) string {
	pad := strings.Repeat("  ", indent+1)
	end := strings.Repeat("  ", indent)
	switch t := v.(type) {
	case rawHCL:
		return string(t)
	case map[string]any:
		if len(t) == 0 {
			return "{}"
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		// The order people write Kubernetes fields in (key, operator, value,
		// effect), then alphabetical.
		sort.Slice(keys, func(i, j int) bool {
			ri, iok := keyRank[keys[i]]
			rj, jok := keyRank[keys[j]]
			switch {
			case iok && jok && ri != rj:
				return ri < rj
			case iok != jok:
				return iok
			}
			return keys[i] < keys[j]
		})
		var b strings.Builder
		b.WriteString("{\n")
		for _, k := range keys {
			name := k
			if !hclIdent.MatchString(k) {
				name = hclString(k)
			}
			fmt.Fprintf(&b, "%s%s = %s\n", pad, name, hclRender(t[k], indent+1, refs))
		}
		return b.String() + end + "}"
	case []any:
		if len(t) == 0 {
			return "[]"
		}
		var b strings.Builder
		b.WriteString("[\n")
		for _, x := range t {
			fmt.Fprintf(&b, "%s%s,\n", pad, hclRender(x, indent+1, refs))
		}
		return b.String() + end + "]"
	case string:
		if refs && cluster.IsUnknown(t) {
			if expr, ok := cluster.UnknownExpr(t); ok && !strings.ContainsAny(expr, "\n\"") {
				// A value that is one expression is written as the expression.
				return expr
			}
			return hclTemplate(t)
		}
		return hclString(t)
	case nil:
		return "null"
	case bool, int, int64, float64:
		return fmt.Sprint(t)
	}
	return hclString(fmt.Sprint(v))
}

// hclString renders a literal string.
func hclString(s string) string {
	b, _ := json.Marshal(s)
	out := string(b)
	// ${ and %{ start template sequences in HCL strings.
	out = strings.ReplaceAll(out, "${", "$${")
	return strings.ReplaceAll(out, "%{", "%%{")
}

// hclTemplate renders a string whose ${...} are interpolations.
func hclTemplate(s string) string {
	b, _ := json.Marshal(s)
	return strings.ReplaceAll(string(b), "%{", "%%{")
}
