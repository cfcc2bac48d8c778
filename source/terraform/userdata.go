package terraform

import (
	"regexp"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Nodes can get labels and taints from their user data rather than from the EKS API:
// Bottlerocket settings ([settings.kubernetes.node-labels], [...node-taints]) and
// kubelet flags (--node-labels, --register-with-taints) in bootstrap arguments or a
// nodeadm NodeConfig. The scheduler sees them all the same.

var (
	nodeLabelsFlag = regexp.MustCompile(`--node-labels[= ]([^\s'"]+)`)
	taintsFlag     = regexp.MustCompile(`--register-with-taints[= ]([^\s'"]+)`)
)

// userDataLabels returns the labels and taints that user data text gives a node.
func userDataLabels(text string) (map[string]string, []corev1.Taint) {
	labels := map[string]string{}
	var taints []corev1.Taint
	section := ""
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = strings.TrimSpace(strings.Trim(line, "[]"))
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := tomlPair(line)
		switch {
		case !ok:
		case section == "settings.kubernetes.node-labels":
			labels[k] = firstString(v)
		case section == "settings.kubernetes.node-taints":
			for _, tv := range tomlStrings(v) {
				value, effect, _ := strings.Cut(tv, ":")
				taints = append(taints, corev1.Taint{Key: k, Value: value, Effect: taintEffect(effect)})
			}
		}
	}
	for _, m := range nodeLabelsFlag.FindAllStringSubmatch(text, -1) {
		for _, kv := range strings.Split(m[1], ",") {
			if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
				labels[k] = v
			}
		}
	}
	for _, m := range taintsFlag.FindAllStringSubmatch(text, -1) {
		for _, t := range strings.Split(m[1], ",") {
			kv, effect, _ := strings.Cut(t, ":")
			k, v, _ := strings.Cut(kv, "=")
			if k != "" {
				taints = append(taints, corev1.Taint{Key: k, Value: v, Effect: taintEffect(effect)})
			}
		}
	}
	if len(labels) == 0 {
		labels = nil
	}
	return labels, taints
}

// tomlPair reads `key = value` with a bare or quoted key.
func tomlPair(line string) (string, string, bool) {
	var key string
	rest := line
	if strings.HasPrefix(rest, `"`) {
		end := strings.Index(rest[1:], `"`)
		if end < 0 {
			return "", "", false
		}
		key, rest = rest[1:end+1], rest[end+2:]
	} else {
		i := strings.IndexByte(rest, '=')
		if i < 0 {
			return "", "", false
		}
		key, rest = strings.TrimSpace(rest[:i]), rest[i:]
	}
	rest = strings.TrimSpace(rest)
	if !strings.HasPrefix(rest, "=") {
		return "", "", false
	}
	return key, strings.TrimSpace(rest[1:]), true
}

// tomlStrings reads a TOML string or array of strings.
func tomlStrings(v string) []string {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "[") {
		v = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
		var out []string
		for _, part := range strings.Split(v, ",") {
			if s := unquoteTOML(part); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return []string{unquoteTOML(v)}
}

func firstString(v string) string {
	if s := tomlStrings(v); len(s) > 0 {
		return s[0]
	}
	return ""
}

func unquoteTOML(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, " #"); i >= 0 && !strings.HasPrefix(s, `"`) {
		s = strings.TrimSpace(s[:i])
	}
	if strings.HasPrefix(s, `"`) {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
		return strings.Trim(s, `"`)
	}
	return strings.Trim(s, `'`)
}
