package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/inputfs"
	"github.com/eksdoctor/eksdoctor/internal/outputfs"
	"github.com/eksdoctor/eksdoctor/lint"
	"github.com/eksdoctor/eksdoctor/report"
	"github.com/eksdoctor/eksdoctor/source"
)

// ConfigFile is the name of the configuration file looked up from the working
// directory upwards.
const ConfigFile = ".eksdoctor.yaml"

// Config is the configuration file's content.
type Config struct {
	// FailOn is the lowest severity that makes the exit code 1 (error, warning,
	// info, never).
	FailOn string `json:"failOn,omitempty" yaml:"failOn"`
	// Enable restricts the run to these checks; Disable removes checks.
	Enable  []string `json:"enable,omitempty" yaml:"enable"`
	Disable []string `json:"disable,omitempty" yaml:"disable"`
	// Severity overrides a check's severity.
	Severity map[string]string `json:"severity,omitempty" yaml:"severity"`
	// Exclude lists path patterns whose findings are dropped, matched as
	// .gitignore matches (source.MatchExclude): at any depth, or anchored at
	// the working directory with a leading "/" or "./".
	Exclude []string `json:"exclude,omitempty" yaml:"exclude"`
	// Clusters assigns manifests, values and charts to the cluster they
	// belong to, where the layout of the tree does not say.
	Clusters []ClusterAssignment `json:"clusters,omitempty" yaml:"clusters"`

	// path is where the configuration was read from; "" when none was.
	path string
}

// narrowing says, one line each, how the configuration and the flags narrow
// what the run reports or fails on: in CI the configuration may come from the
// pull request under test, so a report says what it was told to leave out.
func narrowing(cfg *Config, o *reportOptions) []string {
	var out []string
	add := func(source, what string, items []string) {
		if len(items) > 0 {
			out = append(out, fmt.Sprintf("%s %s: %s", source, what, strings.Join(items, ", ")))
		}
	}
	if cfg.path != "" {
		add(cfg.path, "runs only the checks", cfg.Enable)
		add(cfg.path, "disables the checks", cfg.Disable)
		add(cfg.path, "drops the findings of the paths", cfg.Exclude)
		var lowered []string
		for _, id := range slices.Sorted(maps.Keys(cfg.Severity)) {
			if c, ok := lint.Lookup(id); ok && !strings.EqualFold(c.Severity.String(), cfg.Severity[id]) {
				lowered = append(lowered, fmt.Sprintf("%s %s (default %s)", id, strings.ToLower(cfg.Severity[id]), c.Severity))
			}
		}
		add(cfg.path, "sets the severity of", lowered)
		if cfg.FailOn != "" && o.failOn == "" && !strings.EqualFold(cfg.FailOn, "error") {
			add(cfg.path, "fails on", []string{cfg.FailOn})
		}
	}
	add("--enable", "runs only the checks", o.enable)
	add("--disable", "disables the checks", o.disable)
	add("--exclude", "drops the findings of the paths", o.exclude)
	return out
}

// assignments are the configuration's clusters as the loader takes them.
func (cfg *Config) assignments() ([]source.Assignment, error) {
	var out []source.Assignment
	for i, c := range cfg.Clusters {
		if c.Cluster == "" || len(c.Include) == 0 && c.Capacity == "" {
			return nil, usagef("configuration %s: clusters[%d] needs a cluster, and the paths it includes or its capacity", cfg.path, i)
		}
		out = append(out, source.Assignment{Cluster: c.Cluster, Include: c.Include, CapacityComplete: c.Capacity == CapacityComplete})
	}
	return out, nil
}

// ClusterAssignment puts the inputs matching Include in Cluster, and declares
// what the inputs hold of its capacity.
type ClusterAssignment struct {
	// Cluster is a Terraform root directory, or an eksctl or snapshot file;
	// "manifests" is the cluster of the manifests that belong to no
	// configuration.
	Cluster string   `json:"cluster" yaml:"cluster"`
	Include []string `json:"include,omitempty" yaml:"include"`
	// Capacity is CapacityComplete when the inputs hold all the cluster's
	// node groups, Fargate profiles and NodePools; "" lets the inputs say.
	Capacity Capacity `json:"capacity,omitempty" yaml:"capacity"`
}

// Capacity is what a cluster entry declares of the cluster's capacity.
type Capacity string

