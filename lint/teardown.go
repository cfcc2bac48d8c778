package lint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/teardown"
	"github.com/eksdoctor/eksdoctor/write"
)

var teardownOrder = &Check{
	ID:       "teardown-order",
	Title:    "Karpenter custom resources can outlive the controller that finalizes them",
	Family:   "F5",
	Severity: Error,
	Doc: Doc{
		What: "In a Terraform configuration, a NodePool or EC2NodeClass (kubectl_manifest, kubernetes_manifest, or a Helm chart of custom resources) that does not depend, directly or through other resources, on the Karpenter helm_release; or a Karpenter helm_release that does not depend on the controller's IAM role, policies and pod identity (module.karpenter or the raw resources: the controller needs them to terminate instances; the interruption queue, its rules and the nodes' own role it does not need) or on the node group or Fargate profile it runs on (worked out by simulating where the controller fits before any Karpenter capacity exists). A NodePool need not depend on its EC2NodeClass: the two may be deleted together, since the class's finalizer waits for the pool's NodeClaims. It also reports a NodePool that nothing orders before the network its nodes and the controller reach AWS through: the NAT gateways, internet gateway, route tables, routes and associations of terraform-aws-modules/vpc (with NAT gateways enabled), its vpc-endpoints sub-module, or such raw resources in the same configuration. Reading module outputs does not order against them: module.vpc.private_subnets and vpc_id depend on the subnets and the VPC alone, so a cluster module that reads them (as terraform-aws-modules/eks does) orders nothing before the routes; depends_on = [module.vpc] anywhere in the chain does. Destroy-time commands count as deletes: a null_resource or terraform_data whose `when = destroy` local-exec provisioner runs `kubectl delete` of NodePools or EC2NodeClasses is judged like a manifest resource (it runs when terraform destroy destroys that resource, so it must depend on the release), and a destroy-time `helm uninstall` of the Karpenter release (installed by a command or by a helm_release) removes the controller when its resource is destroyed.",
		Why:  "terraform destroy removes a resource before everything it depends on, and independent resources in parallel. The finalizers karpenter.sh/termination (NodeClaims, Nodes) and karpenter.k8s.aws/termination (EC2NodeClasses) are removed only by a running controller that can still call EC2: if the controller is uninstalled first, or loses its IAM role or the node it runs on, the destroy hangs on the finalizers and the instances keep running outside the Terraform state. If the NAT gateways and routes go while Karpenter drains and terminates the nodes, the nodes lose their way out of the private subnets and go NotReady, and the controller can no longer reach the EC2 API to terminate them: the same hang (data-on-eks#1067).",
		Fix:  "Add the missing depends_on edges so destroy follows the safe order: NodePools (waiting until no NodeClaim remains) → EC2NodeClasses → Karpenter release → Karpenter IAM/SQS/EventBridge → the compute hosting Karpenter → cluster → network; for the network, the Karpenter release (or the NodePool, when it does not depend on a release) gets depends_on the VPC module or the gateways and routes, so that the NodePools, their classes and the controller are all destroyed before it. The fix is the complete depends_on list of each resource; `eksdoctor teardown` prints the whole order.",
	},
	Run: func(p *Pass) { reportTeardown(p, true) },
}

var teardownOrphans = &Check{
	ID:       "teardown-orphans",
	Title:    "Destroy does not delete Karpenter NodePools, or does not wait for them",
	Family:   "F5",
	Severity: Warning,
	Doc: Doc{
		What: "NodePools that the tool destroying the cluster does not manage (applied with kubectl next to a Terraform- or eksctl-managed cluster, as the current terraform-aws-eks example does with karpenter.yaml); kubectl_manifest NodePools and EC2NodeClasses without `wait = true` (a NodePool need not wait when every EC2NodeClass it uses is waited for and deleted before the controller: the class's finalizer holds destroy until the pool's nodes are gone); kubernetes_manifest NodePools and Provisioners, whose delete returns at once (they carry no finalizer), unless such an EC2NodeClass holds the destroy (kubernetes_manifest waits until a deleted object is gone); `apply_only = true` (never deleted); `force_new = true` on a NodePool (every change deletes and recreates it, draining all its nodes at once). NodePools a null_resource or terraform_data applies with a local-exec command (`kubectl apply -f`, a here-document or `echo` piped to `kubectl apply -f -`) that no destroy-time command deletes; a destroy-time `kubectl delete` of NodePools that returns before their nodes are gone: with `--wait=false`, or deleting only the NodePool (it carries no finalizer: kubectl returns at once and its NodeClaims go in the background) with nothing waiting for the nodes (`kubectl wait --for=delete nodeclaims`, a waiting delete of the NodeClaims or of the EC2NodeClasses, whose finalizer holds until their NodeClaims are gone, or `--cascade=foreground`).",
		Why:  "Without wait, destroy deletes the NodePool and moves on while Karpenter is still draining and terminating its nodes, so the controller, its permissions or its node group can go before the finalizers ran. NodePools outside the tool's state are never deleted by it: their instances keep running after the cluster is gone.",
		Fix:  "Set `wait = true` on kubectl_manifest NodePools and EC2NodeClasses, drop apply_only and force_new, and delete out-of-band NodePools before destroying the cluster (`kubectl delete nodepools --all`, then wait until no NodeClaim remains), or manage them in the same Terraform configuration. For NodePools applied by a command, run those deletes in a destroy-time provisioner of a resource that depends on the Karpenter release, followed by `kubectl wait --for=delete nodeclaims.karpenter.sh --all`.",
	},
	Requires: []*Fact{disruptionBlocksFact},
	Run:      func(p *Pass) { reportTeardown(p, false) },
}

