package manifest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/parallel"
)

// Interpret turns the Kubernetes objects of m into typed model entries: workloads
// (and live pods), Karpenter NodePools, EC2NodeClasses and NodeClaims, Nodes,
// VolumeAttachments, the aws-auth mappings, and the node groups, Fargate profiles,
// add-ons and identities of eksctl ClusterConfig files. Objects that cannot be
// decoded become Problems. It is idempotent only on a fresh model: call it once,
// after all sources are merged.
func Interpret(m *cluster.Model) {
	cluster.SortObjects(m.Objects)
	live := m.Live != nil
	var pending []pendingWorkload
	decoded := make(map[*cluster.Object]bool, len(m.Workloads))
	for _, w := range m.Workloads {
		decoded[w.Object] = true
	}
	var pods map[*cluster.Object]decodedPod
	if live {
		// Pods a source decoded already (a snapshot's) take their place in
		// the objects' order with the others.
		pods = decodePods(m.Objects, decoded, m.Pods)
		m.Pods = nil
	}
	for _, o := range m.Objects {
		if decoded[o] {
			continue
		}
		switch {
		case IsClusterConfig(o):
			// Read by InterpretClusterConfigs, before Helm and add-ons expand.
		case isGroup(o, "karpenter.sh") && o.Kind == "NodePool":
			if np, err := decodeNodePool(o); err != nil {
				m.Problems = append(m.Problems, problem(o, err))
			} else {
				m.NodePools = append(m.NodePools, np)
			}
		case isGroup(o, "karpenter.sh") && o.Kind == "Provisioner":
			// Karpenter v0.31 and earlier: capacity as a NodePool is, read
			// from the v1alpha5 fields.
			if np, err := decodeProvisioner(o); err != nil {
				m.Problems = append(m.Problems, problem(o, err))
			} else {
				m.NodePools = append(m.NodePools, np)
			}
		case isGroup(o, "karpenter.k8s.aws") && (o.Kind == "EC2NodeClass" || o.Kind == "AWSNodeTemplate"):
			m.NodeClasses = append(m.NodeClasses, decodeNodeClass(o))
		case isGroup(o, "eks.amazonaws.com") && o.Kind == "NodeClass":
			m.NodeClasses = append(m.NodeClasses, decodeAutoModeNodeClass(o))
		case isGroup(o, "karpenter.sh") && o.Kind == "NodeClaim":
			m.NodeClaims = append(m.NodeClaims, decodeNodeClaim(o))
		case o.Kind == "Node" && o.APIVersion == "v1":
			if n, err := decodeNode(o); err != nil {
				m.Problems = append(m.Problems, problem(o, err))
			} else {
				m.Nodes = append(m.Nodes, n)
			}
		case o.Kind == "ConfigMap" && o.APIVersion == "v1" && o.Name == "aws-auth" && o.Namespace == "kube-system":
			if o.Manager == "cluster" && m.Identity.AwsAuth != nil {
				// The live source decoded the cluster's ConfigMap already, with
				// an origin per entry; decoding it again would list every
				// mapping twice.
				continue
			}
			interpretAwsAuth(m, o)
		case o.Kind == "VolumeAttachment" && strings.HasPrefix(o.APIVersion, "storage.k8s.io/"):
			if o.Manager == "cluster" && m.Live != nil {
				// The live source decoded the cluster's attachments already.
				continue
			}
			if m.Live == nil {
				m.Live = &cluster.Live{}
			}
			m.Live.VolumeAttachments = append(m.Live.VolumeAttachments, decodeVolumeAttachment(o))
		case o.Kind == "Pod" && live && o.Manager == "cluster":
			if r := pods[o]; r.err != nil {
				m.Problems = append(m.Problems, problem(o, r.err))
			} else {
				m.Pods = append(m.Pods, r.pod)
			}
		default:
			tp, ok := templatePath(o)
			if !ok {
				continue
			}
			if live && o.Manager == "cluster" && ownedByController(o) {
				// A ReplicaSet of a Deployment or a Job of a CronJob: its
				// owner is the workload the user knows.
				continue
			}
			pending = append(pending, pendingWorkload{o, tp})
		}
	}
	decodeWorkloads(m, pending)
	if live {
		linkPods(m)
	}
	recognize(m)
}

