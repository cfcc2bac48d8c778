package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/eksdoctor/eksdoctor/internal/shared"
)

// A faithful copy of a repository keeps its symbolic links, and a link to a
// file a setup step generates dangles. Where the shared copy stores links as
// text (as git writes them where it cannot make links), the configuration is
// copied with each such file made a real link again, and eksdoctor must say the
// same of both: a link it cannot follow is an input it cannot read, never a
// broken configuration.
func TestRealWorldLinksKept(t *testing.T) {
	t.Parallel()
	root := shared.Dir(t, "realworld")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	tried := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		src := filepath.Join(root, e.Name())
		stubs := linkStubs(t, src)
		if len(stubs) == 0 {
			continue
		}
		tried++
		t.Run(e.Name(), func(t *testing.T) {
			t.Parallel()
			dst := filepath.Join(t.TempDir(), e.Name())
			copyWithLinks(t, src, dst, stubs)
			want, got := runRealWorld(t, src), runRealWorld(t, dst)
			if !slices.Equal(want.findings, got.findings) || !slices.Equal(want.reads, got.reads) {
				t.Errorf("with links kept, eksdoctor says otherwise:\ntext links: %v\n%v\nreal links: %v\n%v", want.reads, want.findings, got.reads, got.findings)
			}
		})
	}
	if tried == 0 {
		t.Fatal("no configuration of the corpus holds a link stored as text; the test checks nothing")
	}
}

// linkStubs lists the files of dir that are symbolic links stored as text: a
// short relative path with the file's own extension, and nothing else.
func linkStubs(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil || info.Size() == 0 || info.Size() > 256 {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s := string(data)
		if ext := filepath.Ext(p); ext != "" && strings.HasSuffix(s, ext) && strings.Contains(s, "/") &&
			!strings.ContainsAny(s, " \t\r\n{}[]=:\"'#") && !filepath.IsAbs(s) {
			out[p] = s
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func copyWithLinks(t *testing.T, src, dst string, stubs map[string]string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if target, ok := stubs[p]; ok {
			return os.Symlink(target, to)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
