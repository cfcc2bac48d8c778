package live

import (
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/parallel"
)

// state is what a live read produces and a snapshot stores: the objects and what
// is known about the read itself. The model is always built from a state, by the
// same code, so a snapshot gives the model the live read gave.
type state struct {
	Context string
	Server  string
	// Namespace is the namespace the read was restricted to; "" for all.
	Namespace string
	Now       string
	Skipped   []cluster.Skipped
	// Objects are the objects as the API server returned them, managedFields
	// removed, JSON-compatible values.
	Objects []map[string]any
	// pods, when set, has for each of Objects the pod a snapshot held, its
	// spec and status decoded (see pod.go), or nil.
	pods []*cluster.Pod
	// budget bounds what the model keeps of a live read; spent, when set, is
	// what a snapshot's reader already kept within it.
	budget Budget
	spent  *spending
	// lists says where the followed resources' objects are in Objects
	// (a live read only; see Follower).
	lists map[listKey]listed
}

// origin is where every object of a cluster read comes from: the context, with no
// line (there is no file to point into).
func origin(context string) cluster.Origin {
	return cluster.Origin{File: "cluster:" + context}
}

// newObject wraps one object's content, pruned to what the checks read (see prune).
func newObject(content map[string]any, org cluster.Origin) *cluster.Object {
	prune(content)
	u := unstructured.Unstructured{Object: content}
	return &cluster.Object{
		APIVersion:  u.GetAPIVersion(),
		Kind:        u.GetKind(),
		Namespace:   u.GetNamespace(),
		Name:        u.GetName(),
		Labels:      u.GetLabels(),
		Annotations: u.GetAnnotations(),
		Content:     content,
		Origin:      org,
		Via:         "live",
		Manager:     "cluster",
	}
}

// model builds the model of a state. Objects read twice (an event matching both
// event selectors) are kept once.
func (s *state) model() *cluster.Model {
	org := origin(s.Context)
	type key struct{ apiVersion, kind, namespace, name string }
	seen := map[key]bool{}
	m := &cluster.Model{}
	// Objects (and the pods a snapshot decoded) are made in parallel: a large
	// cluster has hundreds of thousands.
	objs := make([]*cluster.Object, len(s.Objects))
	pods := make([]*cluster.Pod, len(s.Objects))
	parallel.Each(len(s.Objects), func(i int) {
		o := newObject(s.Objects[i], org)
		objs[i] = o
		if i < len(s.pods) && s.pods[i] != nil {
			p := s.pods[i]
			p.Object, p.Owner = o, o.OwnerRef()
			o.ContentFunc = wholeOf(p)
			pods[i] = p
		}
	})
	podOf := map[*cluster.Object]*cluster.Pod{}
	for i, o := range objs {
		k := key{o.APIVersion, o.Kind, o.Namespace, o.Name}
		if seen[k] {
			continue
		}
		seen[k] = true
		m.Objects = append(m.Objects, o)
		if pods[i] != nil {
			podOf[o] = pods[i]
		}
	}
	sortObjects(m.Objects)
	if s.spent == nil {
		// A live read kept everything the server returned: the budget is
		// spent here, in the order a snapshot of it would be read.
		spend := newSpending(s.budget)
		m.Objects = spend.keep(m.Objects, podOf)
		m.Problems = append(m.Problems, spend.problems(org, "the cluster")...)
	}
	for _, o := range m.Objects {
		if p := podOf[o]; p != nil {
			m.Pods = append(m.Pods, p)
		}
	}

	skipped := append([]cluster.Skipped(nil), s.Skipped...)
	sort.Slice(skipped, func(i, j int) bool {
		if skipped[i].Resource != skipped[j].Resource {
			return skipped[i].Resource < skipped[j].Resource
		}
		return skipped[i].Reason < skipped[j].Reason
	})
	live := &cluster.Live{Context: s.Context, Server: s.Server, Namespace: s.Namespace, Now: s.Now, Skipped: skipped}
	for _, o := range m.Objects {
		switch group(o.APIVersion) + "/" + o.Kind {
		case "storage.k8s.io/VolumeAttachment":
			live.VolumeAttachments = append(live.VolumeAttachments, volumeAttachment(o))
		case "/PersistentVolume":
			live.PVs = append(live.PVs, o)
		case "/PersistentVolumeClaim":
			live.PVCs = append(live.PVCs, o)
		case "storage.k8s.io/CSIDriver":
			live.CSIDrivers = append(live.CSIDrivers, o.Name)
		case "/ConfigMap":
			if o.Namespace == awsAuthNamespace && o.Name == awsAuthName {
				auth, probs := awsAuth(o)
				m.Identity.AwsAuth = auth
				m.Problems = append(m.Problems, probs...)
			}
		}
	}
	sort.Strings(live.CSIDrivers)
	m.Live = live
	return m
}

// sortObjects orders objects by kind, namespace and name, then apiVersion, so
// listings and snapshots are byte-stable.
func sortObjects(objs []*cluster.Object) {
	cmp := func(a, b *cluster.Object) int {
		if c := a.Ref().Compare(b.Ref()); c != 0 {
			return c
		}
		return strings.Compare(a.APIVersion, b.APIVersion)
	}
	// A snapshot is written in this order.
	if !slices.IsSortedFunc(objs, cmp) {
		slices.SortStableFunc(objs, cmp)
	}
}

// group returns the API group of an apiVersion ("" for the core group).
func group(apiVersion string) string {
	for i := 0; i < len(apiVersion); i++ {
		if apiVersion[i] == '/' {
			return apiVersion[:i]
		}
	}
	return ""
}

func volumeAttachment(o *cluster.Object) cluster.VolumeAttachment {
	attached, _ := o.Get("status.attached").(bool)
	return cluster.VolumeAttachment{
		Object:   o,
		Name:     o.Name,
		Attacher: o.String("spec.attacher"),
		NodeName: o.String("spec.nodeName"),
		PV:       o.String("spec.source.persistentVolumeName"),
		Attached: attached,
	}
}
