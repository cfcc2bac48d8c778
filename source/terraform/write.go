package terraform

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/manifest"
)

// The HCL writer: values rendered as Terraform expressions, edits of the block
// an address declares, and the objects kubectl_manifest and kubernetes_manifest
// resources embed. Fixes are written here, by the package that reads the
// format, so that the addresses it makes are parsed nowhere else.

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
func BlockEdit(g *cluster.Graph, addr, text string) (cluster.Edit, bool) {
	if g == nil {
		return cluster.Edit{}, false
	}
	n, ok := g.Nodes[addr]
	if !ok || n.Origin.File == "" || n.Origin.Line <= 0 {
		return cluster.Edit{}, false
	}
	return cluster.Edit{File: n.Origin.File, Line: n.Origin.Line, Format: cluster.FormatHCL, Text: text}, true
}

var hclIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// Literal renders a JSON-like value as an HCL expression, keys sorted. Every
// string is literal: "${" is escaped.
func Literal(v any, indent int) string { return render(v, indent, false) }

// ConfigValue renders a value read from a Terraform configuration back into
// it: the unknown values the model keeps as ${expr} stay interpolations of the
// expressions the user wrote.
func ConfigValue(v any, indent int) string { return render(v, indent, true) }

// Expr is an expression written into rendered HCL as it is.
type Expr string

func render(v any, indent int, refs bool) string {
	pad := strings.Repeat("  ", indent+1)
	end := strings.Repeat("  ", indent)
	switch t := v.(type) {
	case Expr:
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
		sort.Slice(keys, func(i, j int) bool { return manifest.FieldLess(keys[i], keys[j]) })
		var b strings.Builder
		b.WriteString("{\n")
		for _, k := range keys {
			name := k
			if !hclIdent.MatchString(k) {
				name = Quote(k)
			}
			fmt.Fprintf(&b, "%s%s = %s\n", pad, name, render(t[k], indent+1, refs))
		}
		return b.String() + end + "}"
	case []any:
		if len(t) == 0 {
			return "[]"
		}
		var b strings.Builder
		b.WriteString("[\n")
		for _, x := range t {
			fmt.Fprintf(&b, "%s%s,\n", pad, render(x, indent+1, refs))
		}
		return b.String() + end + "]"
	case string:
		if refs && cluster.IsUnknown(t) {
			if expr, ok := cluster.UnknownExpr(t); ok && !strings.ContainsAny(expr, "\n\"") {
				// A value that is one expression is written as the expression.
				return expr
			}
			return template(t)
		}
		return Quote(t)
	case nil:
		return "null"
	case bool, int, int64, float64:
		return fmt.Sprint(t)
	}
	return Quote(fmt.Sprint(v))
}

// Quote renders a literal string.
func Quote(s string) string {
	b, _ := json.Marshal(s)
	out := string(b)
	// ${ and %{ start template sequences in HCL strings.
	out = strings.ReplaceAll(out, "${", "$${")
	return strings.ReplaceAll(out, "%{", "%%{")
}

// template renders a string whose ${...} are interpolations.
func template(s string) string {
	b, _ := json.Marshal(s)
	return strings.ReplaceAll(string(b), "%{", "%%{")
}

// ModuleCall returns the top-level module call ("module.karpenter") of an
// address inside it, or the address itself when it is a module call.
func ModuleCall(addr string) (string, bool) {
	if call, _, ok := SplitModuleCall(addr); ok {
		return call, true
	}
	return addr, strings.HasPrefix(addr, "module.")
}

// StringExpr renders a model string as an HCL expression: a value that is one
// placeholder becomes its expression; other placeholders stay interpolations.
func StringExpr(s string) string {
	if e, ok := cluster.UnknownExpr(s); ok {
		return e
	}
	var b strings.Builder
	b.WriteByte('"')
	rest := s
	for _, e := range cluster.UnknownExprs(s) {
		ph := cluster.Unknown(e)
		i := strings.Index(rest, ph)
		if i < 0 {
			break
		}
		b.WriteString(escapeLiteral(rest[:i]))
		b.WriteString(ph)
		rest = rest[i+len(ph):]
	}
	b.WriteString(escapeLiteral(rest))
	b.WriteByte('"')
	return b.String()
}

