// Package outputfs is how eksdoctor writes files: reports (--write), snapshots,
// fixes. eksdoctor runs in a checkout a stranger's pull request controls, where a
// report's name may already be taken by a symbolic link to a file the runner can
// write (~/.bashrc, a CI token file). So a file is written only as a regular
// file reached without following any link: every directory between the base
// directory and the file must be a real directory, and the file itself, when it
// exists, a regular file. The content goes to a temporary file in the same
// directory, renamed over the name at the end, so a reader never sees half a
// report and an interrupted run leaves the old file as it was.
//
// The base directory is the working directory for a path under it (the checkout,
// where the links would come from), or the file's own directory for a path the
// user named elsewhere (-o /tmp/report.sarif: what lies above it is the user's).
//
// It must not decide what is written, only how.
package outputfs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// LinkError is a write refused because a component of the path is a symbolic
// link.
type LinkError struct {
	Path string // as given
	Link string // the component that is a link, as given
}

func (e *LinkError) Error() string {
	if e.Link == e.Path {
		return fmt.Sprintf("%s is a symbolic link: eksdoctor does not write through links (a link committed under that name could make it overwrite a file outside the working directory); remove the link or choose another name", e.Path)
	}
	return fmt.Sprintf("%s is a symbolic link: eksdoctor does not write %s through it (a link could lead the write outside the working directory); write to a path without links", e.Link, e.Path)
}

// NotRegularError is a write refused because the path names something other
// than a regular file: a directory, a FIFO, a device, a socket.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	what := "not a regular file"
	switch {
	case e.Mode.IsDir():
		what = "a directory"
	case e.Mode&fs.ModeNamedPipe != 0:
		what = "a named pipe"
	case e.Mode&fs.ModeDevice != 0:
		what = "a device"
	case e.Mode&fs.ModeSocket != 0:
		what = "a socket"
	}
	return fmt.Sprintf("%s is %s: eksdoctor writes only regular files", e.Path, what)
}

// IsRefused reports whether err is a write refused by these rules (rather than
// one the system failed).
func IsRefused(err error) bool {
	var le *LinkError
	var ne *NotRegularError
	return errors.As(err, &le) || errors.As(err, &ne)
}

// File is a file being written: it becomes the named file on Commit, and
// leaves no trace on Abort (or when Commit is never called and Abort is
// deferred).
type File struct {
	f      *os.File
	dir    *os.Root
	tmp    string
	name   string
	path   string
	closed bool
}

// Check reports whether path could be written under these rules, without
// writing anything: a run refuses a report's name before its analysis, not
// after.
func Check(path string) error {
	dir, name, err := place(path)
	if err != nil {
		return err
	}
	defer dir.Close()
	_, err = target(dir, path, name)
	return err
}

// target checks what is at name in dir: nothing, or a regular file, whose
// permissions it returns (zero when there is none).
func target(dir *os.Root, path, name string) (fs.FileMode, error) {
	st, err := dir.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("write %s: %w", path, unwrapPath(err))
	case st.Mode()&fs.ModeSymlink != 0:
		return 0, &LinkError{Path: path, Link: path}
	case !st.Mode().IsRegular():
		return 0, &NotRegularError{Path: path, Mode: st.Mode()}
	}
	return st.Mode().Perm(), nil
}

// Create starts writing path. The file is created with perm, or with the
// permissions of the file it replaces.
func Create(path string, perm fs.FileMode) (*File, error) {
	dir, name, err := place(path)
	if err != nil {
		return nil, err
	}
	had, err := target(dir, path, name)
	if err != nil {
		dir.Close()
		return nil, err
	}
	if had != 0 {
		perm = had
	}
	for range 8 {
		tmp := "." + name + "." + random() + ".tmp"
		f, err := dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			dir.Close()
			return nil, fmt.Errorf("write %s: %w", path, unwrapPath(err))
		}
		// The umask may have narrowed perm; the file takes the mode asked.
		f.Chmod(perm)
		return &File{f: f, dir: dir, tmp: tmp, name: name, path: path}, nil
	}
	dir.Close()
	return nil, fmt.Errorf("write %s: no free temporary name beside it", path)
}

// Write writes to the temporary file.
func (f *File) Write(p []byte) (int, error) { return f.f.Write(p) }

// Commit puts the written content under the file's name.
func (f *File) Commit() error {
	if f.closed {
		return fmt.Errorf("write %s: already closed", f.path)
	}
	f.closed = true
	defer f.dir.Close()
	if err := f.f.Close(); err != nil {
		f.dir.Remove(f.tmp)
		return fmt.Errorf("write %s: %w", f.path, unwrapPath(err))
	}
	// The name may have become a link or a directory since Create: rename
	// replaces a link itself (never its target), and fails on a directory.
	if err := f.dir.Rename(f.tmp, f.name); err != nil {
		f.dir.Remove(f.tmp)
		return fmt.Errorf("write %s: %w", f.path, unwrapPath(err))
	}
	return nil
}

// Abort removes what was written; the named file stays as it was. It does
// nothing after Commit.
func (f *File) Abort() {
	if f.closed {
		return
	}
	f.closed = true
	f.f.Close()
	f.dir.Remove(f.tmp)
	f.dir.Close()
}

// WriteFile writes data to path under the rules of Create.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return WriteWith(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteWith writes path with what write writes, under the rules of Create: the
// file changes only if write succeeds.
func WriteWith(path string, perm fs.FileMode, write func(io.Writer) error) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := write(f); err != nil {
		return err
	}
	return f.Commit()
}

// place opens the directory that holds path, reached from the base directory
// (see the package comment) without following a link, and returns it with the
// file's name in it.
func place(path string) (*os.Root, string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, "", fmt.Errorf("write %s: %w", path, err)
	}
	base, rel := filepath.Dir(abs), filepath.Base(abs)
	if wd, err := os.Getwd(); err == nil {
		if r, ok := under(wd, abs); ok && r != "." {
			base, rel = wd, r
		}
	}
	if rel == "." || rel == string(filepath.Separator) || rel == ".." {
		return nil, "", &NotRegularError{Path: path, Mode: fs.ModeDir}
	}
	dir, err := os.OpenRoot(base)
	if err != nil {
		return nil, "", fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	parts := strings.Split(rel, string(filepath.Separator))
	walked := base
	for _, c := range parts[:len(parts)-1] {
		walked = filepath.Join(walked, c)
		st, err := dir.Lstat(c)
		if err != nil {
			dir.Close()
			return nil, "", fmt.Errorf("write %s: %w", path, unwrapPath(err))
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			dir.Close()
			return nil, "", &LinkError{Path: path, Link: given(path, walked)}
		}
		if !st.IsDir() {
			dir.Close()
			return nil, "", fmt.Errorf("write %s: %s is not a directory", path, given(path, walked))
		}
		next, err := dir.OpenRoot(c)
		dir.Close()
		if err != nil {
			return nil, "", fmt.Errorf("write %s: %w", path, unwrapPath(err))
		}
		dir = next
	}
	return dir, parts[len(parts)-1], nil
}

// given words a component of a path the way the user gave the path: relative
// when the path was.
func given(path, component string) string {
	if filepath.IsAbs(path) {
		return component
	}
	if wd, err := os.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, component); err == nil {
			return r
		}
	}
	return component
}

// under returns p relative to dir when p lies under dir (or is dir).
func under(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

func random() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
