package terraform

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"net"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/apparentlymart/go-cidr/cidr"
	ctycidr "github.com/hashicorp/go-cty-funcs/cidr"
	"github.com/hashicorp/go-cty-funcs/crypto"
	"github.com/hashicorp/go-cty-funcs/encoding"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// Terraform's own functions, those go-cty does not have or has with other semantics,
// written as go-cty functions so that they are called, checked and converted as the
// library's are (callStd). Each returns an unknown value where Terraform could not
// know the result; a string that holds a placeholder is such an unknown.

// tfFuncs are Terraform's functions implemented here.
var tfFuncs = map[string]function.Function{
	"one":          tfOne,
	"index":        tfIndex,
	"length":       tfLength,
	"lookup":       tfLookup,
	"flatten":      tfFlatten,
	"sum":          tfSum,
	"alltrue":      boolFold(false),
	"anytrue":      boolFold(true),
	"startswith":   stringPredicate(strings.HasPrefix),
	"endswith":     stringPredicate(strings.HasSuffix),
	"strcontains":  stringPredicate(strings.Contains),
	"replace":      tfReplace,
	"base64encode": encoding.Base64EncodeFunc,
	"base64decode": tfBase64Decode,
	"md5":          unknownOverPlaceholders(crypto.Md5Func),
	"sha1":         unknownOverPlaceholders(crypto.Sha1Func),
	"sha256":       unknownOverPlaceholders(crypto.Sha256Func),
	"sha512":       unknownOverPlaceholders(crypto.Sha512Func),
	"base64sha256": hashFunc(func(b []byte) []byte { h := sha256.Sum256(b); return h[:] }),
	"base64sha512": hashFunc(func(b []byte) []byte { h := sha512.Sum512(b); return h[:] }),
	"basename":     stringFunc(func(s string) (string, error) { return path.Base(strings.ReplaceAll(s, "\\", "/")), nil }),
	"dirname":      stringFunc(func(s string) (string, error) { return path.Dir(strings.ReplaceAll(s, "\\", "/")), nil }),
	"urlencode":    encoding.URLEncodeFunc,
	"cidrhost":     tfCidrHost,
	"cidrnetmask":  tfCidrNetmask,
	"cidrsubnet":   tfCidrSubnet,
	"cidrsubnets":  unknownOverPlaceholders(ctycidr.SubnetsFunc),
	"transpose":    tfTranspose,
	"matchkeys":    tfMatchkeys,
}

// anyParam is a parameter of any type, null or not, whose unknown leaves keep their
// marks (the function moves them about without looking into them).
func anyParam(name string) function.Parameter {
	return function.Parameter{Name: name, Type: cty.DynamicPseudoType, AllowDynamicType: true, AllowMarked: true}
}

// unknownResult is what a function returns when its result depends on an unknown.
var unknownResult = cty.DynamicVal

// holdsPlaceholder reports whether a string is text around values not known yet.
func holdsPlaceholder(s string) bool { return strings.Contains(s, "${") }

// tfOne is Terraform's one(list): null for no element, the element for one.
var tfOne = function.New(&function.Spec{
	Params: []function.Parameter{anyParam("list")},
	Type:   function.StaticReturnType(cty.DynamicPseudoType),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		v := unmark(args[0])
		if v.IsNull() || !isSeq(v.Type()) {
			return cty.NilVal, errors.New("argument is not a list")
		}
		els := elements(v)
		switch len(els) {
		case 0:
			return cty.NullVal(cty.DynamicPseudoType), nil
		case 1:
			return els[0], nil
		}
		return cty.NilVal, errors.New("list has more than one element")
	},
})

