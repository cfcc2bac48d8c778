package karpenter

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakecr "sigs.k8s.io/controller-runtime/pkg/client/fake"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/cloudprovider/fake"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/injection"
	"sigs.k8s.io/karpenter/pkg/operator/options"
	kscheduling "sigs.k8s.io/karpenter/pkg/scheduling"
	"sigs.k8s.io/karpenter/pkg/test"
	"sigs.k8s.io/karpenter/pkg/utils/daemonset"
	nodepoolutils "sigs.k8s.io/karpenter/pkg/utils/nodepool"
	"sigs.k8s.io/yaml"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/differential"
	"github.com/eksdoctor/eksdoctor/sim"
	"github.com/eksdoctor/eksdoctor/source"
)

// TestKarpenterVolumes is TestKarpenterScheduler with persistent volumes:
// Deployments whose pods mount claims bound to volumes whose node affinity
// names zones (one term or several, with other labels, a local volume's
// hostname), volumes without node affinity, and unbound claims of
// WaitForFirstConsumer classes with and without allowedTopologies (one
// term or several). Karpenter's own volume topology (Validate, then
// GetRequirements, handed to the scheduler as the provisioner hands them)
// and eksdoctor, reading the same objects from YAML files, must agree on
// whether a node is launched, from all NodePools and from each alone, and
// on Karpenter's words.
func TestKarpenterVolumes(t *testing.T) {
	n, seed, only, err := differential.Settings(8)
	if err != nil {
		t.Fatal(err)
	}
	ctx := options.ToContext(injection.WithControllerName(t.Context(), "provisioner"), test.Options())
	cs := namespaces(t)
	results := make([][]string, n)
	counts := make([]volumeStats, n)
	next := make(chan int, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done, found := 0, 0
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				r := rand.New(rand.NewPCG(seed, uint64(i)))
				sc := generateVolumeScenario(r, i)
				results[i] = compareVolumeScenario(ctx, t, cs, sc, &counts[i])
				mu.Lock()
				done++
				found += len(results[i])
				for _, d := range results[i] {
					// Shown as found: a long run may be stopped.
					t.Logf("seed %d scenario %d: %s", seed, i, d)
				}
				if done%50 == 0 {
					// A long run says how far it got, should it be stopped.
					t.Logf("after %d scenarios: %d disagreements", done, found)
				}
				mu.Unlock()
			}
		})
	}
	for i := range n {
		if only == nil || only[i] {
			next <- i
		}
	}
	close(next)
	wg.Wait()
	var st volumeStats
	var disagreements []string
	for i := range n {
		st.workloads += counts[i].workloads
		st.launched += counts[i].launched
		st.messages += counts[i].messages
		st.poolVerdicts += counts[i].poolVerdicts
		st.volumeRefusals += counts[i].volumeRefusals
		for _, d := range results[i] {
			disagreements = append(disagreements, fmt.Sprintf("seed %d scenario %d: %s", seed, i, d))
		}
	}
	t.Logf("%d volume scenarios (seed %d): %d workloads with claims, %d Karpenter launches for (%d messages compared); %d NodePool verdicts compared, %d refusals for the volumes; %d disagreements",
		n, seed, st.workloads, st.launched, st.messages, st.poolVerdicts, st.volumeRefusals, len(disagreements))
	if st.launched == 0 || st.launched == st.workloads || st.volumeRefusals == 0 {
		t.Errorf("the scenarios must exercise both verdicts and refusals for the volumes: Karpenter launches for %d of %d workloads, %d refusals for the volumes", st.launched, st.workloads, st.volumeRefusals)
	}
	for i, d := range disagreements {
		if i == maxShown {
			t.Errorf("and %d more disagreements", len(disagreements)-maxShown)
			break
		}
		t.Error(d)
	}
}

type volumeStats struct {
	workloads, launched, messages, poolVerdicts, volumeRefusals int
}

