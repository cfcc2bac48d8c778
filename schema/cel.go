package schema

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	apiextensionscel "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/environment"
)

// The CRDs' x-kubernetes-validations rules are compiled by apiextensions-apiserver
// (cel.Compile, the same environment and cost limits as the API server) and evaluated
// here rather than by its cel.Validator, for speed: that validator converts every
// property schema afresh each time a rule reads a field, and evaluates the same rules
// on the same small values (requirement keys, label maps, selector terms) in every
// object. Here the schema adaptors are built once, and a rule node's result for a
// small value is remembered. Evaluation, cost accounting and error wording follow
// the API server's validator; the conformance tests hold the two together against a
// real kube-apiserver.

// ruleValidator validates an object against the CEL rules of a schema.
type ruleValidator interface {
	Validate(ctx context.Context, fldPath *field.Path, obj any, budget int64) (field.ErrorList, int64)
}

// upstreamRules is apiextensions-apiserver's own validator, used for schemas this
// evaluator does not cover (rules under allOf).
type upstreamRules struct {
	v *apiextensionscel.Validator
	s *structuralschema.Structural
}

func (u upstreamRules) Validate(ctx context.Context, fldPath *field.Path, obj any, budget int64) (field.ErrorList, int64) {
	return u.v.Validate(ctx, fldPath, u.s, obj, nil, budget)
}

// newRuleValidator compiles the rules of a resource's root schema; nil when it has
// none.
func newRuleValidator(s *structuralschema.Structural) ruleValidator {
	if !hasRules(s) {
		return nil
	}
	if hasAllOfRules(s) {
		return upstreamRules{v: apiextensionscel.NewValidator(s, true, celconfig.PerCallLimit), s: s}
	}
	envSet := environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	return buildRuleNode(s, true, model.SchemaDeclType(s, true), envSet)
}

func hasRules(s *structuralschema.Structural) bool {
	if s == nil {
		return false
	}
	if len(s.XValidations) > 0 {
		return true
	}
	if s.Items != nil && hasRules(s.Items) {
		return true
	}
	if s.AdditionalProperties != nil && hasRules(s.AdditionalProperties.Structural) {
		return true
	}
	for _, p := range s.Properties {
		if hasRules(&p) {
			return true
		}
	}
	return s.ValueValidation != nil && len(s.ValueValidation.AllOf) > 0 && hasAllOfRules(s)
}

func hasAllOfRules(s *structuralschema.Structural) bool {
	if s == nil {
		return false
	}
	if s.ValueValidation != nil {
		for _, a := range s.ValueValidation.AllOf {
			if len(a.ValidationExtensions.XValidations) > 0 {
				return true
			}
		}
	}
	if hasAllOfRules(s.Items) {
		return true
	}
	if s.AdditionalProperties != nil && hasAllOfRules(s.AdditionalProperties.Structural) {
		return true
	}
	for _, p := range s.Properties {
		if hasAllOfRules(&p) {
			return true
		}
	}
	return false
}

// ruleNode holds the compiled rules of one schema node and the nodes below it that
// have rules.
type ruleNode struct {
	// sts is the node's schema, with apiVersion, kind and metadata at a resource root,
	// as the rules see self.
	sts        *structuralschema.Structural
	adaptor    common.Schema
	rules      []apiextensionsv1.ValidationRule
	compiled   []apiextensionscel.CompilationResult
	compileErr error
	usesOld    bool

	props      map[string]*ruleNode
	additional *ruleNode
	items      *ruleNode

	memo ruleMemo
}

