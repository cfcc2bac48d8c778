package lint

import (
	"embed"
	"path"
	"strings"

	"golang.org/x/tools/txtar"
)

// Every check's documentation shows an example taken from a fixture in
// examples/<id>.txtar: the file its `example FILE` line names, as reported,
// and fixed/FILE, clean. The tests run each example as a fixture (it fires,
// its fix works, its fixed form is clean), so no example in the docs is
// unexecuted.
//
//go:embed examples/*.txtar
var exampleFiles embed.FS

// Example is a check's documented example.
type Example struct {
	// File is the file shown; Before is it as reported, After as fixed.
	File          string
	Before, After string
	// Format is the file's language for the docs ("yaml", "hcl").
	Format string
	// Context lists the example's other files, which the check reads too.
	Context []string
}

// ExampleOf returns a check's example; ok is false when it has none.
func ExampleOf(id string) (Example, bool) {
	data, err := exampleFiles.ReadFile("examples/" + id + ".txtar")
	if err != nil {
		return Example{}, false
	}
	a := txtar.Parse(data)
	var ex Example
	for _, line := range strings.Split(string(a.Comment), "\n") {
		if name, ok := strings.CutPrefix(line, "example "); ok {
			ex.File = strings.TrimSpace(name)
		}
	}
	for _, f := range a.Files {
		switch f.Name {
		case ex.File:
			ex.Before = string(f.Data)
		case "fixed/" + ex.File:
			ex.After = string(f.Data)
		default:
			if !strings.HasPrefix(f.Name, "fixed/") {
				ex.Context = append(ex.Context, f.Name)
			}
		}
	}
	switch path.Ext(ex.File) {
	case ".tf":
		ex.Format = "hcl"
	case ".json":
		ex.Format = "json"
	default:
		ex.Format = "yaml"
	}
	return ex, ex.File != "" && ex.Before != ""
}
