package cli

import "testing"

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]int64{"4GiB": 4 << 30, "800MiB": 800 << 20, "2Gi": 2 << 30, "1GB": 1e9, "123": 123, " 5 MiB ": 5 << 20} {
		if got, err := parseByteSize(in); err != nil || got != want {
			t.Errorf("parseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1GiB", "lots", "1.5GiB", "99999999TiB"} {
		if _, err := parseByteSize(in); err == nil {
			t.Errorf("parseByteSize(%q) gave no error", in)
		}
	}
}
