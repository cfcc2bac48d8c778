package schema

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// fixed wraps Fix's object so it can be validated like the original.
func fixed(f Fixed) *cluster.Object { return object(f.Object) }

func TestFixMovesFixture(t *testing.T) {
	objs := byName(t, "testdata/moves/v1beta1.yaml")
	pool, class := objs["default"], objs["bottlerocket"]
	before, _ := normalize(pool.Content, 0).(map[string]any)

	got := Fix(pool)

	wantPool := map[string]any{
		"apiVersion": "karpenter.sh/v1",
		"kind":       "NodePool",
		"metadata":   map[string]any{"name": "default"},
		"spec": map[string]any{
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"team": "platform"}},
				"spec": map[string]any{
					"nodeClassRef": map[string]any{"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "bottlerocket"},
					"requirements": []any{
						map[string]any{"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": []any{"c", "m", "r"}},
						map[string]any{"key": "karpenter.sh/capacity-type", "operator": "In", "values": []any{"spot", "on-demand"}},
					},
					"expireAfter": "168h",
				},
			},
			"limits":     map[string]any{"cpu": "1000"},
			"disruption": map[string]any{"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "0s"},
		},
	}
	if diff := cmp.Diff(wantPool, got.Object); diff != "" {
		t.Errorf("fixed NodePool (-want +got):\n%s", diff)
	}
	wantPatch := map[string]any{"spec": map[string]any{"kubelet": map[string]any{
		"maxPods":        int64(110),
		"systemReserved": map[string]any{"cpu": "100m", "memory": "100Mi"},
		"evictionHard":   map[string]any{"memory.available": "5%"},
	}}}
	if diff := cmp.Diff(wantPatch, got.NodeClassPatch); diff != "" {
		t.Errorf("EC2NodeClass patch (-want +got):\n%s", diff)
	}
	if got.NodeClassName != "bottlerocket" {
		t.Errorf("NodeClassName = %q, want %q", got.NodeClassName, "bottlerocket")
	}
	wantChanges := []Change{
		{Move: MoveAPIVersion, Path: "apiVersion", Description: "set apiVersion: karpenter.sh/v1 (was karpenter.sh/v1beta1)"},
		{Move: MoveKubelet, Path: "spec.template.spec.kubelet", Description: `moved kubelet to spec.kubelet of EC2NodeClass "bottlerocket"`},
		{Move: MoveNodeClassRef, Path: "spec.template.spec.nodeClassRef.apiVersion", Description: "removed nodeClassRef.apiVersion: karpenter.k8s.aws/v1beta1 (v1 names the group instead)"},
		{Move: MoveNodeClassRef, Path: "spec.template.spec.nodeClassRef.group", Description: "set nodeClassRef.group: karpenter.k8s.aws"},
		{Move: MoveExpireAfter, Path: "spec.disruption.expireAfter", Description: "moved expireAfter: 168h to spec.template.spec.expireAfter"},
		{Move: MoveConsolidation, Path: "spec.disruption.consolidationPolicy", Description: "renamed consolidationPolicy WhenUnderutilized to WhenEmptyOrUnderutilized"},
		{Move: MoveConsolidateAfter, Path: "spec.disruption.consolidateAfter", Description: "added consolidateAfter: 0s, which v1 requires (consolidate as soon as possible, as v1beta1 did)"},
	}
	if diff := cmp.Diff(wantChanges, got.Changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, pool.Content); diff != "" {
		t.Errorf("Fix changed its input (-before +after):\n%s", diff)
	}
	if vs := Validate(fixed(got)); len(vs) != 0 {
		t.Errorf("fixed NodePool is not valid v1:%s", describeViolations(vs))
	}

	classFix := Fix(class)
	patched := ApplyMergePatch(classFix.Object, got.NodeClassPatch)
	if vs := Validate(object(patched)); len(vs) != 0 {
		t.Errorf("fixed and patched EC2NodeClass is not valid v1:%s", describeViolations(vs))
	}
	if diff := cmp.Diff([]any{map[string]any{"alias": "bottlerocket@latest"}}, lookupPath(patched, "spec.amiSelectorTerms")); diff != "" {
		t.Errorf("amiSelectorTerms (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantPatch["spec"].(map[string]any)["kubelet"], lookupPath(patched, "spec.kubelet")); diff != "" {
		t.Errorf("kubelet on the EC2NodeClass (-want +got):\n%s", diff)
	}
}

