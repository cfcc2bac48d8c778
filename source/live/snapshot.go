package live

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/eksdoctor/eksdoctor/cluster"
	"github.com/eksdoctor/eksdoctor/internal/inputfs"
	"github.com/eksdoctor/eksdoctor/internal/parallel"
	"github.com/eksdoctor/eksdoctor/internal/textpos"
)

// A snapshot is a JSON document holding what a live read saw, for offline analysis:
//
//	{
//	 "kind": "EKSDoctorSnapshot",
//	 "version": 1,
//	 "context": "prod", "server": "https://...", "now": "2026-01-02T03:04:05Z",
//	 "skipped": [{"resource": "volumeattachments.storage.k8s.io", "reason": "forbidden: ..."}],
//	 "objects": [
//	  {"apiVersion": "v1", "kind": "Node", ...},
//	  ...
//	 ]
//	}
//
// Objects are sorted and written one per line with sorted keys, so the same state
// gives the same bytes. A snapshot may be gzip-compressed.
const (
	SnapshotKind    = "EKSDoctorSnapshot"
	SnapshotVersion = 1
)

type snapshotSkipped struct {
	Resource string `json:"resource"`
	Reason   string `json:"reason"`
}

type snapshotDoc struct {
	Kind    string `json:"kind"`
	Version int    `json:"version"`
	Context string `json:"context"`
	Server  string `json:"server"`
	// Namespace is written only for a read restricted to one namespace, so the
	// snapshots of whole-cluster reads keep their layout.
	Namespace string            `json:"namespace,omitempty"`
	Now       string            `json:"now"`
	Skipped   []snapshotSkipped `json:"skipped"`
	Objects   []json.RawMessage `json:"objects"`
}

// WriteSnapshot writes the live state of m (a model from Load or ReadSnapshot) to
// w, gzip-compressed when gz is set (the CLI sets it for a ".gz" file name).
func WriteSnapshot(w io.Writer, m *cluster.Model, gz bool) error {
	if m == nil || m.Live == nil {
		return errors.New("write snapshot: the model holds no live cluster state")
	}
	var zw *gzip.Writer
	if gz {
		// The gzip header carries no name and no time, so the output stays stable.
		zw = gzip.NewWriter(w)
		w = zw
	}
	bw := bufio.NewWriter(w)
	if err := writeSnapshot(bw, m); err != nil {
		return fmt.Errorf("write snapshot: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write snapshot: %w", err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return fmt.Errorf("write snapshot: %w", err)
		}
	}
	return nil
}

func writeSnapshot(w *bufio.Writer, m *cluster.Model) error {
	str := func(s string) string {
		b, _ := marshal(s)
		return string(b)
	}
	fmt.Fprintf(w, "{\n \"kind\": %s,\n \"version\": %d,\n", str(SnapshotKind), SnapshotVersion)
	fmt.Fprintf(w, " \"context\": %s,\n \"server\": %s,\n", str(m.Live.Context), str(m.Live.Server))
	if m.Live.Namespace != "" {
		fmt.Fprintf(w, " \"namespace\": %s,\n", str(m.Live.Namespace))
	}
	fmt.Fprintf(w, " \"now\": %s,\n", str(m.Live.Now))

	skipped := make([]snapshotSkipped, 0, len(m.Live.Skipped))
	for _, s := range m.Live.Skipped {
		skipped = append(skipped, snapshotSkipped(s))
	}
	if err := writeList(w, "skipped", len(skipped), func(i int) any { return skipped[i] }); err != nil {
		return err
	}
	w.WriteString(",\n")

	objs := append([]*cluster.Object(nil), m.Objects...)
	sortObjects(objs)
	if err := writeList(w, "objects", len(objs), func(i int) any { return whole(objs[i]) }); err != nil {
		return err
	}
	_, err := w.WriteString("\n}\n")
	return err
}

// whole returns an object's whole content: a pod decoded from a snapshot keeps
// only its head in Content.
func whole(o *cluster.Object) map[string]any {
	if o.ContentFunc != nil {
		if c := o.ContentFunc(); c != nil {
			return c
		}
	}
	return o.Content
}

