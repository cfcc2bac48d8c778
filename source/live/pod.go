package live

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	corev1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// A large cluster's snapshot is mostly pods. Decoding each one into generic
// values and converting those into typed ones costs twice what decoding it
// straight into its typed spec and status does, so a snapshot's pods take the
// direct way. It is an optimisation only: a pod the strict typed decoder
// refuses (duplicate names, invalid UTF-8, a number where a string belongs...)
// takes the generic way, which reports what is wrong exactly as for any other
// object, and both ways give the same model (TestSnapshotPodsDecodeAsGenericOnes,
// FuzzTypedPodDecode).

// wholeOf returns a function giving the whole generic form of a pod decoded
// from a snapshot: its head as read, its spec and status as the API server
// writes them from their types (which is how they reached the snapshot). It
// holds only the model's pod, so the snapshot's bytes can be released.
func wholeOf(p *cluster.Pod) func() map[string]any {
	return func() map[string]any {
		obj := maps.Clone(p.Object.Content)
		for f, v := range map[string]any{"spec": &p.Spec, "status": &p.Status} {
			u, err := k8sruntime.DefaultUnstructuredConverter.ToUnstructured(v)
			if err != nil {
				return nil
			}
			obj[f] = u
		}
		return obj
	}
}

// objectDecoder decodes a snapshot's objects; each chunk of them has its own.
type objectDecoder struct {
	dec jsontext.Decoder
	// strs interns the short strings of pods' metadata: member names, kinds,
	// namespaces, labels and owners repeat across a cluster's pods.
	strs map[string]string
	// head is what a list's items leave out and take from the list: its
	// apiVersion and kind (nil for a snapshot's objects, which carry theirs).
	head map[string]any
	// listRV is the resourceVersion of the last list page decoded.
	listRV string
	// typed are the options a pod's spec and status are decoded with:
	// their short strings interned too (see podStrings).
	typed jsonv2.Options
}

// intern returns the copy of s the decoder holds already, if any.
func (d *objectDecoder) intern(s string) string {
	if len(s) > 64 {
		return s
	}
	if v, ok := d.strs[s]; ok {
		return v
	}
	d.keep(s)
	return s
}

// internBytes is intern for a string still in the decoder's buffer: it is
// copied only when the decoder holds no copy yet.
func (d *objectDecoder) internBytes(b []byte) string {
	if len(b) > 64 {
		return string(b)
	}
	if v, ok := d.strs[string(b)]; ok {
		return v
	}
	s := string(b)
	d.keep(s)
	return s
}

func (d *objectDecoder) keep(s string) {
	if d.strs == nil || len(d.strs) >= 1<<16 {
		d.strs = make(map[string]string, 1024)
	}
	d.strs[s] = s
}

// typedOptions returns the options of the typed decoder, made once per
// decoder: the functions intern into its strings.
func (d *objectDecoder) typedOptions() jsonv2.Options {
	if d.typed == nil {
		d.typed = jsonv2.WithUnmarshalers(podStrings(d))
	}
	return d.typed
}

// podStrings interns the strings of a pod's spec and status as they are
// decoded: what an API server fills in (the termination message path and
// policy, the pull policy, the DNS policy, the scheduler's name, the
// tolerations of not-ready and unreachable nodes, the service account
// token's projected volume...) and what a workload's pods share (images,
// names, selectors) repeat across every pod. A string is interned only when
// it is a JSON string in its plain form; anything else is decoded as
// without these functions, errors included.
func podStrings(d *objectDecoder) *jsonv2.Unmarshalers {
	return jsonv2.JoinUnmarshalers(
		internAs[string](d),
		internAs[corev1.RestartPolicy](d),
		internAs[corev1.DNSPolicy](d),
		internAs[corev1.PullPolicy](d),
		internAs[corev1.TerminationMessagePolicy](d),
		internAs[corev1.Protocol](d),
		internAs[corev1.TolerationOperator](d),
		internAs[corev1.TaintEffect](d),
		internAs[corev1.NodeSelectorOperator](d),
		internAs[corev1.PodPhase](d),
		internAs[corev1.PodConditionType](d),
		internAs[corev1.ConditionStatus](d),
		internAs[corev1.PodQOSClass](d),
		internAs[corev1.URIScheme](d),
		internAs[corev1.PreemptionPolicy](d),
		internAs[corev1.ResourceResizeRestartPolicy](d),
		internAs[corev1.ContainerRestartPolicy](d),
		internAs[corev1.SeccompProfileType](d),
		internAs[corev1.UnsatisfiableConstraintAction](d),
		internAs[corev1.NodeInclusionPolicy](d),
		internAs[corev1.PersistentVolumeAccessMode](d),
	)
}

