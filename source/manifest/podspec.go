package manifest

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/eksdoctor/eksdoctor/cluster"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// decodeTemplate decodes a pod template from JSON-like content. The fields large
// inputs repeat in every workload (containers with their resources, env, ports
// and mounts; tolerations; node selection) are decoded by hand, which is several
// times faster than the reflection-based converter; everything else goes through
// the converter, so no field is lost. TestDecodeTemplateMatchesConverter holds
// the two to the same result.
func decodeTemplate(tmpl map[string]any, into *corev1.PodTemplateSpec) error {
	if !plainMetadata(tmpl, &into.ObjectMeta) {
		into.ObjectMeta = metav1.ObjectMeta{}
		rest := make(map[string]any, len(tmpl))
		for k, v := range tmpl {
			if k != "spec" {
				rest[k] = v
			}
		}
		if err := fromUnstructured(rest, into); err != nil {
			return err
		}
	}
	// Of the template's annotations, only those checks read.
	into.Annotations = cluster.CheckedAnnotations(into.Annotations)
	spec, ok := tmpl["spec"].(map[string]any)
	if !ok {
		if tmpl["spec"] == nil {
			return nil
		}
		return fmt.Errorf("spec: expected an object, found %s", describe(tmpl["spec"]))
	}
	return decodePodSpec(spec, &into.Spec)
}

// plainMetadata decodes a template's metadata when it is what templates hold
// (a name, a namespace, labels and annotations, all strings) and the template
// nothing else beside its spec; false leaves the rest to the converter.
func plainMetadata(tmpl map[string]any, into *metav1.ObjectMeta) bool {
	for k := range tmpl {
		if k != "metadata" && k != "spec" {
			return false
		}
	}
	v, ok := tmpl["metadata"]
	if !ok {
		return true
	}
	md, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for k, x := range md {
		var err error
		switch k {
		case "name", "namespace":
			s, ok := x.(string)
			if !ok {
				return false
			}
			if k == "name" {
				into.Name = s
			} else {
				into.Namespace = s
			}
		case "labels":
			into.Labels, err = stringMapStrict(x)
		case "annotations":
			into.Annotations, err = stringMapStrict(x)
		default:
			return false
		}
		if err != nil {
			return false
		}
	}
	return true
}

// decodePodSpec is decodeTemplate for a pod spec.
func decodePodSpec(spec map[string]any, into *corev1.PodSpec) error {
	rest := make(map[string]any, len(spec))
	for k, v := range spec {
		rest[k] = v
	}
	var err error
	for _, f := range []struct {
		key  string
		into *[]corev1.Container
	}{{"containers", &into.Containers}, {"initContainers", &into.InitContainers}} {
		v, ok := spec[f.key]
		if !ok {
			continue
		}
		if *f.into, err = decodeContainers(v); err != nil {
			return fmt.Errorf("%s: %w", f.key, err)
		}
		delete(rest, f.key)
	}
	if v, ok := spec["nodeSelector"]; ok {
		if into.NodeSelector, err = stringMapStrict(v); err != nil {
			return fmt.Errorf("nodeSelector: %w", err)
		}
		delete(rest, "nodeSelector")
	}
	if v, ok := spec["tolerations"]; ok {
		if into.Tolerations, err = decodeTolerations(v); err != nil {
			return fmt.Errorf("tolerations: %w", err)
		}
		delete(rest, "tolerations")
	}
	if v, ok := spec["volumes"]; ok && plainVolumes(v) {
		delete(rest, "volumes")
	}
	// The rest (affinity, other volumes, security context, ...) is small:
	// keep the converter's exact semantics for it.
	var other corev1.PodSpec
	if err := fromUnstructured(rest, &other); err != nil {
		return err
	}
	other.Containers, other.InitContainers = into.Containers, into.InitContainers
	other.NodeSelector, other.Tolerations = into.NodeSelector, into.Tolerations
	other.Volumes = keptVolumes(other.Volumes)
	*into = other
	return nil
}

