// Package inputfs is how eksdoctor reads the files it analyses. Inputs come from
// strangers (a pull request scanned in CI), so every read stays under the paths the
// user named, follows symbolic links only while they stay there, opens only regular
// files (never a FIFO or a device), and is bounded in size. A read that breaks one of
// these rules fails with an error that names the path it tried and never its content.
//
// It must not read anything by itself: the loaders decide what to read.
package inputfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// Size limits for the kinds of file eksdoctor reads. A manifest or snapshot larger
// than these is not something a person wrote or a cluster of any size produces.
const (
	// MaxManifest bounds a YAML or JSON manifest, values file or chart file, and
	// a Terraform plan.
	MaxManifest int64 = 32 << 20
	// MaxConfig bounds a Terraform file, variable file or template.
	MaxConfig int64 = 8 << 20
)

// OutsideError is a read of a path that lies outside the inputs: outside every
// directory named on the command line, or through a symbolic link that leads out.
type OutsideError struct{ Path string }

func (e *OutsideError) Error() string {
	return fmt.Sprintf("%s lies outside the inputs (only files under the paths given on the command line are read)", e.Path)
}

// ErrNotRegular is a read of something that is not a regular file: a directory, a
// FIFO, a device or a socket.
var ErrNotRegular = errors.New("not a regular file")

// TooLargeError is a read of a file larger than its limit.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s, the most eksdoctor reads of such a file", e.Path, Size(e.Limit))
}

// Size renders a byte count the way the limits are written.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// FS reads files under a set of roots: directories, whose whole tree may be read,
// and single files, which may be read and nothing beside them. The zero FS reads
// nothing. An FS is safe for concurrent use.
type FS struct {
	dirs  []*dirRoot
	files map[string]bool // absolute, cleaned paths of single-file roots
}

type dirRoot struct {
	abs  string // absolute, cleaned
	real string // abs with symbolic links resolved
	root *os.Root
}

// New returns an FS whose roots are the given paths. A path that does not exist is
// skipped (the caller reports it); a directory is a root for its whole tree, a
// file for itself alone.
func New(paths ...string) *FS {
	f := &FS{files: map[string]bool{}}
	for _, p := range paths {
		f.Add(p)
	}
	return f
}

// Add adds a root.
func (f *FS) Add(path string) {
	if path == "" {
		return
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return
	}
	st, err := os.Stat(abs)
	if err != nil {
		return
	}
	if !st.IsDir() {
		if f.files == nil {
			f.files = map[string]bool{}
		}
		f.files[abs] = true
		return
	}
	for _, d := range f.dirs {
		if d.abs == abs {
			return
		}
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		real = abs
	}
	f.dirs = append(f.dirs, &dirRoot{abs: abs, real: real, root: r})
	// The longest root first, so a path is read through the innermost root.
	sort.SliceStable(f.dirs, func(i, j int) bool { return len(f.dirs[i].abs) > len(f.dirs[j].abs) })
}

