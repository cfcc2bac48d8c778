package lint

import (
	"fmt"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// live-resource-skipped: what the live read could not see, and which checks that leaves blind.

var liveResourceSkipped = &Check{
	ID:       "live-resource-skipped",
	Title:    "Cluster resource could not be read",
	Family:   "input",
	Severity: Info,
	Live:     true,
	Doc: Doc{
		What: "eksdoctor could not read a resource of the cluster: the credentials may not list it (Forbidden), the API server does not serve it (the Karpenter CRDs are not installed, or only another API version is), or the server kept failing on it. The finding says which checks it leaves incomplete; everything else was read and analysed.",
		Why:  "What eksdoctor cannot read it cannot judge: without pods there is no Pending pod to explain, without Deployments the Karpenter controller's state is unknown. A report without this note would look cleaner than the cluster is.",
		Fix:  "Bind the credentials to the read-only roles of deploy/rbac.yaml (they grant exactly what eksdoctor reads, and no Secrets), or run with credentials that may list the resource. Nothing is needed when the resource is simply not installed.",
	},
	Run: runLiveResourceSkipped,
}

// skippedImpact says what a resource that could not be read leaves out.
var skippedImpact = map[string]string{
	"pods":                                   "Pending pods (pod-unschedulable, bootstrap-deadlock), the Karpenter controller's pods, drains and the users of volumes are not analysed",
	"nodes":                                  "placement on the existing nodes, drains and attachments to nodes that are gone are not analysed",
	"events":                                 "the scheduler's and Karpenter's own messages are not quoted",
	"persistentvolumes":                      "volumes are not tied to their claims and EBS volume IDs",
	"persistentvolumeclaims":                 "the CSI driver of pods' volumes is not known",
	"deployments.apps":                       "the Karpenter controller cannot be found, so finalizer-stuck is not verified",
	"daemonsets.apps":                        "node-critical DaemonSets (CSI node plugins, CNI agents) are not checked",
	"volumeattachments.storage.k8s.io":       "volumes left attached (volumeattachment-stale) are not checked",
	"nodepools.karpenter.sh":                 "Karpenter capacity is not considered for Pending pods",
	"nodeclaims.karpenter.sh":                "NodeClaims that never registered and stuck finalizers on NodeClaims are not checked",
	"ec2nodeclasses.karpenter.k8s.aws":       "node roles (nodeclaim-not-registered, node-role-unauthorized) are not checked",
	"nodeclasses.eks.amazonaws.com":          "EKS Auto Mode's node classes (their node roles and storage) are not checked",
	"storageclasses.storage.k8s.io":          "the provisioners of StorageClasses (storage-provisioner-missing) are not checked",
	"configmaps kube-system/aws-auth":        "the node role mappings of aws-auth are not checked",
	"priorityclasses.scheduling.k8s.io":      "eviction order by priority is approximate",
	"poddisruptionbudgets.policy":            "PodDisruptionBudgets that block every eviction (disruption-blocked) are not checked",
	"csidrivers.storage.k8s.io":              "the CSI drivers of the cluster are not listed",
	"replicasets.apps":                       "pods of Deployments are grouped by ReplicaSet rather than by Deployment",
	"jobs.batch":                             "pods of CronJobs are grouped by Job rather than by CronJob",
	"statefulsets.apps":                      "StatefulSets are not checked",
	"cronjobs.batch":                         "CronJobs are not checked",
	"events (reason=FailedAttachVolume)":     "Multi-Attach errors are not quoted",
	"events (reason=FailedScheduling)":       "the scheduler's FailedScheduling messages are not quoted",
	"events (involvedObject.kind=NodeClaim)": "Karpenter's events about NodeClaims are not quoted",
	"events (reason=Nominated)":              "the pods Karpenter nominated to a NodeClaim are not named",
}

func runLiveResourceSkipped(p *Pass) {
	m := p.Model
	if m.Live == nil {
		return
	}
	for _, s := range m.Live.Skipped {
		impact := skippedImpact[s.Resource]
		if impact == "" {
			base, _, _ := strings.Cut(s.Resource, "/")
			base, _, _ = strings.Cut(base, " (")
			impact = skippedImpact[base]
		}
		detail := "What could be read was analysed."
		if impact != "" {
			detail = "Consequence: " + impact + ". " + detail
		}
		var fix *Fix
		if strings.HasPrefix(s.Reason, "forbidden") {
			fix = &Fix{
				Summary: "grant the read-only roles of deploy/rbac.yaml to the credentials eksdoctor uses",
				Edits:   []Edit{{Format: FormatShell, Text: "kubectl apply -f deploy/rbac.yaml  # then bind eksdoctor-reader and eksdoctor-aws-auth-reader to your user or group"}},
			}
		}
		p.Report(Finding{
			Object:  cluster.ObjectRef{Kind: "Resource", Name: s.Resource},
			Origin:  cluster.Origin{File: "cluster:" + m.Live.Context},
			Summary: fmt.Sprintf("could not read %s: %s", s.Resource, s.Reason),
			Detail:  detail,
			Fix:     fix,
		})
	}
}