// internAs decodes a JSON string into a T, interned, when it has no escape
// sequence; anything else is left to the default decoding.
func internAs[T ~string](d *objectDecoder) *jsonv2.Unmarshalers {
	return jsonv2.UnmarshalFromFunc(func(dec *jsontext.Decoder, v *T) error {
		if dec.PeekKind() != '"' {
			return errors.ErrUnsupported
		}
		raw, err := dec.ReadValue()
		if err != nil {
			return err
		}
		if bytes.IndexByte(raw, '\\') >= 0 {
			u, err := jsontext.AppendUnquote(nil, raw)
			if err != nil {
				return err
			}
			*v = T(u)
			return nil
		}
		*v = T(d.internBytes(raw[1 : len(raw)-1]))
		return nil
	})
}

// decode decodes one object: a v1 Pod into its generic head (apiVersion, kind,
// metadata) and the model's pod with its typed spec and status, pruned as prune
// prunes the generic form (the rest is set when the object is made); anything
// else, or a pod the typed decoder refuses, into generic values only (pod nil).
func (d *objectDecoder) decode(raw []byte) (map[string]any, *cluster.Pod, error) {
	if d.head == nil || d.head["apiVersion"] == podHead["apiVersion"] && d.head["kind"] == podHead["kind"] {
		if content, pod := d.pod(raw); pod != nil {
			return content, pod, nil
		}
	}
	obj, err := d.object(raw)
	if err == nil {
		d.fillHead(obj)
		err = checkObject(obj)
	}
	return obj, nil, err
}

// object decodes raw into generic values as unmarshalGeneric does, the fast
// way (one pass, strings interned) when raw is plain: an object of valid
// UTF-8, no member twice, every number one a float64 holds. Anything else
// takes unmarshalGeneric's way, which decodes or refuses it as client-go does.
func (d *objectDecoder) object(raw []byte) (map[string]any, error) {
	d.dec.Reset(bytes.NewBuffer(raw))
	if d.dec.PeekKind() == '{' {
		if v, err := d.generic(); err == nil {
			if _, end := d.dec.ReadToken(); end == io.EOF {
				return v.(map[string]any), nil
			}
		}
	}
	return unmarshalGeneric(raw)
}

// fillHead sets what obj leaves out of its list's head.
func (d *objectDecoder) fillHead(obj map[string]any) {
	if obj == nil {
		return
	}
	for k, v := range d.head {
		if _, ok := obj[k]; !ok {
			obj[k] = v
		}
	}
}

// unmarshalGeneric decodes an object into generic values as client-go decodes
// unstructured objects (k8s.io/apimachinery's json.Unmarshal: encoding/json with
// integers preserved), so that a snapshot's object is what a live read gives: a
// number without a decimal point that fits an int64 is an int64, any other a
// float64. What it refuses, it refuses with encoding/json's error.
func unmarshalGeneric(raw []byte) (map[string]any, error) {
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&obj); err == nil {
		if _, end := dec.Token(); end == io.EOF && preserveInts(obj) {
			return obj, nil
		}
	}
	// Invalid JSON, text after the object, a value that is not an object or a
	// number no float64 holds: Unmarshal says which, as client-go's decoder
	// does (the first such number, for one).
	obj = nil
	err := json.Unmarshal(raw, &obj)
	return obj, err
}

// preserveInts replaces the numbers in v, decoded as json.Number, by an int64
// when the number has no decimal point and fits one, by a float64 otherwise. It
// reports false for a number that not even a float64 holds.
func preserveInts(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if n, ok := x.(json.Number); ok {
				if v[k], ok = numberValue(n); !ok {
					return false
				}
			} else if !preserveInts(x) {
				return false
			}
		}
	case []any:
		for i, x := range v {
			if n, ok := x.(json.Number); ok {
				if v[i], ok = numberValue(n); !ok {
					return false
				}
			} else if !preserveInts(x) {
				return false
			}
		}
	}
	return true
}

