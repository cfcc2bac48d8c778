package catalog

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

//go:embed data/instance-types.json
var instanceTypesJSON []byte

// InstanceType is an EC2 instance type as Karpenter sees it.
type InstanceType struct {
	Name   string
	Labels map[string]string
	// Allocatable is what a node of this type offers to pods.
	Allocatable corev1.ResourceList
}

var instanceTypes = sync.OnceValues(func() ([]*InstanceType, error) {
	var raw struct {
		InstanceTypes []struct {
			Name        string            `json:"name"`
			Labels      map[string]string `json:"labels"`
			Allocatable map[string]string `json:"allocatable"`
		} `json:"instanceTypes"`
	}
	if err := json.Unmarshal(instanceTypesJSON, &raw); err != nil {
		return nil, fmt.Errorf("decode instance-type catalog: %w", err)
	}
	out := make([]*InstanceType, 0, len(raw.InstanceTypes))
	for _, it := range raw.InstanceTypes {
		alloc := corev1.ResourceList{}
		for k, v := range it.Allocatable {
			q, err := resource.ParseQuantity(v)
			if err != nil {
				return nil, fmt.Errorf("instance type %s: allocatable %s: %w", it.Name, k, err)
			}
			alloc[corev1.ResourceName(k)] = q
		}
		out = append(out, &InstanceType{Name: it.Name, Labels: it.Labels, Allocatable: alloc})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
})

// InstanceTypes returns the catalog, sorted by name. The slice and its elements are
// shared: callers must not modify them.
func InstanceTypes() []*InstanceType {
	its, err := instanceTypes()
	if err != nil {
		// The catalog is embedded at build time and covered by tests; a decode
		// failure is a build defect, not an input problem.
		panic(err)
	}
	return its
}

var byName = sync.OnceValue(func() map[string]*InstanceType {
	m := map[string]*InstanceType{}
	for _, it := range InstanceTypes() {
		m[it.Name] = it
	}
	return m
})

// InstanceTypeByName returns one instance type.
func InstanceTypeByName(name string) (*InstanceType, bool) {
	it, ok := byName()[name]
	return it, ok
}

// Accelerator is the kind of accelerator an instance type carries, which
// decides the device plugin its nodes need: "nvidia" (nvidia.com/gpu),
// "neuron" (AWS Inferentia and Trainium, aws.amazon.com/neuron...), or "".
// The catalog's labels decide for the types it holds; for older types it does
// not (p2, p3, g3), the instance family's prefix does, as eksctl's
// IsNvidiaInstanceType did before its generated table.
func Accelerator(name string) string {
	if it, ok := InstanceTypeByName(name); ok {
		switch {
		case it.Labels["karpenter.k8s.aws/instance-gpu-manufacturer"] == "nvidia":
			return "nvidia"
		case it.Labels["karpenter.k8s.aws/instance-accelerator-manufacturer"] == "aws":
			return "neuron"
		}
		return ""
	}
	family, _, _ := strings.Cut(name, ".")
	switch family {
	case "p2", "p3", "p3dn", "g3", "g3s", "g4dn":
		return "nvidia"
	case "inf1", "inf2", "trn1", "trn1n", "trn2":
		return "neuron"
	}
	return ""
}
