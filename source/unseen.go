package source

import (
	"fmt"
	"slices"
	"strings"

	"github.com/eksdoctor/eksdoctor/catalog"
	"github.com/eksdoctor/eksdoctor/cluster"
)

// markUnseen records capacity that placement cannot see into, so that a workload
// that fits nothing visible is reported as not verified rather than as failing:
// when a configuration declares
// no node group, Fargate profile or node at all, the compute the cluster must get
// from elsewhere (another Terraform root, an existing cluster read through data
// sources, the console). Loaders add what only they can tell (node groups known
// only after apply, module versions that are not modelled).
//
// When the configuration file declares the cluster's capacity complete, no
// capacity is outside the inputs: what a loader marked as defined elsewhere is
// dropped, and nothing is added. Capacity the inputs declare but eksdoctor
// cannot model stays unseen.
func markUnseen(m *cluster.Model, complete bool) {
	if m.Live != nil {
		return // a running cluster shows its nodes
	}
	gitopsCharts(m)
	if complete {
		m.Unseen = slices.DeleteFunc(m.Unseen, func(u cluster.UnseenCapacity) bool { return u.Outside })
		return
	}
	if k := m.Karpenter; (k.Controller != nil || k.Release != nil) && len(m.NodePools) == 0 {
		// Karpenter is installed and acts on NodePools the inputs do not
		// hold (applied with kubectl, by a GitOps tool, from another repository).
		org := k.Origin
		if k.Controller != nil {
			org = k.Controller.Object.Origin
		}
		m.Unseen = append(m.Unseen, cluster.UnseenCapacity{
			What:       "the NodePools of the Karpenter the inputs install",
			Why:        "no NodePool or Provisioner is among the inputs, so they are applied from elsewhere",
			Origin:     org,
			SteadyOnly: true,
			Karpenter:  true,
			Outside:    true,
		})
	}
	if len(m.NodeGroups) > 0 || len(m.FargateProfiles) > 0 || len(m.Nodes) > 0 {
		return
	}
	if a := m.Cluster.AutoMode; a.On() {
		// EKS Auto Mode is the cluster's compute: its NodePools, built-in
		// or among the inputs, are what there is.
		group := catalog.AutoMode().NodeClass.Group
		if slices.ContainsFunc(m.NodePools, func(np *cluster.NodePool) bool { return np.NodeClassRef.Group == group }) {
			return
		}
		m.Unseen = append(m.Unseen, cluster.UnseenCapacity{
			What:      "the NodePools of EKS Auto Mode",
			Why:       "Auto Mode is on (" + a.From + "), no built-in NodePool is enabled and none of its NodePools is among the inputs, so they are applied from elsewhere",
			Origin:    a.Origin,
			Elsewhere: true,
			Outside:   true,
		})
		return
	}
	for _, u := range m.Unseen {
		if !u.SteadyOnly {
			return // a loader already said where the compute is and why it is unseen
		}
	}
	m.Unseen = append(m.Unseen, cluster.UnseenCapacity{
		What:      "the cluster's node groups",
		Why:       "these inputs declare no node group, Fargate profile or node, so the cluster's compute is defined elsewhere",
		Origin:    m.Cluster.Origin,
		Elsewhere: true,
		Outside:   true,
	})
}

// gitopsCharts says, once, which charts GitOps objects install (Argo CD
// Applications and ApplicationSets, Flux HelmReleases): eksdoctor does not
// render them, so what they create is not analysed. Manifests a GitOps tool
// applies from the repository are read as manifests.
func gitopsCharts(m *cluster.Model) {
	var charts []string
	var first cluster.Origin
	add := func(o *cluster.Object, chart any) {
		name, _ := chart.(string)
		if name == "" {
			return
		}
		if len(charts) == 0 {
			first = o.Origin
		}
		charts = append(charts, fmt.Sprintf("%s (%s)", name, o.Ref()))
	}
	for _, o := range m.Objects {
		group, _, _ := strings.Cut(o.APIVersion, "/")
		switch {
		case group == "argoproj.io" && (o.Kind == "Application" || o.Kind == "ApplicationSet"):
			spec := "spec"
			if o.Kind == "ApplicationSet" {
				spec = "spec.template.spec"
			}
			add(o, o.Get(spec+".source.chart"))
			if srcs, ok := o.Get(spec + ".sources").([]any); ok {
				for _, s := range srcs {
					if sm, ok := s.(map[string]any); ok {
						add(o, sm["chart"])
					}
				}
			}
		case group == "helm.toolkit.fluxcd.io" && o.Kind == "HelmRelease":
			add(o, o.Get("spec.chart.spec.chart"))
			add(o, o.Get("spec.chartRef.name"))
		}
	}
	if len(charts) == 0 {
		return
	}
	list := strings.Join(charts, ", ")
	if len(charts) > 10 {
		list = strings.Join(charts[:10], ", ") + fmt.Sprintf(" and %d more", len(charts)-10)
	}
	m.Problems = append(m.Problems, cluster.Problem{Origin: first, Unresolved: true,
		Message: fmt.Sprintf("%d Helm charts are installed by Argo CD or Flux objects, which eksdoctor does not render: what they create is not analysed: %s", len(charts), list)})
}
