package differential

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// TestKubeSchedulerVolumes is TestKubeScheduler with persistent volumes:
// claims bound to volumes whose node affinity names zones (one term or
// several, other labels too), volumes that carry zone labels only (the
// VolumeZone plugin's), claims of WaitForFirstConsumer classes that are
// provisioned (within allowedTopologies or anywhere) or bound to a volume
// made by hand, unbound claims of an Immediate class, claims that do not
// exist, and bound claims whose volume does not. kube-scheduler's verdict and
// its words must be eksdoctor's, for every pod.
func TestKubeSchedulerVolumes(t *testing.T) {
	n, seed, only, err := Settings(30)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	cs, kubeconfig := startScheduler(t)
	for _, c := range storageClasses() {
		if _, err := cs.StorageV1().StorageClasses().Create(ctx, c, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	var compared, unschedulable, withVolumes int
	var disagreements []string
	for i := range n {
		if only != nil && !only[i] {
			continue
		}
		r := rand.New(rand.NewPCG(seed, uint64(i)))
		sc := generateVolumeScenario(r, i)
		outs := runVolumeScenario(t, cs, kubeconfig, sc)
		for _, o := range outs {
			if !o.bound && !o.gated {
				unschedulable++
			}
			compared++
			if o.disagreement != "" {
				disagreements = append(disagreements, fmt.Sprintf("seed %d scenario %d, pod %s: %s\n%s%s", seed, i, o.pod, o.disagreement, sc.describe(o.pod), sc.describeVolumes()))
			}
		}
		withVolumes += sc.podsWithClaims
		if (i+1)%50 == 0 {
			// A long run says how far it got, should it be stopped.
			t.Logf("after %d scenarios: %d pods compared, %d disagreements", i+1, compared, len(disagreements))
		}
	}
	t.Logf("%d volume scenarios (seed %d): %d pods compared (%d with claims), %d the scheduler could not place; %d disagreements",
		n, seed, compared, withVolumes, unschedulable, len(disagreements))
	if compared == 0 || withVolumes == 0 {
		t.Fatal("no pod with claims was compared")
	}
	if unschedulable == 0 || unschedulable == compared {
		t.Errorf("the scenarios must exercise both verdicts: %d of %d pods unschedulable", unschedulable, compared)
	}
	for i, d := range disagreements {
		if i == 10 {
			t.Errorf("and %d more disagreements", len(disagreements)-10)
			break
		}
		t.Error(d)
	}
}

// The StorageClasses every volume scenario shares: WaitForFirstConsumer with
// a provisioner (anywhere, or in two zones), WaitForFirstConsumer for volumes
// made by hand, and Immediate.
func storageClasses() []*storagev1.StorageClass {
	wffc, immediate := storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate
	return []*storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "wffc"}, Provisioner: "ebs.csi.aws.com", VolumeBindingMode: &wffc},
		{ObjectMeta: metav1.ObjectMeta{Name: "wffc-ab"}, Provisioner: "ebs.csi.aws.com", VolumeBindingMode: &wffc,
			AllowedTopologies: []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: corev1.LabelTopologyZone, Values: []string{"zone-a", "zone-b"}}}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "wffc-c-or-arm"}, Provisioner: "ebs.csi.aws.com", VolumeBindingMode: &wffc,
			AllowedTopologies: []corev1.TopologySelectorTerm{
				{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: corev1.LabelTopologyZone, Values: []string{"zone-c"}}}},
				{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{{Key: corev1.LabelArchStable, Values: []string{"arm64"}}}},
			}},
		{ObjectMeta: metav1.ObjectMeta{Name: "local"}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wffc},
		{ObjectMeta: metav1.ObjectMeta{Name: "immediate"}, Provisioner: "ebs.csi.aws.com", VolumeBindingMode: &immediate},
	}
}

// volumeScenario adds volumes to a scenario.
type volumeScenario struct {
	*scenario
	pvs  []*corev1.PersistentVolume
	pvcs []*corev1.PersistentVolumeClaim
	// available are the volumes made by hand that wait for a claim.
	available map[string]bool
	// delayed names the pod whose claims wait for it (the last one).
	delayed        string
	podsWithClaims int
}

func (sc *volumeScenario) describeVolumes() string {
	s := ""
	for _, pv := range sc.pvs {
		s += fmt.Sprintf("  pv %s class=%s labels=%v affinity=%v claimRef=%v available=%t\n", pv.Name, pv.Spec.StorageClassName, pv.Labels, pv.Spec.NodeAffinity, pv.Spec.ClaimRef, sc.available[pv.Name])
	}
	for _, c := range sc.pvcs {
		s += fmt.Sprintf("  pvc %s class=%v volume=%q annotations=%v\n", c.Name, *c.Spec.StorageClassName, c.Spec.VolumeName, c.Annotations)
	}
	return s
}

