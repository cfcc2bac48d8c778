package lint

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/identity"
	"github.com/eksdoctor/eksdoctor/write"
)

// fargate-role-unauthorized: Fargate profiles whose pod execution role the cluster does not authorize.

var fargateRoleUnauthorized = &Check{
	ID:       "fargate-role-unauthorized",
	Title:    "Fargate pod execution role not authorized",
	Family:   "F2",
	Severity: Error,
	Doc: Doc{
		What: "A Fargate profile's pod execution role is not authorized for the cluster's authentication mode. In `API` and `API_AND_CONFIG_MAP` EKS creates its `FARGATE_LINUX` access entry itself; with `CONFIG_MAP` the role must be in aws-auth with username `system:node:{{SessionName}}` and groups `system:bootstrappers`, `system:nodes` and `system:node-proxier`. EKS adds that entry to the aws-auth it maintains, but a ConfigMap the configuration writes whole (kubectl apply, `kubernetes_config_map_v1_data` with `force = true`, terraform-aws-eks' aws-auth code) replaces it.",
		Why:  "Fargate stops launching pods for the profile: `Warning FailedScheduling fargate-scheduler Misconfigured Fargate Profile: fargate profile <name> blocked for new launches due to: Pod execution role is not found in auth config or does not have all required permissions for launching fargate pods.`",
		Fix:  "Add the mapRoles entry for the pod execution role in the format that writes aws-auth (the ConfigMap, `aws_auth_roles`, eksctl `iamIdentityMappings`), or move the cluster to `API_AND_CONFIG_MAP`.",
	},
	Run:        runFargateRoleUnauthorized,
	Supersedes: []*Check{bootstrapDeadlock, podUnschedulable},
}

func runFargateRoleUnauthorized(p *Pass) {
	for _, e := range profileRoleEvidence(p.Model) {
		reportProfileRole(p, e, decideProfileRole(e))
	}
}

// Whether a Fargate profile's pod execution role lets Fargate launch its pods
// is decided once, by decideProfileRole, from what the inputs say of the role
// and from what a running cluster shows: fargate-scheduler's refusal on the
// profile's Pending pods.

// roleEvidence is what is known about one Fargate profile's pod execution
// role.
type roleEvidence struct {
	name string
	// profile is the profile as the inputs declare it (nil when only a
	// running cluster names it); role and auth are its pod execution role
	// and how the cluster authorizes it, when it has one.
	profile *cluster.FargateProfile
	role    identity.Role
	auth    *identity.Authorization
	// replaced: the configuration writes aws-auth whole.
	replaced bool
	// blocked are the Pending pods fargate-scheduler refuses to launch for
	// the profile, and event its words (a running cluster).
	blocked []*cluster.Pod
	event   string
}

// roleOutcome is what the evidence says.
type roleOutcome int

const (
	roleFine roleOutcome = iota
	// roleBlocked: fargate-scheduler refuses to launch the profile's pods.
	roleBlocked
	// roleUnauthorized: the cluster does not authorize the role.
	roleUnauthorized
	// roleUnverified: whether it does is not known, and the configuration
	// writes aws-auth whole, dropping the entry EKS adds.
	roleUnverified
)

// decideProfileRole decides whether a profile's role lets Fargate launch its
// pods.
func decideProfileRole(e roleEvidence) roleOutcome {
	switch {
	case len(e.blocked) > 0:
		return roleBlocked
	case e.auth == nil:
		return roleFine
	case e.auth.Outcome == identity.Unauthorized:
		return roleUnauthorized
	case e.auth.Outcome == identity.Unverified && e.replaced:
		return roleUnverified
	}
	return roleFine
}