func escapeLiteral(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "%{", "%%{", "${", "$${")
	return r.Replace(s)
}

// ForEachKey returns the for_each key of the last resource instance in an address.
// ForEachKey returns the for_each key of a resource instance address
// (aws_eks_access_entry.this["nodes"] → nodes).
func ForEachKey(addr string) (string, bool) {
	i := strings.LastIndex(addr, `["`)
	j := strings.LastIndex(addr, `"]`)
	if i < 0 || j < i {
		return "", false
	}
	return addr[i+2 : j], true
}

// MapKey renders a map key, quoted when it is not an identifier.
func MapKey(k string) string {
	for _, r := range k {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Sprintf("%q", k)
		}
	}
	return k
}

// ManifestEdit merges an RFC 7386 patch into an object a kubectl_manifest or
// kubernetes_manifest resource declares (o.Via), where it is written: the YAML
// file its yaml_body reads with file(), else the rewritten yaml_body or
// manifest argument of the resource. ok is false when that cannot be written
// (a plan or JSON configuration, a body with template directives).
func ManifestEdit(g *cluster.Graph, o *cluster.Object, patch map[string]any) (cluster.Edit, bool) {
	if g == nil {
		return cluster.Edit{}, false
	}
	n, ok := g.Nodes[o.Via]
	if !ok || n.Type != "kubectl_manifest" && n.Type != "kubernetes_manifest" {
		return cluster.Edit{}, false
	}
	if !strings.HasSuffix(n.Origin.File, ".tf") {
		// A plan (or JSON configuration): nothing a user edits by hand.
		return cluster.Edit{}, false
	}
	if o.Origin.File != n.Origin.File && manifest.IsManifestFile(o.Origin.File) {
		// yaml_body = file("nodepool.yaml"): the object is written in that file.
		return manifest.PatchEdit(o, patch), true
	}
	merged := cluster.MergePatch(o.Content, patch)
	if n.Type == "kubernetes_manifest" {
		// The applier merges object constructors key by key, so keys the patch
		// removes are written as null; a manifest written as yamldecode(...) is
		// replaced whole.
		return BlockEdit(g, o.Via, "manifest = "+ConfigValue(withRemovals(merged, patch), 0)+"\n")
	}
	body := strings.TrimRight(manifest.YAMLText(merged), "\n")
	if strings.Contains(body, "%{") {
		// A template directive inside the text would change its meaning.
		return cluster.Edit{}, false
	}
	for _, line := range strings.Split(body, "\n") {
		if strings.TrimSpace(line) == "YAML" {
			// An indented heredoc ends at the first line that is its marker
			// once trimmed.
			return cluster.Edit{}, false
		}
	}
	// Unknown values are kept as ${expr}, which inside the heredoc is the
	// interpolation of the expression the user wrote.
	return BlockEdit(g, o.Via, "yaml_body = <<-YAML\n"+body+"\nYAML\n")
}

// ModuleValuesEdit adds a values document to the input of a module call that
// creates a release, keeping the documents and settings the input has: objects
// written in place merge key by key, and the values already there stay as
// written, before the new document, which Helm applies last.
func ModuleValuesEdit(in *cluster.ModuleInput, values map[string]any) cluster.Edit {
	doc := "yamlencode(" + Literal(values, 2) + ")"
	var text string
	switch {
	case in.Expr != "":
		text = fmt.Sprintf("%s = merge(%s, { values = concat(try((%s).values, []), [%s]) })", in.Name, in.Expr, in.Expr, doc)
	case in.ValuesExpr != "":
		text = fmt.Sprintf("%s = {\n  values = concat(%s, [%s])\n}", in.Name, in.ValuesExpr, doc)
	default:
		var b strings.Builder
		for _, v := range in.Values {
			b.WriteString(v)
			if strings.HasPrefix(strings.TrimSpace(v), "<<") {
				// A heredoc's closing marker stays alone on its line.
				b.WriteString("\n")
			}
			b.WriteString(",\n")
		}
		text = fmt.Sprintf("%s = {\n  values = [\n%s%s,\n  ]\n}", in.Name, b.String(), doc)
	}
	return cluster.Edit{File: in.Origin.File, Line: in.Origin.Line, Format: cluster.FormatHCL, Text: text}
}

