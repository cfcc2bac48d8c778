package lint

import (
	"fmt"
	"slices"
	"strings"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/write"
)

// auto-mode-config: EKS Auto Mode switched on in a way EKS refuses or that does not do what it says: partly, without bootstrap_self_managed_addons = false, with built-in NodePools named but not enabled, beside aws-auth only, or with objects that take the names EKS gives its own.

var autoModeConfig = &Check{
	ID:       "auto-mode-config",
	Title:    "EKS Auto Mode is switched on partly or inconsistently",
	Family:   "F1",
	Severity: Error,
	Doc: Doc{
		What: "The settings that switch EKS Auto Mode on, as the request to EKS carries them (terraform-aws-eks `compute_config` in v21 and `cluster_compute_config` in v20 with the module's logic applied, a raw `aws_eks_cluster`, eksctl `autoModeConfig`, a plan). Errors: `compute_config.enabled`, `storage_config.block_storage.enabled` and `kubernetes_network_config.elastic_load_balancing.enabled` that are not all true or all false; Auto Mode on while `bootstrap_self_managed_addons` is true or left to the provider's default (true); built-in NodePools named while `enabled` is not true (v21 sends them with Auto Mode off; v20 drops them); `authentication_mode = \"CONFIG_MAP\"`, which an Auto Mode cluster cannot have. Warnings: a setting the module replaces (v21's `node_role_arn` while `create_node_iam_role` is true); `node_pools = []` while a node role is still sent; a custom NodePool named `general-purpose` or `system`, or a custom NodeClass named `default`, beside the built-in ones EKS creates under those names. Info: the `general-purpose` pool beside NodePools of a self-managed Karpenter (both take pods that select neither), EKS add-ons that Auto Mode runs on its own nodes when Auto Mode is all the compute, and a Helm release of the AWS Load Balancer Controller beside Auto Mode's load balancing (which of the two takes an Ingress or a Service is its class's choice).",
		Why:  "EKS refuses a partial request: `InvalidParameterException: For EKS Auto Mode, please ensure that all required configs, including computeConfig, kubernetesNetworkConfig, and blockStorage are all either fully enabled or fully disabled.` (the AWS provider checks it at plan time). Auto Mode requires `bootstrap_self_managed_addons = false`, and changing that setting replaces the cluster. Pools named without `enabled` never exist, so pods meant for them stay Pending; a node role the module replaces is not the one the configuration authorizes.",
		Fix:  "Switch all three settings together (`compute_config = { enabled = true, ... }` in terraform-aws-eks sets all three), set `bootstrap_self_managed_addons = false` when the cluster is created, write `enabled = true` beside `node_pools`, use `API` or `API_AND_CONFIG_MAP` authentication, set `create_node_iam_role = false` to use your own node role, and give custom NodePools and NodeClasses names of their own.",
	},
	Run: runAutoModeConfig,
}

