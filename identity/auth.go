package identity

import (
	"fmt"
	"sort"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// Purpose is what a role must be authorized as.
type Purpose int

const (
	_ Purpose = iota
	// LinuxNode: EC2 instances of a Linux EC2NodeClass or node group.
	LinuxNode
	// WindowsNode: EC2 instances running Windows.
	WindowsNode
	// FargatePods: the pod execution role of a Fargate profile.
	FargatePods
	// AutoModeNode: EC2 instances of an EKS Auto Mode NodeClass. They join
	// through an access entry of type EC2 with the AmazonEKSAutoNodePolicy
	// access policy only; aws-auth never makes one.
	AutoModeNode
)

func (p Purpose) String() string {
	switch p {
	case LinuxNode:
		return "Linux node"
	case WindowsNode:
		return "Windows node"
	case FargatePods:
		return "Fargate pod execution role"
	case AutoModeNode:
		return "EKS Auto Mode node"
	}
	return "invalid"
}

// Usernames of node identities in aws-auth.
const (
	NodeUsername    = "system:node:{{EC2PrivateDNSName}}"
	FargateUsername = "system:node:{{SessionName}}"
)

// Username is the aws-auth username the purpose needs.
func (p Purpose) Username() string {
	if p == FargatePods {
		return FargateUsername
	}
	return NodeUsername
}

// Groups are the aws-auth groups the purpose needs.
func (p Purpose) Groups() []string {
	switch p {
	case WindowsNode:
		return []string{"system:bootstrappers", "system:nodes", "eks:kube-proxy-windows"}
	case FargatePods:
		return []string{"system:bootstrappers", "system:nodes", "system:node-proxier"}
	}
	return []string{"system:bootstrappers", "system:nodes"}
}

// EntryType is the access entry type the purpose needs.
func (p Purpose) EntryType() string {
	switch p {
	case WindowsNode:
		return cluster.AccessEC2Windows
	case FargatePods:
		return cluster.AccessFargateLinux
	case AutoModeNode:
		return cluster.AccessEC2
	}
	return cluster.AccessEC2Linux
}

// State is one source's answer (aws-auth, access entries).
type State int

const (
	_ State = iota
	// Valid: a correct mapping for the role is there.
	Valid
	// Invalid: mappings for the role are there, and all are wrong.
	Invalid
	// Missing: provably no mapping for the role.
	Missing
	// Undetermined: the answer depends on values unknown before apply, or on
	// mappings the configuration does not show.
	Undetermined
)

func (s State) String() string {
	switch s {
	case Valid:
		return "valid"
	case Invalid:
		return "invalid"
	case Missing:
		return "missing"
	case Undetermined:
		return "undetermined"
	}
	return "invalid state"
}

// Found is one mapping of the role (or one that may be of the role).
type Found struct {
	// What describes the mapping as the user wrote it.
	What   string
	Origin cluster.Origin
	// Problems say what is wrong with it for the purpose; empty when it is correct.
	Problems []string
	// Unknown says which of its fields are not known before apply.
	Unknown []string
	// Mapping is the aws-auth entry (index into Identity.AwsAuth.Roles, -1 when the
	// entry is implicit); Entry is the access entry.
	Mapping *cluster.RoleMapping
	Index   int
	Entry   *cluster.AccessEntry
	// Implicit marks mappings EKS or the tool creates by itself.
	Implicit bool
	// PathInARN is set when the aws-auth rolearn carries an IAM path.
	PathInARN bool
}

// SourceResult is what one source says about the role.
type SourceResult struct {
	// Name is "aws-auth" or "access entries".
	Name  string
	State State
	// Found lists the mappings for the role, Maybe those that may be for it.
	Found []Found
	Maybe []Found
	// Partial explains why the source may hold mappings the configuration does
	// not show; empty when the configuration shows all of them.
	Partial string
}

// Outcome is the final answer.
type Outcome int

const (
	_ Outcome = iota
	Authorized
	Unauthorized
	Unverified
)

func (o Outcome) String() string {
	switch o {
	case Authorized:
		return "authorized"
	case Unauthorized:
		return "unauthorized"
	case Unverified:
		return "unverified"
	}
	return "invalid"
}

// ModeResult is the outcome under one authentication mode.
type ModeResult struct {
	Mode    string
	Outcome Outcome
	// Reason says which source decided and why.
	Reason string
}

// Authorization answers whether a role may join the cluster for a purpose.
type Authorization struct {
	Role    Role
	Purpose Purpose
	// Mode is the authentication mode ("" when not known before apply);
	// ModeNote says where it comes from.
	Mode     string
	ModeNote string
	AwsAuth  SourceResult
	Access   SourceResult
	// Modes holds the outcome under each mode considered: the cluster's, or all
	// three when the mode is not known.
	Modes   []ModeResult
	Outcome Outcome
}

// Mode returns the cluster's authentication mode when it is known, and a note on
// where it comes from.
func (r *Resolver) Mode() (string, string) {
	id := r.m.Identity
	mode := strings.ToUpper(strings.TrimSpace(id.AuthMode))
	switch {
	case (mode == "" || cluster.IsUnknown(id.AuthMode)) && r.m.Live != nil:
		return "", "the authentication mode cannot be read from inside the cluster"
	case mode == "" || cluster.IsUnknown(id.AuthMode):
		return "", "the authentication mode is not known before apply"
	case mode != cluster.AuthConfigMap && mode != cluster.AuthAPI && mode != cluster.AuthAPIAndConfigMap:
		return "", fmt.Sprintf("the authentication mode %q is not one EKS knows", id.AuthMode)
	}
	note := "authentication mode " + mode
	if id.AuthModeDefaulted {
		note += " (the default of the tool that creates the cluster)"
	} else if o := id.AuthModeOrigin.String(); o != "" {
		note += " (set at " + o + ")"
	}
	return mode, note
}

// NodeAuthorization evaluates a node role for the cluster.
func (r *Resolver) NodeAuthorization(role Role, windows bool) Authorization {
	p := LinuxNode
	if windows {
		p = WindowsNode
	}
	return r.Authorize(role, p)
}

// Authorize evaluates whether the role may join the cluster for the purpose,
// under the cluster's authentication mode (or under every mode when it is not
// known).
func (r *Resolver) Authorize(role Role, p Purpose) Authorization {
	a := Authorization{Role: role, Purpose: p}
	a.Mode, a.ModeNote = r.Mode()
	a.AwsAuth = r.awsAuth(role, p)
	a.Access = r.accessEntries(role, p)
	modes := []string{a.Mode}
	switch {
	case p == AutoModeNode:
		// Auto Mode nodes join through access entries alone, which an Auto
		// Mode cluster cannot turn off: whatever the mode, they decide.
		modes = []string{cluster.AuthAPI}
	case a.Mode == "":
		modes = []string{cluster.AuthConfigMap, cluster.AuthAPIAndConfigMap, cluster.AuthAPI}
	}
	for _, m := range modes {
		a.Modes = append(a.Modes, decide(m, a.AwsAuth, a.Access))
	}
	a.Outcome = a.Modes[0].Outcome
	for _, mr := range a.Modes[1:] {
		if mr.Outcome != a.Outcome {
			a.Outcome = Unverified
		}
	}
	return a
}

func fromState(s State) Outcome {
	switch s {
	case Valid:
		return Authorized
	case Invalid, Missing:
		return Unauthorized
	}
	return Unverified
}

// decide applies one authentication mode to what the two sources say.
func decide(mode string, aws, access SourceResult) ModeResult {
	res := ModeResult{Mode: mode}
	switch mode {
	case cluster.AuthConfigMap:
		res.Outcome = fromState(aws.State)
		res.Reason = "CONFIG_MAP reads only aws-auth: " + aws.State.String()
	case cluster.AuthAPI:
		res.Outcome = fromState(access.State)
		res.Reason = "API reads only access entries (aws-auth is ignored): " + access.State.String()
	default:
		switch access.State {
		case Valid:
			res.Outcome, res.Reason = Authorized, "API_AND_CONFIG_MAP: the access entry is valid"
		case Invalid:
			res.Outcome, res.Reason = Unauthorized, "API_AND_CONFIG_MAP: an access entry takes precedence over aws-auth for the same role, and it is wrong"
		case Missing:
			res.Outcome = fromState(aws.State)
			res.Reason = "API_AND_CONFIG_MAP: no access entry, so aws-auth decides: " + aws.State.String()
		default:
			if aws.State == Valid {
				res.Outcome, res.Reason = Authorized, "API_AND_CONFIG_MAP: aws-auth is valid"
			} else {
				res.Outcome, res.Reason = Unverified, "API_AND_CONFIG_MAP: access entries cannot be verified and aws-auth is "+aws.State.String()
			}
		}
	}
	return res
}

// awsAuthAdditive reports whether the configuration's aws-auth mappings are added
// to the ConfigMap EKS maintains (eksctl iamIdentityMappings) rather than written
// over it.
func awsAuthAdditive(a *cluster.AwsAuth) bool {
	return a != nil && a.Address == "iamIdentityMappings"
}

// AwsAuthReplaced reports whether the configuration writes the whole aws-auth
// ConfigMap, so that entries EKS would add by itself (Fargate pod execution roles,
// managed node group roles) exist only when the configuration lists them.
func AwsAuthReplaced(a *cluster.AwsAuth) bool {
	return a != nil && a.Managed == "user" && !awsAuthAdditive(a)
}

func (r *Resolver) awsAuth(role Role, p Purpose) SourceResult {
	m := r.m
	res := SourceResult{Name: "aws-auth"}
	auth := m.Identity.AwsAuth
	switch {
	case auth == nil && !m.Cluster.Defined:
		res.Partial = "the configuration neither creates the cluster nor writes aws-auth, so aws-auth may hold mappings it does not show"
	case auth == nil && r.undeclaredEksctl():
		res.Partial = undeclaredEksctlNote
	case auth != nil && !auth.Complete:
		res.Partial = "some aws-auth entries are not known before apply"
	}
	if auth != nil {
		for i := range auth.Roles {
			rm := &auth.Roles[i]
			mr := r.Resolve(rm.RoleARN)
			f := Found{What: describeMapping(rm), Origin: rm.Origin, Mapping: rm, Index: i}
			switch Same(mr, role) {
			case Yes:
				r.checkMapping(&f, rm, mr, p)
				if p == AutoModeNode {
					f.Problems = append(f.Problems, "aws-auth never makes an EKS Auto Mode node: it needs an access entry of type EC2")
				}
				res.Found = append(res.Found, f)
			case Maybe:
				res.Maybe = append(res.Maybe, f)
			}
		}
	}
	if auth == nil || awsAuthAdditive(auth) {
		// EKS (and eksctl for its own node groups) add these entries to the
		// ConfigMap they maintain; a ConfigMap written whole by the user, or
		// read from a live cluster, holds them only if it lists them.
		res.Found = append(res.Found, r.implicitAwsAuth(role, p)...)
	}
	res.State = stateOf(res)
	return res
}

func describeMapping(rm *cluster.RoleMapping) string {
	return fmt.Sprintf("aws-auth entry {rolearn: %s, username: %s, groups: [%s]}", orNone(rm.RoleARN), orNone(rm.Username), strings.Join(rm.Groups, ", "))
}

func orNone(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

// checkMapping records what is wrong with an aws-auth entry for the purpose.
func (r *Resolver) checkMapping(f *Found, rm *cluster.RoleMapping, mr Role, p Purpose) {
	if a, ok := ParseRoleARN(rm.RoleARN); ok && a.HasPath() {
		f.PathInARN = true
		f.Problems = append(f.Problems, fmt.Sprintf("its rolearn carries the IAM path %s; aws-auth matches the ARN without a path (arn:...:role/%s)", a.Path, a.Name))
	} else if !ok && mr.Config != nil && mr.Config.Path != "" && mr.Config.Path != "/" && strings.HasSuffix(mr.Ref, "arn") {
		f.PathInARN = true
		f.Problems = append(f.Problems, fmt.Sprintf("its rolearn is the ARN of %s, which carries the IAM path %s; aws-auth matches the ARN without a path", mr, mr.Config.Path))
	}
	switch {
	case cluster.IsUnknown(rm.Username):
		f.Unknown = append(f.Unknown, "username")
	case rm.Username != p.Username():
		f.Problems = append(f.Problems, fmt.Sprintf("username is %s, not %s", orNone(rm.Username), p.Username()))
	}
	have := map[string]bool{}
	unknownGroups := false
	for _, g := range rm.Groups {
		have[g] = true
		if cluster.IsUnknown(g) {
			unknownGroups = true
		}
	}
	var missing []string
	for _, g := range p.Groups() {
		if !have[g] {
			missing = append(missing, g)
		}
	}
	switch {
	case len(missing) > 0 && unknownGroups:
		f.Unknown = append(f.Unknown, "groups")
	case len(missing) > 0:
		f.Problems = append(f.Problems, "groups lack "+strings.Join(missing, ", "))
	}
}

// implicitAwsAuth lists the entries EKS (or eksctl) adds to aws-auth by itself:
// managed node group roles and Fargate pod execution roles.
func (r *Resolver) implicitAwsAuth(role Role, p Purpose) []Found {
	var out []Found
	for _, fp := range r.m.FargateProfiles {
		if p == FargatePods && fp.PodExecutionRole != "" && Same(r.Resolve(fp.PodExecutionRole), role) == Yes {
			out = append(out, Found{What: fmt.Sprintf("the aws-auth entry EKS adds for Fargate profile %q", fp.Name), Origin: fp.Origin, Implicit: true, Index: -1})
		}
	}
	for _, c := range r.m.Identity.Roles {
		if c != nil && c.MappedAsNode != "" && p == LinuxNode && Same(r.FromConfig(c), role) == Yes {
			out = append(out, Found{What: c.MappedAsNode, Origin: c.Origin, Implicit: true, Index: -1})
		}
	}
	for _, ng := range r.m.NodeGroups {
		if p == FargatePods || ng.NodeRole == "" || (!ng.Managed && ng.CreatedBy != "eksctl") {
			continue
		}
		if Same(r.Resolve(ng.NodeRole), role) == Yes && (p == WindowsNode) == isWindowsAMI(ng.AMIType) {
			out = append(out, Found{What: fmt.Sprintf("the aws-auth entry added for node group %q", ng.Name), Origin: ng.Origin, Implicit: true, Index: -1})
		}
	}
	return out
}

func isWindowsAMI(t string) bool { return strings.Contains(strings.ToUpper(t), "WINDOWS") }

func (r *Resolver) accessEntries(role Role, p Purpose) SourceResult {
	m := r.m
	res := SourceResult{Name: "access entries"}
	switch {
	case m.Live != nil:
		res.Partial = "access entries are not visible from inside the cluster"
	case !m.Cluster.Defined:
		res.Partial = "the configuration does not create the cluster, so access entries may exist that it does not show"
	case r.undeclaredEksctl():
		res.Partial = undeclaredEksctlNote
	}
	for i := range m.Identity.AccessEntries {
		e := &m.Identity.AccessEntries[i]
		er := r.Resolve(e.PrincipalARN)
		f := Found{What: describeEntry(e), Origin: e.Origin, Entry: e, Index: i, Implicit: e.Implicit}
		switch Same(er, role) {
		case Yes:
			checkEntry(&f, e, p)
			if p == AutoModeNode && len(f.Problems) == 0 {
				r.checkAutoNodePolicy(&f, e)
			}
			res.Found = append(res.Found, f)
		case Maybe:
			res.Maybe = append(res.Maybe, f)
		}
	}
	for _, fp := range m.FargateProfiles {
		if p == FargatePods && fp.PodExecutionRole != "" && Same(r.Resolve(fp.PodExecutionRole), role) == Yes {
			res.Found = append(res.Found, Found{What: fmt.Sprintf("the FARGATE_LINUX access entry EKS creates for Fargate profile %q", fp.Name), Origin: fp.Origin, Implicit: true, Index: -1})
		}
	}
	if a := m.Cluster.AutoMode; p == AutoModeNode && a.On() && len(a.NodePools) > 0 && a.NodeRole != "" && Same(r.Resolve(a.NodeRole), role) == Yes {
		res.Found = append(res.Found, Found{What: "the EC2 access entry, with AmazonEKSAutoNodePolicy, EKS creates for the node role of the built-in NodePools (" + a.From + ")", Origin: a.Origin, Implicit: true, Index: -1})
	}
	for _, ng := range m.NodeGroups {
		if p == FargatePods || !ng.Managed || ng.NodeRole == "" {
			continue
		}
		typ := cluster.AccessEC2Linux
		if isWindowsAMI(ng.AMIType) {
			typ = cluster.AccessEC2Windows
		}
		if typ == p.EntryType() && Same(r.Resolve(ng.NodeRole), role) == Yes {
			res.Found = append(res.Found, Found{What: fmt.Sprintf("the %s access entry EKS creates for managed node group %q", typ, ng.Name), Origin: ng.Origin, Implicit: true, Index: -1})
		}
	}
	res.State = stateOf(res)
	return res
}

const undeclaredEksctlNote = "the eksctl ClusterConfig declares no identity mappings or access entries at all, so they may be added outside it (eksctl create iamidentitymapping, eksctl create accessentry)"

// undeclaredEksctl reports whether the cluster comes from an eksctl ClusterConfig
// that declares no identity at all: eksctl users often map roles with separate
// commands, so a ClusterConfig without any mapping says nothing about them. One
// that declares some is taken to declare all.
func (r *Resolver) undeclaredEksctl() bool {
	m := r.m
	eksctl := false
	for _, o := range m.Objects {
		if o.Kind == "ClusterConfig" && strings.HasPrefix(o.APIVersion, "eksctl.io/") && o.Origin.File == m.Cluster.Origin.File {
			eksctl = true
			break
		}
	}
	if !eksctl {
		return false
	}
	if m.Identity.AwsAuth != nil {
		return false
	}
	for _, e := range m.Identity.AccessEntries {
		if !e.Implicit {
			return false
		}
	}
	return true
}

func describeEntry(e *cluster.AccessEntry) string {
	where := "access entry"
	if e.Address != "" {
		where = "access entry " + e.Address
	}
	typ := e.Type
	if typ == "" {
		typ = "omitted, so STANDARD"
	}
	s := fmt.Sprintf("%s {principal: %s, type: %s", where, orNone(e.PrincipalARN), typ)
	if len(e.KubernetesGroups) > 0 {
		s += ", kubernetes_groups: [" + strings.Join(e.KubernetesGroups, ", ") + "]"
	}
	return s + "}"
}

// checkEntry records what is wrong with an access entry for the purpose.
func checkEntry(f *Found, e *cluster.AccessEntry, p Purpose) {
	if cluster.IsUnknown(e.Type) {
		f.Unknown = append(f.Unknown, "type")
		return
	}
	typ := strings.ToUpper(e.EffectiveType())
	if typ == p.EntryType() {
		return
	}
	switch typ {
	case cluster.AccessStandard:
		msg := "type is STANDARD"
		if e.Type == "" {
			msg = "type is omitted, and EKS defaults it to STANDARD"
		}
		msg += fmt.Sprintf("; a STANDARD entry makes the role a user, never a node (%s needs type %s)", p, p.EntryType())
		for _, g := range e.KubernetesGroups {
			if strings.HasPrefix(g, "system:") {
				msg += fmt.Sprintf("; EKS also rejects its kubernetes group %s (group names cannot start with system:)", g)
				break
			}
		}
		f.Problems = append(f.Problems, msg)
	default:
		f.Problems = append(f.Problems, fmt.Sprintf("type is %s; a %s needs %s", typ, p, p.EntryType()))
	}
}

// checkAutoNodePolicy records whether the EC2 access entry of an Auto Mode
// node role has the AmazonEKSAutoNodePolicy access policy: without it the
// entry lets the instance authenticate, and its kubelet may do nothing.
func (r *Resolver) checkAutoNodePolicy(f *Found, e *cluster.AccessEntry) {
	maybe := false
	for _, pa := range r.m.Identity.PolicyAssociations {
		same := Same(r.Resolve(pa.PrincipalARN), r.Resolve(e.PrincipalARN))
		if x, ok := cluster.UnknownExpr(pa.PrincipalARN); ok && e.Address != "" && x == e.Address+".principal_arn" {
			same = Yes // principal_arn = aws_eks_access_entry.x.principal_arn
		}
		if same == No {
			continue
		}
		switch {
		case cluster.IsUnknown(pa.PolicyARN):
			maybe = true
		case same == Yes && strings.HasSuffix(pa.PolicyARN, "/AmazonEKSAutoNodePolicy"):
			return
		case strings.HasSuffix(pa.PolicyARN, "/AmazonEKSAutoNodePolicy"):
			maybe = true
		}
	}
	if maybe || r.m.Live != nil {
		f.Unknown = append(f.Unknown, "access policies")
		return
	}
	f.Problems = append(f.Problems, "no AmazonEKSAutoNodePolicy access policy is associated with it (cluster scope), which an EKS Auto Mode node needs")
}

// stateOf sums up a source: valid when one mapping is correct, invalid when all
// found are wrong, missing when none is found and none may be, undetermined
// otherwise.
func stateOf(s SourceResult) State {
	unknown := false
	for _, f := range s.Found {
		if len(f.Problems) == 0 && len(f.Unknown) == 0 {
			return Valid
		}
		if len(f.Problems) == 0 {
			unknown = true
		}
	}
	if unknown || len(s.Maybe) > 0 {
		return Undetermined
	}
	if len(s.Found) > 0 {
		return Invalid
	}
	if s.Partial != "" {
		return Undetermined
	}
	return Missing
}

// Wanted describes the mappings that would authorize the role, for messages.
func (a Authorization) Wanted() string {
	p := a.Purpose
	if p == AutoModeNode {
		return "an access entry of type EC2 with the AmazonEKSAutoNodePolicy access policy (aws-auth never makes an EKS Auto Mode node)"
	}
	aws := fmt.Sprintf("an aws-auth mapRoles entry {rolearn: <role ARN without IAM path>, username: %s, groups: [%s]}", p.Username(), strings.Join(p.Groups(), ", "))
	access := fmt.Sprintf("an access entry of type %s", p.EntryType())
	switch a.Mode {
	case cluster.AuthConfigMap:
		return aws
	case cluster.AuthAPI:
		return access
	}
	return access + " or " + aws
}

// Explain renders the evaluation: the mode, what was looked for, what was found
// and why it does not count.
func (a Authorization) Explain() []string {
	var out []string
	out = append(out, a.ModeNote+".")
	out = append(out, fmt.Sprintf("Looked for %s for %s.", a.Wanted(), a.Role))
	for _, src := range []SourceResult{a.Access, a.AwsAuth} {
		ignored := (src.Name == "aws-auth" && a.Mode == cluster.AuthAPI) || (src.Name == "access entries" && a.Mode == cluster.AuthConfigMap)
		for _, f := range src.Found {
			line := "Found " + f.What
			if o := f.Origin.String(); o != "" && !f.Implicit {
				line += " at " + o
			}
			switch {
			case ignored:
				line += fmt.Sprintf(", but authentication mode %s ignores %s", a.Mode, src.Name)
			case len(f.Problems) > 0:
				line += ": " + strings.Join(f.Problems, "; ")
			case len(f.Unknown) > 0:
				line += ": its " + strings.Join(f.Unknown, " and ") + " are not known before apply"
			default:
				line += ": correct"
			}
			out = append(out, line+".")
		}
		for _, f := range src.Maybe {
			line := "Could not tell whether " + f.What
			if o := f.Origin.String(); o != "" {
				line += " at " + o
			}
			out = append(out, line+" is for this role (its value is not known before apply).")
		}
		if len(src.Found) == 0 && len(src.Maybe) == 0 && !ignored {
			if src.Partial != "" {
				out = append(out, fmt.Sprintf("No %s for it in the configuration; %s.", singular(src.Name), src.Partial))
			} else {
				out = append(out, fmt.Sprintf("No %s for it.", singular(src.Name)))
			}
		}
	}
	if len(a.Modes) > 1 {
		var parts []string
		for _, mr := range a.Modes {
			parts = append(parts, fmt.Sprintf("%s: %s", mr.Mode, mr.Outcome))
		}
		sort.Strings(parts)
		out = append(out, "Depending on the authentication mode: "+strings.Join(parts, "; ")+".")
	}
	return out
}

func singular(source string) string {
	if source == "access entries" {
		return "access entry"
	}
	return "aws-auth entry"
}

// Problems lists every problem of the mappings found in the sources the mode
// reads, for summaries.
func (a Authorization) Problems() []string {
	var out []string
	for _, src := range []SourceResult{a.Access, a.AwsAuth} {
		if (src.Name == "aws-auth" && a.Mode == cluster.AuthAPI) || (src.Name == "access entries" && a.Mode == cluster.AuthConfigMap) {
			continue
		}
		for _, f := range src.Found {
			out = append(out, f.Problems...)
		}
	}
	return out
}
