package catalog

import (
	"embed"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"
)

// The chart and add-on knowledge base is data: every well-known chart has a directory
// under charts/ with chart.yaml (version ranges, workloads, provenance), verbatim
// copies of upstream default values files under values/, and reduced templates under
// templates/ that reproduce the scheduling-relevant fields of the upstream templates.
// See charts/README.md for the format. The all: prefix keeps _helpers.tpl.
//
//go:embed all:charts all:addons
var knowledgeFS embed.FS

// ChartKeyStatus tells whether a chart version reads a values key.
type ChartKeyStatus int

const (
	_ ChartKeyStatus = iota
	// ChartKeyRead: the chart version reads the key (it is in its default values, is
	// under a free-form map, or is a key the templates are known to read).
	ChartKeyRead
	// ChartKeyUnread: no template of the chart version reads the key.
	ChartKeyUnread
	// ChartKeyUnverified: the knowledge base cannot tell for this version.
	ChartKeyUnverified
)

func (s ChartKeyStatus) String() string {
	switch s {
	case ChartKeyRead:
		return "read"
	case ChartKeyUnread:
		return "unread"
	case ChartKeyUnverified:
		return "unverified"
	}
	return "unknown"
}

// ChartComponent is a workload a chart or an EKS add-on creates.
type ChartComponent struct {
	// ID is eksdoctor's component id ("karpenter", "ebs-csi-node", "coredns").
	ID string `json:"id"`
	// Kind is the workload kind: Deployment, DaemonSet or Job.
	Kind string `json:"kind"`
	// Name describes the object name ("<fullname>", "ebs-csi-node").
	Name string `json:"name"`
	// ValuesPrefix is where the component's values live ("" for top level,
	// "controller", "node").
	ValuesPrefix string `json:"valuesPrefix"`
	// Hook marks Helm hook workloads (Jobs run at install or upgrade).
	Hook bool `json:"hook,omitempty"`
	// Bootstrap explains why the component must run before Karpenter capacity
	// exists; empty when it need not.
	Bootstrap string `json:"bootstrap,omitempty"`
	// NodeCritical explains why nodes need the DaemonSet to work and drain
	// correctly; empty for other components.
	NodeCritical string `json:"nodeCritical,omitempty"`
	// Fields maps values keys under ValuesPrefix to the object field they set
	// ("tolerations" → "spec.template.spec.tolerations"), so findings can point at
	// the line where the user set the value.
	Fields map[string]string `json:"fields,omitempty"`
	// Provenance cites where the component's shape comes from.
	Provenance []string `json:"provenance,omitempty"`
}

// Chart is what the knowledge base knows about one version of a well-known chart.
type Chart struct {
	// Name is the chart name ("karpenter").
	Name  string
	Title string
	// Version is the chart version described: the requested one when it falls in a
	// known range, otherwise the representative version of the range used.
	Version string
	// Requested is the version asked for ("" when unpinned).
	Requested string
	// Assumed explains why a version other than the requested one is described;
	// empty when the requested version is in a known range.
	Assumed string
	// AppVersion is the application version the chart version ships (the image
	// tag, without a "v" prefix).
	AppVersion string
	// Range is the version range of the entry used (">= 0.32.0, < 0.33.0").
	Range    string
	Upstream string
	// Provenance cites the sources of the entry, with [infer] marking inferences.
	Provenance []string
	Notes      []string
	Components []ChartComponent
	// Features are switches the reduced templates read through the chart
	// annotations ("schedulerName", "postInstallHook").
	Features []string
	// Templates holds the reduced templates by file name ("templates/deployment.yaml").
	Templates map[string][]byte

	values         map[string]any
	keys           map[string]bool
	freeform       []string
	keysUnverified bool
}

// DefaultValues returns a copy of the chart version's default values.
func (c *Chart) DefaultValues() map[string]any { return deepCopyMap(c.values) }

// Component returns the component with the given id.
func (c *Chart) Component(id string) (*ChartComponent, bool) {
	for i := range c.Components {
		if c.Components[i].ID == id {
			return &c.Components[i], true
		}
	}
	return nil, false
}

// HasFeature reports whether the chart version has a template feature.
func (c *Chart) HasFeature(f string) bool { return hasString(c.Features, f) }