// InterpretClusterConfigs reads the eksctl ClusterConfigs among m's objects: node
// groups, Fargate profiles, add-ons and identities. It runs before add-ons are
// expanded into workloads, so that eksctl's add-ons get theirs too.
func InterpretClusterConfigs(m *cluster.Model) {
	cluster.SortObjects(m.Objects)
	for _, o := range m.Objects {
		if IsClusterConfig(o) {
			interpretEksctl(m, o)
		}
	}
}

// IsClusterConfig reports whether an object is an eksctl ClusterConfig.
func IsClusterConfig(o *cluster.Object) bool {
	return o.Kind == "ClusterConfig" && strings.HasPrefix(o.APIVersion, "eksctl.io/")
}

type pendingWorkload struct {
	o  *cluster.Object
	tp string
}

// decodeWorkloads decodes pod templates in parallel (the typed conversion is the
// costly part of interpreting large inputs), keeping the objects' order.
func decodeWorkloads(m *cluster.Model, pending []pendingWorkload) {
	type result struct {
		w   *cluster.Workload
		err error
	}
	results := make([]result, len(pending))
	parallel.Each(len(pending), func(i int) {
		w, err := decodeWorkload(pending[i].o, pending[i].tp)
		results[i] = result{w, err}
	})
	for i, r := range results {
		if r.err != nil {
			m.Problems = append(m.Problems, problem(pending[i].o, r.err))
			continue
		}
		m.Workloads = append(m.Workloads, r.w)
	}
	sortWorkloads(m.Workloads)
}

// sortWorkloads keeps workloads in object order whichever loader decoded them.
func sortWorkloads(ws []*cluster.Workload) {
	sort.SliceStable(ws, func(i, j int) bool {
		a, b := ws[i].Object, ws[j].Object
		if a.Ref() != b.Ref() {
			return a.Ref().Less(b.Ref())
		}
		if a.Origin.File != b.Origin.File {
			return a.Origin.File < b.Origin.File
		}
		return a.Origin.Line < b.Origin.Line
	})
}

// DecodeFileWorkloads decodes the pod templates of the workloads among objects
// read with DecodeFile, as soon as they are read, and releases their content
// (Object.Data re-reads it on demand): on large inputs, holding every pod spec
// twice until all files are read would double the memory peak. Interpret skips
// objects whose workload is already in the model.
// Objects whose pod template does not decode are left out of the objects
// returned (the problem says why), so that nothing decodes them again.
func DecodeFileWorkloads(objs []*cluster.Object) ([]*cluster.Object, []*cluster.Workload, []cluster.Problem) {
	var ws []*cluster.Workload
	var probs []cluster.Problem
	kept := objs[:0:0]
	for _, o := range objs {
		tp, ok := templatePath(o)
		if !ok || o.ContentFunc == nil {
			kept = append(kept, o)
			continue
		}
		w, err := decodeWorkload(o, tp)
		if err != nil {
			probs = append(probs, problem(o, err))
			continue
		}
		o.Content = nil
		ws = append(ws, w)
		kept = append(kept, o)
	}
	return kept, ws, probs
}

func isGroup(o *cluster.Object, group string) bool {
	return strings.HasPrefix(o.APIVersion, group+"/")
}

func problem(o *cluster.Object, err error) cluster.Problem {
	var uv *UnknownValuesError
	return cluster.Problem{Origin: o.Origin, Object: o.Ref(), Message: err.Error(), Unresolved: errors.As(err, &uv)}
}

// templatePath returns where the pod template of a workload kind lives.
func templatePath(o *cluster.Object) (string, bool) {
	switch o.Kind {
	case "Pod":
		return "", o.APIVersion == "v1"
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet":
		return "spec.template", strings.HasPrefix(o.APIVersion, "apps/") || strings.HasPrefix(o.APIVersion, "extensions/")
	case "ReplicationController":
		return "spec.template", o.APIVersion == "v1"
	case "Job":
		return "spec.template", strings.HasPrefix(o.APIVersion, "batch/")
	case "CronJob":
		return "spec.jobTemplate.spec.template", strings.HasPrefix(o.APIVersion, "batch/")
	}
	return "", false
}

func ownedByController(o *cluster.Object) bool {
	_, ok := o.Controller()
	return ok
}

