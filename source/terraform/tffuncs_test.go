package terraform

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The pure functions Terraform evaluates at plan time are evaluated; unknown
// arguments, and text that holds values not known yet, make them unknown.
func TestEvalPureFunctions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		expr string
		want any
	}{
		{name: "cidrsubnet", expr: `cidrsubnet("10.0.0.0/16", 8, 2)`, want: "10.0.2.0/24"},
		{name: "cidrsubnet ipv6", expr: `cidrsubnet("fd00:fd12:3456:7890::/56", 8, 1)`, want: "fd00:fd12:3456:7801::/64"},
		{name: "cidrsubnet too many bits", expr: `cidrsubnet("10.0.0.0/30", 4, 0)`, want: `${cidrsubnet("10.0.0.0/30", 4, 0)}`},
		{name: "cidrsubnet number too large", expr: `cidrsubnet("10.0.0.0/16", 2, 4)`, want: `${cidrsubnet("10.0.0.0/16", 2, 4)}`},
		{name: "cidrsubnet unknown prefix", expr: `cidrsubnet(module.k.cidr, 8, 1)`, want: `${cidrsubnet(module.k.cidr, 8, 1)}`},
		{name: "cidrsubnet prefix with placeholder", expr: `cidrsubnet("${module.k.ip}/16", 8, 1)`, want: `${cidrsubnet("${module.k.ip}/16", 8, 1)}`},
		{name: "cidrsubnet unknown number", expr: `cidrsubnet("10.0.0.0/16", 8, module.k.n)`, want: `${cidrsubnet("10.0.0.0/16", 8, module.k.n)}`},
		{name: "cidrsubnets", expr: `cidrsubnets("10.1.0.0/16", 4, 4, 8, 4)`, want: []any{"10.1.0.0/20", "10.1.16.0/20", "10.1.32.0/24", "10.1.48.0/20"}},
		{name: "cidrsubnets none", expr: `cidrsubnets("10.1.0.0/16")`, want: []any{}},
		{name: "cidrsubnets out of space", expr: `cidrsubnets("10.1.0.0/24", 1, 1, 1)`, want: `${cidrsubnets("10.1.0.0/24", 1, 1, 1)}`},
		{name: "cidrsubnets unknown", expr: `cidrsubnets(var.cidr, 4, 4)`, want: `${cidrsubnets(var.cidr, 4, 4)}`},
		{name: "for over cidrsubnets", expr: `[for i, az in ["a", "b"] : cidrsubnet("10.0.0.0/16", 4, i)]`, want: []any{"10.0.0.0/20", "10.0.16.0/20"}},
		{name: "cidrhost", expr: `cidrhost("10.12.112.0/20", 16)`, want: "10.12.112.16"},
		{name: "cidrhost from the end", expr: `cidrhost("10.12.112.0/20", -2)`, want: "10.12.127.254"},
		{name: "cidrhost out of range", expr: `cidrhost("10.0.0.0/30", 9)`, want: `${cidrhost("10.0.0.0/30", 9)}`},
		{name: "cidrhost unknown", expr: `cidrhost(module.k.cidr, 5)`, want: `${cidrhost(module.k.cidr, 5)}`},
		{name: "cidrnetmask", expr: `cidrnetmask("172.16.0.0/12")`, want: "255.240.0.0"},
		{name: "cidrnetmask invalid", expr: `cidrnetmask("172.16.0.0")`, want: `${cidrnetmask("172.16.0.0")}`},
		{name: "cidrnetmask unknown", expr: `cidrnetmask(var.cidr)`, want: `${cidrnetmask(var.cidr)}`},
		{name: "base64sha256", expr: `base64sha256("hello world")`, want: "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek="},
		{name: "base64sha512", expr: `base64sha512("hello world")`, want: "MJ7MSJwS1utMxA9QyQLytNDtd+5RGnx6m808qG1M2G+YndNbxf9JlnDaNCVbRbDP2DDoH2Bdz33FVC6TrpzXbw=="},
		{name: "base64sha256 unknown", expr: `base64sha256(module.k.text)`, want: `${base64sha256(module.k.text)}`},
		{name: "sha256 of placeholder", expr: `sha256("x-${module.k.text}")`, want: `${sha256("x-${module.k.text}")}`},
		{name: "sha1", expr: `sha1("a")`, want: "86f7e437faa5a7fce15d1ddcb9eaeaea377667b8"},
		{name: "md5", expr: `md5("a")`, want: "0cc175b9c0f1b6a831c399e269772661"},
		{name: "md5 unknown", expr: `md5(module.k.text)`, want: `${md5(module.k.text)}`},
		{name: "sha512", expr: `sha512("a")`, want: "1f40fc92da241694750979ee6cf582f2d5d7d28e18335de05abc54d0560e0f5302860c652bf08d560252aa5e74210546f369fbbbce8c12cfc7957b2652fe9a75"},
		{name: "sha1 of placeholder", expr: `sha1("${module.k.text}")`, want: `${sha1("${module.k.text}")}`},
		{name: "cidrsubnets prefix with placeholder", expr: `cidrsubnets("${module.k.ip}/16", 8)`, want: `${cidrsubnets("${module.k.ip}/16", 8)}`},
		// Terraform extends a prefix by at most 32 bits in one call, IPv6 too.
		{name: "cidrsubnets more than 32 bits", expr: `cidrsubnets("fd00::/56", 40)`, want: `${cidrsubnets("fd00::/56", 40)}`},
		{name: "cidrsubnets no bit", expr: `cidrsubnets("10.1.0.0/24", 0)`, want: `${cidrsubnets("10.1.0.0/24", 0)}`},
		{name: "cidrsubnet negative netnum", expr: `cidrsubnet("10.0.0.0/16", 8, -1)`, want: `${cidrsubnet("10.0.0.0/16", 8, -1)}`},
		{name: "cidrsubnet negative newbits", expr: `cidrsubnet("10.0.0.0/16", -1, 0)`, want: `${cidrsubnet("10.0.0.0/16", -1, 0)}`},
		{name: "cidrhost ipv6 beyond int64", expr: `cidrhost("fd00::/64", 1e19)`, want: "fd00::8ac7:2304:89e8:0"},
		{name: "cidrnetmask ipv6", expr: `cidrnetmask("fd00::/64")`, want: `${cidrnetmask("fd00::/64")}`},
		// Terraform's urlencode is a query escape: a space is "+"; its own example.
		{name: "urlencode", expr: `urlencode("Hello World!")`, want: "Hello+World%21"},
		{name: "urlencode path", expr: `urlencode("foo:bar@localhost?foo=bar&bar=baz")`, want: "foo%3Abar%40localhost%3Ffoo%3Dbar%26bar%3Dbaz"},
		{name: "base64decode not UTF-8", expr: `base64decode("/w==")`, want: `${base64decode("/w==")}`},
		{name: "transpose", expr: `transpose({a = ["1", "2"], b = ["2", "3"]})`, want: map[string]any{"1": []any{"a"}, "2": []any{"a", "b"}, "3": []any{"b"}}},
		{name: "transpose empty", expr: `transpose({})`, want: map[string]any{}},
		{name: "transpose unknown element", expr: `transpose({a = [module.k.x]})`, want: `${transpose({a = [module.k.x]})}`},
		{name: "transpose unknown", expr: `transpose(module.k.m)`, want: `${transpose(module.k.m)}`},
		{name: "matchkeys", expr: `matchkeys(["i-1", "i-2", "i-3"], ["a", "b", "a"], ["a"])`, want: []any{"i-1", "i-3"}},
		{name: "matchkeys keeps unknown values", expr: `matchkeys([module.k.id, "i-2"], ["a", "b"], ["a"])`, want: []any{"${module.k.id}"}},
		{name: "matchkeys unknown key", expr: `matchkeys(["i-1", "i-2"], [module.k.az, "b"], ["b"])`, want: `${matchkeys(["i-1", "i-2"], [module.k.az, "b"], ["b"])}`},
		{name: "matchkeys unknown searchset", expr: `matchkeys(["i-1"], ["a"], module.k.azs)`, want: `${matchkeys(["i-1"], ["a"], module.k.azs)}`},
		{name: "matchkeys lengths differ", expr: `matchkeys(["i-1"], ["a", "b"], ["a"])`, want: `${matchkeys(["i-1"], ["a", "b"], ["a"])}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := "variable \"cidr\" {}\n" + opaqueModules + "locals {\n  result = " + tt.expr + "\n}\n"
			got, l := evalIn(t, src, nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s: got %#v, want %#v (-want +got):\n%s\nnotes: %v", tt.expr, got, tt.want, diff, l.notes)
			}
		})
	}
}

// Functions evaluated by the libraries stay within the budgets: arguments too large
// to walk are refused, and so are results far larger than their arguments.
func TestEvalLibraryBudgets(t *testing.T) {
	t.Parallel()
	// l4 is 320,000 strings described by a few lines; l5 would be 6.4 million.
	wide := "  l0 = [\"x\", \"y\"]\n"
	for i := 1; i <= 5; i++ {
		wide += fmt.Sprintf("  l%d = [%s]\n", i, strings.Repeat(fmt.Sprintf("local.l%d, ", i-1), 20))
	}
	tests := []struct {
		name, expr, wantProblem string
	}{
		{name: "transpose of a huge map", expr: `transpose({a = flatten(local.l5)})`, wantProblem: "is larger than"},
		{name: "matchkeys of huge lists", expr: `matchkeys(local.l4, local.l4, [local.l4, local.l4])`, wantProblem: "the arguments of matchkeys"},
		{name: "jsonencode of a huge value", expr: `jsonencode(local.l5)`, wantProblem: "is larger than"},
		{name: "concat of huge lists", expr: `concat(local.l4, local.l4, local.l4, local.l4)`, wantProblem: "the arguments of concat"},
		{name: "concat too long", expr: `concat(` + strings.Repeat("flatten(local.l3), ", 7) + `)`, wantProblem: "concat: list too long"},
		{name: "large but within the budgets", expr: `base64sha512(join("", flatten(local.l3)))`},
		{name: "huge range", expr: `range(1e10)`, wantProblem: "range: too many elements"},
		{name: "replace around every character", expr: `replace(join("", flatten(local.l3)), "", join("", flatten(local.l3)))`, wantProblem: "the result of replace is larger than"},
		{name: "plain replace too long", expr: `replace(join("", flatten(local.l3)), "x", join("", flatten([local.l2, local.l2])))`, wantProblem: "replace: result too long"},
		{name: "cidrsubnets of many", expr: `cidrsubnets("10.0.0.0/22", [for i in range(1000) : 8]...)`, wantProblem: "not enough remaining address space"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := "locals {\n" + wide + "  result = " + tt.expr + "\n}\n"
			got, l := evalIn(t, src, nil)
			var msgs []string
			for _, p := range l.problems {
				msgs = append(msgs, p.Message)
			}
			joined := strings.Join(msgs, "; ")
			if tt.wantProblem == "" {
				if len(msgs) > 0 {
					t.Errorf("got problems %q, want none", joined)
				}
				return
			}
			if s, ok := got.(string); !ok || !strings.HasPrefix(s, "${") {
				t.Errorf("got a %T, want an unknown", got)
			}
			if !strings.Contains(joined, tt.wantProblem) {
				t.Errorf("got problems %q, want one containing %q", joined, tt.wantProblem)
			}
		})
	}
}
