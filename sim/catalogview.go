package sim

import (
	"sort"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/util/sets"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	"github.com/eksdoctor/eksdoctor/catalog"
)

// catalogView is the EC2 instance-type catalog as one of the Karpenters that
// launch EC2 instances labels it: Karpenter's AWS provider (karpenter.k8s.aws/*
// labels) or EKS Auto Mode (eks.amazonaws.com/* labels). The instance types,
// their sizes and allocatable are the same; what a NodePool's requirements and
// a pod's selection can name differs.
type catalogView struct {
	// types are the instance types, smallest first, labelled as its nodes are.
	types []sizedType
	// instanceKeys are the keys whose values come from the instance type.
	instanceKeys sets.Set[string]
	// wellKnown are the keys a NodePool satisfies without declaring them;
	// wellKnownSorted the same in key order (typo hints).
	wellKnown       sets.Set[string]
	wellKnownSorted []string
}

func (v *catalogView) isInstanceKey(key string) bool { return v.instanceKeys.Has(key) }

// Labels Karpenter's AWS provider knows values for from its offerings even though
// the instance-type catalog does not carry them.
var awsOfferingLabels = []string{
	"topology.k8s.aws/zone-id",
	"karpenter.k8s.aws/capacity-reservation-id",
	"karpenter.k8s.aws/capacity-reservation-type",
	"karpenter.k8s.aws/ec2nodeclass",
}

// awsView is the catalog as the AWS provider labels it: as it is.
var awsView = sync.OnceValue(func() *catalogView {
	v := &catalogView{types: sizedCatalog(), instanceKeys: sets.New[string]()}
	for _, it := range catalog.InstanceTypes() {
		for k := range it.Labels {
			v.instanceKeys.Insert(k)
		}
	}
	v.wellKnown = sets.New[string](karpv1.WellKnownLabels.UnsortedList()...)
	v.wellKnown.Insert(awsOfferingLabels...)
	v.wellKnown = v.wellKnown.Union(v.instanceKeys)
	v.wellKnownSorted = sets.List(v.wellKnown)
	return v
})

// autoModeView is the catalog as EKS Auto Mode labels it: its supported
// eks.amazonaws.com/instance-* labels with the values of the AWS provider's
// labels of the same name, none of the karpenter.k8s.aws/* ones, and
// eks.amazonaws.com/compute-type: auto on every instance type, as on every
// node (a label of the instance type, so Karpenter's messages, which list the
// pod's and the NodePool's requirements, do not name it).
var autoModeView = sync.OnceValue(func() *catalogView {
	k := catalog.AutoMode()
	aws := awsView()
	v := &catalogView{instanceKeys: sets.New[string]()}
	fromEC2 := map[string]string{}
	for auto, ec2 := range k.InstanceLabels {
		fromEC2[ec2] = auto
	}
	for _, st := range aws.types {
		labels := make(map[string]string, len(st.it.Labels))
		for key, val := range st.it.Labels {
			switch auto, mapped := fromEC2[key]; {
			case mapped:
				labels[auto] = val
			case strings.HasPrefix(key, "karpenter.k8s.aws/"):
				// Not a label Auto Mode knows.
			default:
				labels[key] = val
			}
		}
		labels[k.ComputeTypeLabel.Key] = k.ComputeTypeLabel.Value
		for key := range labels {
			v.instanceKeys.Insert(key)
		}
		it := *st.it
		it.Labels = labels
		st.it = &it
		v.types = append(v.types, st)
	}
	v.wellKnown = sets.New[string](karpv1.WellKnownLabels.UnsortedList()...)
	v.wellKnown.Insert("topology.k8s.aws/zone-id", k.ComputeTypeLabel.Key)
	v.wellKnown = v.wellKnown.Union(v.instanceKeys)
	v.wellKnownSorted = sets.List(v.wellKnown)
	sort.Strings(v.wellKnownSorted)
	return v
})

// coreView is what a NodePool of a provider eksdoctor does not model can be
// judged by: Karpenter's own well-known labels, no instance types.
var coreView = sync.OnceValue(func() *catalogView {
	v := &catalogView{instanceKeys: sets.New[string](), wellKnown: sets.New[string](karpv1.WellKnownLabels.UnsortedList()...)}
	v.wellKnownSorted = sets.List(v.wellKnown)
	return v
})

// viewOf is the catalog view of a node class group: "" and karpenter.k8s.aws
// the AWS provider's, eks.amazonaws.com Auto Mode's, any other Karpenter's own
// labels only.
func viewOf(group string) *catalogView {
	switch group {
	case "", awsNodeClassGroup:
		return awsView()
	case autoModeGroup():
		return autoModeView()
	}
	return coreView()
}

// autoModeGroup is the API group of EKS Auto Mode's node classes.
func autoModeGroup() string { return catalog.AutoMode().NodeClass.Group }