// tfIndex is Terraform's index(list, value), the position of value in list; go-cty's
// IndexFunc is the index operator instead.
var tfIndex = function.New(&function.Spec{
	Params: []function.Parameter{anyParam("list"), anyParam("value")},
	Type:   function.StaticReturnType(cty.DynamicPseudoType),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		list := unmark(args[0])
		if list.IsNull() || !(list.Type().IsListType() || list.Type().IsTupleType()) {
			return cty.NilVal, errors.New("first argument is not a list")
		}
		want := unmarkDeep(args[1])
		for i, el := range elements(list) {
			if !el.IsWhollyKnown() {
				return unknownResult, nil
			}
			eq := unmarkDeep(el).Equals(want)
			if !eq.IsKnown() {
				return unknownResult, nil
			}
			if eq.True() {
				return cty.NumberIntVal(int64(i)), nil
			}
		}
		return cty.NilVal, errors.New("item not found")
	},
})

// tfLength is Terraform's length: of a string its characters (go-cty's strlen), of a
// collection its elements (go-cty's length), of an object its attributes (go-cty's
// length takes no objects).
var tfLength = function.New(&function.Spec{
	Params: []function.Parameter{anyParam("value")},
	Type:   function.StaticReturnType(cty.Number),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		v := unmarkDeep(args[0])
		switch {
		case v.IsNull():
			return cty.NilVal, errors.New("argument is null")
		case v.Type() == cty.String:
			if holdsPlaceholder(v.AsString()) {
				return cty.UnknownVal(cty.Number), nil
			}
			return stdlib.Strlen(v)
		case v.Type().IsObjectType():
			return cty.NumberIntVal(int64(v.LengthInt())), nil
		case isSeq(v.Type()) || v.Type().IsMapType():
			return stdlib.Length(v)
		}
		return cty.NilVal, errors.New("argument must be a string, list or map")
	},
})

// tfLookup is Terraform's lookup(map, key, default). It stays hand-written: go-cty's
// needs the default, and returns an unknown for a map that holds any unknown even
// when the element asked for is known, which is most maps here (a module output
// among known settings).
var tfLookup = function.New(&function.Spec{
	Params:   []function.Parameter{anyParam("map"), anyParam("key")},
	VarParam: &function.Parameter{Name: "default", Type: cty.DynamicPseudoType, AllowDynamicType: true, AllowMarked: true, AllowNull: true, AllowUnknown: true},
	Type:     function.StaticReturnType(cty.DynamicPseudoType),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		if len(args) > 3 {
			return cty.NilVal, fmt.Errorf("wrong number of arguments (%d given)", len(args))
		}
		m, k := unmark(args[0]), unmark(args[1])
		if m.IsNull() || !isMapLike(m.Type()) {
			return cty.NilVal, errors.New("first argument is not a map")
		}
		key, err := convert.Convert(k, cty.String)
		if err != nil || key.IsNull() {
			return cty.NilVal, errors.New("key must be a string")
		}
		switch {
		case m.Type().IsObjectType() && m.Type().HasAttribute(key.AsString()):
			return m.GetAttr(key.AsString()), nil
		case m.Type().IsMapType() && m.HasIndex(key).True():
			return m.Index(key), nil
		case len(args) == 3:
			return args[2], nil
		}
		return cty.NilVal, fmt.Errorf("no element %q and no default", key.AsString())
	},
})

// tfFlatten is go-cty's flatten, but a list that holds an unknown flattens to an
// unknown: an unknown here has no type, and may be a list whose elements the result
// would hold (go-cty keeps it as one element). So does a list nested more than 64
// deep or flattening to more than maxElements elements.
var tfFlatten = function.New(&function.Spec{
	Params: []function.Parameter{anyParam("list")},
	Type:   function.StaticReturnType(cty.DynamicPseudoType),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		v := unmark(args[0])
		if v.IsNull() || !isSeq(v.Type()) {
			return cty.NilVal, errors.New("argument is not a list")
		}
		leaves := 0
		var known func(v cty.Value, depth int) bool
		known = func(v cty.Value, depth int) bool {
			if depth > 64 {
				return false
			}
			for _, el := range elements(v) {
				if !el.IsKnown() {
					return false
				}
				if u := unmark(el); !u.IsNull() && isSeq(u.Type()) {
					if !known(u, depth+1) {
						return false
					}
					continue
				}
				if leaves++; leaves > maxElements {
					return false
				}
			}
			return true
		}
		if !known(v, 0) {
			return unknownResult, nil
		}
		return stdlib.Flatten(v)
	},
})

