package lint

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/identity"
	"github.com/eksdoctor/eksdoctor/internal/shell"
	"github.com/eksdoctor/eksdoctor/sim"
)

// nodeclaim-not-registered: NodeClaims that launched an instance that never became a node, with the cause when the configuration shows it.

var nodeClaimNotRegistered = &Check{
	ID:       "nodeclaim-not-registered",
	Title:    "NodeClaim launched an instance that never joined the cluster",
	Family:   "F4",
	Severity: Error,
	Live:     true,
	Doc: Doc{
		What: "A NodeClaim has been `Launched=True` for more than five minutes (by the cluster's clock when it was read) without becoming `Registered=True`: Karpenter launched an EC2 instance whose kubelet never registered a Node. NodeClaims are grouped by their EC2NodeClass, whose node role is then checked against the aws-auth ConfigMap of the cluster with the same rules as `node-role-unauthorized` (username `system:node:{{EC2PrivateDNSName}}`, groups `system:bootstrappers` and `system:nodes`, no IAM path in the rolearn). The finding quotes the NodeClaims' conditions and events and says whether the node role mapping explains the failure. Access entries are not visible from inside the cluster, so a missing aws-auth entry is the cause unless an `EC2_LINUX` access entry exists.",
		Why:  "The instance runs (and is billed) but never takes pods: the kubelet logs `Unable to register node with API server\" err=\"Unauthorized\"`, Karpenter deletes the NodeClaim after 15 minutes and launches another one that fails the same way, while the pods that needed the node stay Pending.",
		Fix:  "Authorize the EC2NodeClass node role as a node: an access entry of type `EC2_LINUX` (`aws eks create-access-entry --type EC2_LINUX`), or with authentication mode `CONFIG_MAP`/`API_AND_CONFIG_MAP` an aws-auth mapRoles entry (`eksctl create iamidentitymapping`), then correct the configuration that manages them so the next apply keeps it. When the mapping is correct, look at the instance: its console output or the kubelet log names the cause (security groups, subnets without a route to the API server, a custom AMI's user data).",
	},
	Run: runNodeClaimNotRegistered,
	// Pods waiting for such a node are Pending for that reason, which this
	// check names more directly than pod-unschedulable.
	Supersedes: []*Check{podUnschedulable},
}

func conditionText(c *cluster.Condition) string {
	if c == nil {
		return "absent"
	}
	return c.State()
}

// nodeClaimEvents returns the events recorded for a NodeClaim, as
// "Reason: message" lines in the order they were read.
func nodeClaimEvents(m *cluster.Model, name string) []string {
	var out []string
	for _, o := range m.Objects {
		if o.Kind != "Event" || o.String("involvedObject.kind") != "NodeClaim" || o.String("involvedObject.name") != name {
			continue
		}
		if msg := o.String("message"); msg != "" {
			out = append(out, fmt.Sprintf("%s: %s", orText(o.String("reason"), "Event"), msg))
		}
	}
	return out
}

type unregistered struct {
	claim *cluster.NodeClaim
	age   time.Duration
}