// Every v1beta1 example, fixed, and with the kubelet patches applied to the
// EC2NodeClasses they name, is a valid v1 object, except what needs a decision.
func TestFixV1beta1Examples(t *testing.T) {
	stillInvalid := map[string][]want{
		"ubuntu-kubelet-log-query.yaml EC2NodeClass/ubuntu": {
			{Path: "spec.amiFamily", Kind: NotSupported, Move: MoveUbuntu},
			{Path: "spec.amiSelectorTerms", Kind: Required, Move: MoveAMISelectorTerms},
		},
	}
	for _, file := range fixtures(t, upstream(t, corpusExamplesV1beta1+"/*.yaml")) {
		objs := karpenterObjects(decodeFile(t, file))
		fixes := map[*cluster.Object]Fixed{}
		patches := map[string]map[string]any{}
		for _, o := range objs {
			f := Fix(o)
			fixes[o] = f
			if f.NodeClassPatch != nil {
				patches[f.NodeClassName] = f.NodeClassPatch
			}
		}
		for _, o := range objs {
			content := fixes[o].Object
			if p, ok := patches[o.Name]; ok && o.Kind == "EC2NodeClass" {
				content = ApplyMergePatch(content, p)
			}
			key := filepath.Base(file) + " " + o.Kind + "/" + o.Name
			t.Run(key, func(t *testing.T) {
				checkViolations(t, Validate(object(content)), stillInvalid[key])
			})
		}
	}
}

func TestFixCases(t *testing.T) {
	tests := []struct {
		name        string
		yaml        string
		want        map[string]any // path → value in the fixed object
		wantChanges []string       // change paths, in order
		wantPatch   map[string]any
	}{
		{
			name: "expireAfter already in the template wins",
			yaml: `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: a}
spec:
  template:
    spec:
      expireAfter: 24h
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: []
  disruption:
    consolidationPolicy: WhenEmpty
    consolidateAfter: 1m
    expireAfter: 168h
`,
			want:        map[string]any{"spec.template.spec.expireAfter": "24h", "spec.disruption.consolidateAfter": "1m"},
			wantChanges: []string{"spec.disruption.expireAfter"},
		},
		{
			name: "group written with a version, kind missing",
			yaml: `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: a}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws/v1, name: default}
      requirements: []
`,
			want:        map[string]any{"spec.template.spec.nodeClassRef.group": "karpenter.k8s.aws", "spec.template.spec.nodeClassRef.kind": "EC2NodeClass"},
			wantChanges: []string{"spec.template.spec.nodeClassRef.group", "spec.template.spec.nodeClassRef.kind"},
		},
		{
			name: "kubelet fields Karpenter never applied are left out",
			yaml: `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: a}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: []
      kubelet:
        containerRuntime: containerd
        systemReserved: {cpu: 100m}
`,
			wantChanges: []string{"spec.template.spec.kubelet", "spec.template.spec.kubelet"},
			wantPatch:   map[string]any{"spec": map[string]any{"kubelet": map[string]any{"systemReserved": map[string]any{"cpu": "100m"}}}},
		},
		{
			name: "no disruption block: the API server defaults all of it",
			yaml: `apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata: {name: a}
spec:
  template:
    spec:
      nodeClassRef: {name: default}
      requirements: []
`,
			want:        map[string]any{"spec.disruption": nil, "apiVersion": "karpenter.sh/v1"},
			wantChanges: []string{"apiVersion", "spec.template.spec.nodeClassRef.group", "spec.template.spec.nodeClassRef.kind"},
		},
		{
			name: "NodeClaim",
			yaml: `apiVersion: karpenter.sh/v1beta1
kind: NodeClaim
metadata: {name: a}
spec:
  nodeClassRef: {apiVersion: karpenter.k8s.aws/v1beta1, kind: EC2NodeClass, name: default}
  requirements: []
  kubelet: {maxPods: 20}
`,
			want:        map[string]any{"spec.nodeClassRef.group": "karpenter.k8s.aws", "spec.kubelet": nil},
			wantChanges: []string{"apiVersion", "spec.kubelet", "spec.nodeClassRef.apiVersion", "spec.nodeClassRef.group"},
			wantPatch:   map[string]any{"spec": map[string]any{"kubelet": map[string]any{"maxPods": int64(20)}}},
		},
		{
			name: "instance profile ARN and a Custom family",
			yaml: `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: a}
spec:
  amiFamily: Custom
  instanceProfile: arn:aws:iam::111122223333:instance-profile/path/KarpenterNodeInstanceProfile
`,
			want:        map[string]any{"spec.instanceProfile": "KarpenterNodeInstanceProfile", "spec.amiSelectorTerms": nil},
			wantChanges: []string{"spec.instanceProfile"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Fix(decodeYAML(t, "test.yaml", 1, []byte(tt.yaml))[0])
			for path, want := range tt.want {
				if diff := cmp.Diff(want, lookupPath(got.Object, path)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", path, diff)
				}
			}
			var paths []string
			for _, c := range got.Changes {
				paths = append(paths, c.Path)
			}
			if diff := cmp.Diff(tt.wantChanges, paths); diff != "" {
				t.Errorf("changed paths (-want +got):\n%s\nchanges: %+v", diff, got.Changes)
			}
			if diff := cmp.Diff(tt.wantPatch, got.NodeClassPatch); diff != "" {
				t.Errorf("EC2NodeClass patch (-want +got):\n%s", diff)
			}
		})
	}
}

