//go:build !unix

package testenv

import "io"

// lockCache does nothing where advisory file locks are unavailable; hack/testbin.sh
// needs bash and a Unix toolchain anyway.
func lockCache(io.Writer) (func(), error) { return func() {}, nil }