// buildRuleNode mirrors how apiextensions-apiserver builds its validator tree: the
// declared CEL type of each property comes from its parent's, and properties whose
// type CEL cannot represent are left out as they are there.
func buildRuleNode(s *structuralschema.Structural, isRoot bool, declType *apiservercel.DeclType, envSet *environment.EnvSet) *ruleNode {
	if !hasRules(s) {
		return nil
	}
	n := &ruleNode{sts: s, rules: s.XValidations}
	if isRoot {
		n.sts = model.WithTypeAndObjectMeta(s)
	}
	n.adaptor = adapt(n.sts)
	if len(s.XValidations) > 0 {
		n.compiled, n.compileErr = apiextensionscel.Compile(s, declType, celconfig.PerCallLimit, envSet, apiextensionscel.StoredExpressionsEnvLoader())
		for _, c := range n.compiled {
			n.usesOld = n.usesOld || c.UsesOldSelf
		}
	}
	var elemType *apiservercel.DeclType
	if declType != nil {
		elemType = declType.ElemType
	}
	if s.Items != nil {
		n.items = buildRuleNode(s.Items, s.Items.XEmbeddedResource, elemType, envSet)
	}
	for k := range s.Properties {
		p := s.Properties[k]
		var fieldType *apiservercel.DeclType
		if escaped, ok := apiservercel.Escape(k); ok {
			if declType == nil {
				continue
			}
			f, ok := declType.Fields[escaped]
			if !ok {
				continue
			}
			fieldType = f.Type
		} else {
			fieldType = model.SchemaDeclType(&p, p.XEmbeddedResource)
			if fieldType == nil {
				continue
			}
		}
		if c := buildRuleNode(&p, p.XEmbeddedResource, fieldType, envSet); c != nil {
			if n.props == nil {
				n.props = map[string]*ruleNode{}
			}
			n.props[k] = c
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
		a := s.AdditionalProperties.Structural
		n.additional = buildRuleNode(a, a.XEmbeddedResource, elemType, envSet)
	}
	return n
}

// Validate evaluates the rules of the node and below against obj.
func (n *ruleNode) Validate(ctx context.Context, fldPath *field.Path, obj any, budget int64) (field.ErrorList, int64) {
	if n == nil || obj == nil {
		return nil, budget
	}
	errs, budget := n.validateExpressions(ctx, fldPath, obj, budget)
	if budget < 0 {
		return errs, budget
	}
	switch t := obj.(type) {
	case []any:
		if n.items == nil {
			return errs, budget
		}
		for i, e := range t {
			var more field.ErrorList
			more, budget = n.items.Validate(ctx, fldPath.Index(i), e, budget)
			errs = append(errs, more...)
			if budget < 0 {
				return errs, budget
			}
		}
	case map[string]any:
		// Keys in a stable order, so that running out of budget always stops at the
		// same rule.
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if n.additional != nil {
			for _, k := range keys {
				var more field.ErrorList
				more, budget = n.additional.Validate(ctx, fldPath.Key(k), t[k], budget)
				errs = append(errs, more...)
				if budget < 0 {
					return errs, budget
				}
			}
		}
		for _, k := range keys {
			c, ok := n.props[k]
			if !ok {
				continue
			}
			var more field.ErrorList
			more, budget = c.Validate(ctx, fldPath.Child(k), t[k], budget)
			errs = append(errs, more...)
			if budget < 0 {
				return errs, budget
			}
		}
	}
	return errs, budget
}

// validateExpressions evaluates the node's own rules, from the memo when the value is
// small enough to be remembered.
func (n *ruleNode) validateExpressions(ctx context.Context, fldPath *field.Path, obj any, budget int64) (field.ErrorList, int64) {
	if len(n.rules) == 0 {
		return nil, budget
	}
	key, memoable := memoKey(obj)
	if memoable {
		if r, ok := n.memo.get(key); ok && r.cost <= budget {
			return rebase(r.errs, fldPath), budget - r.cost
		}
	}
	// Evaluate at the root path, so the result is independent of where the value sits.
	errs, remaining := n.evaluate(ctx, nil, obj, budget)
	if memoable && remaining >= 0 {
		n.memo.put(key, memoResult{errs: errs, cost: budget - remaining})
	}
	return rebase(errs, fldPath), remaining
}

// evaluate runs the node's rules as the API server's validator does on create: rules
// that compare with oldSelf are skipped unless oldSelf is optional.
func (n *ruleNode) evaluate(ctx context.Context, fldPath *field.Path, obj any, budget int64) (errs field.ErrorList, remaining int64) {
	remaining = budget
	if n.compileErr != nil {
		return field.ErrorList{field.Invalid(fldPath, n.sts.Type, fmt.Sprintf("rule compiler initialization error: %v", n.compileErr))}, remaining
	}
	if len(n.compiled) == 0 {
		return nil, remaining
	}
	if remaining <= 0 {
		return field.ErrorList{field.Invalid(fldPath, n.sts.Type, "validation failed due to running out of cost budget, no further validation rules will be run")}, -1
	}
	self := common.UnstructuredToVal(obj, n.adaptor)
	activation := &ruleActivation{self: self}
	optional := &ruleActivation{self: self, hasOldSelf: true, oldSelf: types.OptionalNone}
	for i, compiled := range n.compiled {
		rule := n.rules[i]
		if compiled.Error != nil {
			errs = append(errs, field.Invalid(fldPath, n.sts.Type, fmt.Sprintf("rule compile error: %v", compiled.Error)))
			continue
		}
		if compiled.Program == nil {
			continue
		}
		optionalOldSelf := rule.OptionalOldSelf != nil && *rule.OptionalOldSelf
		if compiled.UsesOldSelf && !optionalOldSelf {
			// A transition rule: there is no existing object to compare with.
			continue
		}
		act := activation
		if optionalOldSelf {
			act = optional
		}
		result, details, err := compiled.Program.ContextEval(ctx, act)
		if details == nil {
			return append(errs, field.InternalError(fldPath, fmt.Errorf("runtime cost could not be calculated for validation rule: %v, no further validation rules will be run", ruleErrorString(rule)))), -1
		}
		cost := details.ActualCost()
		if cost == nil {
			return append(errs, field.Invalid(fldPath, n.sts.Type, fmt.Sprintf("runtime cost could not be calculated for validation rule: %v, no further validation rules will be run", ruleErrorString(rule)))), -1
		}
		if *cost > math.MaxInt64 || int64(*cost) > remaining {
			return append(errs, field.Invalid(fldPath, n.sts.Type, "validation failed due to running out of cost budget, no further validation rules will be run")), -1
		}
		remaining -= int64(*cost)
		if err != nil {
			switch {
			case strings.HasPrefix(err.Error(), "no such overload"):
				errs = append(errs, field.Invalid(fldPath, n.sts.Type, fmt.Sprintf("'%v': call arguments did not match a supported operator, function or macro signature for rule: %v", err, ruleErrorString(rule))))
			case strings.HasPrefix(err.Error(), "operation cancelled: actual cost limit exceeded"):
				return append(errs, field.Invalid(fldPath, n.sts.Type, fmt.Sprintf("'%v': no further validation rules will be run due to call cost exceeds limit for rule: %v", err, ruleErrorString(rule)))), -1
			default:
				errs = append(errs, field.Invalid(fldPath, n.sts.Type, fmt.Sprintf("%v evaluating rule: %v", err, ruleErrorString(rule))))
			}
			continue
		}
		if result == types.True {
			continue
		}
		at := fldPath
		if compiled.NormalizedRuleFieldPath != "" {
			at = at.Child(compiled.NormalizedRuleFieldPath)
		}
		detail, ok := "", false
		if compiled.MessageExpression != nil {
			var msgErr *apiservercel.Error
			detail, remaining, msgErr = evalMessageExpression(ctx, compiled.MessageExpression, rule.MessageExpression, activation, remaining)
			switch {
			case msgErr == nil:
				ok = true
			case msgErr.Type == apiservercel.ErrorTypeInternal:
				return append(errs, field.InternalError(at, msgErr)), -1
			case msgErr.Type == apiservercel.ErrorTypeInvalid:
				return append(errs, field.Invalid(at, n.sts.Type, msgErr.Error())), -1
			}
		}
		if !ok {
			detail = ruleMessageOrDefault(rule)
		}
		var value any = obj
		if n.sts.Type == "object" || n.sts.Type == "array" {
			value = field.OmitValueType{}
		}
		errs = append(errs, fieldErrorForReason(at, value, detail, rule.Reason))
	}
	return errs, remaining
}

// ruleActivation resolves self (and oldSelf for rules where it is optional).
type ruleActivation struct {
	self, oldSelf ref.Val
	hasOldSelf    bool
}

func (a *ruleActivation) ResolveName(name string) (any, bool) {
	switch name {
	case apiextensionscel.ScopedVarName:
		return a.self, true
	case apiextensionscel.OldScopedVarName:
		return a.oldSelf, a.hasOldSelf
	}
	return nil, false
}

func (a *ruleActivation) Parent() interpreter.Activation { return nil }

func ruleErrorString(rule apiextensionsv1.ValidationRule) string {
	if len(rule.Message) > 0 {
		return strings.TrimSpace(rule.Message)
	}
	return strings.TrimSpace(rule.Rule)
}

func ruleMessageOrDefault(rule apiextensionsv1.ValidationRule) string {
	if len(rule.Message) == 0 {
		return fmt.Sprintf("failed rule: %s", ruleErrorString(rule))
	}
	return strings.TrimSpace(rule.Message)
}

func fieldErrorForReason(fldPath *field.Path, value any, detail string, reason *apiextensionsv1.FieldValueErrorReason) *field.Error {
	if reason == nil {
		return field.Invalid(fldPath, value, detail)
	}
	switch *reason {
	case apiextensionsv1.FieldValueForbidden:
		return field.Forbidden(fldPath, detail)
	case apiextensionsv1.FieldValueRequired:
		return field.Required(fldPath, detail)
	case apiextensionsv1.FieldValueDuplicate:
		return field.Duplicate(fldPath, value)
	default:
		return field.Invalid(fldPath, value, detail)
	}
}

var newlines = regexp.MustCompile(`[\n]+`)

// evalMessageExpression evaluates a rule's messageExpression with the API server's
// limits and wording.
func evalMessageExpression(ctx context.Context, expr celgo.Program, src string, activation interpreter.Activation, remaining int64) (string, int64, *apiservercel.Error) {
	result, details, err := expr.ContextEval(ctx, activation)
	if details == nil || details.ActualCost() == nil {
		return "", -1, &apiservercel.Error{Type: apiservercel.ErrorTypeInternal, Detail: fmt.Sprintf("runtime cost could not be calculated for messageExpression: %q", src)}
	}
	cost := *details.ActualCost()
	if cost > math.MaxInt64 || int64(cost) > remaining {
		return "", -1, &apiservercel.Error{Type: apiservercel.ErrorTypeInvalid, Detail: "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run"}
	}
	remaining -= int64(cost)
	if err != nil {
		if strings.HasPrefix(err.Error(), "operation cancelled: actual cost limit exceeded") {
			return "", -1, &apiservercel.Error{Type: apiservercel.ErrorTypeInvalid, Detail: fmt.Sprintf("no further validation rules will be run due to call cost exceeds limit for messageExpression: %q", src)}
		}
		return "", remaining, &apiservercel.Error{Detail: fmt.Sprintf("messageExpression evaluation failed due to: %v", err.Error())}
	}
	msg, ok := result.Value().(string)
	if !ok {
		return "", remaining, &apiservercel.Error{Detail: "messageExpression failed to convert to string"}
	}
	msg = strings.TrimSpace(msg)
	switch {
	case len(msg) > celconfig.MaxEvaluatedMessageExpressionSizeBytes:
		return "", remaining, &apiservercel.Error{Detail: fmt.Sprintf("messageExpression beyond allowable length of %d", celconfig.MaxEvaluatedMessageExpressionSizeBytes)}
	case newlines.MatchString(msg):
		return "", remaining, &apiservercel.Error{Detail: "messageExpression should not contain line breaks"}
	case msg == "":
		return "", remaining, &apiservercel.Error{Detail: "messageExpression should evaluate to a non-empty string"}
	}
	return msg, remaining, nil
}

// rebase moves errors evaluated at the root path to where the value sits.
func rebase(errs field.ErrorList, at *field.Path) field.ErrorList {
	if len(errs) == 0 {
		return nil
	}
	out := make(field.ErrorList, len(errs))
	for i, e := range errs {
		c := *e
		if e.Field != "<nil>" && e.Field != "" {
			c.Field = at.Child(e.Field).String()
		} else {
			c.Field = at.String()
		}
		out[i] = &c
	}
	return out
}

// The memo remembers a rule node's result per value. Rules are pure functions of
// self (transition rules never run here), so the result for an equal value is the
// same, and so is its cost, which is charged again on a hit.

// memoLimit bounds the remembered values per node; beyond it nothing new is stored.
const memoLimit = 4096

// memoMaxKey bounds the size of a remembered value: large values (a whole spec) are
// rarely equal and costly to key.
const memoMaxKey = 512

type memoResult struct {
	errs field.ErrorList
	cost int64
}

type ruleMemo struct {
	mu sync.RWMutex
	m  map[string]memoResult
}

func (m *ruleMemo) get(key string) (memoResult, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	r, ok := m.m[key]
	return r, ok
}

func (m *ruleMemo) put(key string, r memoResult) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]memoResult{}
	}
	if len(m.m) < memoLimit {
		m.m[key] = r
	}
}

