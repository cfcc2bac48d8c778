package lint

import "testing"

// JudgeWholePlacements judges every group of Pending pods on its whole
// placement until the test ends.
func JudgeWholePlacements(t testing.TB) {
	judgeWholePlacements.Store(true)
	t.Cleanup(func() { judgeWholePlacements.Store(false) })
}