// tfSum is Terraform's sum of a list of numbers.
var tfSum = function.New(&function.Spec{
	Params: []function.Parameter{anyParam("list")},
	Type:   function.StaticReturnType(cty.Number),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		els, err := listArg(args[0])
		if err != nil {
			return cty.NilVal, err
		}
		if len(els) == 0 {
			return cty.NilVal, errors.New("list is empty")
		}
		total := new(big.Float)
		for _, x := range els {
			if !x.IsKnown() {
				return cty.UnknownVal(cty.Number), nil
			}
			n, cerr := convert.Convert(unmark(x), cty.Number)
			if cerr != nil || n.IsNull() {
				return cty.NilVal, errors.New("elements must be numbers")
			}
			total.Add(total, n.AsBigFloat())
		}
		return cty.NumberVal(total), nil
	},
})

func listArg(v cty.Value) ([]cty.Value, error) {
	v = unmark(v)
	if v.IsNull() || !isSeq(v.Type()) {
		return nil, errors.New("argument must be a list")
	}
	return elements(v), nil
}

// boolFold is alltrue (decisive false) and anytrue (decisive true): a known
// decisive element settles the answer even when others are unknown.
func boolFold(decisive bool) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{anyParam("list")},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			els, err := listArg(args[0])
			if err != nil {
				return cty.NilVal, err
			}
			unknown := false
			for _, x := range els {
				b, ok := knownBool(x)
				if !ok {
					if x.IsKnown() {
						return cty.NilVal, errors.New("elements must be bools")
					}
					unknown = true
					continue
				}
				if b == decisive {
					return cty.BoolVal(decisive), nil
				}
			}
			if unknown {
				return cty.UnknownVal(cty.Bool), nil
			}
			return cty.BoolVal(!decisive), nil
		},
	})
}

func stringParams(names ...string) []function.Parameter {
	ps := make([]function.Parameter, len(names))
	for i, n := range names {
		ps[i] = function.Parameter{Name: n, Type: cty.String}
	}
	return ps
}

// stringPredicate is startswith, endswith and strcontains.
func stringPredicate(f func(s, sub string) bool) function.Function {
	return function.New(&function.Spec{
		Params: stringParams("string", "substr"),
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			s, sub := args[0].AsString(), args[1].AsString()
			if holdsPlaceholder(s) || holdsPlaceholder(sub) {
				return cty.UnknownVal(cty.Bool), nil
			}
			return cty.BoolVal(f(s, sub)), nil
		},
	})
}

// stringFunc is a function of one string to a string.
func stringFunc(f func(string) (string, error)) function.Function {
	return function.New(&function.Spec{
		Params: stringParams("string"),
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			out, err := f(args[0].AsString())
			if err != nil {
				return cty.NilVal, err
			}
			return cty.StringVal(out), nil
		},
	})
}

// unknownOverPlaceholders is a function of go-cty-funcs whose result is not known
// when a string argument holds values not known yet: the function would take the
// placeholder's text for the value (hash it, parse it as a network).
func unknownOverPlaceholders(f function.Function) function.Function {
	return function.New(&function.Spec{
		Params:   f.Params(),
		VarParam: f.VarParam(),
		Type:     f.ReturnTypeForValues,
		Impl: func(args []cty.Value, ret cty.Type) (cty.Value, error) {
			for _, a := range args {
				if a.Type() == cty.String && holdsPlaceholder(a.AsString()) {
					return cty.UnknownVal(ret), nil
				}
			}
			return f.Call(args)
		},
	})
}

// tfBase64Decode is Terraform's base64decode. It stays hand-written: go-cty-funcs'
// writes text that does not decode to UTF-8 to the process's log.
var tfBase64Decode = stringFunc(func(s string) (string, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return "", fmt.Errorf("invalid base64: %w", err)
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("decoded base64 is not UTF-8 text")
	}
	return string(b), nil
})

