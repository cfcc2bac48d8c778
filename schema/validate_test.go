package schema

import (
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// want is a violation as a test states it: Hint is a fragment the hint must contain.
type want struct {
	Path string
	Kind Kind
	Move string
	Hint string
}

// checkViolations compares the violations with the wanted ones: path, kind and move
// exactly, the hint by fragment.
func checkViolations(t *testing.T, got []Violation, wants []want) {
	t.Helper()
	type key struct {
		Path string
		Kind Kind
		Move string
	}
	var gotKeys, wantKeys []key
	for _, v := range got {
		gotKeys = append(gotKeys, key{Path: v.Path, Kind: v.Kind, Move: v.Move})
	}
	for _, w := range wants {
		wantKeys = append(wantKeys, key{Path: w.Path, Kind: w.Kind, Move: w.Move})
	}
	if diff := cmp.Diff(wantKeys, gotKeys); diff != "" {
		t.Errorf("violations (-want +got):\n%s\ngot: %s", diff, describeViolations(got))
		return
	}
	for i, w := range wants {
		if !strings.Contains(got[i].Hint, w.Hint) {
			t.Errorf("hint of %s = %q, want it to contain %q", w.Path, got[i].Hint, w.Hint)
		}
	}
}

func describeViolations(vs []Violation) string {
	var b strings.Builder
	for _, v := range vs {
		b.WriteString("\n  " + v.Message + " [" + v.Kind.String() + "] " + v.Move + " | " + v.Hint)
	}
	return b.String()
}

// byName indexes the objects of a fixture by metadata.name.
func byName(t *testing.T, file string) map[string]*cluster.Object {
	t.Helper()
	out := map[string]*cluster.Object{}
	for _, o := range decodeFile(t, file) {
		out[o.Name] = o
	}
	return out
}

func TestValidateInvalidV1(t *testing.T) {
	objs := byName(t, "testdata/invalid/v1.yaml")
	tests := []struct {
		name string
		want []want
	}{
		{name: "np-kubelet", want: []want{
			{Path: "spec.template.spec.kubelet", Kind: UnknownField, Move: MoveKubelet, Hint: `spec.kubelet of EC2NodeClass "default"`},
		}},
		{name: "np-expireafter-in-disruption", want: []want{
			{Path: "spec.disruption.expireAfter", Kind: UnknownField, Move: MoveExpireAfter, Hint: "nodes expire after 720h instead of 168h"},
		}},
		{name: "np-when-underutilized", want: []want{
			{Path: "spec.disruption.consolidationPolicy", Kind: NotSupported, Move: MoveConsolidation, Hint: "WhenEmptyOrUnderutilized"},
		}},
		{name: "np-no-consolidateafter", want: []want{
			{Path: "spec.disruption.consolidateAfter", Kind: Required, Move: MoveConsolidateAfter, Hint: "consolidateAfter: 0s"},
		}},
		{name: "np-nodeclassref-name-only", want: []want{
			{Path: "spec.template.spec.nodeClassRef.group", Kind: Required, Move: MoveNodeClassRef, Hint: "group: karpenter.k8s.aws"},
			{Path: "spec.template.spec.nodeClassRef.kind", Kind: Required, Move: MoveNodeClassRef, Hint: "kind: EC2NodeClass"},
		}},
		{name: "np-nodeclassref-apiversion", want: []want{
			{Path: "spec.template.spec.nodeClassRef.apiVersion", Kind: UnknownField, Move: MoveNodeClassRef, Hint: "replace apiVersion with group: karpenter.k8s.aws"},
			{Path: "spec.template.spec.nodeClassRef.group", Kind: Required, Move: MoveNodeClassRef, Hint: "group: karpenter.k8s.aws"},
		}},
		{name: "np-label-karpenter-domain", want: []want{
			{Path: "spec.template.metadata.labels", Kind: Invalid, Hint: "karpenter.sh label domain belongs to Karpenter"},
		}},
		{name: "np-label-nodepool", want: []want{
			{Path: "spec.template.metadata.labels", Kind: Invalid, Hint: "pods' nodeSelector"},
		}},
		{name: "np-requirement-hostname", want: []want{
			{Path: "spec.template.spec.requirements.0.key", Kind: Invalid, Hint: "cannot set or require a hostname"},
		}},
		{name: "np-requirement-aws-domain", want: []want{
			{Path: "spec.template.spec.requirements.0.key", Kind: Invalid, Hint: "karpenter.k8s.aws label domain belongs to Karpenter"},
		}},
		{name: "np-requirement-well-known"},
		{name: "np-requirement-in-without-values", want: []want{
			{Path: "spec.template.spec.requirements", Kind: Invalid},
		}},
		{name: "np-requirement-gt-not-a-number", want: []want{
			{Path: "spec.template.spec.requirements", Kind: Invalid},
		}},
		{name: "np-budget-schedule-without-duration", want: []want{
			{Path: "spec.disruption.budgets", Kind: Invalid},
		}},
		{name: "np-typos", want: []want{
			{Path: "spec.disruption.consolidateAfter", Kind: Required, Move: MoveConsolidateAfter},
			{Path: "spec.disruption.consolidateafter", Kind: UnknownField, Hint: `did you mean "consolidateAfter"?`},
			{Path: "spec.template.spec.requirement", Kind: UnknownField, Hint: `did you mean "requirements"?`},
			{Path: "spec.template.spec.requirements", Kind: Required},
		}},
		{name: "np-bad-values", want: []want{
			{Path: "spec.template.spec.expireAfter", Kind: Invalid},
			{Path: "spec.template.spec.taints.0.effect", Kind: NotSupported},
			{Path: "spec.weight", Kind: Invalid},
		}},
		{name: "Default_Pool", want: []want{
			{Path: "metadata.lables", Kind: UnknownField, Hint: `did you mean "labels"?`},
			{Path: "metadata.name", Kind: Invalid},
		}},
		{name: "np-no-template-spec", want: []want{
			{Path: "spec.template.spec", Kind: Required},
		}},
		{name: "nc-no-ami-selector-terms", want: []want{
			{Path: "spec.amiSelectorTerms", Kind: Required, Move: MoveAMISelectorTerms, Hint: "alias: al2023@latest"},
		}},
		{name: "nc-role-and-instance-profile", want: []want{
			{Path: "spec", Kind: Invalid, Hint: "not both and not neither"},
		}},
		{name: "nc-no-role-no-instance-profile", want: []want{
			{Path: "spec", Kind: Invalid, Hint: "not both and not neither"},
		}},
		{name: "nc-instance-profile-arn", want: []want{
			{Path: "spec.instanceProfile", Kind: Invalid, Hint: "use instanceProfile: KarpenterNodeInstanceProfile"},
		}},
		{name: "nc-alias-unknown-family", want: []want{
			{Path: "spec.amiSelectorTerms.0.alias", Kind: Invalid},
		}},
		{name: "nc-alias-with-other-terms", want: []want{
			{Path: "spec.amiSelectorTerms", Kind: Invalid},
		}},
		{name: "nc-alias-family-mismatch", want: []want{
			{Path: "spec", Kind: Invalid},
		}},
		{name: "nc-ubuntu", want: []want{
			{Path: "spec.amiFamily", Kind: NotSupported, Move: MoveUbuntu, Hint: "removed the Ubuntu AMI family"},
			{Path: "spec.amiSelectorTerms", Kind: Required, Move: MoveAMISelectorTerms},
		}},
		{name: "nc-restricted-tags-and-empty-terms", want: []want{
			{Path: "spec.subnetSelectorTerms", Kind: Invalid},
			{Path: "spec.subnetSelectorTerms", Kind: Invalid},
			{Path: "spec.tags", Kind: Invalid},
		}},
		{name: "nc-bad-values", want: []want{
			{Path: "spec.amiSelectorTerms.0.alias", Kind: Invalid},
			{Path: "spec.blockDeviceMappings", Kind: Invalid},
			{Path: "spec.metadataOptions.httpPutResponseHopLimit", Kind: Invalid},
		}},
		{name: "nc-kubelet-free-form"},
		{name: "claim-v1beta1-fields", want: []want{
			{Path: "spec.kubelet", Kind: UnknownField, Move: MoveNodeClaimKubelet, Hint: "EC2NodeClass.spec.kubelet"},
			{Path: "spec.nodeClassRef.group", Kind: Required, Move: MoveNodeClassRef},
			{Path: "spec.nodeClassRef.kind", Kind: Required, Move: MoveNodeClassRef},
		}},
	}
	if len(tests) != len(objs) {
		t.Errorf("%d cases for %d fixture objects: every object needs a case", len(tests), len(objs))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj, ok := objs[tt.name]
			if !ok {
				t.Fatalf("no object %q in the fixture", tt.name)
			}
			checkViolations(t, Validate(obj), tt.want)
		})
	}
}

