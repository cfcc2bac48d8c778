package main

import (
	"reflect"
	"sort"
	"testing"
)

func keysOf(s *summary, p string) []string {
	var out []string
	for k := range s.reads[p] {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestEvaluate(t *testing.T) {
	child := map[string][]byte{"main.tf": []byte(`
variable "taints" {
  default = {}
}
variable "labels" {
  default = null
}
resource "aws_eks_node_group" "this" {
  labels = var.labels
  dynamic "taint" {
    for_each = var.taints
    content {
      key    = taint.value.key
      value  = try(taint.value.value, null)
      effect = taint.value.effect
    }
  }
}
`)}
	root := map[string][]byte{"variables.tf": []byte(`
variable "groups" {
  type    = any
  default = {}
}
variable "defaults" {
  type    = any
  default = {}
}
variable "entries" {
  type    = any
  default = {}
}
variable "cluster_name" {
  type = string
}
`), "main.tf": []byte(`
locals {
  flattened = flatten([
    for ek, ev in var.entries : [
      for pk, pv in lookup(ev, "policy_associations", {}) : merge(
        { principal_arn = ev.principal_arn, entry_key = ek },
        { for k, v in { association_policy_arn = pv.policy_arn } : k => v if true },
      )
    ]
  ])
  named = { for k, v in var.groups : k => merge(v, { name = k }) }
}

module "group" {
  source   = "./modules/group"
  for_each = { for k, v in var.groups : k => v if var.cluster_name != "" }

  taints = try(each.value.taints, var.defaults.taints, {})
  labels = lookup(each.value, "labels", null)
}

resource "aws_eks_access_policy_association" "this" {
  for_each      = { for v in local.flattened : "${v.entry_key}_${v.association_policy_arn}" => v }
  policy_arn    = each.value.association_policy_arn
  principal_arn = each.value.principal_arn
}

resource "null_resource" "named" {
  for_each = local.named
  triggers = {
    name = each.value.name
    size = each.value["size"]
    user = jsonencode(each.value.user_data)
  }
}
`)}
	var load func(dir string) (*summary, error)
	load = func(dir string) (*summary, error) {
		if dir == "modules/group" {
			return evaluate(dir, child, load)
		}
		return evaluate(dir, root, load)
	}
	s, err := load("")
	if err != nil {
		t.Fatal(err)
	}
	if !s.inputs["cluster_name"] || s.inputs["groups"] {
		t.Errorf("required: %v", s.inputs)
	}
	for p, want := range map[string][]string{
		"groups.*":                        {"labels", "size", "taints", "user_data"}, // not name: merge() sets it after the entry
		"groups.*.taints.*":               {"effect", "key", "value"},
		"defaults":                        {"taints"},
		"defaults.taints.*":               {"effect", "key", "value"},
		"entries.*":                       {"policy_associations", "principal_arn"},
		"entries.*.policy_associations.*": {"policy_arn"},
	} {
		if got := keysOf(s, p); !reflect.DeepEqual(got, want) {
			t.Errorf("keys of %s = %v, want %v", p, got, want)
		}
	}
	for p, want := range map[string]bool{
		"groups.*": true, "groups.*.taints.*": true, "entries.*": true,
		"groups": false, // entry names are the user's
	} {
		if got := s.closed(p); got != want {
			t.Errorf("closed(%s) = %v, want %v", p, got, want)
		}
	}
	if !s.whole["groups.*.labels"] || !s.whole["groups.*.user_data"] {
		t.Errorf("whole = %v", s.whole)
	}
}

func TestParseUpgrade(t *testing.T) {
	doc := "# Upgrade\n\n- The `resolve_conflicts` argument within the `cluster_addons` configuration has been replaced with `resolve_conflicts_on_create` and `resolve_conflicts_on_update`\n" +
		"### Variable and output changes\n\n1. Removed variables:\n\n" +
		"    - `a_timeout`, `b_timeout`, and `c_timeout` have been replaced with `timeouts`\n" +
		"    - `gone`\n" +
		"    - `eks-managed-node-group` sub-module\n" +
		"        - `platform` - this is superseded by `ami_type`\n" +
		"2. Renamed variables:\n\n" +
		"    - `cluster_name` -> `name`\n" +
		"    - Karpenter\n" +
		"      - `irsa_name` -> `iam_role_name`\n" +
		"    - `create_eks` -> `create`\n" +
		"3. Added variables:\n\n    - `x` -> `y`\n"
	got := parseUpgrade(doc, "21.0.0", "docs/UPGRADE-21.0.md@v21.0.0")
	var s []string
	for _, r := range got {
		s = append(s, r.module+"|"+r.path+"|"+r.old+">"+r.new)
	}
	want := []string{
		"|cluster_addons.*|resolve_conflicts>resolve_conflicts_on_create",
		"|cluster_addons.*|resolve_conflicts>resolve_conflicts_on_update",
		"||a_timeout>timeouts", "||b_timeout>timeouts", "||c_timeout>timeouts",
		"modules/eks-managed-node-group||platform>ami_type",
		"||cluster_name>name",
		"modules/karpenter||irsa_name>iam_role_name",
		"||create_eks>create",
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("renames:\n%v\nwant\n%v", s, want)
	}
}
