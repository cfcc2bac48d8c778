package lint

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Fingerprint identifies a finding across runs, as a baseline matches it: its
// check, cluster, object and summary with every number set aside, never its
// line, so that editing the file above it, or a count in its wording
// ("0/3 node groups"), leaves it the same finding.
func Fingerprint(f Finding) string {
	h := sha256.Sum256([]byte(strings.Join([]string{"v1", f.Check, f.Cluster, f.Object.String(), WithoutNumbers(f.Summary)}, "\x00")))
	return hex.EncodeToString(h[:12])
}

// WithoutNumbers replaces each run of digits with "#".
func WithoutNumbers(s string) string {
	var b strings.Builder
	digits := false
	for _, r := range s {
		if r >= '0' && r <= '9' {
			if !digits {
				b.WriteByte('#')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(r)
	}
	return b.String()
}

// Suppressions counts suppressed findings by what silenced them.
func Suppressions(fs []Finding) map[string]int {
	c := map[string]int{}
	for _, f := range fs {
		if f.Suppressed != nil {
			c[f.Suppressed.By]++
		}
	}
	return c
}
