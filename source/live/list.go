package live

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/eksdoctor/eksdoctor/cluster"
)

// A large cluster's lists are read page by page, each page's bytes decoded
// straight into the model's objects (a pod's spec and status into their
// types, as a snapshot's are) and released before the next page is asked
// for: what a read holds is what the model keeps, never a whole list's
// generic trees.
//
// Lists are consistent reads (no resourceVersion), paginated with limit and
// continue: an API server with the watch cache's consistent reads (Kubernetes
// 1.31 on, on by default) answers them from its cache, not from etcd, and
// every page after the first is read at the first one's resourceVersion.
// resourceVersion=0 would spare no more work there and, on older servers,
// returns a whole list in one answer, ignoring limit.

// rawClient is the client lists are made with: the dynamic client's
// configuration (its rate limiter, timeouts and transport), answers asked
// for in JSON.
func rawClient(cfg *rest.Config) (rest.Interface, error) {
	c := dynamic.ConfigFor(cfg)
	c.AcceptContentTypes = "application/json"
	c.ContentType = "application/json"
	c.GroupVersion = nil
	c.APIPath = "/"
	return rest.UnversionedRESTClientFor(c)
}

// listPath is the path a list of gvr is asked at, in namespace ns ("" for all).
func listPath(gvr schema.GroupVersionResource, ns string) []string {
	p := []string{"apis", gvr.Group, gvr.Version}
	if gvr.Group == "" {
		p = []string{"api", gvr.Version}
	}
	if ns != "" {
		p = append(p, "namespaces", ns)
	}
	return append(p, gvr.Resource)
}

// decodedPage is what one page of a list holds, decoded: its objects, and
// their typed pods index for index (nil for those that are not pods).
type decodedPage struct {
	objects []map[string]any
	pods    []*cluster.Pod
	// rv is the resourceVersion the list was read at (its first page's):
	// what a watch of it starts from.
	rv string
}

// listPages reads every object of gvr, page by page: each page is asked for
// within the retry rules (429 and 5xx answers waited for and asked again)
// and decoded before the next one is asked for. A continue
// token that expired mid-list (410) restarts the list once from its start,
// the pages read so far dropped.
func (r *reader) listPages(ctx context.Context, gvr schema.GroupVersionResource, ns, selector string) (decodedPage, error) {
	for restarts := 0; ; restarts++ {
		got, err := r.listOnce(ctx, gvr, ns, selector)
		if err != nil && apierrors.IsResourceExpired(err) && restarts == 0 {
			continue
		}
		return got, err
	}
}

func (r *reader) listOnce(ctx context.Context, gvr schema.GroupVersionResource, ns, selector string) (decodedPage, error) {
	var all decodedPage
	var d objectDecoder
	path := listPath(gvr, ns)
	cont := ""
	for {
		var data []byte
		err := retry(ctx, r.opts.Timeout, func(ctx context.Context) error {
			req := r.raw.Get().AbsPath(path...).Param("limit", strconv.FormatInt(r.opts.PageSize, 10))
			if cont != "" {
				req = req.Param("continue", cont)
			}
			if selector != "" {
				req = req.Param("fieldSelector", selector)
			}
			res := req.Do(ctx)
			if err := res.Error(); err != nil {
				return err
			}
			var err error
			data, err = res.Raw()
			return err
		})
		if err != nil {
			return decodedPage{}, err
		}
		next, n, err := d.decodePage(data, &all)
		if err != nil {
			return decodedPage{}, &pageError{err: err}
		}
		if cont == "" {
			all.rv = d.listRV
		}
		r.progress.add(n)
		if next == "" {
			return all, nil
		}
		cont = next
	}
}

// pageError is a page of a list that does not decode: that list is skipped,
// saying why, and the others are still read.
type pageError struct{ err error }

func (e *pageError) Error() string { return "a page of the list does not decode: " + e.err.Error() }
func (e *pageError) Unwrap() error { return e.err }

// decodePage decodes one page of a list into p: its items, each as the
// snapshot reader decodes an object, with the apiVersion and kind the API
// server leaves out of a built-in list's items taken from the list's. It
// returns the page's continue token and how many items it held.
func (d *objectDecoder) decodePage(data []byte, p *decodedPage) (string, int, error) {
	head, items, err := splitList(data)
	if err != nil {
		return "", 0, err
	}
	d.head = map[string]any{}
	if head.APIVersion != "" {
		d.head["apiVersion"] = head.APIVersion
	}
	if kind, ok := strings.CutSuffix(head.Kind, "List"); ok && kind != "" {
		d.head["kind"] = kind
	}
	for i, raw := range items {
		if len(raw) > maxObjectBytes {
			return "", 0, fmt.Errorf("item %d takes %d bytes, more than any object the API server stores", i, len(raw))
		}
		obj, pod, err := d.decode(raw)
		if err != nil {
			return "", 0, fmt.Errorf("item %d: %w", i, err)
		}
		// What no check reads is let go as the page is read, not once the
		// whole cluster is.
		prune(obj)
		p.objects = append(p.objects, obj)
		p.pods = append(p.pods, pod)
	}
	d.listRV = head.Metadata.ResourceVersion
	return head.Metadata.Continue, len(items), nil
}

// listHead is what a list's answer says besides its items.
type listHead struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Continue        string `json:"continue"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
}

// splitList reads a list's head and finds its items, undecoded (each is a
// slice of data).
func splitList(data []byte) (listHead, [][]byte, error) {
	var head listHead
	var items [][]byte
	var err error
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	bad := func(err error) (listHead, [][]byte, error) {
		return listHead{}, nil, fmt.Errorf("the API server's answer is not a list: %w", err)
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return bad(fmt.Errorf("it does not start with an object (%v)", err))
	}
	for dec.PeekKind() == '"' {
		var tok jsontext.Token
		if tok, err = dec.ReadToken(); err != nil {
			return bad(err)
		}
		switch name := tok.String(); name {
		case "apiVersion", "kind":
			v, err := dec.ReadToken()
			if err != nil {
				return bad(err)
			}
			if v.Kind() != '"' {
				return bad(fmt.Errorf("%s is not a string", name))
			}
			if name == "kind" {
				head.Kind = v.String()
			} else {
				head.APIVersion = v.String()
			}
		case "metadata":
			v, err := dec.ReadValue()
			if err != nil {
				return bad(err)
			}
			if err := jsonv2.Unmarshal(v, &head.Metadata); err != nil {
				return bad(err)
			}
		case "items":
			items, err = rawElements(dec, data)
			switch {
			case errors.Is(err, errNotArray):
				return bad(errors.New("items is not an array"))
			case err != nil:
				return bad(err)
			}
		default:
			if err := dec.SkipValue(); err != nil {
				return bad(err)
			}
		}
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return bad(fmt.Errorf("the object does not end (%v)", err))
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return bad(fmt.Errorf("text follows the object"))
	}
	return head, items, nil
}

var errNotArray = errors.New("not an array")

// rawElements reads the array (or null) the decoder is at and returns its
// elements undecoded, each a slice of data, the bytes dec reads.
func rawElements(dec *jsontext.Decoder, data []byte) ([][]byte, error) {
	if dec.PeekKind() == 'n' {
		_, err := dec.ReadToken()
		return nil, err
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	if tok.Kind() != '[' {
		return nil, errNotArray
	}
	var elems [][]byte
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		end := int(dec.InputOffset())
		elems = append(elems, data[end-len(v):end:end])
	}
	_, err = dec.ReadToken()
	return elems, err
}
