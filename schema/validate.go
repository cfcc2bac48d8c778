package schema

import (
	"context"
	"fmt"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// The API groups of Karpenter's custom resources.
const (
	GroupKarpenter = "karpenter.sh"
	GroupAWS       = "karpenter.k8s.aws"
)

// Validate checks a Karpenter object against the CRD schema of its own apiVersion, the
// way the API server would on create: v1beta1 objects against Karpenter v0.37.7, v1
// objects (and NodeOverlay v1alpha1) against the current CRDs. It reports the fields
// the API server would drop, the values it would reject, and the v1beta1 → v1 moves
// behind them. v1alpha5 kinds (Provisioner, AWSNodeTemplate, Machine) are reported as
// removed. Objects of other groups, and Karpenter versions no release serves, give nil.
func Validate(obj *cluster.Object) []Violation {
	gvk, ok := objectGVK(obj)
	if !ok {
		return nil
	}
	if v, ok := removedKind(gvk); ok {
		return []Violation{v}
	}
	r := releaseOf(gvk)
	c, err := lookup(r, gvk)
	if err != nil {
		return []Violation{unchecked(err)}
	}
	if c == nil {
		return nil
	}
	return validateWith(obj, gvk, r, c)
}

// releaseOf is the release whose schema judges an object on its own terms: the last
// release storing its version.
func releaseOf(gvk groupVersionKind) Release {
	if gvk.version == "v1beta1" {
		return V0_37
	}
	return Current
}

// ValidateFor checks a Karpenter object against the CRDs of one release, as that
// release's API server would. An apiVersion the release does not serve is reported as
// Removed, followed by what validating the object under a served version reports (for
// a v1beta1 object and a v1-only release: every v1beta1 → v1 move it needs). Unknown
// fields that exist in a newer embedded release say so in their hint.
func ValidateFor(obj *cluster.Object, r Release) []Violation {
	gvk, ok := objectGVK(obj)
	if !ok {
		return nil
	}
	if v, ok := removedKind(gvk); ok {
		return []Violation{v}
	}
	if _, ok := releaseDir[r]; !ok {
		return []Violation{unchecked(fmt.Errorf("unknown Karpenter release %q", r))}
	}
	c, err := lookup(r, gvk)
	if err != nil {
		return []Violation{unchecked(err)}
	}
	if c != nil {
		return validateWith(obj, gvk, r, c)
	}
	if len(served(gvk)) == 0 {
		return nil
	}
	// The release does not serve this version: say so, then validate the object as the
	// version the release stores, which is what the user has to write instead.
	target := gvk
	target.version = "v1"
	removed := Violation{
		Path:    "apiVersion",
		Message: fmt.Sprintf("no matches for kind %q in version %q", gvk.kind, gvk.apiVersion()),
		Kind:    Removed,
		Hint: fmt.Sprintf("the %s CRDs do not serve %s: Karpenter 1.1 removed v1beta1 (1.0 served it only through its conversion webhooks); "+
			"write apiVersion: %s and make the v1 changes reported with it", releaseLabel(r), gvk.apiVersion(), target.apiVersion()),
		Move: MoveAPIVersion,
	}
	tc, err := lookup(r, target)
	if err != nil {
		return []Violation{removed, unchecked(err)}
	}
	if tc == nil {
		return []Violation{removed}
	}
	return append([]Violation{removed}, validateWith(obj, target, r, tc)...)
}

// IsKarpenter reports whether an object belongs to a Karpenter API group
// (karpenter.sh, karpenter.k8s.aws).
func IsKarpenter(obj *cluster.Object) bool {
	_, ok := objectGVK(obj)
	return ok
}

func objectGVK(obj *cluster.Object) (groupVersionKind, bool) {
	if obj == nil {
		return groupVersionKind{}, false
	}
	apiVersion, kind := obj.APIVersion, obj.Kind
	if apiVersion == "" {
		apiVersion, _ = obj.Content["apiVersion"].(string)
	}
	if kind == "" {
		kind, _ = obj.Content["kind"].(string)
	}
	group, version, ok := strings.Cut(apiVersion, "/")
	if !ok || (group != GroupKarpenter && group != GroupAWS) {
		return groupVersionKind{}, false
	}
	return groupVersionKind{group: group, version: version, kind: kind}, true
}

func unchecked(err error) Violation {
	return Violation{Message: "could not validate: " + err.Error(), Kind: Unchecked}
}

// validateWith runs the API server's create path on a copy of the object: coerce the
// metadata, prune unknown fields, drop nulls, apply defaults, then validate the
// metadata, the OpenAPI schema, list types and the CEL rules.
func validateWith(obj *cluster.Object, gvk groupVersionKind, r Release, c *compiled) []Violation {
	original := obj.Content
	p := prepare(original, gvk, c, false)
	u := p.stored

	var vs []Violation
	var errs field.ErrorList
	if p.metaErr != nil {
		errs = append(errs, field.Invalid(field.NewPath("metadata"), field.OmitValueType{}, p.metaErr.Error()))
	} else {
		errs = append(errs, validation.ValidateObjectMetaAccessor(&unstructured.Unstructured{Object: u}, false, validation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	}
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, u, c.validator)...)
	if c.embedded {
		errs = append(errs, schemaobjectmeta.Validate(nil, u, c.structural, false)...)
	}
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, c.structural, u)...)
	blocking := hasBlockingErr(errs)
	if c.cel != nil {
		celErrs, _ := c.cel.Validate(context.Background(), nil, u, celconfig.RuntimeCELCostBudget)
		for _, e := range celErrs {
			// The API server skips the rules while the object has structural errors; a
			// linter wants every finding at once, so it runs them and keeps the rules
			// that evaluated to false, dropping evaluations that failed on the broken
			// structure.
			if blocking && isEvaluationError(e) {
				continue
			}
			errs = append(errs, e)
		}
	}

	for _, up := range p.unknown {
		path := dottedPath(up)
		if cluster.IsUnknown(path) {
			continue
		}
		vs = append(vs, Violation{
			Path:     path,
			Message:  fmt.Sprintf("unknown field %q", up),
			Kind:     UnknownField,
			Accepted: true,
		})
	}
	for _, e := range errs {
		if e == nil {
			continue
		}
		path := dottedPath(e.Field)
		if c.dependsOnUnknown(original, e) {
			continue
		}
		k := kindOf(e.Type)
		if isBudgetError(e) {
			k = Unchecked
		}
		vs = append(vs, Violation{Path: path, Message: e.Error(), Kind: k})
	}
	vs = append(vs, extraRules(gvk, original)...)
	ctx := hintContext{gvk: gvk, release: r, original: original, stored: u, defaults: p.defaults}
	for i := range vs {
		ctx.explain(&vs[i])
	}
	return sortViolations(vs)
}

