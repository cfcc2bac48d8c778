package lint

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/shell"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/write"
)

// finalizer-stuck: objects being deleted and held by a Karpenter finalizer that no running controller will remove.

var finalizerStuck = &Check{
	ID:       "finalizer-stuck",
	Title:    "Karpenter object being deleted while no controller can finalize it",
	Family:   "F5",
	Severity: Error,
	Live:     true,
	Doc: Doc{
		What: "A NodePool, NodeClaim, EC2NodeClass or Node is being deleted (it has a deletionTimestamp) and still carries a Karpenter finalizer (`karpenter.sh/termination`, `karpenter.k8s.aws/termination`), while the Karpenter controller that removes it is absent from the cluster or has no ready pod. The finding names the EC2 instances at risk (from the NodeClaims' and Nodes' `providerID`) and how long the deletion has waited. A Node is reported with its NodeClaim. When the controller cannot be seen (Deployments not readable, or the read restricted to another namespace) the finding is `info`: it could not be verified.",
		Why:  "Only a running controller drains the node, waits for its volumes to detach, terminates the instance and then removes the finalizer. Without it the objects stay forever, `terraform destroy` and `kubectl delete` hang, and the instances keep running outside any state, billed, until someone terminates them by hand.",
		Fix:  "Bring the controller back: reinstall the Karpenter release that created the objects (same chart version and values), or make its pods schedulable and ready (see `pod-unschedulable` and `bootstrap-deadlock` for its Pending pods). It then finishes the deletions itself. Only as a last resort, terminate the instances yourself (`aws ec2 terminate-instances`) and remove the finalizer (`kubectl patch ... --type json` with a test of the finalizer's position, so no other finalizer is dropped).",
	},
	Run:      runFinalizerStuck,
	Requires: []*Fact{karpenterControllerFact},
}

// isKarpenterFinalizer reports finalizers only the Karpenter controller removes.
func isKarpenterFinalizer(f string) bool {
	return strings.HasPrefix(f, "karpenter.sh/") || strings.HasPrefix(f, "karpenter.k8s.aws/")
}

func karpenterFinalizersOf(o *cluster.Object) []string {
	var out []string
	for _, f := range o.Finalizers() {
		if isKarpenterFinalizer(f) {
			out = append(out, f)
		}
	}
	return out
}

// stuckKinds are the kinds Karpenter finalizes.
func stuckKind(o *cluster.Object) bool {
	switch {
	case o.Kind == "Node" && o.APIVersion == "v1":
		return true
	case (o.Kind == "NodePool" || o.Kind == "NodeClaim") && strings.HasPrefix(o.APIVersion, "karpenter.sh/"):
		return true
	case o.Kind == "EC2NodeClass" && strings.HasPrefix(o.APIVersion, "karpenter.k8s.aws/"):
		return true
	}
	return false
}

func runFinalizerStuck(p *Pass) {
	m := p.Model
	if m.Live == nil {
		return
	}
	var stuck []*cluster.Object
	for _, o := range m.Objects {
		if o.Manager == "cluster" && stuckKind(o) && o.Terminating() && len(karpenterFinalizersOf(o)) > 0 {
			stuck = append(stuck, o)
		}
	}
	if len(stuck) == 0 {
		return
	}
	ctrl := resultOf[sim.Controller](p, karpenterControllerFact)
	if ctrl.State == sim.ControllerReady {
		return
	}
	now, haveNow := m.NowTime()
	claimOfNode := map[string]*cluster.NodeClaim{}
	for _, nc := range m.NodeClaims {
		if nc.NodeName != "" {
			claimOfNode[nc.NodeName] = nc
		}
	}
	stuckRef := map[cluster.ObjectRef]bool{}
	for _, o := range stuck {
		stuckRef[o.Ref()] = true
	}
	for _, o := range stuck {
		if o.Kind == "Node" {
			if nc := claimOfNode[o.Name]; nc != nil && stuckRef[nc.Object.Ref()] {
				// Reported with its NodeClaim: one instance, one finding.
				continue
			}
		}
		reportStuck(p, o, ctrl, now, haveNow)
	}
}

// atRisk lists the instances a stuck object stands for: its own, or those of
// the NodeClaims it owns (NodePool) or that use it (EC2NodeClass).
func atRisk(m *cluster.Model, o *cluster.Object) (instances []string, claims []*cluster.NodeClaim) {
	add := func(pid string) {
		if id := cluster.InstanceID(pid); id != "" {
			instances = append(instances, id)
		}
	}
	switch o.Kind {
	case "Node":
		add(o.String("spec.providerID"))
	case "NodeClaim":
		add(o.String("status.providerID"))
	case "NodePool", "EC2NodeClass":
		for _, nc := range m.NodeClaims {
			if o.Kind == "NodePool" && nc.NodePool == o.Name || o.Kind == "EC2NodeClass" && nc.NodeClassRef.Name == o.Name {
				claims = append(claims, nc)
				add(nc.ProviderID)
			}
		}
	}
	sort.Strings(instances)
	sort.Slice(claims, func(i, j int) bool { return claims[i].Name < claims[j].Name })
	return instances, claims
}

