package karpenterv1beta1

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/karpenter/pkg/apis/v1beta1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

// The zones and region the generated clusters launch in: every offering is in
// each zone, on demand and spot.
var (
	zones  = []string{"us-west-2a", "us-west-2b", "us-west-2c"}
	region = "us-west-2"
)

// vmMemoryOverheadPercent is karpenter-provider-aws's default
// (settings.vmMemoryOverheadPercent), the same at v0.37 as at v1.
const vmMemoryOverheadPercent = 0.075

// catalogType is one entry of eksdoctor's embedded instance-type catalog
// (catalog/data/instance-types.json), read as a file: the catalog package
// itself is not importable here (see the package comment).
type catalogType struct {
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels"`
	Allocatable map[string]string `json:"allocatable"`
}

var catalog = sync.OnceValues(func() ([]catalogType, error) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "catalog", "data", "instance-types.json"))
	if err != nil {
		return nil, err
	}
	var raw struct {
		InstanceTypes []catalogType `json:"instanceTypes"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("instance-type catalog: %w", err)
	}
	return raw.InstanceTypes, nil
})

// awsLabels are the karpenter.k8s.aws labels of the catalog; the AWS provider
// registers them as well known, so the harness does too.
func awsLabels(its []catalogType) []string {
	keys := sets.New[string]()
	for _, it := range its {
		for k := range it.Labels {
			if strings.HasPrefix(k, "karpenter.k8s.aws/") {
				keys.Insert(k)
			}
		}
	}
	out := sets.List(keys)
	v1beta1.WellKnownLabels.Insert(out...)
	v1beta1.RestrictedLabelDomains.Insert("karpenter.k8s.aws")
	return out
}

// instanceTypes builds Karpenter v0.37's instance types from the catalog the
// way karpenter-provider-aws v0.37 builds them from EC2: a requirement for
// every well-known label (DoesNotExist where the type has no value),
// offerings in every zone for both capacity types, the capacity (memory after
// the VM overhead, less 64 MiB on Graviton), and the overhead that leaves the
// catalog's allocatable.
var instanceTypes = sync.OnceValues(func() ([]*cloudprovider.InstanceType, error) {
	cat, err := catalog()
	if err != nil {
		return nil, err
	}
	keys := awsLabels(cat)
	var out []*cloudprovider.InstanceType
	for _, it := range cat {
		reqs := scheduling.NewRequirements(
			scheduling.NewRequirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, it.Name),
			scheduling.NewRequirement(corev1.LabelArchStable, corev1.NodeSelectorOpIn, it.Labels[corev1.LabelArchStable]),
			scheduling.NewRequirement(corev1.LabelOSStable, corev1.NodeSelectorOpIn, it.Labels[corev1.LabelOSStable]),
			scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zones...),
			scheduling.NewRequirement(corev1.LabelTopologyRegion, corev1.NodeSelectorOpIn, region),
			scheduling.NewRequirement(v1beta1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1beta1.CapacityTypeOnDemand, v1beta1.CapacityTypeSpot),
			scheduling.NewRequirement(corev1.LabelWindowsBuild, corev1.NodeSelectorOpDoesNotExist),
		)
		for _, k := range keys {
			if v, ok := it.Labels[k]; ok {
				reqs.Add(scheduling.NewRequirement(k, corev1.NodeSelectorOpIn, v))
			} else {
				reqs.Add(scheduling.NewRequirement(k, corev1.NodeSelectorOpDoesNotExist))
			}
		}
		alloc := corev1.ResourceList{}
		for k, v := range it.Allocatable {
			q, err := resource.ParseQuantity(v)
			if err != nil {
				return nil, fmt.Errorf("%s: allocatable %s: %w", it.Name, k, err)
			}
			alloc[corev1.ResourceName(k)] = q
		}
		capacity := alloc.DeepCopy()
		cpus, _ := strconv.ParseInt(it.Labels["karpenter.k8s.aws/instance-cpu"], 10, 64)
		capacity[corev1.ResourceCPU] = *resource.NewQuantity(cpus, resource.DecimalSI)
		capacity[corev1.ResourceMemory] = memoryCapacity(it)
		eph := alloc[corev1.ResourceEphemeralStorage]
		capacity[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(eph.Value()+(3<<30), resource.BinarySI)
		reserved := corev1.ResourceList{}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
			q := capacity[name].DeepCopy()
			q.Sub(alloc[name])
			reserved[name] = q
		}
		var offerings cloudprovider.Offerings
		for i, z := range zones {
			for j, ct := range []string{v1beta1.CapacityTypeOnDemand, v1beta1.CapacityTypeSpot} {
				offerings = append(offerings, cloudprovider.Offering{
					Requirements: scheduling.NewRequirements(
						scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, z),
						scheduling.NewRequirement(v1beta1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, ct),
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
	return out, nil
})

// memoryCapacity is the memory karpenter-provider-aws gives an instance type:
// its size in MiB (64 MiB less on Graviton), less the VM overhead rounded up
// to a MiB.
func memoryCapacity(it catalogType) resource.Quantity {
	mib, _ := strconv.ParseInt(it.Labels["karpenter.k8s.aws/instance-memory"], 10, 64)
	if it.Labels[corev1.LabelArchStable] == "arm64" {
		mib -= 64
	}
	mib -= int64(math.Ceil(float64(mib) * vmMemoryOverheadPercent))
	return resource.MustParse(fmt.Sprintf("%dMi", mib))
}
