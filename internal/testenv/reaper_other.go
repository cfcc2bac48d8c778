//go:build !linux

package testenv

import "io"

// startReaper needs /proc to find the server processes; elsewhere Main relies on
// its own signal handling and -timeout watchdog only.
func startReaper(string, []string, io.Writer) (func(), error) { return func() {}, nil }
