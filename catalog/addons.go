package catalog

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// AddonAcceptance tells whether an EKS add-on version's configuration schema accepts
// a configuration_values key.
type AddonAcceptance int

const (
	_ AddonAcceptance = iota
	// AddonAccepted: the schema of the version accepts the key.
	AddonAccepted
	// AddonRejected: EKS rejects the configuration (InvalidParameterException).
	AddonRejected
	// AddonUnverified: the knowledge base cannot tell for this version.
	AddonUnverified
)

func (a AddonAcceptance) String() string {
	switch a {
	case AddonAccepted:
		return "accepted"
	case AddonRejected:
		return "rejected"
	case AddonUnverified:
		return "unverified"
	}
	return "unknown"
}

// AddonConfigVerdict is the acceptance of one key of a configuration.
type AddonConfigVerdict struct {
	Key        string
	Acceptance AddonAcceptance
}

// Addon is what the knowledge base knows about one version of an EKS add-on.
type Addon struct {
	Name  string
	Title string
	// Version is the add-on version described; see Chart.Version.
	Version   string
	Requested string
	Assumed   string
	Range     string
	// Namespace is where EKS installs the add-on's workloads.
	Namespace  string
	AppVersion string
	Upstream   string
	Provenance []string
	Notes      []string
	Components []ChartComponent
	Features   []string
	// Templates are the reduced templates that produce the add-on's workloads from
	// its configuration, rendered like a chart whose values are the configuration.
	Templates map[string][]byte
	// Chart names the chart whose templates the add-on reuses, when it does
	// ("aws-ebs-csi-driver 2.36.0"); empty otherwise.
	Chart string

	values map[string]any
	config addonConfig
}

// DefaultValues returns a copy of the values the add-on's templates are rendered
// with when the user gives no configuration.
func (a *Addon) DefaultValues() map[string]any { return deepCopyMap(a.values) }

// Component returns the component with the given id.
func (a *Addon) Component(id string) (*ChartComponent, bool) {
	for i := range a.Components {
		if a.Components[i].ID == id {
			return &a.Components[i], true
		}
	}
	return nil, false
}

// HasFeature reports whether the add-on version has a template feature.
func (a *Addon) HasFeature(f string) bool { return hasString(a.Features, f) }

// Accepts tells whether the version's configuration schema accepts a dotted key
// ("controller.tolerations"). Keys below an accepted key ("resources.requests.cpu"
// under "resources") are accepted with it.
func (a *Addon) Accepts(key string) AddonAcceptance {
	key = normalizeKey(key)
	if key == "" {
		return AddonUnverified
	}
	if v, ok := a.config.decide(key); ok {
		return v
	}
	if a.config.Closed && !a.config.isParent(key) {
		return AddonRejected
	}
	return AddonUnverified
}

// CheckConfig walks a decoded configuration_values document and returns the verdict
// for each of its keys, at the depth the schema decides them, sorted by key.
func (a *Addon) CheckConfig(config map[string]any) []AddonConfigVerdict {
	var out []AddonConfigVerdict
	var walk func(m map[string]any, prefix string)
	walk = func(m map[string]any, prefix string) {
		for k, v := range m {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			if d, ok := a.config.decide(p); ok {
				out = append(out, AddonConfigVerdict{Key: p, Acceptance: d})
				continue
			}
			if sub, ok := v.(map[string]any); ok && a.config.isParent(p) && len(sub) > 0 {
				walk(sub, p)
				continue
			}
			verdict := AddonUnverified
			if a.config.Closed {
				verdict = AddonRejected
			}
			out = append(out, AddonConfigVerdict{Key: p, Acceptance: verdict})
		}
	}
	walk(config, "")
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// AddonNames lists the add-ons the knowledge base knows, sorted.
func AddonNames() []string {
	kb, err := knowledge()
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(kb.addons))
	for _, a := range kb.addons {
		out = append(out, a.Name)
	}
	sort.Strings(out)
	return out
}

// AddonFor returns the knowledge of an EKS add-on ("coredns", "aws-ebs-csi-driver")
// at a version ("v1.14.0-eksbuild.1"). Unknown versions are handled as in ChartFor.
func AddonFor(name, version string) (*Addon, bool) {
	kb, err := knowledge()
	if err != nil {
		return nil, false
	}
	want := strings.ToLower(strings.TrimSpace(name))
	for _, af := range kb.addons {
		if af.Name != want && !hasString(af.Names, want) {
			continue
		}
		r, ver, assumed := pickRange(af.Versions, version)
		a, err := kb.buildAddon(af, r, ver, assumed)
		if err != nil {
			return nil, false
		}
		if !strings.HasPrefix(a.Version, "v") {
			// EKS spells add-on versions with a "v" ("v1.14.0-eksbuild.1").
			if a.Assumed != "" {
				a.Assumed = strings.ReplaceAll(a.Assumed, " "+a.Version, " v"+a.Version)
			}
			a.Version = "v" + a.Version
		}
		a.Requested = version
		return a, true
	}
	return nil, false
}

