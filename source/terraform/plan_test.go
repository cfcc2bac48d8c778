package terraform

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// comparable strips what legitimately differs between a configuration and its plan:
// origins (a .tf line versus a plan line), the text an add-on's configuration was
// written as, and notes.
func comparable(m *cluster.Model) *cluster.Model {
	c := *m
	c.Notes, c.Problems = nil, nil
	c.Cluster.Origin = cluster.Origin{}
	c.Identity.AuthModeOrigin = cluster.Origin{}
	if c.Identity.AwsAuth != nil {
		aa := *c.Identity.AwsAuth
		aa.Origin = cluster.Origin{}
		c.Identity.AwsAuth = &aa
	}
	for _, a := range c.Addons {
		a.ConfigurationRaw = ""
	}
	for _, r := range c.HelmReleases {
		r.ValueOrigins = nil
	}
	for _, o := range c.Objects {
		o.Lines = nil
	}
	c.Karpenter.Release = nil
	c.Karpenter.Origin = cluster.Origin{}
	return &c
}

var ignoreOrigins = cmp.Options{
	cmpopts.IgnoreFields(cluster.NodeGroup{}, "Origin"),
	cmpopts.IgnoreFields(cluster.FargateProfile{}, "Origin"),
	cmpopts.IgnoreFields(cluster.FargateSelector{}, "Origin"),
	// Whether an add-on can be edited where it is written follows its origin.
	cmpopts.IgnoreFields(cluster.Addon{}, "Origin", "Decl"),
	cmpopts.IgnoreFields(cluster.HelmRelease{}, "Origin"),
	cmpopts.IgnoreFields(cluster.Object{}, "Origin"),
	cmpopts.IgnoreFields(cluster.AccessEntry{}, "Origin"),
	cmpopts.IgnoreFields(cluster.IAMRole{}, "Origin"),
	cmpopts.IgnoreFields(cluster.RoleMapping{}, "Origin"),
	cmpopts.IgnoreFields(cluster.ServiceAccountIdentity{}, "Origin"),
	cmpopts.IgnoreFields(cluster.Resource{}, "Origin"),
}

// The same configuration read as HCL and as a plan gives the same model for node
// groups, Fargate profiles, add-ons, Helm releases, objects, identity, the Karpenter
// installation and the dependency graph.
func TestPlanMatchesConfiguration(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "plan")
	fromHCL, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(fromHCL.Problems) > 0 {
		t.Fatalf("HCL: got problems %v", fromHCL.Problems)
	}
	file := filepath.Join(dir, "plan.json")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !IsPlanJSON(data) {
		t.Fatal("IsPlanJSON(plan.json): got false, want true")
	}
	fromPlan, err := LoadPlan(file, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(fromPlan.Problems) > 0 {
		t.Fatalf("plan: got problems %v", fromPlan.Problems)
	}
	got, want := comparable(fromPlan), comparable(fromHCL)
	sections := []struct {
		name      string
		got, want any
	}{
		{"node groups", got.NodeGroups, want.NodeGroups},
		{"Fargate profiles", got.FargateProfiles, want.FargateProfiles},
		{"add-ons", got.Addons, want.Addons},
		{"Helm releases", got.HelmReleases, want.HelmReleases},
		{"objects", got.Objects, want.Objects},
		{"identity", got.Identity, want.Identity},
		{"Karpenter", got.Karpenter, want.Karpenter},
		{"cluster", got.Cluster, want.Cluster},
		{"graph", got.Terraform, want.Terraform},
	}
	// A plan does not carry the keys a module call writes inside its
	// arguments' values: module-input-unknown reads them from the
	// configuration only.
	ignoreCalls := cmpopts.IgnoreFields(cluster.Graph{}, "Modules")
	for _, s := range sections {
		if diff := cmp.Diff(s.want, s.got, ignoreOrigins, ignoreCalls); diff != "" {
			t.Errorf("%s from the plan differ from the configuration (-hcl +plan):\n%s", s.name, diff)
		}
	}
	if len(fromPlan.NodeGroups) != 1 || len(fromPlan.Identity.Roles) != 4 || len(fromPlan.Objects) != 1 {
		t.Errorf("plan: got %d node groups, %d roles, %d objects; want 1, 4, 1", len(fromPlan.NodeGroups), len(fromPlan.Identity.Roles), len(fromPlan.Objects))
	}
	// Entries point into the plan file.
	if o := fromPlan.NodeGroups[0].Origin; o.File != file || o.Line < 2 {
		t.Errorf("node group origin: got %s, want a line of %s", o, file)
	}
}

func TestIsPlanJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data string
		want bool
	}{
		{name: "plan", data: `{"format_version":"1.2","planned_values":{}}`, want: true},
		{name: "state", data: `{"format_version":"1.0","values":{}}`, want: false},
		{name: "manifest", data: `{"apiVersion":"v1","kind":"List"}`, want: false},
		{name: "yaml", data: "format_version: 1\nplanned_values: {}\n", want: false},
		{name: "broken", data: `{"format_version":`, want: false},
	}
	for _, tt := range tests {
		if got := IsPlanJSON([]byte(tt.data)); got != tt.want {
			t.Errorf("IsPlanJSON(%s): got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestLoadPlanBadInput(t *testing.T) {
	t.Parallel()
	m, err := LoadPlan("p.json", []byte("{\n  \"format_version\": \"1.2\",\n  \"planned_values\": {,\n}\n"))
	if err != nil {
		t.Fatalf("got error %v, want a problem", err)
	}
	if len(m.Problems) != 1 || m.Problems[0].Origin.File != "p.json" || m.Problems[0].Origin.Line != 3 || !strings.Contains(m.Problems[0].Message, "syntax error") {
		t.Errorf("problems: got %+v, want a syntax error at p.json:3", m.Problems)
	}
	m, err = LoadPlan("p.json", []byte(`{"format_version": "9.0", "planned_values": {}}`))
	if err != nil || len(m.Problems) != 1 || !strings.Contains(m.Problems[0].Message, "unsupported plan") {
		t.Errorf("future format: got %v, %+v; want an unsupported-plan problem", err, m)
	}
	if _, err := LoadPlan("m.json", []byte(`{"kind": "List"}`)); err == nil {
		t.Error("a JSON document that is not a plan: got no error, want one")
	}
}

// EKS Auto Mode read from a plan is what the configuration says: the three
// switches (block storage left off here), the built-in NodePools sorted, the
// node role, bootstrap_self_managed_addons.
func TestPlanAutoMode(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "plan-automode")
	fromHCL, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "plan.json")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fromPlan, err := LoadPlan(file, data)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*cluster.Model{fromHCL, fromPlan} {
		if len(m.Problems) > 0 {
			t.Fatalf("problems: %v", m.Problems)
		}
	}
	got, want := fromPlan.Cluster.AutoMode, fromHCL.Cluster.AutoMode
	if want == nil || got == nil {
		t.Fatalf("Auto Mode: configuration %+v, plan %+v; want both", want, got)
	}
	if !got.On() || got.BlockStorage != cluster.SwitchOff || got.LoadBalancing != cluster.SwitchOn ||
		!slices.Equal(got.NodePools, []string{"general-purpose", "system"}) || got.NodeRole != "arn:aws:iam::111122223333:role/auto-node" ||
		got.BootstrapAddons != cluster.SwitchOff {
		t.Errorf("Auto Mode from the plan: %+v", got)
	}
	ignore := cmpopts.IgnoreFields(cluster.AutoMode{}, "Origin", "NodePoolsAt")
	if diff := cmp.Diff(want, got, ignore); diff != "" {
		t.Errorf("Auto Mode from the plan differs from the configuration (-hcl +plan):\n%s", diff)
	}
}