// The blueprints NodePool's kubelet block moves to its EC2NodeClass; containerRuntime,
// which no Karpenter kubelet configuration has, is left out and said so.
func TestFixBlueprintsCluster(t *testing.T) {
	file := upstream(t, corpusBlueprintsCluster)
	body, line := heredoc(t, file, "kubectl_manifest.karpenter_default_node_pool")
	pool := decodeYAML(t, file, line, body)[0]
	body, line = heredoc(t, file, "kubectl_manifest.karpenter_default_ec2_node_class")
	class := decodeYAML(t, file, line, body)[0]

	f := Fix(pool)
	if vs := Validate(fixed(f)); len(vs) != 0 {
		t.Errorf("fixed NodePool:%s", describeViolations(vs))
	}
	want := Change{Move: MoveKubelet, Path: "spec.template.spec.kubelet", Description: "left out kubelet fields Karpenter never applied: containerRuntime"}
	if len(f.Changes) != 2 || f.Changes[1] != want {
		t.Errorf("changes = %+v, want the kubelet move and then %+v", f.Changes, want)
	}
	patched := ApplyMergePatch(Fix(class).Object, f.NodeClassPatch)
	if vs := Validate(object(patched)); len(vs) != 0 {
		t.Errorf("patched EC2NodeClass:%s", describeViolations(vs))
	}
	if diff := cmp.Diff(map[string]any{"cpu": "100m", "memory": "100Mi"}, lookupPath(patched, "spec.kubelet.systemReserved")); diff != "" {
		t.Errorf("spec.kubelet.systemReserved (-want +got):\n%s", diff)
	}
}

func TestFixOtherObjects(t *testing.T) {
	for _, obj := range []*cluster.Object{
		nil,
		object(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}),
		object(map[string]any{"apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay"}),
	} {
		if got := Fix(obj); got.Object != nil || got.Changes != nil {
			t.Errorf("Fix(%v) = %+v, want nothing", obj, got)
		}
	}
}

func TestApplyMergePatch(t *testing.T) {
	tests := []struct {
		name  string
		doc   map[string]any
		patch map[string]any
		want  map[string]any
	}{
		{
			name:  "merge nested objects",
			doc:   map[string]any{"spec": map[string]any{"role": "r", "kubelet": map[string]any{"maxPods": int64(10), "podsPerCore": int64(2)}}},
			patch: map[string]any{"spec": map[string]any{"kubelet": map[string]any{"maxPods": int64(110)}}},
			want:  map[string]any{"spec": map[string]any{"role": "r", "kubelet": map[string]any{"maxPods": int64(110), "podsPerCore": int64(2)}}},
		},
		{
			name:  "null deletes, lists replace",
			doc:   map[string]any{"a": "x", "b": []any{"1", "2"}},
			patch: map[string]any{"a": nil, "b": []any{"3"}},
			want:  map[string]any{"b": []any{"3"}},
		},
		{
			name:  "object replaces a scalar",
			doc:   map[string]any{"spec": "${var.spec}"},
			patch: map[string]any{"spec": map[string]any{"kubelet": map[string]any{}}},
			want:  map[string]any{"spec": map[string]any{"kubelet": map[string]any{}}},
		},
		{
			name: "nil document",
			want: map[string]any{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ApplyMergePatch(tt.doc, tt.patch)); diff != "" {
				t.Errorf("ApplyMergePatch (-want +got):\n%s", diff)
			}
		})
	}
}