// profileRoleEvidence gathers the evidence of every profile the inputs
// declare or a running cluster names, by name.
func profileRoleEvidence(m *cluster.Model) []roleEvidence {
	by := map[string]*roleEvidence{}
	var names []string
	at := func(name string) *roleEvidence {
		e := by[name]
		if e == nil {
			e = &roleEvidence{name: name}
			by[name] = e
			names = append(names, name)
		}
		return e
	}
	// fargate-scheduler's refusal names the profile.
	const marker = "Misconfigured Fargate Profile: fargate profile "
	for _, pod := range m.Pods {
		if pod.Status.Phase != corev1.PodPending || pod.Spec.NodeName != "" {
			continue
		}
		ev, ok := schedulingEvent(pod, marker)
		if !ok {
			continue
		}
		rest := ev.Message[strings.Index(ev.Message, marker)+len(marker):]
		name, _, _ := strings.Cut(rest, " ")
		e := at(name)
		e.blocked = append(e.blocked, pod)
		e.event = ev.Message
	}
	if len(m.FargateProfiles) > 0 {
		res := identity.New(m)
		replaced := identity.AwsAuthReplaced(m.Identity.AwsAuth)
		for _, fp := range sortedProfiles(m) {
			e := at(fp.Name)
			e.profile = fp
			if strings.TrimSpace(fp.PodExecutionRole) == "" {
				continue
			}
			e.role = res.Resolve(fp.PodExecutionRole)
			a := res.Authorize(e.role, identity.FargatePods)
			e.auth, e.replaced = &a, replaced
		}
	}
	sort.Strings(names)
	out := make([]roleEvidence, len(names))
	for i, n := range names {
		out[i] = *by[n]
	}
	return out
}

// reportProfileRole words an outcome. When a running cluster shows the
// refusal of a profile the inputs also declare, the refusal is the finding,
// with the fix the inputs allow.
func reportProfileRole(p *Pass, e roleEvidence, o roleOutcome) {
	m := p.Model
	fp, role := e.profile, e.role
	switch o {
	case roleBlocked:
		pods := e.blocked
		f := Finding{
			Object:  cluster.ObjectRef{Kind: "FargateProfile", Name: e.name},
			Origin:  pods[0].Object.Origin,
			causes:  podCauses(pods),
			Summary: fmt.Sprintf("Fargate profile %q is blocked for new launches: %s", e.name, e.event),
			Detail:  fmt.Sprintf("fargate-scheduler does not find the profile's pod execution role in the cluster's authentication configuration. With authentication mode CONFIG_MAP, aws-auth must map it with username %s and groups %s; a ConfigMap written whole by kubectl or Terraform drops the entry EKS added. Pending pods: %s.", identity.FargateUsername, strings.Join(identity.FargatePods.Groups(), ", "), podNameList(pods)),
		}
		if e.auth != nil && e.auth.Outcome == identity.Unauthorized {
			f.Fix = fargateRoleFix(m, *e.auth)
		}
		p.Report(f)
	case roleUnauthorized:
		a := *e.auth
		signature := fmt.Sprintf("`Warning FailedScheduling fargate-scheduler Misconfigured Fargate Profile: fargate profile %s blocked for new launches due to: Pod execution role is not found in auth config or does not have all required permissions for launching fargate pods.`", fp.Name)
		f := Finding{
			Object:  profileRef(fp),
			Origin:  fp.Origin,
			Summary: fmt.Sprintf("Fargate profile %q: pod execution role %s is not authorized: %s", fp.Name, role, fargateReason(a)),
			Detail:  strings.Join(a.Explain(), "\n") + "\nFargate refuses to launch the profile's pods: " + signature,
		}
		f.Fix = fargateRoleFix(m, a)
		p.Report(f)
	case roleUnverified:
		p.Report(Finding{
			Severity: Info,
			Object:   profileRef(fp),
			Origin:   fp.Origin,
			Summary:  fmt.Sprintf("Fargate profile %q: could not verify that pod execution role %s is authorized%s", fp.Name, role, p.beforeApply()),
			Detail:   strings.Join(e.auth.Explain(), "\n"),
		})
	}
}

func fargateReason(a identity.Authorization) string {
	if probs := a.Problems(); len(probs) > 0 {
		return probs[0]
	}
	return "aws-auth, which the configuration writes whole, has no entry for it"
}

func fargateRoleFix(m *cluster.Model, a identity.Authorization) *Fix {
	if e, _, ok := correctMapping(m, a.AwsAuth.Found, identity.FargatePods, false); ok {
		return &Fix{Summary: "correct the aws-auth entry of the pod execution role", Edits: []Edit{e}}
	}
	rm, ok := write.NodeMapping(m, a.Role, identity.FargatePods)
	if !ok {
		return nil
	}
	e, ok := write.AwsAuthMapping(m, nil, &rm)
	if !ok {
		return nil
	}
	return &Fix{Summary: fmt.Sprintf("map the pod execution role in aws-auth: username %s, groups %s", identity.FargateUsername, strings.Join(identity.FargatePods.Groups(), ", ")), Edits: []Edit{e}}
}
