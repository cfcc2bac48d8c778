package karpenter

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/eksdoctor/eksdoctor/catalog"
)

// The zones and region the generated clusters launch in: every offering is in
// each zone, on demand and spot.
var (
	zones  = []string{"us-west-2a", "us-west-2b", "us-west-2c"}
	region = "us-west-2"
)

// vmMemoryOverheadPercent is karpenter-provider-aws's default
// (settings.vmMemoryOverheadPercent).
const vmMemoryOverheadPercent = 0.075

// awsLabels are the karpenter.k8s.aws labels the catalog gives; the AWS
// provider registers them as well known, so the harness does too.
var awsLabels = sync.OnceValue(func() []string {
	keys := sets.New[string]()
	for _, it := range catalog.InstanceTypes() {
		for k := range it.Labels {
			if strings.HasPrefix(k, "karpenter.k8s.aws/") {
				keys.Insert(k)
			}
		}
	}
	out := sets.List(keys)
	if autoMode {
		// Auto Mode's provider registers its own keys, and knows only
		// those of its supported labels.
		var auto []string
		karpv1.WellKnownLabels.Insert(catalog.AutoMode().ComputeTypeLabel.Key)
		for _, k := range out {
			if a, ok := autoModeKeys()[k]; ok {
				auto = append(auto, k)
				karpv1.WellKnownLabels.Insert(a)
			}
		}
		return auto
	}
	karpv1.WellKnownLabels.Insert(out...)
	karpv1.RestrictedLabelDomains.Insert("karpenter.k8s.aws")
	return out
})

// labelKey is the key an instance type's label has in the run: Auto Mode's
// for the self-managed provider's key it renames.
func labelKey(k string) string {
	if a, ok := autoModeKeys()[k]; ok && autoMode {
		return a
	}
	return k
}

// instanceTypes builds Karpenter's instance types from eksdoctor's embedded
// catalog the way karpenter-provider-aws builds them from EC2: a requirement
// for every well-known label (DoesNotExist where the type has no value),
// offerings in every zone for both capacity types, the capacity (memory after
// the VM overhead, less 64 MiB on Graviton), and the overhead that leaves the
// catalog's allocatable.
var instanceTypes = sync.OnceValue(func() []*cloudprovider.InstanceType {
	keys := awsLabels()
	var out []*cloudprovider.InstanceType
	for _, it := range catalog.InstanceTypes() {
		reqs := scheduling.NewRequirements(
			scheduling.NewRequirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, it.Name),
			scheduling.NewRequirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, it.Labels[corev1.LabelArchStable]),
			scheduling.NewRequirement(corev1.LabelOSStable, corev1.NodeSelectorOpIn, it.Labels[corev1.LabelOSStable]),
			scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zones...),
			scheduling.NewRequirement(corev1.LabelTopologyRegion, corev1.NodeSelectorOpIn, region),
			scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, karpv1.CapacityTypeOnDemand, karpv1.CapacityTypeSpot),
			scheduling.NewRequirement(corev1.LabelWindowsBuild, corev1.NodeSelectorOpDoesNotExist),
		)
		if autoMode {
			// Every Auto Mode node is labelled so.
			ct := catalog.AutoMode().ComputeTypeLabel
			reqs.Add(scheduling.NewRequirement(ct.Key, corev1.NodeSelectorOpIn, ct.Value))
		}
		for _, k := range keys {
			if v, ok := it.Labels[k]; ok {
				reqs.Add(scheduling.NewRequirement(labelKey(k), corev1.NodeSelectorOpIn, v))
			} else {
				reqs.Add(scheduling.NewRequirement(labelKey(k), corev1.NodeSelectorOpDoesNotExist))
			}
		}
		capacity := corev1.ResourceList{}
		for name, q := range it.Allocatable {
			capacity[name] = q.DeepCopy()
		}
		cpus, _ := strconv.ParseInt(it.Labels["karpenter.k8s.aws/instance-cpu"], 10, 64)
		capacity[corev1.ResourceCPU] = *resource.NewQuantity(cpus, resource.DecimalSI)
		capacity[corev1.ResourceMemory] = memoryCapacity(it)
		eph := it.Allocatable[corev1.ResourceEphemeralStorage]
		capacity[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(eph.Value()+(3<<30), resource.BinarySI)
		reserved := corev1.ResourceList{}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
			q := capacity[name].DeepCopy()
			q.Sub(it.Allocatable[name])
			reserved[name] = q
		}
		var offerings cloudprovider.Offerings
		for i, z := range zones {
			for j, ct := range []string{karpv1.CapacityTypeOnDemand, karpv1.CapacityTypeSpot} {
				offerings = append(offerings, &cloudprovider.Offering{
					Requirements: scheduling.NewRequirements(
						scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, z),
						scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, ct),
					),
					Price:     float64(cpus)*0.05 + float64(i)*0.001 - float64(j)*0.01,
					Available: true,
				})
			}
		}
		out = append(out, &cloudprovider.InstanceType{
			Name:         it.Name,
			Requirements: reqs,
			Offerings:    offerings,
			Capacity:     capacity,
			Overhead:     &cloudprovider.InstanceTypeOverhead{KubeReserved: reserved},
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
})

// memoryCapacity is the memory karpenter-provider-aws gives an instance type:
// its size in MiB (64 MiB less on Graviton), less the VM overhead rounded up
// to a MiB.
func memoryCapacity(it *catalog.InstanceType) resource.Quantity {
	mib, _ := strconv.ParseInt(it.Labels["karpenter.k8s.aws/instance-memory"], 10, 64)
	if it.Labels[corev1.LabelArchStable] == "arm64" {
		mib -= 64
	}
	mib -= int64(math.Ceil(float64(mib) * vmMemoryOverheadPercent))
	return resource.MustParse(fmt.Sprintf("%dMi", mib))
}