// hashFunc is a hash of a string's UTF-8 bytes in base64: base64sha256 and
// base64sha512, which go-cty-funcs lacks. The hash of text that holds values not
// known yet is not known.
func hashFunc(hash func([]byte) []byte) function.Function {
	return function.New(&function.Spec{
		Params: stringParams("string"),
		Type:   function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			s := args[0].AsString()
			if holdsPlaceholder(s) {
				return cty.UnknownVal(cty.String), nil
			}
			return cty.StringVal(base64.StdEncoding.EncodeToString(hash([]byte(s)))), nil
		},
	})
}

// tfReplace is Terraform's replace: a search string between slashes is a regular
// expression (go-cty's regex_replace), any other is replaced as it is (go-cty's
// replace).
var tfReplace = function.New(&function.Spec{
	Params: stringParams("string", "search", "replace"),
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		search := args[1].AsString()
		if len(search) > 1 && search[0] == '/' && search[len(search)-1] == '/' {
			v, err := stdlib.RegexReplace(args[0], cty.StringVal(search[1:len(search)-1]), args[2])
			if err != nil {
				return cty.NilVal, fmt.Errorf("invalid regular expression: %w", err)
			}
			return v, nil
		}
		return stdlib.Replace(args[0], args[1], args[2])
	},
})

// parseCIDR parses a network prefix. Terraform's parser also takes IPv4 octets with
// leading zeros (read as decimal); Go's, used here, refuses them.
func parseCIDR(s string) (*net.IPNet, error) {
	if holdsPlaceholder(s) {
		return nil, nil
	}
	_, network, err := net.ParseCIDR(s)
	if err != nil {
		return nil, fmt.Errorf("invalid CIDR expression: %w", err)
	}
	return network, nil
}

// wholeNumber returns a number argument as an integer.
func wholeNumber(v cty.Value, what string) (*big.Int, error) {
	i, acc := v.AsBigFloat().Int(nil)
	if acc != big.Exact {
		return nil, fmt.Errorf("%s must be a whole number", what)
	}
	return i, nil
}

// smallNumber returns a whole number argument between lo and hi.
func smallNumber(v cty.Value, what string, lo, hi int64) (int, error) {
	i, err := wholeNumber(v, what)
	if err != nil {
		return 0, err
	}
	if !i.IsInt64() || i.Int64() < lo || i.Int64() > hi {
		return 0, fmt.Errorf("%s must be between %d and %d", what, lo, hi)
	}
	return int(i.Int64()), nil
}

// tfCidrHost is Terraform's cidrhost(prefix, hostnum): the address of a host in a
// network; a negative number counts from the end. It stays hand-written: the host
// number of go-cty-funcs' is an int, too small for the hosts of an IPv6 network,
// which Terraform's takes.
var tfCidrHost = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "prefix", Type: cty.String}, {Name: "hostnum", Type: cty.Number}},
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		network, err := parseCIDR(args[0].AsString())
		if err != nil || network == nil {
			return cty.UnknownVal(cty.String), err
		}
		n, err := wholeNumber(args[1], "host number")
		if err != nil {
			return cty.NilVal, err
		}
		ip, err := cidr.HostBig(network, n)
		if err != nil {
			return cty.NilVal, err
		}
		return cty.StringVal(ip.String()), nil
	},
})

// tfCidrNetmask is Terraform's cidrnetmask(prefix): an IPv4 network's mask in
// dotted-decimal form. It stays hand-written: go-cty-funcs' gives IPv6 networks a
// mask, which Terraform refuses.
var tfCidrNetmask = function.New(&function.Spec{
	Params: stringParams("prefix"),
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		network, err := parseCIDR(args[0].AsString())
		if err != nil || network == nil {
			return cty.UnknownVal(cty.String), err
		}
		if network.IP.To4() == nil {
			return cty.NilVal, errors.New("IPv6 addresses cannot have a netmask")
		}
		return cty.StringVal(net.IP(network.Mask).String()), nil
	},
})

// maxNewBits is how far Terraform lets cidrsubnet extend a prefix in one call.
const maxNewBits = 32