func decodeWorkload(o *cluster.Object, tp string) (*cluster.Workload, error) {
	w := &cluster.Workload{Object: o, TemplatePath: tp, Replicas: 1}
	if o.Kind == "StatefulSet" {
		w.KeepClaimTemplates()
	}
	if tp == "" {
		// A bare Pod: its metadata and spec are the template.
		spec, ok := schedulingSpec(o.Content["spec"]).(map[string]any)
		if !ok && o.Content["spec"] != nil {
			return nil, fmt.Errorf("cannot decode pod spec: expected an object, found %s", describe(o.Content["spec"]))
		}
		if err := decodePodSpec(spec, &w.Template.Spec); err != nil {
			if err = retryWithoutUnknowns(o, "spec", spec, err, func(v map[string]any) error {
				w.Template.Spec = corev1.PodSpec{}
				return decodePodSpec(v, &w.Template.Spec)
			}); err != nil {
				return nil, fmt.Errorf("cannot decode pod spec: %w", err)
			}
		}
		w.Template.ObjectMeta.Labels = o.Labels
		w.Template.ObjectMeta.Annotations = o.Annotations
	} else {
		tmpl, _ := o.Get(tp).(map[string]any)
		if tmpl == nil {
			return nil, fmt.Errorf("%s has no %s", o.Kind, tp)
		}
		view := schedulingView(tmpl)
		if err := decodeTemplate(view, &w.Template); err != nil {
			if err = retryWithoutUnknowns(o, tp, view, err, func(v map[string]any) error {
				w.Template = corev1.PodTemplateSpec{}
				return decodeTemplate(v, &w.Template)
			}); err != nil {
				return nil, fmt.Errorf("cannot decode pod template at %s: %w", tp, err)
			}
		}
	}
	if ns := o.Namespace; ns != "" {
		w.Template.Namespace = ns
	} else if w.Template.Namespace == "" {
		w.Template.Namespace = "default"
	}
	switch o.Kind {
	case "Deployment", "StatefulSet", "ReplicaSet", "ReplicationController":
		if r, ok := o.Get("spec.replicas").(int64); ok {
			w.Replicas = int32(r)
		}
	case "Job":
		if r, ok := o.Get("spec.parallelism").(int64); ok {
			w.Replicas = int32(r)
		}
	case "DaemonSet":
		w.Replicas = -1
	}
	return w, nil
}

// UnknownValuesError is a pod template that does not decode because it holds
// values not known before apply (a list, number or quantity written as a
// Terraform variable): not invalid input, but what cannot be read yet.
type UnknownValuesError struct{ Err error }

func (e *UnknownValuesError) Error() string {
	return e.Err.Error() + "; it holds values not known before apply, which may be right once they are known"
}

func (e *UnknownValuesError) Unwrap() error { return e.Err }

// retryWithoutUnknowns decodes a pod template again without the values not
// known before apply that stopped it (a placeholder where a list, number or
// quantity belongs), and marks the object: what it says about scheduling may
// differ once they are known. It returns the error when that does not help.
func retryWithoutUnknowns(o *cluster.Object, path string, v map[string]any, err error, decode func(map[string]any) error) error {
	if !holdsUnknown(v) {
		return err
	}
	stripped, fields := withoutUnknowns(v, path)
	if decode(stripped.(map[string]any)) != nil {
		return &UnknownValuesError{Err: err}
	}
	if o.Unknown == "" {
		if len(fields) > 3 {
			fields = append(fields[:3], "...")
		}
		o.Unknown = "the values of its pod template not known before apply (" + strings.Join(fields, ", ") + ")"
	}
	return nil
}

// withoutUnknowns copies a value without the map entries and list items that
// hold a value not known before apply, and lists their paths.
func withoutUnknowns(v any, path string) (any, []string) {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		var fields []string
		for _, k := range slices.Sorted(maps.Keys(t)) {
			x := t[k]
			if s, ok := x.(string); ok && cluster.IsUnknown(s) || cluster.IsUnknown(k) {
				fields = append(fields, path+"."+k)
				continue
			}
			y, f := withoutUnknowns(x, path+"."+k)
			out[k], fields = y, append(fields, f...)
		}
		return out, fields
	case []any:
		out := make([]any, 0, len(t))
		var fields []string
		for i, x := range t {
			if s, ok := x.(string); ok && cluster.IsUnknown(s) {
				fields = append(fields, path+"."+strconv.Itoa(i))
				continue
			}
			y, f := withoutUnknowns(x, path+"."+strconv.Itoa(i))
			out, fields = append(out, y), append(fields, f...)
		}
		return out, fields
	}
	return v, nil
}

