package differential

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Settings reads a differential run's size and seed from the environment: a
// short run of short scenarios with seed 1 by default, EKSDOCTOR_DIFF_SCENARIOS
// and EKSDOCTOR_DIFF_SEED otherwise, and the scenarios to run alone
// (EKSDOCTOR_DIFF_ONLY, comma-separated; nil: all).
func Settings(short int) (n int, seed uint64, only map[int]bool, err error) {
	n, seed = short, 1
	if v := os.Getenv("EKSDOCTOR_DIFF_SCENARIOS"); v != "" {
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			return 0, 0, nil, fmt.Errorf("EKSDOCTOR_DIFF_SCENARIOS=%q: want a positive number", v)
		}
	}
	if v := os.Getenv("EKSDOCTOR_DIFF_SEED"); v != "" {
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			return 0, 0, nil, fmt.Errorf("EKSDOCTOR_DIFF_SEED=%q: want a number", v)
		}
	}
	if v := os.Getenv("EKSDOCTOR_DIFF_ONLY"); v != "" {
		only = map[int]bool{}
		for _, f := range strings.Split(v, ",") {
			x, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return 0, 0, nil, fmt.Errorf("EKSDOCTOR_DIFF_ONLY=%q: want scenario numbers separated by commas", v)
			}
			only[x] = true
		}
	}
	return n, seed, only, nil
}

// Indent prefixes every line of s, for the scenarios a disagreement quotes.
func Indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}
