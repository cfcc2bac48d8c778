package lint

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/textmatch"
	"github.com/eksdoctor/eksdoctor/write"
)

var helmValuesUnknown = &Check{
	ID:       "helm-values-unknown",
	Title:    "Helm value the chart version never reads",
	Family:   "all",
	Severity: Warning,
	Doc: Doc{
		What: "A Helm release sets a values key that no template of the chart version reads, judged against the chart knowledge base (the default values of each version, copied from upstream, and the keys the templates read beyond them): `settings.interruptionQueueName` (read by no Karpenter version; v0.32 read `settings.aws.interruptionQueueName`, every later version `settings.interruptionQueue`), `settings.aws.*` on Karpenter v0.33 and later, `schedulerName` before Karpenter 1.1.1. The finding points at the line where the key is set, names the key the version reads instead when there is one, and covers `values` documents, values files and `set` blocks. Keys a module or eksctl sets on the user's behalf (aws-ia/eks-blueprints-addons sets every Karpenter layout at once) are not the user's; they are reported only when the chart version reads none of them for a setting — the module sets a key the version never reads and leaves unset the key it reads for it, one level up or down (eks-blueprints-addons 1.10 with a v0.31 chart: `settings.clusterName`, not `settings.aws.clusterName`). Keys under maps the chart passes through whole (`nodeSelector`, `podAnnotations`, ...) are always read. When the chart version is not pinned, or is outside the versions the knowledge base describes, the keys are judged against the version assumed and reported once per release as info, never as a warning; charts the knowledge base does not know, or whose keys it does not list for that version, are not judged.",
		Why:  "Helm accepts any values and ignores the keys no template reads, so the setting silently has no effect: with `settings.interruptionQueueName`, Karpenter runs without interruption handling and spot interruptions, rebalance recommendations and scheduled maintenance terminate nodes without a drain; a misspelled `tolerations` key leaves the pods with the chart's defaults.",
		Fix:  "Rename the key to the one the chart version reads, or remove it. The proposed fix is written where the key is set: a values document appended to the release's `values` (which sets the old key to null and the new one to the same value), the values file, or the `name` of the `set` block.",
	},
	Run: runHelmValuesUnknown,
}

func runHelmValuesUnknown(p *Pass) {
	releases := append([]*cluster.HelmRelease(nil), p.Model.HelmReleases...)
	sort.SliceStable(releases, func(i, j int) bool {
		if releases[i].Origin.File != releases[j].Origin.File {
			return releases[i].Origin.File < releases[j].Origin.File
		}
		return releases[i].Origin.Line < releases[j].Origin.Line
	})
	for _, r := range releases {
		kb, ok := releaseChart(r)
		if !ok {
			continue
		}
		var unread []string
		for _, k := range valuesKeys(r.Values) {
			if slices.Contains(r.Preset, k) {
				if kb.Assumed == "" {
					reportPresetForOtherLayout(p, r, kb, k)
				}
				continue
			}
			if kb.ValuesKey(k) == catalog.ChartKeyUnread {
				unread = append(unread, k)
			}
		}
		if len(unread) == 0 {
			continue
		}
		if kb.Assumed != "" {
			// Judged against a version that may not be the one installed.
			p.Report(Finding{
				Severity: Info,
				Object:   releaseRef(r),
				Origin:   r.Origin,
				Summary:  fmt.Sprintf("%s: could not verify the values keys %s against the chart version installed", releaseLabel(r), strings.Join(unread, ", ")),
				Detail:   fmt.Sprintf("Chart %s: %s. That version does not read %s.", kb.Name, kb.Assumed, strings.Join(unread, ", ")),
			})
			continue
		}
		for _, k := range unread {
			reportUnreadKey(p, r, kb, k)
		}
	}
}

func releaseRef(r *cluster.HelmRelease) cluster.ObjectRef {
	return cluster.ObjectRef{Kind: "HelmRelease", Namespace: r.Namespace, Name: r.Name}
}