// generateVolumeScenario draws a scenario and gives some of its pods claims.
// Nodes sometimes lack zone labels (VolumeZone then lets any volume through).
// Claims of WaitForFirstConsumer classes go to the last pod only: the
// scheduler holds a pod it found a node for while the volumes are bound,
// which no controller does here, and later pods would be judged beside it.
func generateVolumeScenario(r *rand.Rand, index int) *volumeScenario {
	sc := &volumeScenario{scenario: generateScenario(r, index), available: map[string]bool{}}
	for _, n := range sc.nodes {
		if r.IntN(8) == 0 {
			delete(n.Labels, corev1.LabelTopologyZone)
		}
	}
	for i := range sc.pods {
		sc.pods[i].Spec.SchedulingGates = nil
	}
	claim := 0
	newClaim := func(class, volume string) *corev1.PersistentVolumeClaim {
		c := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%03d-claim-%d", index, claim), Namespace: "diff"},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: &class,
				VolumeName:       volume,
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(pick(r, []string{"1Gi", "10Gi"}))}},
			},
		}
		claim++
		return c
	}
	newPV := func(name, class string) *corev1.PersistentVolume {
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.PersistentVolumeSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				Capacity:         corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(pick(r, []string{"5Gi", "20Gi"}))},
				StorageClassName: class,
				PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
					Driver: "ebs.csi.aws.com", VolumeHandle: "vol-" + name,
				}},
			},
		}
		switch r.IntN(5) {
		case 0:
			// The VolumeZone plugin's labels only.
			pv.Labels = map[string]string{corev1.LabelTopologyZone: pick(r, []string{"zone-a", "zone-b", "zone-a__zone-c"})}
			if r.IntN(3) == 0 {
				pv.Labels = map[string]string{corev1.LabelFailureDomainBetaZone: pick(r, zones)}
			}
		case 1:
		default:
			terms := []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{pick(r, zones)}}}}}
			if r.IntN(3) == 0 {
				terms[0].MatchExpressions = append(terms[0].MatchExpressions, corev1.NodeSelectorRequirement{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{pick(r, archs)}})
			}
			if r.IntN(4) == 0 {
				terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{pick(r, zones)}}}})
			}
			pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: terms}}
		}
		sc.pvs = append(sc.pvs, pv)
		return pv
	}
	last := len(sc.pods) - 1
	for i, p := range sc.pods {
		if r.IntN(3) == 0 {
			continue
		}
		sc.podsWithClaims++
		for v := range 1 + r.IntN(2) {
			var c *corev1.PersistentVolumeClaim
			kind := r.IntN(10)
			if i != last && kind >= 5 {
				kind = r.IntN(5)
			}
			switch kind {
			case 0, 1, 2:
				// Bound to a volume with its zone.
				name := fmt.Sprintf("s%03d-pv-%d", index, len(sc.pvs))
				c = newClaim("wffc", name)
				c.Annotations = map[string]string{"pv.kubernetes.io/bind-completed": "yes"}
				pv := newPV(name, "wffc")
				pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "diff", Name: c.Name}
			case 3:
				// An Immediate claim nothing binds, a claim that does not
				// exist, or a bound claim whose volume does not.
				switch r.IntN(3) {
				case 0:
					c = newClaim("immediate", "")
				case 1:
					p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: fmt.Sprintf("v%d", v), VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: fmt.Sprintf("s%03d-no-such-claim", index)}}})
					continue
				default:
					c = newClaim("wffc", fmt.Sprintf("s%03d-no-such-pv", index))
					c.Annotations = map[string]string{"pv.kubernetes.io/bind-completed": "yes"}
				}
			case 4:
				// A bound volume without node affinity.
				name := fmt.Sprintf("s%03d-pv-%d", index, len(sc.pvs))
				c = newClaim("wffc", name)
				c.Annotations = map[string]string{"pv.kubernetes.io/bind-completed": "yes"}
				pv := newPV(name, "wffc")
				pv.Spec.NodeAffinity, pv.Labels = nil, nil
				pv.Spec.ClaimRef = &corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "diff", Name: c.Name}
			case 5, 6:
				c = newClaim(pick(r, []string{"wffc", "wffc-ab", "wffc-c-or-arm"}), "")
			default:
				// Made by hand: volumes of the class wait for a claim, and
				// only those big enough, in the node's zone, will do.
				c = newClaim("local", "")
				for range r.IntN(3) {
					pv := newPV(fmt.Sprintf("s%03d-pv-%d", index, len(sc.pvs)), "local")
					sc.available[pv.Name] = true
				}
			}
			if i == last && c.Spec.VolumeName == "" && *c.Spec.StorageClassName != "immediate" {
				sc.delayed = p.Name
			}
			sc.pvcs = append(sc.pvcs, c)
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: fmt.Sprintf("v%d", v), VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c.Name}}})
		}
	}
	return sc
}

