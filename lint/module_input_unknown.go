package lint

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/write"
)

var moduleInputUnknown = &Check{
	ID:       "module-input-unknown",
	Title:    "Module argument or key the module's release never reads",
	Family:   "input",
	Severity: Warning,
	Doc: Doc{
		What: "A call of terraform-aws-modules/eks (or one of its sub-modules, karpenter among them) or of aws-ia/eks-blueprints-addons sets an argument, or a key inside an argument's value (a node group of `eks_managed_node_groups`, an add-on of `cluster_addons`, a taint, an access entry), that none of the module's releases its version constraint allows reads. Which inputs and keys each release reads is extracted from the module's source, release by release (v17.0.0 onwards; the blueprints from v0.1.0). An argument the module does not declare is an error, and so is an argument every allowed release requires (no default) that the call does not set; a key inside a value is a warning. A call without a version constraint is judged against the newest release, which terraform init installs. A plain value (true, a number, a string) written where every key names an entry (a node group of `eks_managed_node_groups`, an add-on of `eks_addons`) is a warning: the module takes it for an entry of that name; when the key is an input of the module, the finding says it belongs one level up. Keys inside values the module passes on whole (labels, tags) or reads with computed keys are not judged.",
		Why:  "Terraform rejects an argument the module does not declare (`An argument named \"cluster_name\" is not expected here`), so plan fails: usually the input was renamed in the major version the constraint now allows. A key inside a map or object is accepted and silently ignored — the module reads only the keys it knows — so what it was meant to do never happens: `taint` instead of `taints` leaves the node group untainted, and the workloads it was reserved for share it with everything else; an add-on setting under the wrong name is never applied.",
		Fix:  "Use the name the release reads (the finding says which, and the release that renamed it), or pin the module to a release that reads what the configuration sets. The proposed fix renames the key where it is written in the module block, keeping its value.",
	},
	Run: runModuleInputUnknown,
}

func runModuleInputUnknown(p *Pass) {
	g := p.Model.Terraform
	if g == nil {
		return
	}
	for _, mc := range g.Modules {
		reads, ok := catalog.ModuleReadsFor(mc.Module, mc.Constraint)
		if ok && reads.Every() {
			// No constraint: terraform init installs the newest release.
			rs := reads.Releases()
			if len(rs) == 0 {
				continue
			}
			reads, ok = catalog.ModuleReadsFor(mc.Module, "= "+rs[len(rs)-1])
		}
		if !ok || len(reads.Releases()) == 0 {
			continue
		}
		reportMissingRequired(p, mc, reads)
		for _, k := range mc.Keys {
			if len(k.Path) == 0 {
				if !reads.Input(k.Key).Any {
					reportUnknownInput(p, mc, reads, k, "", Error)
				}
				continue
			}
			if entries, ok := entryPlace(reads, k.Path); ok {
				if scalarValue(k.Value) {
					reportScalarEntry(p, mc, reads, k, entries)
				}
				continue
			}
			place, ok := keyPlace(reads, k.Path)
			if !ok {
				continue
			}
			if pr := reads.Key(place, k.Key); !pr.Any && pr.Closed {
				reportUnknownInput(p, mc, reads, k, place, Warning)
			}
		}
	}
}

