package inputfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// layout builds:
//
//	outside/secret.txt
//	in/a.yaml
//	in/sub/b.yaml
//	in/link-out -> ../outside/secret.txt
//	in/link-abs-out -> <abs>/outside/secret.txt
//	in/link-in -> sub/b.yaml
//	in/link-abs-in -> <abs>/in/sub/b.yaml
//	in/dirlink -> ../outside
//	other/c.yaml
//	in/link-other -> ../other/c.yaml
func layout(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	write("outside/secret.txt", "SECRET")
	write("in/a.yaml", "a")
	write("in/sub/b.yaml", "b")
	write("other/c.yaml", "c")
	link("../outside/secret.txt", "in/link-out")
	link(filepath.Join(dir, "outside/secret.txt"), "in/link-abs-out")
	link("sub/b.yaml", "in/link-in")
	link(filepath.Join(dir, "in/sub/b.yaml"), "in/link-abs-in")
	link("../outside", "in/dirlink")
	link("../other/c.yaml", "in/link-other")
	return dir
}

func TestReadFileConfined(t *testing.T) {
	t.Parallel()
	dir := layout(t)
	in := filepath.Join(dir, "in")
	tests := []struct {
		name    string
		roots   []string
		path    string
		want    string
		outside bool
	}{
		{name: "file in root", roots: []string{in}, path: filepath.Join(in, "a.yaml"), want: "a"},
		{name: "nested file", roots: []string{in}, path: filepath.Join(in, "sub/b.yaml"), want: "b"},
		{name: "dot-dot out", roots: []string{in}, path: filepath.Join(in, "sub/../../outside/secret.txt"), outside: true},
		{name: "absolute out", roots: []string{in}, path: "/etc/hostname", outside: true},
		{name: "proc", roots: []string{in}, path: "/proc/self/environ", outside: true},
		{name: "link out", roots: []string{in}, path: filepath.Join(in, "link-out"), outside: true},
		{name: "absolute link out", roots: []string{in}, path: filepath.Join(in, "link-abs-out"), outside: true},
		{name: "link through dir out", roots: []string{in}, path: filepath.Join(in, "dirlink/secret.txt"), outside: true},
		{name: "link inside", roots: []string{in}, path: filepath.Join(in, "link-in"), want: "b"},
		{name: "absolute link inside", roots: []string{in}, path: filepath.Join(in, "link-abs-in"), want: "b"},
		{name: "link to another root", roots: []string{in, filepath.Join(dir, "other")}, path: filepath.Join(in, "link-other"), want: "c"},
		{name: "link to another root not given", roots: []string{in}, path: filepath.Join(in, "link-other"), outside: true},
		{name: "single-file root", roots: []string{filepath.Join(dir, "other/c.yaml")}, path: filepath.Join(dir, "other/c.yaml"), want: "c"},
		{name: "beside a single-file root", roots: []string{filepath.Join(dir, "other/c.yaml")}, path: filepath.Join(dir, "outside/secret.txt"), outside: true},
		{name: "single-file root that links out", roots: []string{filepath.Join(in, "link-out")}, path: filepath.Join(in, "link-out"), outside: true},
		{name: "single-file root that links inside", roots: []string{in, filepath.Join(in, "link-in")}, path: filepath.Join(in, "link-in"), want: "b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := New(tc.roots...)
			defer f.Close()
			got, err := f.ReadFile(tc.path, MaxManifest)
			if tc.outside {
				var oe *OutsideError
				if !errors.As(err, &oe) {
					t.Fatalf("ReadFile(%s) = %q, %v; want an OutsideError", tc.path, got, err)
				}
				if strings.Contains(err.Error(), "SECRET") {
					t.Errorf("error carries the content: %v", err)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("ReadFile(%s) = %q, %v; want %q", tc.path, got, err, tc.want)
			}
		})
	}
}

func TestRelativePaths(t *testing.T) {
	dir := layout(t)
	t.Chdir(dir)
	f := New("in")
	if got, err := f.ReadFile("in/sub/b.yaml", MaxManifest); err != nil || string(got) != "b" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	var oe *OutsideError
	if _, err := f.ReadFile("in/../outside/secret.txt", MaxManifest); !errors.As(err, &oe) {
		t.Fatalf("read outside: %v", err)
	}
	if !f.Contains("in/sub") || f.Contains("other") {
		t.Errorf("Contains: in/sub %v, other %v", f.Contains("in/sub"), f.Contains("other"))
	}
}