// tfCidrSubnet is Terraform's cidrsubnet(prefix, newbits, netnum): the netnum-th
// subnet of a network with newbits more bits of prefix. It stays hand-written:
// go-cty-funcs' returns a wrong network, not an error, for a negative newbits or
// netnum (cidrsubnet("10.0.0.0/16", 8, -1) is 0.0.1.0/24 there).
var tfCidrSubnet = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "prefix", Type: cty.String}, {Name: "newbits", Type: cty.Number}, {Name: "netnum", Type: cty.Number}},
	Type:   function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		network, err := parseCIDR(args[0].AsString())
		if err != nil || network == nil {
			return cty.UnknownVal(cty.String), err
		}
		newbits, err := smallNumber(args[1], "newbits", 0, maxNewBits)
		if err != nil {
			return cty.NilVal, err
		}
		netnum, err := wholeNumber(args[2], "netnum")
		if err != nil {
			return cty.NilVal, err
		}
		if netnum.Sign() < 0 {
			return cty.NilVal, errors.New("netnum must not be negative")
		}
		subnet, err := cidr.SubnetBig(network, newbits, netnum)
		if err != nil {
			return cty.NilVal, err
		}
		return cty.StringVal(subnet.String()), nil
	},
})

// tfTranspose is Terraform's transpose(map of lists of strings): each string of the
// lists to the keys whose lists hold it.
var tfTranspose = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "values", Type: cty.Map(cty.List(cty.String))}},
	Type:   function.StaticReturnType(cty.Map(cty.List(cty.String))),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		if !args[0].IsWhollyKnown() {
			return cty.UnknownVal(cty.Map(cty.List(cty.String))), nil
		}
		out := map[string][]cty.Value{}
		for it := args[0].ElementIterator(); it.Next(); {
			k, list := it.Element()
			if list.IsNull() {
				return cty.NilVal, errors.New("lists must not be null")
			}
			for lt := list.ElementIterator(); lt.Next(); {
				_, v := lt.Element()
				if v.IsNull() {
					return cty.NilVal, errors.New("list elements must not be null")
				}
				if holdsPlaceholder(v.AsString()) || holdsPlaceholder(k.AsString()) {
					return cty.UnknownVal(cty.Map(cty.List(cty.String))), nil
				}
				out[v.AsString()] = append(out[v.AsString()], k)
			}
		}
		if len(out) == 0 {
			return cty.MapValEmpty(cty.List(cty.String)), nil
		}
		m := make(map[string]cty.Value, len(out))
		for k, ks := range out {
			m[k] = cty.ListVal(ks)
		}
		return cty.MapVal(m), nil
	},
})

// tfMatchkeys is Terraform's matchkeys(values, keys, searchset): the elements of
// values whose key, the element of keys at the same position, is in searchset.
var tfMatchkeys = function.New(&function.Spec{
	Params: []function.Parameter{anyParam("values"), anyParam("keys"), anyParam("searchset")},
	Type:   function.StaticReturnType(cty.DynamicPseudoType),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		vals, keys, search := unmark(args[0]), unmark(args[1]), unmark(args[2])
		for _, v := range []cty.Value{vals, keys, search} {
			if v.IsNull() || !isSeq(v.Type()) {
				return cty.NilVal, errors.New("arguments must be lists")
			}
		}
		if vals.LengthInt() != keys.LengthInt() {
			return cty.NilVal, errors.New("length of keys and values should be equal")
		}
		if !keys.IsWhollyKnown() || !search.IsWhollyKnown() || hasPlaceholder(keys) || hasPlaceholder(search) {
			return unknownResult, nil
		}
		ks, ss := elements(unmarkDeep(keys)), elements(unmarkDeep(search))
		var out []cty.Value
		for i, v := range elements(vals) {
			for _, s := range ss {
				if eq := ks[i].Equals(s); eq.IsKnown() && eq.True() {
					out = append(out, v)
					break
				}
			}
		}
		return cty.TupleVal(out), nil
	},
})
