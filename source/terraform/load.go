package terraform

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/inputfs"
)

// Options tunes Load.
type Options struct {
	// VarFiles are tfvars files applied after terraform.tfvars and *.auto.tfvars, in
	// order, as with terraform -var-file.
	VarFiles []string
	// FS is what the loader may read; nil reads dir and VarFiles only. Every file
	// function, template, module and chart read goes through it.
	FS *inputfs.FS
}

// Load reads the Terraform configuration in dir (and the given extra tfvars files).
// The error is only for a directory that cannot be read; everything wrong inside it
// becomes a Problem of the returned model, and the rest is still analysed.
func Load(dir string, opts Options) (model *cluster.Model, err error) {
	if opts.FS == nil {
		opts.FS = inputfs.New(append([]string{dir}, opts.VarFiles...)...)
		defer opts.FS.Close()
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("read terraform directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("read terraform directory: %s is not a directory", dir)
	}
	l := newLoader(dir, opts)
	cfg, err := l.readModule(dir)
	if err != nil {
		return nil, err
	}
	b := newBuilder(opts.FS)
	g := cluster.NewGraph()
	g.Addressing = Addressing{}
	defer func() {
		// Evaluation is written not to fail, but a configuration is untrusted input:
		// whatever escapes becomes a problem rather than a crash.
		if r := recover(); r != nil {
			if os.Getenv("EKSDOCTOR_DEBUG_PANIC") != "" {
				panic(r)
			}
			model = &cluster.Model{Problems: append(l.problems, cluster.Problem{
				Origin:  cluster.Origin{File: dir},
				Message: fmt.Sprintf("the configuration could not be analysed: %v", r),
			})}
			err = nil
		}
	}()
	root := l.newModInst(cfg, "", "", ".", 0)
	l.rootVariables(root)
	l.walk(root, b, g)
	l.reportUndeclared()
	b.m.Terraform = g
	b.m.Identity.ServiceAccounts = append(b.m.Identity.ServiceAccounts, l.serviceAccounts...)
	b.m.Problems = append(b.m.Problems, l.problems...)
	b.m.Notes = append(b.m.Notes, l.notes...)
	b.m.Suppressions = append(b.m.Suppressions, l.suppressions...)
	b.m.Unseen = append(b.m.Unseen, l.unseen...)
	for f := range l.files {
		if !strings.Contains(f, "#") && !strings.HasSuffix(f, ".tf") && !strings.HasSuffix(f, ".tf.json") {
			b.m.Inputs = append(b.m.Inputs, f)
		}
	}
	sort.Strings(b.m.Inputs)
	b.finish()
	return b.m, nil
}

// computeInput recognises the inputs by which a module eksdoctor does not model
// says it creates compute or Karpenter resources (EKS Blueprints v4
// managed_node_groups and enable_karpenter, eks-data-addons
// enable_karpenter_resources, wrappers of terraform-aws-eks under another
// name); inputs about IAM for such compute (attach_karpenter_controller_policy,
// karpenter_controller_cluster_name) are not compute.
var (
	computeInput = regexp.MustCompile(`node_?groups?|node_?pools?|fargate_profiles?|worker_groups|karpenter|provisioners?`)
	iamInput     = regexp.MustCompile(`^attach_|polic|role|iam|irsa|_controller|queue|sqs|_arn`)
)

// opaqueCompute says what a module eksdoctor does not model creates, when its
// inputs name compute: capacity that cannot be seen (placement is unknown
// rather than refused), and an info that it is not analysed.
func (l *loader) opaqueCompute(m *modInst, call *moduleCall) {
	var named []string
	for _, name := range sortedKeys(call.block.Body.Attributes) {
		if computeInput.MatchString(name) && !iamInput.MatchString(name) {
			named = append(named, name)
		}
	}
	if len(named) == 0 {
		return
	}
	addr := m.prefix + "module." + call.name
	org := originOf(call.block.DefRange())
	l.unseenCapacity(org, "what "+addr+" creates", fmt.Sprintf("eksdoctor does not model %s (%s)", call.source, strings.Join(named, ", ")))
	l.unresolved(org, fmt.Sprintf("%s (%s) is not a module eksdoctor models: the compute and add-ons it creates from %s are not analysed", addr, call.source, strings.Join(named, ", ")))
}

// walk analyses a module instance and the local modules it calls.
func (l *loader) walk(m *modInst, b *builder, g *cluster.Graph) {
	m.inferMajors()
	m.graphNodes(g)
	for _, call := range m.callList {
		insts := call.instances()
		if call.kind == kindOpaque && !call.missing {
			l.opaqueCompute(m, call)
		}
		if call.kind == kindOpaque {
			for _, ci := range insts {
				m.moduleNetwork(call, ci, b)
			}
		}
		if call.kind < kindEKS {
			continue
		}
		for _, ci := range insts {
			m.semantics(call, ci, b, b.add)
		}
	}
	if m.prefix == "" {
		m.defaultTags(b)
	}
	for _, blk := range m.cfg.resources {
		m.tagForms(blk, b)
		for _, r := range m.resourceInstances(blk) {
			b.add(r)
		}
	}
	// The data sources that read files read them even when nothing evaluated
	// uses them (a count decided after apply): the files are this
	// configuration's inputs, not manifests of their own.
	for _, blk := range m.cfg.resources {
		if blk.Type == "data" && readsFiles[blk.Labels[0]] {
			l.force(m.data[blk.Labels[0]+"."+blk.Labels[1]])
		}
	}
	for _, call := range m.callList {
		if call.kind != kindLocal {
			continue
		}
		for _, ci := range call.instances() {
			if ci.child != nil {
				l.walk(ci.child, b, g)
			}
		}
	}
}

// readsFiles are the data sources that read files of the configuration.
var readsFiles = map[string]bool{"kubectl_path_documents": true, "local_file": true, "local_sensitive_file": true, "template_file": true}

// finish completes the model with what follows from the whole configuration, and sorts
// every list.
func (b *builder) finish() {
	b.attachCommands()
	b.fargateDecls()
	b.linkProfiles()
	b.implicitIdentity()
	b.identityDecls()
	b.karpenter()
	b.finishNetwork()
	b.sort()
	NoteDestroy(b.m.Terraform)
}

// implicitIdentity adds what EKS does by itself for managed node groups and Fargate
// profiles: access entries when the cluster reads them, aws-auth entries otherwise.
func (b *builder) implicitIdentity() {
	id := &b.m.Identity
	if !b.m.Cluster.Defined {
		return
	}
	type principal struct {
		arn, typ, user string
		groups         []string
		org            cluster.Origin
		addr           string
	}
	var ps []principal
	for _, ng := range b.m.NodeGroups {
		if !ng.Managed || ng.NodeRole == "" {
			continue
		}
		p := principal{arn: ng.NodeRole, typ: cluster.AccessEC2Linux, user: "system:node:{{EC2PrivateDNSName}}", groups: []string{"system:bootstrappers", "system:nodes"}, org: ng.Origin, addr: ng.Address}
		if strings.HasPrefix(ng.AMIType, "WINDOWS") {
			p.typ = cluster.AccessEC2Windows
			p.groups = []string{"eks:kube-proxy-windows", "system:bootstrappers", "system:nodes"}
		}
		ps = append(ps, p)
	}
	for _, fp := range b.m.FargateProfiles {
		if fp.PodExecutionRole == "" {
			continue
		}
		ps = append(ps, principal{arn: fp.PodExecutionRole, typ: cluster.AccessFargateLinux, user: "system:node:{{SessionName}}", groups: []string{"system:bootstrappers", "system:nodes", "system:node-proxier"}, org: fp.Origin, addr: fp.Address})
	}
	switch id.AuthMode {
	case cluster.AuthAPI, cluster.AuthAPIAndConfigMap:
		for _, p := range ps {
			id.AccessEntries = append(id.AccessEntries, cluster.AccessEntry{
				PrincipalARN: p.arn, Type: p.typ, Username: p.user, Origin: p.org, Address: p.addr, Implicit: true,
			})
		}
	case cluster.AuthConfigMap:
		if id.AwsAuth != nil || len(ps) == 0 {
			return
		}
		aa := &cluster.AwsAuth{Managed: "eks", Complete: false, Origin: b.m.Cluster.Origin, Address: b.m.Cluster.Address}
		for _, p := range ps {
			aa.Roles = append(aa.Roles, cluster.RoleMapping{RoleARN: p.arn, Username: p.user, Groups: p.groups, Origin: p.org})
		}
		id.AwsAuth = aa
	}
}

// karpenter fills Model.Karpenter from the karpenter sub-module and the release that
// installs the chart.
func (b *builder) karpenter() {
	k := &b.m.Karpenter
	var mods []*semModule
	for _, s := range b.sems {
		if (s.kind == kindKarpenter || s.kind == kindBlueprintsAddons && s.controllerRole != "") && !s.karpenterDisabled {
			mods = append(mods, s)
		}
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].addr < mods[j].addr })
	if len(mods) > 0 {
		s := mods[0]
		k.Address, k.Origin = s.addr, s.origin
		k.Namespace = s.namespace
		k.ControllerRole, k.NodeRole = s.controllerRole, s.nodeRole
		if len(mods) > 1 {
			b.note(mods[1].origin, mods[1].addr, "more than one Karpenter module; "+s.addr+" is the one analysed")
		}
	}
	sortReleases(b.m.HelmReleases)
	for _, rel := range b.m.HelmReleases {
		if !isKarpenterChart(rel) {
			continue
		}
		k.Release = rel
		if v := strings.TrimPrefix(rel.Version, "v"); v != "" && !cluster.IsUnknown(v) {
			k.Version, k.VersionFrom = v, "chart version of "+rel.Address
		}
		if rel.Namespace != "" && !cluster.IsUnknown(rel.Namespace) {
			k.Namespace = rel.Namespace
		}
		if k.Address == "" {
			k.Address, k.Origin = rel.Address, rel.Origin
		}
		break
	}
}

