package manifest

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/shared"
)

// TestDecodeTemplateMatchesConverter holds the hand-written pod template decoder
// to the reflection-based converter it speeds up: on every workload of the
// shared corpus and on hand-written edge cases, both give the same template, and
// both refuse the same malformed ones.
func TestDecodeTemplateMatchesConverter(t *testing.T) {
	t.Parallel()
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
		`{spec: {containers: [{name: a, image: b, env: [{name: X, value: "1"}, {name: Y, valueFrom: {fieldRef: {fieldPath: metadata.name}}}], resources: {requests: {cpu: 250m, memory: 1Gi, nvidia.com/gpu: 1}, limits: {memory: 2Gi}}, ports: [{containerPort: 80, hostPort: 8080}, {containerPort: 9090}], securityContext: {privileged: true}, readinessProbe: {httpGet: {path: /, port: 80}}, volumeMounts: [{name: v, mountPath: /v}], envFrom: [{configMapRef: {name: c}}], lifecycle: {preStop: {exec: {command: [sleep, "5"]}}}}, {name: sidecar, restartPolicy: Always, resources: {requests: {cpu: 250m, memory: 1Gi}}}], tolerations: [{operator: Exists}, {key: k, operator: Equal, value: v, effect: NoSchedule, tolerationSeconds: 30}], nodeSelector: {a: b}, hostNetwork: true, volumes: [{name: c, configMap: {name: c}}, {name: t, emptyDir: {}}, {name: d, persistentVolumeClaim: {claimName: data}}, {name: p, hostPath: {path: /var/lib/kubelet/plugins/ebs.csi.aws.com/}}], initContainers: [{name: i, resources: {requests: {cpu: 2}}}], overhead: {cpu: 100m}}}`,
		`{metadata: {labels: {app: x}}, spec: {containers: []}}`,
		`{spec: {}}`,
		`{spec: {containers: [{name: a, resources: {}}], tolerations: null, nodeSelector: null}}`,
		`{spec: {containers: [{name: a, ports: [{name: http, containerPort: 8080, protocol: TCP}], volumeMounts: [{name: v, mountPath: /v, readOnly: true}], envFrom: [{prefix: P_, configMapRef: {name: c, optional: true}}, {secretRef: {name: s}}]}]}}`,
		`{spec: {containers: [{name: a, ports: [{containerPort: 8080, hostPort: 8080}, {containerPort: 9090, unknownField: x}], volumeMounts: [], envFrom: null}]}}`,
		`{spec: {volumes: [{name: c, configMap: {name: c, defaultMode: 420}}, {name: s, secret: {secretName: s, optional: true}}, {name: t, emptyDir: {medium: Memory, sizeLimit: 64Mi}}, {name: e, emptyDir: {}}]}}`,
		`{spec: {volumes: [{name: c, configMap: {name: c}}, {name: d, persistentVolumeClaim: {claimName: data}}]}}`,
		`{spec: {containers: [{name: a, env: [{name: POD, valueFrom: {fieldRef: {apiVersion: v1, fieldPath: metadata.name}}}, {name: MEM, valueFrom: {resourceFieldRef: {containerName: a, resource: limits.memory, divisor: 1Mi}}}, {name: K, valueFrom: {configMapKeyRef: {name: c, key: k, optional: true}}}, {name: S, valueFrom: {secretKeyRef: {name: s, key: k}}}, {name: CLUSTER_NAME, valueFrom: {configMapKeyRef: {name: c, key: cluster}}}]}]}}`,
		`{spec: {containers: [{name: a, env: [{name: CLUSTER_NAME, value: prod}, {name: X, value: "1"}, {name: D, valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: 1}}}]}]}}`,
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
		if diff := decodersDiffer(tmpl); diff != "" {
			t.Errorf("template %d: %s", i, diff)
		}
	}

	malformed := []string{
		`{spec: {containers: "x"}}`,
		`{spec: {containers: [{name: 5}]}}`,
		`{spec: {containers: [{resources: {requests: {cpu: true}}}]}}`,
		`{spec: {tolerations: [1]}}`,
		`{spec: {nodeSelector: {a: [1]}}}`,
		`{spec: {containers: [{env: [{name: A, value: [x]}]}]}}`,
		`{spec: {containers: [{name: a, readinessProbe: {periodSeconds: often}}]}}`,
		`{spec: {containers: [{name: a, volumeMounts: {name: v}}]}}`,
		`{spec: {volumes: [{name: c, configMap: {defaultMode: rw}}]}}`,
		`{spec: {containers: [{name: a, ports: [{containerPort: http}]}]}}`,
		`{spec: {containers: [{name: a, ports: [8080]}]}}`,
		`{spec: {containers: [{name: a, volumeMounts: [{name: v, readOnly: [yes]}]}]}}`,
		`{spec: {containers: [{name: a, envFrom: [{configMapRef: {name: [c]}}]}]}}`,
		`{spec: {volumes: [{name: t, emptyDir: {sizeLimit: lots}}]}}`,
		`{spec: {volumes: [{name: c, configMap: {name: c, defaultMode: rw}}]}}`,
		`{spec: {containers: [{name: a, env: [{name: P, valueFrom: {fieldRef: {fieldPath: [x]}}}]}]}}`,
		`{spec: {containers: [{name: a, env: [{name: P, valueFrom: [x]}]}]}}`,
		`{spec: {containers: [{name: a, env: [{name: P, valueFrom: {secretKeyRef: {name: s, optional: maybe}}}]}]}}`,
		`{spec: {containers: [{name: a, env: [{name: [P], valueFrom: {fieldRef: {fieldPath: metadata.name}}}]}]}}`,
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

// decodersDiffer says how the hand decoder of a pod template and Kubernetes'
// converter (then the same pruning) disagree on it; "" when they agree.
func decodersDiffer(tmpl map[string]any) string {
	var fast, slow corev1.PodTemplateSpec
	errFast := decodeTemplate(tmpl, &fast)
	errSlow := fromUnstructured(tmpl, &slow)
	if (errFast == nil) != (errSlow == nil) {
		return fmt.Sprintf("hand decoder error %v, converter error %v", errFast, errSlow)
	}
	if errFast != nil {
		return ""
	}
	slow.Spec.Volumes = keptVolumes(slow.Spec.Volumes)
	slow.Annotations = cluster.CheckedAnnotations(slow.Annotations)
	for _, cs := range [][]corev1.Container{slow.Spec.Containers, slow.Spec.InitContainers} {
		for j := range cs {
			pruneContainer(&cs[j])
		}
	}
	if !equality.Semantic.DeepEqual(fast, slow) {
		return "differs (-converter +hand):\n" + cmp.Diff(slow, fast)
	}
	return ""
}

// FuzzDecodeTemplate: the hand decoder of pod templates accepts, refuses and
// keeps exactly what Kubernetes' converter (then the same pruning) does.
func FuzzDecodeTemplate(f *testing.F) {
	for _, seed := range []string{
		`{metadata: {labels: {app: x}, annotations: {a: b}}, spec: {containers: [{name: a, image: b, env: [{name: X, value: "1"}, {name: Y, valueFrom: {fieldRef: {fieldPath: metadata.name}}}], resources: {requests: {cpu: 250m}, limits: {memory: 2Gi}}, ports: [{containerPort: 80, hostPort: 8080}], securityContext: {privileged: true}, volumeMounts: [{name: v, mountPath: /v}], envFrom: [{configMapRef: {name: c}}]}], tolerations: [{key: k, operator: Equal, value: v, effect: NoSchedule}], nodeSelector: {a: b}}}`,
		`{spec: {volumes: [{name: c, configMap: {name: c, defaultMode: 420}}, {name: t, emptyDir: {sizeLimit: 64Mi}}], initContainers: [{name: i, restartPolicy: Always, resources: {requests: {cpu: 2}}}]}}`,
		`{spec: {containers: [{name: a, env: [{name: M, valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1Mi}}}, {name: S, valueFrom: {secretKeyRef: {name: s, key: k, optional: true}}}]}]}}`,
		`{spec: {containers: [{name: a, command: [/bin/x, --cluster-name=prod], args: [--v=2]}], affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: k, operator: In, values: [a]}]}]}}}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseValue(data)
		if err != nil {
			return
		}
		tmpl, ok := v.(map[string]any)
		if !ok {
			return
		}
		if diff := decodersDiffer(tmpl); diff != "" {
			t.Fatalf("%s\ninput: %s", diff, data)
		}
	})
}

// TestResourceListsShared: equal resource lists decode to one shared map, and
// lists that differ in any quantity, or hold numbers, do not.
func TestResourceListsShared(t *testing.T) {
	t.Parallel()
	decode := func(text string) corev1.ResourceList {
		t.Helper()
		v, err := ParseValue([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		l, err := resourceList(v)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	ptr := func(l corev1.ResourceList) uintptr { return reflect.ValueOf(l).Pointer() }
	a, b := decode(`{cpu: 100m, memory: 64Mi}`), decode(`{memory: 64Mi, cpu: 100m}`)
	if ptr(a) != ptr(b) {
		t.Error("two equal lists are two maps")
	}
	if a.Cpu().MilliValue() != 100 || a.Memory().Value() != 64<<20 || len(a) != 2 {
		t.Errorf("shared list holds %v", a)
	}
	c := decode(`{cpu: 100m, memory: 65Mi}`)
	if ptr(c) == ptr(a) || c.Memory().Value() != 65<<20 {
		t.Errorf("a different list shares the map or holds %v", c)
	}
	n1, n2 := decode(`{cpu: 2}`), decode(`{cpu: 2}`)
	if ptr(n1) == ptr(n2) || n1.Cpu().Value() != 2 {
		t.Errorf("numeric lists: shared %v, value %v", ptr(n1) == ptr(n2), n1)
	}
	if _, err := resourceList(map[string]any{"cpu": "lots"}); err == nil {
		t.Error("a malformed quantity is accepted")
	}
}

// What a decoded template keeps: the volumes and ports checks read, not the
// rest (validated all the same: see the malformed cases above).
func TestDecodedTemplateKeepsWhatChecksRead(t *testing.T) {
	t.Parallel()
	v, err := ParseValue([]byte(`{spec: {volumes: [{name: c, configMap: {name: c}}, {name: t, emptyDir: {}}, {name: d, persistentVolumeClaim: {claimName: data}}, {name: e, ephemeral: {volumeClaimTemplate: {spec: {storageClassName: gp3}}}}, {name: p, hostPath: {path: /etc/cni/net.d}}, {name: s, csi: {driver: secrets-store.csi.k8s.io}}], containers: [{name: a, ports: [{containerPort: 80}, {containerPort: 53, hostPort: 53}], readinessProbe: {tcpSocket: {port: 80}}, volumeMounts: [{name: c, mountPath: /c}]}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	var tmpl corev1.PodTemplateSpec
	if err := decodeTemplate(v.(map[string]any), &tmpl); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, vol := range tmpl.Spec.Volumes {
		names = append(names, vol.Name)
	}
	if got, want := strings.Join(names, ","), "d,e,p,s"; got != want {
		t.Errorf("volumes kept: %s, want %s", got, want)
	}
	c := tmpl.Spec.Containers[0]
	if len(c.Ports) != 1 || c.Ports[0].HostPort != 53 || c.ReadinessProbe != nil || c.VolumeMounts != nil {
		t.Errorf("container kept ports %v, probe %v, mounts %v", c.Ports, c.ReadinessProbe, c.VolumeMounts)
	}
}