// keptVolumes are the volumes checks read: host paths (node plugins, CNI),
// claims and generic ephemeral volumes (what stays attached), inline CSI
// volumes. Config maps, secrets, emptyDirs and the like are validated when
// decoded, then dropped: a monorepo has several in every workload.
func keptVolumes(vs []corev1.Volume) []corev1.Volume {
	var kept []corev1.Volume
	for _, v := range vs {
		if v.HostPath != nil || v.PersistentVolumeClaim != nil || v.Ephemeral != nil || v.CSI != nil {
			kept = append(kept, v)
		}
	}
	return kept
}

func decodeContainers(v any) ([]corev1.Container, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("expected a list, found %s", describe(v))
	}
	out := make([]corev1.Container, len(list))
	for i, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("item %d: expected an object, found %s", i, describe(it))
		}
		if err := decodeContainer(m, &out[i]); err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
	}
	return out, nil
}

func decodeContainer(m map[string]any, c *corev1.Container) error {
	rest := map[string]any{}
	var err error
	for k, v := range m {
		switch k {
		case "name":
			c.Name, err = str(v)
		case "image":
			c.Image, err = str(v)
		case "command":
			c.Command, err = strList(v)
		case "args":
			c.Args, err = strList(v)
		case "resources":
			err = decodeResources(v, &c.Resources)
		case "env":
			c.Env, err = decodeEnv(v)
		default:
			if !plainDropped(k, v) {
				rest[k] = v
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	if len(rest) > 0 {
		var other corev1.Container
		if err := fromUnstructured(rest, &other); err != nil {
			return err
		}
		other.Name, other.Image, other.Command, other.Args = c.Name, c.Image, c.Command, c.Args
		other.Resources, other.Env = c.Resources, c.Env
		*c = other
	}
	pruneContainer(c)
	return nil
}

// droppedShapes are container fields that are validated and then dropped
// (pruneContainer), with the fields of their items and the kind of each: a
// list whose items hold only these, of these kinds, is valid and keeps
// nothing, and needs no converter. Anything else (a port with a hostPort, a
// field not listed, a number where a name belongs) goes through the converter.
var droppedShapes = map[string]map[string]valueKind{
	"ports":        {"name": kindString, "containerPort": kindInt32, "protocol": kindString, "hostIP": kindString},
	"volumeMounts": {"name": kindString, "mountPath": kindString, "subPath": kindString, "subPathExpr": kindString, "readOnly": kindBool, "mountPropagation": kindString, "recursiveReadOnly": kindString},
	"envFrom":      {"prefix": kindString, "configMapRef": kindRef, "secretRef": kindRef},
}

var refShape = map[string]valueKind{"name": kindString, "optional": kindBool}

type valueKind int

const (
	kindString valueKind = iota
	kindInt32
	kindBool
	kindRef       // {name: string, optional: bool}
	kindQuantity  // a quantity written as a string ("64Mi")
	kindEnvSource // an environment variable's plain valueFrom (envSourceShapes)
)

// plainDropped reports whether the value of a container field is valid and
// kept of nothing (droppedShapes).
func plainDropped(field string, v any) bool {
	shape, ok := droppedShapes[field]
	if !ok {
		return false
	}
	list, ok := v.([]any)
	if !ok {
		return false
	}
	for _, it := range list {
		if !ofShape(it, shape) {
			return false
		}
	}
	return true
}

func ofKind(v any, k valueKind) bool {
	switch k {
	case kindString:
		_, ok := v.(string)
		return ok
	case kindInt32:
		i, ok := v.(int64)
		return ok && i >= math.MinInt32 && i <= math.MaxInt32
	case kindBool:
		_, ok := v.(bool)
		return ok
	case kindRef:
		return ofShape(v, refShape)
	case kindEnvSource:
		return plainEnvSource(v)
	case kindQuantity:
		s, ok := v.(string)
		if !ok {
			return false
		}
		_, err := resource.ParseQuantity(s)
		return err == nil
	}
	return false
}

// volumeShapes are the volume sources keptVolumes drops, with their fields:
// a volume list made only of these (and names) is valid and keeps nothing.
var volumeShapes = map[string]map[string]valueKind{
	"configMap": {"name": kindString, "optional": kindBool, "defaultMode": kindInt32},
	"secret":    {"secretName": kindString, "optional": kindBool, "defaultMode": kindInt32},
	"emptyDir":  {"medium": kindString, "sizeLimit": kindQuantity},
}

// plainVolumes reports whether a pod's volumes are all of volumeShapes, of
// the right kinds: valid, and none of them kept.
func plainVolumes(v any) bool {
	list, ok := v.([]any)
	if !ok {
		return false
	}
	for _, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			return false
		}
		sources := 0
		for k, x := range m {
			if k == "name" {
				if !ofKind(x, kindString) {
					return false
				}
				continue
			}
			shape, ok := volumeShapes[k]
			if !ok || !ofShape(x, shape) {
				return false
			}
			sources++
		}
		if sources != 1 {
			return false
		}
	}
	return true
}

// ofShape reports whether v is an object whose fields are all in shape, of
// their kinds.
func ofShape(v any, shape map[string]valueKind) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for k, x := range m {
		kind, ok := shape[k]
		if !ok || !ofKind(x, kind) {
			return false
		}
	}
	return true
}