func reportStuck(p *Pass, o *cluster.Object, ctrl sim.Controller, now time.Time, haveNow bool) {
	m := p.Model
	fins := karpenterFinalizersOf(o)
	instances, claims := atRisk(m, o)
	waited := ""
	if age, ok := ageAt(now, haveNow, deletionTimestamp(o)); ok {
		waited = " for " + ageText(age)
	}
	var node *cluster.Node
	if o.Kind == "NodeClaim" {
		for _, n := range m.Nodes {
			if n.Name == o.String("status.nodeName") {
				node = n
			}
		}
	}
	risk := "no EC2 instance is named"
	if len(instances) > 0 {
		risk = "instance(s) " + strings.Join(instances, ", ") + " keep running"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s has been deleting%s, held by finalizer(s) %s.\n", o.Ref(), waited, strings.Join(fins, ", "))
	fmt.Fprintf(&b, "%s\n", ctrl.Sentence())
	switch {
	case node != nil && node.Deleting:
		fmt.Fprintf(&b, "Its Node %s is being deleted too, held by %s.\n", node.Name, strings.Join(node.Finalizers, ", "))
	case node != nil:
		fmt.Fprintf(&b, "Its Node %s is still there (finalizers %s): it goes when the NodeClaim is finalized.\n", node.Name, strings.Join(node.Finalizers, ", "))
	}
	if len(claims) > 0 {
		var names []string
		for _, nc := range claims {
			names = append(names, nc.Name)
		}
		fmt.Fprintf(&b, "NodeClaims that must go first: %s.\n", strings.Join(names, ", "))
	}
	b.WriteString("Only a running Karpenter controller drains the node, waits for its volumes to detach, terminates the instance and then removes the finalizer; until it does, the object stays and the instance is billed outside any state.")

	sev := Error
	summary := fmt.Sprintf("%s has been deleting%s, held by %s, and the Karpenter controller that removes it is %s: %s", o.Ref(), waited, strings.Join(fins, ", "), stateWord(ctrl.State), risk)
	if ctrl.State == sim.ControllerUnknown {
		sev = Info
		summary = fmt.Sprintf("%s has been deleting%s, held by %s; could not verify that the Karpenter controller runs: %s", o.Ref(), waited, strings.Join(fins, ", "), ctrl.Why)
	}
	p.Report(Finding{
		Severity: sev,
		Object:   o.Ref(),
		Origin:   o.Origin,
		Summary:  summary,
		Detail:   b.String(),
		Fix:      stuckFix(m, o, ctrl, instances, node),
	})
}

func stateWord(s sim.ControllerState) string {
	switch s {
	case sim.ControllerNotReady:
		return "not ready"
	case sim.ControllerAbsent:
		return "absent"
	}
	return "unknown"
}

// stuckFix: first the controller, then, as a last resort, the instances and the
// finalizers by hand.
func stuckFix(m *cluster.Model, o *cluster.Object, ctrl sim.Controller, instances []string, node *cluster.Node) *Fix {
	var edits []Edit
	summary := "bring the Karpenter controller back so it finishes the deletion; only as a last resort terminate the instances yourself and remove the finalizer"
	switch ctrl.State {
	case sim.ControllerAbsent:
		ns := orText(m.Karpenter.Namespace, "kube-system")
		cmd := fmt.Sprintf("helm upgrade --install karpenter oci://public.ecr.aws/karpenter/karpenter --namespace %s --version %s --set settings.clusterName=%s  # the chart version and values that created these objects",
			shell.Quote(ns), shell.Quote(orText(exactVersion(m.Karpenter.Version), "<version>")), shell.Quote(orText(m.ClusterName(), "<cluster-name>")))
		edits = append(edits, Edit{Format: FormatShell, Text: cmd})
	case sim.ControllerNotReady:
		for _, w := range ctrl.Deployments {
			edits = append(edits,
				Edit{Format: FormatShell, Text: fmt.Sprintf("kubectl describe deployment %s -n %s", shell.Quote(w.Object.Name), shell.Quote(w.Object.Namespace))},
				Edit{Format: FormatShell, Text: fmt.Sprintf("kubectl logs %s -n %s --all-containers", shell.Quote("deployment/"+w.Object.Name), shell.Quote(w.Object.Namespace))},
			)
		}
	}
	if len(instances) > 0 && (o.Kind == "NodeClaim" || o.Kind == "Node") {
		edits = append(edits, Edit{Format: FormatShell, Text: "aws ec2 terminate-instances --instance-ids " + shell.Join(instances...) + "  # last resort, once the controller cannot come back"})
	}
	if o.Kind == "NodeClaim" || o.Kind == "Node" || o.Kind == "EC2NodeClass" {
		for _, f := range karpenterFinalizersOf(o) {
			if e, ok := write.RemoveFinalizer(o, f, "last resort"); ok {
				edits = append(edits, e)
			}
		}
		if node != nil {
			for _, f := range node.Finalizers {
				if !isKarpenterFinalizer(f) {
					continue
				}
				if e, ok := write.RemoveFinalizer(node.Object, f, "last resort"); ok {
					edits = append(edits, e)
				}
			}
		}
	}
	if len(edits) == 0 {
		return nil
	}
	return &Fix{Summary: summary, Edits: edits}
}

// exactVersion returns a version only when it names a release ("1.0.8"), not a
// generation ("1", inferred from an apiVersion).
func exactVersion(v string) string {
	if strings.Count(v, ".") >= 2 {
		return v
	}
	return ""
}
