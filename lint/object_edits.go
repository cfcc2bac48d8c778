package lint

import (
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/manifest"
	"github.com/eksdoctor/eksdoctor/source/terraform"
)

// A change to a Kubernetes object is said once, as a merge patch; the format
// that declares the object writes it: a manifest file (source/manifest), or
// the kubectl_manifest or kubernetes_manifest resource that embeds it
// (source/terraform), since a YAML merge patch cannot be applied to a .tf
// file.

// objectPatch merges an RFC 7386 patch into an object in the format it is written
// in: a YAML merge patch for an object of a manifest file (or of a YAML file a
// kubectl_manifest reads with file()), the rewritten yaml_body of the
// kubectl_manifest or manifest of the kubernetes_manifest that declares it. ok is
// false when the object's declaration cannot be edited that way (objects a chart
// or an EKS add-on creates, objects from a Terraform plan, resources created with
// count or for_each).
func objectPatch(m *cluster.Model, o *cluster.Object, patch map[string]any) (Edit, bool) {
	if o.Manager == cluster.ManagerCommand {
		// Applied by a command: editable where it is written in a manifest
		// file (kubectl apply -f), not inside the command's text.
		if !manifest.IsManifestFile(o.Origin.File) {
			return Edit{}, false
		}
		return manifest.PatchEdit(o, patch), true
	}
	if o.Via == "" {
		if !manifest.IsManifestFile(o.Origin.File) {
			return Edit{}, false
		}
		return manifest.PatchEdit(o, patch), true
	}
	if m == nil {
		return Edit{}, false
	}
	return terraform.ManifestEdit(m.Terraform, o, patch)
}

// ---- HCL values ----

// blockEdit is an HCL edit of the block a graph address is declared by.
func blockEdit(m *cluster.Model, addr, text string) (Edit, bool) {
	if m == nil {
		return Edit{}, false
	}
	return terraform.BlockEdit(m.Terraform, addr, text)
}

// YAMLText renders a value as block YAML with keys in conventional order. It is
// used for every YAML snippet a fix proposes; the YAML writer is the manifest
// source's.
func YAMLText(v any) string { return manifest.YAMLText(v) }