// AddonUpgrade returns the first version of an add-on newer than version whose
// configuration schema accepts every key ("v1.14.0-eksbuild.1" for the EBS CSI
// driver's controller.tolerations), spelled as EKS spells it; ok is false when no
// known version does. An empty or unparsable version starts from the oldest known.
func AddonUpgrade(name, version string, keys ...string) (string, bool) {
	kb, err := knowledge()
	if err != nil || len(keys) == 0 {
		return "", false
	}
	want := strings.ToLower(strings.TrimSpace(name))
	for _, af := range kb.addons {
		if af.Name != want && !hasString(af.Names, want) {
			continue
		}
		cur, known := parseVersion(version)
		for i := range af.Versions {
			r := &af.Versions[i]
			from, ok := parseVersion(r.From)
			if !ok || known && !cur.less(from) {
				continue
			}
			all := true
			for _, k := range keys {
				if d, ok := r.Config.decide(normalizeKey(k)); !ok || d != AddonAccepted {
					all = false
					break
				}
			}
			if all {
				return "v" + strings.TrimPrefix(r.From, "v"), true
			}
		}
		return "", false
	}
	return "", false
}

// addonFile is addons/<name>/addon.yaml.
type addonFile struct {
	Name       string           `json:"name"`
	Title      string           `json:"title"`
	Names      []string         `json:"names"`
	Namespace  string           `json:"namespace"`
	Upstream   string           `json:"upstream"`
	Components []ChartComponent `json:"components"`
	Versions   []rangeEntry     `json:"versions"`

	dir string
}

// addonChartRef makes an add-on version render with a chart's templates and default
// values, with Overrides on top (the add-on's own defaults).
type addonChartRef struct {
	Name      string         `json:"name"`
	Version   string         `json:"version"`
	Overrides map[string]any `json:"overrides"`
}

// addonConfig is what a version's configuration schema is known to accept.
type addonConfig struct {
	Accepts []string `json:"accepts"`
	Rejects []string `json:"rejects"`
	// Closed: the schema has additionalProperties false at every level the lists
	// describe, so any other key is rejected.
	Closed bool `json:"closed"`
}

func (c addonConfig) decide(key string) (AddonAcceptance, bool) {
	for _, r := range c.Rejects {
		if key == r || strings.HasPrefix(key, r+".") {
			return AddonRejected, true
		}
	}
	for _, a := range c.Accepts {
		if key == a || strings.HasPrefix(key, a+".") {
			return AddonAccepted, true
		}
	}
	return 0, false
}

// isParent reports whether key is a map that holds accepted or rejected keys
// ("controller" for "controller.tolerations").
func (c addonConfig) isParent(key string) bool {
	for _, list := range [][]string{c.Accepts, c.Rejects} {
		for _, a := range list {
			if strings.HasPrefix(a, key+".") {
				return true
			}
		}
	}
	return false
}

func (kb *knowledgeBase) buildAddon(af *addonFile, r *rangeEntry, ver, assumed string) (*Addon, error) {
	a := &Addon{
		Name:       af.Name,
		Title:      af.Title,
		Version:    ver,
		Assumed:    assumed,
		Range:      r.describe(),
		Namespace:  af.Namespace,
		Upstream:   af.Upstream,
		Provenance: r.Provenance,
		Notes:      r.Notes,
		Features:   r.Features,
		Templates:  map[string][]byte{},
		config:     r.Config,
	}
	if a.Namespace == "" {
		a.Namespace = "kube-system"
	}
	a.AppVersion = expandVersionPattern(r.AppVersion, ver)
	for _, comp := range af.Components {
		if len(r.Components) == 0 || hasString(r.Components, comp.ID) {
			a.Components = append(a.Components, comp)
		}
	}
	if r.Chart != nil {
		cf := kb.chartByName(r.Chart.Name)
		if cf == nil {
			return nil, fmt.Errorf("%s: range %s: unknown chart %q", af.dir, r.describe(), r.Chart.Name)
		}
		c, err := kb.chartAt(cf, r.Chart.Version)
		if err != nil {
			return nil, err
		}
		if c.Assumed != "" {
			return nil, fmt.Errorf("%s: range %s: chart %s %s is not in the knowledge base", af.dir, r.describe(), r.Chart.Name, r.Chart.Version)
		}
		a.Chart = c.Name + " " + c.Version
		a.values = c.values
		mergeOverrides(a.values, r.Chart.Overrides)
		for k, v := range c.Templates {
			a.Templates[k] = v
		}
		a.Features = append(append([]string(nil), c.Features...), r.Features...)
		if r.AppVersion == "" {
			a.AppVersion = c.AppVersion
		}
	} else {
		a.values = map[string]any{}
		for _, f := range r.Values {
			vals, err := kb.valuesFile(path.Join(af.dir, f))
			if err != nil {
				return nil, err
			}
			mergeOverrides(a.values, vals)
		}
	}
	mergeOverrides(a.values, r.Overrides)
	for _, t := range r.Templates {
		data, err := knowledgeFS.ReadFile(path.Join(af.dir, t))
		if err != nil {
			return nil, fmt.Errorf("%s: range %s: %w", af.dir, r.describe(), err)
		}
		a.Templates[t] = data
	}
	if len(a.Templates) == 0 {
		return nil, fmt.Errorf("%s: range %s: no templates", af.dir, r.describe())
	}
	return a, nil
}