// volumeScenario is a scenario whose Deployments mount claims.
type volumeScenario struct {
	*scenario
	objects []client.Object
	// withClaims are the Deployments given claims.
	withClaims []*appsv1.Deployment
}

// volumeClasses are the StorageClasses every volume scenario has.
func volumeClasses() []*storagev1.StorageClass {
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	terms := func(zs ...[]string) []corev1.TopologySelectorTerm {
		var out []corev1.TopologySelectorTerm
		for _, z := range zs {
			out = append(out, corev1.TopologySelectorTerm{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: corev1.LabelTopologyZone, Values: z}}})
		}
		return out
	}
	return []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "gp3"}, Provisioner: "ebs.csi.aws.com", VolumeBindingMode: &wffc},
		{ObjectMeta: metav1.ObjectMeta{Name: "gp3-a"}, Provisioner: "ebs.csi.aws.com", VolumeBindingMode: &wffc, AllowedTopologies: terms(zones[:1])},
		{ObjectMeta: metav1.ObjectMeta{Name: "gp3-b-or-c"}, Provisioner: "ebs.csi.aws.com", VolumeBindingMode: &wffc, AllowedTopologies: terms(zones[1:2], zones[2:])},
	}
}

// generateVolumeScenario draws a scenario and gives some Deployments claims.
func generateVolumeScenario(r *rand.Rand, index int) *volumeScenario {
	sc := &volumeScenario{scenario: generateScenario(r, index)}
	for _, c := range volumeClasses() {
		c.TypeMeta = metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass"}
		sc.objects = append(sc.objects, c)
	}
	for _, d := range sc.deployments {
		// A few of each scenario's Deployments: the NodePools and the
		// other pods vary from scenario to scenario.
		if len(sc.withClaims) == 5 || r.IntN(3) == 0 {
			continue
		}
		sc.withClaims = append(sc.withClaims, d)
		spec := &d.Spec.Template.Spec
		for v := range 1 + r.IntN(2) {
			name := fmt.Sprintf("%s-data-%d", d.Name, v)
			pvc := &corev1.PersistentVolumeClaim{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: d.Namespace},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")}},
				},
			}
			switch r.IntN(4) {
			case 0, 1:
				pv := generateVolume(r, "pv-"+name)
				pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: d.Namespace, Name: name}
				class := pv.Spec.StorageClassName
				pvc.Spec.StorageClassName = &class
				pvc.Spec.VolumeName = pv.Name
				pvc.Annotations = map[string]string{"pv.kubernetes.io/bind-completed": "yes"}
				sc.objects = append(sc.objects, pv)
			default:
				class := pick(r, []string{"gp3", "gp3-a", "gp3-b-or-c"})
				pvc.Spec.StorageClassName = &class
			}
			sc.objects = append(sc.objects, pvc)
			spec.Volumes = append(spec.Volumes, corev1.Volume{Name: fmt.Sprintf("data-%d", v), VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: name}}})
		}
	}
	return sc
}

// generateVolume draws a bound volume: an EBS volume in one zone (or one of
// two terms), with an architecture too, a local volume on a hostname and in
// a zone, or a volume any node may use.
func generateVolume(r *rand.Rand, name string) *corev1.PersistentVolume {
	pv := &corev1.PersistentVolume{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Capacity:         corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			StorageClassName: "gp3",
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: "ebs.csi.aws.com", VolumeHandle: "vol-" + name,
			}},
		},
	}
	zone := func(zs ...string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: zs}
	}
	var terms []corev1.NodeSelectorTerm
	switch r.IntN(6) {
	case 0:
		return pv
	case 1:
		terms = []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{zone(pick(r, zones)), {Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{pick(r, []string{"amd64", "arm64"})}}}}}
	case 2:
		terms = []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{zone(pick(r, zones))}}, {MatchExpressions: []corev1.NodeSelectorRequirement{zone(pick(r, zones))}}}
	case 3:
		pv.Spec.CSI = nil
		pv.Spec.StorageClassName = "local"
		pv.Spec.Local = &corev1.LocalVolumeSource{Path: "/mnt/disks/" + name}
		terms = []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"ip-10-0-1-1"}}, zone(pick(r, zones))}}}
	default:
		terms = []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{zone(pick(r, zones))}}}
	}
	pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: terms}}
	return pv
}