// ValuesKeys lists the dotted values keys the chart version reads, sorted. Keys
// under free-form maps are represented by the map's key.
func (c *Chart) ValuesKeys() []string {
	out := make([]string, 0, len(c.keys))
	for k := range c.keys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ValuesKey tells whether the chart version reads a dotted values key
// ("settings.interruptionQueue"). List indexes ("tolerations.0.key", or
// "tolerations[0].key" as --set writes them) are inside the list's key and read.
func (c *Chart) ValuesKey(key string) ChartKeyStatus {
	if c.keysUnverified {
		return ChartKeyUnverified
	}
	key = normalizeKey(key)
	if key == "" {
		return ChartKeyUnverified
	}
	parts := strings.Split(key, ".")
	for i := 1; i < len(parts); i++ {
		// Below a value the chart passes through whole (toYaml .Values.affinity),
		// every key is read, whatever the defaults hold.
		if hasString(c.freeform, strings.Join(parts[:i], ".")) {
			return ChartKeyRead
		}
	}
	for i := len(parts); i > 0; i-- {
		p := strings.Join(parts[:i], ".")
		if !c.keys[p] {
			continue
		}
		if i == len(parts) {
			return ChartKeyRead
		}
		// A prefix is a key: the rest is read only when the prefix holds a
		// free-form value (a map the user fills, a list, a scalar default of null).
		if c.isFreeform(p) {
			return ChartKeyRead
		}
		return ChartKeyUnread
	}
	return ChartKeyUnread
}

// FreeformPrefix is the shortest proper prefix of a dotted key the chart
// version reads whole (nodeSelector in nodeSelector.kubernetes.io/os), where
// the rest is one map key that may hold dots itself; "" when there is none.
func (c *Chart) FreeformPrefix(key string) string {
	parts := strings.Split(normalizeKey(key), ".")
	for i := 1; i < len(parts); i++ {
		p := strings.Join(parts[:i], ".")
		if hasString(c.freeform, p) || (c.keys[p] && c.isFreeform(p)) {
			return p
		}
	}
	return ""
}

func (c *Chart) isFreeform(key string) bool {
	if hasString(c.freeform, key) {
		return true
	}
	v, ok := lookupPath(c.values, key)
	if !ok {
		// Known through extraKeys: nothing says what is below, so assume read.
		return true
	}
	switch t := v.(type) {
	case nil, []any:
		return true
	case map[string]any:
		return len(t) == 0
	}
	return false
}

// normalizeKey turns "a.b[0].c" and "a.b.0.c" into "a.b"; list items are inside
// the list value and the chart reads the list as a whole.
func normalizeKey(key string) string {
	key = strings.TrimSpace(key)
	if i := strings.IndexByte(key, '['); i >= 0 {
		key = key[:i]
	}
	parts := strings.Split(key, ".")
	for i, p := range parts {
		if _, err := strconv.Atoi(p); err == nil {
			parts = parts[:i]
			break
		}
	}
	return strings.Trim(strings.Join(parts, "."), ".")
}

// ChartNames lists the charts the knowledge base knows, sorted.
func ChartNames() []string {
	kb, err := knowledge()
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(kb.charts))
	for _, c := range kb.charts {
		out = append(out, c.Name)
	}
	sort.Strings(out)
	return out
}

// ChartFor returns the knowledge of a chart at a version. name is a chart name
// ("karpenter"), a repository-qualified name ("eks/aws-load-balancer-controller") or
// a chart URL ("oci://public.ecr.aws/karpenter/karpenter"). An empty or unparsable
// version, or one newer than every known range, is described by the newest known
// range; one older than every range by the oldest; Chart.Assumed says so.
func ChartFor(name, version string) (*Chart, bool) {
	kb, err := knowledge()
	if err != nil {
		return nil, false
	}
	cf := kb.chartByName(name)
	if cf == nil {
		return nil, false
	}
	c, err := kb.chartAt(cf, version)
	if err != nil {
		return nil, false
	}
	return c, true
}

// chartFile is charts/<name>/chart.yaml.
type chartFile struct {
	Name         string           `json:"name"`
	Title        string           `json:"title"`
	Upstream     string           `json:"upstream"`
	Names        []string         `json:"names"`
	Repositories []string         `json:"repositories"`
	Freeform     []string         `json:"freeform"`
	ExtraKeys    []string         `json:"extraKeys"`
	Components   []ChartComponent `json:"components"`
	Versions     []rangeEntry     `json:"versions"`

	dir string
}

