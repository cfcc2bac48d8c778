//go:build unix

package testenv

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// lockCache takes an exclusive advisory lock shared by every test binary on the
// machine; the kernel releases it if the process dies, so a killed build never
// leaves the cache locked.
func lockCache(log io.Writer) (func(), error) {
	path, err := lockPath()
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock test binary cache: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		fmt.Fprintf(log, "testenv: waiting for another test package to finish building the test binaries (%s)\n", path)
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("lock test binary cache: %w", err)
		}
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