func runAutoModeConfig(p *Pass) {
	m := p.Model
	a := m.Cluster.AutoMode
	if a == nil || a.Live {
		return
	}
	k := catalog.AutoMode()
	origin := a.Origin
	ref := cluster.ObjectRef{Kind: "Cluster", Name: m.Cluster.Name}
	if ref.Name == "" || cluster.IsUnknown(ref.Name) {
		ref.Name = m.Cluster.Address
	}
	reportFix := func(sev Severity, summary, detail string, fix *Fix) {
		p.Report(Finding{Severity: sev, Object: ref, Origin: origin, Summary: summary, Detail: detail, Fix: fix})
	}
	report := func(sev Severity, summary, detail string) { reportFix(sev, summary, detail, nil) }
	switches := []struct {
		name string
		s    cluster.Switch
	}{
		{"compute_config.enabled", a.Compute},
		{"storage_config.block_storage.enabled", a.BlockStorage},
		{"kubernetes_network_config.elastic_load_balancing.enabled", a.LoadBalancing},
	}
	on, off, unknown := 0, 0, 0
	var parts []string
	for _, sw := range switches {
		switch sw.s {
		case cluster.SwitchOn:
			on++
		case cluster.SwitchUnknown:
			unknown++
		default:
			off++
		}
		parts = append(parts, fmt.Sprintf("%s %s", sw.name, sw.s))
	}
	if on > 0 && off > 0 {
		report(Error, fmt.Sprintf("%s switches EKS Auto Mode on partly: %s; EKS requires all three on or all off", a.From, strings.Join(parts, ", ")),
			"EKS answers: `"+k.AllOrNothing+"` The AWS provider refuses it at plan time: `compute_config.enabled, kubernetes_network_config.elastic_load_balancing.enabled, and storage_config.block_storage.enabled must all be set to either true or false`.")
	}
	if a.Compute == cluster.SwitchOn {
		switch a.BootstrapAddons {
		case cluster.SwitchOn, cluster.SwitchUnset:
			how := "is true"
			if a.BootstrapAddons == cluster.SwitchUnset {
				how = "is not set, and the AWS provider's default is true"
			}
			var fix *Fix
			if e, ok := write.NoBootstrapAddons(m); ok {
				fix = &Fix{Summary: "set bootstrap_self_managed_addons = false (on an existing cluster this replaces it)", Edits: []Edit{e}}
			}
			reportFix(Error, fmt.Sprintf("%s switches EKS Auto Mode on while bootstrap_self_managed_addons %s: Auto Mode requires it false", a.From, how),
				"EKS Auto Mode requires bootstrap_self_managed_addons = false. Changing bootstrap_self_managed_addons replaces the cluster (the AWS provider forces a new resource), so set it when the cluster is created; on an existing cluster, turning Auto Mode on this way destroys and recreates the cluster.", fix)
		}
		if mode := strings.ToUpper(m.Identity.AuthMode); mode == cluster.AuthConfigMap {
			report(Error, fmt.Sprintf("%s switches EKS Auto Mode on while authentication_mode is CONFIG_MAP: an Auto Mode cluster needs access entries", a.From),
				"Access entries cannot be turned off on an EKS Auto Mode cluster, and Auto Mode nodes join through them alone (type EC2): use API or API_AND_CONFIG_MAP.")
		}
	}
	if named := a.NodePoolsSet && len(a.NodePools) > 0; a.Compute == cluster.SwitchOff && (named || strings.Contains(a.Ignored, "without enabled")) {
		var fix *Fix
		if e, ok := write.AutoModeEnabled(m, a); ok {
			fix = &Fix{Summary: "switch EKS Auto Mode on: enabled = true", Edits: []Edit{e}}
		}
		what := "built-in NodePools " + strings.Join(a.NodePools, ", ")
		if !named {
			what = "built-in NodePools"
		}
		reportFix(Error, fmt.Sprintf("%s names %s but does not set enabled = true: EKS Auto Mode stays off and the pools never exist", a.From, what),
			"Without enabled = true the request carries Auto Mode switched off (terraform-aws-eks v21 sends the pools with it, which EKS does not accept with Auto Mode off; v20 drops them). Pods meant for the built-in NodePools stay Pending.", fix)
	} else if a.Ignored != "" {
		report(Warning, fmt.Sprintf("%s writes %s", a.From, a.Ignored), "What the configuration writes there is not what EKS receives.")
	}
	if a.Compute == cluster.SwitchOn && a.NodePoolsSet && len(a.NodePools) == 0 && !a.NodePoolsUnknown && a.NodeRole != "" {
		report(Warning, fmt.Sprintf("%s enables no built-in NodePool (node_pools = []) but still sends a node role (%s)", a.From, a.NodeRole),
			"AWS's recipe for a cluster without built-in NodePools leaves both nodePools and nodeRoleArn empty, and eksctl refuses a role without pools; what EKS does with the pair is not documented. Leave node_pools out (terraform-aws-eks v21 then sends neither).")
	}
	if !a.On() || a.Compute == cluster.SwitchUnknown {
		return
	}
	for _, o := range m.Objects {
		if o.Manager == cluster.ManagerEKS {
			continue
		}
		switch {
		case o.Kind == "NodePool" && strings.HasPrefix(o.APIVersion, "karpenter.sh/") && a.Enables(o.Name):
			p.Report(Finding{Severity: Warning, Object: o.Ref(), Origin: o.Origin,
				Summary: fmt.Sprintf("%s takes the name of a built-in NodePool that %s enables: EKS creates its own NodePool %q", o.Ref(), a.From, o.Name),
				Detail:  "EKS creates and owns the built-in NodePools and allows no change to them; which of the two definitions a cluster ends up with is not documented. Give the custom NodePool another name, or disable the built-in one."})
		case o.Kind == k.NodeClass.Kind && strings.HasPrefix(o.APIVersion, k.NodeClass.Group+"/") && o.Name == k.NodeClass.Default:
			p.Report(Finding{Severity: Warning, Object: o.Ref(), Origin: o.Origin,
				Summary: fmt.Sprintf("%s takes the name of EKS Auto Mode's built-in NodeClass %q", o.Ref(), o.Name),
				Detail:  "AWS: \"Do not name your custom node class default.\" EKS provisions its own NodeClass of that name when a built-in NodePool is enabled."})
		}
	}
	if a.Enables("general-purpose") {
		var self []string
		for _, np := range m.NodePools {
			if !sim.IsAutoMode(np) && !np.InlineNodeClass && np.Object != nil {
				self = append(self, np.Name)
			}
		}
		if len(self) > 0 {
			slices.Sort(self)
			report(Info, fmt.Sprintf("EKS Auto Mode's general-purpose NodePool runs beside NodePools of a self-managed Karpenter (%s): pods that select neither may land on either", strings.Join(self, ", ")),
				"AWS suggests running either EKS Auto Mode or a self-managed Karpenter; with both, steer each workload with a node selector (eks.amazonaws.com/compute-type: auto, or karpenter.sh/nodepool) or a taint. The migration AWS documents enables Auto Mode without general-purpose, whose requirements select almost any pod.")
		}
	}
	for _, r := range m.HelmReleases {
		if a.LoadBalancing != cluster.SwitchOn {
			break
		}
		if c, ok := catalog.ChartFor(r.Chart, r.Version); !ok || c.Name != "aws-load-balancer-controller" {
			continue
		}
		p.Report(Finding{Severity: Info, Object: releaseRef(r), Origin: r.Origin,
			Summary: fmt.Sprintf("the AWS Load Balancer Controller runs beside the EKS Auto Mode load balancing %s switches on: each Ingress and Service goes to the controller its class names", a.From),
			Detail:  "AWS supports both in one cluster and does not migrate load balancers between them. An Ingress goes to EKS Auto Mode when its IngressClass names the controller eks.amazonaws.com/alb, to the AWS Load Balancer Controller when it names ingress.k8s.aws/alb; a Service of type LoadBalancer to Auto Mode with loadBalancerClass eks.amazonaws.com/nlb, to the controller with service.k8s.aws/nlb (which its webhook sets on Services without a class unless enableServiceMutatorWebhook is false). The controller still needs its own IAM role and nodes to run on."})
	}
	if autoModeOnly(m) {
		var redundant []string
		for _, ad := range m.Addons {
			if what := k.BuiltinComponent(ad.Name); what != "" && ad.Implicit == "" {
				redundant = append(redundant, fmt.Sprintf("%s (%s)", ad.Name, what))
			}
		}
		if len(redundant) > 0 {
			slices.Sort(redundant)
			report(Info, fmt.Sprintf("EKS Auto Mode runs on its nodes what these add-ons provide, and it is all the compute the cluster has: %s", strings.Join(redundant, ", ")),
				"AWS lists these add-ons as not needed on Auto Mode nodes; they remain necessary only for node groups, self-managed nodes or Fargate. Recent versions keep their DaemonSets off Auto Mode nodes (eks.amazonaws.com/compute-type NotIn [auto]), so they do no harm, but they are not what serves the nodes.")
		}
	}
}
