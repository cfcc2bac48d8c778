package lint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/write"
)

// bootstrap-deadlock: components needed before Karpenter can launch nodes that fit only Karpenter capacity, or nothing, before it runs.

var bootstrapDeadlock = &Check{
	ID:       "bootstrap-deadlock",
	Title:    "Component needed before Karpenter fits only Karpenter capacity",
	Family:   "F1",
	Severity: Error,
	Doc: Doc{
		What: "A component that must run before Karpenter can launch nodes fits only Karpenter capacity, or nothing, in the bootstrap phase, when only node groups and Fargate profiles exist. Such components are the Karpenter controller itself, the CNI agent, CoreDNS when the Karpenter controller resolves names through it (dnsPolicy ClusterFirst), and EKS add-ons Terraform waits for. An add-on Terraform creates before the node groups and Fargate profiles its pods fit (an `aws_eks_addon` without `depends_on` on them) is an info: it is DEGRADED until the nodes join, which current AWS providers wait for within the create timeout. In a live cluster it reports such a component's Pending pods that fit no existing node (only a NodePool, or nothing), quoting the scheduler's FailedScheduling message beside eksdoctor's explanation; those pods are not reported again as pod-unschedulable.",
		Why:  "Karpenter cannot launch the node the component needs, because the component (or Karpenter) is not running yet: the pods stay Pending, `terraform apply` hangs on the add-on or Helm release until it times out, and the cluster never scales.",
		Fix:  "Let the component run on the node group (or Fargate profile) that exists before Karpenter: tolerate the node group's taint, or select its labels. The fix is expressed where the component is configured (manifest, Helm values, add-on configuration_values).",
	},
	Run:        runBootstrapDeadlock,
	Requires:   []*Fact{podsFact, livePendingFact},
	Supersedes: []*Check{podUnschedulable},
}

func runBootstrapDeadlock(p *Pass) {
	// Live workloads are judged by their Pending pods: the bootstrap phase of a
	// running cluster is not what its nodes show.
	defer reportPendingPods(p, pendingBootstrap)
	decided := resultOf[map[*cluster.Workload]*podsDecision](p, podsFact)
	for _, w := range p.Model.Workloads {
		d := decided[w]
		if d == nil || d.boot == nil {
			continue
		}
		boot := d.boot
		if w.IsDaemonSet() {
			reportDaemonSetBootstrap(p, w, boot)
			continue
		}
		if d.bootOutcome != podsDeadlock {
			reportAddonBeforeCapacity(p, w, boot)
			continue
		}
		steady := p.Sim.Place(w, cluster.Steady)
		what := "fits no capacity that exists before Karpenter"
		if steady.FitsOnlyKind(cluster.KindNodePool) {
			what = "fits only Karpenter capacity"
		}
		detail := fmt.Sprintf("It must run in the bootstrap phase: %s.\n%s", w.Bootstrap, placementDetail(boot))
		if steady.Result() == sim.Fits {
			var names []string
			for _, v := range steady.Fitting() {
				names = append(names, describeSource(v.Source))
			}
			detail += "\nOnce Karpenter runs it would fit: " + strings.Join(names, ", ") + "."
		}
		p.Report(Finding{
			Object:  w.Ref(),
			Origin:  w.Object.Origin,
			Summary: fmt.Sprintf("%s %s: %s", w.Ref(), what, firstClause(boot)),
			Detail:  detail,
			Fix:     taintFix(p, w, boot, cluster.KindNodeGroup, cluster.KindNode),
			causes:  []string{podsCause(w.Ref())},
		})
	}
}

// reportDaemonSetBootstrap: a DaemonSet nodes need (the CNI agent) must run on
// every node group, or those nodes never become Ready.
func reportDaemonSetBootstrap(p *Pass, w *cluster.Workload, boot *sim.Placement) {
	for _, v := range boot.Verdicts {
		if v.Source.Kind != cluster.KindNodeGroup || v.Result != sim.Refuses {
			continue
		}
		p.Report(Finding{
			Object:  w.Ref(),
			Origin:  w.Object.Origin,
			Summary: fmt.Sprintf("%s does not run on %s: %s", w.Ref(), describeSource(v.Source), v.Reasons[0].Text()),
			Detail:  fmt.Sprintf("%s.\n%s", w.Bootstrap, v.Line()),
			Fix:     tolerationFixFor(p, w, boot.Phase, v),
		})
	}
}

// reportAddonBeforeCapacity: Terraform waits for an EKS add-on to become
// ACTIVE, and creates it as soon as what it depends on exists. When none of
// the node groups and Fargate profiles its pods fit is among them — no
// depends_on on an aws_eks_addon — the add-on is created with nowhere to run
// its pods: it is DEGRADED until they join.
func reportAddonBeforeCapacity(p *Pass, w *cluster.Workload, boot *sim.Placement) {
	m := p.Model
	a := w.Addon
	if a == nil || a.Implicit != "" || m.Terraform == nil || w.IsDaemonSet() || boot.Result() != sim.Fits {
		return
	}
	addr := m.Terraform.ResourceOf(a.Address)
	if addr == "" {
		addr = m.Terraform.NodeOf(a.Address)
	}
	if addr == "" {
		return
	}
	var later []string
	var nodes []string
	for _, v := range boot.Fitting() {
		src := v.Source
		var saddr string
		switch {
		case src.NodeGroup != nil:
			saddr = src.NodeGroup.Address
		case src.Fargate != nil:
			saddr = src.Fargate.Address
		default:
			return
		}
		node := m.Terraform.NodeOf(saddr)
		if node == "" {
			return
		}
		if node == addr || m.Terraform.DependsOn(addr, node) {
			// Capacity of the module that declares the add-on follows the
			// module's own order (before_compute add-ons come before a
			// pause, then the node groups start).
			return
		}
		later = append(later, describeSource(src))
		if !slices.Contains(nodes, node) {
			nodes = append(nodes, node)
		}
	}
	if len(later) == 0 {
		return
	}
	why := fmt.Sprintf("%s does not depend on them", a.Address)
	f := Finding{
		Severity: Info,
		Object:   w.Ref(),
		Origin:   w.Object.Origin,
		Summary:  fmt.Sprintf("%s fits only %s, which Terraform creates in parallel with EKS add-on %s or after it (%s)", w.Ref(), strings.Join(later, ", "), a.Name, why),
		Detail: fmt.Sprintf("%s. Terraform creates the add-on as soon as the cluster exists and waits for it to become ACTIVE; with no node for its pods yet it goes DEGRADED. Current AWS provider releases wait through DEGRADED until the nodes join, within the add-on's create timeout (20 minutes by default); early releases failed the apply at once (`unexpected state 'DEGRADED', wanted target 'ACTIVE'`), and a node group that takes longer, or never joins, still fails it (`last state: 'DEGRADED'`). terraform-aws-eks has made its add-ons depend on its node groups since v18.4.1 for this reason.\n%s",
			w.Bootstrap, placementDetail(boot)),
		causes: []string{podsCause(w.Ref())},
	}
	if len(nodes) > 0 {
		deps := append(append([]string(nil), m.Terraform.Nodes[addr].DependsOn...), nodes...)
		if e, ok := write.DependsOn(m, addr, deps); ok {
			f.Fix = &Fix{Summary: "create the add-on after the capacity its pods need: depends_on = [" + strings.Join(nodes, ", ") + "]", Edits: []Edit{e}}
		}
	}
	p.Report(f)
}
