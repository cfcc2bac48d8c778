package source

import (
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/source/helm"
)

// readSpecial recognizes files that are not plain manifests: Terraform plan JSON
// and live-cluster snapshots.
func readSpecial(file string, data []byte) (*cluster.Model, bool) {
	return nil, false
}

func loadTerraform(dir string, opts Options) (*cluster.Model, error) {
	return &cluster.Model{}, nil
}

func loadChart(path string, opts Options) (*cluster.Model, error) {
	release, ns := opts.Release, opts.Namespace
	if ns == "" {
		ns = "default"
	}
	return helm.LoadChart(path, opts.Values, release, ns)
}

// expand turns Helm releases and EKS add-ons into the objects they create.
func expand(m *cluster.Model) { helm.Expand(m) }
