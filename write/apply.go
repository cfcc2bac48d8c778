package write

import (
	"fmt"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/manifest"
	"github.com/eksdoctor/eksdoctor/source/terraform"
)

// appliers apply each edit format to a file's content; each format's is in
// the source package that reads and writes that format. Shell edits change
// no file.
var appliers = map[string]func(content []byte, e cluster.Edit) ([]byte, error){
	cluster.FormatYAML:   manifest.ApplyYAML,
	cluster.FormatHCL:    terraform.ApplyHCL,
	cluster.FormatValues: terraform.ApplyHelmValues,
}

// Apply applies one edit to the content of the file it names, the way a user
// pasting it would, and returns the new content.
func Apply(content []byte, e cluster.Edit) ([]byte, error) {
	a, ok := appliers[e.Format]
	if !ok {
		return nil, fmt.Errorf("no applier for format %q", e.Format)
	}
	return a(content, e)
}