func TestOnlyRegularFilesAndSizes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "f.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.yaml")); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, make([]byte, 2048), 0o644); err != nil {
		t.Fatal(err)
	}
	f := New(dir)
	// A FIFO nobody writes to would block a plain open forever.
	if _, err := f.ReadFile(fifo, MaxManifest); !errors.Is(err, ErrNotRegular) {
		t.Errorf("FIFO: %v, want ErrNotRegular", err)
	}
	var oe *OutsideError
	if _, err := f.ReadFile(filepath.Join(dir, "zero.yaml"), MaxManifest); !errors.As(err, &oe) {
		t.Errorf("link to /dev/zero: %v, want OutsideError", err)
	}
	var tl *TooLargeError
	if _, err := f.ReadFile(big, 1024); !errors.As(err, &tl) || tl.Limit != 1024 {
		t.Errorf("big file: %v, want TooLargeError at 1024", err)
	}
	if _, err := f.ReadFile(dir, MaxManifest); !errors.Is(err, ErrNotRegular) {
		t.Errorf("directory: %v, want ErrNotRegular", err)
	}
	if !f.IsRegular(big) || f.IsRegular(fifo) || !f.IsDir(dir) {
		t.Error("IsRegular/IsDir disagree with the files")
	}
}

func TestWalkDirGoesOnPastUnreadableDirectories(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		// root reads every directory: run this test again as nobody.
		rerunUnprivileged(t)
		return
	}
	dir, err := os.MkdirTemp("", "inputfs")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for _, p := range []string{"a/x.yaml", "b/y.yaml", "c/z.yaml"} {
		p = filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	if err := os.Chmod(filepath.Join(dir, "b"), 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(dir, "b"), 0o755)
	os.Symlink("../outside", filepath.Join(dir, "c", "out"))
	f := New(dir)
	var files, failed []string
	err = f.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, path)
		if err != nil {
			failed = append(failed, rel)
			return nil
		}
		if !d.IsDir() && d.Type().IsRegular() {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(files, " "), "a/x.yaml c/z.yaml"; got != want {
		t.Errorf("files = %s, want %s", got, want)
	}
	if strings.Join(failed, " ") != "b" {
		t.Errorf("failed = %v, want [b]", failed)
	}
}

// rerunUnprivileged runs the current test in a copy of the test binary as the user
// nobody, through setpriv, and fails when it fails.
func rerunUnprivileged(t *testing.T) {
	t.Helper()
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Fatalf("running as root needs setpriv (util-linux) to test as an unprivileged user: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "unpriv")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "test")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), "HOME=/tmp", "GOCOVERDIR=")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}

// A symbolic link stored as text (git's form where it cannot make links) is read
// as the link, under the same confinement; one whose target is not there, and an
// encrypted file, are unseen rather than broken.
func TestTextLinksAndEncryptedFiles(t *testing.T) {
	t.Parallel()
	dir := layout(t)
	in := filepath.Join(dir, "in")
	for name, content := range map[string]string{
		"in/vars/common.tf":  "variable \"a\" {}\n",
		"in/root/common.tf":  "../vars/common.tf",
		"in/root/chain.tf":   "common.tf",
		"in/root/gone.tf":    "../generated/backend.tf",
		"in/root/escape.tf":  "../../outside/x.tf",
		"outside/x.tf":       "SECRET",
		"in/root/notes.tf":   "see ../vars/common.tf",
		"in/root/other.yaml": "../vars/common.tf",
		"in/root/secret.tf":  "\x00GITCRYPT\x00\x01\x02",
	} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	f := New(in)
	for _, name := range []string{"root/common.tf", "root/chain.tf"} {
		if got, err := f.ReadFile(filepath.Join(in, name), MaxConfig); err != nil || string(got) != "variable \"a\" {}\n" {
			t.Errorf("%s: %q, %v; want the target's content", name, got, err)
		}
	}
	for _, name := range []string{"root/gone.tf", "root/escape.tf", "root/secret.tf"} {
		_, err := f.ReadFile(filepath.Join(in, name), MaxConfig)
		if !Unseen(err) || strings.Contains(fmt.Sprint(err), "SECRET") {
			t.Errorf("%s: %v; want an unseen error without the content", name, err)
		}
	}
	var oe *OutsideError
	if _, err := f.ReadFile(filepath.Join(in, "root/escape.tf"), MaxConfig); !errors.As(err, &oe) {
		t.Errorf("a text link out of the inputs: %v, want an OutsideError", err)
	}
	// Not links: text with spaces, a path of another kind.
	for name, want := range map[string]string{"root/notes.tf": "see ../vars/common.tf", "root/other.yaml": "../vars/common.tf"} {
		if got, err := f.ReadFile(filepath.Join(in, name), MaxConfig); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want it read as it is", name, got, err)
		}
	}
}

// A walk whose root is not there ends when the function says so, as
// filepath.WalkDir does: SkipAll and SkipDir are not errors.
func TestWalkDirMissingRoot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	f := New(dir)
	missing := filepath.Join(dir, "nope")
	calls := 0
	for _, stop := range []error{filepath.SkipAll, filepath.SkipDir} {
		err := f.WalkDir(missing, func(path string, d fs.DirEntry, err error) error {
			calls++
			if path != missing || d != nil || !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("fn(%s, %v, %v), want the missing root and its error", path, d, err)
			}
			return stop
		})
		if err != nil {
			t.Errorf("WalkDir returned %v for %v", err, stop)
		}
	}
	if calls != 2 {
		t.Errorf("fn called %d times, want once per walk", calls)
	}
}