func (b *builder) sort() {
	m := b.m
	cluster.SortObjects(m.Objects)
	sort.SliceStable(m.NodeGroups, func(i, j int) bool { return m.NodeGroups[i].Address < m.NodeGroups[j].Address })
	sort.SliceStable(m.FargateProfiles, func(i, j int) bool { return m.FargateProfiles[i].Address < m.FargateProfiles[j].Address })
	sort.SliceStable(m.Addons, func(i, j int) bool { return m.Addons[i].Address < m.Addons[j].Address })
	sortReleases(m.HelmReleases)
	id := &m.Identity
	sort.SliceStable(id.Roles, func(i, j int) bool { return id.Roles[i].Address < id.Roles[j].Address })
	for _, r := range id.Roles {
		r.Refs = dedupe(r.Refs)
	}
	sort.SliceStable(id.AccessEntries, func(i, j int) bool {
		a, c := id.AccessEntries[i], id.AccessEntries[j]
		if a.Address != c.Address {
			return a.Address < c.Address
		}
		return a.PrincipalARN < c.PrincipalARN
	})
	sort.SliceStable(id.PolicyAssociations, func(i, j int) bool {
		a, c := id.PolicyAssociations[i], id.PolicyAssociations[j]
		if a.Address != c.Address {
			return a.Address < c.Address
		}
		return a.PolicyARN < c.PolicyARN
	})
	sort.SliceStable(id.ServiceAccounts, func(i, j int) bool {
		a, c := id.ServiceAccounts[i], id.ServiceAccounts[j]
		if a.Namespace != c.Namespace {
			return a.Namespace < c.Namespace
		}
		return a.Name < c.Name
	})
	sort.SliceStable(m.Problems, func(i, j int) bool {
		a, c := m.Problems[i], m.Problems[j]
		if a.Origin.File != c.Origin.File {
			return a.Origin.File < c.Origin.File
		}
		if a.Origin.Line != c.Origin.Line {
			return a.Origin.Line < c.Origin.Line
		}
		return a.Message < c.Message
	})
	sort.SliceStable(m.Notes, func(i, j int) bool {
		a, c := m.Notes[i], m.Notes[j]
		if a.Origin.File != c.Origin.File {
			return a.Origin.File < c.Origin.File
		}
		if a.Origin.Line != c.Origin.Line {
			return a.Origin.Line < c.Origin.Line
		}
		if a.Subject != c.Subject {
			return a.Subject < c.Subject
		}
		return a.Message < c.Message
	})
}
