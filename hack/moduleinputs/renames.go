package main

import (
	"regexp"
	"sort"
	"strings"
)

// rename is a documented rename of an input (path "") or of a key read at path.
type rename struct {
	module, path, old, new string
	release                string // the first release with the new name
	doc                    string // FILE@TAG
	via                    string // for an entry key: the sub-module whose input was renamed
}

// subModuleWords maps the words of an upgrade document's heading to the
// sub-module it is about.
var subModuleWords = []struct{ word, dir string }{
	{"karpenter", "modules/karpenter"},
	{"eks-managed", "modules/eks-managed-node-group"},
	{"eks managed", "modules/eks-managed-node-group"},
	{"self-managed", "modules/self-managed-node-group"},
	{"fargate", "modules/fargate-profile"},
	{"aws-auth", "modules/aws-auth"},
}

var (
	upgradeDoc   = regexp.MustCompile(`(^|/)UPGRADE-(\d+)\.0\.md$`)
	numbered     = regexp.MustCompile(`^\s*\d+\.\s+(.*)$`)
	bullet       = regexp.MustCompile("^(\\s*)- (.*)$")
	arrow        = regexp.MustCompile("^`([\\w-]+)`\\s*(?:->|→)\\s*`([\\w-]+)`")
	replacedWith = regexp.MustCompile("^((?:`[\\w-]+`(?:,? and |, )?)+) (?:have|has) been replaced with (?:simply )?`([\\w-]+)`")
	supersededBy = regexp.MustCompile("^`([\\w-]+)`\\s+-\\s+.*?(?:superseded by|should use) `([\\w-]+)`")
	argWithin    = regexp.MustCompile("[Tt]he `([\\w-]+)` argument within the `([\\w-]+)` configuration has been replaced with `([\\w-]+)`(?: and `([\\w-]+)`)?")
	ticked       = regexp.MustCompile("`([\\w-]+)`")
)

// docRenames reads the renames the UPGRADE-*.md documents of a release list.
func docRenames(r *repo, tag string) ([]rename, error) {
	files, err := r.files(tag)
	if err != nil {
		return nil, err
	}
	var out []rename
	for _, f := range files {
		m := upgradeDoc.FindStringSubmatch(f)
		if m == nil {
			continue
		}
		src, _, err := r.show(tag, f)
		if err != nil {
			return nil, err
		}
		out = append(out, parseUpgrade(string(src), m[2]+".0.0", f+"@"+tag)...)
	}
	return dedupe(out), nil
}

func parseUpgrade(src, release, doc string) []rename {
	var out []rename
	add := func(module, p, old, new string) {
		if old != new {
			out = append(out, rename{module: module, path: p, old: old, new: new, release: release, doc: doc})
		}
	}
	section := ""
	type ctx struct {
		indent int
		dir    string
	}
	var stack []ctx
	for _, line := range strings.Split(src, "\n") {
		for _, m := range argWithin.FindAllStringSubmatch(line, -1) {
			add("", m[2]+".*", m[1], m[3])
			if m[4] != "" {
				add("", m[2]+".*", m[1], m[4])
			}
		}
		if strings.HasPrefix(line, "#") {
			section, stack = "", nil
			continue
		}
		if m := numbered.FindStringSubmatch(line); m != nil {
			section, stack = strings.ToLower(strings.TrimSpace(m[1])), nil
			continue
		}
		if section != "renamed variables:" && section != "removed variables:" {
			continue
		}
		m := bullet.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		indent, text := len(m[1]), strings.TrimSpace(m[2])
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		if dir := heading(text); dir != "" {
			stack = append(stack, ctx{indent, dir})
			continue
		}
		dir := ""
		if len(stack) > 0 {
			dir = stack[len(stack)-1].dir
		}
		if section == "renamed variables:" {
			if a := arrow.FindStringSubmatch(text); a != nil {
				add(dir, "", a[1], a[2])
			}
			continue
		}
		if a := replacedWith.FindStringSubmatch(text); a != nil {
			for _, o := range ticked.FindAllStringSubmatch(a[1], -1) {
				add(dir, "", o[1], a[2])
			}
		} else if a := supersededBy.FindStringSubmatch(text); a != nil {
			add(dir, "", a[1], a[2])
		}
	}
	return out
}

// heading returns the sub-module a list heading is about, "" when the line is
// not a heading.
func heading(text string) string {
	if strings.Contains(text, "->") || strings.Contains(text, "→") {
		return ""
	}
	l := strings.ToLower(text)
	if !strings.Contains(l, "sub-module") && !strings.HasSuffix(l, ":") && l != "karpenter" {
		return ""
	}
	for _, w := range subModuleWords {
		if strings.Contains(l, w.word) {
			return w.dir
		}
	}
	return ""
}

// Where the root passes a sub-module's inputs as the keys of its entries.
var entryPaths = map[string][]string{
	"modules/eks-managed-node-group":  {"eks_managed_node_groups.*", "eks_managed_node_group_defaults"},
	"modules/self-managed-node-group": {"self_managed_node_groups.*", "self_managed_node_group_defaults"},
	"modules/fargate-profile":         {"fargate_profiles.*", "fargate_profile_defaults"},
}

// entryRenames carries a sub-module input's rename to the root's entries when the
// root read the old key before the rename and reads the new key from it on.
func entryRenames(rs []rename, mods map[string]*moduleAgg, tags []string) []rename {
	root := mods[""]
	if root == nil {
		return nil
	}
	var out []rename
	for _, r := range rs {
		if r.path != "" {
			continue
		}
		at := -1
		for i, t := range tags {
			if strings.TrimPrefix(t, "v") == r.release {
				at = i
			}
		}
		if at < 0 {
			continue
		}
		for _, p := range entryPaths[r.module] {
			ks := root.keys[p]
			if ks == nil || !anyIn(ks[r.old], 0, at) || !anyIn(ks[r.new], at, len(tags)) {
				continue
			}
			out = append(out, rename{module: "", path: p, old: r.old, new: r.new, release: r.release, doc: r.doc, via: r.module})
		}
	}
	return out
}

func anyIn(b bits, from, to int) bool {
	for i := from; i < to && i < len(b); i++ {
		if b[i] {
			return true
		}
	}
	return false
}

func dedupe(rs []rename) []rename {
	seen := map[string]bool{}
	var out []rename
	for _, r := range rs {
		k := r.module + "\x00" + r.path + "\x00" + r.old + "\x00" + r.new
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

func sortRenames(rs []rename) {
	sort.SliceStable(rs, func(i, j int) bool {
		a, b := rs[i], rs[j]
		if a.module != b.module {
			return a.module < b.module
		}
		if a.path != b.path {
			return a.path < b.path
		}
		if a.release != b.release {
			return less(a.release, b.release)
		}
		return a.old < b.old
	})
}