// memoKey encodes a small value canonically (map keys sorted, types tagged); ok is
// false when the value is too large to remember.
func memoKey(v any) (string, bool) {
	var b strings.Builder
	if !encodeKey(&b, v, 0) || b.Len() > memoMaxKey {
		return "", false
	}
	return b.String(), true
}

func encodeKey(b *strings.Builder, v any, depth int) bool {
	if b.Len() > memoMaxKey || depth > maxDepth {
		return false
	}
	switch t := v.(type) {
	case nil:
		b.WriteByte('n')
	case bool:
		if t {
			b.WriteByte('T')
		} else {
			b.WriteByte('F')
		}
	case string:
		b.WriteByte('s')
		b.WriteString(strconv.Quote(t))
	case int64:
		b.WriteByte('i')
		b.WriteString(strconv.FormatInt(t, 10))
	case float64:
		b.WriteByte('f')
		b.WriteString(strconv.FormatFloat(t, 'g', -1, 64))
	case []any:
		b.WriteByte('[')
		for _, e := range t {
			if !encodeKey(b, e, depth+1) {
				return false
			}
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for _, k := range keys {
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			if !encodeKey(b, t[k], depth+1) {
				return false
			}
			b.WriteByte(',')
		}
		b.WriteByte('}')
	default:
		return false
	}
	return true
}

// schemaAdaptor presents a structural schema to the CEL value conversion with its
// children converted once, instead of on every field access.
type schemaAdaptor struct {
	*model.Structural
	props      map[string]common.Schema
	items      common.Schema
	additional common.SchemaOrBool
}

func adapt(s *structuralschema.Structural) *schemaAdaptor {
	a := &schemaAdaptor{Structural: &model.Structural{Structural: s}}
	if s.Properties != nil {
		a.props = make(map[string]common.Schema, len(s.Properties))
		for k := range s.Properties {
			p := s.Properties[k]
			a.props[k] = adapt(&p)
		}
	}
	if s.Items != nil {
		a.items = adapt(s.Items)
	}
	if s.AdditionalProperties != nil {
		ap := &additionalAdaptor{allows: s.AdditionalProperties.Bool}
		if s.AdditionalProperties.Structural != nil {
			ap.schema = adapt(s.AdditionalProperties.Structural)
		}
		a.additional = ap
	}
	return a
}

// Properties is shared, not copied: the CEL value conversion only reads it.
func (a *schemaAdaptor) Properties() map[string]common.Schema { return a.props }

func (a *schemaAdaptor) Items() common.Schema {
	if a.items == nil {
		return nil
	}
	return a.items
}

func (a *schemaAdaptor) AdditionalProperties() common.SchemaOrBool {
	if a.additional == nil {
		return nil
	}
	return a.additional
}

func (a *schemaAdaptor) WithTypeAndObjectMeta() common.Schema {
	return adapt(model.WithTypeAndObjectMeta(a.Structural.Structural))
}

type additionalAdaptor struct {
	schema *schemaAdaptor
	allows bool
}

func (a *additionalAdaptor) Schema() common.Schema {
	if a.schema == nil {
		return nil
	}
	return a.schema
}

func (a *additionalAdaptor) Allows() bool { return a.allows }
