package lint

import "github.com/eksdoctor/eksdoctor/source/manifest"

// YAMLText renders a value as block YAML with keys in conventional order. It is
// used for every YAML snippet a fix proposes; the YAML writer is the manifest
// source's.
func YAMLText(v any) string { return manifest.YAMLText(v) }