func TestValidateInvalidV1beta1(t *testing.T) {
	objs := byName(t, "testdata/invalid/v1beta1.yaml")
	tests := []struct {
		name string
		want []want
	}{
		{name: "b-consolidateafter-with-when-underutilized", want: []want{{Path: "spec.disruption", Kind: Invalid}}},
		{name: "b-when-empty-without-consolidateafter", want: []want{{Path: "spec.disruption", Kind: Invalid}}},
		{name: "b-v1-fields", want: []want{
			{Path: "spec.template.spec.expireAfter", Kind: UnknownField},
			{Path: "spec.template.spec.kubelet.kubeReserved", Kind: Invalid},
			{Path: "spec.template.spec.nodeClassRef.group", Kind: UnknownField},
		}},
		{name: "b-nodeclass-without-family", want: []want{{Path: "spec.amiFamily", Kind: Required}}},
		{name: "b-nodeclass-alias", want: []want{
			{Path: "spec.amiSelectorTerms", Kind: Invalid},
			{Path: "spec.amiSelectorTerms.0.alias", Kind: UnknownField, Hint: "it is a karpenter.k8s.aws/v1 field"},
		}},
	}
	if len(tests) != len(objs) {
		t.Errorf("%d cases for %d fixture objects: every object needs a case", len(tests), len(objs))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkViolations(t, Validate(objs[tt.name]), tt.want)
		})
	}
}