func releaseLabel(r *cluster.HelmRelease) string {
	if r.Address != "" {
		return r.Address
	}
	return fmt.Sprintf("release %q", r.Name)
}

// valuesKeys lists the dotted keys a values tree sets, down to its leaves (lists
// and scalars, empty maps), sorted. Null values remove a key in Helm, and keys
// not known before apply cannot be judged: both are left out.
func valuesKeys(values map[string]any) []string { return cluster.ValuesKeys(values) }

func reportUnreadKey(p *Pass, r *cluster.HelmRelease, kb *catalog.Chart, key string) {
	instead := readInstead(kb, key)
	origin, set := r.ValueOrigins[key]
	if !set || origin.File == "" {
		origin = r.Origin
	}
	fixKey := key
	if instead == "" && cluster.Lookup(r.Values, key) == nil {
		// A map key with dots in it ("karpenter.sh/controller") makes the
		// dotted path ambiguous: remove the unread parent, which is not.
		if parent := unreadParent(kb, key); parent != "" && cluster.Lookup(r.Values, parent) != nil {
			fixKey = parent
		}
	}
	fixInstead := instead
	if instead != "" {
		// Below a map the chart reads whole the rest is one key that may hold
		// dots (nodeSelector.kubernetes.io/os): move the whole map.
		if f := kb.FreeformPrefix(instead); f != "" {
			rest := strings.TrimPrefix(instead, f)
			if strings.HasSuffix(key, rest) && cluster.Lookup(r.Values, strings.TrimSuffix(key, rest)) != nil {
				fixKey, fixInstead = strings.TrimSuffix(key, rest), f
			}
		}
	}
	// A dependency of a wrapper chart reads its keys under the key the wrapper
	// passes it (its name or alias): that is what the user writes.
	shown, shownInstead := writtenAs(r, key), writtenAs(r, instead)
	fix := renameValueFix(r, kb, fixKey, fixInstead, origin)
	origin.Path = shown
	summary := fmt.Sprintf("%s sets %s, which chart %s %s never reads", releaseLabel(r), shown, kb.Name, kb.Version)
	var b strings.Builder
	fmt.Fprintf(&b, "No template of chart %s %s reads %s; Helm ignores values no template reads, so the setting has no effect.", kb.Name, kb.Version, shown)
	if r.Parent != "" {
		fmt.Fprintf(&b, "\nThe chart is a dependency of the chart the release installs, which passes it only the values under %s.", r.Parent)
	}
	if instead != "" {
		summary += "; it reads " + shownInstead
		fmt.Fprintf(&b, "\nThis version reads %s instead.", shownInstead)
		if c := unreadConsequences[kb.Name][instead]; c != "" && cluster.Lookup(r.Values, instead) == nil {
			b.WriteString(" " + c)
		}
	} else if parent := unreadParent(kb, key); parent != "" && parent != key {
		fmt.Fprintf(&b, "\nThe version reads nothing under %s.", parent)
	}
	p.Report(Finding{
		Object:  releaseRef(r),
		Origin:  origin,
		Summary: summary,
		Detail:  b.String(),
		Fix:     fix,
	})
}

// unreadConsequences say what is lost when a well-known setting goes to a key
// the chart does not read, by chart and by the key it reads instead (FACTS.md,
// "Helm values key sanity").
var unreadConsequences = map[string]map[string]string{
	"karpenter": {
		"settings.interruptionQueue": "Without it Karpenter does no interruption handling: Spot interruption warnings, scheduled maintenance events and instance stop or termination events reach no one, and the nodes go away without being cordoned and drained first.",
		"settings.clusterName":       "Karpenter v0.32 and later require it and do not start without it.",
		"settings.clusterEndpoint":   "It is optional: without it Karpenter discovers the endpoint itself.",
	},
}

