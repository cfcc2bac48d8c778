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
	m := p.Model
	reportLiveBlockedProfiles(p)
	if len(m.FargateProfiles) == 0 {
		return
	}
	res := identity.New(m)
	for _, fp := range sortedProfiles(m) {
		if strings.TrimSpace(fp.PodExecutionRole) == "" {
			continue
		}
		role := res.Resolve(fp.PodExecutionRole)
		a := res.Authorize(role, identity.FargatePods)
		signature := fmt.Sprintf("`Warning FailedScheduling fargate-scheduler Misconfigured Fargate Profile: fargate profile %s blocked for new launches due to: Pod execution role is not found in auth config or does not have all required permissions for launching fargate pods.`", fp.Name)
		switch a.Outcome {
		case identity.Unauthorized:
			f := Finding{
				Object:  profileRef(fp),
				Origin:  fp.Origin,
				Summary: fmt.Sprintf("Fargate profile %q: pod execution role %s is not authorized: %s", fp.Name, role, fargateReason(a)),
				Detail:  strings.Join(a.Explain(), "\n") + "\nFargate refuses to launch the profile's pods: " + signature,
			}
			f.Fix = fargateRoleFix(m, a)
			p.Report(f)
		case identity.Unverified:
			if !identity.AwsAuthReplaced(m.Identity.AwsAuth) {
				continue
			}
			p.Report(Finding{
				Severity: Info,
				Object:   profileRef(fp),
				Origin:   fp.Origin,
				Summary:  fmt.Sprintf("Fargate profile %q: could not verify that pod execution role %s is authorized%s", fp.Name, role, p.beforeApply()),
				Detail:   strings.Join(a.Explain(), "\n"),
			})
		}
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

// reportLiveBlockedProfiles: fargate-scheduler refuses to launch pods for a
// profile whose pod execution role the cluster does not authorize.
func reportLiveBlockedProfiles(p *Pass) {
	const marker = "Misconfigured Fargate Profile: fargate profile "
	blocked := map[string][]*cluster.Pod{}
	events := map[string]string{}
	for _, pod := range p.Model.Pods {
		if pod.Status.Phase != corev1.PodPending || pod.Spec.NodeName != "" {
			continue
		}
		ev, ok := schedulingEvent(pod, marker)
		if !ok {
			continue
		}
		rest := ev.Message[strings.Index(ev.Message, marker)+len(marker):]
		name, _, _ := strings.Cut(rest, " ")
		blocked[name] = append(blocked[name], pod)
		events[name] = ev.Message
	}
	names := make([]string, 0, len(blocked))
	for n := range blocked {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		pods := blocked[name]
		p.Report(Finding{
			Object:  cluster.ObjectRef{Kind: "FargateProfile", Name: name},
			Origin:  pods[0].Object.Origin,
			causes:  podCauses(pods),
			Summary: fmt.Sprintf("Fargate profile %q is blocked for new launches: %s", name, events[name]),
			Detail:  fmt.Sprintf("fargate-scheduler does not find the profile's pod execution role in the cluster's authentication configuration. With authentication mode CONFIG_MAP, aws-auth must map it with username %s and groups %s; a ConfigMap written whole by kubectl or Terraform drops the entry EKS added. Pending pods: %s.", identity.FargateUsername, strings.Join(identity.FargatePods.Groups(), ", "), podNameList(pods)),
		})
	}
}
