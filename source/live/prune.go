package live

import (
	"github.com/eksdoctor/eksdoctor/cluster"
)

// A live read keeps only what the checks read, so that neither the model nor a
// snapshot written from it holds what a cluster's objects carry besides: container
// commands, arguments and environment values (often credentials), the user data of
// EC2NodeClasses, and annotations (kubectl's last-applied-configuration copies whole
// objects, secrets included). The same pruning applies to an object read from an
// older snapshot, so a snapshot and the cluster it came from give the same model.
//
// What is kept, exactly:
//   - annotations: only those checks read (cluster.CheckedAnnotation),
//     on objects and on pod templates;
//   - in every container of a pod spec (containers, initContainers,
//     ephemeralContainers): everything but command and args, which are removed
//     but for the flags checks read (cluster.CheckedFlags: --cluster-name),
//     kept bare; env entries
//     keep their name, and only CLUSTER_NAME keeps its value (the cluster's name,
//     which the snapshot's context already shows); valueFrom references are kept
//     (they name a source, not a value);
//   - EC2NodeClass: spec.userData is removed;
//   - ConfigMap (only kube-system/aws-auth is read): data keeps mapRoles, mapUsers
//     and mapAccounts.

// prune removes from an object's content what no check reads.
func prune(content map[string]any) {
	delete(metadata(content), "managedFields")
	pruneAnnotations(metadata(content))
	kind, _ := content["kind"].(string)
	spec, _ := content["spec"].(map[string]any)
	switch kind {
	case "Pod":
		prunePodSpec(spec)
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "ReplicationController":
		pruneTemplate(spec)
	case "CronJob":
		if jt, ok := spec["jobTemplate"].(map[string]any); ok {
			pruneAnnotations(metadata(jt))
			js, _ := jt["spec"].(map[string]any)
			pruneTemplate(js)
		}
	case "EC2NodeClass":
		delete(spec, "userData")
	case "ConfigMap":
		// Only aws-auth is read; of it, the mappings.
		data, _ := content["data"].(map[string]any)
		for k := range data {
			if k != "mapRoles" && k != "mapUsers" && k != "mapAccounts" {
				delete(data, k)
			}
		}
		delete(content, "binaryData")
	}
}

func metadata(m map[string]any) map[string]any {
	md, _ := m["metadata"].(map[string]any)
	return md
}

func pruneTemplate(spec map[string]any) {
	t, ok := spec["template"].(map[string]any)
	if !ok {
		return
	}
	pruneAnnotations(metadata(t))
	ps, _ := t["spec"].(map[string]any)
	prunePodSpec(ps)
}

func pruneAnnotations(md map[string]any) {
	ann, ok := md["annotations"].(map[string]any)
	if !ok {
		return
	}
	for k := range ann {
		if !cluster.CheckedAnnotation(k) {
			delete(ann, k)
		}
	}
	if len(ann) == 0 {
		delete(md, "annotations")
	}
}

func prunePodSpec(ps map[string]any) {
	for _, f := range []string{"containers", "initContainers", "ephemeralContainers"} {
		list, _ := ps[f].([]any)
		for _, c := range list {
			if cm, ok := c.(map[string]any); ok {
				pruneContainer(cm)
			}
		}
	}
}

func pruneContainer(c map[string]any) {
	for _, field := range []string{"command", "args"} {
		list, ok := c[field].([]any)
		if !ok {
			delete(c, field)
			continue
		}
		var kept []any
		for _, a := range list {
			s, _ := a.(string)
			if f, ok := cluster.CheckedFlag(s); ok {
				kept = append(kept, f)
			}
		}
		if len(kept) > 0 {
			c[field] = kept
		} else {
			delete(c, field)
		}
	}
	env, ok := c["env"].([]any)
	if !ok {
		return
	}
	for _, e := range env {
		em, ok := e.(map[string]any)
		if !ok {
			continue
		}
		name, _ := em["name"].(string)
		if !cluster.CheckedEnv(name) {
			delete(em, "value")
		}
	}
}