// Roots returns the directories and files the FS reads, sorted.
func (f *FS) Roots() []string {
	var out []string
	for _, d := range f.dirs {
		out = append(out, d.abs)
	}
	for p := range f.files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Close releases the directory handles.
func (f *FS) Close() error {
	for _, d := range f.dirs {
		d.root.Close()
	}
	return nil
}

// within returns the root holding abs lexically and the path relative to it.
func (f *FS) within(abs string) (*dirRoot, string, bool) {
	for _, d := range f.dirs {
		if rel, ok := under(d.abs, abs); ok {
			return d, rel, true
		}
	}
	return nil, "", false
}

// under returns p relative to dir when p lies under dir (or is dir).
func under(dir, p string) (string, bool) {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

// Contains reports whether a path lies under the roots, by its name (symbolic links
// are judged when the path is opened).
func (f *FS) Contains(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	if f.files[abs] {
		return true
	}
	_, _, ok := f.within(abs)
	return ok
}

// open opens name for reading, confined to the roots. It never blocks on a FIFO:
// the file is opened non-blocking and must then be a regular file or a directory.
func (f *FS) open(name string) (*os.File, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, &OutsideError{Path: name}
	}
	const flags = os.O_RDONLY | syscall.O_NONBLOCK
	if f.files[abs] {
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			if de := f.danglingLink(abs, name, err); de != nil {
				return nil, de
			}
			return nil, err
		}
		if real != abs && !f.files[real] {
			// A named file that is a link is read only if the link stays inside.
			if _, _, ok := f.withinReal(real); !ok {
				return nil, &OutsideError{Path: name}
			}
		}
		return os.OpenFile(real, flags, 0)
	}
	d, rel, ok := f.within(abs)
	if !ok {
		return nil, &OutsideError{Path: name}
	}
	file, err := d.root.OpenFile(rel, flags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		if de := f.danglingLink(abs, name, err); de != nil {
			return nil, de
		}
	}
	if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return file, err
	}
	// os.Root refuses links that leave its own tree and absolute links; such a
	// link may still lead into another root, or back into this one.
	real, rerr := filepath.EvalSymlinks(abs)
	if rerr != nil {
		if de := f.danglingLink(abs, name, rerr); de != nil {
			return nil, de
		}
		return nil, &OutsideError{Path: name}
	}
	if f.files[real] {
		return os.OpenFile(real, flags, 0)
	}
	rd, rrel, ok := f.withinReal(real)
	if !ok {
		return nil, &OutsideError{Path: name}
	}
	return rd.root.OpenFile(rrel, flags, 0)
}

// danglingLink is the error for a path that is a symbolic link to nothing,
// when err says its target does not exist and the link points inside the
// inputs (a link that points outside them is outside, whether or not its
// target exists); nil otherwise. Only the link itself is looked at.
func (f *FS) danglingLink(abs, name string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	st, lerr := os.Lstat(abs)
	if lerr != nil || st.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	target, rerr := os.Readlink(abs)
	if rerr != nil {
		return nil
	}
	to := target
	if !filepath.IsAbs(to) {
		to = filepath.Join(filepath.Dir(abs), to)
	}
	if _, _, ok := f.within(to); !ok && !f.files[to] {
		return nil
	}
	return &DanglingLinkError{Path: name, Target: target}
}

// withinReal is within for a path whose links are resolved.
func (f *FS) withinReal(real string) (*dirRoot, string, bool) {
	for _, d := range f.dirs {
		if rel, ok := under(d.real, real); ok {
			return d, rel, true
		}
	}
	return nil, "", false
}

// LinkStubError is a symbolic link stored as a text file (as git checks links out
// where it cannot make them, or as a copy of a repository keeps them) whose target
// cannot be read.
type LinkStubError struct {
	Path, Target string
	Err          error
}

func (e *LinkStubError) Error() string {
	return fmt.Sprintf("%s is a symbolic link stored as text (as git writes links where it cannot make them) to %s, which cannot be read: %v", e.Path, e.Target, e.Err)
}

func (e *LinkStubError) Unwrap() error { return e.Err }

// Unseen reports whether a read failed only because the file lies beyond what the
// run may or can see (outside the inputs, or the target of a link that is not
// there): the input may be valid, eksdoctor cannot tell.
func Unseen(err error) bool {
	var oe *OutsideError
	var le *LinkStubError
	var ee *EncryptedError
	var de *DanglingLinkError
	return errors.As(err, &oe) || errors.As(err, &le) || errors.As(err, &ee) || errors.As(err, &de)
}

// DanglingLinkError is a symbolic link whose target does not exist: a file a
// setup step generates, or one the copy left out. What it holds cannot be seen;
// the configuration may be valid where the target exists.
type DanglingLinkError struct{ Path, Target string }

func (e *DanglingLinkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link to %s, which does not exist here (a file a setup step generates, or one left out of the copy): what it holds cannot be seen", e.Path, e.Target)
}

func (e *DanglingLinkError) Unwrap() error { return fs.ErrNotExist }

// EncryptedError is a file encrypted in the repository (git-crypt): what it holds
// cannot be seen.
type EncryptedError struct{ Path string }

func (e *EncryptedError) Error() string {
	return fmt.Sprintf("%s is encrypted (git-crypt); what it holds cannot be seen", e.Path)
}

