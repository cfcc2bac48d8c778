package terraform

import (
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/eksdoctor/eksdoctor/internal/inputfs"
)

// LocalModuleDirs returns the directories that the .tf files of dir call as local
// modules (source = "./..." or "../..."), cleaned and joined to dir. A directory a
// configuration in the inputs calls is one of its modules, not a root of its own.
// Files that do not parse are skipped; loading reports them.
func LocalModuleDirs(fsys *inputfs.FS, dir string) []string {
	entries, err := fsys.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".tf") {
			continue
		}
		src, err := fsys.ReadFile(filepath.Join(dir, name), inputfs.MaxConfig)
		if err != nil {
			continue
		}
		if _, deep := tooDeep(src); deep {
			continue
		}
		f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
		if diags.HasErrors() {
			continue
		}
		body, ok := f.Body.(*hclsyntax.Body)
		if !ok {
			continue
		}
		for _, b := range body.Blocks {
			if b.Type != "module" {
				continue
			}
			s, ok := literalString(blockAttr(b, "source"))
			if !ok || !isLocalSource(s) {
				continue
			}
			out = append(out, filepath.Clean(filepath.Join(dir, filepath.FromSlash(strings.ReplaceAll(s, "\\", "/")))))
		}
	}
	return out
}
