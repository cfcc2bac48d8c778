package lint

import (
	"fmt"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/schema"
	"github.com/eksdoctor/eksdoctor/write"
)

var karpenterSchema = &Check{
	ID:       "karpenter-schema",
	Title:    "Karpenter object invalid for its apiVersion",
	Family:   "all",
	Severity: Error,
	Doc: Doc{
		What: "A NodePool, EC2NodeClass or NodeClaim does not validate against the CRD schema of its apiVersion (the CRDs Karpenter ships, embedded in eksdoctor): unknown or moved fields, missing required fields, values the CRD's rules reject, removed v1alpha5 kinds. The v1beta1 → v1 moves are explained: kubelet moved to the EC2NodeClass, expireAfter to the template, consolidateAfter became required, nodeClassRef needs group and kind, amiSelectorTerms became required.",
		Why:  "The API server rejects invalid objects at apply time — or, worse, silently drops unknown fields: a v1 NodePool that still carries spec.template.spec.kubelet is accepted and its kubelet settings (maxPods, reservations, eviction thresholds) stop applying without a word. An EC2NodeClass without amiSelectorTerms never becomes Ready and every NodePool using it is ignored.",
		Fix:  "Move each field where the apiVersion expects it. The proposed fix rewrites the object (and the EC2NodeClass, for kubelet settings) mechanically where no decision is needed; the result validates clean.",
	},
	Run: runKarpenterSchema,
}

func runKarpenterSchema(p *Pass) {
	classes := map[string]*cluster.Object{}
	for _, o := range p.Model.Objects {
		if o.Kind == "EC2NodeClass" {
			classes[o.Name] = o
		}
	}
	// Validate against the CRDs of the Karpenter release in use when the inputs
	// say which (a chart version or an image tag): v1beta1 objects are then
	// reported as not served by 1.1 and later. Otherwise each object is judged by
	// its own apiVersion.
	release, pinned := schema.Release(""), false
	known := false // the version in use is known, not inferred from an apiVersion
	if k := p.Model.Karpenter; k.Version != "" && !strings.HasPrefix(k.VersionFrom, "apiVersion ") {
		release, pinned = schema.ReleaseFor(k.Version)
		known = true
	}
	for _, o := range p.Model.Objects {
		if o.Manager == "cluster" {
			// The API server has already validated (and pruned) what it stores.
			continue
		}
		if o.IgnoredNamespace != "" && schema.IsKarpenter(o) {
			p.Report(Finding{
				Severity: Info,
				Object:   o.Ref(),
				Origin:   o.At("metadata.namespace"),
				Summary:  fmt.Sprintf("%s is cluster-scoped: its metadata.namespace %q is ignored (the API server clears it on create)", o.Ref(), o.IgnoredNamespace),
			})
		}
		var vs []schema.Violation
		if pinned {
			vs = schema.ValidateFor(o, release)
		} else {
			vs = schema.Validate(o)
		}
		if len(vs) == 0 {
			continue
		}
		if vs[0].Move == schema.MoveV1alpha5 && (!pinned || schema.ServesV1alpha5(p.Model.Karpenter.Version)) {
			// v1alpha5 kinds are served by Karpenter up to v0.32, which the
			// inputs use (a version eksdoctor has no v1alpha5 schema for) or
			// may use: what its validating webhook refuses is judged.
			ws := schema.ValidateProvisioner(o)
			if len(ws) == 0 {
				if !known {
					p.Report(Finding{
						Severity: Info,
						Object:   o.Ref(),
						Origin:   o.Origin,
						Summary:  fmt.Sprintf("%s (%s) is served only by Karpenter v0.32 and earlier, and the Karpenter version in use is not known; it was not validated", o.Ref(), o.APIVersion),
						Detail:   vs[0].Hint,
					})
				}
				continue
			}
			vs = ws
		}
		var real []schema.Violation
		for _, v := range vs {
			if v.Kind != schema.Unchecked {
				real = append(real, v)
			}
		}
		if len(real) == 0 {
			p.Report(Finding{
				Severity: Info,
				Object:   o.Ref(),
				Origin:   o.Origin,
				Summary:  fmt.Sprintf("%s could not be validated completely: %s", o.Ref(), vs[0].Message),
			})
			continue
		}
		first := real[0]
		summary := fmt.Sprintf("%s is invalid for %s: %s", o.Ref(), o.APIVersion, first.Message)
		if len(real) > 1 {
			summary += fmt.Sprintf(" (and %d more)", len(real)-1)
		}
		var b strings.Builder
		for i, v := range real {
			if i > 0 {
				b.WriteString("\n")
			}
			b.WriteString("- " + v.Message)
			if v.Accepted {
				b.WriteString(" (the API server accepts the object and silently drops or ignores this)")
			}
			if v.Hint != "" {
				b.WriteString("\n  " + strings.ReplaceAll(v.Hint, "\n", "\n  "))
			}
		}
		p.Report(Finding{
			Object:  o.Ref(),
			Origin:  o.At(first.Path),
			Summary: summary,
			Detail:  b.String(),
			Fix:     schemaFix(p.Model, o, classes),
		})
	}
}

// schemaFix turns schema.Fix's rewrite into merge patches for the object and, when
// settings moved to it, the EC2NodeClass.
func schemaFix(m *cluster.Model, o *cluster.Object, classes map[string]*cluster.Object) *Fix {
	fx := schema.Fix(o)
	if fx.Object == nil || len(fx.Changes) == 0 {
		return nil
	}
	patch := diffPatch(o.Content, fx.Object)
	if len(patch) == 0 {
		return nil
	}
	var what []string
	for _, c := range fx.Changes {
		what = append(what, c.Description)
	}
	e, ok := write.ObjectPatch(m, o, patch)
	if !ok {
		return nil
	}
	f := &Fix{Summary: strings.Join(what, "; "), Edits: []Edit{e}}
	if fx.NodeClassPatch != nil {
		nc := classes[fx.NodeClassName]
		var ne Edit
		if nc != nil {
			ne, ok = write.ObjectPatch(m, nc, fx.NodeClassPatch)
		}
		switch {
		case nc != nil && ok:
			f.Edits = append(f.Edits, ne)
		case nc != nil:
			f.Summary += fmt.Sprintf("; add to EC2NodeClass %q: %s", fx.NodeClassName, strings.TrimSpace(yamlText(fx.NodeClassPatch)))
		default:
			f.Summary += fmt.Sprintf("; add to EC2NodeClass %q (not among the inputs): %s", fx.NodeClassName, strings.TrimSpace(yamlText(fx.NodeClassPatch)))
		}
	}
	return f
}

// diffPatch computes the JSON merge patch (RFC 7386) that turns from into to.
func diffPatch(from, to map[string]any) map[string]any {
	out := map[string]any{}
	keys := map[string]bool{}
	for k := range from {
		keys[k] = true
	}
	for k := range to {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		a, inFrom := from[k]
		b, inTo := to[k]
		switch {
		case !inTo:
			out[k] = nil
		case !inFrom:
			out[k] = b
		default:
			am, aok := a.(map[string]any)
			bm, bok := b.(map[string]any)
			if aok && bok {
				if sub := diffPatch(am, bm); len(sub) > 0 {
					out[k] = sub
				}
				continue
			}
			if !cluster.EqualJSON(a, b) {
				out[k] = b
			}
		}
	}
	return out
}