// CapacityComplete declares that the inputs hold all the cluster's capacity:
// a workload that fits none of it fails, even when the inputs declare no node
// group (a GitOps repository of NodePools and workloads).
const CapacityComplete Capacity = "complete"

// UnmarshalYAML accepts the values eksdoctor knows, and words any other with
// its line, as the decoder words its own errors.
func (c *Capacity) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	if Capacity(s) != CapacityComplete {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: capacity %q is not known (valid: %s; leave it out to let the inputs say)", n.Line, s, CapacityComplete)}}
	}
	*c = Capacity(s)
	return nil
}

// reportOptions are the flags every analysing command shares.
type reportOptions struct {
	output         string
	failOn         string
	enable         []string
	disable        []string
	config         string
	baseline       string
	showSuppressed bool
	// formats are the output formats of the command (outputs when nil).
	formats []string
	// writes are --write FORMAT=FILE: more reports from the same run.
	writes  []string
	summary bool
	noGroup bool
	// minSeverity is --min-severity: the lowest severity shown.
	minSeverity string
	// exclude is --exclude: more patterns of paths whose findings are dropped.
	exclude []string
	// paths is set for the commands that read paths (--exclude); serve for
	// the one that writes no report of its own (no -o, --fail-on,
	// --min-severity).
	paths, serve bool
}

func (o *reportOptions) addFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	if o.formats == nil {
		o.formats = outputs
	}
	if !o.serve {
		fs.StringVarP(&o.output, "output", "o", "text", "output format: "+strings.Join(o.formats, ", "))
		fs.StringVar(&o.failOn, "fail-on", "", "lowest severity that fails the run: error, warning, info or never (default error); counts every finding, shown or not")
		fs.StringVar(&o.minSeverity, "min-severity", "", "show only findings at or above this severity: error, warning or info (default info: all); the exit code still follows --fail-on")
		completeValues(cmd, "output", o.formats)
		completeValues(cmd, "fail-on", failOnValues)
		completeValues(cmd, "min-severity", severityValues)
	}
	if o.paths {
		fs.StringArrayVar(&o.exclude, "exclude", nil, "drop the findings of paths matching PATTERN, as the configuration's exclude (repeatable; \"legacy/**\" at any depth, \"/legacy/**\" from the working directory)")
	}
	fs.StringSliceVar(&o.enable, "enable", nil, "run only these checks (comma-separated IDs)")
	fs.StringSliceVar(&o.disable, "disable", nil, "skip these checks (comma-separated IDs)")
	fs.StringVar(&o.config, "config", "", "configuration file (default: "+ConfigFile+" found upward from the working directory)")
	fs.StringVar(&o.baseline, "baseline", "", "a previous report (-o json): report only the findings it does not hold")
	if len(o.formats) == len(outputs) {
		// The commands that write findings reports (check, cluster).
		fs.StringArrayVar(&o.writes, "write", nil, "also write the report in FORMAT to FILE, from the same run (FORMAT=FILE, repeatable: --write sarif=eksdoctor.sarif)")
		fs.BoolVar(&o.summary, "summary", false, "print only a line per check and object kind, the top causes and the counts (text)")
		fs.BoolVar(&o.noGroup, "no-group", false, fmt.Sprintf("list every finding, instead of one entry for findings of one cause about %d objects or more (text, markdown)", report.GroupAt))
	}
	fs.BoolVar(&o.showSuppressed, "show-suppressed", false, "list the findings ignore annotations and comments silenced, and those the baseline holds")
	completeList(cmd, "enable", checkIDs)
	completeList(cmd, "disable", checkIDs)
}

// The values --fail-on and --min-severity take.
var (
	failOnValues   = []string{"error", "warning", "info", "never"}
	severityValues = []string{"error", "warning", "info"}
)

