package source

import (
	"path"
	"path/filepath"
	"strings"
)

// Exclude patterns (the configuration's exclude, --exclude) follow .gitignore:
//
//   - a pattern without a leading "/" or "./" matches at any depth: "legacy/**"
//     matches legacy/x.tf and infra/legacy/x.tf, "*.tpl" any file ending in .tpl;
//   - a pattern with a leading "/" or "./" is anchored: it matches paths from
//     one of the anchors (the working directory, and each directory given on
//     the command line) only; "/legacy/**" matches legacy/x.tf but not
//     infra/legacy/x.tf (unless infra was given);
//   - "*" and "?" match within one path segment, "**" any number of segments;
//   - a pattern that matches a directory matches everything under it.
//
// An absolute pattern naming the path from the file system's root matches too.

// ValidExclude reports whether an exclude pattern is well formed.
func ValidExclude(pattern string) bool {
	if pattern == "" {
		return false
	}
	for _, seg := range strings.Split(filepath.ToSlash(pattern), "/") {
		if _, err := path.Match(seg, ""); err != nil {
			return false
		}
	}
	return true
}

// MatchExclude reports whether file (relative to the working directory wd, or
// absolute) matches an exclude pattern. anchors are the absolute directories
// an anchored pattern starts from; wd is one of them.
func MatchExclude(pattern, file, wd string, anchors []string) bool {
	if file == "" || pattern == "" {
		return false
	}
	p := filepath.ToSlash(pattern)
	absFile := file
	if !filepath.IsAbs(absFile) {
		absFile = filepath.Join(wd, file)
	}
	absFile = filepath.Clean(absFile)
	anchored := strings.HasPrefix(p, "/") || strings.HasPrefix(p, "./")
	if anchored {
		if strings.HasPrefix(p, "/") && prefixMatch(splitPattern(p), splitPath(filepath.ToSlash(absFile))) {
			return true
		}
		pat := splitPattern(strings.TrimPrefix(strings.TrimPrefix(p, "."), "/"))
		for _, a := range append([]string{wd}, anchors...) {
			if rel, ok := inside(a, absFile); ok && prefixMatch(pat, splitPath(rel)) {
				return true
			}
		}
		return false
	}
	segs := splitPath(filepath.ToSlash(absFile))
	if rel, ok := inside(wd, absFile); ok {
		segs = splitPath(rel)
	}
	pat := splitPattern(p)
	for i := range segs {
		if prefixMatch(pat, segs[i:]) {
			return true
		}
	}
	return false
}

// inside is file relative to dir, slash-separated, when file is under dir.
func inside(dir, file string) (string, bool) {
	if dir == "" {
		return "", false
	}
	rel, err := filepath.Rel(filepath.Clean(dir), file)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

func splitPath(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" && s != "." {
			out = append(out, s)
		}
	}
	return out
}

// splitPattern splits a pattern into segments, "**" runs collapsed into one.
func splitPattern(p string) []string {
	var out []string
	for _, s := range splitPath(p) {
		if s == "**" && len(out) > 0 && out[len(out)-1] == "**" {
			continue
		}
		out = append(out, s)
	}
	return out
}

// prefixMatch reports whether the pattern's segments match the first
// segments of the path (a directory matched covers what is under it). The
// table of (pattern, path) positions keeps it linear in their product on any
// pattern.
func prefixMatch(pat, segs []string) bool {
	if len(pat) == 0 {
		return len(segs) > 0 // the anchor itself: everything under it
	}
	// ok[j]: the pattern's first i segments match segs[:j].
	ok := make([]bool, len(segs)+1)
	ok[0] = true
	for _, ps := range pat {
		next := make([]bool, len(segs)+1)
		for j := 0; j <= len(segs); j++ {
			if !ok[j] {
				continue
			}
			if ps == "**" {
				for k := j; k <= len(segs); k++ {
					next[k] = true
				}
				break
			}
			if j < len(segs) {
				if m, _ := path.Match(ps, segs[j]); m {
					next[j+1] = true
				}
			}
		}
		ok = next
	}
	for j := 1; j <= len(segs); j++ {
		if ok[j] {
			return true
		}
	}
	return false
}
