package catalog

import (
	_ "embed"
	"sort"
	"strings"
	"sync"

	goversion "github.com/hashicorp/go-version"
	"sigs.k8s.io/yaml"
)

// What aws-ia/terraform-aws-eks-blueprints-addons creates for each add-on it can
// enable, by release, is data extracted from the module (modules/ has the file and
// the command that wrote it).
//
//go:embed modules/eks-blueprints-addons.yaml
var blueprintsAddonsYAML []byte

// BlueprintsAddon is one add-on the module can install, as a range of its releases
// installs it.
type BlueprintsAddon struct {
	From, To string
	Commit   string
	// Module is the module call inside (module.karpenter); Input the variable that
	// overrides the release (var.karpenter); Enable the one that turns it on.
	Module string
	Input  string
	Enable string
	// The Helm release the module creates by default.
	Release, Namespace, Chart, Repository, Version string
	Wait, CreateNamespace                          *bool
	// Set are the values the module sets itself.
	Set []BlueprintsSet
	// IRSA are the value keys the IRSA role ARN is set under.
	IRSA []string
	// Flags are the defaults of the module's boolean variables the When of
	// Set names.
	Flags map[string]bool
}

// BlueprintsSet is a value the module sets on a release. Value is a literal, or
// names a fact of the module's inputs: cluster_name, cluster_endpoint, region,
// queue_name, service_account, node_instance_profile, vpc_id. Input, when set, is
// the attribute of the add-on's input that overrides it.
type BlueprintsSet struct {
	Name, Value, Input string
	// When names the boolean variable of the module the value depends on:
	// "F" when it is set only if var.F is true, "!F" only if it is false.
	When string
}

type blueprintsFile struct {
	Releases []string `json:"releases"`
	Addons   []struct {
		From            string          `json:"from"`
		To              string          `json:"to"`
		Commit          string          `json:"commit"`
		Module          string          `json:"module"`
		Input           string          `json:"input"`
		Enable          string          `json:"enable"`
		Release         string          `json:"release"`
		Namespace       string          `json:"namespace"`
		Chart           string          `json:"chart"`
		Repository      string          `json:"repository"`
		Version         string          `json:"version"`
		Wait            *bool           `json:"wait"`
		CreateNamespace *bool           `json:"createNamespace"`
		Set             []BlueprintsSet `json:"set"`
		IRSA            []string        `json:"irsa"`
		Flags           map[string]bool `json:"flags"`
	} `json:"addons"`
}

var blueprints = sync.OnceValues(func() (*blueprintsFile, error) {
	var f blueprintsFile
	if err := yaml.Unmarshal(blueprintsAddonsYAML, &f); err != nil {
		return nil, err
	}
	return &f, nil
})

// BlueprintsAddonsRelease picks the release of the module that Terraform installs
// for a version constraint: the newest release that satisfies it ("" or an
// unparsable constraint: the newest). assumed is set when the constraint did not
// decide.
func BlueprintsAddonsRelease(constraint string) (version string, assumed bool) {
	f, err := blueprints()
	if err != nil || len(f.Releases) == 0 {
		return "", true
	}
	vs := make([]*goversion.Version, 0, len(f.Releases))
	for _, r := range f.Releases {
		if v, err := goversion.NewVersion(r); err == nil {
			vs = append(vs, v)
		}
	}
	sort.Sort(goversion.Collection(vs))
	cs, err := goversion.NewConstraint(strings.TrimSpace(constraint))
	if strings.TrimSpace(constraint) == "" || err != nil {
		return vs[len(vs)-1].Original(), true
	}
	for i := len(vs) - 1; i >= 0; i-- {
		if cs.Check(vs[i]) {
			return vs[i].Original(), false
		}
	}
	return vs[len(vs)-1].Original(), true
}

// BlueprintsAddons returns what a release of the module installs, by add-on.
func BlueprintsAddons(version string) []BlueprintsAddon {
	f, err := blueprints()
	if err != nil {
		return nil
	}
	v, err := goversion.NewVersion(version)
	if err != nil {
		return nil
	}
	var out []BlueprintsAddon
	for _, a := range f.Addons {
		from, err1 := goversion.NewVersion(a.From)
		to, err2 := goversion.NewVersion(a.To)
		if err1 != nil || err2 != nil || v.LessThan(from) || v.GreaterThan(to) {
			continue
		}
		out = append(out, BlueprintsAddon{
			From: a.From, To: a.To, Commit: a.Commit, Module: a.Module, Input: a.Input, Enable: a.Enable,
			Release: a.Release, Namespace: a.Namespace, Chart: a.Chart, Repository: a.Repository,
			Version: a.Version, Wait: a.Wait, CreateNamespace: a.CreateNamespace, Set: a.Set, IRSA: a.IRSA, Flags: a.Flags,
		})
	}
	return out
}