func runNodeClaimNotRegistered(p *Pass) {
	m := p.Model
	if m.Live == nil {
		return
	}
	now, haveNow := m.NowTime()
	gone := goneUnregistered(m)
	byClass := map[cluster.NodeClassRef][]unregistered{}
	for _, nc := range m.NodeClaims {
		launched := conditionOf(nc.Conditions, "Launched")
		if launched == nil || launched.Status != "True" {
			continue
		}
		if reg := conditionOf(nc.Conditions, "Registered"); reg != nil && reg.Status == "True" {
			continue
		}
		since := launched.LastTransitionTime
		if since == "" {
			since = creationTimestamp(nc.Object)
		}
		age, ok := ageAt(now, haveNow, since)
		// A NodeClaim still joining is reported early when one of its
		// NodePool's before it went without ever registering: Karpenter
		// timed that one out and this one takes the same road.
		if !ok || age < registrationGrace && len(gone[nc.NodePool]) == 0 {
			continue
		}
		ref := nc.NodeClassRef
		if ref.Kind == "" {
			ref.Kind = "EC2NodeClass"
		}
		byClass[ref] = append(byClass[ref], unregistered{claim: nc, age: age})
	}
	classes := make([]cluster.NodeClassRef, 0, len(byClass))
	for c := range byClass {
		classes = append(classes, c)
	}
	sort.Slice(classes, func(i, j int) bool {
		a, b := classes[i], classes[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Group+"/"+a.Kind < b.Group+"/"+b.Kind
	})
	for _, class := range classes {
		claims := byClass[class]
		sort.Slice(claims, func(i, j int) bool { return claims[i].claim.Name < claims[j].claim.Name })
		reportUnregistered(p, class, claims, gone)
	}
}

// goneClaim is a NodeClaim no longer in the cluster that launched and never
// registered, as its events tell (Karpenter's events outlive it by an hour).
type goneClaim struct {
	name, launched string
}

// goneUnregistered finds, by NodePool, the NodeClaims the cluster's events
// name that are gone and were launched without ever registering: Karpenter
// deletes a NodeClaim whose node has not registered fifteen minutes after its
// launch and launches another. A NodeClaim's name is its NodePool's and a
// suffix.
func goneUnregistered(m *cluster.Model) map[string][]goneClaim {
	present := map[string]bool{}
	pools := map[string]bool{}
	for _, nc := range m.NodeClaims {
		present[nc.Name] = true
		pools[nc.NodePool] = true
	}
	for _, np := range m.NodePools {
		pools[np.Name] = true
	}
	launched := map[string]string{}
	registered := map[string]bool{}
	for _, o := range m.Objects {
		if o.Kind != "Event" || o.String("involvedObject.kind") != "NodeClaim" {
			continue
		}
		name := o.String("involvedObject.name")
		if present[name] {
			continue
		}
		switch o.String("reason") {
		case "Launched":
			if strings.Contains(o.String("message"), "-> True") {
				launched[name] = orText(o.String("firstTimestamp"), o.String("eventTime"))
			}
		case "Registered":
			registered[name] = true
		}
	}
	out := map[string][]goneClaim{}
	for name, at := range launched {
		if registered[name] {
			continue
		}
		i := strings.LastIndexByte(name, '-')
		if i <= 0 || !pools[name[:i]] {
			continue
		}
		out[name[:i]] = append(out[name[:i]], goneClaim{name: name, launched: at})
	}
	for _, g := range out {
		sort.Slice(g, func(i, j int) bool { return g[i].name < g[j].name })
	}
	return out
}

func reportUnregistered(p *Pass, ref cluster.NodeClassRef, claims []unregistered, gone map[string][]goneClaim) {
	class := ref.Name
	m := p.Model
	var oldest time.Duration
	var b strings.Builder
	for _, u := range claims {
		nc := u.claim
		if u.age > oldest {
			oldest = u.age
		}
		line := fmt.Sprintf("NodeClaim %s", nc.Name)
		var facts []string
		if nc.NodePool != "" {
			facts = append(facts, "nodepool "+nc.NodePool)
		}
		if id := cluster.InstanceID(nc.ProviderID); id != "" {
			facts = append(facts, "instance "+id)
		}
		facts = append(facts, "launched "+ageText(u.age)+" ago")
		if nc.Deleting {
			facts = append(facts, "being deleted")
		}
		fmt.Fprintf(&b, "%s (%s): Registered %s", line, strings.Join(facts, ", "), conditionText(conditionOf(nc.Conditions, "Registered")))
		if ini := conditionOf(nc.Conditions, "Initialized"); ini != nil && ini.Status != "True" {
			fmt.Fprintf(&b, ", Initialized %s", conditionText(ini))
		}
		b.WriteString(".\n")
		for _, e := range nodeClaimEvents(m, nc.Name) {
			fmt.Fprintf(&b, "  event %s\n", e)
		}
	}
	var cause string
	var lines []string
	var fix *Fix
	obj := cluster.ObjectRef{Kind: ref.Kind, Name: class}
	origin := claims[0].claim.Object.Origin
	if group := sim.OtherProvider(ref); group != "" {
		// Another provider's node class: how its nodes are authorized to
		// join is not modelled.
		cause = fmt.Sprintf("its node class %s %q belongs to the %s provider, whose node identities eksdoctor does not model (it checks EC2NodeClass node roles against aws-auth and access entries)", ref.Kind, class, group)
	} else {
		cause, lines, fix = registrationCause(m, class)
		if nc := liveNodeClass(m, class); nc != nil {
			obj, origin = nc.Object.Ref(), nc.Object.Origin
		}
	}
	var earlier []string
	awaited := claimNamesOf(claims)
	seenPool := map[string]bool{}
	for _, u := range claims {
		if seenPool[u.claim.NodePool] {
			continue
		}
		seenPool[u.claim.NodePool] = true
		for _, g := range gone[u.claim.NodePool] {
			earlier = append(earlier, fmt.Sprintf("%s (launched %s)", g.name, orText(g.launched, "at a time not recorded")))
			awaited = append(awaited, g.name)
		}
	}
	// Pods nominated to a NodeClaim Karpenter timed out wait for its
	// replacement.
	waiting := nominatedPending(m, awaited)
	if len(earlier) > 0 {
		fmt.Fprintf(&b, "Earlier NodeClaims of the same NodePool launched, never registered and are gone (Karpenter deletes a NodeClaim whose node has not registered fifteen minutes after its launch, and launches another): %s.\n", strings.Join(earlier, ", "))
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	if len(waiting) > 0 {
		fmt.Fprintf(&b, "Pending pods Karpenter nominated to them: %s. Karpenter launches nothing else for them while it waits for these NodeClaims (its FailedScheduling event then says it \"would schedule against uninitialized nodeclaim\").\n", podList(waiting))
	}
	b.WriteString(nodeJoinSymptom)
	subject := fmt.Sprintf("NodeClaim %s", claims[0].claim.Name)
	if len(claims) > 1 {
		subject = fmt.Sprintf("%d NodeClaims", len(claims))
	}
	if len(earlier) > 0 {
		cause = fmt.Sprintf("%d earlier NodeClaim(s) of its NodePool went the same way and were replaced; %s", len(earlier), cause)
	}
	p.Report(Finding{
		Object:  obj,
		Origin:  origin,
		Summary: fmt.Sprintf("%s of %s %s launched an instance that has not registered as a node for %s: %s", subject, ref.Kind, class, ageText(oldest), cause),
		Detail:  b.String(),
		Fix:     fix,
		causes:  podCauses(waiting),
	})
}

func liveNodeClass(m *cluster.Model, name string) *cluster.NodeClass {
	for _, nc := range m.NodeClasses {
		if nc.Name == name && !nc.Inline {
			return nc
		}
	}
	return nil
}

// registrationCause checks the node role of an EC2NodeClass against the aws-auth
// mappings of the cluster, the F4 causes a cluster can show: it returns the gist
// for the summary, the evidence, and the commands that authorize the role.
func registrationCause(m *cluster.Model, class string) (string, []string, *Fix) {
	nc := liveNodeClass(m, class)
	if nc == nil {
		if reason, skipped := m.SkippedReason("ec2nodeclasses.karpenter.k8s.aws"); skipped {
			return "the EC2NodeClass could not be read to check its node role", []string{"EC2NodeClasses could not be read: " + reason + "."}, nil
		}
		return fmt.Sprintf("its EC2NodeClass %q is not in the cluster", class), nil, nil
	}
	res := identity.New(m)
	ncr, ok := res.NodeClassRole(nc)
	switch {
	case !ok:
		return fmt.Sprintf("EC2NodeClass %q names neither a role nor an instance profile", class), nil, nil
	case ncr.Unresolved != "" || ncr.Role.IsZero():
		return fmt.Sprintf("its node role is inside instance profile %q, which cannot be resolved from the cluster", nc.InstanceProfile),
			[]string{fmt.Sprintf("Find the role with `aws iam get-instance-profile --instance-profile-name %s` and check that it is authorized as a node (an EC2_LINUX access entry, or aws-auth).", shell.Quote(nc.InstanceProfile))}, nil
	}
	role := ncr.Role
	purpose := identity.LinuxNode
	if ncr.Windows {
		purpose = identity.WindowsNode
	}
	entries := "Access entries are not visible from inside the cluster: `aws eks list-access-entries` shows them."
	if reason, skipped := m.SkippedReason("configmaps kube-system/aws-auth"); skipped {
		return fmt.Sprintf("aws-auth could not be read to check node role %s", role), []string{"kube-system/aws-auth could not be read: " + reason + ".", entries}, nil
	}
	fix := authorizeNodeFix(m, role, purpose)
	if m.Identity.AwsAuth == nil {
		return fmt.Sprintf("the cluster has no aws-auth ConfigMap, so node role %s joins only through an %s access entry; unless one exists, that is why", role, purpose.EntryType()),
			[]string{"The cluster has no kube-system/aws-auth ConfigMap.", entries}, fix
	}
	a := res.Authorize(role, purpose)
	var lines []string
	for _, f := range a.AwsAuth.Found {
		if f.Implicit {
			continue
		}
		l := "Found " + f.What
		if len(f.Problems) > 0 {
			l += ": " + strings.Join(f.Problems, "; ")
		} else {
			l += ": correct"
		}
		lines = append(lines, l+".")
	}
	switch a.AwsAuth.State {
	case identity.Valid:
		lines = append(lines, "With authentication mode API, EKS ignores aws-auth and the role needs an "+purpose.EntryType()+" access entry. "+entries)
		return fmt.Sprintf("aws-auth maps node role %s correctly, so the cause is elsewhere: authentication mode API (which ignores aws-auth), or the instance itself (security groups, subnets, user data)", role), lines, nil
	case identity.Invalid:
		probs := a.Problems()
		if len(probs) == 0 {
			for _, f := range a.AwsAuth.Found {
				probs = append(probs, f.Problems...)
			}
		}
		lines = append(lines, entries)
		gist := "its aws-auth entry is wrong"
		if len(probs) > 0 {
			gist = probs[0]
		}
		return fmt.Sprintf("aws-auth maps node role %s wrongly: %s", role, gist), lines, fix
	case identity.Missing:
		lines = append(lines, fmt.Sprintf("aws-auth has no entry for node role %s.", role), entries)
		return fmt.Sprintf("aws-auth does not map node role %s; unless an %s access entry does, that is why", role, purpose.EntryType()), lines, fix
	}
	lines = append(lines, entries)
	return fmt.Sprintf("could not tell whether aws-auth maps node role %s", role), lines, nil
}

// authorizeNodeFix gives the two ways to authorize a node role as commands: an
// access entry, or an aws-auth mapping with eksctl.
func authorizeNodeFix(m *cluster.Model, role identity.Role, purpose identity.Purpose) *Fix {
	if !role.Known() {
		return nil
	}
	partition, account := m.Account()
	arn := fmt.Sprintf("arn:%s:iam::%s:role/%s", partition, orText(account, "<account-id>"), role.Name)
	name := orText(m.ClusterName(), "<cluster-name>")
	groups := ""
	for _, g := range purpose.Groups() {
		groups += " --group " + shell.Quote(g)
	}
	return &Fix{
		Summary: fmt.Sprintf("authorize node role %s as a node: an %s access entry (first command), or, with authentication mode CONFIG_MAP or API_AND_CONFIG_MAP, an aws-auth mapping (second); then make the configuration that manages them say the same", role, purpose.EntryType()),
		Edits: []Edit{
			{Format: FormatShell, Text: fmt.Sprintf("aws eks create-access-entry --cluster-name %s --principal-arn %s --type %s", shell.Quote(name), shell.Quote(arn), purpose.EntryType())},
			{Format: FormatShell, Text: fmt.Sprintf("eksctl create iamidentitymapping --cluster %s --arn %s --username %s%s", shell.Quote(name), shell.Quote(arn), shell.Quote(purpose.Username()), groups)},
		},
	}
}

func claimNamesOf(claims []unregistered) []string {
	out := make([]string, len(claims))
	for i, u := range claims {
		out[i] = u.claim.Name
	}
	return out
}