// fromUnstructured decodes JSON-like content into a typed API struct, turning a
// panic of the converter on hostile input into an error.
func fromUnstructured(v any, into any) (err error) {
	m, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return nil
		}
		return fmt.Errorf("expected an object, found %s", describe(v))
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed object: %v", r)
		}
	}()
	return k8sruntime.DefaultUnstructuredConverter.FromUnstructured(m, into)
}

type decodedPod struct {
	pod *cluster.Pod
	err error
}

// decodePods decodes a running cluster's pods, in parallel: they are most of
// a large cluster's objects.
func decodePods(objs []*cluster.Object, skip map[*cluster.Object]bool, done []*cluster.Pod) map[*cluster.Object]decodedPod {
	m := make(map[*cluster.Object]decodedPod, len(objs))
	for _, p := range done {
		m[p.Object] = decodedPod{pod: p}
	}
	var list []*cluster.Object
	for _, o := range objs {
		if _, ok := m[o]; !ok && o.Kind == "Pod" && o.Manager == "cluster" && !skip[o] {
			list = append(list, o)
		}
	}
	out := make([]decodedPod, len(list))
	parallel.Each(len(list), func(i int) {
		out[i].pod, out[i].err = decodePod(list[i])
	})
	for i, o := range list {
		m[o] = out[i]
	}
	return m
}

func decodePod(o *cluster.Object) (*cluster.Pod, error) {
	p := &cluster.Pod{Object: o}
	if err := fromUnstructured(o.Content["spec"], &p.Spec); err != nil {
		return nil, fmt.Errorf("cannot decode pod spec: %w", err)
	}
	if err := fromUnstructured(o.Content["status"], &p.Status); err != nil {
		return nil, fmt.Errorf("cannot decode pod status: %w", err)
	}
	p.Owner = o.OwnerRef()
	if o.Manager == "cluster" {
		// A running cluster's pod is read from its decoded spec and status from
		// now on, and never patched or rewritten: a large cluster's pods are
		// half its objects, so their generic form keeps only what objects are
		// read by (kind, metadata).
		o.Content = map[string]any{"apiVersion": o.Content["apiVersion"], "kind": o.Content["kind"], "metadata": o.Content["metadata"]}
	}
	return p, nil
}

// linkPods attaches live pods to their workloads (a ReplicaSet's pod to its
// Deployment) and their FailedScheduling events.
func linkPods(m *cluster.Model) {
	owners := map[cluster.ObjectRef]cluster.ObjectRef{}
	for _, o := range m.Objects {
		if (o.Kind == "ReplicaSet" || o.Kind == "Job") && o.Manager == "cluster" {
			if ref, ok := o.Controller(); ok {
				owners[o.Ref()] = ref
			}
		}
	}
	workloads := map[cluster.ObjectRef]*cluster.Workload{}
	for _, w := range m.Workloads {
		workloads[w.Ref()] = w
	}
	events := map[cluster.ObjectRef][]cluster.Event{}
	for _, o := range m.Objects {
		if o.Kind != "Event" {
			continue
		}
		kind, _ := o.Get("involvedObject.kind").(string)
		name, _ := o.Get("involvedObject.name").(string)
		ns, _ := o.Get("involvedObject.namespace").(string)
		reason, _ := o.Get("reason").(string)
		msg, _ := o.Get("message").(string)
		src, _ := o.Get("source.component").(string)
		if src == "" {
			src, _ = o.Get("reportingComponent").(string)
		}
		cnt, _ := o.Get("count").(int64)
		last, _ := o.Get("lastTimestamp").(string)
		if last == "" {
			last, _ = o.Get("eventTime").(string)
		}
		ref := cluster.ObjectRef{Kind: kind, Namespace: ns, Name: name}
		events[ref] = append(events[ref], cluster.Event{Reason: reason, Message: msg, Source: src, Count: int32(cnt), Last: last})
	}
	for _, evs := range events {
		// Newest last: a list gives events by name, and an event seen
		// again keeps its name.
		sort.SliceStable(evs, func(i, j int) bool { return eventTime(evs[i].Last).Before(eventTime(evs[j].Last)) })
	}
	for _, p := range m.Pods {
		if o, ok := owners[p.Owner]; ok {
			p.Owner = o
		}
		p.Workload = workloads[p.Owner]
		p.Events = events[p.Object.Ref()]
	}
}

// eventTime parses an event's time; the zero time when it has none, so that
// events without one keep their order before the others.
func eventTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t, _ = time.Parse(time.RFC3339Nano, s)
	}
	return t
}