// reportTeardown reports the hazards of the teardown plan: ordering hazards for
// teardown-order, the others for teardown-orphans.
func reportTeardown(p *Pass, order bool) {
	plan := teardown.New(p.Sim)
	for _, h := range plan.Hazards {
		if h.Kind.Order() != order {
			continue
		}
		f := Finding{
			Object:  hazardObject(p.Model, h.Subject),
			Origin:  h.Subject.Origin,
			Summary: hazardSummary(plan, h),
			Detail:  hazardDetail(plan, h),
			Fix:     hazardFix(p.Model, plan, h),
		}
		if h.Kind == teardown.HazardPoolAfterClass {
			f.Severity = Warning
		}
		p.Report(f)
	}
	if !order {
		reportDrainBlocked(p, plan)
	}
}

// reportDrainBlocked reports the NodePools of the teardown whose nodes'
// drain never ends: their pods may never be evicted (disruption-blocked
// decides which) and no terminationGracePeriod ends the wait, so the
// NodeClaims' finalizer, and the destroy that waits for it, wait forever.
func reportDrainBlocked(p *Pass, plan *teardown.Plan) {
	held := drainBlocked(resultOf[[]DisruptionBlock](p, disruptionBlocksFact))
	st := plan.Step(teardown.StageNodePools)
	if st == nil || len(held) == 0 {
		return
	}
	for _, it := range st.Items {
		var why []string
		var pools []*cluster.NodePool
		for _, ref := range it.Objects {
			if ref.Kind != "NodePool" && ref.Kind != "Provisioner" {
				continue
			}
			bs := held[ref.Name]
			if len(bs) == 0 {
				continue
			}
			if np := nodePoolNamed(p.Model, ref.Name); np != nil {
				pools = append(pools, np)
			}
			for _, b := range bs {
				w := fmt.Sprintf("%s (%s)", b.Ref(), b.Why)
				if !slices.Contains(why, w) {
					why = append(why, w)
				}
			}
		}
		if len(why) == 0 {
			continue
		}
		h := teardown.Hazard{
			Kind:    teardown.HazardDrainBlocked,
			Subject: it,
			Message: fmt.Sprintf("%s waits forever on the drain of the nodes of %s: their pods may never be evicted (%s), and no terminationGracePeriod ends the drain, so the nodes keep the karpenter.sh/termination finalizer", drainDeleter(it.Manager), objectList(it), strings.Join(why, "; ")),
		}
		if it.Address != "" {
			h.Message = it.Address + ": " + h.Message
		}
		f := Finding{
			Severity: Warning,
			Object:   hazardObject(p.Model, it),
			Origin:   drainOrigin(it, pools),
			Summary:  hazardSummary(plan, h),
			Detail:   hazardDetail(plan, h),
			Fix:      gracePeriodFix(p.Model, pools),
		}
		if it.Manager == "terraform" || it.Manager == "eksctl" {
			// terraform destroy (eksctl delete cluster) itself hangs, and
			// times out with the nodes and the controller still there.
			f.Severity = Error
		}
		p.Report(f)
	}
}

// drainOrigin is where a NodePool's drain would be bounded: its template's
// terminationGracePeriod (the nearest field written), else the item.
func drainOrigin(it teardown.Item, pools []*cluster.NodePool) cluster.Origin {
	if len(pools) == 1 && pools[0].Object != nil && pools[0].Object.Origin.File == it.Origin.File {
		return pools[0].Object.At("spec.template.spec.terminationGracePeriod")
	}
	return it.Origin
}

// drainDeleter words what deletes a NodePool, by the tool that manages it.
func drainDeleter(manager string) string {
	switch manager {
	case "terraform", "eksctl":
		return toolDestroy(manager)
	}
	return "deleting it with kubectl"
}

