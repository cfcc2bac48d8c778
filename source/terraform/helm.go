package terraform

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"helm.sh/helm/v3/pkg/strvals"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/inputfs"
	"github.com/eksdoctor/eksdoctor/source/helm"
)

// helmRelease reads a helm_release the way the Helm provider builds the values it
// passes to Helm: every values document merged in order, then set, set_list and
// set_sensitive, each parsed like helm --set.
func (b *builder) helmRelease(r *resInst) {
	rel := &cluster.HelmRelease{
		Name:         str(r.vals["name"]),
		Namespace:    str(r.vals["namespace"]),
		Chart:        str(r.vals["chart"]),
		Repository:   str(r.vals["repository"]),
		Version:      str(r.vals["version"]),
		Values:       map[string]any{},
		ValueOrigins: map[string]cluster.Origin{},
		Origin:       r.origin,
		Address:      r.addr,
		DependsOn:    append([]string(nil), r.dependsOn...),
		Input:        r.input,
	}
	if rel.Namespace == "" && !r.unknown["namespace"] {
		rel.Namespace = "default"
	}
	if w, ok := boolOf(r.vals["wait"]); ok {
		rel.Wait = &w
	}
	rel.ChartDir = chartDir(b.fsys, rel.Chart, rel.Repository, r.dir)
	if rel.ChartDir != "" && b.fsys != nil {
		files, left, err := helm.ReadChart(b.fsys, rel.ChartDir)
		if err != nil {
			b.m.Problems = append(b.m.Problems, cluster.Problem{Origin: r.at("chart"), Message: fmt.Sprintf("the local chart %s of %s cannot be read: %s; it is described from the knowledge base if the chart is known there", rel.ChartDir, r.addr, err), Unresolved: true})
		} else {
			rel.ChartFiles = files
			b.m.Problems = append(b.m.Problems, helm.LeftOut(rel.ChartDir, left)...)
		}
	}

	if r.unknown["values"] && r.vals["values"] == nil || isWhollyUnknown(str(r.vals["values"])) {
		rel.Unknown = append(rel.Unknown, "values")
	}
	for i, v := range listOf(r.vals["values"]) {
		text, ok := v.(string)
		path := "values." + strconv.Itoa(i)
		if !ok || isWhollyUnknown(text) {
			rel.Unknown = append(rel.Unknown, "values["+strconv.Itoa(i)+"]")
			continue
		}
		org := r.textOrigin(path)
		vals, lines, err := decodeValues(text, org.Line)
		if err != nil {
			b.m.Problems = append(b.m.Problems, yamlProblem(org, "values["+strconv.Itoa(i)+"] of "+r.addr, text, err))
			continue
		}
		mergeValues(rel.Values, vals)
		if kl, ok := r.keyLines[path]; ok {
			lines = kl
			org = r.at(path)
		}
		for k, line := range lines {
			if r.flat {
				line = r.origin.Line
			}
			rel.ValueOrigins[k] = cluster.Origin{File: org.File, Line: line, Path: k}
		}
	}
	for _, kind := range []string{"set", "set_list", "set_sensitive"} {
		for i, s := range listOf(r.vals[kind]) {
			sm, ok := s.(map[string]any)
			if !ok {
				continue
			}
			name := str(sm["name"])
			if name == "" {
				continue
			}
			org := r.at(kind + "." + strconv.Itoa(i))
			value := sm["value"]
			if kind == "set_sensitive" {
				// The model is printed and shared; a secret stays where it was written.
				value = "(sensitive)"
			}
			if err := setValue(rel.Values, kind, name, value, str(sm["type"])); err != nil {
				b.m.Problems = append(b.m.Problems, cluster.Problem{Origin: org, Message: kind + " " + strconv.Quote(name) + " of " + r.addr + ": " + err.Error()})
				continue
			}
			// The path names the set entry rather than the key: a fix that renames
			// the key edits the entry, since set wins over every values document.
			key := setKey(name)
			if preset, _ := sm["module"].(bool); preset {
				// Set by the module that creates the release, not by the user.
				rel.Preset = append(rel.Preset, key)
				continue
			}
			rel.ValueOrigins[key] = cluster.Origin{File: org.File, Line: org.Line, Path: kind + "." + strconv.Itoa(i)}
		}
		if r.unknown[kind] {
			rel.Unknown = append(rel.Unknown, kind)
		}
	}
	b.m.HelmReleases = append(b.m.HelmReleases, rel)
}