var gitCrypt = []byte("\x00GITCRYPT\x00")

// maxLinkStubs bounds how many text links are followed in a row.
const maxLinkStubs = 8

// ReadFile reads a regular file under the roots, at most limit bytes. A file that
// is a symbolic link stored as text (its whole content a relative path to a file
// of the same kind) is read as the link: its target, under the same rules.
func (f *FS) ReadFile(name string, limit int64) ([]byte, error) {
	data, err := f.readFile(name, limit)
	if err == nil && bytes.HasPrefix(data, gitCrypt) {
		return nil, &EncryptedError{Path: name}
	}
	for i := 0; err == nil && i < maxLinkStubs; i++ {
		target, ok := linkStub(name, data)
		if !ok {
			return data, nil
		}
		next := filepath.Join(filepath.Dir(name), target)
		data, err = f.readFile(next, limit)
		if err != nil {
			return nil, &LinkStubError{Path: name, Target: target, Err: err}
		}
		name = next
	}
	return data, err
}

// linkStub reports whether data is a symbolic link stored as text: one line, no
// trailing line break (git stores the target as is), a relative path to a file
// with the same extension as name.
func linkStub(name string, data []byte) (string, bool) {
	if len(data) == 0 || len(data) > 1024 {
		return "", false
	}
	s := string(data)
	if strings.ContainsAny(s, " \t\r\n\x00{}[]=:\"'#") || filepath.IsAbs(s) {
		return "", false
	}
	if ext := filepath.Ext(name); ext == "" || !strings.HasSuffix(s, ext) {
		return "", false
	}
	return s, true
}

// ReadOne reads one file, as a loader would with the file's own directory as
// the only root: a regular file within limit, reached through no link that
// leaves that directory. A symbolic link stored as text is read as the text it
// is: what reads with ReadOne writes the same file back.
func ReadOne(name string, limit int64) ([]byte, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, readError(name, err)
	}
	f := New(filepath.Dir(abs))
	defer f.Close()
	return f.readFile(name, limit)
}

func (f *FS) readFile(name string, limit int64) ([]byte, error) {
	file, err := f.open(name)
	if err != nil {
		return nil, readError(name, err)
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return nil, readError(name, err)
	}
	if !st.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrNotRegular}
	}
	if st.Size() > limit {
		return nil, &TooLargeError{Path: name, Limit: limit}
	}
	// The size may change while reading; the limit holds regardless. The
	// buffer starts at the size the file has, so a large file is not copied
	// as it grows.
	var buf bytes.Buffer
	buf.Grow(int(st.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(file, limit+1)); err != nil {
		return nil, readError(name, err)
	}
	data := buf.Bytes()
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Path: name, Limit: limit}
	}
	return data, nil
}

func readError(name string, err error) error {
	var oe *OutsideError
	var de *DanglingLinkError
	if errors.As(err, &oe) || errors.As(err, &de) {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: "read", Path: name, Err: pe.Err}
	}
	return &fs.PathError{Op: "read", Path: name, Err: err}
}

// Stat returns what name is, following links only inside the roots.
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	file, err := f.open(name)
	if err != nil {
		return nil, readError(name, err)
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return nil, readError(name, err)
	}
	return st, nil
}

// IsRegular reports whether name is a regular file under the roots.
func (f *FS) IsRegular(name string) bool {
	st, err := f.Stat(name)
	return err == nil && st.Mode().IsRegular()
}

// IsDir reports whether name is a directory under the roots.
func (f *FS) IsDir(name string) bool {
	st, err := f.Stat(name)
	return err == nil && st.IsDir()
}

// ReadDir lists a directory under the roots, sorted by name. Entries are not
// followed: an entry that is a link reports the link's type.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	file, err := f.open(name)
	if err != nil {
		return nil, readError(name, err)
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return nil, readError(name, err)
	}
	if !st.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: syscall.ENOTDIR}
	}
	entries, err := file.ReadDir(-1)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: unwrapPath(err)}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	return entries, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// WalkFunc is called for every entry of a walk, as fs.WalkDirFunc. An error