// gracePeriodFix sets a terminationGracePeriod on Karpenter v1 NodePools, so
// that a drain ends: after it, Karpenter deletes the pods still there.
func gracePeriodFix(m *cluster.Model, pools []*cluster.NodePool) *Fix {
	var edits []Edit
	var names []string
	for _, np := range pools {
		if np.Object == nil || np.Object.APIVersion != "karpenter.sh/v1" {
			return nil
		}
		patch := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"terminationGracePeriod": "24h"}}}}
		var e Edit
		if m.Live != nil {
			e = write.LivePatch(np.Object, patch)
		} else {
			var ok bool
			if e, ok = write.ObjectPatch(m, np.Object, patch); !ok {
				return nil
			}
		}
		edits = append(edits, e)
		names = append(names, np.Name)
	}
	if len(edits) == 0 {
		return nil
	}
	return &Fix{
		Summary: fmt.Sprintf("give NodePool %s a terminationGracePeriod (24h here; the pods' own budget is the better fix, see disruption-blocked): once it has passed, Karpenter deletes the pods that still hold a draining node", strings.Join(names, ", ")),
		Edits:   edits,
	}
}

// hazardObject names the Kubernetes object a hazard is about, or the Terraform
// resource when it creates none the model knows.
func hazardObject(m *cluster.Model, it teardown.Item) cluster.ObjectRef {
	if len(it.Objects) > 0 {
		return it.Objects[0]
	}
	if it.Address != "" {
		if ref, ok := m.Terraform.RefOf(it.Address); ok {
			return ref
		}
	}
	return cluster.ObjectRef{Kind: "Item", Name: it.Name}
}

func hazardSummary(plan *teardown.Plan, h teardown.Hazard) string {
	switch h.Kind {
	case teardown.HazardCRBeforeController:
		return fmt.Sprintf("terraform destroy can remove the Karpenter controller (%s) before %s, which it must finalize", targetNames(h), h.Subject.Name)
	case teardown.HazardControllerBeforeAWS:
		return fmt.Sprintf("terraform destroy can remove the Karpenter controller's IAM permissions (%s) before %s, which needs them to finalize nodes", targetNames(h), h.Subject.Name)
	case teardown.HazardControllerBeforeCompute:
		return fmt.Sprintf("terraform destroy can remove %s, where the Karpenter controller runs, before %s", targetNames(h), h.Subject.Name)
	case teardown.HazardCRBeforeNetwork:
		return fmt.Sprintf("terraform destroy can delete the NAT gateways and routes (%s) while Karpenter still drains and terminates the nodes of %s", targetNames(h), h.Subject.Name)
	case teardown.HazardPoolAfterClass:
		return fmt.Sprintf("terraform destroy can remove the EC2NodeClass (%s) before the NodePool %s", targetNames(h), h.Subject.Name)
	case teardown.HazardNoWait:
		return fmt.Sprintf("%s: terraform destroy does not wait for Karpenter to finalize %s", h.Subject.Name, objectList(h.Subject))
	case teardown.HazardApplyOnly:
		return fmt.Sprintf("%s: apply_only = true, terraform destroy never deletes %s", h.Subject.Name, objectList(h.Subject))
	case teardown.HazardForceNew:
		return fmt.Sprintf("%s: force_new = true, every change recreates %s and drains all its nodes at once", h.Subject.Name, objectList(h.Subject))
	case teardown.HazardOutOfBand:
		if h.Subject.Manager == cluster.ManagerCommand {
			return fmt.Sprintf("%s is applied by a command Terraform does not track and no destroy-time command deletes it: %s leaves its nodes running", objectList(h.Subject), toolDestroy(plan.Tool))
		}
		return fmt.Sprintf("%s is not managed by %s (applied with %s or a GitOps tool): %s leaves its nodes running", objectList(h.Subject), plan.Tool, h.Subject.Manager, toolDestroy(plan.Tool))
	}
	return h.Message
}

func toolDestroy(tool string) string {
	if tool == "eksctl" {
		return "eksctl delete cluster"
	}
	return tool + " destroy"
}

func targetNames(h teardown.Hazard) string {
	var out []string
	for _, t := range h.Targets {
		out = append(out, t.Name)
	}
	return strings.Join(out, ", ")
}

func objectList(it teardown.Item) string {
	if len(it.Objects) == 0 {
		return "its objects"
	}
	var out []string
	for _, o := range it.Objects {
		out = append(out, o.String())
	}
	return strings.Join(out, ", ")
}

// hazardDetail explains the hazard and places it in the safe order.
func hazardDetail(plan *teardown.Plan, h teardown.Hazard) string {
	var b strings.Builder
	b.WriteString(h.Message + ".")
	b.WriteString("\nSafe order for this configuration (eksdoctor teardown prints it with commands):")
	for i, st := range plan.Steps {
		var names []string
		for _, it := range st.Items {
			names = append(names, it.Name)
		}
		fmt.Fprintf(&b, "\n  %d. %s: %s", i+1, st.Stage.Title(), strings.Join(names, ", "))
	}
	return b.String()
}

