package catalog

import (
	_ "embed"
	"fmt"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

//go:embed automode/automode.yaml
var autoModeYAML []byte

// AutoModeKnowledge is what eksdoctor knows of EKS Auto Mode (automode/README.md
// names the source of each part).
type AutoModeKnowledge struct {
	NodeClass struct {
		Group   string `json:"group"`
		Kind    string `json:"kind"`
		Default string `json:"default"`
	} `json:"nodeClass"`
	BuiltinNodePools []AutoModeNodePool `json:"builtinNodePools"`
	// InstanceLabels maps each of Auto Mode's instance labels to the EC2
	// catalog label with the same values.
	InstanceLabels   map[string]string `json:"instanceLabels"`
	ComputeTypeLabel struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	} `json:"computeTypeLabel"`
	BlockStorageProvisioner string `json:"blockStorageProvisioner"`
	BuiltinComponents       []struct {
		Addon string `json:"addon"`
		What  string `json:"what"`
	} `json:"builtinComponents"`
	NodeAccessEntry struct {
		Type   string `json:"type"`
		Policy string `json:"policy"`
	} `json:"nodeAccessEntry"`
	AllOrNothing string `json:"allOrNothing"`
}

// AutoModeNodePool is a built-in NodePool of EKS Auto Mode.
type AutoModeNodePool struct {
	Name         string                           `json:"name"`
	Requirements []corev1.NodeSelectorRequirement `json:"requirements"`
	Taints       []corev1.Taint                   `json:"taints"`
}

var autoMode = sync.OnceValue(func() *AutoModeKnowledge {
	k := &AutoModeKnowledge{}
	if err := yaml.UnmarshalStrict(autoModeYAML, k); err != nil {
		// Embedded at build time and covered by tests: a build defect.
		panic(fmt.Errorf("decode automode/automode.yaml: %w", err))
	}
	return k
})

// AutoMode returns what eksdoctor knows of EKS Auto Mode. Shared: callers must
// not modify it.
func AutoMode() *AutoModeKnowledge { return autoMode() }

// BuiltinNodePool returns a built-in NodePool by name.
func (k *AutoModeKnowledge) BuiltinNodePool(name string) (AutoModeNodePool, bool) {
	for _, np := range k.BuiltinNodePools {
		if np.Name == name {
			return np, true
		}
	}
	return AutoModeNodePool{}, false
}

// BuiltinNodePoolNames are the built-in NodePools' names, sorted.
func (k *AutoModeKnowledge) BuiltinNodePoolNames() []string {
	var out []string
	for _, np := range k.BuiltinNodePools {
		out = append(out, np.Name)
	}
	sort.Strings(out)
	return out
}

// BuiltinComponent says what Auto Mode runs itself in place of an EKS add-on
// (its name), "" when it runs nothing of the kind.
func (k *AutoModeKnowledge) BuiltinComponent(addon string) string {
	for _, c := range k.BuiltinComponents {
		if c.Addon == addon {
			return c.What
		}
	}
	return ""
}