// unreadParent is the shortest prefix of key the chart does not read.
func unreadParent(kb *catalog.Chart, key string) string {
	parts := strings.Split(key, ".")
	for i := 1; i <= len(parts); i++ {
		p := strings.Join(parts[:i], ".")
		if kb.ValuesKey(p) == catalog.ChartKeyUnread {
			return p
		}
	}
	return ""
}

// readInstead finds the one key the chart version reads that the unread key was
// meant to be: the same name one level up (settings.aws.clusterName →
// settings.clusterName), a name that extends or shortens it
// (settings.interruptionQueueName → settings.interruptionQueue), or a near
// spelling. "" when there is no single candidate.
func readInstead(kb *catalog.Chart, key string) string {
	known := map[string]bool{}
	for _, k := range kb.ValuesKeys() {
		known[k] = true
	}
	parts := strings.Split(key, ".")
	leaf := parts[len(parts)-1]
	var parents []string
	if len(parts) > 1 {
		parents = append(parents, strings.Join(parts[:len(parts)-1], "."))
	} else {
		parents = append(parents, "")
	}
	for i := 0; i < len(parts)-1; i++ {
		rest := append(append([]string(nil), parts[:i]...), parts[i+1:len(parts)-1]...)
		parents = append(parents, strings.Join(rest, "."))
	}
	for _, parent := range parents {
		var found []string
		for k := range known {
			kp, kl := splitKey(k)
			if kp != parent || k == key || kb.ValuesKey(k) != catalog.ChartKeyRead {
				continue
			}
			if kl == leaf || relatedName(leaf, kl) {
				found = append(found, k)
			}
		}
		if len(found) == 1 {
			return found[0]
		}
		if len(found) > 1 {
			return ""
		}
	}
	return ""
}

func splitKey(k string) (parent, leaf string) {
	i := strings.LastIndexByte(k, '.')
	if i < 0 {
		return "", k
	}
	return k[:i], k[i+1:]
}

// relatedName: one name extends the other by a short word
// (interruptionQueueName, interruptionQueue), or is a misspelling of it.
func relatedName(a, b string) bool {
	if len(a) < 4 || len(b) < 4 || a == b {
		return false
	}
	la, lb := strings.ToLower(a), strings.ToLower(b)
	if la == lb {
		return true
	}
	short, long := la, lb
	if len(short) > len(long) {
		short, long = long, short
	}
	if strings.HasPrefix(long, short) && len(long)-len(short) <= 5 && len(short) >= 6 {
		return true
	}
	return len(short) >= 6 && textmatch.Distance(la, lb) <= 2
}

// renameValueFix renames (or, with instead empty, removes) a values key where
// the user set it.
func renameValueFix(r *cluster.HelmRelease, kb *catalog.Chart, key, instead string, origin cluster.Origin) *Fix {
	// Written where the user wrote them: under a wrapper chart's dependency
	// key, the stray keys at the top level.
	at, to := writtenAs(r, key), writtenAs(r, instead)
	summary := "remove " + at
	if instead != "" {
		summary = fmt.Sprintf("rename %s to %s", at, to)
	}
	if write.FromPlan(r) {
		// A plan: the configuration it came from is not among the inputs.
		return nil
	}
	if fromSetBlock(origin) {
		// Set with a set block, which wins over every values document: rename
		// the block's name. Removing a block is not an edit fixes make.
		if instead == "" {
			return nil
		}
		return &Fix{Summary: summary + " in the set block", Edits: []Edit{write.SetBlockName(origin, instead)}}
	}
	value := cluster.Lookup(r.Values, key)
	patch := map[string]any{}
	// Remove the emptied maps too: a map left empty is still a key Helm
	// passes (and one no template reads).
	at = strings.TrimSuffix(at, key) + removalPoint(kb, r.Values, key)
	setPath(patch, at, nil)
	if to != "" {
		setPath(patch, to, cluster.CopyJSON(value))
	}
	if instead == "" || !containsUnknown(value) {
		// A values file the release reads: merge the change into it.
		if e, ok := write.ValuesFile(r, origin, patch); ok {
			return &Fix{Summary: summary + " in " + origin.File, Edits: []Edit{e}}
		}
	}
	return releaseValuesFix(summary+" in the release's values", r, patch)
}