// DependsOnEdit sets the depends_on of the block at an address to deps, the
// complete list. Inside a module, resources are named without the module's
// address; what is outside it cannot be named there at all, and is said in a
// comment instead (the list is then written one entry a line). lines writes
// one entry a line in any case, as a destroy plan's changes are shown, where
// lists grow as stages are added.
func DependsOnEdit(g *cluster.Graph, addr string, deps []string, lines bool) (cluster.Edit, bool) {
	mod := enclosingModule(ConfigAddress(addr))
	names := make([]string, len(deps))
	outside := false
	for i, d := range deps {
		switch {
		case mod == "":
			names[i] = d
		case strings.HasPrefix(d, mod+"."):
			names[i] = strings.TrimPrefix(d, mod+".")
		default:
			outside = true
		}
	}
	if !outside && !lines {
		return BlockEdit(g, addr, "depends_on = ["+strings.Join(names, ", ")+"]\n")
	}
	var b strings.Builder
	b.WriteString("depends_on = [\n")
	for i, d := range deps {
		if names[i] == "" {
			b.WriteString("  # " + d + " is outside this module: add it to depends_on of the module call instead\n")
			continue
		}
		b.WriteString("  " + names[i] + ",\n")
	}
	b.WriteString("]\n")
	return BlockEdit(g, addr, b.String())
}

// DestroyWaitEdit makes destroying the resource at an address wait until the
// Kubernetes objects it deletes are gone.
func DestroyWaitEdit(g *cluster.Graph, addr string) (cluster.Edit, bool) {
	return BlockEdit(g, addr, "wait = true\n")
}

// DestroyDeleteEdit makes destroying the resource at an address delete its
// Kubernetes objects.
func DestroyDeleteEdit(g *cluster.Graph, addr string) (cluster.Edit, bool) {
	return BlockEdit(g, addr, "apply_only = false\n")
}

// UpdateInPlaceEdit makes a change of the resource at an address update its
// Kubernetes objects in place rather than delete and recreate them.
func UpdateInPlaceEdit(g *cluster.Graph, addr string) (cluster.Edit, bool) {
	return BlockEdit(g, addr, "force_new = false\n")
}

// SetBlockNameEdit renames the value a helm_release set block sets.
func SetBlockNameEdit(set cluster.Origin, name string) cluster.Edit {
	return cluster.Edit{File: set.File, Line: set.Line, Format: cluster.FormatHCL, Text: "name = " + Quote(name) + "\n"}
}

// ExactNodeRoleNameEdit makes the terraform-aws-eks karpenter module that
// creates the node role at an address name it exactly, without a random
// suffix.
func ExactNodeRoleNameEdit(g *cluster.Graph, roleAddr string) (cluster.Edit, bool) {
	return ModuleArgsEdit(g, roleAddr, "node_iam_role_use_name_prefix = false\n")
}

// KarpenterIRSAEdit makes the terraform-aws-eks karpenter module call at an
// address give the controller its role through IRSA rather than EKS Pod
// Identity, for a service account (namespace:name).
func KarpenterIRSAEdit(g *cluster.Graph, karpenter string, c cluster.EKSCluster, serviceAccount string) (cluster.Edit, bool) {
	return BlockEdit(g, karpenter, fmt.Sprintf("create_pod_identity_association = false\nenable_irsa = true\nirsa_oidc_provider_arn = %s\nirsa_namespace_service_accounts = [%q]\n", OIDCProviderExpr(c), serviceAccount))
}

// KarpenterRoleARNExpr is the expression for the controller role the
// terraform-aws-eks karpenter module call at an address creates.
func KarpenterRoleARNExpr(karpenter string) string { return karpenter + ".iam_role_arn" }