// reading a directory is passed with that directory's path and a nil entry
// (after its own call), and the walk goes on unless the function returns it.
type WalkFunc func(path string, d fs.DirEntry, err error) error

// MaxDepth bounds how many directories deep a walk goes below its root. Git
// checks out any depth; repositories nest a dozen levels, rarely twenty.
const MaxDepth = 100

// DepthError is a directory a walk did not enter because it lies deeper than
// MaxDepth below the walk's root.
type DepthError struct{ Path string }

func (e *DepthError) Error() string {
	return fmt.Sprintf("%s lies more than %d directories below the path given; eksdoctor does not walk deeper", e.Path, MaxDepth)
}

// WalkDir walks the tree under root in lexical order, like filepath.WalkDir,
// without following links to directories. An unreadable directory is reported
// to fn and skipped; the rest of the tree is still walked. Each directory is
// opened once, relative to its parent's handle, so a walk costs the same
// whatever the depth; a directory deeper than MaxDepth is reported to fn (a
// DepthError) and not entered.
func (f *FS) WalkDir(root string, fn WalkFunc) error {
	st, err := f.Stat(root)
	if err != nil {
		err = fn(root, nil, err)
		if errors.Is(err, filepath.SkipDir) || errors.Is(err, filepath.SkipAll) {
			return nil
		}
		return err
	}
	d := fs.FileInfoToDirEntry(st)
	if !st.IsDir() {
		err = fn(root, d, nil)
	} else {
		err = f.walk(func() (*os.Root, error) { return f.openDir(root) }, root, d, 0, fn)
	}
	if errors.Is(err, filepath.SkipDir) || errors.Is(err, filepath.SkipAll) {
		return nil
	}
	return err
}

// walk calls fn for the directory at path, then opens it (with open, once)
// and walks its entries.
func (f *FS) walk(open func() (*os.Root, error), path string, d fs.DirEntry, depth int, fn WalkFunc) error {
	if err := fn(path, d, nil); err != nil {
		if errors.Is(err, filepath.SkipDir) {
			return nil
		}
		return err
	}
	if depth >= MaxDepth {
		return skipped(fn(path, nil, &DepthError{Path: path}))
	}
	dir, err := open()
	if err != nil {
		return skipped(fn(path, nil, readError(path, err)))
	}
	defer dir.Close()
	entries, err := listDir(dir)
	if err != nil {
		return skipped(fn(path, nil, &fs.PathError{Op: "readdir", Path: path, Err: unwrapPath(err)}))
	}
	for _, e := range entries {
		p := filepath.Join(path, e.Name())
		if !e.IsDir() {
			if err := fn(p, e, nil); err != nil {
				if errors.Is(err, filepath.SkipDir) {
					return nil
				}
				return err
			}
			continue
		}
		name := e.Name()
		if err := f.walk(func() (*os.Root, error) { return dir.OpenRoot(name) }, p, e, depth+1, fn); err != nil {
			return err
		}
	}
	return nil
}

// skipped is what a walk returns after fn was told of a directory it could
// not enter: nothing, unless fn stops the walk.
func skipped(err error) error {
	if errors.Is(err, filepath.SkipDir) {
		return nil
	}
	return err
}

// listDir lists an opened directory, sorted by name.
func listDir(dir *os.Root) ([]fs.DirEntry, error) {
	file, err := dir.Open(".")
	if err != nil {
		return nil, err
	}
	defer file.Close()
	entries, err := file.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	return entries, nil
}

// openDir opens a directory under the roots as a handle its entries are
// opened through, following links only inside the roots, as open does.
func (f *FS) openDir(name string) (*os.Root, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, &OutsideError{Path: name}
	}
	d, rel, ok := f.within(abs)
	if !ok {
		return nil, &OutsideError{Path: name}
	}
	r, err := d.root.OpenRoot(rel)
	if err == nil || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return r, err
	}
	real, rerr := filepath.EvalSymlinks(abs)
	if rerr != nil {
		return nil, &OutsideError{Path: name}
	}
	rd, rrel, ok := f.withinReal(real)
	if !ok {
		return nil, &OutsideError{Path: name}
	}
	return rd.root.OpenRoot(rrel)
}