func decodeTaints(v any) ([]corev1.Taint, error) {
	l, ok := v.([]any)
	if !ok || len(l) == 0 {
		return nil, nil
	}
	var out []corev1.Taint
	for i, it := range l {
		var t corev1.Taint
		if err := fromUnstructured(it, &t); err != nil {
			return nil, fmt.Errorf("taint %d: %w", i, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// poolFields are where a NodePool (v1, v1beta1) and a v1alpha5 Provisioner keep
// what makes them capacity.
type poolFields struct {
	labels, taints, startupTaints, requirements, limits, nodeClassRef string
}

var (
	nodePoolFields = poolFields{
		labels: "spec.template.metadata.labels", taints: "spec.template.spec.taints", startupTaints: "spec.template.spec.startupTaints",
		requirements: "spec.template.spec.requirements", limits: "spec.limits", nodeClassRef: "spec.template.spec.nodeClassRef",
	}
	provisionerFields = poolFields{
		labels: "spec.labels", taints: "spec.taints", startupTaints: "spec.startupTaints",
		requirements: "spec.requirements", limits: "spec.limits.resources", nodeClassRef: "spec.providerRef",
	}
)

func decodeNodePool(o *cluster.Object) (*cluster.NodePool, error) {
	return decodePool(o, nodePoolFields)
}

// decodeProvisioner reads a v1alpha5 Provisioner as the capacity it is: its
// node class is the AWSNodeTemplate of spec.providerRef, or the settings of
// spec.provider written inline.
func decodeProvisioner(o *cluster.Object) (*cluster.NodePool, error) {
	np, err := decodePool(o, provisionerFields)
	if err != nil {
		return nil, err
	}
	switch {
	case np.NodeClassRef.Name != "":
		np.NodeClassRef.Group = "karpenter.k8s.aws"
		if np.NodeClassRef.Kind == "" {
			np.NodeClassRef.Kind = "AWSNodeTemplate"
		}
	case o.Get("spec.provider") != nil:
		np.InlineNodeClass = true
	}
	return np, nil
}

func decodePool(o *cluster.Object, f poolFields) (*cluster.NodePool, error) {
	np := &cluster.NodePool{Object: o, Name: o.Name, APIVersion: o.APIVersion}
	unknown := func(field string) {
		if !slices.Contains(np.Unknown, field) {
			np.Unknown = append(np.Unknown, field)
		}
	}
	// Values not known before apply (a Terraform template) leave the field
	// unknown rather than invalid.
	labels := o.Get(f.labels)
	np.Labels = stringMap(labels)
	if holdsUnknown(labels) {
		unknown("labels")
	}
	var err error
	for _, f := range []struct {
		path string
		dst  *[]corev1.Taint
	}{{f.taints, &np.Taints}, {f.startupTaints, &np.StartupTaints}} {
		v := o.Get(f.path)
		if holdsUnknown(v) {
			unknown("taints")
			continue
		}
		if *f.dst, err = decodeTaints(v); err != nil {
			return nil, fmt.Errorf("%s: %w", f.path, err)
		}
	}
	rv := o.Get(f.requirements)
	if s, ok := rv.(string); ok && cluster.IsUnknown(s) {
		unknown("requirements")
	}
	reqs, _ := rv.([]any)
	for i, r := range reqs {
		rm, ok := r.(map[string]any)
		if !ok {
			if s, isString := r.(string); isString && cluster.IsUnknown(s) {
				unknown("requirements")
				continue
			}
			return nil, fmt.Errorf("%s.%d is not an object", f.requirements, i)
		}
		if holdsUnknown(rm) {
			unknown("requirements")
			continue
		}
		var req cluster.NodeSelectorRequirement
		if err := fromUnstructured(rm, &req.NodeSelectorRequirement); err != nil {
			return nil, fmt.Errorf("%s.%d: %w", f.requirements, i, err)
		}
		if mv, ok := rm["minValues"].(int64); ok {
			n := int(mv)
			req.MinValues = &n
		}
		np.Requirements = append(np.Requirements, req)
	}
	if np.Limits, err = quantities(o, f.limits); err != nil {
		return nil, err
	}
	if np.InUse, err = quantities(o, "status.resources"); err != nil {
		return nil, err
	}
	np.Conditions = decodeConditions(o.Get("status.conditions"))
	ref := f.nodeClassRef
	np.NodeClassRef = cluster.NodeClassRef{Group: o.String(ref + ".group"), Kind: o.String(ref + ".kind"), Name: o.String(ref + ".name")}
	if np.NodeClassRef.Kind == "" && strings.HasSuffix(o.APIVersion, "/v1beta1") {
		// v1beta1 defaulted the kind to the provider's node class.
		np.NodeClassRef.Kind = "EC2NodeClass"
	}
	if w, ok := o.Get("spec.weight").(int64); ok {
		np.Weight = int32(w)
	}
	return np, nil
}

// holdsUnknown reports whether a value holds a value not known before apply.
func holdsUnknown(v any) bool {
	switch t := v.(type) {
	case string:
		return cluster.IsUnknown(t)
	case []any:
		for _, x := range t {
			if holdsUnknown(x) {
				return true
			}
		}
	case map[string]any:
		for k, x := range t {
			if cluster.IsUnknown(k) || holdsUnknown(x) {
				return true
			}
		}
	}
	return false
}

// quantities reads a map of resource quantities at a path (a NodePool's
// limits, its status.resources); nil when the path holds no map.
func quantities(o *cluster.Object, path string) (corev1.ResourceList, error) {
	m, ok := o.Get(path).(map[string]any)
	if !ok {
		return nil, nil
	}
	out := corev1.ResourceList{}
	for k, v := range m {
		q, err := quantity(v)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", path, k, err)
		}
		out[corev1.ResourceName(k)] = q
	}
	return out, nil
}

func quantity(v any) (resource.Quantity, error) {
	switch t := v.(type) {
	case string:
		return resource.ParseQuantity(t)
	case int64:
		return *resource.NewQuantity(t, resource.DecimalSI), nil
	case float64:
		return resource.ParseQuantity(fmt.Sprint(t))
	}
	return resource.Quantity{}, fmt.Errorf("not a quantity: %s", describe(v))
}

func decodeNodeClass(o *cluster.Object) *cluster.NodeClass {
	nc := &cluster.NodeClass{
		Object: o, Name: o.Name, APIVersion: o.APIVersion,
		Role:            o.String("spec.role"),
		InstanceProfile: o.String("spec.instanceProfile"),
		AMIFamily:       o.String("spec.amiFamily"),
	}
	terms, _ := o.Get("spec.amiSelectorTerms").([]any)
	for _, t := range terms {
		if tm, ok := t.(map[string]any); ok {
			nc.AMISelectorTerms = append(nc.AMISelectorTerms, tm)
		}
	}
	nc.InstanceStoreRAID0 = o.String("spec.instanceStorePolicy") == "RAID0"
	nc.Conditions = decodeConditions(o.Get("status.conditions"))
	nc.DiskBytes = nodeClassDisk(o, nc)
	return nc
}

// decodeAutoModeNodeClass reads an EKS Auto Mode NodeClass: its node role,
// and the size of the nodes' ephemeral storage (spec.ephemeralStorage.size,
// 80Gi by default).
func decodeAutoModeNodeClass(o *cluster.Object) *cluster.NodeClass {
	nc := &cluster.NodeClass{Object: o, Name: o.Name, APIVersion: o.APIVersion, Role: o.String("spec.role"), DiskBytes: 80 << 30}
	if v := o.Get("spec.ephemeralStorage.size"); v != nil {
		if q, err := quantity(v); err == nil {
			nc.DiskBytes = q.Value()
		} else {
			nc.DiskBytes = -1
		}
	}
	return nc
}

// nodeClassDisk is the size of the volume Karpenter gives the nodes' ephemeral
// storage, as its instance types compute it: the blockDeviceMappings entry
// marked rootVolume, else (for a Custom AMI family) the last entry, else the
// entry of the AMI family's ephemeral device (/dev/xvda; Bottlerocket's data
// volume /dev/xvdb; Windows /dev/sda1); without one, the default (0).
func nodeClassDisk(o *cluster.Object, nc *cluster.NodeClass) int64 {
	bdms, _ := o.Get("spec.blockDeviceMappings").([]any)
	if len(bdms) == 0 {
		if cluster.IsUnknown(fmt.Sprint(o.Get("spec.blockDeviceMappings"))) {
			return -1
		}
		return 0
	}
	size := func(m map[string]any) int64 {
		ebs, _ := m["ebs"].(map[string]any)
		v, ok := ebs["volumeSize"]
		if !ok {
			return 0
		}
		q, err := quantity(v)
		if err != nil {
			return -1 // not known before apply, or not a size
		}
		return q.Value()
	}
	var entries []map[string]any
	for _, b := range bdms {
		if m, ok := b.(map[string]any); ok {
			entries = append(entries, m)
		}
	}
	for _, m := range entries {
		if m["rootVolume"] == true {
			return size(m)
		}
	}
	family := strings.ToLower(nc.AMIFamily)
	for _, t := range nc.AMISelectorTerms {
		if a, ok := t["alias"].(string); ok {
			family, _, _ = strings.Cut(strings.ToLower(a), "@")
		}
	}
	device := "/dev/xvda"
	switch {
	case family == "custom" && len(entries) > 0:
		return size(entries[len(entries)-1])
	case strings.HasPrefix(family, "bottlerocket"):
		device = "/dev/xvdb"
	case strings.HasPrefix(family, "windows"):
		device = "/dev/sda1"
	}
	for _, m := range entries {
		if m["deviceName"] == device {
			return size(m)
		}
	}
	return 0
}

func decodeConditions(v any) []cluster.Condition {
	l, _ := v.([]any)
	var out []cluster.Condition
	for _, it := range l {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		c := cluster.Condition{}
		c.Type, _ = m["type"].(string)
		c.Status, _ = m["status"].(string)
		c.Reason, _ = m["reason"].(string)
		c.Message, _ = m["message"].(string)
		c.LastTransitionTime, _ = m["lastTransitionTime"].(string)
		out = append(out, c)
	}
	return out
}

func stringList(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, it := range l {
		if s, ok := it.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func decodeNodeClaim(o *cluster.Object) *cluster.NodeClaim {
	ref := "spec.nodeClassRef"
	return &cluster.NodeClaim{
		Object:       o,
		Name:         o.Name,
		NodePool:     o.Labels["karpenter.sh/nodepool"],
		NodeClassRef: cluster.NodeClassRef{Group: o.String(ref + ".group"), Kind: o.String(ref + ".kind"), Name: o.String(ref + ".name")},
		ProviderID:   o.String("status.providerID"),
		NodeName:     o.String("status.nodeName"),
		Conditions:   decodeConditions(o.Get("status.conditions")),
		Finalizers:   stringList(o.Get("metadata.finalizers")),
		Deleting:     o.String("metadata.deletionTimestamp") != "",
	}
}

func decodeNode(o *cluster.Object) (*cluster.Node, error) {
	n := &cluster.Node{
		Object:     o,
		Name:       o.Name,
		Labels:     o.Labels,
		ProviderID: o.String("spec.providerID"),
		Finalizers: stringList(o.Get("metadata.finalizers")),
		Deleting:   o.String("metadata.deletionTimestamp") != "",
	}
	n.Unschedulable, _ = o.Get("spec.unschedulable").(bool)
	var err error
	if n.Taints, err = decodeTaints(o.Get("spec.taints")); err != nil {
		return nil, fmt.Errorf("spec.taints: %w", err)
	}
	if alloc, ok := o.Get("status.allocatable").(map[string]any); ok {
		n.Allocatable = corev1.ResourceList{}
		for k, v := range alloc {
			q, err := quantity(v)
			if err != nil {
				return nil, fmt.Errorf("status.allocatable.%s: %w", k, err)
			}
			n.Allocatable[corev1.ResourceName(k)] = q
		}
	}
	for _, c := range decodeConditions(o.Get("status.conditions")) {
		if c.Type == "Ready" {
			n.Ready = c.Status == "True"
		}
	}
	return n, nil
}

func decodeVolumeAttachment(o *cluster.Object) cluster.VolumeAttachment {
	va := cluster.VolumeAttachment{
		Object:   o,
		Name:     o.Name,
		Attacher: o.String("spec.attacher"),
		NodeName: o.String("spec.nodeName"),
		PV:       o.String("spec.source.persistentVolumeName"),
	}
	va.Attached, _ = o.Get("status.attached").(bool)
	return va
}

// interpretAwsAuth reads mapRoles of the aws-auth ConfigMap.
func interpretAwsAuth(m *cluster.Model, o *cluster.Object) {
	auth := &cluster.AwsAuth{Complete: true, Managed: "user", Origin: o.Origin, Address: o.Via}
	if o.Manager == "cluster" {
		auth.Managed = "cluster"
	}
	if raw, ok := o.Get("data.mapRoles").(string); ok {
		roles, err := ParseMapRoles(raw, o.At("data.mapRoles"))
		if err != nil {
			m.Problems = append(m.Problems, problem(o, fmt.Errorf("data.mapRoles: %w", err)))
			auth.Complete = false
		}
		auth.Roles = roles
	}
	if m.Identity.AwsAuth == nil {
		m.Identity.AwsAuth = auth
	} else {
		m.Identity.AwsAuth.Roles = append(m.Identity.AwsAuth.Roles, auth.Roles...)
	}
}

// ParseMapRoles decodes the mapRoles YAML of aws-auth.
func ParseMapRoles(raw string, at cluster.Origin) ([]cluster.RoleMapping, error) {
	if cluster.IsUnknown(raw) && strings.HasPrefix(strings.TrimSpace(raw), "${") {
		return nil, fmt.Errorf("mapRoles is not known before apply")
	}
	objs, probs := decodeValue([]byte(raw))
	if probs != nil {
		return nil, probs
	}
	l, ok := objs.([]any)
	if !ok {
		if objs == nil {
			return nil, nil
		}
		return nil, fmt.Errorf("mapRoles must be a list, found %s", describe(objs))
	}
	var out []cluster.RoleMapping
	for i, it := range l {
		e, ok := it.(map[string]any)
		if !ok {
			return out, fmt.Errorf("mapRoles entry %d is not an object", i)
		}
		rm := cluster.RoleMapping{Origin: at}
		rm.RoleARN, _ = e["rolearn"].(string)
		rm.Username, _ = e["username"].(string)
		rm.Groups = stringList(e["groups"])
		out = append(out, rm)
	}
	return out, nil
}

// decodeValue parses one YAML value (not necessarily an object).
func decodeValue(data []byte) (any, error) {
	docs := splitDocuments(data)
	for _, d := range docs {
		if isBlank(d.text) {
			continue
		}
		return parseYAMLValue(d.text)
	}
	return nil, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// containerFields are the container fields placement and the checks read; the
// rest (probes, working directory, terminal settings) is left out of the typed
// template, which makes decoding large inputs cheaper.
var containerFields = []string{"name", "image", "command", "args", "env", "envFrom", "resources", "ports", "securityContext", "lifecycle", "volumeMounts", "restartPolicy"}

// envPrefixes are the environment variables the checks read (the cluster name
// and region the Karpenter controller needs without IMDS, and AWS credentials
// settings); other variables are left out of the typed template.
var envPrefixes = []string{"AWS_", "CLUSTER_", "KARPENTER_"}

// podSpecSkipped are pod spec fields no check reads: skipping them keeps the
// decoding of large inputs cheap.
var podSpecSkipped = map[string]bool{
	"topologySpreadConstraints": true, "readinessGates": true, "dnsConfig": true,
	"hostAliases": true, "imagePullSecrets": true, "terminationGracePeriodSeconds": true,
	"securityContext": true,
}

// schedulingView returns a pod template reduced to what eksdoctor reads.
func schedulingView(tmpl map[string]any) map[string]any {
	out := make(map[string]any, len(tmpl))
	for k, v := range tmpl {
		if k == "spec" {
			out[k] = schedulingSpec(v)
			continue
		}
		out[k] = v
	}
	return out
}

func schedulingSpec(v any) any {
	spec, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(spec))
	for k, v := range spec {
		switch {
		case podSpecSkipped[k]:
		case k == "containers" || k == "initContainers" || k == "ephemeralContainers":
			out[k] = reduceContainers(v)
		case k == "affinity":
			out[k] = nodeAffinityOnly(v)
		default:
			out[k] = v
		}
	}
	return out
}

// nodeAffinityOnly keeps node affinity: pod (anti-)affinity is about other pods,
// which placement does not model.
func nodeAffinityOnly(v any) any {
	a, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if na, ok := a["nodeAffinity"]; ok {
		return map[string]any{"nodeAffinity": na}
	}
	return map[string]any{}
}

func reduceEnv(v any) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	var out []any
	for _, e := range list {
		em, ok := e.(map[string]any)
		if !ok {
			out = append(out, e)
			continue
		}
		name, _ := em["name"].(string)
		for _, p := range envPrefixes {
			if strings.HasPrefix(name, p) {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

func reduceContainers(v any) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, len(list))
	for i, c := range list {
		cm, ok := c.(map[string]any)
		if !ok {
			out[i] = c
			continue
		}
		r := make(map[string]any, len(containerFields))
		for _, f := range containerFields {
			if x, ok := cm[f]; ok {
				if f == "env" {
					x = reduceEnv(x)
				}
				r[f] = x
			}
		}
		out[i] = r
	}
	return out
}