// runVolumeScenario creates the volumes and claims, then the nodes, then
// places the pods; it deletes the volumes and claims at the end.
func runVolumeScenario(t *testing.T, cs *kubernetes.Clientset, kubeconfig string, sc *volumeScenario) []outcome {
	t.Helper()
	ctx := t.Context()
	defer cleanup(t, cs)
	defer cleanupVolumes(t, cs)
	for _, pv := range sc.pvs {
		created, err := cs.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("scenario %d: create pv %s: %v", sc.index, pv.Name, err)
		}
		phase := corev1.VolumeBound
		if sc.available[pv.Name] {
			phase = corev1.VolumeAvailable
		}
		created.Status.Phase = phase
		if _, err := cs.CoreV1().PersistentVolumes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("scenario %d: pv %s status: %v", sc.index, pv.Name, err)
		}
	}
	for _, c := range sc.pvcs {
		if _, err := cs.CoreV1().PersistentVolumeClaims("diff").Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatalf("scenario %d: create pvc %s: %v", sc.index, c.Name, err)
		}
	}
	// The nodes come after, and the scheduler's probe pod with them: by the
	// time it is bound the scheduler has long seen the volumes.
	createNodes(t, cs, sc.scenario)
	return placeAll(t, cs, kubeconfig, sc.scenario, func(t *testing.T, cs *kubernetes.Clientset, name string) verdict {
		if name == sc.delayed {
			return waitForVolumeVerdict(t, cs, name, sc.pvcs)
		}
		return waitForVerdict(t, cs, name)
	})
}

// waitForVolumeVerdict is waitForVerdict for a pod whose claims wait for it:
// once the scheduler has found a node it asks for the volumes to be bound or
// provisioned there (a claim gains the selected-node annotation, a volume
// made by hand its claim) and holds the pod until that is done, which no
// controller does here. That request is its verdict.
func waitForVolumeVerdict(t *testing.T, cs *kubernetes.Clientset, name string, claims []*corev1.PersistentVolumeClaim) verdict {
	t.Helper()
	ctx := t.Context()
	deadline := time.Now().Add(60 * time.Second)
	for {
		p, err := cs.CoreV1().Pods("diff").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.NodeName != "" {
			return verdict{bound: true}
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				return verdict{message: c.Message}
			}
		}
		mine := map[string]bool{}
		for _, v := range p.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				mine[v.PersistentVolumeClaim.ClaimName] = true
			}
		}
		pvcs, err := cs.CoreV1().PersistentVolumeClaims("diff").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range pvcs.Items {
			if _, ok := c.Annotations["volume.kubernetes.io/selected-node"]; ok && mine[c.Name] {
				return verdict{bound: true}
			}
		}
		pvs, err := cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, pv := range pvs.Items {
			if ref := pv.Spec.ClaimRef; ref != nil && mine[ref.Name] && pv.Annotations["pv.kubernetes.io/bound-by-controller"] != "" {
				return verdict{bound: true}
			}
			if ref := pv.Spec.ClaimRef; ref != nil && mine[ref.Name] && pv.Spec.StorageClassName == "local" {
				return verdict{bound: true}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("kube-scheduler gave no verdict for pod %s within a minute: %v", name, p.Status.Conditions)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cleanupVolumes deletes the scenario's claims and volumes; their
// protection finalizers, which no controller removes here, go first.
func cleanupVolumes(t *testing.T, cs *kubernetes.Clientset) {
	t.Helper()
	ctx := t.Context()
	unprotect := []byte(`{"metadata":{"finalizers":null}}`)
	pvcs, err := cs.CoreV1().PersistentVolumeClaims("diff").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range pvcs.Items {
		if _, err := cs.CoreV1().PersistentVolumeClaims("diff").Patch(ctx, c.Name, types.MergePatchType, unprotect, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	if err := cs.CoreV1().PersistentVolumeClaims("diff").DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	pvs, err := cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pv := range pvs.Items {
		if _, err := cs.CoreV1().PersistentVolumes().Patch(ctx, pv.Name, types.MergePatchType, unprotect, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	if err := cs.CoreV1().PersistentVolumes().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
}
