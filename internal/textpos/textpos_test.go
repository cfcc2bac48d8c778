package textpos

import "testing"

func TestLine(t *testing.T) {
	t.Parallel()
	data := []byte("a\nbc\n\nd")
	for off, want := range map[int64]int{-5: 1, 0: 1, 1: 1, 2: 2, 5: 3, 6: 4, 7: 4, 100: 4} {
		if got := Line(data, off); got != want {
			t.Errorf("Line(%d) = %d, want %d", off, got, want)
		}
	}
}
