package sim

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// object turns a typed object into the model's, as a loader would.
func object(t *testing.T, kind, apiVersion string, v any, annotations map[string]string) *cluster.Object {
	t.Helper()
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := content["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	content["apiVersion"], content["kind"] = apiVersion, kind
	return &cluster.Object{APIVersion: apiVersion, Kind: kind, Name: name, Namespace: ns, Annotations: annotations, Content: content, Origin: cluster.Origin{File: "v.yaml", Line: 1}}
}

func zonePV(name string, terms ...[]string) *corev1.PersistentVolume {
	pv := &corev1.PersistentVolume{}
	pv.Name = name
	pv.Spec.StorageClassName = "gp3"
	pv.Spec.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}
	pv.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	if len(terms) > 0 {
		ns := &corev1.NodeSelector{}
		for _, z := range terms {
			ns.NodeSelectorTerms = append(ns.NodeSelectorTerms, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: z}}})
		}
		pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: ns}
	}
	return pv
}

func boundClaim(name, volume string) *corev1.PersistentVolumeClaim {
	c := &corev1.PersistentVolumeClaim{}
	c.Name, c.Namespace = name, "apps"
	class := "gp3"
	c.Spec.StorageClassName = &class
	c.Spec.VolumeName = volume
	return c
}

func withClaims(w *cluster.Workload, names ...string) *cluster.Workload {
	for _, n := range names {
		w.Template.Spec.Volumes = append(w.Template.Spec.Volumes, corev1.Volume{Name: n, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: n}}})
	}
	return w
}

// A volume's node affinity terms are ORed: Karpenter tries each as an
// alternative and launches in the first a NodePool meets; with none met, it
// says the last one's words.
func TestVolumeAlternativesForNodePools(t *testing.T) {
	bound := annotationsBound()
	for _, tc := range []struct {
		name  string
		terms [][]string
		fits  bool
		words string
	}{
		{"in the pool's zones", [][]string{{"us-east-1b"}}, true, ""},
		{"outside them", [][]string{{"us-east-1a"}}, false, "incompatible volume requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [us-east-1a] not in topology.kubernetes.io/zone In [us-east-1b us-east-1c]"},
		{"a second term inside", [][]string{{"us-east-1a"}, {"us-east-1c"}}, true, ""},
		{"no term inside: the last one's words", [][]string{{"us-east-1a"}, {"us-east-1d"}}, false, "topology.kubernetes.io/zone In [us-east-1d] not in"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &cluster.Model{
				NodePools:   []*cluster.NodePool{nodePool("default", nil, nil, corev1.NodeSelectorRequirement{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"us-east-1b", "us-east-1c"}})},
				NodeClasses: []*cluster.NodeClass{defaultClass},
				Objects: []*cluster.Object{
					object(t, "PersistentVolume", "v1", zonePV("pv-1", tc.terms...), nil),
					object(t, "PersistentVolumeClaim", "v1", boundClaim("data", "pv-1"), bound),
				},
			}
			w := withClaims(deployment("db", "apps", corev1.PodSpec{Containers: []corev1.Container{container("500m", "1Gi")}}, nil), "data")
			pl := New(m).Place(w, cluster.Steady)
			v := pl.Verdicts[len(pl.Verdicts)-1]
			if (v.Result == Fits) != tc.fits {
				t.Fatalf("verdict %s, want fits=%t: %s", v.Result, tc.fits, v.Line())
			}
			if !tc.fits && !strings.Contains(v.Reasons[0].Message, tc.words) {
				t.Errorf("reason %q, want it to contain %q", v.Reasons[0].Message, tc.words)
			}
			if tc.fits {
				if free := New(m).PlaceWithoutVolumes(w, cluster.Steady); free.Result() != Fits {
					t.Errorf("without volumes: %s", free.Summary())
				}
			}
		})
	}
}