// completeValues completes a flag's value from a fixed list.
func completeValues(cmd *cobra.Command, flag string, values []string) {
	_ = cmd.RegisterFlagCompletionFunc(flag, func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for _, v := range values {
			if strings.HasPrefix(v, toComplete) {
				out = append(out, v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}

// completeList completes a comma-separated list flag: the item being typed
// after the last comma, those already typed kept in front and left out.
func completeList(cmd *cobra.Command, flag string, values func() []string) {
	_ = cmd.RegisterFlagCompletionFunc(flag, func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		typed, last := "", toComplete
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			typed, last = toComplete[:i+1], toComplete[i+1:]
		}
		done := strings.Split(typed, ",")
		var out []cobra.Completion
		for _, v := range values() {
			if strings.HasPrefix(v, last) && !contains(done, v) {
				out = append(out, typed+v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	})
}

// settings are the resolved flags and configuration.
type settings struct {
	assign         []source.Assignment
	summary        bool
	group          int
	output         string
	writes         []extraReport
	baseline       report.Baseline
	baselineFile   string
	showSuppressed bool
	failOn         lint.Severity // 0 = never
	// checks are those that run on files; liveChecks those that run on a
	// running cluster or its snapshot (the checks, and the live ones).
	checks, liveChecks []*lint.Check
	severity           map[string]lint.Severity
	exclude            []string
	// wd and anchors are where an anchored exclude pattern starts: the
	// working directory and the directories given on the command line.
	wd      string
	anchors []string
	// minSeverity is the lowest severity shown (0: all).
	minSeverity lint.Severity
	// narrowed says how the configuration and flags narrow the run.
	narrowed []string
}

var outputs = []string{"text", "compact", "json", "sarif", "junit", "github", "markdown", "html"}

// forLive is the settings of a running cluster (or its snapshot): the live
// checks run too.
func (s *settings) forLive() *settings {
	c := *s
	c.checks = s.liveChecks
	return &c
}

// resolve turns the flags and the configuration file into the run's
// settings; anything invalid is a usage error.
func (o *reportOptions) resolve(env *Env) (*settings, error) {
	cfg, err := loadConfig(env, o.config)
	if err != nil {
		return nil, err
	}
	s := &settings{output: o.output, severity: map[string]lint.Severity{}, showSuppressed: o.showSuppressed, summary: o.summary, group: report.GroupAt,
		narrowed: narrowing(cfg, o)}
	if s.wd, err = env.Getwd(); err != nil {
		s.wd = ""
	}
	if s.exclude, err = excludes(cfg, o); err != nil {
		return nil, err
	}
	if o.minSeverity != "" {
		if s.minSeverity, err = lint.ParseSeverity(o.minSeverity); err != nil {
			return nil, usagef("--min-severity: %v", err)
		}
	}
	if o.noGroup {
		s.group = 0
	}
	if s.assign, err = cfg.assignments(); err != nil {
		return nil, err
	}
	if err := s.resolveOutputs(o); err != nil {
		return nil, err
	}
	if o.baseline != "" {
		data, err := readOwnFile(env, o.baseline, maxBaseline)
		if err != nil {
			return nil, usagef("--baseline: %v", err)
		}
		if s.baseline, err = report.ReadBaseline(data); err != nil {
			return nil, usagef("--baseline %s: %v", o.baseline, err)
		}
		s.baselineFile = o.baseline
	}
	if s.failOn, err = failOnSeverity(cfg, o); err != nil {
		return nil, err
	}
	if err := s.resolveChecks(cfg, o); err != nil {
		return nil, err
	}
	return s, nil
}

// excludes is the exclude patterns of the configuration, then of the
// command line; an invalid one is a usage error.
func excludes(cfg *Config, o *reportOptions) ([]string, error) {
	for i, p := range cfg.Exclude {
		if !source.ValidExclude(p) {
			return nil, usagef("configuration: exclude[%d] %q is not a valid pattern", i, p)
		}
	}
	for _, p := range o.exclude {
		if !source.ValidExclude(p) {
			return nil, usagef("--exclude %q is not a valid pattern", p)
		}
	}
	return append(append([]string(nil), cfg.Exclude...), o.exclude...), nil
}

// resolveOutputs checks the output format and each --write FORMAT=FILE
// against the formats the command writes, and records the extra reports.
func (s *settings) resolveOutputs(o *reportOptions) error {
	formats := o.formats
	if formats == nil {
		formats = outputs
	}
	if !o.serve && !contains(formats, o.output) {
		return usagef("unknown output format %q (valid: %s)", o.output, strings.Join(formats, ", "))
	}
	for _, w := range o.writes {
		format, file, ok := strings.Cut(w, "=")
		if !ok || file == "" || !contains(formats, format) {
			return usagef("--write %q: want FORMAT=FILE with FORMAT one of %s", w, strings.Join(formats, ", "))
		}
		if err := outputfs.Check(file); err != nil {
			return usagef("--write %s: %v", format, err)
		}
		s.writes = append(s.writes, extraReport{format, file})
	}
	return nil
}

// failOnSeverity is the lowest severity that fails the run (0: never), from
// --fail-on, else the configuration, else error.
func failOnSeverity(cfg *Config, o *reportOptions) (lint.Severity, error) {
	word := cfg.FailOn
	if o.failOn != "" {
		word = o.failOn
	}
	switch strings.ToLower(word) {
	case "", "error":
		return lint.Error, nil
	case "never":
		return 0, nil
	}
	sev, err := lint.ParseSeverity(word)
	if err != nil {
		return 0, usagef("--fail-on: %v (or never)", err)
	}
	return sev, nil
}

// resolveChecks checks the IDs enabled, disabled and given a severity (by
// the configuration, then the command line) and selects the checks that run:
// the enabled ones (all when none is) less the disabled ones; the static
// checks are those of them that do not need a running cluster.
func (s *settings) resolveChecks(cfg *Config, o *reportOptions) error {
	enable := append(append([]string(nil), cfg.Enable...), o.enable...)
	disable := append(append([]string(nil), cfg.Disable...), o.disable...)
	for _, id := range append(append([]string(nil), enable...), disable...) {
		if _, ok := lint.Lookup(id); !ok {
			return usagef("%s", unknownCheck(id))
		}
	}
	for id, sv := range cfg.Severity {
		if _, ok := lint.Lookup(id); !ok {
			return usagef("configuration: %s", unknownCheck(id))
		}
		sev, err := lint.ParseSeverity(sv)
		if err != nil {
			return usagef("configuration: severity of %s: %v", id, err)
		}
		s.severity[id] = sev
	}
	for _, c := range lint.Checks() {
		if len(enable) > 0 && !contains(enable, c.ID) {
			continue
		}
		if contains(disable, c.ID) {
			continue
		}
		s.liveChecks = append(s.liveChecks, c)
		if !c.Live {
			s.checks = append(s.checks, c)
		}
	}
	return nil
}

// unknownCheck words an unknown check ID: the check meant when one is near,
// else every valid ID.
func unknownCheck(id string) string {
	if s := lint.Suggest(id); s != "" {
		return fmt.Sprintf("unknown check %q (did you mean %q?)", id, s)
	}
	return fmt.Sprintf("unknown check %q (valid: %s)", id, strings.Join(checkIDs(), ", "))
}

func checkIDs() []string {
	var ids []string
	for _, c := range lint.Checks() {
		ids = append(ids, c.ID)
	}
	return ids
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var (
	unknownField = regexp.MustCompile(`field (\S+) not found in type \S+`)
	wrongType    = regexp.MustCompile("cannot unmarshal !!(\\w+) (?:`[^`]*` )?into ([][a-z]+)")
	yamlKinds    = map[string]string{"seq": "a list", "map": "a map", "str": "a string", "int": "a number", "float": "a number", "bool": "true or false", "null": "nothing"}
	goKinds      = map[string]string{"string": "a string", "[]string": "a list of strings", "map[string]string": "a map of strings"}
)

// loadConfig reads an explicit configuration file, or the nearest .eksdoctor.yaml
// above the working directory.
func loadConfig(env *Env, explicit string) (*Config, error) {
	path := explicit
	if path == "" {
		wd, err := env.Getwd()
		if err != nil {
			return &Config{}, nil
		}
		for dir := wd; ; dir = filepath.Dir(dir) {
			p := filepath.Join(dir, ConfigFile)
			// Lstat: a link named like the configuration is found, and then
			// refused if it leads out of its directory.
			if st, err := os.Lstat(p); err == nil && !st.IsDir() {
				path = p
				break
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	if path == "" {
		return &Config{}, nil
	}
	data, err := readOwnFile(env, path, maxConfig)
	if err != nil {
		return nil, usagef("read configuration: %v", err)
	}
	var cfg Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		// "yaml: unmarshal errors:\n  line 2: field failon not found in type
		// cli.Config" → "line 2: unknown field failon".
		msg := strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n")
		msg = strings.ReplaceAll(msg, "\n  ", "; ")
		msg = strings.TrimSpace(strings.TrimPrefix(msg, "yaml: "))
		msg = unknownField.ReplaceAllString(msg, "unknown field $1 (valid: failOn, enable, disable, severity, exclude, clusters; clusters: cluster, include, capacity)")
		msg = wrongType.ReplaceAllStringFunc(msg, func(m string) string {
			g := wrongType.FindStringSubmatch(m)
			return yamlKinds[g[1]] + " where the configuration expects " + goKinds[g[2]]
		})
		return nil, usagef("configuration %s: %s", path, msg)
	}
	cfg.path = path
	if wd, err := env.Getwd(); err == nil && filepath.IsAbs(path) {
		if rel, err := filepath.Rel(wd, path); err == nil {
			cfg.path = rel
		}
	}
	return &cfg, nil
}

// Budgets of the files eksdoctor reads for itself rather than as inputs: a
// configuration is a few lines; a baseline is a previous -o json, about 400
// bytes a finding.
const (
	maxConfig   = 1 << 20
	maxBaseline = 128 << 20
)

// readOwnFile reads a configuration or baseline file through the confined
// reader: a regular file, within limit, reached without a link that leaves the
// working directory (or, for a file outside it, the file's own directory). In
// CI both may come from the pull request under test.
func readOwnFile(env *Env, path string, limit int64) ([]byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	root := filepath.Dir(abs)
	if wd, err := env.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			root = wd
		}
	}
	fsys := inputfs.New(root)
	defer fsys.Close()
	data, err := fsys.ReadFile(abs, limit)
	var oe *inputfs.OutsideError
	if errors.As(err, &oe) {
		return nil, fmt.Errorf("%s is a link that leads outside %s; eksdoctor does not follow it", path, root)
	}
	if err != nil {
		return nil, fmt.Errorf("%s", strings.ReplaceAll(err.Error(), abs, path))
	}
	return data, nil
}

// extraReport is one --write: a report in another format, to a file.
type extraReport struct{ format, file string }

// againstBaseline moves the findings the baseline holds to the suppressed ones.
func (s *settings) againstBaseline(active, suppressed []lint.Finding) ([]lint.Finding, []lint.Finding) {
	if s.baseline == nil {
		return active, suppressed
	}
	fresh, known := s.baseline.Split(active)
	for i := range known {
		known[i].Suppressed = &lint.Suppressed{By: "baseline", Origin: cluster.Origin{File: s.baselineFile}}
	}
	suppressed = append(suppressed, known...)
	lint.Sort(suppressed)
	return fresh, suppressed
}

// options are the report options of the settings, for the suppressed findings.
func (s *settings) options(suppressed []lint.Finding) report.Options {
	return report.Options{Suppressed: suppressed, ShowSuppressed: s.showSuppressed, FailOn: s.failOn, Group: s.group, Narrowed: s.narrowed}
}

// apply filters and adjusts findings by the settings.
func (s *settings) apply(fs []lint.Finding) []lint.Finding {
	out := fs[:0]
	for _, f := range fs {
		if s.excluded(f.Origin.File) {
			continue
		}
		if sev, ok := s.severity[f.Check]; ok {
			f.Severity = sev
		}
		out = append(out, f)
	}
	return out
}

// excluded reports whether a file matches an exclude pattern.
func (s *settings) excluded(file string) bool {
	for _, p := range s.exclude {
		if source.MatchExclude(p, file, s.wd, s.anchors) {
			return true
		}
	}
	return false
}

// anchor adds the directories among the paths given on the command line to
// the anchors of exclude patterns.
func (s *settings) anchor(paths []string) {
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			a, err := filepath.Abs(p)
			if err == nil && !contains(s.anchors, a) {
				s.anchors = append(s.anchors, a)
			}
		}
	}
}

// shown are the findings at or above --min-severity, the ones a report shows.
func (s *settings) shown(fs []lint.Finding) []lint.Finding {
	if s.minSeverity == 0 {
		return fs
	}
	var out []lint.Finding
	for _, f := range fs {
		if f.Severity >= s.minSeverity {
			out = append(out, f)
		}
	}
	return out
}

// exitCode maps findings to the exit code.
func (s *settings) exitCode(fs []lint.Finding) int {
	if s.failOn == 0 {
		return ExitOK
	}
	for _, f := range fs {
		if f.Severity >= s.failOn {
			return ExitFindings
		}
	}
	return ExitOK
}
