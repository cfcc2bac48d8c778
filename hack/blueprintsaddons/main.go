// Command blueprintsaddons extracts, from a git clone of
// aws-ia/terraform-aws-eks-blueprints-addons, what each release of the module
// creates for each add-on it can enable: the Helm release (name, namespace, chart,
// repository, default chart version, wait, the values it sets itself) and the IAM
// role for the service account. It writes the catalog file eksdoctor models the
// module from:
//
//	go run ./hack/blueprintsaddons GIT_DIR > catalog/modules/eks-blueprints-addons.yaml
//
// Consecutive releases that create the same things share one entry.
package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"go.yaml.in/yaml/v3"
)

type addon struct {
	From            string   `yaml:"from"`
	To              string   `yaml:"to"`
	Commit          string   `yaml:"commit"`
	Module          string   `yaml:"module"`
	Input           string   `yaml:"input"`
	Enable          string   `yaml:"enable"`
	Release         string   `yaml:"release"`
	Namespace       string   `yaml:"namespace"`
	Chart           string   `yaml:"chart"`
	Repository      string   `yaml:"repository,omitempty"`
	Version         string   `yaml:"version,omitempty"`
	Wait            *bool    `yaml:"wait,omitempty"`
	CreateNamespace *bool    `yaml:"createNamespace,omitempty"`
	Set             []setVal `yaml:"set,omitempty"`
	IRSA            []string `yaml:"irsa,omitempty"`
	// Flags are the defaults of the module's boolean variables that the when
	// conditions of Set name.
	Flags map[string]bool `yaml:"flags,omitempty"`
}