// prepared is an object as the API server would hold it just before validation.
type prepared struct {
	stored   map[string]any
	unknown  []string // the API server's paths of the fields it pruned
	metaErr  error    // metadata that does not decode into ObjectMeta
	defaults map[string]any
}

// prepare runs the API server's decoding steps on a copy of content, validated as gvk:
// metadata coercion, pruning of unknown fields, dropping of nulls, and defaulting
// (listing what was defaulted when withDefaults is set).
func prepare(content map[string]any, gvk groupVersionKind, c *compiled, withDefaults bool) prepared {
	u, _ := normalize(content, 0).(map[string]any)
	if u == nil {
		u = map[string]any{}
	}
	// Validate the object under the version being checked, as the API server only
	// ever sees one version.
	u["apiVersion"] = gvk.apiVersion()
	u["kind"] = gvk.kind

	var p prepared
	_, _, metaUnknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	p.metaErr = err
	p.unknown = append(metaUnknown, pruning.PruneWithOptions(u, c.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
	defaulting.PruneNonNullableNullsWithoutDefaults(u, c.structural)
	var before any
	if withDefaults {
		before = normalize(u, 0)
	}
	defaulting.Default(u, c.structural)
	if withDefaults {
		p.defaults = defaultedPaths(before, u, "")
	}
	p.stored = u
	return p
}

// hasBlockingErr mirrors the API server: these errors make it skip the CEL rules.
func hasBlockingErr(errs field.ErrorList) bool {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}

// isEvaluationError reports whether a CEL error says the rule could not be evaluated,
// rather than that it evaluated to false.
func isEvaluationError(e *field.Error) bool {
	if e.Type == field.ErrorTypeInternal {
		return true
	}
	d := e.Detail
	return strings.Contains(d, " evaluating rule: ") ||
		strings.Contains(d, "did not match a supported operator, function or macro signature") ||
		strings.HasPrefix(d, "rule compile error") ||
		strings.HasPrefix(d, "rule compiler initialization error")
}

func isBudgetError(e *field.Error) bool {
	return strings.Contains(e.Detail, "cost budget") || strings.Contains(e.Detail, "cost exceeds limit") ||
		strings.Contains(e.Detail, "runtime cost could not be calculated")
}
