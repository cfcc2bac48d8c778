package cluster

import (
	"slices"
	"strconv"
	"strings"
)

// IgnoreAnnotation silences checks on one object: "eksdoctor.io/ignore: id[,id]".
const IgnoreAnnotation = "eksdoctor.io/ignore"

// Object is a Kubernetes object as written by the user (or rendered from a chart, or
// read from a cluster), with where it came from.
type Object struct {
	APIVersion  string
	Kind        string
	Namespace   string
	Name        string
	Labels      map[string]string
	Annotations map[string]string

	// Content is the whole object with JSON-compatible values (map[string]any, []any,
	// string, int64, float64, bool, nil). It may be nil for workloads read from
	// files once their pod template is decoded: Get and Data then re-read the
	// document through ContentFunc, so large inputs do not keep two copies of
	// every pod spec in memory.
	//
	// A running cluster's pod keeps only apiVersion, kind and metadata in Content
	// once its spec and status are decoded (Pod); ContentFunc, when set, then
	// gives the whole object again, spec and status from their decoded types
	// (a snapshot's writer needs it).
	Content     map[string]any
	ContentFunc func() map[string]any

	// Origin is where the object starts.
	Origin Origin
	// Lines maps a field path ("spec.template.spec.tolerations", list items as
	// numbers: "spec.containers.0.image") to its line in Origin.File. Loaders fill it
	// for the paths they can; At falls back to the nearest known parent.
	Lines map[string]int
	// LineIndex, when Lines is nil, computes them on demand. Indexing every field
	// of every object of a large input costs more than the few lookups findings
	// make, so the file loader defers it (At calls it; it does not change the
	// object, so objects stay safe to read concurrently).
	LineIndex func() map[string]int

	// Via names what produced the object when it was not a plain manifest: a Terraform
	// address ("kubectl_manifest.karpenter_node_pool"), a Helm release
	// ("helm_release.karpenter"), a chart knowledge-base entry, "live".
	Via string
	// Manager is the tool that creates and deletes the object: "kubectl" for plain
	// manifests, "terraform" for objects in kubectl_manifest/kubernetes_manifest/
	// helm_release, "helm", "eks" for add-ons, "cluster" for objects read live,
	// ManagerCommand ("local-exec") for objects a Terraform resource applies by
	// running a command (Via names the resource).
	Manager string
	// Conditional is the count or for_each expression, not known before apply,
	// that decides whether it exists; "" when it certainly does.
	Conditional string
	// IgnoredNamespace is the metadata.namespace written on an object of a
	// cluster-scoped kind: the API server clears it on create, so the object
	// has none (Namespace is "").
	IgnoredNamespace string
	// Unknown, when set, says what the object is made from that is not known
	// before apply ("values[0] of helm_release.lbc"): its content may differ from
	// what was read, so what it says about scheduling cannot be relied on.
	Unknown string
}

// clusterScoped lists the cluster-scoped kinds eksdoctor knows: Kubernetes' own,
// Karpenter's (every version), and those of common add-ons.
var clusterScoped = map[string]bool{
	"APIService": true, "CSIDriver": true, "CSINode": true, "CertificateSigningRequest": true,
	"ClusterRole": true, "ClusterRoleBinding": true, "ComponentStatus": true,
	"CustomResourceDefinition": true, "FlowSchema": true, "IngressClass": true,
	"MutatingAdmissionPolicy": true, "MutatingAdmissionPolicyBinding": true,
	"MutatingWebhookConfiguration": true, "Namespace": true, "Node": true,
	"PersistentVolume": true, "PriorityClass": true, "PriorityLevelConfiguration": true,
	"RuntimeClass": true, "StorageClass": true, "ValidatingAdmissionPolicy": true,
	"ValidatingAdmissionPolicyBinding": true, "ValidatingWebhookConfiguration": true,
	"VolumeAttachment": true, "VolumeAttributesClass": true, "VolumeSnapshotClass": true,
	"VolumeSnapshotContent": true, "DeviceClass": true, "ResourceSlice": true,
	// Karpenter.
	"NodePool": true, "NodeClaim": true, "EC2NodeClass": true, "NodeClass": true, "NodeOverlay": true,
	"Provisioner": true, "AWSNodeTemplate": true, "Machine": true,
	// Add-ons.
	"ClusterIssuer": true, "ClusterSecretStore": true, "ClusterExternalSecret": true,
	"ENIConfig": true, "GatewayClass": true, "ClusterPolicy": true,
	"ConstraintTemplate": true, "CiliumClusterwideNetworkPolicy": true,
}

