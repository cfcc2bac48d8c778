package manifest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/eksdoctor/eksdoctor/internal/shared"
)

// TestDecodeTemplateMatchesConverter holds the hand-written pod template decoder
// to the reflection-based converter it speeds up: on every workload of the
// shared corpus and on hand-written edge cases, both give the same template, and
// both refuse the same malformed ones.
func TestDecodeTemplateMatchesConverter(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(shared.Dir(t, "corpus"), "karpenter-provider-aws", "examples", "*", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("corpus: %v", err)
	}
	var templates []map[string]any
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, _ := Decode(f, data)
		for _, o := range objs {
			if tp, ok := templatePath(o); ok && tp != "" {
				if m, ok := o.Get(tp).(map[string]any); ok {
					templates = append(templates, m)
				}
			}
		}
	}
	extra := []string{
		`{spec: {containers: [{name: a, image: b, env: [{name: X, value: "1"}, {name: Y, valueFrom: {fieldRef: {fieldPath: metadata.name}}}], resources: {requests: {cpu: 250m, memory: 1Gi, nvidia.com/gpu: 1}, limits: {memory: 2Gi}}, ports: [{containerPort: 80, hostPort: 8080}], securityContext: {privileged: true}}], tolerations: [{operator: Exists}, {key: k, operator: Equal, value: v, effect: NoSchedule, tolerationSeconds: 30}], nodeSelector: {a: b}, hostNetwork: true, initContainers: [{name: i, resources: {requests: {cpu: 2}}}], overhead: {cpu: 100m}}}`,
		`{metadata: {labels: {app: x}}, spec: {containers: []}}`,
		`{spec: {}}`,
		`{spec: {containers: [{name: a, resources: {}}], tolerations: null, nodeSelector: null}}`,
	}
	for _, e := range extra {
		v, err := ParseValue([]byte(e))
		if err != nil {
			t.Fatal(err)
		}
		templates = append(templates, v.(map[string]any))
	}
	if len(templates) < 15 {
		t.Fatalf("only %d templates", len(templates))
	}
	for i, tmpl := range templates {
		var fast, slow corev1.PodTemplateSpec
		errFast := decodeTemplate(tmpl, &fast)
		errSlow := fromUnstructured(tmpl, &slow)
		if (errFast == nil) != (errSlow == nil) {
			t.Errorf("template %d: hand decoder error %v, converter error %v", i, errFast, errSlow)
			continue
		}
		if !equality.Semantic.DeepEqual(fast, slow) {
			t.Errorf("template %d differs (-converter +hand):\n%s", i, cmp.Diff(slow, fast))
		}
	}

	malformed := []string{
		`{spec: {containers: "x"}}`,
		`{spec: {containers: [{name: 5}]}}`,
		`{spec: {containers: [{resources: {requests: {cpu: true}}}]}}`,
		`{spec: {tolerations: [1]}}`,
		`{spec: {nodeSelector: {a: [1]}}}`,
		`{spec: {containers: [{env: [{name: A, value: [x]}]}]}}`,
	}
	for _, e := range malformed {
		v, err := ParseValue([]byte(e))
		if err != nil {
			t.Fatal(err)
		}
		var fast, slow corev1.PodTemplateSpec
		errFast := decodeTemplate(v.(map[string]any), &fast)
		errSlow := fromUnstructured(v.(map[string]any), &slow)
		if errFast == nil || errSlow == nil {
			t.Errorf("%s: hand decoder error %v, converter error %v; want both to refuse", e, errFast, errSlow)
		}
	}
}