// checkedEnv keeps the environment variables checks read
// (cluster.CheckedEnv); nil when there are none.
func checkedEnv(env []corev1.EnvVar) []corev1.EnvVar {
	var kept []corev1.EnvVar
	for _, e := range env {
		if cluster.CheckedEnv(e.Name) {
			kept = append(kept, e)
		}
	}
	return kept
}

// hostPorts are the ports that take a port of the node, the only ones checks
// read.
func hostPorts(ps []corev1.ContainerPort) []corev1.ContainerPort {
	var kept []corev1.ContainerPort
	for _, p := range ps {
		if p.HostPort != 0 {
			kept = append(kept, p)
		}
	}
	return kept
}

// pruneContainer keeps of a decoded container what checks read. Probes,
// mounts, lifecycle hooks, envFrom and the like are validated when decoded (a
// malformed one is reported) but not kept, since a monorepo's workloads would
// otherwise hold them all in memory; of the command line, only the flags
// checks read (cluster.CheckedFlags), as for a running cluster's pods; of
// the environment, only the variables checks read (cluster.CheckedEnv).
func pruneContainer(c *corev1.Container) {
	*c = corev1.Container{
		Name: c.Name, Image: c.Image, Command: cluster.CheckedFlags(c.Command), Args: cluster.CheckedFlags(c.Args),
		Ports: hostPorts(c.Ports), Env: checkedEnv(c.Env), Resources: c.Resources,
		RestartPolicy: c.RestartPolicy, RestartPolicyRules: c.RestartPolicyRules, ResizePolicy: c.ResizePolicy,
		SecurityContext: privilegedOnly(c.SecurityContext),
	}
}

// privilegedOnly keeps of a container's security context whether it is
// privileged, the one field checks read (Fargate refuses privileged pods).
func privilegedOnly(sc *corev1.SecurityContext) *corev1.SecurityContext {
	if sc == nil || sc.Privileged == nil {
		return nil
	}
	return &corev1.SecurityContext{Privileged: sc.Privileged}
}

func decodeResources(v any, r *corev1.ResourceRequirements) error {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("expected an object, found %s", describe(v))
	}
	rest := map[string]any{}
	var err error
	for k, x := range m {
		switch k {
		case "requests":
			r.Requests, err = resourceList(x)
		case "limits":
			r.Limits, err = resourceList(x)
		default:
			rest[k] = x
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	if len(rest) > 0 {
		var other corev1.ResourceRequirements
		if err := fromUnstructured(rest, &other); err != nil {
			return err
		}
		r.Claims = other.Claims
	}
	return nil
}

func resourceList(v any) (corev1.ResourceList, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("expected an object, found %s", describe(v))
	}
	decode := func() (corev1.ResourceList, error) {
		out := make(corev1.ResourceList, len(m))
		for k, x := range m {
			if x == nil {
				// A null quantity is zero, as the API server reads a pod.
				out[corev1.ResourceName(k)] = resource.Quantity{}
				continue
			}
			q, err := quantity(x)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[corev1.ResourceName(k)] = q
		}
		return out, nil
	}
	key, shareable := resourceListKey(m)
	if !shareable {
		return decode()
	}
	return cluster.SharedResourceList(key, decode)
}

