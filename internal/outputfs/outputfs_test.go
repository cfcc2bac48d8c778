package outputfs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// inDir runs the test in dir as the working directory.
func inDir(t *testing.T, dir string) {
	t.Helper()
	t.Chdir(dir)
}

// layout builds, under a temporary directory:
//
//	outside/target.txt        what a link would lead a write to
//	work/                     the working directory
//	work/report.sarif         -> ../outside/target.txt
//	work/dangling.json        -> ../outside/new.txt (not there)
//	work/linkdir              -> ../outside
//	work/sub/old.txt          a file to replace
//	work/fifo                 a named pipe
//	work/dir/                 a directory
func layout(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "outside"), 0o755))
	must(os.MkdirAll(filepath.Join(root, "work", "sub"), 0o755))
	must(os.MkdirAll(filepath.Join(root, "work", "dir"), 0o755))
	must(os.WriteFile(filepath.Join(root, "outside", "target.txt"), []byte("KEEP"), 0o644))
	must(os.WriteFile(filepath.Join(root, "work", "sub", "old.txt"), []byte("old"), 0o600))
	must(os.Symlink("../outside/target.txt", filepath.Join(root, "work", "report.sarif")))
	must(os.Symlink("../outside/new.txt", filepath.Join(root, "work", "dangling.json")))
	must(os.Symlink("../outside", filepath.Join(root, "work", "linkdir")))
	must(syscall.Mkfifo(filepath.Join(root, "work", "fifo"), 0o644))
	return root
}

func TestRefusesLinksAndNonRegularFiles(t *testing.T) {
	root := layout(t)
	inDir(t, filepath.Join(root, "work"))
	for _, tc := range []struct {
		path string
		want string
		link bool
	}{
		{path: "report.sarif", want: "report.sarif is a symbolic link", link: true},
		{path: "dangling.json", want: "dangling.json is a symbolic link", link: true},
		{path: "linkdir/target.txt", want: "linkdir is a symbolic link", link: true},
		{path: "linkdir/new.txt", want: "linkdir is a symbolic link", link: true},
		{path: filepath.Join(root, "work", "report.sarif"), want: "is a symbolic link", link: true},
		{path: "fifo", want: "fifo is a named pipe"},
		{path: "dir", want: "dir is a directory"},
		{path: ".", want: "is a directory"},
	} {
		err := WriteFile(tc.path, []byte("PWNED"), 0o644)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !IsRefused(err) {
			t.Errorf("WriteFile(%s) = %v, want a refusal saying %q", tc.path, err, tc.want)
		}
		var le *LinkError
		if errors.As(err, &le) != tc.link {
			t.Errorf("WriteFile(%s): %T, link error %v", tc.path, err, tc.link)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(root, "outside", "target.txt")); string(data) != "KEEP" {
		t.Errorf("the file a link points to was written: %q", data)
	}
	if _, err := os.Lstat(filepath.Join(root, "outside", "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dangling link's target was created (%v)", err)
	}
	if st, err := os.Lstat(filepath.Join(root, "work", "report.sarif")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link itself was replaced: %v", err)
	}
	leftovers(t, filepath.Join(root, "work"))
}

func TestWritesAtomicallyKeepingTheMode(t *testing.T) {
	root := layout(t)
	inDir(t, filepath.Join(root, "work"))
	if err := WriteFile("sub/old.txt", []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat("sub/old.txt")
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile("sub/old.txt"); string(data) != "new" {
		t.Errorf("content %q, want new", data)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the replaced file's 0600", st.Mode().Perm())
	}
	if err := WriteFile("fresh.json", []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat("fresh.json"); st == nil || st.Mode().Perm() != 0o644 {
		t.Errorf("a new file's mode is not 0644: %v", st)
	}
	leftovers(t, ".")
}

func TestFailedWriteLeavesTheFile(t *testing.T) {
	root := layout(t)
	inDir(t, filepath.Join(root, "work"))
	boom := errors.New("boom")
	err := WriteWith("sub/old.txt", 0o644, func(w io.Writer) error {
		w.Write([]byte("half"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the writer's", err)
	}
	if data, _ := os.ReadFile("sub/old.txt"); string(data) != "old" {
		t.Errorf("a failed write changed the file: %q", data)
	}
	leftovers(t, ".")
}

func TestOutsideTheWorkingDirectory(t *testing.T) {
	root := layout(t)
	inDir(t, filepath.Join(root, "work"))
	// A path the user names outside the working directory is theirs: written,
	// but never through a link at its own name.
	out := filepath.Join(root, "outside", "report.json")
	if err := WriteFile(out, []byte("{}"), 0o644); err != nil {
		t.Fatalf("write %s: %v", out, err)
	}
	if err := os.Symlink("target.txt", filepath.Join(root, "outside", "l.json")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(filepath.Join(root, "outside", "l.json"), []byte("x"), 0o644); !IsRefused(err) {
		t.Errorf("a link outside the working directory was written through: %v", err)
	}
	if data, _ := os.ReadFile(filepath.Join(root, "outside", "target.txt")); string(data) != "KEEP" {
		t.Errorf("the file a link points to was written: %q", data)
	}
}

func TestMissingDirectory(t *testing.T) {
	root := layout(t)
	inDir(t, filepath.Join(root, "work"))
	err := WriteFile("nope/report.json", []byte("{}"), 0o644)
	if err == nil || IsRefused(err) || !strings.Contains(err.Error(), "nope/report.json") {
		t.Errorf("err = %v, want a plain error naming the path", err)
	}
}

// leftovers fails when a temporary file is left in dir.
func leftovers(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".tmp") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}