// writtenAs is a values key of a release as the user writes it: a wrapper
// chart's dependency reads its keys under the key the wrapper passes it,
// except the stray top-level keys carried to it (a key the chart reads is
// never under a stray one). "" stays "".
func writtenAs(r *cluster.HelmRelease, key string) string {
	if r.Parent == "" || key == "" || slices.Contains(r.Stray, strings.SplitN(key, ".", 2)[0]) {
		return key
	}
	return r.Parent + "." + key
}

// removalPoint is the key to remove so that removing key leaves no empty map
// behind: its highest ancestor that holds nothing else and that the chart does
// not read (null on a key the chart reads would drop the chart's defaults).
func removalPoint(kb *catalog.Chart, values map[string]any, key string) string {
	parts := strings.Split(key, ".")
	for len(parts) > 1 {
		up := strings.Join(parts[:len(parts)-1], ".")
		parent, ok := cluster.Lookup(values, up).(map[string]any)
		if !ok || len(parent) != 1 || kb.ValuesKey(up) != catalog.ChartKeyUnread {
			break
		}
		parts = parts[:len(parts)-1]
	}
	return strings.Join(parts, ".")
}

// containsUnknown reports whether a value holds a value not known before apply.
func containsUnknown(v any) bool {
	switch t := v.(type) {
	case string:
		return cluster.IsUnknown(t)
	case map[string]any:
		for _, x := range t {
			if containsUnknown(x) {
				return true
			}
		}
	case []any:
		for _, x := range t {
			if containsUnknown(x) {
				return true
			}
		}
	}
	return false
}

// ---- Helm values as a fix format ----

// releaseFieldEdit renders a pod spec change of a workload a Helm release
// installs as the values to add to the release, at the values key of the chart
// component (tolerations, controller.tolerations, ...). List items are appended
// to the list the release renders today (the user's, else the chart default),
// since a values list replaces the chart's whole.
func releaseFieldEdit(m *cluster.Model, w *cluster.Workload, c PodChange) (Edit, string, bool) {
	r := w.Release
	if r == nil {
		return Edit{}, "", false
	}
	kb, ok := releaseChart(r)
	if !ok {
		return Edit{}, "", false
	}
	if v := w.Object.Annotations[chartVersionAnnotation]; v != "" && v != kb.Version {
		if k, ok := catalog.ChartFor(kb.Name, v); ok {
			kb = k
		}
	}
	comp, ok := componentOf(kb.Component, w)
	if !ok {
		return Edit{}, "", false
	}
	key := componentKey(comp, c.Field)
	if kb.ValuesKey(key) == catalog.ChartKeyUnread {
		return Edit{}, "", false
	}
	value, ok := changedValue(r.Values, kb.DefaultValues(), key, c)
	if !ok {
		return Edit{}, "", false
	}
	if write.FromPlan(r) {
		return Edit{}, "", false
	}
	values := map[string]any{}
	setPath(values, key, value)
	where := fmt.Sprintf("%s in the %s values of %s", key, kb.Name, releaseLabel(r))
	if c.Added != nil {
		where += " (the list replaces the chart's, so it keeps the items already there)"
	}
	e, ok := write.ReleaseValues(r, values)
	return e, where, ok
}