// resourceListKey is the text of a small resource list of string quantities,
// keys in order ("cpu=100m\x00memory=64Mi"); false for any other list.
func resourceListKey(m map[string]any) (string, bool) {
	if len(m) == 0 || len(m) > 4 {
		return "", false
	}
	var keys [4]string
	n := 0
	for k, v := range m {
		if _, ok := v.(string); !ok {
			return "", false
		}
		keys[n] = k
		n++
	}
	slices.Sort(keys[:n])
	var b strings.Builder
	for i, k := range keys[:n] {
		if i > 0 {
			b.WriteByte(0)
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(m[k].(string))
	}
	return b.String(), true
}

// decodeEnv validates a container's environment and decodes the variables
// checks read (those pruneContainer keeps): the others are left out once
// valid, and one taken from a plain reference (envSourceShapes) is validated
// without the converter.
func decodeEnv(v any) ([]corev1.EnvVar, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("expected a list, found %s", describe(v))
	}
	var out []corev1.EnvVar
	for i, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("item %d: expected an object, found %s", i, describe(it))
		}
		if _, has := m["valueFrom"]; has {
			if name, _ := m["name"].(string); !cluster.CheckedEnv(name) && ofShape(m, envShape) {
				continue
			}
			var e corev1.EnvVar
			if err := fromUnstructured(m, &e); err != nil {
				return nil, fmt.Errorf("item %d: %w", i, err)
			}
			if cluster.CheckedEnv(e.Name) {
				out = append(out, e)
			}
			continue
		}
		var e corev1.EnvVar
		var err error
		if e.Name, err = str(m["name"]); err != nil {
			return nil, fmt.Errorf("item %d: name: %w", i, err)
		}
		if e.Value, err = str(m["value"]); err != nil {
			return nil, fmt.Errorf("item %d: value: %w", i, err)
		}
		if cluster.CheckedEnv(e.Name) {
			out = append(out, e)
		}
	}
	return out, nil
}

// envShape is an environment variable taken from elsewhere; envSourceShapes
// are the plain places it is taken from, with their fields.
var (
	envShape        = map[string]valueKind{"name": kindString, "valueFrom": kindEnvSource}
	envSourceShapes = map[string]map[string]valueKind{
		"fieldRef":         {"apiVersion": kindString, "fieldPath": kindString},
		"resourceFieldRef": {"containerName": kindString, "resource": kindString, "divisor": kindQuantity},
		"configMapKeyRef":  {"name": kindString, "key": kindString, "optional": kindBool},
		"secretKeyRef":     {"name": kindString, "key": kindString, "optional": kindBool},
	}
)

// plainEnvSource reports whether an environment variable's valueFrom holds
// only plain references (envSourceShapes), of the right kinds.
func plainEnvSource(v any) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for k, x := range m {
		shape, ok := envSourceShapes[k]
		if !ok || !ofShape(x, shape) {
			return false
		}
	}
	return true
}

func decodeTolerations(v any) ([]corev1.Toleration, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("expected a list, found %s", describe(v))
	}
	out := make([]corev1.Toleration, 0, len(list))
	for i, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("item %d: expected an object, found %s", i, describe(it))
		}
		var t corev1.Toleration
		if err := fromUnstructured(m, &t); err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// str reads a string field the way the converter does: absent or null is "".
func str(v any) (string, error) {
	switch t := v.(type) {
	case nil:
		return "", nil
	case string:
		return t, nil
	}
	return "", fmt.Errorf("expected a string, found %s", describe(v))
}

func strList(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("expected a list, found %s", describe(v))
	}
	out := make([]string, len(list))
	for i, it := range list {
		s, err := str(it)
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		out[i] = s
	}
	return out, nil
}

func stringMapStrict(v any) (map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("expected an object, found %s", describe(v))
	}
	out := make(map[string]string, len(m))
	for k, x := range m {
		s, err := str(x)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = s
	}
	return out, nil
}