// A tree nested far deeper than any repository is walked to MaxDepth, each
// directory opened once from its parent, and the rest is reported, not walked.
func TestWalkDepth(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := dir
	for i := 0; i < 2000; i++ {
		p = filepath.Join(p, "d")
	}
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Skipf("this file system does not hold a path that deep: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "d", "d", "a.yaml"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := New(dir)
	defer f.Close()
	var dirs, files int
	var deep []error
	err := f.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			deep = append(deep, err)
		case d.IsDir():
			dirs++
		default:
			files++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if dirs != MaxDepth+1 || files != 1 {
		t.Errorf("walked %d directories and %d files, want %d and 1", dirs, files, MaxDepth+1)
	}
	var de *DepthError
	if len(deep) != 1 || !errors.As(deep[0], &de) || strings.Count(de.Path, "/d") != MaxDepth {
		t.Errorf("errors %v, want one DepthError at depth %d", deep, MaxDepth)
	}
}

// A link whose target does not exist is an input that cannot be seen, named
// as a link when it points inside the inputs and as outside when it points
// outside them; a missing file that is no link stays missing.
func TestDanglingLinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "cluster"), 0o755); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"cluster/backend.tf": "../tf-setup/generated/backend.tf",
		"inside.yaml":        "sub/none.yaml",
		"outside.yaml":       "../../elsewhere/none.yaml",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	f := New(dir)
	defer f.Close()
	for _, name := range []string{"cluster/backend.tf", "inside.yaml"} {
		_, err := f.ReadFile(filepath.Join(dir, name), 1<<20)
		var de *DanglingLinkError
		if !errors.As(err, &de) || !Unseen(err) || !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s: %v, want a dangling link that cannot be seen", name, err)
		}
		if !strings.Contains(err.Error(), "is a symbolic link to "+links[name]) {
			t.Errorf("%s: %q does not name the link's target", name, err)
		}
	}
	_, err := f.ReadFile(filepath.Join(dir, "outside.yaml"), 1<<20)
	var oe *OutsideError
	if !errors.As(err, &oe) || !Unseen(err) {
		t.Errorf("a dangling link pointing outside: %v, want outside the inputs", err)
	}
	named := New(filepath.Join(dir, "inside.yaml"), dir)
	defer named.Close()
	if _, err := named.ReadFile(filepath.Join(dir, "inside.yaml"), 1<<20); !Unseen(err) {
		t.Errorf("a dangling link given by name: %v, want one that cannot be seen", err)
	}
	_, err = f.ReadFile(filepath.Join(dir, "missing.tf"), 1<<20)
	if err == nil || Unseen(err) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want not-exist that is not unseen", err)
	}
}