// reportMissingRequired: an input every allowed release declares without a
// default, which the call does not set, makes Terraform reject the call
// (`The argument "cluster_name" is required, but no definition was found`).
func reportMissingRequired(p *Pass, mc *cluster.ModuleCall, reads catalog.ModuleReads) {
	set := map[string]bool{}
	for _, k := range mc.Keys {
		if len(k.Path) == 0 {
			set[k.Key] = true
		}
	}
	var missing []string
	for _, name := range reads.RequiredInputs() {
		if !set[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return
	}
	args := "argument " + strconv.Quote(missing[0]) + ", which the call does not set"
	if len(missing) > 1 {
		quoted := make([]string, len(missing))
		for i, n := range missing {
			quoted[i] = strconv.Quote(n)
		}
		args = "arguments " + strings.Join(quoted, ", ") + ", which the call does not set"
	}
	p.Report(Finding{
		Severity: Error,
		Origin:   mc.Origin,
		Summary:  fmt.Sprintf("%s: %s requires %s: Terraform rejects the call (`The argument %q is required, but no definition was found`)", mc.Address, releaseSpan(mc, reads), args, missing[0]),
		Detail:   fmt.Sprintf("Every release the version constraint allows declares %s without a default, so plan fails before anything is created.", strings.Join(missing, ", ")),
	})
}

// keyPlace is where the module reads key k.Path's last element from, as the
// catalog names places ("eks_managed_node_groups.*"): each element of the
// path is an entry name where the module reads entries, a key where it reads
// keys. ok is false when the key is itself an entry name, or lies where the
// module reads nothing key by key.
func keyPlace(reads catalog.ModuleReads, path []string) (string, bool) {
	cur := path[0]
	for _, seg := range path[1:] {
		switch {
		case reads.Reads(cur + ".*"):
			cur += ".*"
		case reads.Reads(cur):
			cur += "." + seg
		default:
			return "", false
		}
	}
	if reads.Reads(cur+".*") || !reads.Reads(cur) {
		return "", false
	}
	return cur, true
}

// entryPlace reports whether the last element of a key's path is a map the
// module reads entries of (node groups, add-ons, profiles, access entries), so
// that the key is an entry's name, and names that place.
func entryPlace(reads catalog.ModuleReads, path []string) (string, bool) {
	cur := path[0]
	for _, seg := range path[1:] {
		switch {
		case reads.Reads(cur + ".*"):
			cur += ".*"
		case reads.Reads(cur):
			cur += "." + seg
		default:
			return "", false
		}
	}
	return cur, reads.Reads(cur + ".*")
}

// scalarValue reports whether a value as written is a literal boolean, number
// or string: not an object an entry would be.
func scalarValue(v string) bool {
	v = strings.TrimSpace(v)
	if v == "true" || v == "false" {
		return true
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return true
	}
	return len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' && !strings.Contains(v, "${")
}

// reportScalarEntry: a key written where every key names an entry (a node
// group, an add-on) with a plain value: the module takes it for an entry of
// that name, with its defaults; a setting of the module (or of an entry)
// written one level too deep.
func reportScalarEntry(p *Pass, mc *cluster.ModuleCall, reads catalog.ModuleReads, k cluster.WrittenKey, place string) {
	where := mc.Address + "." + strings.Join(k.Path, ".")
	summary := fmt.Sprintf("%s: %q = %s is read as an entry named %q (every key there names one), not as a setting", where, k.Key, strings.TrimSpace(k.Value), k.Key)
	var b strings.Builder
	fmt.Fprintf(&b, "%s allows %s; each key of %s names an entry, whose value is an object of its settings. %q = %s is not an object: the module creates an entry called %q with its defaults (or fails on it), and the setting is not applied.", mc.Address, releaseSpan(mc, reads), strings.Join(k.Path, "."), k.Key, strings.TrimSpace(k.Value), k.Key)
	if reads.Input(k.Key).Any {
		summary += fmt.Sprintf(" (%q is an input of the module itself: one level up?)", k.Key)
		fmt.Fprintf(&b, "\n%q is an input of the module: written at the top of the module block it would be read.", k.Key)
	}
	p.Report(Finding{Severity: Warning, Origin: k.Origin, Summary: summary, Detail: b.String()})
}

// releaseSpan words the releases a call allows: "20.0.0–20.37.2 (~> 20.0)".
func releaseSpan(mc *cluster.ModuleCall, reads catalog.ModuleReads) string {
	rs := reads.Releases()
	span := rs[0]
	if len(rs) > 1 {
		span += "–" + rs[len(rs)-1]
	}
	if mc.Constraint == "" {
		return fmt.Sprintf("%s %s (no version constraint: terraform init installs the newest release)", moduleName(mc.Module), span)
	}
	return fmt.Sprintf("%s %s (version %q)", moduleName(mc.Module), span, mc.Constraint)
}

func moduleName(module string) string {
	return strings.Replace(module, "//modules/", " sub-module ", 1)
}

func reportUnknownInput(p *Pass, mc *cluster.ModuleCall, reads catalog.ModuleReads, k cluster.WrittenKey, place string, sev Severity) {
	where := mc.Address
	if len(k.Path) > 0 {
		where += "." + strings.Join(k.Path, ".")
	}
	near := reads.Nearest(place, k.Key)
	hist := reads.History(place, k.Key)
	var b strings.Builder
	fmt.Fprintf(&b, "%s allows %s, and none of these releases ", mc.Address, releaseSpan(mc, reads))
	if place == "" {
		fmt.Fprintf(&b, "declares an input %q.", k.Key)
	} else {
		fmt.Fprintf(&b, "reads the key %q of %s.", k.Key, strings.Join(k.Path, "."))
	}
	renamed := ""
	for _, rn := range hist.Renames {
		if rn.Old == k.Key && rn.New != "" {
			renamed = rn.New
			fmt.Fprintf(&b, "\nIt was renamed %s in %s (%s).", rn.New, rn.Release, rn.Doc)
			break
		}
	}
	switch {
	case hist.Removed != "" && len(hist.Ranges) > 0:
		fmt.Fprintf(&b, "\nReleases %s read it; %s removed it.", rangesText(hist.Ranges), hist.Removed)
	case hist.Added != "":
		fmt.Fprintf(&b, "\nReleases %s read it: it was added in %s, after the releases this constraint allows.", rangesText(hist.Ranges), hist.Added)
	case len(hist.Ranges) > 0:
		fmt.Fprintf(&b, "\nReleases %s read it.", rangesText(hist.Ranges))
	}
	var summary string
	if sev == Error {
		summary = fmt.Sprintf("%s: %s has no input %q, so Terraform rejects the call (An argument named %q is not expected here)", mc.Address, releaseSpan(mc, reads), k.Key, k.Key)
		b.WriteString("\nterraform init and plan fail on the call.")
	} else {
		summary = fmt.Sprintf("%s: %s never reads %q here, so what it sets is silently ignored", where, releaseSpan(mc, reads), k.Key)
		b.WriteString("\nTerraform accepts the key and the module ignores it: what it sets is not applied.")
		if what, ok := ignoredMeans[orText(renamed, near)]; ok {
			b.WriteString(" " + what)
		}
	}
	to := renamed
	if to == "" {
		to = near
	}
	if near != "" {
		summary += fmt.Sprintf(" (did you mean %q?)", near)
	} else if renamed != "" {
		summary += fmt.Sprintf(" (renamed %q)", renamed)
	}
	f := Finding{Severity: sev, Origin: k.Origin, Summary: summary, Detail: b.String()}
	if to != "" && (place == "" && reads.Input(to).Any || place != "" && reads.Key(place, to).Any) {
		if e, ok := write.RenameModuleKey(mc, k, to); ok {
			f.Fix = &Fix{Summary: fmt.Sprintf("rename %s to %s, which the release reads", k.Key, to), Edits: []Edit{e}}
		}
	}
	p.Report(f)
}

// ignoredMeans says what a node group key the module reads does, for the key
// meant in its place.
var ignoredMeans = map[string]string{
	"taints":         "The node group's nodes get no taint: the workloads it was reserved for share it with everything else.",
	"labels":         "The node group's nodes do not get these labels: workloads that select them find no node there.",
	"instance_types": "The node group launches the module's default instance type instead.",
	"desired_size":   "The node group starts with the module's default size instead.",
	"min_size":       "The node group's minimum is the module's default instead.",
	"max_size":       "The node group's maximum is the module's default instead.",
}

func rangesText(rs []catalog.ReleaseRange) string {
	var parts []string
	for _, r := range rs {
		if r.From == r.To {
			parts = append(parts, r.From)
		} else {
			parts = append(parts, r.From+"–"+r.To)
		}
	}
	if len(parts) > 4 {
		parts = append(parts[:2], "…", parts[len(parts)-1])
	}
	return strings.Join(parts, ", ")
}