// rangeEntry is one version range of a chart or add-on.
type rangeEntry struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Representative is the version described when the requested one is unknown.
	Representative string `json:"representative"`
	// Values are default values files (under values/); the first gives the
	// defaults, all of them together give the keys.
	Values         []string       `json:"values"`
	Overrides      map[string]any `json:"overrides"`
	AddKeys        []string       `json:"addKeys"`
	RemoveKeys     []string       `json:"removeKeys"`
	KeysUnverified bool           `json:"keysUnverified"`
	Features       []string       `json:"features"`
	Templates      []string       `json:"templates"`
	Components     []string       `json:"components"`
	// AppVersion is a pattern: {version}, {major}, {minor}, {patch} are replaced
	// from the chart (or add-on) version.
	AppVersion string   `json:"appVersion"`
	Provenance []string `json:"provenance"`
	Notes      []string `json:"notes"`

	// Add-on ranges only.
	Chart  *addonChartRef `json:"chart"`
	Config addonConfig    `json:"config"`
}

func (r *rangeEntry) contains(v version) bool {
	if r.From != "" {
		if f, ok := parseVersion(r.From); ok && v.less(f) {
			return false
		}
	}
	if r.To != "" {
		if t, ok := parseVersion(r.To); ok && !v.less(t) {
			return false
		}
	}
	return true
}

func (r *rangeEntry) describe() string {
	switch {
	case r.From != "" && r.To != "":
		return ">= " + r.From + ", < " + r.To
	case r.From != "":
		return ">= " + r.From
	case r.To != "":
		return "< " + r.To
	}
	return "all versions"
}

type knowledgeBase struct {
	charts []*chartFile
	addons []*addonFile
	// values caches decoded values files by path. It is filled while loading (every
	// range is built once then) and only read afterwards, so concurrent lookups are
	// safe.
	values map[string]map[string]any
	frozen bool
}

var knowledge = sync.OnceValues(loadKnowledge)

func loadKnowledge() (*knowledgeBase, error) {
	kb := &knowledgeBase{values: map[string]map[string]any{}}
	entries, err := knowledgeFS.ReadDir("charts")
	if err != nil {
		return nil, fmt.Errorf("read chart knowledge: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := path.Join("charts", e.Name())
		var cf chartFile
		if err := readYAML(path.Join(dir, "chart.yaml"), &cf); err != nil {
			return nil, err
		}
		cf.dir = dir
		if err := kb.validateRanges(dir, cf.Versions); err != nil {
			return nil, err
		}
		kb.charts = append(kb.charts, &cf)
	}
	entries, err = knowledgeFS.ReadDir("addons")
	if err != nil {
		return nil, fmt.Errorf("read add-on knowledge: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := path.Join("addons", e.Name())
		var af addonFile
		if err := readYAML(path.Join(dir, "addon.yaml"), &af); err != nil {
			return nil, err
		}
		af.dir = dir
		if err := kb.validateRanges(dir, af.Versions); err != nil {
			return nil, err
		}
		kb.addons = append(kb.addons, &af)
	}
	// Every range must resolve: a broken reference is a bug in the data, found here
	// once rather than on some user's input.
	for _, cf := range kb.charts {
		for i := range cf.Versions {
			if _, err := kb.buildChart(cf, &cf.Versions[i], cf.Versions[i].Representative, ""); err != nil {
				return nil, err
			}
		}
	}
	for _, af := range kb.addons {
		for i := range af.Versions {
			if _, err := kb.buildAddon(af, &af.Versions[i], af.Versions[i].Representative, ""); err != nil {
				return nil, err
			}
		}
	}
	kb.frozen = true
	return kb, nil
}

func (kb *knowledgeBase) validateRanges(dir string, rs []rangeEntry) error {
	if len(rs) == 0 {
		return fmt.Errorf("%s: no version ranges", dir)
	}
	for i, r := range rs {
		for _, s := range []string{r.From, r.To, r.Representative} {
			if s == "" {
				continue
			}
			if _, ok := parseVersion(s); !ok {
				return fmt.Errorf("%s: range %d: bad version %q", dir, i, s)
			}
		}
		rep, _ := parseVersion(r.Representative)
		if r.Representative == "" || !r.contains(rep) {
			return fmt.Errorf("%s: range %s: representative %q is not inside it", dir, r.describe(), r.Representative)
		}
		if i > 0 {
			prev := rs[i-1]
			if prev.To == "" || prev.To != r.From {
				return fmt.Errorf("%s: ranges %s and %s are not contiguous", dir, prev.describe(), r.describe())
			}
		}
	}
	return nil
}

func readYAML(name string, dst any) error {
	data, err := knowledgeFS.ReadFile(name)
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if err := yaml.UnmarshalStrict(data, dst); err != nil {
		return fmt.Errorf("decode %s: %w", name, err)
	}
	return nil
}

func (kb *knowledgeBase) valuesFile(name string) (map[string]any, error) {
	if v, ok := kb.values[name]; ok {
		return v, nil
	}
	data, err := knowledgeFS.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	m := map[string]any{}
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decode %s: %w", name, err)
	}
	if !kb.frozen {
		kb.values[name] = m
	}
	return m, nil
}

func (kb *knowledgeBase) chartByName(name string) *chartFile {
	want := chartBaseName(name)
	for _, cf := range kb.charts {
		if cf.Name == want || hasString(cf.Names, want) {
			return cf
		}
	}
	return nil
}

// chartBaseName reduces "oci://public.ecr.aws/karpenter/karpenter",
// "https://aws.github.io/eks-charts/aws-load-balancer-controller" and
// "eks/aws-load-balancer-controller" to the chart name; a packaged chart name
// ("karpenter-1.0.0.tgz") loses its version.
func chartBaseName(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	name = strings.TrimRight(name, "/")
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name = name[:i]
	}
	if strings.HasSuffix(name, ".tgz") {
		name = strings.TrimSuffix(name, ".tgz")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, ok := parseVersion(name[i+1:]); ok {
				name = name[:i]
			}
		}
	}
	return name
}