func numberValue(n json.Number) (any, bool) {
	s := string(n)
	if !strings.Contains(s, ".") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, true
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// podHead is what a v1 Pod's apiVersion and kind are.
var podHead = map[string]string{"apiVersion": "v1", "kind": "Pod"}

// pod decodes a v1 Pod in one pass: spec and status straight into their types,
// metadata into generic values (objects are read by it). It stops at an
// apiVersion or kind that is not a v1 Pod's (a snapshot writes them first), and
// gives nil for any object that is not a v1 Pod, that the typed decoder
// refuses, or that lacks what every object has.
func (d *objectDecoder) pod(raw []byte) (map[string]any, *cluster.Pod) {
	d.dec.Reset(bytes.NewBuffer(raw))
	if tok, err := d.dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, nil
	}
	body := &cluster.Pod{}
	content := map[string]any{}
	for d.dec.PeekKind() == '"' {
		tok, err := d.dec.ReadToken()
		if err != nil {
			return nil, nil
		}
		switch name := tok.String(); name {
		case "apiVersion", "kind", "metadata":
			var v any
			if name == "metadata" {
				v, err = d.metadata()
			} else {
				v, err = d.generic()
			}
			if err == nil {
				if want, ok := podHead[name]; ok && v != any(want) {
					return nil, nil
				}
				content[name] = v
			}
		case "spec":
			err = jsonv2.UnmarshalDecode(&d.dec, &body.Spec, d.typedOptions())
		case "status":
			err = jsonv2.UnmarshalDecode(&d.dec, &body.Status, d.typedOptions())
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
	d.fillHead(content)
	if _, err := d.dec.ReadToken(); err != io.EOF || checkObject(content) != nil {
		return nil, nil
	}
	prunePodSpecTyped(&body.Spec)
	return content, body
}

// metadata decodes an object's metadata as generic does, but for
// managedFields, which is passed over: prune drops it, and an API server's pod
// carries kilobytes of it.
func (d *objectDecoder) metadata() (any, error) {
	if d.dec.PeekKind() != '{' {
		return d.generic()
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return nil, err
	}
	return d.members("managedFields")
}

// members decodes the members of the object whose opening brace was just
// read, and its closing brace, passing over the member named skip (none when
// "").
func (d *objectDecoder) members(skip string) (map[string]any, error) {
	m := map[string]any{}
	for d.dec.PeekKind() == '"' {
		name, err := d.dec.ReadToken()
		if err != nil {
			return nil, err
		}
		k := d.intern(name.String())
		if skip != "" && k == skip {
			if err := d.dec.SkipValue(); err != nil {
				return nil, err
			}
			continue
		}
		if m[k], err = d.generic(); err != nil {
			return nil, err
		}
	}
	_, err := d.dec.ReadToken()
	return m, err
}

// generic decodes the next value into JSON-compatible values, numbers as
// client-go's decoder makes them: an int64 when the number is one, a float64
// otherwise.
func (d *objectDecoder) generic() (any, error) {
	tok, err := d.dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case '{':
		return d.members("")
	case '[':
		l := []any{}
		for k := d.dec.PeekKind(); k != ']' && k != 0; k = d.dec.PeekKind() {
			v, err := d.generic()
			if err != nil {
				return nil, err
			}
			l = append(l, v)
		}
		_, err := d.dec.ReadToken()
		return l, err
	case '"':
		return d.intern(tok.String()), nil
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

// prunePodSpecTyped is prunePodSpec for a typed spec. Its containers'
// resource lists are shared with every equal list (a DaemonSet's pods on
// every node ask alike).
func prunePodSpecTyped(ps *corev1.PodSpec) {
	for i := range ps.Containers {
		c := &ps.Containers[i]
		pruneContainerTyped(&c.Command, &c.Args, c.Env, &c.Resources)
	}
	for i := range ps.InitContainers {
		c := &ps.InitContainers[i]
		pruneContainerTyped(&c.Command, &c.Args, c.Env, &c.Resources)
	}
	for i := range ps.EphemeralContainers {
		c := &ps.EphemeralContainers[i].EphemeralContainerCommon
		pruneContainerTyped(&c.Command, &c.Args, c.Env, &c.Resources)
	}
}

func pruneContainerTyped(command, args *[]string, env []corev1.EnvVar, res *corev1.ResourceRequirements) {
	res.Requests = cluster.ShareResourceList(res.Requests)
	res.Limits = cluster.ShareResourceList(res.Limits)
	*command = cluster.CheckedFlags(*command)
	*args = cluster.CheckedFlags(*args)
	for i := range env {
		if !cluster.CheckedEnv(env[i].Name) {
			env[i].Value = ""
		}
	}
}