func compareVolumeScenario(ctx context.Context, t *testing.T, cs *kubernetes.Clientset, sc *volumeScenario, st *volumeStats) []string {
	t.Helper()
	dir := writeScenario(t, sc.scenario)
	var docs []string
	for _, o := range sc.objects {
		data, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(data))
	}
	if err := os.WriteFile(filepath.Join(dir, "volumes.yaml"), []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	clusters, err := source.Load([]string{dir}, source.Options{})
	if err != nil || len(clusters) != 1 {
		t.Fatalf("scenario %d: load: %v (%d clusters)", sc.index, err, len(clusters))
	}
	m := clusters[0].Model
	s := sim.New(m)
	workloads := map[string]*cluster.Workload{}
	for _, w := range m.Workloads {
		workloads[w.Object.Name] = w
	}
	var dsPods []*corev1.Pod
	for _, ds := range sc.daemonSets {
		dsPods = append(dsPods, daemonset.PodForDaemonSet(ds))
	}
	var out []string
	for _, d := range sc.withClaims {
		w := workloads[d.Name]
		if w == nil {
			t.Fatalf("scenario %d: eksdoctor read no Deployment %s", sc.index, d.Name)
		}
		pod := createdPod(ctx, t, cs, d)
		pl := s.Place(w, cluster.Steady)
		st.workloads++
		launched, kerr := solveWithVolumes(ctx, t, sc.nodePools, dsPods, pod, sc.objects)
		if launched {
			st.launched++
		}
		fits, unknown := false, false
		for _, v := range pl.Verdicts {
			if v.Source.Kind == cluster.KindNodePool {
				fits = fits || v.Result == sim.Fits
				unknown = unknown || v.Result == sim.Unknown
			}
		}
		if fits != launched && !(unknown && !fits) {
			out = append(out, fmt.Sprintf("%s: Karpenter launches a node: %t (%v); eksdoctor: %s\n%s%s", d.Name, launched, kerr, strings.Join(pl.Explain(), "; "), describe(sc.scenario, d), describeVolumes(sc, d)))
			continue
		}
		if !launched && !unknown {
			st.messages++
			if !sameWords(kerr.Error(), pl.KarpenterMessage(), d, &stats{}) {
				out = append(out, fmt.Sprintf("%s: messages differ:\n  Karpenter: %v\n  eksdoctor: %s\n%s%s", d.Name, kerr, pl.KarpenterMessage(), describe(sc.scenario, d), describeVolumes(sc, d)))
			}
		}
		for _, np := range sc.nodePools {
			v := verdictOf(pl, np.Name)
			if v == nil || v.Result == sim.Unknown {
				continue
			}
			st.poolVerdicts++
			ok, kerr := solveWithVolumes(ctx, t, []*karpv1.NodePool{np}, dsPods, pod, sc.objects)
			if (v.Result == sim.Fits) != ok {
				out = append(out, fmt.Sprintf("%s, NodePool %s alone: Karpenter launches a node: %t (%v); eksdoctor: %s\n%s%s", d.Name, np.Name, ok, kerr, v.Line(), describe(sc.scenario, d), describeVolumes(sc, d)))
				continue
			}
			if ok {
				continue
			}
			if sim.VolumeRefusal(*v) {
				st.volumeRefusals++
			}
			alone := &sim.Placement{Phase: cluster.Steady, Verdicts: []sim.Verdict{*v}}
			if !sameWords(kerr.Error(), alone.KarpenterMessage(), d, &stats{}) {
				out = append(out, fmt.Sprintf("%s, NodePool %s alone: reasons differ:\n  Karpenter: %v\n  eksdoctor: %s\n%s%s", d.Name, np.Name, kerr, alone.KarpenterMessage(), describe(sc.scenario, d), describeVolumes(sc, d)))
			}
		}
	}
	return out
}

