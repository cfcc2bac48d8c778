package cluster

import (
	"fmt"
	"strconv"
	"strings"
)

// Origin says where a piece of the model was declared: a file and line, and the field
// path inside the object when the loader knows it ("spec.template.spec.tolerations").
type Origin struct {
	File string
	Line int
	Path string
}

// String renders file:line, the form editors and terminals make clickable.
func (o Origin) String() string {
	switch {
	case o.File == "":
		return ""
	case o.Line <= 0:
		return o.File
	default:
		return o.File + ":" + strconv.Itoa(o.Line)
	}
}

// InFile reports whether the origin is a place in an input file, not a running
// cluster ("cluster:CONTEXT", what objects read live have).
func (o Origin) InFile() bool { return o.File != "" && !strings.HasPrefix(o.File, "cluster:") }

// IsZero reports whether nothing is known about the origin.
func (o Origin) IsZero() bool { return o.File == "" && o.Line == 0 && o.Path == "" }

// WithPath returns the origin with a field path attached.
func (o Origin) WithPath(path string) Origin {
	o.Path = path
	return o
}

// ObjectRef names an object the way kubectl does.
type ObjectRef struct {
	Kind      string
	Namespace string
	Name      string
}

// String renders Kind/namespace/name (namespace omitted for cluster-scoped objects).
func (r ObjectRef) String() string {
	if r.Namespace == "" {
		return r.Kind + "/" + r.Name
	}
	return fmt.Sprintf("%s/%s/%s", r.Kind, r.Namespace, r.Name)
}

// Less orders references by kind, namespace, then name.
func (r ObjectRef) Less(o ObjectRef) bool { return r.Compare(o) < 0 }

// Compare orders references by kind, namespace and name: -1, 0 or +1.
func (r ObjectRef) Compare(o ObjectRef) int {
	if c := strings.Compare(r.Kind, o.Kind); c != 0 {
		return c
	}
	if c := strings.Compare(r.Namespace, o.Namespace); c != 0 {
		return c
	}
	return strings.Compare(r.Name, o.Name)
}

// Problem is an input that could not be used: a file that does not parse, an object
// that cannot be decoded. It becomes an invalid-input finding; the run goes on.
type Problem struct {
	Origin  Origin
	Object  ObjectRef // zero when the problem is not tied to an object
	Message string
	// Unresolved marks input that is valid as far as kubectl, Helm or Terraform
	// can tell but that eksdoctor could not read or evaluate (a file outside the
	// inputs, a module it cannot see): what depends on it is unknown, not wrong.
	Unresolved bool
}

// Note records something a loader decided on the user's behalf (a default applied, a
// version assumed), so explanations can cite it.
type Note struct {
	Origin  Origin
	Subject string
	Message string
}
