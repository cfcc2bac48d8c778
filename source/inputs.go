package source

import (
	"bytes"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/inputfs"
	"github.com/eksdoctor/eksdoctor/source/helm"
	"github.com/eksdoctor/eksdoctor/source/live"
	"github.com/eksdoctor/eksdoctor/source/terraform"
)

// readSpecial recognizes files that are not plain manifests: Terraform plan JSON
// and live-cluster snapshots (possibly gzipped).
func readSpecial(file string, data []byte, budget live.Budget) (*cluster.Model, bool) {
	if isGzip(data) {
		if m, err := live.ReadSnapshotWithin(file, data, budget); err == nil {
			return m, true
		} else {
			return &cluster.Model{Problems: []cluster.Problem{{Origin: cluster.Origin{File: file}, Message: "cannot read gzipped snapshot: " + err.Error()}}}, true
		}
	}
	head := data
	if len(head) > 4096 {
		head = head[:4096]
	}
	trimmed := bytes.TrimSpace(head)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, false
	}
	switch {
	case live.IsSnapshot(data):
		m, err := live.ReadSnapshotWithin(file, data, budget)
		if err != nil {
			return &cluster.Model{Problems: []cluster.Problem{{Origin: cluster.Origin{File: file, Line: 1}, Message: "cannot read snapshot: " + err.Error()}}}, true
		}
		return m, true
	case terraform.IsPlanJSON(data):
		if int64(len(data)) > inputfs.MaxManifest {
			return &cluster.Model{Problems: []cluster.Problem{{Origin: cluster.Origin{File: file}, Message: "cannot read Terraform plan: " + (&inputfs.TooLargeError{Path: file, Limit: inputfs.MaxManifest}).Error()}}}, true
		}
		m, err := terraform.LoadPlan(file, data)
		if err != nil {
			return &cluster.Model{Problems: []cluster.Problem{{Origin: cluster.Origin{File: file, Line: 1}, Message: "cannot read Terraform plan: " + err.Error()}}}, true
		}
		return m, true
	}
	return nil, false
}

func loadChart(fsys *inputfs.FS, path string, opts Options) (*cluster.Model, error) {
	ns := opts.Namespace
	if ns == "" {
		ns = "default"
	}
	return helm.LoadChart(fsys, path, opts.Values, opts.Release, ns)
}

// expand turns Helm releases and EKS add-ons into the objects they create.
func expand(m *cluster.Model) { helm.Expand(m) }
