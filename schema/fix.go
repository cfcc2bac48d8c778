package schema

import (
	"fmt"
	"sort"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// Fixed is an object rewritten for the v1beta1 → v1 moves that need no decision.
type Fixed struct {
	// Object is the rewritten object, a copy: the input is not changed. It is nil
	// when obj is not a Karpenter NodePool, NodeClaim or EC2NodeClass.
	Object map[string]any
	// NodeClassPatch is a JSON merge patch (RFC 7386) for the EC2NodeClass named
	// NodeClassName, carrying what moved there ({"spec": {"kubelet": {...}}}); nil when
	// nothing moved. ApplyMergePatch applies it; its fields replace kubelet fields of
	// the same name the EC2NodeClass already sets.
	NodeClassPatch map[string]any
	NodeClassName  string
	// Changes lists what was changed, in the order it was done.
	Changes []Change
}

// Change is one edit Fix made.
type Change struct {
	// Move is the ID of the entry in Moves the edit implements, or "" for a fix of
	// another kind (an instance profile ARN).
	Move string
	// Path is the field that changed, in the object as written.
	Path string
	// Description says what was done, for the fix's summary.
	Description string
}

// Fix rewrites a NodePool, NodeClaim or EC2NodeClass of either version into a v1 object
// for every move it can make mechanically:
//
//   - apiVersion: karpenter.sh/v1beta1 and karpenter.k8s.aws/v1beta1 become v1;
//   - NodePool spec.template.spec.kubelet (NodeClaim spec.kubelet) is removed and
//     returned in NodeClassPatch as the EC2NodeClass's spec.kubelet, keeping only the
//     fields Karpenter's kubelet configuration had in v1beta1 (the others never
//     applied, and are listed in Changes);
//   - spec.disruption.expireAfter moves to spec.template.spec.expireAfter (dropped if
//     the template already sets one, which wins);
//   - consolidationPolicy: WhenUnderutilized becomes WhenEmptyOrUnderutilized;
//   - a disruption block without consolidateAfter gets consolidateAfter: 0s, the
//     v1beta1 behaviour of consolidating immediately;
//   - nodeClassRef gets group (from its apiVersion, else karpenter.k8s.aws) and kind
//     EC2NodeClass, loses apiVersion, and a group written with a version
//     ("karpenter.k8s.aws/v1") keeps only the group;
//   - an EC2NodeClass without amiSelectorTerms gets - alias: <family>@latest for its
//     amiFamily (AL2, AL2023, Bottlerocket, Windows2019, Windows2022, Windows2025);
//   - an instanceProfile given as an ARN keeps only the name.
//
// The Ubuntu family, amiFamily: Custom without terms, and restricted labels need a
// decision and are left for the user; Validate on the result reports them.
func Fix(obj *cluster.Object) Fixed {
	gvk, ok := objectGVK(obj)
	if !ok {
		return Fixed{}
	}
	out, _ := normalize(obj.Content, 0).(map[string]any)
	if out == nil {
		return Fixed{}
	}
	f := &fixer{fixed: Fixed{Object: out}}
	switch {
	case gvk.group == GroupKarpenter && gvk.kind == "NodePool":
		f.apiVersion(gvk)
		f.nodePool()
	case gvk.group == GroupKarpenter && gvk.kind == "NodeClaim":
		f.apiVersion(gvk)
		f.nodeClaim()
	case gvk.group == GroupAWS && gvk.kind == "EC2NodeClass":
		f.apiVersion(gvk)
		f.nodeClass()
	default:
		return Fixed{}
	}
	return f.fixed
}

type fixer struct {
	fixed Fixed
}

func (f *fixer) change(move, path, format string, args ...any) {
	f.fixed.Changes = append(f.fixed.Changes, Change{Move: move, Path: path, Description: fmt.Sprintf(format, args...)})
}

func (f *fixer) apiVersion(gvk groupVersionKind) {
	if gvk.version != "v1beta1" {
		return
	}
	to := gvk.group + "/v1"
	f.fixed.Object["apiVersion"] = to
	f.change(MoveAPIVersion, "apiVersion", "set apiVersion: %s (was %s)", to, gvk.apiVersion())
}

func (f *fixer) nodePool() {
	spec := childMap(f.fixed.Object, "spec")
	tmpl := childMap(childMap(spec, "template"), "spec")
	if tmpl != nil {
		f.kubelet(tmpl, "spec.template.spec", MoveKubelet)
		f.nodeClassRef(tmpl, "spec.template.spec")
	}
	disruption := childMap(spec, "disruption")
	if disruption == nil {
		// The API server defaults the whole block, consolidateAfter included.
		return
	}
	if exp, ok := disruption["expireAfter"]; ok {
		delete(disruption, "expireAfter")
		switch {
		case tmpl == nil:
			template := ensureMap(spec, "template")
			ensureMap(template, "spec")["expireAfter"] = exp
			f.change(MoveExpireAfter, "spec.disruption.expireAfter", "moved expireAfter: %v to spec.template.spec.expireAfter", exp)
		case tmpl["expireAfter"] != nil:
			f.change(MoveExpireAfter, "spec.disruption.expireAfter", "removed spec.disruption.expireAfter: %v; spec.template.spec.expireAfter: %v already sets the expiry", exp, tmpl["expireAfter"])
		default:
			tmpl["expireAfter"] = exp
			f.change(MoveExpireAfter, "spec.disruption.expireAfter", "moved expireAfter: %v to spec.template.spec.expireAfter", exp)
		}
	}
	if disruption["consolidationPolicy"] == "WhenUnderutilized" {
		disruption["consolidationPolicy"] = "WhenEmptyOrUnderutilized"
		f.change(MoveConsolidation, "spec.disruption.consolidationPolicy", "renamed consolidationPolicy WhenUnderutilized to WhenEmptyOrUnderutilized")
	}
	if _, ok := disruption["consolidateAfter"]; !ok {
		disruption["consolidateAfter"] = "0s"
		f.change(MoveConsolidateAfter, "spec.disruption.consolidateAfter", "added consolidateAfter: 0s, which v1 requires (consolidate as soon as possible, as v1beta1 did)")
	}
}

func (f *fixer) nodeClaim() {
	spec := childMap(f.fixed.Object, "spec")
	if spec == nil {
		return
	}
	f.kubelet(spec, "spec", MoveNodeClaimKubelet)
	f.nodeClassRef(spec, "spec")
}

// kubelet moves a kubelet block out of spec (at path) into the EC2NodeClass patch.
func (f *fixer) kubelet(spec map[string]any, path, move string) {
	k, ok := spec["kubelet"]
	if !ok {
		return
	}
	delete(spec, "kubelet")
	if ref := childMap(spec, "nodeClassRef"); ref != nil {
		f.fixed.NodeClassName, _ = ref["name"].(string)
	}
	kept, dropped := kubeletFields(k)
	if kept != nil {
		f.fixed.NodeClassPatch = map[string]any{"spec": map[string]any{"kubelet": kept}}
	}
	name := f.fixed.NodeClassName
	if name == "" {
		name = "<nodeClassRef.name>"
	}
	f.change(move, path+".kubelet", "moved kubelet to spec.kubelet of EC2NodeClass %q", name)
	if len(dropped) > 0 {
		f.change(move, path+".kubelet", "left out kubelet fields Karpenter never applied: %s", strings.Join(dropped, ", "))
	}
}

// kubeletFields keeps the kubelet settings Karpenter's v1beta1 NodePool applied (the
// same set v1.0's EC2NodeClass knows) and names the rest, which were dropped all along.
func kubeletFields(k any) (kept any, dropped []string) {
	m, ok := k.(map[string]any)
	if !ok {
		// A placeholder or a malformed value moves as it is; Validate judges it there.
		return k, nil
	}
	c, err := lookup(V1_0, groupVersionKind{group: GroupAWS, version: "v1", kind: "EC2NodeClass"})
	if err != nil || c == nil {
		return m, nil
	}
	s := schemaAt(c.structural, []string{"spec", "kubelet"})
	if s == nil {
		return m, nil
	}
	kept = normalize(m, 0)
	for _, p := range pruning.PruneWithOptions(kept, s, false, prunePaths()) {
		dropped = append(dropped, dottedPath(p))
	}
	sort.Strings(dropped)
	return kept, dropped
}

func (f *fixer) nodeClassRef(spec map[string]any, path string) {
	ref := childMap(spec, "nodeClassRef")
	if ref == nil {
		return
	}
	path += ".nodeClassRef"
	group := GroupAWS
	if av, ok := ref["apiVersion"].(string); ok {
		if g, _, found := strings.Cut(av, "/"); found && g != "" {
			group = g
		}
		delete(ref, "apiVersion")
		f.change(MoveNodeClassRef, path+".apiVersion", "removed nodeClassRef.apiVersion: %s (v1 names the group instead)", av)
	}
	switch g, _ := ref["group"].(string); {
	case g == "":
		ref["group"] = group
		f.change(MoveNodeClassRef, path+".group", "set nodeClassRef.group: %s", group)
	case strings.Contains(g, "/") && !cluster.IsUnknown(g):
		ref["group"], _, _ = strings.Cut(g, "/")
		f.change(MoveNodeClassRef, path+".group", "set nodeClassRef.group: %s (was %s; the group has no version)", ref["group"], g)
	}
	if k, _ := ref["kind"].(string); k == "" {
		ref["kind"] = "EC2NodeClass"
		f.change(MoveNodeClassRef, path+".kind", "set nodeClassRef.kind: EC2NodeClass")
	}
}

func (f *fixer) nodeClass() {
	spec := childMap(f.fixed.Object, "spec")
	if spec == nil {
		return
	}
	if terms, _ := spec["amiSelectorTerms"].([]any); len(terms) == 0 {
		family, _ := spec["amiFamily"].(string)
		if alias, ok := familyAlias[family]; ok {
			spec["amiSelectorTerms"] = []any{map[string]any{"alias": alias + "@latest"}}
			f.change(MoveAMISelectorTerms, "spec.amiSelectorTerms", "added amiSelectorTerms: [{alias: %s@latest}] for amiFamily: %s", alias, family)
		}
	}
	if p, ok := spec["instanceProfile"].(string); ok && strings.HasPrefix(p, "arn:") && !cluster.IsUnknown(p) {
		name := instanceProfileName(p)
		spec["instanceProfile"] = name
		f.change("", "spec.instanceProfile", "set instanceProfile: %s (the name in %s)", name, p)
	}
}

// ApplyMergePatch applies a JSON merge patch (RFC 7386) to a copy of doc
// (cluster.MergePatch).
func ApplyMergePatch(doc, patch map[string]any) map[string]any { return cluster.MergePatch(doc, patch) }

func childMap(m map[string]any, key string) map[string]any {
	if m == nil {
		return nil
	}
	c, _ := m[key].(map[string]any)
	return c
}

func ensureMap(m map[string]any, key string) map[string]any {
	if c, ok := m[key].(map[string]any); ok {
		return c
	}
	c := map[string]any{}
	m[key] = c
	return c
}

func prunePaths() structuralschema.UnknownFieldPathOptions {
	return structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}
}