// pickRange finds the range for a version and says what was assumed.
func pickRange(rs []rangeEntry, requested string) (*rangeEntry, string, string) {
	newest := &rs[len(rs)-1]
	oldest := &rs[0]
	if strings.TrimSpace(requested) == "" {
		return newest, newest.Representative, "no version given; the newest known version " + newest.Representative + " is assumed"
	}
	v, ok := parseVersion(requested)
	if !ok {
		return newest, newest.Representative, fmt.Sprintf("version %q is not a plain version; the newest known version %s is assumed", requested, newest.Representative)
	}
	for i := range rs {
		if rs[i].contains(v) {
			return &rs[i], strings.TrimPrefix(strings.TrimSpace(requested), "v"), ""
		}
	}
	if f, ok := parseVersion(oldest.From); ok && v.less(f) {
		return oldest, oldest.Representative, fmt.Sprintf("version %s is older than every known version; %s is assumed", requested, oldest.Representative)
	}
	return newest, newest.Representative, fmt.Sprintf("version %s is newer than every known version; %s is assumed", requested, newest.Representative)
}

func (kb *knowledgeBase) chartAt(cf *chartFile, requested string) (*Chart, error) {
	r, ver, assumed := pickRange(cf.Versions, requested)
	return kb.buildChart(cf, r, ver, assumed)
}

func (kb *knowledgeBase) buildChart(cf *chartFile, r *rangeEntry, ver, assumed string) (*Chart, error) {
	c := &Chart{
		Name:           cf.Name,
		Title:          cf.Title,
		Version:        strings.TrimPrefix(ver, "v"),
		Assumed:        assumed,
		Range:          r.describe(),
		Upstream:       cf.Upstream,
		Provenance:     r.Provenance,
		Notes:          r.Notes,
		Features:       r.Features,
		Templates:      map[string][]byte{},
		freeform:       cf.Freeform,
		keysUnverified: r.KeysUnverified,
	}
	c.AppVersion = expandVersionPattern(r.AppVersion, c.Version)
	for _, comp := range cf.Components {
		if len(r.Components) == 0 || hasString(r.Components, comp.ID) {
			c.Components = append(c.Components, comp)
		}
	}
	if len(r.Values) == 0 {
		return nil, fmt.Errorf("%s: range %s: no values file", cf.dir, r.describe())
	}
	keys := map[string]bool{}
	for i, f := range r.Values {
		vals, err := kb.valuesFile(path.Join(cf.dir, "values", f))
		if err != nil {
			return nil, err
		}
		if i == 0 {
			c.values = deepCopyMap(vals)
		}
		collectKeys(vals, "", keys)
	}
	for _, k := range cf.ExtraKeys {
		keys[k] = true
	}
	for _, k := range r.AddKeys {
		keys[k] = true
	}
	for _, k := range r.RemoveKeys {
		for have := range keys {
			if have == k || strings.HasPrefix(have, k+".") {
				delete(keys, have)
			}
		}
	}
	c.keys = keys
	mergeOverrides(c.values, r.Overrides)
	for _, t := range r.Templates {
		data, err := knowledgeFS.ReadFile(path.Join(cf.dir, t))
		if err != nil {
			return nil, fmt.Errorf("%s: range %s: %w", cf.dir, r.describe(), err)
		}
		c.Templates[t] = data
	}
	if len(c.Templates) == 0 {
		return nil, fmt.Errorf("%s: range %s: no templates", cf.dir, r.describe())
	}
	return c, nil
}

