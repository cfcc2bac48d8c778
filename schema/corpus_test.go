package schema

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// finding is a violation without its hint, for comparing whole lists; hints are
// checked separately where they matter.
type finding struct {
	Path    string
	Kind    Kind
	Move    string
	Message string
}

func findings(vs []Violation) []finding {
	var out []finding
	for _, v := range vs {
		out = append(out, finding{Path: v.Path, Kind: v.Kind, Move: v.Move, Message: v.Message})
	}
	return out
}

// The reference manifests are known to work, so they must validate clean, except
// where the manifest itself is wrong; every such exception is listed with the
// violation the API server reports for it.
func TestReferenceManifests(t *testing.T) {
	known := map[string][]finding{
		// The upstream example writes the group with a version; the v1 CRD's pattern
		// ^[^/]*$ rejects it (since v1.0.0).
		corpusExamplesV1 + "/windows-custom-userdata.yaml NodePool/windows2022": {{
			Path:    "spec.template.spec.nodeClassRef.group",
			Kind:    Invalid,
			Message: `spec.template.spec.nodeClassRef.group: Invalid value: "karpenter.k8s.aws/v1": spec.template.spec.nodeClassRef.group in body should match '^[^/]*$'`,
		}},
		// The blueprint is a template: its README has the user substitute the
		// <<...>> markers with AMI IDs. The markers are not AMI IDs, and selecting AMIs
		// by id without amiFamily is rejected by a CEL rule of every v1 CRD.
		corpusBlueprints + "/update-nodes-with-drift/latest-current-ami.yaml EC2NodeClass/latest-current-ami": {
			{
				Path:    "spec",
				Kind:    Invalid,
				Message: "spec: Invalid value: must specify amiFamily if amiSelectorTerms does not contain an alias",
			},
			{
				Path:    "spec.amiSelectorTerms.0.id",
				Kind:    Invalid,
				Message: `spec.amiSelectorTerms[0].id: Invalid value: "<<AMD64PREVAMI>>": spec.amiSelectorTerms[0].id in body should match 'ami-[0-9a-z]+'`,
			},
			{
				Path:    "spec.amiSelectorTerms.1.id",
				Kind:    Invalid,
				Message: `spec.amiSelectorTerms[1].id: Invalid value: "<<ARM64PREVAMI>>": spec.amiSelectorTerms[1].id in body should match 'ami-[0-9a-z]+'`,
			},
		},
	}
	files := fixtures(t,
		upstream(t, corpusExamplesV1+"/*.yaml"),
		upstream(t, corpusExamplesV1beta1+"/*.yaml"),
		upstream(t, corpusBlueprints+"/*/*.yaml"),
		upstream(t, corpusBlueprints+"/*/*/*.yaml"),
	)
	seen := map[string]bool{}
	checked := 0
	for _, file := range files {
		for _, obj := range karpenterObjects(decodeFile(t, file)) {
			key := corpusName(t, file) + " " + obj.Kind + "/" + obj.Name
			seen[key] = true
			checked++
			got := findings(Validate(obj))
			if diff := cmp.Diff(known[key], got); diff != "" {
				t.Errorf("Validate(%s) (-want +got):\n%s", key, diff)
			}
		}
	}
	for key := range known {
		if !seen[key] {
			t.Errorf("known violation for %s, but the fixture has no such object", key)
		}
	}
	if checked < 80 {
		t.Errorf("validated %d Karpenter objects, want the whole corpus (at least 80)", checked)
	}
}

// The v1beta1 examples are validated against v1beta1: each must be a v1beta1 object.
func TestV1beta1ExamplesAreV1beta1(t *testing.T) {
	for _, file := range fixtures(t, upstream(t, corpusExamplesV1beta1+"/*.yaml")) {
		for _, obj := range karpenterObjects(decodeFile(t, file)) {
			if !strings.HasSuffix(obj.APIVersion, "/v1beta1") {
				t.Errorf("%s: %s/%s has apiVersion %s, want v1beta1", file, obj.Kind, obj.Name, obj.APIVersion)
			}
		}
	}
}

// karpenter-blueprints still sets spec.template.spec.kubelet on its default v1
// NodePool; the v1 API server drops it.
func TestBlueprintsClusterNodePool(t *testing.T) {
	file := upstream(t, corpusBlueprintsCluster)
	tests := []struct {
		address string
		want    []finding
		hint    string
	}{
		{
			address: "kubectl_manifest.karpenter_default_node_pool",
			want: []finding{{
				Path:    "spec.template.spec.kubelet",
				Kind:    UnknownField,
				Move:    MoveKubelet,
				Message: `unknown field "spec.template.spec.kubelet"`,
			}},
			hint: `EC2NodeClass "default"`,
		},
		{
			// Its role and discovery tags are unknown until apply and must not count.
			address: "kubectl_manifest.karpenter_default_ec2_node_class",
		},
	}
	for _, tt := range tests {
		t.Run(tt.address, func(t *testing.T) {
			body, line := heredoc(t, file, tt.address)
			objs := decodeYAML(t, file, line, body)
			if len(objs) != 1 {
				t.Fatalf("heredoc of %s holds %d objects, want 1", tt.address, len(objs))
			}
			vs := Validate(objs[0])
			if diff := cmp.Diff(tt.want, findings(vs)); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
			for _, v := range vs {
				if !strings.Contains(v.Hint, tt.hint) || !strings.Contains(v.Hint, "EC2NodeClass.spec.kubelet") {
					t.Errorf("hint = %q, want it to send kubelet to EC2NodeClass.spec.kubelet of %s", v.Hint, tt.hint)
				}
				if got := objs[0].At(v.Path).Line; got != 115 {
					t.Errorf("line of %s = %d, want 115 (the kubelet: line in karpenter.tf)", v.Path, got)
				}
			}
		})
	}
}
