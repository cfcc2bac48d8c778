// Package textpos turns byte offsets into the line numbers findings and errors
// name.
package textpos

import "bytes"

// Line is the 1-based line of a byte offset in data; offsets outside data are
// clamped to it (an offset past the end is on the last line).
func Line(data []byte, offset int64) int {
	off := min(max(offset, 0), int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}