// ClusterScoped reports whether objects of a kind have no namespace.
func ClusterScoped(kind string) bool { return clusterScoped[kind] }

// ClearNamespace does what the API server does to an object of a cluster-scoped
// kind created with metadata.namespace: it clears it (IgnoredNamespace keeps
// what was written).
func (o *Object) ClearNamespace() {
	if o.Namespace == "" || !clusterScoped[o.Kind] {
		return
	}
	o.IgnoredNamespace, o.Namespace = o.Namespace, ""
	if md, ok := o.Content["metadata"].(map[string]any); ok {
		delete(md, "namespace")
	}
}

// Ref returns the object's reference.
func (o *Object) Ref() ObjectRef {
	return ObjectRef{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}
}

// At returns the origin of a field path inside the object; the closest parent path
// with a known line is used when the exact path has none.
func (o *Object) At(path string) Origin {
	lines := o.Lines
	if lines == nil && o.LineIndex != nil {
		lines = o.LineIndex()
	}
	org := o.Origin
	org.Path = path
	p := path
	for p != "" {
		if l, ok := lines[p]; ok {
			org.Line = l
			return org
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return org
}

// Ignores reports whether the object opts out of a check through IgnoreAnnotation.
func (o *Object) Ignores(checkID string) bool {
	return names(o.IgnoredChecks(), checkID)
}

// IgnoredChecks are the check IDs the object's IgnoreAnnotation names.
func (o *Object) IgnoredChecks() []string {
	v, ok := o.Annotations[IgnoreAnnotation]
	if !ok {
		return nil
	}
	return SplitIDs(v)
}

// Controller returns the object's controlling owner (its ownerReference marked
// controller, in the object's namespace); ok is false when it has none.
func (o *Object) Controller() (ref ObjectRef, ok bool) {
	refs, _ := Lookup(o.Data(), "metadata.ownerReferences").([]any)
	for _, r := range refs {
		if m, _ := r.(map[string]any); m["controller"] == true {
			kind, _ := m["kind"].(string)
			name, _ := m["name"].(string)
			return ObjectRef{Kind: kind, Namespace: o.Namespace, Name: name}, true
		}
	}
	return ObjectRef{}, false
}

// OwnerRef is the object's controlling owner, or the object itself when it has
// none: what a pod is grouped and reported by.
func (o *Object) OwnerRef() ObjectRef {
	if ref, ok := o.Controller(); ok {
		return ref
	}
	return o.Ref()
}

// Data returns Content, re-reading it when it was released.
func (o *Object) Data() map[string]any {
	if o.Content == nil && o.ContentFunc != nil {
		return o.ContentFunc()
	}
	return o.Content
}

// Get returns the value at a dotted path ("spec.template.spec"), or nil. List items
// are addressed by index.
func (o *Object) Get(path string) any { return Lookup(o.Data(), path) }

// String returns the string at path, or "".
func (o *Object) String(path string) string {
	s, _ := o.Get(path).(string)
	return s
}

// Lookup walks a JSON-like tree along a dotted path.
func Lookup(v any, path string) any {
	if path == "" {
		return v
	}
	for _, part := range strings.Split(path, ".") {
		switch t := v.(type) {
		case map[string]any:
			v = t[part]
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(t) {
				return nil
			}
			v = t[i]
		default:
			return nil
		}
	}
	return v
}

// SortObjects orders objects by kind, namespace, name, then origin, so every listing
// derived from a model is deterministic.
func SortObjects(objs []*Object) {
	cmp := func(a, b *Object) int {
		if c := a.Ref().Compare(b.Ref()); c != 0 {
			return c
		}
		if c := strings.Compare(a.Origin.File, b.Origin.File); c != 0 {
			return c
		}
		return a.Origin.Line - b.Origin.Line
	}
	// Inputs are often in order already (a snapshot is written sorted).
	if !slices.IsSortedFunc(objs, cmp) {
		slices.SortStableFunc(objs, cmp)
	}
}
