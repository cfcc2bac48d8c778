package sim

import (
	"math"
	"sort"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/eksdoctor/eksdoctor/catalog"
)

// vec is a resource list as integers (millicores, bytes, counts), so that the
// instance-type scans on the hot path compare numbers instead of quantities.
type vec struct {
	cpu, mem, pods, eph int64
	other               map[corev1.ResourceName]int64
}

func vecOf(rl corev1.ResourceList) vec {
	var v vec
	for name, q := range rl {
		switch name {
		case corev1.ResourceCPU:
			v.cpu = q.MilliValue()
		case corev1.ResourceMemory:
			v.mem = q.Value()
		case corev1.ResourcePods:
			v.pods = q.Value()
		case corev1.ResourceEphemeralStorage:
			v.eph = q.Value()
		default:
			if v.other == nil {
				v.other = map[corev1.ResourceName]int64{}
			}
			v.other[name] = q.Value()
		}
	}
	return v
}

func (a vec) plus(b vec) vec {
	out := vec{cpu: a.cpu + b.cpu, mem: a.mem + b.mem, pods: a.pods + b.pods, eph: a.eph + b.eph}
	if len(a.other)+len(b.other) > 0 {
		out.other = map[corev1.ResourceName]int64{}
		for k, v := range a.other {
			out.other[k] += v
		}
		for k, v := range b.other {
			out.other[k] += v
		}
	}
	return out
}

func (a vec) minus(b vec) vec {
	out := vec{cpu: a.cpu - b.cpu, mem: a.mem - b.mem, pods: a.pods - b.pods, eph: a.eph - b.eph}
	if len(a.other)+len(b.other) > 0 {
		out.other = map[corev1.ResourceName]int64{}
		for k, v := range a.other {
			out.other[k] += v
		}
		for k, v := range b.other {
			out.other[k] -= v
		}
	}
	return out
}

// beyond returns the resources a request asks for beyond what free offers,
// sorted by name; resources it does not ask for are not compared.
func (a vec) beyond(free vec) []corev1.ResourceName {
	var out []corev1.ResourceName
	if a.cpu > 0 && a.cpu > free.cpu {
		out = append(out, corev1.ResourceCPU)
	}
	if a.eph > 0 && a.eph > free.eph {
		out = append(out, corev1.ResourceEphemeralStorage)
	}
	if a.mem > 0 && a.mem > free.mem {
		out = append(out, corev1.ResourceMemory)
	}
	if a.pods > 0 && a.pods > free.pods {
		out = append(out, corev1.ResourcePods)
	}
	for k, v := range a.other {
		if v > 0 && v > free.other[k] {
			out = append(out, k)
		}
	}
	if len(out) > 1 {
		sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	}
	return out
}

// insufficientText is kube-scheduler's NodeResourcesFit reason for a resource
// a node lacks.
func insufficientText(r corev1.ResourceName) string {
	if r == corev1.ResourcePods {
		return "Too many pods"
	}
	return "Insufficient " + string(r)
}

// within reports whether a request fits in an allocatable.
func (a vec) within(alloc vec) bool {
	if a.cpu > alloc.cpu || a.mem > alloc.mem || a.pods > alloc.pods || a.eph > alloc.eph {
		return false
	}
	for k, v := range a.other {
		if v > 0 && v > alloc.other[k] {
			return false
		}
	}
	return true
}

// sizedType is an instance type with its allocatable as a vec.
type sizedType struct {
	it    *catalog.InstanceType
	alloc vec
	// vcpus and memMiB are the instance's capacity, which NodePool limits count.
	vcpus, memMiB int64
	// allocList, when set, is the allocatable a node class makes of the type
	// (its ephemeral storage); nil: the catalog's.
	allocList corev1.ResourceList
}

// allocatable is the type's allocatable as a resource list.
func (st sizedType) allocatable() corev1.ResourceList {
	if st.allocList != nil {
		return st.allocList
	}
	return st.it.Allocatable
}

// ephemeralAlloc is what an EKS node leaves allocatable of the volume that
// holds its ephemeral storage: its size, less the 1Gi kube-reserved and the 10%
// nodefs eviction threshold of the EKS AMIs and of Karpenter (20Gi → 17Gi).
func ephemeralAlloc(size int64) int64 { return size - 1<<30 - size/10 }

// unknownDisk stands for ephemeral storage whose size is not known: large
// enough that no request is refused for it.
const unknownDisk = int64(1) << 50

// withEphemeral returns an allocatable with its ephemeral storage replaced by
// what a volume of size bytes gives (0: unchanged; -1: not known).
func withEphemeral(alloc corev1.ResourceList, size int64) corev1.ResourceList {
	if size == 0 {
		return alloc
	}
	out := alloc.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	eph := unknownDisk
	if size > 0 {
		eph = ephemeralAlloc(size)
	}
	out[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(eph, resource.BinarySI)
	return out
}

// sizedCatalog is the catalog sorted smallest first (CPU, then memory, then name).
var sizedCatalog = sync.OnceValue(func() []sizedType {
	var out []sizedType
	for _, it := range catalog.InstanceTypes() {
		st := sizedType{it: it, alloc: vecOf(it.Allocatable)}
		st.vcpus, _ = strconv.ParseInt(it.Labels["karpenter.k8s.aws/instance-cpu"], 10, 64)
		st.memMiB, _ = strconv.ParseInt(it.Labels["karpenter.k8s.aws/instance-memory"], 10, 64)
		out = append(out, st)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].alloc, out[j].alloc
		if a.cpu != b.cpu {
			return a.cpu < b.cpu
		}
		if a.mem != b.mem {
			return a.mem < b.mem
		}
		return out[i].it.Name < out[j].it.Name
	})
	return out
})

// vmMemoryOverheadPercent is the share of an instance's memory
// karpenter-provider-aws sets aside for the hypervisor and OS by default
// (settings.vmMemoryOverheadPercent).
const vmMemoryOverheadPercent = 0.075

// memCapacityMiB is the memory capacity Karpenter gives the type, which
// NodePool memory limits count: its size (64 MiB less on Graviton, whose
// firmware reserves it) less the VM overhead, rounded up to a MiB.
func (st sizedType) memCapacityMiB() int64 {
	mib := st.memMiB
	if st.it.Labels[corev1.LabelArchStable] == "arm64" {
		mib -= 64
	}
	return mib - int64(math.Ceil(float64(mib)*vmMemoryOverheadPercent))
}

// exceedsLimits reports whether one node of the type alone would exceed a
// NodePool's limits (Karpenter counts a node's capacity against them).
func (st sizedType) exceedsLimits(limits corev1.ResourceList) bool {
	for name, lim := range limits {
		switch name {
		case corev1.ResourceCPU:
			if st.vcpus*1000 > lim.MilliValue() {
				return true
			}
		case corev1.ResourceMemory:
			if st.memCapacityMiB()<<20 > lim.Value() {
				return true
			}
		case resourceNodes:
			// One node: no node left is checked before any type; a limit
			// already passed leaves no type.
			if lim.Sign() < 0 {
				return true
			}
		default:
			a := st.allocatable()[name]
			if a.Cmp(lim) > 0 {
				return true
			}
		}
	}
	return false
}