// changedValue is the value to set at key: for a list change, the list the
// source sets now (the user's, else the default) with the added items; else the
// change's value. ok is false when what the user set is not known before apply
// and would be lost.
func changedValue(user, defaults map[string]any, key string, c PodChange) (any, bool) {
	cur := cluster.Lookup(user, key)
	if cur == nil {
		cur = cluster.Lookup(defaults, key)
	} else if containsUnknownWhole(cur) {
		return nil, false
	}
	if c.Added == nil {
		return c.Value, true
	}
	list, _ := cluster.CopyJSON(cur).([]any)
	for _, item := range c.Added {
		dup := false
		for _, have := range list {
			if cluster.EqualJSON(have, item) {
				dup = true
				break
			}
		}
		if !dup {
			list = append(list, cluster.CopyJSON(item))
		}
	}
	return list, true
}

// containsUnknownWhole reports whether a value is itself an unknown placeholder
// (a list or map given as one expression), which a fix cannot extend.
func containsUnknownWhole(v any) bool {
	s, ok := v.(string)
	return ok && cluster.IsUnknown(s)
}

// fromSetBlock reports whether an origin is a set, set_list or set_sensitive
// entry of a helm_release ("set.0"), as the Terraform loader records them.
func fromSetBlock(o cluster.Origin) bool {
	kind, n, ok := strings.Cut(o.Path, ".")
	if !ok || kind != "set" && kind != "set_list" && kind != "set_sensitive" {
		return false
	}
	_, err := strconv.Atoi(n)
	return err == nil
}

// reportPresetForOtherLayout: a value the tool that creates the release sets
// (a module, eksctl) under a key the chart version never reads, while the key
// the version reads for it (the same setting one level up or down:
// settings.clusterName and settings.aws.clusterName) is left unset. Tools set
// every layout at once on purpose; one that sets only the other layout leaves
// the setting unset for this version.
func reportPresetForOtherLayout(p *Pass, r *cluster.HelmRelease, kb *catalog.Chart, key string) {
	if kb.ValuesKey(key) != catalog.ChartKeyUnread {
		return
	}
	other := counterpartKey(kb, key)
	if other == "" || cluster.Lookup(r.Values, other) != nil {
		return
	}
	by := "the tool that creates the release"
	switch {
	case r.InstalledBy != "":
		by = r.InstalledBy
	case r.Input != nil:
		by = r.Input.Module
	}
	p.Report(Finding{
		Severity: Warning,
		Object:   releaseRef(r),
		Origin:   r.Origin,
		Summary:  fmt.Sprintf("%s: %s sets %s, which chart %s %s never reads; it reads %s, which nothing sets", releaseLabel(r), by, key, kb.Name, kb.Version, other),
		Detail:   fmt.Sprintf("The values %s generates for the release are laid out for another chart version: chart %s %s reads %s, and that key is not set, so the chart's default applies (the Karpenter controller exits at start without its cluster name). Pin the chart version the tool's release expects, or set %s yourself in the release's values.", by, kb.Name, kb.Version, other, other),
	})
}

// counterpartKey is the key a chart version reads for the same setting as
// key, one level up or down ("settings.aws.clusterName" for
// "settings.clusterName" and the reverse); "" when there is not exactly one.
func counterpartKey(kb *catalog.Chart, key string) string {
	parts := strings.Split(key, ".")
	leaf := parts[len(parts)-1]
	var found []string
	for _, k := range kb.ValuesKeys() {
		kp := strings.Split(k, ".")
		if k == key || kp[len(kp)-1] != leaf || kb.ValuesKey(k) != catalog.ChartKeyRead {
			continue
		}
		if oneSegmentApart(kp[:len(kp)-1], parts[:len(parts)-1]) {
			found = append(found, k)
		}
	}
	if len(found) != 1 {
		return ""
	}
	return found[0]
}

// oneSegmentApart reports whether two paths differ by one segment inserted.
func oneSegmentApart(a, b []string) bool {
	if len(a) < len(b) {
		a, b = b, a
	}
	if len(a) != len(b)+1 {
		return false
	}
	for i := range a {
		if slices.Equal(append(append([]string(nil), a[:i]...), a[i+1:]...), b) {
			return true
		}
	}
	return false
}