// hazardFix is the Terraform edit that removes the hazard, or for NodePools
// outside the tool, the commands to run before destroying the cluster.
func hazardFix(m *cluster.Model, plan *teardown.Plan, h teardown.Hazard) *Fix {
	if c := h.Change; c != nil {
		e, ok := changeEdit(m, *c)
		if !ok {
			return nil
		}
		summary := fmt.Sprintf("set %s on %s", strings.TrimSpace(strings.SplitN(e.Text, "\n", 2)[0]), c.Address)
		if c.Kind == teardown.ChangeDependsOn {
			summary = fmt.Sprintf("make %s depend on %s, so that terraform destroy removes %s first", c.Address, targetAddresses(h), c.Address)
		}
		return &Fix{Summary: summary, Edits: []Edit{e}}
	}
	if h.Kind == teardown.HazardNoWait && h.Subject.Command != "" && h.Subject.Origin.File != "" {
		wait := "kubectl wait --for=delete nodeclaims.karpenter.sh --all --timeout=30m"
		if onlyObjectKind(h.Subject, "Provisioner") {
			wait = "kubectl wait --for=delete nodes -l karpenter.sh/provisioner-name --timeout=30m"
		}
		if onlyObjectKind(h.Subject, "EC2NodeClass") {
			return &Fix{Summary: fmt.Sprintf("drop --wait=false from the destroy-time command of %s, so that it waits until the EC2NodeClasses are finalized", h.Subject.Address)}
		}
		return &Fix{
			Summary: fmt.Sprintf("make the destroy-time command of %s wait until Karpenter has terminated the nodes: run this after its kubectl delete", h.Subject.Address),
			Edits:   []Edit{{File: h.Subject.Origin.File, Line: h.Subject.Origin.Line, Format: FormatShell, Text: wait + "\n"}},
		}
	}
	if h.Kind != teardown.HazardOutOfBand {
		return nil
	}
	var cmds []string
	for _, st := range []teardown.Stage{teardown.StageNodePools, teardown.StageNodeClasses} {
		if s := plan.Step(st); s != nil {
			cmds = append(cmds, s.Commands...)
		}
	}
	if len(cmds) == 0 {
		return nil
	}
	if h.Subject.Manager == cluster.ManagerCommand {
		return &Fix{
			Summary: "delete them on terraform destroy: run these commands in a destroy-time provisioner (when = destroy) of a resource that depends on the Karpenter release, so that it runs before the controller is uninstalled (or apply them with kubectl_manifest and wait = true)",
			Edits:   []Edit{{File: h.Subject.Origin.File, Line: h.Subject.Origin.Line, Format: FormatShell, Text: strings.Join(cmds, "\n") + "\n"}},
		}
	}
	return &Fix{
		Summary: fmt.Sprintf("delete the NodePools and wait until no NodeClaim remains before destroying the cluster with %s (or manage them in the same configuration)", plan.Tool),
		Edits:   []Edit{{File: h.Subject.Origin.File, Line: h.Subject.Origin.Line, Format: FormatShell, Text: strings.Join(cmds, "\n") + "\n"}},
	}
}

func targetAddresses(h teardown.Hazard) string {
	var out []string
	for _, t := range h.Targets {
		out = append(out, t.Key())
	}
	return strings.Join(out, ", ")
}

// onlyObjectKind reports whether every object of an item is of one kind.
func onlyObjectKind(it teardown.Item, kind string) bool {
	for _, o := range it.Objects {
		if o.Kind != kind {
			return false
		}
	}
	return len(it.Objects) > 0
}

// changeEdit writes a change of the teardown plan as an edit of the
// configuration.
func changeEdit(m *cluster.Model, c teardown.Change) (Edit, bool) {
	switch c.Kind {
	case teardown.ChangeDependsOn:
		return write.DependsOnInLines(m, c.Address, c.DependsOn)
	case teardown.ChangeWait:
		return write.DestroyWait(m, c.Address)
	case teardown.ChangeDelete:
		return write.DestroyDelete(m, c.Address)
	case teardown.ChangeInPlace:
		return write.UpdateInPlace(m, c.Address)
	}
	return Edit{}, false
}

// TeardownEdit is an edit of the Terraform resource at Address that makes
// terraform destroy follow a teardown plan.
type TeardownEdit struct {
	Address string
	Edit
}

// TeardownEdits writes the changes of a teardown plan of a model as edits of
// its configuration, in the plan's order.
func TeardownEdits(m *cluster.Model, plan *teardown.Plan) []TeardownEdit {
	var out []TeardownEdit
	for _, c := range plan.Changes {
		if e, ok := changeEdit(m, c); ok {
			out = append(out, TeardownEdit{Address: c.Address, Edit: e})
		}
	}
	return out
}
