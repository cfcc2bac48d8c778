package schema

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"sigs.k8s.io/yaml"
)

// The CRDs are copied verbatim from the Karpenter AWS provider; crds/README.md names
// the commit of each directory.
//
//go:embed crds/*/*.yaml
var crdFiles embed.FS

// Release names one embedded set of Karpenter CRDs.
type Release string

// The embedded releases, oldest first.
const (
	// V0_37 is Karpenter v0.37.7, the last release whose storage version is v1beta1;
	// it is the schema v1beta1 objects are validated against.
	V0_37 Release = "v0.37.7"
	// V1_0 is Karpenter v1.0.0, the only minor release that serves both v1 and v1beta1
	// (through conversion webhooks).
	V1_0 Release = "v1.0.0"
	// Current is the provider's main branch at the embedded commit (chart 1.14.1); v1
	// objects are validated against it.
	Current Release = "current"
)

// Releases lists the embedded releases, oldest first.
func Releases() []Release { return []Release{V0_37, V1_0, Current} }

// ReleaseFor returns the embedded release whose CRDs a Karpenter version (a chart or
// image version: "1.8.3", "v0.37.7", "0.36.2") serves the same way: v0.32 to v0.37
// (v1beta1 stored) → V0_37, 1.0.x (v1 stored, v1beta1 converted) → V1_0, 1.1 and
// later (v1 only) → Current. ok is false for versions before v0.32, which serve the
// v1alpha5 API, and for text that is not a version.
func ReleaseFor(version string) (r Release, ok bool) {
	major, minor, ok := majorMinor(version)
	if !ok {
		return "", false
	}
	switch {
	case major == 0 && minor >= 32:
		return V0_37, true
	case major == 1 && minor == 0:
		return V1_0, true
	case major >= 1:
		return Current, true
	}
	return "", false
}

// ServesV1alpha5 reports whether a Karpenter version serves the v1alpha5 kinds
// (Provisioner, AWSNodeTemplate, Machine): every version up to v0.32, which
// served them beside v1beta1 to migrate.
func ServesV1alpha5(version string) bool {
	major, minor, ok := majorMinor(version)
	return ok && major == 0 && minor <= 32
}

// ServesAPI reports whether a Karpenter version serves an apiVersion of its
// kinds: karpenter.sh/v1alpha5 and karpenter.k8s.aws/v1alpha1 up to v0.32,
// v1beta1 from v0.32 to 1.0 (1.0 through conversion), v1 from 1.0. known is
// false for a version that is not one, or an apiVersion Karpenter never had.
func ServesAPI(apiVersion, version string) (served, known bool) {
	major, minor, ok := majorMinor(version)
	if !ok {
		return false, false
	}
	old := major == 0
	switch apiVersion {
	case "karpenter.sh/v1alpha5", "karpenter.k8s.aws/v1alpha1":
		return ServesV1alpha5(version), true
	case "karpenter.sh/v1beta1", "karpenter.k8s.aws/v1beta1":
		return (old && minor >= 32) || (major == 1 && minor == 0), true
	case "karpenter.sh/v1", "karpenter.k8s.aws/v1":
		return major >= 1, true
	}
	return false, false
}

func majorMinor(version string) (major, minor int, ok bool) {
	v := strings.TrimPrefix(strings.TrimSpace(version), "v")
	majorText, rest, _ := strings.Cut(v, ".")
	minorText, _, _ := strings.Cut(rest, ".")
	major, err1 := strconv.Atoi(majorText)
	minor, err2 := strconv.Atoi(minorText)
	if err1 != nil || err2 != nil || major < 0 || minor < 0 {
		return 0, 0, false
	}
	return major, minor, true
}

// groupVersionKind identifies one served version of one CRD.
type groupVersionKind struct {
	group, version, kind string
}

func (g groupVersionKind) apiVersion() string { return g.group + "/" + g.version }

// compiled is everything needed to validate objects of one served version, built once.
type compiled struct {
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
	cel        ruleValidator
	// embedded is whether the schema has embedded resources below its root, whose
	// metadata the API server validates separately.
	embedded bool
	// rules maps the message a CEL rule reports to the rules that report it, so that
	// a failure can be traced back to the fields it reads.
	rules map[string][]string
}

// version is one served version of a CRD: its schema as written, compiled on first use.
type version struct {
	props *apiextensionsv1.JSONSchemaProps
	once  sync.Once
	c     *compiled
	err   error
}

func (v *version) compile() (*compiled, error) {
	v.once.Do(func() { v.c, v.err = compile(v.props) })
	return v.c, v.err
}

// releaseSchemas holds the parsed CRDs of one release.
type releaseSchemas struct {
	versions map[groupVersionKind]*version
}

