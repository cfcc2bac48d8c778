package catalog

import (
	"strings"
	"testing"
)

// The Auto Mode knowledge decodes, names two built-in NodePools as AWS
// documents them, and maps every instance label to one the EC2 catalog has.
func TestAutoModeKnowledge(t *testing.T) {
	t.Parallel()
	k := AutoMode()
	if got := strings.Join(k.BuiltinNodePoolNames(), ","); got != "general-purpose,system" {
		t.Errorf("built-in NodePools %s", got)
	}
	sys, ok := k.BuiltinNodePool("system")
	if !ok || len(sys.Taints) != 1 || sys.Taints[0].Key != "CriticalAddonsOnly" || sys.Taints[0].Effect != "NoSchedule" {
		t.Errorf("system's taints: %+v", sys.Taints)
	}
	gp, _ := k.BuiltinNodePool("general-purpose")
	if len(gp.Taints) != 0 {
		t.Errorf("general-purpose has taints: %+v", gp.Taints)
	}
	present := map[string]bool{}
	for _, it := range InstanceTypes() {
		for key := range it.Labels {
			present[key] = true
		}
	}
	for auto, ec2 := range k.InstanceLabels {
		if !strings.HasPrefix(auto, "eks.amazonaws.com/instance-") {
			t.Errorf("%s is not an Auto Mode instance label", auto)
		}
		if !present[ec2] {
			t.Errorf("%s maps to %s, which no instance type of the catalog carries", auto, ec2)
		}
	}
	if k.BlockStorageProvisioner != "ebs.csi.eks.amazonaws.com" || k.NodeClass.Group != "eks.amazonaws.com" || k.BuiltinComponent("coredns") == "" || k.BuiltinComponent("metrics-server") != "" {
		t.Errorf("knowledge: %+v", k)
	}
}