// collectKeys adds every key path of a values tree; lists are leaves.
func collectKeys(v map[string]any, prefix string, into map[string]bool) {
	for k, x := range v {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		into[p] = true
		if m, ok := x.(map[string]any); ok {
			collectKeys(m, p, into)
		}
	}
}

// mergeOverrides applies overrides onto dst: maps merge, anything else replaces,
// and null deletes the key (Helm's convention for removing a default).
func mergeOverrides(dst, src map[string]any) {
	for k, v := range src {
		if v == nil {
			delete(dst, k)
			continue
		}
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeOverrides(dm, sm)
				continue
			}
		}
		dst[k] = deepCopyValue(v)
	}
}

func lookupPath(v map[string]any, key string) (any, bool) {
	var cur any = v
	for _, p := range strings.Split(key, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[p]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

func deepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = deepCopyValue(v)
	}
	return out
}

func deepCopyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return deepCopyMap(t)
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = deepCopyValue(x)
		}
		return out
	}
	return v
}

func hasString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func expandVersionPattern(pattern, ver string) string {
	if pattern == "" {
		pattern = "{version}"
	}
	v, _ := parseVersion(ver)
	r := strings.NewReplacer(
		"{version}", strings.TrimPrefix(ver, "v"),
		"{major}", strconv.Itoa(v.nums[0]),
		"{minor}", strconv.Itoa(v.nums[1]),
		"{patch}", strconv.Itoa(v.nums[2]),
	)
	return r.Replace(pattern)
}

// version is a chart or add-on version: major.minor.patch with an optional build
// number from an EKS "-eksbuild.N" suffix. Other pre-release suffixes sort before
// the release, as in semver.
type version struct {
	nums  [3]int
	build int  // eksbuild number; 0 when absent
	pre   bool // a non-eksbuild pre-release ("-rc.1")
}

func parseVersion(s string) (version, bool) {
	var v version
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	if s == "" {
		return v, false
	}
	if i := strings.IndexByte(s, '+'); i >= 0 {
		s = s[:i]
	}
	core, suffix, hasSuffix := strings.Cut(s, "-")
	parts := strings.Split(core, ".")
	if len(parts) > 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return v, false
		}
		v.nums[i] = n
	}
	if hasSuffix {
		if b, ok := strings.CutPrefix(suffix, "eksbuild."); ok {
			n, err := strconv.Atoi(b)
			if err != nil || n < 0 {
				return v, false
			}
			v.build = n
		} else {
			v.pre = true
		}
	}
	return v, true
}

func (a version) less(b version) bool {
	for i := range a.nums {
		if a.nums[i] != b.nums[i] {
			return a.nums[i] < b.nums[i]
		}
	}
	if a.pre != b.pre {
		return a.pre
	}
	return a.build < b.build
}

// ChartVersionLess orders two chart or add-on versions ("0.32.10" < "1.0.0",
// "v1.13.0-eksbuild.1" < "v1.14.0-eksbuild.1"); unparsable versions sort first.
func ChartVersionLess(a, b string) bool {
	va, okA := parseVersion(a)
	vb, okB := parseVersion(b)
	switch {
	case !okA && !okB:
		return a < b
	case !okA:
		return true
	case !okB:
		return false
	}
	return va.less(vb)
}