// A v1beta1 NodePool and EC2NodeClass with only the apiVersion changed to v1 report
// every moved field, each with its explanation.
func TestV1beta1ObjectsAsV1(t *testing.T) {
	objs := byName(t, "testdata/moves/v1beta1.yaml")
	tests := []struct {
		name       string
		apiVersion string
		want       []want
	}{
		{name: "default", apiVersion: "karpenter.sh/v1", want: []want{
			{Path: "spec.disruption.consolidateAfter", Kind: Required, Move: MoveConsolidateAfter, Hint: "requires consolidateAfter with every consolidationPolicy"},
			{Path: "spec.disruption.consolidationPolicy", Kind: NotSupported, Move: MoveConsolidation, Hint: "renamed WhenEmptyOrUnderutilized"},
			{Path: "spec.disruption.expireAfter", Kind: UnknownField, Move: MoveExpireAfter, Hint: "spec.template.spec.expireAfter: 168h"},
			{Path: "spec.template.spec.kubelet", Kind: UnknownField, Move: MoveKubelet, Hint: `EC2NodeClass "bottlerocket"`},
			{Path: "spec.template.spec.nodeClassRef.apiVersion", Kind: UnknownField, Move: MoveNodeClassRef, Hint: "group: karpenter.k8s.aws"},
			{Path: "spec.template.spec.nodeClassRef.group", Kind: Required, Move: MoveNodeClassRef, Hint: "group: karpenter.k8s.aws and kind: EC2NodeClass"},
		}},
		{name: "bottlerocket", apiVersion: "karpenter.k8s.aws/v1", want: []want{
			{Path: "spec.amiSelectorTerms", Kind: Required, Move: MoveAMISelectorTerms, Hint: "alias: bottlerocket@latest"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := objs[tt.name]
			if got := Validate(obj); len(got) != 0 {
				t.Fatalf("the fixture is not valid v1beta1:%s", describeViolations(got))
			}
			checkViolations(t, Validate(withAPIVersion(obj, tt.apiVersion)), tt.want)
		})
	}
}

func TestValidateFor(t *testing.T) {
	moved := byName(t, "testdata/moves/v1beta1.yaml")
	nodePool := func(spec string) *cluster.Object {
		return decodeYAML(t, "test.yaml", 1, []byte(`apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: static
spec:
`+spec))[0]
	}
	static := nodePool(`  replicas: 3
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
`)
	tests := []struct {
		name    string
		obj     *cluster.Object
		release Release
		want    []want
	}{
		{
			name:    "v1beta1 NodePool on a release without v1beta1",
			obj:     moved["default"],
			release: Current,
			want: []want{
				{Path: "apiVersion", Kind: Removed, Move: MoveAPIVersion, Hint: "Karpenter 1.1 removed v1beta1"},
				{Path: "spec.disruption.consolidateAfter", Kind: Required, Move: MoveConsolidateAfter},
				{Path: "spec.disruption.consolidationPolicy", Kind: NotSupported, Move: MoveConsolidation},
				{Path: "spec.disruption.expireAfter", Kind: UnknownField, Move: MoveExpireAfter},
				{Path: "spec.template.spec.kubelet", Kind: UnknownField, Move: MoveKubelet},
				{Path: "spec.template.spec.nodeClassRef.apiVersion", Kind: UnknownField, Move: MoveNodeClassRef},
				{Path: "spec.template.spec.nodeClassRef.group", Kind: Required, Move: MoveNodeClassRef},
			},
		},
		{
			name:    "v1beta1 NodePool on Karpenter 1.0, which still serves v1beta1",
			obj:     moved["default"],
			release: V1_0,
		},
		{
			name:    "v1beta1 NodePool on v0.37",
			obj:     moved["default"],
			release: V0_37,
		},
		{
			name:    "static NodePool on Karpenter 1.0",
			obj:     static,
			release: V1_0,
			want: []want{
				{Path: "spec.replicas", Kind: UnknownField, Hint: "exists in newer Karpenter CRDs, the current (chart 1.14.1) ones"},
			},
		},
		{
			name:    "static NodePool on the current release",
			obj:     static,
			release: Current,
		},
		{
			name:    "unknown release",
			obj:     static,
			release: Release("v9.9.9"),
			want:    []want{{Kind: Unchecked}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ValidateFor(tt.obj, tt.release)
			if tt.want != nil && tt.want[0].Kind == Removed && len(got) > 0 && got[0].Kind != Removed {
				t.Errorf("first violation = %s, want the Removed apiVersion first", got[0].Message)
			}
			// ValidateFor lists the Removed violation first; compare the rest sorted.
			if len(got) > 1 && got[0].Kind == Removed {
				got = append(got[:1], sortViolations(got[1:])...)
			}
			checkViolations(t, got, tt.want)
		})
	}
}

// Values unknown before apply are never the reason for a violation; what does not
// depend on them still is.
func TestUnknownValues(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []want
	}{
		{
			name: "placeholders where patterns, types and rules apply",
			yaml: `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: ${var.name}
spec:
  weight: ${var.weight}
  template:
    metadata:
      labels: ${local.labels}
    spec:
      expireAfter: ${var.expire_after}
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: "${var.node_class}"}
      requirements:
        - key: ${var.key}
          operator: In
          values: ${jsonencode(var.values)}
  disruption:
    consolidationPolicy: ${var.policy}
    consolidateAfter: ${var.after}
`,
		},
		{
			name: "a placeholder does not hide a missing field or a dropped one",
			yaml: `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef: {name: "${var.node_class}"}
      requirements: [{key: kubernetes.io/arch, operator: In, values: ["${var.arch}"]}]
      kubelet: {maxPods: "${var.max_pods}"}
`,
			want: []want{
				{Path: "spec.template.spec.kubelet", Kind: UnknownField, Move: MoveKubelet},
				{Path: "spec.template.spec.nodeClassRef.group", Kind: Required, Move: MoveNodeClassRef},
				{Path: "spec.template.spec.nodeClassRef.kind", Kind: Required, Move: MoveNodeClassRef},
			},
		},
		{
			name: "rules that only test presence still apply",
			yaml: `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  role: ${module.karpenter.node_iam_role_name}
  instanceProfile: ${aws_iam_instance_profile.nodes.name}
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: "${module.eks.cluster_name}"}}]
  securityGroupSelectorTerms: [{id: "${aws_security_group.nodes.id}"}]
`,
			want: []want{{Path: "spec", Kind: Invalid, Hint: "not both and not neither"}},
		},
		{
			name: "an unknown instance profile is not judged an ARN",
			yaml: `apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  instanceProfile: arn:aws:iam::${data.aws_caller_identity.current.account_id}:instance-profile/nodes
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkViolations(t, Validate(decodeYAML(t, "test.yaml", 1, []byte(tt.yaml))[0]), tt.want)
		})
	}
}

func TestValidateOtherObjects(t *testing.T) {
	tests := []struct {
		name string
		obj  *cluster.Object
		want []want
	}{
		{name: "nil object"},
		{name: "Deployment", obj: object(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "x"}})},
		{name: "unserved Karpenter version", obj: object(map[string]any{"apiVersion": "karpenter.sh/v2", "kind": "NodePool"})},
		{name: "unknown Karpenter kind", obj: object(map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "Machine"})},
		{name: "EKS Auto Mode NodeClass", obj: object(map[string]any{"apiVersion": "eks.amazonaws.com/v1", "kind": "NodeClass"})},
		{
			name: "Provisioner",
			obj:  object(map[string]any{"apiVersion": "karpenter.sh/v1alpha5", "kind": "Provisioner", "metadata": map[string]any{"name": "default"}}),
			want: []want{{Path: "kind", Kind: Removed, Move: MoveV1alpha5, Hint: "rewrite it as a NodePool (karpenter.sh/v1)"}},
		},
		{
			name: "AWSNodeTemplate",
			obj:  object(map[string]any{"apiVersion": "karpenter.k8s.aws/v1alpha1", "kind": "AWSNodeTemplate", "metadata": map[string]any{"name": "default"}}),
			want: []want{{Path: "kind", Kind: Removed, Move: MoveV1alpha5, Hint: "rewrite it as an EC2NodeClass"}},
		},
		{
			name: "NodeOverlay",
			obj: object(map[string]any{"apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay", "metadata": map[string]any{"name": "gpu"},
				"spec": map[string]any{"requirements": []any{}, "capacity": map[string]any{"example.com/gpu-slice": "4"}, "weigth": int64(10)}}),
			want: []want{{Path: "spec.weigth", Kind: UnknownField, Hint: `did you mean "weight"?`}},
		},
		{
			name: "NodePool with nothing but its type",
			obj:  object(map[string]any{"apiVersion": "karpenter.sh/v1", "kind": "NodePool"}),
			want: []want{{Path: "metadata.name", Kind: Required}, {Path: "spec", Kind: Required}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkViolations(t, Validate(tt.obj), tt.want)
		})
	}
}

func TestDefaults(t *testing.T) {
	obj := byName(t, "testdata/moves/v1beta1.yaml")["default"]
	got := Defaults(withAPIVersion(obj, "karpenter.sh/v1"))
	want := []Default{
		{Path: "spec.disruption.budgets", Value: []any{map[string]any{"nodes": "10%"}}},
		{Path: "spec.template.spec.expireAfter", Value: "720h"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Defaults (-want +got):\n%s", diff)
	}
	if got := Defaults(object(map[string]any{"apiVersion": "v1", "kind": "Pod"})); got != nil {
		t.Errorf("Defaults(Pod) = %v, want nil", got)
	}
}

func TestMovesTable(t *testing.T) {
	ids := map[string]bool{}
	for _, m := range Moves() {
		if ids[m.ID] {
			t.Errorf("move %q listed twice", m.ID)
		}
		ids[m.ID] = true
		if m.ID == "" || m.Kind == "" || m.V1beta1 == "" || m.V1 == "" || m.Effect == "" {
			t.Errorf("move %+v: ID, Kind, V1beta1, V1 and Effect must all be set", m)
		}
	}
	for _, id := range []string{MoveAPIVersion, MoveV1alpha5, MoveKubelet, MoveNodeClaimKubelet, MoveExpireAfter,
		MoveConsolidation, MoveConsolidateAfter, MoveNodeClassRef, MoveAMISelectorTerms, MoveUbuntu} {
		if _, ok := moveByID(id); !ok {
			t.Errorf("move %q is referenced but not in the table", id)
		}
	}
	moves := Moves()
	moves[0].ID = "changed"
	if Moves()[0].ID == "changed" {
		t.Error("Moves returns the table itself; callers could change it")
	}
}

func TestDottedPath(t *testing.T) {
	tests := []struct{ in, want string }{
		{in: "spec.template.spec.requirements[0].key", want: "spec.template.spec.requirements.0.key"},
		{in: "spec.template.metadata.labels[karpenter.sh/team]", want: "spec.template.metadata.labels.karpenter.sh/team"},
		{in: "<nil>", want: ""},
		{in: "spec", want: "spec"},
	}
	for _, tt := range tests {
		if got := dottedPath(tt.in); got != tt.want {
			t.Errorf("dottedPath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSelfReferences(t *testing.T) {
	tests := []struct {
		rule   string
		fields []string
		whole  bool
	}{
		{rule: "(has(self.role) && !has(self.instanceProfile)) || (!has(self.role) && has(self.instanceProfile))"},
		{rule: "self.amiSelectorTerms.exists(x, has(x.alias)) ? true : has(self.amiFamily)", fields: []string{"amiSelectorTerms"}},
		{rule: "self.all(x, x != 'karpenter.sh/nodepool')", whole: true},
		{rule: "self != ''", whole: true},
		{rule: "self.group == oldSelf.group", fields: []string{"group"}},
	}
	for _, tt := range tests {
		fields, whole := selfReferences(tt.rule)
		if diff := cmp.Diff(tt.fields, fields); diff != "" || whole != tt.whole {
			t.Errorf("selfReferences(%q) = %v, %v; want %v, %v", tt.rule, fields, whole, tt.fields, tt.whole)
		}
	}
}

// Checks validate objects in parallel; the compiled schemas and the rule memo are
// shared, and results must not depend on what else runs.
func TestValidateConcurrently(t *testing.T) {
	var objs []*cluster.Object
	for _, f := range fixtures(t, "testdata/invalid/*.yaml", upstream(t, corpusExamplesV1+"/*.yaml")) {
		objs = append(objs, karpenterObjects(decodeFile(t, f))...)
	}
	want := make([][]Violation, len(objs))
	for i, o := range objs {
		want[i] = Validate(o)
	}
	forgetRuleResults()
	var wg sync.WaitGroup
	got := make([][][]Violation, 4)
	for g := range got {
		got[g] = make([][]Violation, len(objs))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range objs {
				// Each goroutine starts elsewhere, so they race on the same memo entries.
				j := (i + g*len(objs)/len(got)) % len(objs)
				got[g][j] = Validate(objs[j])
			}
		}()
	}
	wg.Wait()
	for g := range got {
		for i := range objs {
			if diff := cmp.Diff(want[i], got[g][i]); diff != "" {
				t.Errorf("goroutine %d, %s/%s (-sequential +concurrent):\n%s", g, objs[i].Kind, objs[i].Name, diff)
			}
		}
	}
}

func TestReleaseFor(t *testing.T) {
	tests := []struct {
		version string
		want    Release
		ok      bool
	}{
		{version: "0.31.4"},
		{version: "v0.32.10", want: V0_37, ok: true},
		{version: "0.37.7", want: V0_37, ok: true},
		{version: "1.0.0", want: V1_0, ok: true},
		{version: "v1.0.8", want: V1_0, ok: true},
		{version: "1.1.0", want: Current, ok: true},
		{version: "1.8.3", want: Current, ok: true},
		{version: "2.0.0", want: Current, ok: true},
		{version: "${var.karpenter_version}"},
		{version: "latest"},
		{version: ""},
	}
	for _, tt := range tests {
		got, ok := ReleaseFor(tt.version)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ReleaseFor(%q) = %q, %v; want %q, %v", tt.version, got, ok, tt.want, tt.ok)
		}
	}
}

// Which API versions each Karpenter version serves: v1alpha5 up to v0.32 (its
// migration release), v1beta1 from v0.32 to 1.0, v1 from 1.0.
func TestServesAPI(t *testing.T) {
	tests := []struct {
		api, version  string
		served, known bool
	}{
		{"karpenter.sh/v1alpha5", "0.31.4", true, true},
		{"karpenter.sh/v1alpha5", "v0.32.10", true, true},
		{"karpenter.sh/v1alpha5", "0.33.0", false, true},
		{"karpenter.k8s.aws/v1alpha1", "0.37.0", false, true},
		{"karpenter.sh/v1beta1", "0.31.4", false, true},
		{"karpenter.sh/v1beta1", "0.32.0", true, true},
		{"karpenter.sh/v1beta1", "1.0.8", true, true},
		{"karpenter.sh/v1beta1", "1.1.0", false, true},
		{"karpenter.sh/v1", "0.37.7", false, true},
		{"karpenter.k8s.aws/v1", "1.0.0", true, true},
		{"karpenter.sh/v1", "1.14.1", true, true},
		{"karpenter.sh/v2", "1.14.1", false, false},
		{"karpenter.sh/v1", "latest", false, false},
	}
	for _, tc := range tests {
		served, known := ServesAPI(tc.api, tc.version)
		if served != tc.served || known != tc.known {
			t.Errorf("ServesAPI(%q, %q) = %v, %v; want %v, %v", tc.api, tc.version, served, known, tc.served, tc.known)
		}
	}
}