// chartDir returns the chart directory of a release whose chart is a local path: one
// written as a path, or, without a repository, one that exists.
func chartDir(fsys *inputfs.FS, chart, repo, root string) string {
	if chart == "" || cluster.IsUnknown(chart) || strings.Contains(chart, "://") || (repo != "" && !cluster.IsUnknown(repo)) {
		return ""
	}
	p := chart
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, chart)
	}
	explicit := strings.HasPrefix(chart, "./") || strings.HasPrefix(chart, "../") || filepath.IsAbs(chart)
	if explicit {
		return p
	}
	if fsys == nil {
		return ""
	}
	if st, err := fsys.Stat(p); err == nil && (st.IsDir() || strings.HasSuffix(p, ".tgz")) {
		return p
	}
	return ""
}

// mergeValues merges src into dst as Helm merges values files: maps recursively, any
// other value replaced.
func mergeValues(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeValues(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// setValue applies one set/set_list/set_sensitive entry like helm --set (type auto),
// --set-string (type string) or --set-literal. Placeholders are protected so that
// the commas and braces in an unknown expression are not read as set syntax.
func setValue(dst map[string]any, kind, name string, value any, typ string) error {
	if kind == "set_list" {
		var items []string
		for _, e := range listOf(value) {
			items = append(items, str(e))
		}
		if s, ok := value.(string); ok && isWhollyUnknown(s) {
			items = []string{s}
		}
		text, p := protect(name + "={" + strings.Join(items, ",") + "}")
		tmp := map[string]any{}
		if err := strvals.ParseInto(text, tmp); err != nil {
			return err
		}
		tmp, _ = p.restore(tmp).(map[string]any)
		mergeValues(dst, tmp)
		return nil
	}
	val := str(value)
	if value == nil {
		val = ""
	}
	text, p := protect(name + "=" + val)
	tmp := map[string]any{}
	var err error
	switch typ {
	case "string":
		err = strvals.ParseIntoString(text, tmp)
	case "literal":
		err = strvals.ParseLiteralInto(text, tmp)
	default:
		err = strvals.ParseInto(text, tmp)
	}
	if err != nil {
		return err
	}
	tmp, _ = p.restore(tmp).(map[string]any)
	mergeValues(dst, tmp)
	return nil
}

// setKey renders a set name as the dotted key the values origins use: escaped dots are
// part of a key ("nodeSelector.karpenter\.sh/controller" is
// "nodeSelector.karpenter.sh/controller"), list indexes become path elements.
func setKey(name string) string {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '\\' && i+1 < len(name):
			i++
			cur.WriteByte(name[i])
		case c == '.':
			parts = append(parts, cur.String())
			cur.Reset()
		case c == '[':
			parts = append(parts, cur.String())
			cur.Reset()
			j := strings.IndexByte(name[i:], ']')
			if j < 0 {
				cur.WriteString(name[i:])
				i = len(name)
				continue
			}
			parts = append(parts, name[i+1:i+j])
			i += j
			if i+1 < len(name) && name[i+1] == '.' {
				i++
			}
		default:
			cur.WriteByte(c)
		}
	}
	if cur.Len() > 0 {
		parts = append(parts, cur.String())
	}
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, ".")
}

// isKarpenterChart tells whether a release installs Karpenter.
func isKarpenterChart(rel *cluster.HelmRelease) bool {
	chart := strings.TrimSuffix(rel.Chart, "/")
	base := chart[strings.LastIndex(chart, "/")+1:]
	return base == "karpenter" || (strings.Contains(rel.Repository, "karpenter") && base != "karpenter-crd" && !strings.HasPrefix(base, "karpenter-crd"))
}

func sortReleases(rs []*cluster.HelmRelease) {
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Address < rs[j].Address })
}
