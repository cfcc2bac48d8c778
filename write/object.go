package write

import (
	"strings"

	"fmt"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/shell"
	"github.com/eksdoctor/eksdoctor/source/live"
	"github.com/eksdoctor/eksdoctor/source/manifest"
	"github.com/eksdoctor/eksdoctor/source/terraform"
)

// A change to a Kubernetes object is said once, as a merge patch; the format
// that declares the object writes it: a manifest file (source/manifest), or
// the kubectl_manifest or kubernetes_manifest resource that embeds it
// (source/terraform), since a YAML merge patch cannot be applied to a .tf
// file.

// ObjectPatch merges an RFC 7386 patch into an object in the format it is
// written in: a YAML merge patch for an object of a manifest file (or of a
// YAML file a kubectl_manifest reads with file()), the rewritten yaml_body of
// the kubectl_manifest or manifest of the kubernetes_manifest that declares
// it. ok is false when the object's declaration cannot be edited that way
// (objects a chart or an EKS add-on creates, objects from a Terraform plan,
// resources created with count or for_each).
func ObjectPatch(m *cluster.Model, o *cluster.Object, patch map[string]any) (cluster.Edit, bool) {
	if o.Manager == cluster.ManagerEKS {
		// EKS makes it and allows no change to it.
		return cluster.Edit{}, false
	}
	if o.Manager == cluster.ManagerCommand {
		// Applied by a command: editable where it is written in a manifest
		// file (kubectl apply -f), not inside the command's text.
		if !manifest.IsManifestFile(o.Origin.File) {
			return cluster.Edit{}, false
		}
		return manifest.PatchEdit(o, patch), true
	}
	if o.Via == "" {
		if !manifest.IsManifestFile(o.Origin.File) {
			return cluster.Edit{}, false
		}
		return manifest.PatchEdit(o, patch), true
	}
	if m == nil {
		return cluster.Edit{}, false
	}
	return terraform.ManifestEdit(m.Terraform, o, patch)
}

// LivePatch merges a patch into an object of the running cluster: the kubectl
// command that does it.
func LivePatch(o *cluster.Object, patch map[string]any) cluster.Edit {
	return live.PatchEdit(o, patch)
}

// RemoveFinalizer removes one finalizer from an object of the running
// cluster, by its position, with a test that the position still holds it: the
// kubectl command, with note as a shell comment after it ("" for none). ok
// is false when the object does not hold the finalizer.
func RemoveFinalizer(o *cluster.Object, finalizer, note string) (cluster.Edit, bool) {
	cmd, ok := live.RemoveFinalizerCommand(o, finalizer)
	if !ok {
		return cluster.Edit{}, false
	}
	if note != "" {
		cmd += "  # " + note
	}
	return cluster.Edit{Format: cluster.FormatShell, Text: cmd}, true
}

// JSONPatchCommand is the kubectl command that applies a JSON patch (RFC
// 6902) to a named object of a cluster-scoped resource ("volumeattachment"),
// with note as a shell comment after it ("" for none).
func JSONPatchCommand(resource, name string, patch []any, note string) cluster.Edit {
	cmd := fmt.Sprintf("kubectl patch %s %s --type json -p %s", resource, shell.Quote(name), shell.Quote(live.CompactJSON(patch)))
	if note != "" {
		cmd += "  # " + note
	}
	return cluster.Edit{Format: cluster.FormatShell, Text: cmd}
}

// YAMLText renders a value as block YAML with keys in conventional order. It
// is used for every YAML snippet a fix proposes; the YAML writer is the
// manifest source's.
func YAMLText(v any) string { return manifest.YAMLText(v) }

// StorageClassProvisioner sets the provisioner of a StorageClass where it is
// declared: the manifest, or the storage_provisioner of a
// kubernetes_storage_class_v1 resource.
func StorageClassProvisioner(m *cluster.Model, o *cluster.Object, provisioner string) (cluster.Edit, bool) {
	if strings.Contains(o.Via, "kubernetes_storage_class") && !strings.HasPrefix(o.Via, "module.") {
		if m == nil {
			return cluster.Edit{}, false
		}
		addr := o.Via
		if i := strings.IndexByte(addr, '['); i > 0 {
			addr = addr[:i]
		}
		return terraform.BlockEdit(m.Terraform, addr, "storage_provisioner = "+terraform.Quote(provisioner)+"\n")
	}
	return ObjectPatch(m, o, map[string]any{"provisioner": provisioner})
}