// kube-scheduler judges nodes by a volume's node affinity after every other
// filter, and counts the volume reasons of a node only when it passed them;
// a claim that does not exist rejects the pod before any node.
func TestVolumeReasonsForNodes(t *testing.T) {
	node := func(name, zone string, taint bool) *cluster.Node {
		n := &cluster.Node{Name: name, Labels: map[string]string{corev1.LabelHostname: name, corev1.LabelTopologyZone: zone},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("10")}}
		if taint {
			n.Taints = []corev1.Taint{{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}}
		}
		return n
	}
	live := func(objs ...*cluster.Object) *cluster.Model {
		return &cluster.Model{
			Nodes:   []*cluster.Node{node("a", "us-east-1a", false), node("b", "us-east-1b", false), node("c", "us-east-1b", true)},
			Objects: objs,
			Live:    &cluster.Live{},
		}
	}
	pod := func(claims ...string) *cluster.Pod {
		p := &cluster.Pod{Object: &cluster.Object{APIVersion: "v1", Kind: "Pod", Namespace: "apps", Name: "db-0"}}
		p.Spec.Containers = []corev1.Container{container("100m", "64Mi")}
		for _, c := range claims {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: c, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
		}
		return p
	}
	pv := object(t, "PersistentVolume", "v1", zonePV("pv-1", []string{"us-east-1a"}), nil)
	claim := object(t, "PersistentVolumeClaim", "v1", boundClaim("data", "pv-1"), annotationsBound())
	for _, tc := range []struct {
		name string
		m    *cluster.Model
		p    *cluster.Pod
		want string
	}{
		{"bound in zone a", live(pv, claim), pod("data"), ""},
		{"claim missing", live(pv), pod("data"), `0/3 nodes are available: persistentvolumeclaim "data" not found.`},
		{"bound, volume missing", live(claim), pod("data"), `0/3 nodes are available: persistentvolume "pv-1" not found.`},
		{"not bound for good: an Immediate claim", live(pv, object(t, "PersistentVolumeClaim", "v1", boundClaim("data", "pv-1"), nil)), pod("data"), "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := New(tc.m).PlacePod(tc.p)
			if tc.want == "" {
				if pl.Result() != Fits {
					t.Fatalf("%s", pl.NodeSummary())
				}
				return
			}
			if got := pl.NodeSummary(); got != tc.want {
				t.Errorf("summary %q\nwant    %q", got, tc.want)
			}
		})
	}
	// The volume is in zone a: node a takes the pod; a pod that also
	// selects zone b is refused by node a for its selector, by node b for
	// the volume, by node c for its taint.
	p := pod("data")
	p.Spec.NodeSelector = map[string]string{corev1.LabelTopologyZone: "us-east-1b"}
	got := New(live(pv, claim)).PlacePod(p).NodeSummary()
	want := "0/3 nodes are available: 1 node(s) didn't match PersistentVolume's node affinity, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint(s)."
	if got != want {
		t.Errorf("summary %q\nwant    %q", got, want)
	}
}

func annotationsBound() map[string]string {
	return map[string]string{"pv.kubernetes.io/bind-completed": "yes"}
}

// Two keys of a volume's node affinity the NodePool cannot meet are worded
// in key order, every time: Karpenter's own words follow Go's map order.
func TestVolumeRequirementsWordedInKeyOrder(t *testing.T) {
	pv := zonePV("pv-1", []string{"us-east-1a"})
	pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions = append(pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions,
		corev1.NodeSelectorRequirement{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}})
	m := &cluster.Model{
		NodePools: []*cluster.NodePool{nodePool("default", nil, nil,
			corev1.NodeSelectorRequirement{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{"us-east-1b"}},
			corev1.NodeSelectorRequirement{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}})},
		NodeClasses: []*cluster.NodeClass{defaultClass},
		Objects: []*cluster.Object{
			object(t, "PersistentVolume", "v1", pv, nil),
			object(t, "PersistentVolumeClaim", "v1", boundClaim("data", "pv-1"), annotationsBound()),
		},
	}
	w := withClaims(deployment("db", "apps", corev1.PodSpec{Containers: []corev1.Container{container("500m", "1Gi")}}, nil), "data")
	want := "incompatible volume requirements, key kubernetes.io/arch, kubernetes.io/arch In [arm64] not in kubernetes.io/arch In [amd64]; key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [us-east-1a] not in topology.kubernetes.io/zone In [us-east-1b]"
	for range 20 {
		pl := New(m).Place(w, cluster.Steady)
		if got := pl.Verdicts[len(pl.Verdicts)-1].Reasons[0].Message; got != want {
			t.Fatalf("reason %q\nwant   %q", got, want)
		}
	}
}