type setVal struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
	// Input names the attribute of the add-on's input that overrides Value, the
	// default (try(var.<input>.<Input>, Value)).
	Input string `yaml:"input,omitempty"`
	// When names a boolean variable of the module the entry depends on: "F"
	// when it is set only if var.F is true, "!F" only if false.
	When string `yaml:"when,omitempty"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: blueprintsaddons GIT_DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	out, err := git(dir, "tag")
	if err != nil {
		fail(err)
	}
	var tags []string
	for _, t := range strings.Fields(string(out)) {
		if regexp.MustCompile(`^v1\.\d+\.\d+$`).MatchString(t) {
			tags = append(tags, t)
		}
	}
	sort.Slice(tags, func(i, j int) bool { return less(tags[i], tags[j]) })
	// Per add-on, the ranges of releases that create the same thing.
	byModule := map[string][]addon{}
	for _, t := range tags {
		src, err := git(dir, "show", t+":main.tf")
		if err != nil {
			fail(err)
		}
		commit, _ := git(dir, "rev-list", "-n1", t)
		vars, _ := git(dir, "show", t+":variables.tf")
		as, err := extract(src, boolDefaults(vars))
		if err != nil {
			fail(fmt.Errorf("%s: %w", t, err))
		}
		v := strings.TrimPrefix(t, "v")
		for _, a := range as {
			a.From, a.To, a.Commit = v, v, strings.TrimSpace(string(commit))
			rs := byModule[a.Module]
			if n := len(rs); n > 0 && same(rs[n-1], a) {
				rs[n-1].To = v
				continue
			}
			byModule[a.Module] = append(rs, a)
		}
	}
	var rels []addon
	var names []string
	for n := range byModule {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		rels = append(rels, byModule[n]...)
	}
	var b bytes.Buffer
	b.WriteString("# What aws-ia/terraform-aws-eks-blueprints-addons (registry aws-ia/eks-blueprints-addons/aws)\n")
	b.WriteString("# creates for each add-on it can enable, by release: extracted from the module's main.tf at each\n")
	b.WriteString("# release tag (the commit of the first tag of each range is given) by hack/blueprintsaddons.\n")
	b.WriteString("# input is the variable that overrides the add-on (var.<input>.chart_version, .namespace, .values,\n")
	b.WriteString("# .set ...); enable is the variable that turns it on; set lists the values the module sets itself\n")
	b.WriteString("# (value names a module fact: cluster_name, cluster_endpoint, region, queue_name, service_account,\n")
	b.WriteString("# node_instance_profile, or a literal); irsa the keys the IRSA role ARN is set under.\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	var versions []string
	for _, t := range tags {
		versions = append(versions, strings.TrimPrefix(t, "v"))
	}
	if err := enc.Encode(map[string]any{"source": "github.com/aws-ia/terraform-aws-eks-blueprints-addons", "releases": versions, "addons": rels}); err != nil {
		fail(err)
	}
	os.Stdout.Write(b.Bytes())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func git(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"--git-dir", dir}, args...)...)
	cmd.Stderr = os.Stderr
	return cmd.Output()
}

func less(a, b string) bool {
	pa, pb := strings.Split(strings.TrimPrefix(a, "v"), "."), strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := range pa {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x < y
		}
	}
	return false
}

// same compares what two releases create for an add-on.
func same(a, b addon) bool {
	a.From, a.To, a.Commit = "", "", ""
	b.From, b.To, b.Commit = "", "", ""
	x, _ := yaml.Marshal(a)
	y, _ := yaml.Marshal(b)
	return bytes.Equal(x, y)
}

// extract reads every eks-blueprints-addon module call of main.tf.
func extract(src []byte, flags map[string]bool) ([]addon, error) {
	f, diags := hclsyntax.ParseConfig(src, "main.tf", hcl.InitialPos)
	if diags.HasErrors() {
		return nil, diags
	}
	body := f.Body.(*hclsyntax.Body)
	locals := map[string]hcl.Expression{}
	for _, b := range body.Blocks {
		if b.Type == "locals" {
			for n, a := range b.Body.Attributes {
				locals[n] = a.Expr
			}
		}
	}
	text := func(e hcl.Expression) string {
		r := e.Range()
		return string(src[r.Start.Byte:r.End.Byte])
	}
	var out []addon
	for _, b := range body.Blocks {
		if b.Type != "module" || len(b.Labels) != 1 {
			continue
		}
		if s, ok := literal(attr(b, "source")); !ok || s != "aws-ia/eks-blueprints-addon/aws" {
			continue
		}
		a := addon{Module: b.Labels[0]}
		a.Enable = strings.TrimPrefix(text(attr(b, "create")), "var.")
		for _, f := range []struct {
			name string
			dst  *string
		}{{"name", &a.Release}, {"namespace", &a.Namespace}, {"chart", &a.Chart}, {"repository", &a.Repository}, {"chart_version", &a.Version}} {
			in, def := tryDefault(attr(b, f.name), locals)
			*f.dst = def
			if in != "" {
				a.Input = in
			}
		}
		for _, f := range []struct {
			name string
			dst  **bool
		}{{"wait", &a.Wait}, {"create_namespace", &a.CreateNamespace}} {
			if _, def := tryDefault(attr(b, f.name), locals); def == "true" || def == "false" {
				v := def == "true"
				*f.dst = &v
			}
		}
		a.Set = sets(attr(b, "set"), locals, text)
		for _, sv := range a.Set {
			if f := strings.TrimPrefix(sv.When, "!"); f != "" {
				if a.Flags == nil {
					a.Flags = map[string]bool{}
				}
				a.Flags[f] = flags[f]
			}
		}
		if t, ok := attr(b, "set_irsa_names").(*hclsyntax.TupleConsExpr); ok {
			for _, x := range t.Exprs {
				if s, ok := literal(x); ok {
					a.IRSA = append(a.IRSA, s)
				}
			}
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Module < out[j].Module })
	return out, nil
}

func attr(b *hclsyntax.Block, name string) hcl.Expression {
	if a, ok := b.Body.Attributes[name]; ok {
		return a.Expr
	}
	return nil
}

func literal(e hcl.Expression) (string, bool) {
	switch t := e.(type) {
	case *hclsyntax.TemplateExpr:
		if len(t.Parts) == 1 {
			if l, ok := t.Parts[0].(*hclsyntax.LiteralValueExpr); ok {
				return l.Val.AsString(), true
			}
		}
	case *hclsyntax.LiteralValueExpr:
		switch {
		case t.Val.Type().FriendlyName() == "bool":
			return strconv.FormatBool(t.Val.True()), true
		case t.Val.Type().FriendlyName() == "string":
			return t.Val.AsString(), true
		}
	}
	return "", false
}

// tryDefault reads try(var.INPUT.attr, DEFAULT), through a local, and returns INPUT
// and DEFAULT.
func tryDefault(e hcl.Expression, locals map[string]hcl.Expression) (string, string) {
	for depth := 0; e != nil && depth < 4; depth++ {
		switch t := e.(type) {
		case *hclsyntax.ScopeTraversalExpr:
			if t.Traversal.RootName() == "local" && len(t.Traversal) == 2 {
				if a, ok := t.Traversal[1].(hcl.TraverseAttr); ok {
					e = locals[a.Name]
					continue
				}
			}
			return "", ""
		case *hclsyntax.FunctionCallExpr:
			if (t.Name != "try" && t.Name != "lookup") || len(t.Args) < 2 {
				return "", ""
			}
			input := ""
			if st, ok := t.Args[0].(*hclsyntax.ScopeTraversalExpr); ok && st.Traversal.RootName() == "var" && len(st.Traversal) >= 2 {
				if a, ok := st.Traversal[1].(hcl.TraverseAttr); ok {
					input = a.Name
				}
			}
			def, _ := literal(t.Args[len(t.Args)-1])
			return input, def
		default:
			s, _ := literal(e)
			return "", s
		}
	}
	return "", ""
}

// facts names what a set value refers to, so that eksdoctor can fill it in.
var facts = map[string]string{
	"local.cluster_name": "cluster_name", "local.cluster_endpoint": "cluster_endpoint", "local.region": "region",
	"var.cluster_name": "cluster_name", "var.cluster_endpoint": "cluster_endpoint",
}

// sets reads the fixed part of set = concat([...], try(var.X.set, [])).
func sets(e hcl.Expression, locals map[string]hcl.Expression, text func(hcl.Expression) string) []setVal {
	var out []setVal
	var list []hcl.Expression
	switch t := e.(type) {
	case *hclsyntax.FunctionCallExpr:
		if t.Name == "concat" && len(t.Args) > 0 {
			list = append(list, t.Args[0])
		}
	case *hclsyntax.ScopeTraversalExpr:
		list = append(list, e)
	}
	for len(list) > 0 {
		x := list[0]
		list = list[1:]
		switch t := x.(type) {
		case *hclsyntax.ScopeTraversalExpr:
			if t.Traversal.RootName() == "local" && len(t.Traversal) == 2 {
				if a, ok := t.Traversal[1].(hcl.TraverseAttr); ok && locals[a.Name] != nil {
					list = append(list, locals[a.Name])
				}
			}
		case *hclsyntax.ForExpr:
			list = append(list, t.CollExpr)
		case *hclsyntax.TupleConsExpr:
			for _, item := range t.Exprs {
				o, ok := item.(*hclsyntax.ObjectConsExpr)
				if !ok {
					continue
				}
				var sv setVal
				var pending []setVal
				for _, it := range o.Items {
					k, _ := literal(it.KeyExpr)
					if k == "" {
						k = text(it.KeyExpr)
					}
					switch k {
					case "name":
						if n, ok := literal(it.ValueExpr); ok {
							sv.Name = n
						} else if alts := nameAlternatives(it.ValueExpr, locals); len(alts) == 2 {
							// A name chosen by a boolean variable: one entry per
							// choice, each with its condition.
							pending = append(pending, alts...)
						}
					case "value":
						if c, ok := it.ValueExpr.(*hclsyntax.ConditionalExpr); ok {
							if f := varName(c.Condition); f != "" {
								switch {
								case isNull(c.TrueResult):
									sv.When, sv.Value = "!"+f, factOf(c.FalseResult, text)
									continue
								case isNull(c.FalseResult):
									sv.When, sv.Value = f, factOf(c.TrueResult, text)
									continue
								}
							}
						}
						sv.Value = factOf(it.ValueExpr, text)
						if st, ok := it.ValueExpr.(*hclsyntax.ScopeTraversalExpr); ok && st.Traversal.RootName() == "local" {
							if in, def := tryDefault(st, locals); def != "" {
								sv.Value = def
								if fc, ok := locals[st.Traversal[1].(hcl.TraverseAttr).Name].(*hclsyntax.FunctionCallExpr); ok && in != "" {
									if t, ok := fc.Args[0].(*hclsyntax.ScopeTraversalExpr); ok && len(t.Traversal) == 3 {
										if a, ok := t.Traversal[2].(hcl.TraverseAttr); ok {
											sv.Input = a.Name
										}
									}
								}
							}
						}
					}
				}
				if sv.Name != "" {
					out = append(out, sv)
				}
				for _, alt := range pending {
					if sv.When != "" && sv.When != alt.When {
						continue // a value only set under the other choice
					}
					alt.Value, alt.Input = sv.Value, sv.Input
					out = append(out, alt)
				}
			}
		}
	}
	return out
}

func factOf(e hcl.Expression, text func(hcl.Expression) string) string {
	if s, ok := literal(e); ok {
		return s
	}
	t := strings.Join(strings.Fields(text(e)), " ")
	if f, ok := facts[t]; ok {
		return f
	}
	switch {
	case strings.Contains(t, "queue_name"):
		return "queue_name"
	case strings.Contains(t, "service_account"):
		return "service_account"
	case strings.Contains(t, "instance_profile"):
		return "node_instance_profile"
	case strings.Contains(t, "region"):
		return "region"
	case strings.Contains(t, "cluster_name"):
		return "cluster_name"
	case strings.Contains(t, "cluster_endpoint"):
		return "cluster_endpoint"
	case strings.Contains(t, "vpc_id"):
		return "vpc_id"
	}
	return "${" + t + "}"
}

// nameAlternatives reads a set name built from a local chosen by a boolean
// variable ("settings.${local.scope}clusterName" with scope = var.F ? "" :
// "aws."): the two names, each with its condition.
func nameAlternatives(e hcl.Expression, locals map[string]hcl.Expression) []setVal {
	t, ok := e.(*hclsyntax.TemplateExpr)
	if !ok {
		return nil
	}
	var prefix, suffix string
	var cond *hclsyntax.ConditionalExpr
	for _, part := range t.Parts {
		if l, ok := part.(*hclsyntax.LiteralValueExpr); ok {
			if cond == nil {
				prefix += l.Val.AsString()
			} else {
				suffix += l.Val.AsString()
			}
			continue
		}
		st, ok := part.(*hclsyntax.ScopeTraversalExpr)
		if !ok || cond != nil || st.Traversal.RootName() != "local" || len(st.Traversal) != 2 {
			return nil
		}
		a, ok := st.Traversal[1].(hcl.TraverseAttr)
		if !ok {
			return nil
		}
		if cond, ok = locals[a.Name].(*hclsyntax.ConditionalExpr); !ok {
			return nil
		}
	}
	if cond == nil {
		return nil
	}
	f := varName(cond.Condition)
	yes, ok1 := literal(cond.TrueResult)
	no, ok2 := literal(cond.FalseResult)
	if f == "" || !ok1 || !ok2 {
		return nil
	}
	return []setVal{{Name: prefix + yes + suffix, When: f}, {Name: prefix + no + suffix, When: "!" + f}}
}

// varName is F of a condition that is var.F alone.
func varName(e hcl.Expression) string {
	st, ok := e.(*hclsyntax.ScopeTraversalExpr)
	if !ok || st.Traversal.RootName() != "var" || len(st.Traversal) != 2 {
		return ""
	}
	if a, ok := st.Traversal[1].(hcl.TraverseAttr); ok {
		return a.Name
	}
	return ""
}

func isNull(e hcl.Expression) bool {
	l, ok := e.(*hclsyntax.LiteralValueExpr)
	return ok && l.Val.IsNull()
}

// boolDefaults reads the defaults of the boolean variables of a variables.tf.
func boolDefaults(src []byte) map[string]bool {
	out := map[string]bool{}
	f, diags := hclsyntax.ParseConfig(src, "variables.tf", hcl.InitialPos)
	if diags.HasErrors() {
		return out
	}
	for _, b := range f.Body.(*hclsyntax.Body).Blocks {
		if b.Type != "variable" || len(b.Labels) != 1 {
			continue
		}
		if d, ok := b.Body.Attributes["default"]; ok {
			if s, ok := literal(d.Expr); ok && (s == "true" || s == "false") {
				out[b.Labels[0]] = s == "true"
			}
		}
	}
	return out
}