// writeList writes a JSON array with one compact element per line.
func writeList(w *bufio.Writer, name string, n int, item func(int) any) error {
	fmt.Fprintf(w, " %q: [", name)
	for i := 0; i < n; i++ {
		b, err := marshal(item(i))
		if err != nil {
			return fmt.Errorf("%s %d: %w", name, i, err)
		}
		if i > 0 {
			w.WriteByte(',')
		}
		w.WriteString("\n  ")
		w.Write(b)
	}
	if n > 0 {
		w.WriteString("\n ")
	}
	_, err := w.WriteString("]")
	return err
}

// marshal encodes v as compact JSON without HTML escaping (object content is full
// of "<" and ">" in descriptions and commands, and escaping them hurts reading).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// A compressed snapshot may expand to at most this many times its size, and never
// beyond the budget's Bytes: real snapshots compress about ten to twenty times; a
// few megabytes that expand to gigabytes are an attack on the reader.
const (
	maxExpansion   = 50
	minExpandLimit = 32 << 20
)

func expandLimit(compressed int, most int64) int64 {
	return min(most, max(minExpandLimit, int64(compressed)*maxExpansion))
}

// gunzip decompresses a snapshot within expandLimit.
func gunzip(data []byte, most int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	// Read in chunks, so that a stream cut off at the limit never held more than
	// the limit (a growing buffer briefly holds twice what it has); the chunks
	// are joined into one buffer of the size read.
	limit := expandLimit(len(data), most)
	var chunks [][]byte
	var total int64
	for total <= limit {
		chunk := make([]byte, 1<<20)
		n, err := io.ReadFull(zr, chunk)
		chunks = append(chunks, chunk[:n])
		total += int64(n)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if total > limit {
		return nil, fmt.Errorf("it expands beyond %s (%d times its compressed size, at most %s; --max-snapshot-size raises that); it is not read", inputfs.Size(limit), maxExpansion, inputfs.Size(most))
	}
	return bytes.Join(chunks, nil), nil
}

// maxObjectBytes is the most one object of a snapshot takes: the API server
// stores no object over 1.5 MiB (etcd's default request limit), and written on
// one line with its statuses it stays well within twice that. A larger one was
// not read from a cluster.
const maxObjectBytes = 3 << 20

// Beyond largeSnapshot bytes, a snapshot's objects may take at most
// maxAveragePerObject each on average: those of a cluster take a few KiB (a
// pod about 1 to 8 KiB); gigabytes of a few huge objects claim a cluster that
// does not exist and are there to exhaust the reader.
const (
	largeSnapshot       = 128 << 20
	maxAveragePerObject = 64 << 10
)

// disproportionate refuses a snapshot of size bytes holding objects objects
// when it is large and its objects are, on average, far larger than a
// cluster's.
func disproportionate(size, objects int) error {
	if size <= largeSnapshot || size/max(objects, 1) <= maxAveragePerObject {
		return nil
	}
	return fmt.Errorf("its %d objects take %s, %s each on average: out of proportion to the cluster it claims (a cluster's objects take a few KiB each, and the API server stores none over 1.5 MiB); it is not read",
		objects, inputfs.Size(int64(size)), inputfs.Size(int64(size/max(objects, 1))))
}

// gzipMagic starts every gzip stream.
var gzipMagic = []byte{0x1f, 0x8b}

func isGzip(data []byte) bool { return bytes.HasPrefix(data, gzipMagic) }

// IsSnapshot reports whether data (plain or gzip-compressed) is an eksdoctor
// snapshot: a JSON object whose "kind" is EKSDoctorSnapshot.
func IsSnapshot(data []byte) bool {
	var r io.Reader = bytes.NewReader(data)
	if isGzip(data) {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return false
		}
		r = io.LimitReader(zr, minExpandLimit)
	}
	dec := json.NewDecoder(r)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if tok == "kind" {
			var kind string
			return dec.Decode(&kind) == nil && kind == SnapshotKind
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return false
}

// ReadSnapshot reads a snapshot (plain or gzip-compressed, told apart by its first
// bytes) into the model the live read that wrote it produced, within the
// default budget. file names the snapshot in errors and problems. An object the
// snapshot holds but that is not a Kubernetes object becomes a problem; the
// others are still read.
func ReadSnapshot(file string, data []byte) (*cluster.Model, error) {
	return ReadSnapshotWithin(file, data, Budget{})
}

// minCompressedPerObject is the fewest compressed bytes a snapshot's object
// takes: every object of a cluster carries a random uid (16 bytes of entropy)
// and a name of its own. A compressed snapshot denser than that was not read
// from a cluster; it is made to expand.
const minCompressedPerObject = 8

// ReadSnapshotWithin is ReadSnapshot within budget b (zero fields: the
// default): the objects beyond it are left out, said in a problem, and cost
// little — an unscheduled pod beyond the budget is recognised without being
// decoded.
func ReadSnapshotWithin(file string, data []byte, b Budget) (*cluster.Model, error) {
	doc, objects, err := readSnapshotDoc(file, data, b.SnapshotBytes())
	if err != nil {
		return nil, err
	}
	s := &state{Context: doc.Context, Server: doc.Server, Namespace: doc.Namespace, Now: doc.Now}
	for _, sk := range doc.Skipped {
		s.Skipped = append(s.Skipped, cluster.Skipped(sk))
	}
	spend := newSpending(b)
	if len(objects) > spend.b.Objects {
		spend.leftObjects = len(objects) - spend.b.Objects
		objects = objects[:spend.b.Objects]
	}
	probs := s.decodeObjects(file, objects, spend)
	s.spent = spend
	m := s.model()
	m.Problems = append(append(probs, spend.problems(cluster.Origin{File: file, Line: 1}, "the snapshot")...), m.Problems...)
	return m, nil
}

// readSnapshotDoc reads a snapshot's envelope (gunzipped first when it is
// compressed) and splits out its objects, undecoded; a snapshot of another
// kind or version, or a compressed one denser than a cluster's objects can
// be, is an error.
func readSnapshotDoc(file string, data []byte, most int64) (snapshotDoc, [][]byte, error) {
	compressed := 0
	if int64(len(data)) > most {
		return snapshotDoc{}, nil, fmt.Errorf("read snapshot %s: %w; --max-snapshot-size raises that", file, &inputfs.TooLargeError{Path: file, Limit: most})
	}
	if isGzip(data) {
		compressed = len(data)
		var err error
		if data, err = gunzip(data, most); err != nil {
			return snapshotDoc{}, nil, fmt.Errorf("read snapshot %s: %w", file, err)
		}
	}
	doc, objects, ok := splitSnapshot(data)
	if !ok {
		// The fast reader refused the document: the standard one says why
		// (with a line), or reads what the fast one is too strict for.
		if err := json.Unmarshal(data, &doc); err != nil {
			return snapshotDoc{}, nil, fmt.Errorf("read snapshot %s: %w", file, jsonError(data, err))
		}
		objects = make([][]byte, len(doc.Objects))
		for i, o := range doc.Objects {
			objects[i] = o
		}
	}
	if doc.Kind != SnapshotKind {
		return snapshotDoc{}, nil, fmt.Errorf("read snapshot %s: kind is %q, want %q", file, doc.Kind, SnapshotKind)
	}
	if doc.Version != SnapshotVersion {
		return snapshotDoc{}, nil, fmt.Errorf("read snapshot %s: version %d is not supported (this eksdoctor reads version %d)", file, doc.Version, SnapshotVersion)
	}
	if compressed > 0 && len(objects) > 1000 && compressed < minCompressedPerObject*len(objects) {
		return snapshotDoc{}, nil, fmt.Errorf("read snapshot %s: its %d objects take %d compressed bytes, fewer than %d each: out of proportion to what a cluster's objects hold (each has a random uid and a name of its own); it is not read", file, len(objects), compressed, minCompressedPerObject)
	}
	if err := disproportionate(len(data), len(objects)); err != nil {
		return snapshotDoc{}, nil, fmt.Errorf("read snapshot %s: %w", file, err)
	}
	return doc, objects, nil
}

// decodeObjects decodes the snapshot's objects into s, within the budget
// spend, and returns the problems of those that do not decode.
//
// Objects decode independently: in parallel, in chunks each with its
// decoder (and the strings it interns), wave after wave, so that the budget
// is spent in the snapshot's order and what it leaves out is dropped before
// the next wave is decoded.
func (s *state) decodeObjects(file string, objects [][]byte, spend *spending) []cluster.Problem {
	var probs []cluster.Problem
	const chunk, wave = 1024, 16 * 1024
	n := min(len(objects), wave)
	objs, pods, errs := make([]map[string]any, n), make([]*cluster.Pod, n), make([]error, n)
	left, owner := make([]bool, n), make([]cluster.ObjectRef, n)
	for start := 0; start < len(objects); start += wave {
		batch := objects[start:min(len(objects), start+wave)]
		full := spend.full()
		objs, pods, errs, left, owner = objs[:len(batch)], pods[:len(batch)], errs[:len(batch)], left[:len(batch)], owner[:len(batch)]
		clear(objs)
		clear(pods)
		clear(errs)
		clear(left)
		clear(owner)
		parallel.Each((len(batch)+chunk-1)/chunk, func(c int) {
			var d objectDecoder
			for i := c * chunk; i < min(len(batch), (c+1)*chunk); i++ {
				if len(batch[i]) > maxObjectBytes {
					errs[i] = fmt.Errorf("it takes %s, more than any object the API server stores (1.5 MiB; at most %s written in a snapshot); it is not read", inputfs.Size(int64(len(batch[i]))), inputfs.Size(maxObjectBytes))
					continue
				}
				// Past the budget, an unscheduled pod is read only as far
				// as its owner: kept when the budget keeps its workload's
				// pods, else left out without being decoded.
				if full {
					if owner[i], left[i] = quickUnscheduled(&d.dec, batch[i]); left[i] {
						continue
					}
				}
				objs[i], pods[i], errs[i] = d.decode(batch[i])
			}
		})
		for i, obj := range objs {
			switch {
			case left[i]:
				if !spend.admitPending(owner[i]) {
					continue
				}
				// A pod of a workload the budget keeps: decoded after all.
				var d objectDecoder
				if obj, pods[i], errs[i] = d.decode(objects[start+i]); errs[i] != nil {
					probs = append(probs, objectProblem(file, start+i, errs[i]))
					continue
				}
			case errs[i] != nil:
				probs = append(probs, objectProblem(file, start+i, errs[i]))
				continue
			case pods[i] != nil && pods[i].Spec.NodeName == "" || pods[i] == nil && unscheduled(obj):
				if !spend.admitPending(ownerOf(obj)) {
					continue
				}
			}
			s.Objects = append(s.Objects, obj)
			s.pods = append(s.pods, pods[i])
		}
	}
	return probs
}

func objectProblem(file string, i int, err error) cluster.Problem {
	return cluster.Problem{
		Origin:  cluster.Origin{File: file, Path: fmt.Sprintf("objects.%d", i)},
		Message: fmt.Sprintf("snapshot object %d: %v", i, err),
	}
}

// splitSnapshot reads a snapshot's header and finds its objects, without
// decoding or copying them (each is a slice of data). ok is false when the
// document is not valid JSON or not what a snapshot's writer writes; the
// standard decoder then reads it.
func splitSnapshot(data []byte) (doc snapshotDoc, objects [][]byte, ok bool) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(data))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return doc, nil, false
	}
	// header gathers the members other than objects, each after a comma (the
	// first comma becomes the opening brace).
	var header []byte
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return doc, nil, false
		}
		name := tok.String()
		if name != "objects" {
			// The other members are read into snapshotDoc by its own tags,
			// all at once below.
			v, err := dec.ReadValue()
			if err != nil {
				return doc, nil, false
			}
			if header, err = jsontext.AppendQuote(append(header, ','), name); err != nil {
				return doc, nil, false
			}
			header = append(append(header, ':'), v...)
			continue
		}
		if objects, err = rawElements(dec, data); err != nil {
			return doc, nil, false
		}
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return doc, nil, false
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return doc, nil, false
	}
	if len(header) == 0 {
		header = []byte{','}
	}
	header[0] = '{'
	if jsonv2.Unmarshal(append(header, '}'), &doc) != nil {
		return doc, nil, false
	}
	return doc, objects, true
}

func checkObject(obj map[string]any) error {
	if obj == nil {
		return errors.New("not an object")
	}
	for _, f := range []string{"apiVersion", "kind"} {
		if s, _ := obj[f].(string); s == "" {
			return fmt.Errorf("no %s", f)
		}
	}
	if s, _ := cluster.Lookup(obj, "metadata.name").(string); s == "" {
		return errors.New("no metadata.name")
	}
	return nil
}

// jsonError adds the line to a JSON syntax error, so a hand-edited snapshot can be
// fixed.
func jsonError(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("line %d: %w", textpos.Line(data, se.Offset), err)
	}
	return err
}