var (
	loadOnce   sync.Once
	loaded     map[Release]*releaseSchemas
	loadErr    error
	errNoCRDs  = errors.New("no embedded CRDs")
	releaseDir = map[Release]string{V0_37: "crds/v0.37.7", V1_0: "crds/v1.0.0", Current: "crds/current"}
)

// schemas parses the embedded CRDs on first use; compiling a version waits until an
// object of that version is validated.
func schemas() (map[Release]*releaseSchemas, error) {
	loadOnce.Do(func() { loaded, loadErr = loadAll() })
	return loaded, loadErr
}

func loadAll() (map[Release]*releaseSchemas, error) {
	out := map[Release]*releaseSchemas{}
	for _, r := range Releases() {
		rs, err := loadRelease(releaseDir[r])
		if err != nil {
			return nil, fmt.Errorf("load CRDs of %s: %w", r, err)
		}
		out[r] = rs
	}
	return out, nil
}

func loadRelease(dir string) (*releaseSchemas, error) {
	entries, err := fs.ReadDir(crdFiles, dir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	rs := &releaseSchemas{versions: map[groupVersionKind]*version{}}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		file := path.Join(dir, e.Name())
		data, err := crdFiles.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", file, err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			return nil, fmt.Errorf("parse %s: %w", file, err)
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			key := groupVersionKind{group: crd.Spec.Group, version: v.Name, kind: crd.Spec.Names.Kind}
			rs.versions[key] = &version{props: v.Schema.OpenAPIV3Schema}
		}
	}
	if len(rs.versions) == 0 {
		return nil, fmt.Errorf("%s: %w", dir, errNoCRDs)
	}
	return rs, nil
}

// lookup returns the compiled schema of a served version in a release, or nil when the
// release does not serve it.
func lookup(r Release, key groupVersionKind) (*compiled, error) {
	all, err := schemas()
	if err != nil {
		return nil, err
	}
	rs, ok := all[r]
	if !ok {
		return nil, nil
	}
	v, ok := rs.versions[key]
	if !ok {
		return nil, nil
	}
	return v.compile()
}

// served reports which releases serve a group/version/kind, oldest first.
func served(key groupVersionKind) []Release {
	all, err := schemas()
	if err != nil {
		return nil
	}
	var out []Release
	for _, r := range Releases() {
		if _, ok := all[r].versions[key]; ok {
			out = append(out, r)
		}
	}
	return out
}

// compile turns a CRD version's openAPIV3Schema into what the API server validates
// with: the structural schema (pruning, defaulting, list types), the OpenAPI schema
// validator and the CEL rules.
func compile(props *apiextensionsv1.JSONSchemaProps) (*compiled, error) {
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(props, &internal, nil); err != nil {
		return nil, fmt.Errorf("convert schema: %w", err)
	}
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return nil, fmt.Errorf("structural schema: %w", err)
	}
	// The API server prunes unknown fields out of defaults before using them; do the
	// same so that defaulting cannot reintroduce a dropped field.
	s = s.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil, fmt.Errorf("prune defaults: %w", err)
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(&internal)
	if err != nil {
		return nil, fmt.Errorf("schema validator: %w", err)
	}
	c := &compiled{
		structural: s,
		validator:  validator,
		cel:        newRuleValidator(s),
		embedded:   hasEmbedded(s, true),
		rules:      map[string][]string{},
	}
	indexRules(s, c.rules)
	for _, rules := range c.rules {
		sort.Strings(rules)
	}
	return c, nil
}

// indexRules records every CEL rule of s and its descendants under the text the API
// server quotes when the rule fails or cannot be evaluated: its message, or the rule
// itself when it has none.
func indexRules(s *structuralschema.Structural, into map[string][]string) {
	if s == nil {
		return
	}
	for _, r := range s.XValidations {
		key := strings.TrimSpace(r.Message)
		if key == "" {
			key = strings.TrimSpace(r.Rule)
		}
		into[key] = append(into[key], r.Rule)
	}
	for _, p := range s.Properties {
		indexRules(&p, into)
	}
	if s.AdditionalProperties != nil {
		indexRules(s.AdditionalProperties.Structural, into)
	}
	indexRules(s.Items, into)
}

func hasEmbedded(s *structuralschema.Structural, root bool) bool {
	if s == nil {
		return false
	}
	if s.XEmbeddedResource && !root {
		return true
	}
	if hasEmbedded(s.Items, false) {
		return true
	}
	if s.AdditionalProperties != nil && hasEmbedded(s.AdditionalProperties.Structural, false) {
		return true
	}
	for _, p := range s.Properties {
		if hasEmbedded(&p, false) {
			return true
		}
	}
	return false
}
