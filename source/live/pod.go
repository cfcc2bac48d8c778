package live

import (
	"bytes"
	"io"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	corev1 "k8s.io/api/core/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// A large cluster's snapshot is mostly pods. Decoding each one into generic
// values and converting those into typed ones costs twice what decoding it
// straight into its typed spec and status does, so a snapshot's pods take the
// direct way. It is an optimisation only: a pod the strict typed decoder
// refuses (duplicate names, invalid UTF-8, a number where a string belongs...)
// takes the generic way, which reports what is wrong exactly as for any other
// object, and both ways give the same model (TestSnapshotPodsDecodeAsGenericOnes,
// FuzzTypedPodDecode).

// podBody is a pod's spec and status, decoded and pruned as prune prunes the
// generic form.
type podBody struct {
	spec   corev1.PodSpec
	status corev1.PodStatus
	// raw is the whole object as the snapshot holds it.
	raw []byte
}

// wholeOf returns a function giving the generic form of an object from its
// JSON, pruned: what a live read keeps. It holds the JSON only, not what was
// decoded from it.
func wholeOf(raw []byte) func() map[string]any {
	return func() map[string]any {
		var obj map[string]any
		if utiljson.Unmarshal(raw, &obj) != nil {
			return nil
		}
		prune(obj)
		return obj
	}
}

// objectDecoder decodes a snapshot's objects; each worker has its own.
type objectDecoder struct {
	dec jsontext.Decoder
}

// decode decodes one object: a pod into its generic head (apiVersion, kind,
// metadata) and typed body; anything else, or a pod the typed decoder refuses,
// into generic values only (body nil).
func (d *objectDecoder) decode(raw []byte) (map[string]any, *podBody, error) {
	if apiVersion, kind := d.head(raw); apiVersion == "v1" && kind == "Pod" {
		if content, body := d.pod(raw); body != nil {
			return content, body, nil
		}
	}
	var obj map[string]any
	// The same decoder as client-go's unstructured objects, so integers come
	// back as int64 exactly as a live read gives them.
	err := utiljson.Unmarshal(raw, &obj)
	if err == nil {
		err = checkObject(obj)
	}
	return obj, nil, err
}

// head reads an object's apiVersion and kind, skipping the members before them
// (a snapshot writes them first, with sorted keys).
func (d *objectDecoder) head(raw []byte) (apiVersion, kind string) {
	d.dec.Reset(bytes.NewBuffer(raw))
	if tok, err := d.dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return "", ""
	}
	for d.dec.PeekKind() == '"' {
		name, err := d.dec.ReadToken()
		if err != nil {
			return "", ""
		}
		if n := name.String(); (n == "apiVersion" || n == "kind") && d.dec.PeekKind() == '"' {
			v, err := d.dec.ReadToken()
			if err != nil {
				return "", ""
			}
			if n == "kind" {
				kind = v.String()
			} else {
				apiVersion = v.String()
			}
			if apiVersion != "" && kind != "" {
				return apiVersion, kind
			}
		} else if d.dec.SkipValue() != nil {
			return "", ""
		}
	}
	return "", ""
}

// pod decodes a pod in one pass: spec and status straight into their types,
// metadata into generic values (objects are read by it); body is nil when the
// typed decoder refuses the pod or it lacks what every object has.
func (d *objectDecoder) pod(raw []byte) (map[string]any, *podBody) {
	d.dec.Reset(bytes.NewBuffer(raw))
	if tok, err := d.dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, nil
	}
	body := &podBody{raw: raw}
	content := map[string]any{}
	for d.dec.PeekKind() == '"' {
		tok, err := d.dec.ReadToken()
		if err != nil {
			return nil, nil
		}
		switch name := tok.String(); name {
		case "apiVersion", "kind", "metadata":
			var v any
			if v, err = decodeGeneric(&d.dec); err == nil {
				content[name] = v
			}
		case "spec":
			err = jsonv2.UnmarshalDecode(&d.dec, &body.spec)
		case "status":
			err = jsonv2.UnmarshalDecode(&d.dec, &body.status)
		default:
			err = d.dec.SkipValue()
		}
		if err != nil {
			return nil, nil
		}
	}
	if tok, err := d.dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return nil, nil
	}
	if _, err := d.dec.ReadToken(); err != io.EOF || checkObject(content) != nil {
		return nil, nil
	}
	prunePodSpecTyped(&body.spec)
	return content, body
}

// decodeGeneric decodes the next value into JSON-compatible values, numbers as
// client-go's decoder makes them: an int64 when the number is one, a float64
// otherwise.
func decodeGeneric(dec *jsontext.Decoder) (any, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case '{':
		m := map[string]any{}
		for dec.PeekKind() == '"' {
			name, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			k := name.String()
			if m[k], err = decodeGeneric(dec); err != nil {
				return nil, err
			}
		}
		_, err := dec.ReadToken()
		return m, err
	case '[':
		l := []any{}
		for k := dec.PeekKind(); k != ']' && k != 0; k = dec.PeekKind() {
			v, err := decodeGeneric(dec)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		_, err := dec.ReadToken()
		return l, err
	case '"':
		return tok.String(), nil
	case '0':
		n := tok.String()
		if i, err := strconv.ParseInt(n, 10, 64); err == nil {
			return i, nil
		}
		return strconv.ParseFloat(n, 64)
	case 't', 'f':
		return tok.Bool(), nil
	default:
		return nil, nil
	}
}

// prunePodSpecTyped is prunePodSpec for a typed spec.
func prunePodSpecTyped(ps *corev1.PodSpec) {
	for i := range ps.Containers {
		pruneContainerTyped(&ps.Containers[i].Command, &ps.Containers[i].Args, ps.Containers[i].Env)
	}
	for i := range ps.InitContainers {
		pruneContainerTyped(&ps.InitContainers[i].Command, &ps.InitContainers[i].Args, ps.InitContainers[i].Env)
	}
	for i := range ps.EphemeralContainers {
		c := &ps.EphemeralContainers[i].EphemeralContainerCommon
		pruneContainerTyped(&c.Command, &c.Args, c.Env)
	}
}

func pruneContainerTyped(command, args *[]string, env []corev1.EnvVar) {
	*command = nil
	var kept []string
	for _, a := range *args {
		for _, p := range keptArgPrefixes {
			if a == p || strings.HasPrefix(a, p+"=") {
				kept = append(kept, p)
			}
		}
	}
	*args = kept
	for i := range env {
		if !keptEnvValues[env[i].Name] {
			env[i].Value = ""
		}
	}
}