func describeVolumes(sc *volumeScenario, d *appsv1.Deployment) string {
	var b strings.Builder
	for _, o := range sc.objects {
		if strings.Contains(o.GetName(), d.Name+"-") {
			data, _ := yaml.Marshal(o)
			fmt.Fprintf(&b, "  %s:\n%s", o.GetName(), differential.Indent(string(data), "    "))
		}
	}
	return b.String()
}

// solveWithVolumes is solve for a pod with claims: the provisioner's
// validation first (a pod it rejects is ignored: no node), then the
// volumes' requirement alternatives, handed to the scheduler.
func solveWithVolumes(ctx context.Context, t *testing.T, pools []*karpv1.NodePool, dsPods []*corev1.Pod, pod *corev1.Pod, objects []client.Object) (bool, error) {
	t.Helper()
	var objs []k8sruntime.Object
	for _, o := range objects {
		objs = append(objs, o.DeepCopyObject())
		if pv, ok := o.(*corev1.PersistentVolume); ok {
			// Karpenter asks for a pod's volume in the pod's namespace,
			// which the API server ignores for a cluster-scoped kind and
			// the fake client does not: it gets a copy there.
			c := pv.DeepCopy()
			c.Namespace = pod.Namespace
			objs = append(objs, c)
		}
	}
	kube := fakecr.NewClientBuilder().WithRESTMapper(volumeMapper()).WithRuntimeObjects(objs...).Build()
	vt := scheduling.NewVolumeTopology(kube)
	if err := vt.ValidatePersistentVolumeClaims(ctx, pod); err != nil {
		return false, fmt.Errorf("ignoring pod, %w", err)
	}
	reqs, err := vt.GetRequirements(ctx, pod)
	if err != nil {
		t.Fatalf("volume requirements of %s: %v", pod.Name, err)
	}
	pools = slices.Clone(pools)
	nodepoolutils.OrderByWeight(pools)
	its := instanceTypes()
	byPool := map[string][]*cloudprovider.InstanceType{}
	for _, np := range pools {
		byPool[np.Name] = its
	}
	clk := &clock.RealClock{}
	cp := fake.NewCloudProvider()
	cp.InstanceTypes = its
	cl := state.NewCluster(clk, kube, cp)
	pods := []*corev1.Pod{pod.DeepCopy()}
	topology, err := scheduling.NewTopology(ctx, kube, cl, nil, pools, byPool, pods)
	if err != nil {
		t.Fatal(err)
	}
	volumeReqs := map[types.UID][]kscheduling.Requirements{}
	if len(reqs) > 0 {
		volumeReqs[pod.UID] = reqs
	}
	s := scheduling.NewScheduler(ctx, kube, pools, cl, nil, topology, byPool, dsPods, events.NewRecorder(&record.FakeRecorder{}), clk, volumeReqs, nil)
	res, err := s.Solve(ctx, pods)
	if err != nil {
		t.Fatal(err)
	}
	for p, e := range res.PodErrors {
		if p.UID == pod.UID {
			return false, e
		}
	}
	for _, nc := range res.NewNodeClaims {
		if slices.ContainsFunc(nc.Pods, func(p *corev1.Pod) bool { return p.UID == pod.UID }) {
			return true, nil
		}
	}
	t.Fatalf("Karpenter neither placed pod %s nor gave an error for it", pod.Name)
	return false, nil
}

// volumeMapper tells the fake client which kinds are cluster-scoped, as the
// API server does: a volume is found whatever namespace is asked.
func volumeMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	for gvk := range clientgoscheme.Scheme.AllKnownTypes() {
		scope := meta.RESTScopeNamespace
		switch gvk.Kind {
		case "PersistentVolume", "StorageClass", "Node", "CSINode", "CSIDriver":
			scope = meta.RESTScopeRoot
		}
		m.Add(gvk, scope)
	}
	return m
}
